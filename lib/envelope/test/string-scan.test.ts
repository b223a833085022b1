// string-scan.ts: the WebAssembly kernel must find exactly what the byte loop it replaces finds: the first
// `"`, `\` or byte below 0x20 at or after p, or end. Every position relative to its 16-byte steps is tried.
import { describe, expect, it } from "vitest";
import { stringKernel } from "../src/string-scan.js";

const SPECIAL = [0x22, 0x5c, 0x00, 0x0a, 0x1f];
const ORDINARY = [0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xc3, 0xff, 0x61];

function reference(b: Uint8Array, p: number, end: number): number {
  for (; p < end; p++) if (b[p] === 0x22 || b[p] === 0x5c || b[p]! < 0x20) return p;
  return end;
}

/** A deterministic generator, so a failure can be reproduced. */
function bytes(seed: number, n: number, specialRate: number): Uint8Array {
  let x = seed >>> 0 || 1;
  const next = () => ((x ^= x << 13), (x ^= x >>> 17), (x ^= x << 5), (x >>> 0) / 2 ** 32);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = next() < specialRate ? SPECIAL[Math.floor(next() * SPECIAL.length)]! : ORDINARY[Math.floor(next() * ORDINARY.length)]!;
  return out;
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
});
