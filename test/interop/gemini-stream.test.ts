// pixir import gemini reads a JSONL session a line at a time (docs/gemini-opencode-interop.md §8): lines
// gathered across read blocks are planned as a file read whole was, a torn last line stays pending, and a
// line longer than a Log line may be is refused as soon as it passes the bound (MAX_LINE_BYTES), `--lenient`
// or not, nothing written; a legacy whole-file `.json` is read whole only up to that bound. Generated inputs.
// The bytes of Logs to append to, planned in the check, are kept for the write up to a budget (new Logs go to
// their temp files during the check); past it a file is planned again, and the Logs are the same (on the
// HAND-MADE fixtures).
import { closeSync, existsSync, openSync, readdirSync, readFileSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { importGeminiFiles, type GeminiImportOptions } from "../../lib/envelope/src/interop/gemini/import.js";
import { MAX_LINE_BYTES } from "../../lib/envelope/src/lines/codec.js";
import { run, tempDir } from "../support/cli.js";
import { GEMINI_HOME, MAIN_FILE } from "../support/gemini.js";
import { logsOf, twoRuns } from "../support/two-runs.js";

const SID = "9a9a9a9a-1111-4222-8333-444455556666";
const meta = JSON.stringify({ sessionId: SID, projectHash: "f".repeat(64), startTime: "2026-01-01T00:00:00.000Z", lastUpdated: "2026-01-01T00:00:00.000Z", kind: "main" });
const user = (id: string, text: string) => JSON.stringify({ id, timestamp: "2026-01-01T00:00:01.000Z", type: "user", content: [{ text }] });
const gemini = (id: string, text: string) => JSON.stringify({ id, timestamp: "2026-01-01T00:00:02.000Z", type: "gemini", content: text, thoughts: [], tokens: null, model: "gemini-2.5-pro" });

function expectRefused(source: string, line: number, extra: string[] = []): void {
  const ws = tempDir();
  const r = run("pixir", ["import", "gemini", source, "--json", ...extra], { cwd: ws });
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stderr).toBe("");
  expect(r.json.error).toMatchObject({ kind: "log_encode_failed", details: { reason: "line_too_long", type: null, file: source, line, max_line_bytes: MAX_LINE_BYTES } });
  expect(existsSync(path.join(ws, ".pixir", "sessions"))).toBe(false);
}

describe("a Gemini session read a line at a time", () => {
  it("lines longer than a read block, and upserts of them, import and export as the file", () => {
    const big = "y".repeat(2_500_000);
    const lines = [meta, user("u1", `first ${big}`), gemini("g1", "short"), gemini("g1", `grown ${big}`), user("u2", "again"), JSON.stringify({ $rewindTo: "u2" }), user("u3", "last")];
    const file = path.join(tempDir(), `session-2026-01-01T00-00-${SID.slice(0, 8)}.jsonl`);
    writeFileSync(file, `${lines.join("\n")}\n{"id":"u4","tim`);
    const ws = tempDir();
    const r = run("pixir", ["import", "gemini", file, "--json"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0]).toMatchObject({ line_count: 7, pending_tail: true, message_count: 3 });
    // g1 changed in place (an edit branch at line 4), then the rewind to u2 (a rewind branch at line 6).
    expect(r.json.imports[0].sessions.map((s: any) => [s.role, s.branch])).toEqual([["root", null], ["branch", "edit"], ["branch", "rewind"]]);
    const out = run("pixir", ["export", "gemini", SID], { cwd: ws });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe(`${lines.join("\n")}\n`);
  });

  it("a 40 MiB line 3: refused at its line, with --lenient too, nothing written", { timeout: 60_000 }, () => {
    const file = path.join(tempDir(), `session-2026-01-01T00-00-${SID.slice(0, 8)}.jsonl`);
    const fd = openSync(file, "w");
    try {
      writeSync(fd, `${meta}\n${user("u1", "hi")}\n`);
      const [open, close] = user("u2", "\u0000").split("\\u0000");
      writeSync(fd, open!);
      const block = Buffer.alloc(1 << 20, "x");
      for (let i = 0; i < 40; i++) writeSync(fd, block);
      writeSync(fd, `${close}\n${user("u3", "after")}\n`);
    } finally {
      closeSync(fd);
    }
    expectRefused(file, 3);
    expectRefused(file, 3, ["--lenient"]);
  });

  it("a sparse 4 GiB file of zeros, and a legacy .json past the bound, are refused at line 1", { timeout: 60_000 }, () => {
    const dir = tempDir();
    const sparse = path.join(dir, "session-zeros.jsonl");
    closeSync(openSync(sparse, "w"));
    truncateSync(sparse, 4 * 1024 ** 3);
    expectRefused(sparse, 1);
    const legacy = path.join(dir, "session-2025-01-01T00-00-big.json");
    writeFileSync(legacy, `{"sessionId":"${SID}","messages":[`);
    truncateSync(legacy, MAX_LINE_BYTES + 1);
    expectRefused(legacy, 1);
    expectRefused(legacy, 1, ["--lenient"]);
    // Within the bound a legacy file is still read whole (an unchanged file: the fixture's format).
    writeFileSync(legacy, JSON.stringify({ sessionId: SID, projectHash: "f".repeat(64), startTime: "2025-01-01T00:00:00.000Z", lastUpdated: "2025-01-01T00:00:00.000Z", messages: [JSON.parse(user("u1", "hi"))] }));
    const ws = tempDir();
    const r = run("pixir", ["import", "gemini", legacy, "--json"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0]).toMatchObject({ legacy: true, message_count: 1 });
    expect(run("pixir", ["export", "gemini", SID], { cwd: ws }).stdout).toBe(readFileSync(legacy, "utf8"));
  });
});

