// string-scan.ts: the WebAssembly kernel must find exactly what the byte loops it replaces find. `scan`:
// the first `"`, `\` or byte below 0x20 at or after p, or end; `string`: the end of a string written as
// JSON.stringify writes it, or -1. Every position relative to the 16-byte steps is tried.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stringKernel } from "../../src/fast/string-scan.js";

const SPECIAL = [0x22, 0x5c, 0x00, 0x0a, 0x1f];
const ORDINARY = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff, 0x61];

function reference(b: Uint8Array, p: number, end: number): number {
  for (; p < end; p++) if (b[p] === 0x22 || b[p] === 0x5c || b[p]! < 0x20) return p;
  return end;
}

/** The end of the canonical string whose body starts at p (just past the quote), or -1: line-check's rules. */
function referenceString(b: Uint8Array, p: number, end: number): number {
  for (let i = p; i < end; i++) {
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c !== 0x5c) continue;
    if (i + 1 >= end) return -1;
    const e = String.fromCharCode(b[i + 1]!);
    if ('"\\bfnrt'.includes(e)) {
      i++;
      continue;
    }
    if (e !== "u" || i + 5 >= end) return -1;
    const hex = Buffer.from(b.subarray(i + 2, i + 6)).toString("latin1");
    if (!/^00[01][0-9a-f]$/.test(hex) || [8, 9, 10, 12, 13].includes(parseInt(hex, 16))) return -1;
    i += 5;
  }
  return -1;
}

/** A deterministic generator, so a failure can be reproduced. */
function generator(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 2 ** 32);
}

