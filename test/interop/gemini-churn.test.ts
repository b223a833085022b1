// The Gemini import's churn cut (docs/performance.md "Round 11: the Gemini import's churn", and round 13's
// flat plan) changes how the same bytes and the same decisions are made, never what they are: planned lines
// are encoded straight into blocks (encodePlannedLines) as serializeEvent would write them, a shown message
// is compared by the keys of its values (jsonKey) as the old code compared their JSON texts, a streamed plan
// lets each line's records go, and a re-appended message holds its previous copy's equal parts
// (adoptEqualParts) without changing its JSON text. Each is held to the plain rule on seeded random inputs.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { serializeEvent, type JsonObject, type PixirEvent } from "../../lib/envelope/src/event/envelope.js";
import { readGeminiSession } from "../../lib/envelope/src/interop/gemini/format.js";
import { importGeminiFiles } from "../../lib/envelope/src/interop/gemini/import.js";
import { adoptEqualParts, jsonKey, sameJson } from "../../lib/envelope/src/interop/gemini/message-map.js";
import { geminiLogBytes, planGeminiFamily } from "../../lib/envelope/src/interop/gemini/plan.js";
import { checkPlannedLines, encodePlannedLines, forEachPlannedLine, plannedLogBytes } from "../../lib/envelope/src/session/agent-files.js";
import { tempDir } from "../support/cli.js";
import { Rng } from "../hardening/support.js";

/** The hardening tests' seeded generator (mulberry32), as a function: the same inputs on every run. */
const rng = (seed: number): (() => number) => {
  const g = new Rng(seed);
  return () => g.next();
};

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

