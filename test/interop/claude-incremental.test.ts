// The incremental archive of claude-interop.md §4.3 and §6 steps 6–7: a transcript that grew is appended
// to (never rewritten) and still gives the oracle's context and a byte-exact export; a changed earlier
// line is refused with nothing written. Runs the library in-process (the CLI is covered elsewhere).
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planClaudeExport } from "../../lib/envelope/src/interop/claude/export.js";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { contextView, oracleItems } from "../support/claude-oracle.js";
import { CLAUDE_FIXTURES, heldLines, lineCuts as lineCutsOf, logIds, logsDir, nonBlankLines, sessionFixtures, snapshot, unitFiles } from "../support/claude.js";

const SESSIONS = sessionFixtures().filter((f) => f !== "agent-sessions/small.jsonl");

const importAll = (ws: string, root: string, extra: { lenient?: boolean } = {}) =>
  importClaude(ws, { paths: [root], program: "pixir import claude", env: {}, ...extra });

describe.each(SESSIONS)("incremental import of %s (§6 step 6)", (rel) => {
  const full = readFileSync(path.join(CLAUDE_FIXTURES, rel));
  const lineCuts = lineCutsOf(full, 2, full.length);
  // A cut inside a line: the pending tail is left, then completed.
  const midLine = lineCuts[0]! + Math.max(1, Math.floor((full.indexOf(0x0a, lineCuts[0]!) - lineCuts[0]!) / 2));

  it.each([...lineCuts.map((c) => [c, "line"] as const), [midLine, "mid"] as const])("cut at byte %i (%s)", async (cut, kind) => {
    const root = tempDir("pixir-claude-inc-");
    const ws = tempDir();
    for (const f of unitFiles(rel)) cpSync(path.join(CLAUDE_FIXTURES, f), path.join(root, f));
    const target = path.join(root, rel);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, full.subarray(0, cut));
    const first = await importAll(ws, root);
    const mine = first.imports.find((i) => i.file === rel)!;
    if (kind === "mid") expect(mine.pending_tail_bytes).toBeGreaterThan(0);
    const before = snapshot(ws);
    appendFileSync(target, full.subarray(cut));
    const second = await importAll(ws, root);
    const grown = second.imports.find((i) => i.file === rel)!;
    expect(grown.status).toBe(before.size === 0 ? "created" : "appended");
    // Held lines once each, and the earlier bytes of every Log unchanged (appended, never rewritten).
    const held = [...heldLines(ws, grown.session_id!).values()].flat().sort((a, b) => a - b);
    expect(held).toEqual(nonBlankLines(full));
    for (const [id, bytes] of before) expect(readFileSync(path.join(logsDir(ws), `${id}.ndjson`)).subarray(0, bytes.length).equals(bytes), id).toBe(true);
    const exported = await planClaudeExport(ws, grown.logs[0]!.session_id);
    expect(exported.main.bytes.equals(full)).toBe(true);
    expect(contextView(ws, grown.leaf_session_id!)).toEqual(oracleItems(full));
    // A third run finds nothing new.
    const third = await importAll(ws, root);
    expect(third.imports.every((i) => i.status === "unchanged")).toBe(true);
  });
});