describe("a Gemini run's planned bytes, kept or planned again", () => {
  const importInto = async (ws: string, paths: string[], extra: Partial<GeminiImportOptions> = {}) => {
    const r = await importGeminiFiles(ws, { paths: paths.map((p) => ({ path: p, display: p })), program: "pixir import gemini", env: { HOME: tempDir() }, ...extra });
    return { ...r, workspace: "" };
  };

  it("with no kept bytes, the Logs and the report are those of the default run, first and incremental", async () => {
    const home = path.join(GEMINI_HOME, ".gemini/tmp");
    const full = await twoRuns(async () => undefined, (ws) => importInto(ws, [home]), (ws) => importInto(ws, [home], { keptBytes: 0 }));
    expect(full.b).toEqual(full.a);
    expect(Object.keys(logsOf(full.wsA)).length).toBeGreaterThan(4);
    expect(logsOf(full.wsB)).toEqual(logsOf(full.wsA));
    const text = readFileSync(MAIN_FILE, "utf8");
    const part = path.join(tempDir(), path.basename(MAIN_FILE));
    writeFileSync(part, text.split("\n").slice(0, 3).join("\n") + "\n");
    const grown = await twoRuns(
      async (ws) => void (await importInto(ws, [part])),
      (ws) => (writeFileSync(part, text), importInto(ws, [part])),
      (ws) => importInto(ws, [part], { keptBytes: 0 }),
    );
    expect(grown.b).toEqual(grown.a);
    expect(grown.a.imports[0]!.sessions.map((s) => s.status)).toContain("appended");
    expect(logsOf(grown.wsB)).toEqual(logsOf(grown.wsA));
  });

  it("a refusal found after new Logs' temp files were made takes them back: nothing written", async () => {
    const dir = tempDir();
    const other = "8b8b8b8b-1111-4222-8333-444455556666";
    const session = (sid: string, text: string) => `${meta.replace(SID, sid)}\n${user("u1", text)}\n`;
    writeFileSync(path.join(dir, "a.jsonl"), session(SID, "hi"));
    writeFileSync(path.join(dir, "b.jsonl"), session(other, "changed"));
    const ws = tempDir();
    await importInto(ws, [path.join(dir, "b.jsonl")]);
    const before = logsOf(ws);
    writeFileSync(path.join(dir, "b.jsonl"), session(other, "hello"));
    await expect(importInto(ws, [dir], { keptBytes: 0 })).rejects.toMatchObject({ kind: "already_exists", details: { reason: "source_changed" } });
    expect(logsOf(ws)).toEqual(before);
    expect(readdirSync(path.join(ws, ".pixir", "sessions"))).toEqual([`${other}.ndjson`]);
  });
});