describe("jsonKey: the key a shown message's values are compared by, equal exactly when their JSON texts are", () => {
  it("on 4,000 seeded pairs, long texts (keyed by digest) among them, as sameJson decides", () => {
    for (let seed = 1; seed <= 4000; seed++) {
      const r = rng(seed);
      const long = r() < 0.3;
      const a = long ? [randomString(r, 200), randomJson(r, 4)] : randomJson(r, 4);
      const b = r() < 0.2 ? randomJson(r, 4) : variant(r, a);
      const texts = JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
      if ((jsonKey(a) === jsonKey(b)) !== texts || sameJson(a, b) !== texts) throw new Error(`seed ${seed}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }
  });

  it("keeps a short text, digests a long one, and reads undefined as null", () => {
    expect(jsonKey({ command: "ls" })).toBe('{"command":"ls"}');
    expect(jsonKey(undefined)).toBe("null");
    expect(jsonKey(JSON.parse("1e400"))).toBe("null");
    const long = "x".repeat(100);
    expect(jsonKey(long)).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(jsonKey(long)).toBe(jsonKey(JSON.parse(JSON.stringify(long))));
    expect(jsonKey(long)).not.toBe(jsonKey(`${long}y`));
    // Lone surrogates are escaped in the text, so two of them never share a digest.
    expect(jsonKey(`${long}\ud800`)).not.toBe(jsonKey(`${long}\udc00`));
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

describe("a new file's one Log streamed as it is planned (the plan keeps no Event)", () => {
  const TS = "2026-01-01T00:00:00.000Z";
  const meta = (sid: string) => JSON.stringify({ sessionId: sid, projectHash: "f".repeat(64), startTime: TS, lastUpdated: TS, kind: "main" });
  const user = (id: string, text: string) => JSON.stringify({ id, timestamp: TS, type: "user", content: [{ text }] });
  const reply = (id: string, status: string, tokens: boolean) =>
    JSON.stringify({ id, timestamp: TS, type: "gemini", content: "ok", thoughts: [], tokens: tokens ? { input: 5, output: 2, total: 7 } : null, model: "m", toolCalls: [{ id: `c-${id}`, name: "run", args: { command: "ls" }, status, timestamp: TS, ...(status === "success" ? { result: [{ functionResponse: { id: `c-${id}`, name: "run", response: { output: "a\nb" } } }] } : {}) }] });
  const gemini = (ws: string, file: string, lenient = false) => importGeminiFiles(ws, { paths: [{ path: file, display: file }], program: "pixir import gemini", lenient, env: { HOME: tempDir() } });
  /** The plain rule: the file planned whole, each Log's bytes made from its kept Events. */
  const planned = (ws: string, file: string) => {
    const parsed = readGeminiSession(file, file, true)!;
    const family = planGeminiFamily(ws, parsed, file);
    parsed.close();
    return Object.fromEntries(family.logs.map((log) => [`${log.sessionId}.ndjson`, geminiLogBytes(log, file).toString("utf8")]));
  };
  const wsFiles = (ws: string): string[] => (existsSync(path.join(ws, ".pixir")) ? readdirSync(path.join(ws, ".pixir", "sessions")).sort() : []);
  const sid = (n: number) => `9a9a9a9${n}-1111-4222-8333-444455556666`;

  it("writes the Log the file planned whole gives, with and without a branch (declined: planned whole), a skipped line and a pending tail", async () => {
    const turns = Array.from({ length: 30 }, (_, i) => [user(`u${i}`, `turn ${i}`), reply(`g${i}`, "scheduled", false), reply(`g${i}`, "success", false), reply(`g${i}`, "success", true)].join("\n"));
    const files: Record<string, string> = {
      linear: `${meta(sid(1))}\n${turns.join("\n")}\n`,
      rewound: `${meta(sid(2))}\n${turns.slice(0, 10).join("\n")}\n${JSON.stringify({ $rewindTo: "u5" })}\n${turns.slice(10, 12).join("\n")}\n`,
      lenient: `${meta(sid(3))}\n${turns.slice(0, 3).join("\n")}\n{not json\n${turns.slice(3, 5).join("\n")}\n${user("u99", "half")}`,
      // Streamed plans let each line's records go: an old message sent again unchanged, or a replacement
      // by the same messages, is compared by what it shows and stays one Log; one changed branches.
      resent: `${meta(sid(5))}\n${turns.slice(0, 6).join("\n")}\n${user("u2", "turn 2")}\n${reply("g1", "success", true)}\n${turns.slice(6, 9).join("\n")}\n`,
      replaced: `${meta(sid(6))}\n${turns.slice(0, 4).join("\n")}\n${JSON.stringify({ $set: { messages: [0, 1, 2, 3].flatMap((i) => [JSON.parse(user(`u${i}`, `turn ${i}`)), JSON.parse(reply(`g${i}`, "success", true))]) } })}\n${turns.slice(4, 6).join("\n")}\n`,
      edited: `${meta(sid(7))}\n${turns.slice(0, 6).join("\n")}\n${user("u2", "turn 2, edited")}\n${turns.slice(6, 8).join("\n")}\n`,
      resultChanged: `${meta(sid(8))}\n${turns.slice(0, 6).join("\n")}\n${reply("g5", "success", true).replace("a\\nb", "a\\nc")}\n`,
    };
    for (const [name, text] of Object.entries(files)) {
      const dir = tempDir();
      const file = path.join(dir, `${name}.jsonl`);
      writeFileSync(file, text);
      const ws = tempDir();
      const result = await gemini(ws, file, true);
      const logs = Object.fromEntries(wsFiles(ws).map((f) => [f, readFileSync(path.join(ws, ".pixir", "sessions", f), "utf8")]));
      expect(logs).toEqual(planned(ws, file));
      for (const s of result.imports[0]!.sessions) expect(s.event_count).toBe(logs[`${s.session_id}.ndjson`]!.split("\n").length - 1);
      expect(result.imports[0]!.sessions.length).toBe(Object.keys(logs).length);
      if (name === "rewound" || name === "edited" || name === "resultChanged") expect(Object.keys(logs).length).toBe(2);
      if (name === "resent" || name === "replaced") expect(Object.keys(logs).length).toBe(1);
      if (name === "lenient") expect(result.imports[0]).toMatchObject({ skipped_lines: 1, pending_tail: true });
    }
  });

  it("a refusal met while streaming (a malformed line late in the file, a line that cannot be stored) is the one planning it whole gives, and leaves nothing", async () => {
    const dir = tempDir();
    const bad = path.join(dir, "bad.jsonl");
    writeFileSync(bad, `${meta(sid(4))}\n${user("u1", "fine")}\n${user("u2", "x").replace('"x"', '"a\\ud800b"')}\n${user("u3", "fine")}\n{not json\n`);
    const ws = tempDir();
    await expect(gemini(ws, bad)).rejects.toMatchObject({ kind: "invalid_gemini_session", details: { reason: "malformed_line", line: 5 } });
    expect(readdirSync(ws)).toEqual([]);
    writeFileSync(bad, `${meta(sid(4))}\n${user("u1", "fine")}\n${user("u2", "x").replace('"x"', '"a\\ud800b"')}\n${user("u3", "fine")}\n`);
    await expect(gemini(ws, bad)).rejects.toMatchObject({ kind: "log_encode_failed", details: { reason: "invalid_unicode", line: 3, file: bad } });
    expect(readdirSync(ws)).toEqual([]);
  });
});