describe("a changed transcript is refused with nothing written (§6 step 7)", () => {
  const rel = "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl";
  const setup = () => {
    const root = tempDir("pixir-claude-chg-");
    const ws = tempDir();
    cpSync(path.join(CLAUDE_FIXTURES, rel), path.join(root, rel));
    const target = path.join(root, rel);
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    return { root, ws, target, before: snapshot(ws) };
  };
  const expectRefused = (ws: string, root: string, before: Map<string, Buffer>) => {
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "transcript_changed", file: rel, session_id: "71c9afe9-d9cc-4583-86b3-e62ba682b83a", log_path: ".pixir/sessions/71c9afe9-d9cc-4583-86b3-e62ba682b83a.ndjson" } });
    expect(res.json.error.details.next_actions).toHaveLength(2);
    const after = snapshot(ws);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [id, bytes] of before) expect(after.get(id)!.equals(bytes)).toBe(true);
    return res.json.error.details;
  };

  it("one byte of an imported line changed", () => {
    const { root, ws, target, before } = setup();
    const bytes = readFileSync(target);
    const at = bytes.indexOf("\"user\"");
    bytes[at + 1] = "U".charCodeAt(0);
    writeFileSync(target, bytes);
    expect(expectRefused(ws, root, before)).toMatchObject({ imported_bytes: bytes.length, file_bytes: bytes.length });
  });

  it("the file truncated", () => {
    const { root, ws, target, before } = setup();
    const bytes = readFileSync(target);
    writeFileSync(target, bytes.subarray(0, bytes.lastIndexOf(0x0a, bytes.length - 2) + 1));
    expectRefused(ws, root, before);
  });

  it("a changed file stops the run before another file's growth is written", () => {
    const { root, ws, target, before } = setup();
    const other = "claude-code-log/4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl";
    const otherBytes = readFileSync(path.join(CLAUDE_FIXTURES, other));
    const half = otherBytes.indexOf(0x0a, otherBytes.length >> 1) + 1;
    writeFileSync(path.join(root, other), otherBytes.subarray(0, half));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const mid = snapshot(ws);
    writeFileSync(path.join(root, other), otherBytes);
    const bytes = readFileSync(target);
    bytes[bytes.length - 10] = bytes[bytes.length - 10] === 0x61 ? 0x62 : 0x61;
    writeFileSync(target, bytes);
    expect(before.size).toBeGreaterThan(0);
    expectRefused(ws, root, mid);
  });

  it("an import after pixir appended native Events is refused (log_diverged)", () => {
    const rel2 = "claude-code-log/4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl";
    const root = tempDir("pixir-claude-div-");
    const ws = tempDir();
    const full = readFileSync(path.join(CLAUDE_FIXTURES, rel2));
    const half = full.indexOf(0x0a, full.length >> 1) + 1;
    mkdirSync(path.join(root, path.dirname(rel2)), { recursive: true });
    writeFileSync(path.join(root, rel2), full.subarray(0, half));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const id = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
    const note = JSON.stringify({ type: "user_message", data: { text: "a native note" } });
    expect(run("pixir", ["append", id], { cwd: ws, input: `${note}\n` }).code).toBe(0);
    writeFileSync(path.join(root, rel2), full);
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "log_diverged", session_id: id, log_path: `.pixir/sessions/${id}.ndjson`, file: rel2 } });
    const lenient = run("pixir", ["import", "claude", root, "--lenient", "--json"], { cwd: ws });
    expect(lenient.code).toBe(0);
    expect(lenient.json.imports[0]).toMatchObject({ status: "skipped", error: { kind: "already_exists" } });
  });
});

