// archive.md §2: a hit's snippet is about 160 characters of its text, whitespace collapsed, around the first
// match. snippetOf collapses only what it shows (a tool output can be megabytes); here it is compared with
// the plain rule — the whole text collapsed, then cut — on generated texts full of whitespace runs at every
// place (before, inside and after matches, at the ends, longer than the window, where the text ends in a
// long run) and on the real transcripts.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { patternsOf, termPattern } from "../../../src/archive/search/query.js";
import { snippetOf } from "../../../src/archive/search/search.js";

/** The rule as archive.md states it: the whole text collapsed and trimmed, the window cut from it. */
function plainSnippet(text: string, pattern: RegExp | null): { snippet: string; match_offsets: Array<[number, number]> } {
  const flat = text.replace(/\s+/g, " ").trim();
  if (pattern !== null) pattern.lastIndex = 0;
  const first = pattern === null ? null : pattern.exec(flat);
  const start = first === null ? 0 : Math.max(0, first.index - 50);
  const end = Math.min(flat.length, start + 160);
  const lead = start > 0 ? "…" : "";
  // Never half a surrogate pair at either end of the window.
  const body = flat.slice(start, end).replace(/^[\uDC00-\uDFFF]/, "").replace(/[\uD800-\uDBFF]$/, "");
  const offsets: Array<[number, number]> = [];
  if (pattern !== null) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(body); m !== null; m = pattern.exec(body)) offsets.push([m.index + lead.length, m.index + lead.length + m[0].length]);
  }
  return { snippet: `${lead}${body}${end < flat.length ? "…" : ""}`, match_offsets: offsets };
}

/** Half a surrogate pair: not text (`\ud83c` in JSON, � on a terminal). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A small deterministic generator (the same texts every run). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

const PARTS = ["parse", "line", "_", ".", "/", "src", "lib", "0x1F", "é", "😀", "-", "(", ")", "a", "zz"];
const SPACES = [" ", "  ", "\n", "\t\t", " \n  ", "\u00a0", "\u2028", " ".repeat(300), "\n".repeat(40)];

function text(next: () => number): string {
  const n = Math.floor(next() * 200);
  let out = "";
  for (let i = 0; i < n; i++) out += next() < 0.35 ? SPACES[Math.floor(next() * SPACES.length)] : PARTS[Math.floor(next() * PARTS.length)];
  return out;
}

const QUERIES = [["parse_line"], ["src/lib"], ["0x1f"], ["zz", "é"], ["parse line"], ["a"], ["😀"], ["( )"], ["-"], ["nothing-here"]];

describe("snippetOf", () => {
  it("never cuts an emoji in two, where the window ends or starts in one", () => {
    for (let pad = 0; pad < 8; pad++) {
      const t = `${"x".repeat(60 + pad)} needle ${"y".repeat(90 + pad)}${"😀".repeat(20)}`;
      const s = snippetOf(t, termPattern(["needle"])).snippet;
      expect(LONE_SURROGATE.test(s), s).toBe(false);
      expect(s.endsWith("…")).toBe(true);
      const lead = `${"😀".repeat(30 + pad)}x needle`;
      expect(LONE_SURROGATE.test(snippetOf(lead, termPattern(["needle"])).snippet)).toBe(false);
    }
  });

  it("gives the plain rule's snippet and offsets on texts with whitespace everywhere", () => {
    const next = random(35);
    for (let i = 0; i < 3000; i++) {
      const t = text(next);
      const q = QUERIES[i % QUERIES.length]!;
      for (const pattern of [termPattern(q), null]) expect(snippetOf(t, pattern), JSON.stringify({ t, q })).toEqual(plainSnippet(t, pattern));
    }
  });

  it("where the text ends in a long whitespace run, at every length around the window's end", () => {
    for (const lead of ["", "  \n", "word ".repeat(30)]) {
      for (let k = 0; k < 700; k++) {
        for (const tail of [" ".repeat(1000), "\n \t".repeat(300), " x"]) {
          const t = `${lead}parse_line ${"y".repeat(k)}${tail}`;
          for (const pattern of [termPattern(["parse_line"]), null]) expect(snippetOf(t, pattern), JSON.stringify({ lead, k, tail: tail.slice(0, 4) })).toEqual(plainSnippet(t, pattern));
        }
      }
    }
  });

  it("where the match lies deep in the text, after runs of whitespace of every length (only its tail is collapsed)", () => {
    const next = random(7);
    const runs = [" ", "\n\n", " ".repeat(49), " ".repeat(50), " ".repeat(51), "\t".repeat(200), " \n".repeat(700)];
    for (let i = 0; i < 1500; i++) {
      let lead = "";
      const parts = Math.floor(next() * 60);
      for (let k = 0; k < parts; k++) lead += next() < 0.5 ? runs[Math.floor(next() * runs.length)] : "ab".repeat(Math.floor(next() * 40));
      const t = `${lead}parse_line${runs[i % runs.length]}tail`;
      expect(snippetOf(t, termPattern(["parse_line"])), JSON.stringify({ i, lead: lead.length })).toEqual(plainSnippet(t, termPattern(["parse_line"])));
    }
    // A text that starts with a long run: about SNIPPET_BEFORE characters after it, the window starts at the text or after it.
    for (const run of [" ".repeat(1000), "\n".repeat(5000)]) {
      for (let k = 45; k <= 55; k++) {
        const t = `${run}${"x".repeat(k - 1)} parse_line tail`;
        expect(snippetOf(t, termPattern(["parse_line"])), JSON.stringify({ run: run.length, k })).toEqual(plainSnippet(t, termPattern(["parse_line"])));
      }
    }
  });

  it("gives the plain rule's snippet on the real transcripts' long texts", () => {
    const root = path.resolve(__dirname, "../../../../../test/fixtures/real-sessions/claude");
    const files = readdirSync(root, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl")).slice(0, 6);
    expect(files.length).toBeGreaterThan(0);
    let long = 0;
    for (const f of files) {
      for (const line of readFileSync(path.join(root, f), "utf8").split("\n")) {
        if (line.length < 2000) continue;
        long++;
        for (const q of [["the"], ["error"], ["src/lib"], ["function"]]) expect(snippetOf(line, termPattern(q))).toEqual(plainSnippet(line, termPattern(q)));
      }
    }
    expect(long).toBeGreaterThan(10);
  });
});

/** Every match of a pattern in a text: where, and what. */
function matchesOf(pattern: RegExp | null, t: string): Array<[number, string]> {
  if (pattern === null) return [];
  pattern.lastIndex = 0;
  return [...t.matchAll(pattern)].map((m) => [m.index, m[0]]);
}

