// The Gemini import's churn cut (docs/performance.md "Round 11: the Gemini import's churn") changes how the
// same bytes and the same decisions are made, never what they are: planned lines are encoded straight into
// blocks (encodePlannedLines) as serializeEvent would write them, a shown message is compared by its values
// (sameJson) as the old code compared their JSON texts, and a re-appended message holds its previous copy's
// equal parts (adoptEqualParts) without changing its JSON text. Each is held to the plain rule on seeded
// random inputs.
import { describe, expect, it } from "vitest";
import { serializeEvent, type JsonObject, type PixirEvent } from "../../lib/envelope/src/event/envelope.js";
import { adoptEqualParts, sameJson } from "../../lib/envelope/src/interop/gemini/message-map.js";
import { checkPlannedLines, encodePlannedLines, forEachPlannedLine, plannedLogBytes } from "../../lib/envelope/src/session/agent-files.js";

/** A small seeded generator (mulberry32), so a failure names its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PIECES = ["a", "Z", " ", '"', "\\", "\n", "\t", "\u0001", "\u001f", "\u007f", "é", "€", "😀", "\u2028", "0", "}", ":"];

function randomString(r: () => number, max: number): string {
  const n = Math.floor(r() * max);
  let s = "";
  for (let i = 0; i < n; i++) s += PIECES[Math.floor(r() * PIECES.length)]!;
  return s;
}

/** A parsed-JSON-like value: what JSON.parse can give (1e400 parses to Infinity, -0 stays -0). */
function randomJson(r: () => number, depth: number): unknown {
  const k = Math.floor(r() * (depth > 0 ? 9 : 6));
  switch (k) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -0, 1, 1.5, -7, 1e21, Infinity, -Infinity, 123456789012][Math.floor(r() * 9)];
    case 3:
    case 4:
      return randomString(r, 12);
    case 5:
      return ["1", "x", "10", "__proto__", ""][Math.floor(r() * 5)];
    case 6:
    case 7: {
      const o: JsonObject = {};
      const keys = ["b", "a", "2", "10", "text", "__proto__", "é"];
      for (let i = Math.floor(r() * 4); i > 0; i--) Object.defineProperty(o, keys[Math.floor(r() * keys.length)]!, { value: randomJson(r, depth - 1), enumerable: true, writable: true, configurable: true });
      return o;
    }
    default:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomJson(r, depth - 1));
  }
}

/** A value changed in one place, or the same text made anew (a copy, keys reordered where it shows). */
function variant(r: () => number, v: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(v) ?? "null") as unknown;
  if (r() < 0.4) return copy;
  if (copy !== null && typeof copy === "object") {
    const keys = Object.keys(copy);
    if (keys.length === 0) return Array.isArray(copy) ? {} : [];
    const key = keys[Math.floor(r() * keys.length)]!;
    const target = copy as Record<string, unknown>;
    if (!Array.isArray(copy) && r() < 0.3) {
      // The same entries in another order: a different text unless the order is forced (index keys).
      const entries = Object.entries(target).reverse();
      const other: JsonObject = {};
      for (const [k, x] of entries) Object.defineProperty(other, k, { value: x, enumerable: true, writable: true, configurable: true });
      return other;
    }
    target[key] = randomJson(r, 1);
    return copy;
  }
  return randomJson(r, 1);
}