describe("Logs that are not this import's (§4.3, §4.4, §5.2)", () => {
  const rel = "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl";
  const id = "71c9afe9-d9cc-4583-86b3-e62ba682b83a";
  const branch = `${id}.e042a3e0-d31a-49e0-b181-3e34674017b2`;
  const root = () => {
    const dir = tempDir("pixir-claude-own-");
    cpSync(path.join(CLAUDE_FIXTURES, rel), path.join(dir, rel));
    return dir;
  };
  const native = `${JSON.stringify({ type: "user_message", data: { text: "written by hand" } })}\n`;

  it("a root Log without a checkpoint is not_a_claude_import; nothing is written", () => {
    const ws = tempDir();
    expect(run("pixir", ["append", id], { cwd: ws, input: native }).code).toBe(0);
    const before = snapshot(ws);
    const res = run("pixir", ["import", "claude", root(), "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "not_a_claude_import", session_id: id, log_path: `.pixir/sessions/${id}.ndjson`, file: rel } });
    expect(snapshot(ws)).toEqual(before);
  });

  it("a Log the plan would create that exists with other bytes is log_differs; nothing is written", () => {
    const ws = tempDir();
    expect(run("pixir", ["append", branch], { cwd: ws, input: native }).code).toBe(0);
    const res = run("pixir", ["import", "claude", root(), "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "log_differs", session_id: branch, log_path: `.pixir/sessions/${branch}.ndjson`, file: rel } });
    expect(logIds(ws)).toEqual([branch]);
    const lenient = run("pixir", ["import", "claude", root(), "--lenient", "--json"], { cwd: ws });
    expect(lenient.code).toBe(0);
    expect(lenient.json.imports[0]).toMatchObject({ status: "skipped", error: { kind: "already_exists", details: { reason: "log_differs" } } });
    expect(logIds(ws)).toEqual([branch]);
  });

  it("a Log whose Writer Lease is held elsewhere stops the run with exit 5", () => {
    const ws = tempDir();
    const leases = path.join(ws, ".pixir", "session_leases");
    mkdirSync(leases, { recursive: true });
    const now = Date.now();
    writeFileSync(
      path.join(leases, `${id}.json`),
      JSON.stringify({ version: 1, purpose: "session_writer", session_id: id, workspace: ws, lease_path: path.join(leases, `${id}.json`), holder_id: "wrl_0123456789abcdef", os_pid: String(process.pid), beam_node: "nonode@nohost", hostname: os.hostname(), started_at_ms: now, started_at: new Date(now).toISOString(), heartbeat_at_ms: now, heartbeat_at: new Date(now).toISOString(), heartbeat_interval_ms: 1000, stale_after_ms: 600000 }),
    );
    const res = run("pixir", ["import", "claude", root(), "--json"], { cwd: ws });
    expect(res.code).toBe(5);
    expect(res.json.error.kind).toBe("session_writer_active");
    expect(existsSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`))).toBe(false);
  });

  it("an export missing a branch Log's records is claude_export_incomplete, and writes nothing", () => {
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root()], { cwd: ws }).code).toBe(0);
    expect(run("pixir-log", ["rm", branch], { cwd: ws }).code).toBe(0);
    const out = tempDir();
    const res = run("pixir", ["export", "claude", id, "--out", out, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "claude_export_incomplete", message: "imported Claude session is incomplete", details: { session_id: id, expected_records: 15, found_records: 3 } });
    expect(res.json.error.details.next_actions).toEqual(["import the session again with pixir import claude", "restore the missing logs"]);
    expect(readdirSync(out)).toEqual([]);
  });
});

describe("a run interrupted after the root Log's append (§4.3 step 5, §4.4)", () => {
  it("the next run finds the records no Log holds and places them; the export is whole again", () => {
    const rel = "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl";
    const id = "71c9afe9-d9cc-4583-86b3-e62ba682b83a";
    const branch = `${id}.e042a3e0-d31a-49e0-b181-3e34674017b2`;
    const root = tempDir("pixir-claude-int-");
    cpSync(path.join(CLAUDE_FIXTURES, rel), path.join(root, rel));
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const branchBytes = readFileSync(path.join(logsDir(ws), `${branch}.ndjson`));
    // What an interruption leaves: the root Log with its checkpoint, no branch Log, no import index entry.
    rmSync(path.join(logsDir(ws), `${branch}.ndjson`));
    rmSync(path.join(ws, ".pixir", "claude-imports"), { recursive: true });
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.json.imports[0]).toMatchObject({ status: "appended", new_records: 12, records: 15 });
    expect(readFileSync(path.join(logsDir(ws), `${branch}.ndjson`)).equals(branchBytes)).toBe(true);
    const exp = run("pixir", ["export", "claude", id], { cwd: ws });
    expect(exp.stdout).toBe(readFileSync(path.join(CLAUDE_FIXTURES, rel), "utf8"));
  });
});