describe("patternsOf: termPattern's ASCII twin", () => {
  // ASCII pieces and every kind of ASCII separator; the letters whose Unicode case folding reaches outside
  // ASCII (k: the Kelvin sign, s: the long s) in both cases.
  const ASCII_PARTS = ["parse", "LINE", "k", "K", "s", "S", "7", "42", "_", ".", "/", "-", "0x1F", "(", ")", "a", "zz", "\\", "*", "$", "[", "]", "|", "?"];
  const ASCII_QUERIES = [["parse_line"], ["src/lib"], ["0x1f"], ["zz", "k"], ["parse line"], ["a"], ["( )"], ["-"], ["S.K"], ["k_s", "line"], ["$[x]"], ["a|b*"], ["nothing-here"]];

  function asciiText(next: () => number): string {
    const n = Math.floor(next() * 120);
    let out = "";
    for (let i = 0; i < n; i++) out += next() < 0.3 ? " \n\t"[Math.floor(next() * 3)]! : ASCII_PARTS[Math.floor(next() * ASCII_PARTS.length)]!;
    return out;
  }

  it("finds termPattern's matches, and gives its snippet, in every generated ASCII text", () => {
    const next = random(12);
    for (let i = 0; i < 4000; i++) {
      const t = asciiText(next);
      const q = ASCII_QUERIES[i % ASCII_QUERIES.length]!;
      const twin = patternsOf(q)(t);
      expect(twin?.flags, JSON.stringify(q)).toBe("gi");
      expect(matchesOf(twin, t), JSON.stringify({ t, q })).toEqual(matchesOf(termPattern(q), t));
      expect(snippetOf(t, patternsOf(q)(t)), JSON.stringify({ t, q })).toEqual(snippetOf(t, termPattern(q)));
    }
  });

  it("is termPattern itself for a text or a term that is not ASCII", () => {
    for (const [q, t] of [[["parse_line"], "parse_line é"], [["é"], "e"], [["zz", "é"], "zz"], [["K"], "\u212a"]] as const) {
      expect(patternsOf(q)(t)?.source).toBe(termPattern(q)?.source);
      expect(patternsOf(q)(t)?.flags).toBe("giu");
    }
    expect(patternsOf([])("text")).toBeNull();
  });
});

