// archive.md §3: .pixir/index/usage.json, the model calls of every Log as columns (usage-columns.ts). The
// calls read from the file equal the calls counted from the Logs; a file that is corrupt, cut short or of
// another version is rebuilt; a Log that grows is read again; a dedupe key is stored hashed, so a fresh
// call and a stored copy of it still compare equal.
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelCall } from "../../src/archive/model-calls.js";
import { decodeUsageIndex, encodeUsageIndex, indexedCall, keyHash, type IndexedLog } from "../../src/archive/usage-columns.js";
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

describe("usage.json", () => {
  const ws = workspace({
    a: [usage(1), usage(2, { model: "m-2", cache_read: 5, cost_usd: 0.25 }), usage(3, { model: null })],
    b: [usage(1, { pi: { entry_id: "e1", entry_ts: "t" } }, "not a time")],
  });

  it("gives back the calls counted from the Logs, and is rebuilt when corrupt, cut short or of another version", async () => {
    const fresh = await readModelCalls(ws, logs);
    expect(fresh.get("a")!.map((c) => [c.seq, c.model, c.input, c.cache_read, c.recorded_cost_usd, c.time])).toEqual([
      [1, "m-1", 10, null, null, Date.parse("2026-01-01T00:00:01.000Z")],
      [2, "m-2", 20, 5, 0.25, Date.parse("2026-01-01T00:00:02.000Z")],
      [3, null, 30, null, null, Date.parse("2026-01-01T00:00:03.000Z")],
    ]);
    expect(fresh.get("b")![0]).toMatchObject({ time: Number.NEGATIVE_INFINITY, dedupe_key: keyHash("pi:e1\u0000t") });
    const file = JSON.parse(readFileSync(indexFile(ws), "utf8"));
    expect(file).toMatchObject({ version: USAGE_INDEX_VERSION, models: ["m-1", "m-2"], model: [0, 1, -1, 0], reasoning: null });
    expect(await readModelCalls(ws, logs)).toEqual(fresh);
    for (const broken of ["{not json", JSON.stringify({ ...file, input: file.input.slice(1) }), JSON.stringify({ ...file, version: 1 }), JSON.stringify({ ...file, logs: ["a", 1] })]) {
      writeFileSync(indexFile(ws), broken);
      expect(await readModelCalls(ws, logs)).toEqual(fresh);
      expect(JSON.parse(readFileSync(indexFile(ws), "utf8"))).toEqual(file);
    }
  });

  it("reads a grown Log again and keeps the others", async () => {
    await readModelCalls(ws, logs);
    appendFileSync(path.join(ws, ".pixir", "sessions", "a.ndjson"), `${usage(4)}\n`);
    const grown = await readModelCalls(ws, logs);
    expect(grown.get("a")!.map((c) => c.seq)).toEqual([1, 2, 3, 4]);
    expect(grown.get("b")!.length).toBe(1);
  });
});

describe("the columns", () => {
  it("round-trip every field, empty Logs and all-null columns", () => {
    const call = (over: Partial<ModelCall>): ModelCall => ({ session_id: "s", seq: 0, ts: "2026-02-03T04:05:06.789Z", model: "m", input: 1, output: 2, cache_read: null, cache_write: 3, cache_write_5m: 1, cache_write_1h: 2, reasoning: null, recorded_cost_usd: null, dedupe_key: null, ...over });
    const logsIn = new Map<string, IndexedLog>([
      ["s", { size: 10, mtime_ms: 1.5, agent: "claude", calls: [call({}), call({ seq: 1, model: null, dedupe_key: "msg:req", ts: "" })].map((c) => indexedCall("s", c)) }],
      ["empty", { size: 0, mtime_ms: 2, agent: "codex", calls: [] }],
    ]);
    const encoded = JSON.parse(JSON.stringify(encodeUsageIndex(9, logsIn)));
    expect(encoded.cache_read).toBeNull();
    expect(decodeUsageIndex(encoded)).toEqual(logsIn);
  });
});
