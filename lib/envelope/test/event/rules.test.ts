import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { newUlid } from "@pixir/envelope";
import { canonicalJson } from "../../src/event/envelope.js";
import { CROCKFORD, derivedUlid } from "../../src/event/ids.js";
import { isValidSessionId, sessionIdProblem } from "../../src/event/session-id.js";
import { truncate } from "../../src/event/text.js";

const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe("session-id grammar (envelope-and-log.md §5)", () => {
  const cases: Array<[unknown, string | null]> = [
    ["sess-1", null],
    ["a\u0301", null],
    ["你42", null],
    ["_", null],
    ["a" + "é".repeat(117), null],
    [5, "not_string"],
    ["", "empty"],
    ["b".repeat(235) + "c", "too_long"],
    ["é".repeat(118), "too_long"],
    [Buffer.from([0x61, 0xff]), "invalid_utf8"],
    ["a\ud800", "invalid_utf8"],
    ["a/b", "invalid_character"],
    ["a\n", "invalid_character"],
    ["a\u0000b", "invalid_character"],
    [".leading", "invalid_start"],
    ["-leading", "invalid_start"],
    ["../../../outside/PWN;$HOME%2fsecret", "invalid_start"],
  ];
  for (const [value, reason] of cases) {
    it(`${JSON.stringify(typeof value === "string" ? value.slice(0, 16) : String(value))} → ${reason ?? "valid"}`, () => {
      expect(sessionIdProblem(value)?.reason ?? null).toBe(reason);
    });
  }
  it("takes an ASCII id by a check without the Unicode tables that agrees with the grammar", () => {
    // The grammar as the spec writes it; the ASCII check (session-id.ts ASCII_VALID) must accept exactly what it does.
    const grammar = /^[\p{L}\p{N}_][\p{L}\p{N}\p{M}_.\-]*$/u;
    const alphabet = [..."aZ09_.-/ ~:é\u0301", "\n", "\u007f"];
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 5000; i++) {
      const length = i < 4000 ? 1 + next(12) : 230 + next(10);
      const id = Array.from({ length }, () => alphabet[next(alphabet.length)]!).join("");
      const expected = grammar.test(id) && Buffer.byteLength(id, "utf8") <= 235;
      expect(sessionIdProblem(id) === null, id).toBe(expected);
      expect(isValidSessionId(id), id).toBe(expected);
    }
  });
});

describe("ids (envelope-and-log.md §4)", () => {
  it("fresh ULIDs are valid and monotonic within a process", () => {
    const ids = Array.from({ length: 1000 }, () => newUlid());
    for (const id of ids) expect(id).toMatch(ULID_PATTERN);
    expect([...ids].sort()).toEqual(ids);
  });
  it("derivedUlid encodes the time in 10 chars and sha256(key) in 16", () => {
    const id = derivedUlid("fork:X:1", "2026-07-20T10:11:12.123Z");
    expect(id).toMatch(ULID_PATTERN);
    expect(id).toBe(derivedUlid("fork:X:1", "2026-07-20T10:11:12.123Z"));
    expect(id.slice(10)).not.toBe(derivedUlid("fork:X:2", "2026-07-20T10:11:12.123Z").slice(10));
    let t = 0;
    for (const c of id.slice(0, 10)) t = t * 32 + CROCKFORD.indexOf(c);
    expect(t).toBe(Date.parse("2026-07-20T10:11:12.123Z"));
    expect(derivedUlid("k", "not a date").slice(0, 10)).toBe("0000000000");
    expect(derivedUlid("k", null).slice(0, 10)).toBe("0000000000");
    // The last 16 characters are the first 80 bits of sha256(key), 5 bits a character.
    const digest = createHash("sha256").update("k").digest();
    let bits = "";
    for (const byte of digest.subarray(0, 10)) bits += byte.toString(2).padStart(8, "0");
    const expected = Array.from({ length: 16 }, (_, i) => CROCKFORD[parseInt(bits.slice(i * 5, i * 5 + 5), 2)]).join("");
    expect(derivedUlid("k", null).slice(10)).toBe(expected);
  });
});

describe("canonicalJson (fork.md §4.3)", () => {
  it("sorts keys recursively and keeps arrays in order", () => {
    expect(canonicalJson(["t", null, { b: 1, a: { d: [3, { z: 1, y: 2 }], c: "é/" } }])).toBe('["t",null,{"a":{"c":"é/","d":[3,{"y":2,"z":1}]},"b":1}]');
  });
});

describe("truncate (summarize.md §3.3)", () => {
  it("keeps short text, cuts long text at whole graphemes with the marker", () => {
    expect(truncate("abc", 3)).toBe("abc");
    const s = "a".repeat(500);
    expect(truncate(s, 480)).toBe("a".repeat(480) + "\n…[truncated, showing up to 480 of 500 bytes]");
    const grapheme = "a".repeat(479) + "e\u0301" + "zz";
    expect(truncate(grapheme, 480)).toBe("a".repeat(479) + "\n…[truncated, showing up to 480 of 484 bytes]");
    expect(truncate("\ud800x", 1)).toBe("\n…[truncated, showing up to 1 of 4 bytes]");
  });
});

describe("canonicalJson edge cases", () => {
  it("matches a plain recursive definition on awkward values", () => {
    const reference = (v: unknown): string => {
      if (Array.isArray(v)) return `[${v.map((x) => reference(x === undefined ? null : x)).join(",")}]`;
      if (v !== null && typeof v === "object") {
        return `{${Object.keys(v as object)
          .sort()
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`)
          .join(",")}}`;
      }
      return JSON.stringify(v) ?? "null";
    };
    const values = [
      JSON.parse('{"__proto__":{"b":1,"a":2},"constructor":1,"10":0,"9":1,"é":[{"z":null,"y":[1.5,-0,1e21]}]}'),
      { a: undefined, b: [undefined, 1] },
      ["x", "2026", { text: "line\nbreak \u2028 \ud83d\ude00" }],
      "plain",
      42,
      null,
    ];
    for (const v of values) expect(canonicalJson(v)).toBe(reference(v));
  });
});

describe("truncate cuts where walking every grapheme would (summarize.md §3.3)", () => {
  // The definition, written out: walk the grapheme clusters while they fit.
  const walker = new Intl.Segmenter(undefined, { granularity: "grapheme" });
  function byDefinition(input: string, max: number): string {
    const s = input.toWellFormed();
    const total = Buffer.byteLength(s, "utf8");
    if (total <= max) return s;
    let used = 0;
    let end = 0;
    for (const { segment, index } of walker.segment(s)) {
      const bytes = Buffer.byteLength(segment, "utf8");
      if (used + bytes > max) break;
      used += bytes;
      end = index + segment.length;
    }
    return `${s.slice(0, end)}\n…[truncated, showing up to ${max} of ${total} bytes]`;
  }
  // Pieces that make long and awkward clusters: combining marks, ZWJ emoji, flags, Hangul jamo, CRLF,
  // astral letters and lone surrogates.
  const PIECES = ["a", "é", "e\u0301\u0302", "👩‍👩‍👧‍👦", "🇫🇷", "🏳️‍🌈", "\u1100\u1161\u11a8", "\r\n", "𝔸", "你", "\ud800", "\udc00", " ", "\u0308"];
  const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 120 }).map((p) => p.join(""));

  it("for every text and every limit", () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 300 }), (s, max) => {
        expect(truncate(s, max)).toBe(byDefinition(s, max));
      }),
      { seed: 20261122, numRuns: 3000 },
    );
  });
});