describe("sameJson: equal exactly when JSON.stringify gives the same text", () => {
  it("on 4,000 seeded pairs (copies, one change, keys reordered, -0, Infinity from 1e400)", () => {
    for (let seed = 1; seed <= 4000; seed++) {
      const r = rng(seed);
      const a = randomJson(r, 4);
      const b = r() < 0.2 ? randomJson(r, 4) : variant(r, a);
      const texts = JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
      if (sameJson(a, b) !== texts) throw new Error(`seed ${seed}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  });

  it("reads undefined and non-finite numbers as null, as they stand in an array", () => {
    expect(sameJson(undefined, null)).toBe(true);
    expect(sameJson(JSON.parse("1e400"), null)).toBe(true);
    expect(sameJson(-0, 0)).toBe(true);
    expect(sameJson([1, { a: 2 }], [1, { a: 2 }])).toBe(true);
    expect(sameJson({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson("1", 1)).toBe(false);
  });
});

describe("adoptEqualParts: a re-appended message shares its previous copy's equal parts, its text unchanged", () => {
  const message = (result: unknown, args: unknown, content: unknown): JsonObject =>
    JSON.parse(JSON.stringify({ id: "g1", type: "gemini", content, toolCalls: [{ id: "c1", name: "run", args, status: "success", result }, { id: "c2", name: "ls", args: {}, status: "scheduled" }] })) as JsonObject;

  it("equal trees become the previous copy's objects; changed ones stay the new copy's", () => {
    const out = [{ functionResponse: { id: "c1", name: "run", response: { output: "line\n".repeat(50) } } }];
    const previous = message(out, { command: "npm test" }, [{ text: "hi" }]);
    const next = message(out, { command: "npm test -- again" }, [{ text: "hi" }]);
    const text = JSON.stringify(next);
    adoptEqualParts(previous, next);
    expect(JSON.stringify(next)).toBe(text);
    const calls = (m: JsonObject) => m.toolCalls as JsonObject[];
    expect(calls(next)[0]!.result).toBe(calls(previous)[0]!.result);
    expect(next.content).toBe(previous.content);
    expect(calls(next)[0]!.args).not.toBe(calls(previous)[0]!.args);
  });

  it("never changes a message's JSON text, on 2,000 seeded pairs", () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      const result = randomJson(r, 3);
      const args = randomJson(r, 3);
      const content = randomJson(r, 3);
      const previous = message(result, args, content);
      const next = message(r() < 0.5 ? result : variant(r, result), r() < 0.5 ? args : variant(r, args), r() < 0.5 ? content : variant(r, content));
      const text = JSON.stringify(next);
      adoptEqualParts(previous, next);
      if (JSON.stringify(next) !== text) throw new Error(`seed ${seed}`);
    }
  });
});

/** Events of every size: short, multi-byte, escapes, a lone surrogate in ts only, and lines past a block. */
function randomEvents(seed: number, n: number): PixirEvent[] {
  const r = rng(seed);
  return Array.from({ length: n }, (_, seq) => {
    const big = r() < 0.02 ? "x\"é😀".repeat(60_000 + Math.floor(r() * 10_000)) : randomString(r, 300);
    const ts = r() < 0.05 ? "2026-01-01T00:00:00.000Z\ud800" : "2026-01-01T00:00:00.000Z";
    return { id: `01KDVDNA00GD1TWMJK7FT2${String(seq).padStart(4, "0")}`, session_id: "s1", seq, ts, type: "assistant_message", data: { text: big, extra: randomJson(r, 3) as JsonObject, gemini: { line: seq + 1 } } };
  });
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error("nothing was thrown");
}

const lineOf = (e: PixirEvent): unknown => (e.data.gemini as JsonObject).line;

describe("encodePlannedLines: serializeEvent's lines, to the byte, in blocks of whole lines", () => {
  it("on seeded Logs with lines longer than a block", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const events = randomEvents(seed, 400);
      const expected = Buffer.from(events.map((e) => serializeEvent(e)).join(""), "utf8");
      const blocks: Buffer[] = [];
      encodePlannedLines(events, "f.jsonl", lineOf, (b) => blocks.push(Buffer.from(b)));
      expect(Buffer.concat(blocks).equals(expected)).toBe(true);
      for (const b of blocks) expect(b[b.length - 1]).toBe(0x0a);
      expect(plannedLogBytes(events, "f.jsonl", lineOf).equals(expected)).toBe(true);
      const lines: string[] = [];
      forEachPlannedLine(events, "f.jsonl", lineOf, (l) => lines.push(l));
      expect(lines).toEqual(events.map((e) => serializeEvent(e)));
    }
  });

  it("a lone surrogate in the data is refused naming its line, by the encoder and by the dry run's check", () => {
    const events = randomEvents(9, 50);
    events[20]!.data.extra = { deep: ["ok", "a\udc00"] };
    const refusal = { kind: "log_encode_failed", details: { reason: "invalid_unicode", type: "assistant_message", line: 21, file: "f.jsonl" } };
    expect(thrown(() => encodePlannedLines(events, "f.jsonl", lineOf, () => undefined))).toMatchObject(refusal);
    expect(thrown(() => checkPlannedLines(events, "f.jsonl", lineOf))).toMatchObject(refusal);
    expect(thrown(() => plannedLogBytes(events, "f.jsonl", lineOf))).toMatchObject(refusal);
  });
});
