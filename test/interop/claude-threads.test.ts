// pixir import claude with its fresh units prepared on worker threads (import.ts prepareFreshUnit, the
// issue 26 speed-up): the Logs, the report and the import index are those one thread makes; a bad unit
// fails the run with nothing left behind, or is skipped with --lenient; a lease held elsewhere stops the
// writing pass after the units before it, which stay written.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES, logIds, logsDir, projectsRoot, sessionFixtures } from "../support/claude.js";

const importWith = (threads: string, ws: string, ...args: string[]) => run("pixir", ["import", "claude", ...args, "--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads } });

/**
 * Every file of the Workspace's state, the Workspace's path written `<ws>`: the Logs by name, and the
 * import index's entries by root Log (`claude-imports/<root>`, whichever of the run's files holds them).
 */
function stateFiles(ws: string): Record<string, string> {
  const out: Record<string, string> = {};
  const logs = path.join(ws, ".pixir", "sessions");
  for (const name of readdirSync(logs).sort()) out[`sessions/${name}`] = readFileSync(path.join(logs, name), "utf8").split(ws).join("<ws>");
  const index = path.join(ws, ".pixir", "claude-imports");
  for (const name of readdirSync(index).sort()) {
    for (const line of readFileSync(path.join(index, name), "utf8").split("\n")) if (line !== "") out[`claude-imports/${JSON.parse(line).root}`] = line;
  }
  return out;
}

/** The index entries, less what the copy of a file or the time of the run changes (inode, times). */
const withoutStat = (state: Record<string, string>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(state).map(([k, v]) => {
      if (!k.startsWith("claude-imports/")) return [k, v];
      const { dev: _d, ino: _i, mtime_ms: _m, ctime_ms: _c, at_ms: _a, ...rest } = JSON.parse(v);
      return [k, rest];
    }),
  );

const leftovers = (ws: string): string[] => (existsSync(logsDir(ws)) ? readdirSync(logsDir(ws)).filter((n) => n.includes(".tmp-")) : []);

describe("fresh units prepared on worker threads", () => {
  it("give the Logs, report and import index that one thread gives, and leave no temp file", () => {
    const root = projectsRoot();
    const results = ["1", "2", "3"].map((threads) => {
      const ws = tempDir();
      const r = importWith(threads, ws, root);
      expect(r.code, r.stderr).toBe(0);
      expect(leftovers(ws)).toEqual([]);
      expect(readdirSync(path.join(ws, ".pixir", "session_leases"))).toEqual([]);
      return { ws, report: JSON.parse(JSON.stringify(r.json).split(ws).join("<ws>")), state: withoutStat(stateFiles(ws)) };
    });
    // Every file read has its import index entry, under its root Log (the first of its Logs).
    for (const i of results[0]!.report.imports) if (i.status === "created") expect(Object.keys(results[0]!.state)).toContain(`claude-imports/${i.logs[0].session_id}`);
    for (const other of results.slice(1)) {
      expect(other.report).toEqual(results[0]!.report);
      expect(other.state).toEqual(results[0]!.state);
    }
    // The second run finds every file unchanged, on any number of threads.
    const again = importWith("2", results[1]!.ws, root);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.imports.every((i: any) => i.status === "unchanged")).toBe(true);
  });

  it("a malformed line in a later unit fails the run before anything is written; --lenient keeps it", () => {
    const root = projectsRoot();
    const bad = sessionFixtures().find((f) => f.startsWith("spotter/"))!;
    const lines = readFileSync(path.join(root, bad), "utf8").split("\n");
    lines[3] = "{not json";
    writeFileSync(path.join(root, bad), lines.join("\n"));
    const ws = tempDir();
    const r = importWith("2", ws, root);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "invalid_claude_session", details: { reason: "malformed_line", line: 4, file: bad } });
    expect(existsSync(path.join(ws, ".pixir")), "no temp file, not even .pixir/").toBe(false);
    const lenient = importWith("2", ws, root, "--lenient");
    expect(lenient.code, lenient.stderr).toBe(0);
    // §4.2: under --lenient the line is kept as a malformed line; the run is the one a single thread makes.
    expect(lenient.json.imports.find((i: any) => i.file === bad)).toMatchObject({ status: "created", malformed_lines: 1 });
    expect(leftovers(ws)).toEqual([]);
    const one = tempDir();
    expect(importWith("1", one, root, "--lenient").json.imports).toEqual(JSON.parse(JSON.stringify(lenient.json.imports).split(ws).join(one)));
    expect(withoutStat(stateFiles(ws))).toEqual(withoutStat(stateFiles(one)));
  });

  it("a lease held elsewhere stops the writing pass there: the units before it stay, nothing else is left", () => {
    const files = sessionFixtures().filter((f) => f.startsWith("claude-code-log/")).slice(0, 4);
    const root = tempDir("pixir-claude-projects-");
    for (const rel of files) cpSync(path.join(CLAUDE_FIXTURES, rel), path.join(root, rel));
    const held = path.basename(files[2]!, ".jsonl");
    const ws = tempDir();
    const leases = path.join(ws, ".pixir", "session_leases");
    mkdirSync(leases, { recursive: true });
    const now = Date.now();
    const lease = path.join(leases, `${held}.json`);
    writeFileSync(
      lease,
      JSON.stringify({ version: 1, purpose: "session_writer", session_id: held, workspace: ws, lease_path: lease, holder_id: "wrl_0123456789abcdef", os_pid: String(process.pid), beam_node: "nonode@nohost", hostname: os.hostname(), started_at_ms: now, started_at: new Date(now).toISOString(), heartbeat_at_ms: now, heartbeat_at: new Date(now).toISOString(), heartbeat_interval_ms: 1000, stale_after_ms: 600000 }),
    );
    const r = importWith("2", ws, root);
    expect(r.code).toBe(5);
    expect(r.json.error.kind).toBe("session_writer_active");
    expect(r.json.error.details.earlier_writes_kept).toBe(true);
    const written = new Set(logIds(ws).map((id) => id.split(".")[0]));
    expect([...written].sort()).toEqual(files.slice(0, 2).map((f) => path.basename(f, ".jsonl")).sort());
    expect(leftovers(ws)).toEqual([]);
    expect(readdirSync(leases)).toEqual([`${held}.json`]);
  });
});