function bytes(seed: number, n: number, specialRate: number): Uint8Array {
  const next = generator(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = next() < specialRate ? SPECIAL[Math.floor(next() * SPECIAL.length)]! : ORDINARY[Math.floor(next() * ORDINARY.length)]!;
  return out;
}

/** Strings of ordinary bytes, control bytes and escapes, right and wrong, with a quote now and then. */
const PIECES = ["a", "bcdefghijklmnop", "é", " ", '\\"', "\\\\", "\\n", "\\t", "\\b", "\\f", "\\r", "\\/", "\\u001f", "\\u0000", "\\u000b", "\\u000a", "\\u0009", "\\u000d", "\\u000c", "\\u0008", "\\u000e", "\\u001F", "\\u0020", "\\u00e9", "\\u01", "\\x", "\\", "\n", "\u0001"];

function escapedText(seed: number, pieces: number, quoteRate: number): Buffer {
  const next = generator(seed);
  let s = "";
  for (let i = 0; i < pieces; i++) s += next() < quoteRate ? '"' : PIECES[Math.floor(next() * PIECES.length)]!;
  return Buffer.from(s, "utf8");
}

describe("the string kernel", () => {
  it("is available on this runtime (Node 20 has WebAssembly SIMD)", () => {
    expect(stringKernel).not.toBeNull();
  });

  it("finds what the byte loop finds, from every start and with every length up to 80", () => {
    const k = stringKernel!;
    for (let seed = 1; seed <= 60; seed++) {
      const b = bytes(seed, 80, seed % 3 === 0 ? 0.02 : 0.1);
      k.mirror(b, 0, b.length);
      for (let p = 0; p <= b.length; p++) for (let end = p; end <= b.length; end += 7) expect([seed, p, end, k.scan(p, end)]).toEqual([seed, p, end, reference(b, p, end)]);
    }
  });

  it("finds a special byte at each of the 16 places of a step, and none in a run of ordinary bytes", () => {
    const k = stringKernel!;
    for (const special of SPECIAL) {
      for (let at = 0; at < 48; at++) {
        const b = new Uint8Array(64).fill(0x61);
        b[at] = special;
        k.mirror(b, 0, b.length);
        expect([special, at, k.scan(0, 64)]).toEqual([special, at, at]);
        expect(k.scan(at + 1, 64)).toBe(64);
      }
    }
  });

  it("mirrors a line at an offset of a larger buffer, and grows for lines longer than its memory", () => {
    const k = stringKernel!;
    const n = 3 * 1024 * 1024 + 5;
    const big = new Uint8Array(n + 100).fill(0x62);
    big[100 + n - 2] = 0x22;
    k.mirror(big, 100, 100 + n);
    expect(k.scan(0, n) + 100).toBe(100 + n - 2);
    expect(k.scan(n - 1, n)).toBe(n);
  });

  it("ends a string where line-check's rules end it, escapes and all, from every start and end", () => {
    const k = stringKernel!;
    for (let seed = 1; seed <= 150; seed++) {
      const b = escapedText(seed, 12 + (seed % 20), seed % 2 === 0 ? 0.03 : 0.12);
      k.mirror(b, 0, b.length);
      for (let p = 0; p <= b.length; p++) for (let end = p; end <= b.length; end += 1 + (seed % 5)) expect([seed, p, end, k.string(p, end)]).toEqual([seed, p, end, referenceString(b, p, end)]);
    }
  });

  it("accepts exactly the strings JSON.stringify writes", () => {
    const k = stringKernel!;
    let accepted = 0;
    for (let seed = 1; seed <= 3000; seed++) {
      const body = escapedText(seed, 1 + (seed % 9), 0);
      const b = Buffer.concat([body, Buffer.from('"')]);
      k.mirror(b, 0, b.length);
      const text = `"${body.toString("utf8")}"`;
      let canonical: boolean;
      try {
        canonical = JSON.stringify(JSON.parse(text)) === text;
      } catch {
        canonical = false;
      }
      // Pieces can make a quote of their own (a lone `\` before `\"`): then the string ends early.
      expect([text, k.string(0, b.length) === b.length]).toEqual([text, canonical]);
      if (canonical) accepted++;
    }
    expect(accepted).toBeGreaterThan(300);
  });

  it("agrees with the byte loops on generated strings as JSON.stringify writes them, and on mutated ones", () => {
    const k = stringKernel!;
    const step = fc.record({ at: fc.nat(), kind: fc.constantFrom("insert", "delete", "replace"), byte: fc.constantFrom(0x22, 0x5c, 0x00, 0x0a, 0x1f, 0x75, 0x30, 0x61, 0xc3) });
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom("a", "é", "🙂", '"', "\\", "\n", "\u0001", "\u001f", " ", "z"), maxLength: 40 }), fc.array(step, { maxLength: 3 }), fc.nat({ max: 20 }), (s, steps, pad) => {
        let b = Buffer.concat([Buffer.alloc(pad, 0x61), Buffer.from(JSON.stringify(s), "utf8")]);
        for (const { at, kind, byte } of steps) {
          const i = pad + 1 + (at % Math.max(1, b.length - pad - 1));
          if (kind === "insert") b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
          else if (i < b.length && kind === "replace") b[i] = byte;
          else if (i < b.length) b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
        }
        k.mirror(b, 0, b.length);
        // The body starts just past the opening quote at `pad`.
        expect(k.string(pad + 1, b.length)).toBe(referenceString(b, pad + 1, b.length));
        for (let p = 0; p <= b.length; p++) expect(k.scan(p, b.length)).toBe(reference(b, p, b.length));
        if (steps.length === 0) expect(k.string(pad + 1, b.length)).toBe(b.length);
      }),
      { numRuns: 3000 },
    );
  });

  it("walks escapes that straddle its 16-byte steps, and stops at end inside an escape", () => {
    const k = stringKernel!;
    for (const escape of ['\\"', "\\\\", "\\n", "\\u001f"]) {
      for (let at = 0; at < 40; at++) {
        const b = Buffer.from(`${"x".repeat(at)}${escape}${"y".repeat(40)}"`);
        k.mirror(b, 0, b.length);
        expect([escape, at, k.string(0, b.length)]).toEqual([escape, at, b.length]);
        for (let end = at; end < at + escape.length; end++) expect([escape, at, end, k.string(0, end)]).toEqual([escape, at, end, -1]);
      }
    }
  });
});
