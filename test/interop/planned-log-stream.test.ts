// The Gemini and opencode imports write a new Log's lines to its temp file as they are made
// (preparePlannedLog, docs/performance.md "Round 10: the Gemini import within the bound"): the bytes on disk
// are plannedLogBytes' to the byte, across block boundaries; a line that cannot be stored is refused naming
// its source line and leaves no temp file; and a run refused or failing after new Logs' temp files were made
// (with the default budget, not only with none) leaves the Workspace as it was.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PixirEvent } from "../../lib/envelope/src/event/envelope.js";
import { importGeminiFiles } from "../../lib/envelope/src/interop/gemini/import.js";
import { importOpencode } from "../../lib/envelope/src/interop/opencode/import.js";
import { plannedLogBytes, preparePlannedLog } from "../../lib/envelope/src/session/agent-files.js";
import { commitPreparedLog, discardPreparedLog } from "../../lib/envelope/src/store/log-write.js";
import { tempDir } from "../support/cli.js";
import { buildOpencodeDb, SESSIONS } from "../support/opencode.js";
import { logsOf } from "../support/two-runs.js";

const SID = "9a9a9a9a-1111-4222-8333-444455556666";
const TS = "2026-01-01T00:00:00.000Z";

/** Events of every size: short, multi-byte, one past a 64 KiB block, one of several blocks. */
function events(n: number): PixirEvent[] {
  return Array.from({ length: n }, (_, seq) => {
    const text = seq % 7 === 3 ? "é€😀".repeat(9_000 + seq) : seq % 11 === 5 ? "z".repeat(200_000 + seq) : `line ${seq} `.repeat(seq % 50);
    return { id: `01KDVDNA00GD1TWMJK7FT2${String(seq).padStart(4, "0")}`, session_id: "s1", seq, ts: TS, type: "user_message", data: { text, source: { line: seq + 1 } } };
  });
}

const sessionFiles = (ws: string): string[] => (existsSync(path.join(ws, ".pixir", "sessions")) ? readdirSync(path.join(ws, ".pixir", "sessions")).sort() : []);

describe("a new planned Log streamed to its temp file", () => {
  it("holds plannedLogBytes' bytes exactly, and is put in place only by its commit", async () => {
    const ws = tempDir();
    const planned = events(120);
    const expected = plannedLogBytes(planned, "f.jsonl");
    expect(expected.length).toBeGreaterThan(4 * 64 * 1024);
    const prepared = await preparePlannedLog(ws, "s1", planned, "f.jsonl", undefined, undefined);
    expect(readFileSync(prepared.tmp.abs).equals(expected)).toBe(true);
    expect(existsSync(prepared.final.abs)).toBe(false);
    commitPreparedLog(ws, prepared, { lease: null });
    expect(readFileSync(prepared.final.abs).equals(expected)).toBe(true);
  });

  it("a lone surrogate is refused naming its source line, and the temp file goes", async () => {
    const ws = tempDir();
    const planned = events(40);
    planned[30]!.data.text = "a\ud800b";
    const lineOf = (e: PixirEvent) => (e.data.source as { line: number }).line;
    await expect(preparePlannedLog(ws, "s1", planned, "f.jsonl", lineOf, undefined)).rejects.toMatchObject({ kind: "log_encode_failed", details: { reason: "invalid_unicode", line: 31, file: "f.jsonl" } });
    expect(sessionFiles(ws)).toEqual([]);
    const ok = await preparePlannedLog(ws, "s2", events(3), "f.jsonl", lineOf, undefined);
    discardPreparedLog(ok);
    expect(sessionFiles(ws)).toEqual([]);
  });
});

describe("new Logs prepared before a refusal, with the default budget", () => {
  const meta = (sid: string) => JSON.stringify({ sessionId: sid, projectHash: "f".repeat(64), startTime: TS, lastUpdated: TS, kind: "main" });
  const user = (text: string) => JSON.stringify({ id: "u1", timestamp: TS, type: "user", content: [{ text }] });
  const gemini = (ws: string, dir: string) => importGeminiFiles(ws, { paths: [{ path: dir, display: dir }], program: "pixir import gemini", env: { HOME: tempDir() } });

  it("gemini: a changed Log after new files refuses the run, and nothing is left of the new ones", async () => {
    const dir = tempDir();
    const other = "8b8b8b8b-1111-4222-8333-444455556666";
    writeFileSync(path.join(dir, "z.jsonl"), `${meta(other)}\n${user("first")}\n`);
    const ws = tempDir();
    await gemini(ws, path.join(dir, "z.jsonl"));
    const before = logsOf(ws);
    for (const name of ["a", "b", "c"]) writeFileSync(path.join(dir, `${name}.jsonl`), `${meta(SID.replace("9a", name === "a" ? "1a" : name === "b" ? "2a" : "3a"))}\n${user(`hi ${name}`)}\n`);
    writeFileSync(path.join(dir, "z.jsonl"), `${meta(other)}\n${user("changed")}\n`);
    await expect(gemini(ws, dir)).rejects.toMatchObject({ kind: "already_exists", details: { reason: "source_changed" } });
    expect(logsOf(ws)).toEqual(before);
    expect(sessionFiles(ws)).toEqual([`${other}.ndjson`]);
  });

  it("gemini: a line that cannot be stored in a later file: log_encode_failed, its line named, nothing written", async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, "a.jsonl"), `${meta(SID)}\n${user("fine")}\n`);
    writeFileSync(path.join(dir, "b.jsonl"), `${meta(SID.replace("9a", "2b"))}\n${user("fine")}\n${user("x").replace('"x"', '"a\\ud800b"').replace('"u1"', '"u2"')}\n`);
    const ws = tempDir();
    await expect(gemini(ws, dir)).rejects.toMatchObject({ kind: "log_encode_failed", details: { reason: "invalid_unicode", line: 3, file: path.join(dir, "b.jsonl") } });
    expect(sessionFiles(ws)).toEqual([]);
  });

  it("opencode: a changed session after new ones refuses the run, and nothing is left of the new ones", async () => {
    const [main, child, fork] = SESSIONS;
    const ws = tempDir();
    const opencode = (db: string) => importOpencode(ws, { paths: [{ path: db, display: db }], program: "pixir import opencode", env: { HOME: tempDir() } });
    await opencode(buildOpencodeDb(tempDir(), [fork]));
    const before = logsOf(ws);
    const changed = { ...fork, messages: fork.messages.map((m: any) => ({ ...m, parts: m.parts.map((p: any) => (typeof p.text === "string" ? { ...p, text: `X${p.text}` } : p)) })) };
    await expect(opencode(buildOpencodeDb(tempDir(), [main, child, changed]))).rejects.toMatchObject({ kind: "already_exists" });
    expect(logsOf(ws)).toEqual(before);
    expect(sessionFiles(ws)).toEqual(Object.keys(before));
  });
});
