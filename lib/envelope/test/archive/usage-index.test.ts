// archive.md §3: .pixir/index/usage.json, the model calls of every Log as columns (usage-columns.ts). The
// calls read from the file equal the calls counted from the Logs; a file that is corrupt, cut short or of
// another version is rebuilt; a Log that grows is read again; a dedupe key is stored hashed, so a fresh
// call and a stored copy of it still compare equal.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelCall } from "../../src/archive/model-calls.js";
import { CallTable, indexedCall, keyHash } from "../../src/archive/usage-columns.js";
import { readModelCalls, USAGE_INDEX_VERSION } from "../../src/archive/usage-index.js";

const usage = (seq: number, over: Record<string, unknown> = {}, ts = `2026-01-01T00:00:0${seq}.000Z`) =>
  JSON.stringify({ id: `E${seq}`, session_id: "x", seq, ts, type: "provider_usage", data: { model: "m-1", input: 10 * seq, output: seq, ...over } });

function workspace(logs: Record<string, string[]>): string {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-usage-index-"));
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  for (const [id, lines] of Object.entries(logs)) writeFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), `${lines.join("\n")}\n`);
  return ws;
}

const indexFile = (ws: string) => path.join(ws, ".pixir", "index", "usage.json");
const logs = [
  { session_id: "a", agent: "pixir" as const },
  { session_id: "b", agent: "pi" as const },
];
/** A Log's calls in a table, as objects. */
const callsIn = (t: CallTable, id: string) => {
  const rows = t.rowsOf(id);
  return rows === undefined ? [] : Array.from({ length: rows.count }, (_, i) => t.call(rows.start + i));
};
/** Each Log's calls, as objects: what two tables are compared by (their dead rows differ). */
const callsOf = (t: CallTable) => Object.fromEntries([...t.logs.keys()].map((id) => [id, callsIn(t, id)]));

describe("usage.json", () => {
  const ws = workspace({
    a: [usage(1), usage(2, { model: "m-2", cache_read: 5, cost_usd: 0.25 }), usage(3, { model: null })],
    b: [usage(1, { pi: { entry_id: "e1", entry_ts: "t" } }, "not a time")],
  });

  it("gives back the calls counted from the Logs, and is rebuilt when corrupt, cut short or of another version", async () => {
    const fresh = callsOf(await readModelCalls(ws, logs));
    expect(fresh.a!.map((c) => [c.seq, c.model, c.input, c.cache_read, c.recorded_cost_usd, c.time])).toEqual([
      [1, "m-1", 10, null, null, Date.parse("2026-01-01T00:00:01.000Z")],
      [2, "m-2", 20, 5, 0.25, Date.parse("2026-01-01T00:00:02.000Z")],
      [3, null, 30, null, null, Date.parse("2026-01-01T00:00:03.000Z")],
    ]);
    expect(fresh.b![0]).toMatchObject({ time: Number.NEGATIVE_INFINITY, dedupe_key: keyHash("pi:e1\u0000t") });
    const file = JSON.parse(readFileSync(indexFile(ws), "utf8"));
    expect(file).toMatchObject({ version: USAGE_INDEX_VERSION, models: ["m-1", "m-2"], model: [0, 1, -1, 0], reasoning: null });
    expect(callsOf(await readModelCalls(ws, logs))).toEqual(fresh);
    for (const broken of ["{not json", JSON.stringify({ ...file, input: file.input.slice(1) }), JSON.stringify({ ...file, version: 1 }), JSON.stringify({ ...file, logs: ["a", 1] })]) {
      writeFileSync(indexFile(ws), broken);
      expect(callsOf(await readModelCalls(ws, logs))).toEqual(fresh);
      expect(JSON.parse(readFileSync(indexFile(ws), "utf8"))).toEqual(file);
    }
  });

  it("reads a grown Log again and keeps the others", async () => {
    await readModelCalls(ws, logs);
    appendFileSync(path.join(ws, ".pixir", "sessions", "a.ndjson"), `${usage(4)}\n`);
    const grown = await readModelCalls(ws, logs);
    expect(callsIn(grown, "a").map((c) => c.seq)).toEqual([1, 2, 3, 4]);
    expect(callsIn(grown, "b").length).toBe(1);
    // The rows a Log had before it grew are not written again, and the file names each Log once.
    const file = JSON.parse(readFileSync(indexFile(ws), "utf8"));
    expect(file.logs).toEqual(["a", grown.logs.get("a")!.size, grown.logs.get("a")!.mtime_ms, "pixir", 4, "b", grown.logs.get("b")!.size, grown.logs.get("b")!.mtime_ms, "pi", 1]);
    expect(file.seq).toEqual([1, 2, 3, 4, 1]);
  });
});

