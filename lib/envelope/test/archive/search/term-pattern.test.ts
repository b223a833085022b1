// archive/search/query.ts: the pattern that marks a term in a snippet. ASCII terms are matched without the
// `i` flag, each letter spelled as the class of what `iu` matches for it; held here to the `iu` pattern over
// every Unicode code point, and on random terms and texts. ASCII pieces are split without Unicode tables.
import { describe, expect, it } from "vitest";
import { piecesOf, termPattern } from "../../../src/archive/search/query.js";

const SEPARATOR = "[^\\p{L}\\p{N}\\p{M}\\p{Co}]";
const LETTERS_AND_DIGITS = "abcdefghijklmnopqrstuvwxyz0123456789";

/** The pattern as it was made for every term: the pieces with the separator between, the `iu` flags. */
function caselessReference(terms: readonly string[]): RegExp {
  const sorted = [...terms].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map((t) => t.match(/[A-Za-z0-9]+/g)!.join(`${SEPARATOR}+`)).join("|"), "giu");
}

function matches(re: RegExp, text: string): Array<[number, string]> {
  re.lastIndex = 0;
  return [...text.matchAll(re)].map((m) => [m.index!, m[0]]);
}

function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("the snippet pattern of ASCII terms", () => {
  it("the separator class matches the same code points with and without the i flag", () => {
    const plain = new RegExp(`^${SEPARATOR}$`, "u");
    const caseless = new RegExp(`^${SEPARATOR}$`, "iu");
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      if (plain.test(ch) !== caseless.test(ch)) expect.fail(`U+${cp.toString(16)}`);
    }
  });

  it("each letter and digit matches what the iu flags match for it, over every code point", () => {
    const anyCaseless = /^[a-z0-9]$/iu;
    const spelled = [...LETTERS_AND_DIGITS].map((c) => ({ c, iu: new RegExp(`^${c}$`, "iu"), ours: new RegExp(`^${termPattern([c])!.source}$`, termPattern([c])!.flags.replace("g", "")) }));
    for (const { ours } of spelled) expect(ours.flags).not.toContain("i");
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      if (!anyCaseless.test(ch)) {
        if (cp < 0x80 && /[A-Za-z0-9]/.test(ch)) expect.fail(ch);
        continue;
      }
      for (const { c, iu, ours } of spelled) if (iu.test(ch) !== ours.test(ch)) expect.fail(`${c} at U+${cp.toString(16)}`);
    }
  });

  it("finds what the iu pattern finds, on random terms and texts", () => {
    const rnd = random(7);
    const pick = (s: string | readonly string[]) => s[Math.floor(rnd() * s.length)]!;
    const chars = ["a", "k", "s", "K", "S", "\u212a", "\u017f", "x", "1", "_", ".", "/", " ", "-", "é", "\u00a0", "\u2014", "ß", "Ω"];
    for (let n = 0; n < 300; n++) {
      const terms = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => pick([..."aksKSx1_./ -"])).join("")).filter((t) => /[A-Za-z0-9]/.test(t));
      if (terms.length === 0) continue;
      const text = Array.from({ length: 80 }, () => pick(chars)).join("");
      const ours = termPattern(terms)!;
      expect(ours.flags).toBe("gu");
      expect(matches(ours, text), `${JSON.stringify(terms)} in ${JSON.stringify(text)}`).toEqual(matches(caselessReference(terms), text));
    }
  });

  it("ASCII pieces are the runs of letters and digits, as the Unicode rule splits them", () => {
    for (const t of ["parse_line", "src/lib/x.ts", "0x1F", "a--b__c", "...", "deep_manifest.py", "K", ""]) expect(piecesOf(t)).toEqual(t.match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? []);
    // Not ASCII: the Unicode rule, each unspaced-script character a piece of its own.
    expect(piecesOf("ファイルを最新")).toEqual([..."ファイルを最新"]);
    expect(termPattern(["café"])!.flags).toBe("giu");
  });
});