describe("reading a Log", () => {
  // A line with no call: an Event the marker search passes over.
  const note = (seq: number, pad: number) => JSON.stringify({ id: `N${seq}`, session_id: "x", seq, ts: "2026-01-01T00:00:00.000Z", type: "user_message", data: { text: "x".repeat(pad) } });

  it("finds the calls of a Log read whole and of one over 16 MiB read in blocks alike, wherever its lines hold them", async () => {
    const lines = (pad: number, notes: number) => [usage(1), ...Array.from({ length: notes }, (_, i) => note(i + 2, pad)), usage(8), note(9, 10), usage(9)];
    const ws = workspace({ small: lines(100, 50), large: lines(64 * 1024, 280), sparse: [...Array.from({ length: 500 }, (_, i) => note(i, 10)), usage(7)] });
    const table = await readModelCalls(ws, [
      { session_id: "small", agent: "pixir" },
      { session_id: "large", agent: "pixir" },
      { session_id: "sparse", agent: "pixir" },
    ]);
    expect(statSync(path.join(ws, ".pixir", "sessions", "large.ndjson")).size).toBeGreaterThan(16 * 1024 * 1024);
    const seqs = (id: string) => callsIn(table, id).map((c) => [c.seq, c.input]);
    expect(seqs("small")).toEqual([[1, 10], [8, 80], [9, 90]]);
    expect(seqs("large")).toEqual(seqs("small"));
    expect(seqs("sparse")).toEqual([[7, 70]]);
  });
});

describe("the columns", () => {
  const call = (over: Partial<ModelCall>): ModelCall => ({ session_id: "s", seq: 0, ts: "2026-02-03T04:05:06.789Z", model: "m", input: 1, output: 2, cache_read: null, cache_write: 3, cache_write_5m: 1, cache_write_1h: 2, reasoning: null, recorded_cost_usd: null, dedupe_key: null, ...over });
  const roundTrip = (t: CallTable) => CallTable.decode(JSON.parse(t.encode(9)));

  it("round-trip every field, empty Logs and all-null columns", () => {
    const t = new CallTable();
    t.add("s", { size: 10, mtime_ms: 1.5, agent: "claude" }, [call({}), call({ seq: 1, model: null, dedupe_key: "msg:req", ts: "", recorded_cost_usd: 0.5 })].map((c) => indexedCall("s", c)));
    t.add("empty", { size: 0, mtime_ms: 2, agent: "codex" }, []);
    const encoded = JSON.parse(t.encode(9));
    expect(encoded).toMatchObject({ version: 9, logs: ["s", 10, 1.5, "claude", 2, "empty", 0, 2, "codex", 0], cache_read: null, reasoning: null, recorded_cost_usd: [null, 0.5], time: [Date.parse("2026-02-03T04:05:06.789Z"), null] });
    const back = roundTrip(t);
    expect([...back.logs]).toEqual([...t.logs]);
    expect(callsIn(back, "s")).toEqual(callsIn(t, "s"));
    expect(callsIn(back, "s")[1]).toMatchObject({ session_id: "s", model: null, cache_read: null, time: Number.NEGATIVE_INFINITY, dedupe_key: keyHash("msg:req") });
  });

  it("write only the Logs named, their models numbered afresh, and take a value in a column that had none", () => {
    const t = new CallTable();
    const many = Array.from({ length: 3000 }, (_, i) => indexedCall("big", call({ seq: i, model: `m-${i % 3}`, input: i })));
    t.add("gone", { size: 1, mtime_ms: 1, agent: "pi" }, [indexedCall("gone", call({ model: "only-gone" }))]);
    t.add("big", { size: 2, mtime_ms: 2, agent: "pixir" }, many);
    expect(callsIn(t, "big")).toEqual(many);
    t.logs.delete("gone");
    const encoded = JSON.parse(t.encode(9));
    expect(encoded.models).toEqual(["m-0", "m-1", "m-2"]);
    expect(encoded.seq).toHaveLength(3000);
    expect(encoded.reasoning).toBeNull();
    const back = roundTrip(t);
    expect(callsIn(back, "big")).toEqual(many);
    const late = indexedCall("late", call({ reasoning: 7 }));
    back.add("late", { size: 3, mtime_ms: 3, agent: "codex" }, [late]);
    expect(callsIn(back, "late")).toEqual([late]);
    expect(callsIn(back, "big")[0]!.reasoning).toBeNull();
    expect(JSON.parse(back.encode(9)).reasoning).toEqual([...many.map(() => null), 7]);
  });

  it("are refused whole when a column is missing, cut short or of the wrong kind", () => {
    const t = new CallTable();
    t.add("s", { size: 1, mtime_ms: 1, agent: "pixir" }, [indexedCall("s", call({}))]);
    const good = JSON.parse(t.encode(9));
    for (const bad of [{ seq: undefined }, { input: [] }, { model: [5] }, { dedupe_key: [7] }, { logs: ["s", 1, 1, "pixir"] }]) {
      expect(CallTable.decode({ ...good, ...bad }).logs.size).toBe(0);
    }
  });
});
