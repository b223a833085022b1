// The forest's parallel Log scan (lib/envelope/src/tree/tree-scan.ts, ScanPool): whatever the number of
// threads, and whether or not the worker can run, the projection is byte for byte the same.
import { appendFileSync, cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, logFile, rawLine, ROOT, run, tempDir, toolResult, user, writeRaw, type Ev } from "../support/cli.js";
import { writeFork } from "../support/tree.js";

/** A Workspace with every kind of Log the tree distinguishes, and enough of them to share out. */
function richWorkspace(): string {
  const ws = tempDir();
  const base: Ev[] = [user("start"), call("c1"), toolResult("c1"), assistant("done"), call("c2"), toolResult("c2"), assistant("again")];
  for (let i = 0; i < 40; i++) {
    const id = `root-${String(i).padStart(2, "0")}`;
    const events: Ev[] = [...base];
    for (let k = 0; k < i * 7; k++) events.push(k % 3 === 0 ? call(`x${k}`) : k % 3 === 1 ? toolResult(`x${k - 1}`) : user(`message ${k} ${"é".repeat(k % 50)}`));
    writeRaw(ws, id, events);
    if (i % 4 === 0) {
      writeFork(ws, { child: `${id}-replay`, parent: id, parentEvents: events, toSeq: 3, own: [user("child")] });
      writeFork(ws, { child: `${id}-share`, parent: id, parentEvents: events, toSeq: 5, strategy: "share_v1", own: [assistant("own")] });
    }
  }
  // A share chain built by pixir itself: share of share of a replay child.
  expect(run("pixir", ["fork", "root-04-replay", "--strategy", "share_v1", "--child-id", "chain-1"], { cwd: ws }).code).toBe(0);
  expect(run("pixir", ["fork", "chain-1", "--strategy", "share_v1", "--child-id", "chain-2"], { cwd: ws }).code).toBe(0);
  // Subagent records, one with a __proto__ key in its data, and a child Session in this Workspace.
  writeRaw(ws, "with-subagents", [
    user("go"),
    ev("subagent_event", { subagent_id: "sub_1", child_session_id: "root-01", event: "started", status: "running", ["__proto__"]: { polluted: true } }),
    ev("subagent_event", { subagent_id: "sub_1", event: "finished", status: "completed", summary: "ok" }),
    ev("branch_summary", { strategy: "deterministic_operational_summary_v1", text: "s" }),
  ]);
  // Broken Logs: a corrupt middle line, a torn tail, an unreadable first line, a missing parent,
  // a share child whose prefix was rewritten, and a fork cycle.
  writeRaw(ws, "corrupt", `${rawLine("corrupt", 0, user("a"))}\nnot json\n${rawLine("corrupt", 2, user("c"))}\n`);
  writeRaw(ws, "torn", `${rawLine("torn", 0, user("a"))}\n{"id":"x","session_id":"torn","seq":1,"ts":"t","type":"user_mess`);
  writeRaw(ws, "bad-first", "{oops\n");
  writeFork(ws, { child: "orphan", parent: "gone", parentEvents: base, toSeq: 2, strategy: "share_v1" });
  writeFork(ws, { child: "mismatch", parent: "root-08", parentEvents: [user("other")], toSeq: 0, strategy: "share_v1" });
  writeFork(ws, { child: "cyc-a", parent: "cyc-b", parentEvents: base, toSeq: 1 });
  writeFork(ws, { child: "cyc-b", parent: "cyc-a", parentEvents: base, toSeq: 1 });
  // An interrupted append: only original_length bytes belong to the Log.
  const first = `${rawLine("journal", 0, user("a"))}\n`;
  writeRaw(ws, "journal", `${first}${rawLine("journal", 1, user("b"))}\n`);
  writeFileSync(`${logFile(ws, "journal")}.append-journal`, JSON.stringify({ version: 1, original_length: Buffer.byteLength(first) }));
  // Lines longer than a read chunk.
  writeRaw(ws, "big", [user("x".repeat(600 * 1024)), call("c"), toolResult("c"), user("é".repeat(300 * 1024))]);
  appendFileSync(logFile(ws, "root-12"), "\n\n");
  return ws;
}

const forest = (ws: string, threads: string, args: string[] = ["--json"], bin?: string) =>
  run("pixir-tree", args, { cwd: ws, env: { PIXIR_SCAN_THREADS: threads }, bin });

describe("parallel forest scan", () => {
  const ws = richWorkspace();
  const one = forest(ws, "1");
  const oneText = forest(ws, "1", []);

  it("gives the one-thread forest with 2 and 3 threads, as JSON and as text", () => {
    expect(one.code).toBe(0);
    const roots = one.json.forest.map((n: any) => n.session_id);
    expect(roots).toEqual(expect.arrayContaining(["root-00", "corrupt", "torn", "bad-first", "orphan", "journal", "big", "with-subagents"]));
    expect(one.json.forest.find((n: any) => n.session_id === "corrupt").error).toMatchObject({ kind: "corrupt_log_line", reason: "invalid_json" });
    for (const threads of ["2", "3"]) {
      const many = forest(ws, threads);
      expect([threads, many.code]).toEqual([threads, 0]);
      expect(many.stdout).toBe(one.stdout);
      expect(forest(ws, threads, []).stdout).toBe(oneText.stdout);
    }
  });

  it("really shares the work with the workers (PIXIR_DEBUG=1 says how much they delivered)", () => {
    // A worker starts slowly, so on a small Workspace it may find little left to take: retry a few times.
    let delivered = 0;
    for (let attempt = 0; attempt < 5 && delivered === 0; attempt++) {
      const r = run("pixir-tree", ["--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: "2", PIXIR_DEBUG: "1" } });
      expect(r.stdout).toBe(one.stdout);
      const m = /^pixir[- ]tree: read (\d+) Logs on 2 threads; workers delivered (\d+) of (\d+) results$/m.exec(r.stderr);
      expect(m).not.toBeNull();
      delivered = Number(m![2]);
    }
    expect(delivered).toBeGreaterThan(0);
    // Without PIXIR_DEBUG, stderr stays empty.
    expect(forest(ws, "2").stderr).toBe("");
  });

  it("does the workers' share itself when the worker is missing or fails", () => {
    const copy = path.join(tempDir(), "pixir-tree");
    for (const part of ["bin", "dist", "package.json"]) cpSync(path.join(ROOT, "tools", "pixir-tree", part), path.join(copy, part), { recursive: true });
    const bin = path.join(copy, "bin", "pixir-tree.js");
    const worker = path.join(copy, "dist", "chunks", "tree-scan-worker.js");
    writeFileSync(worker, 'throw new Error("worker failed");\n');
    const failing = run("pixir-tree", ["--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: "2", PIXIR_DEBUG: "1" }, bin });
    expect(failing.code).toBe(0);
    expect(failing.stdout).toBe(one.stdout);
    expect(failing.stderr).toMatch(/workers delivered 0 of/);
    rmSync(worker);
    const missing = forest(ws, "3", ["--json"], bin);
    expect(missing.code).toBe(0);
    expect(missing.stdout).toBe(one.stdout);
  });

  it("refuses a malformed PIXIR_SCAN_THREADS as invalid_args, and takes an empty one as unset", () => {
    expect(forest(ws, "").stdout).toBe(one.stdout);
    for (const bad of ["0", "x", "65", "-1", "1.5"]) {
      const r = forest(ws, bad);
      expect([bad, r.code]).toEqual([bad, 2]);
      expect(r.json.error).toMatchObject({ kind: "invalid_args", details: { field: "PIXIR_SCAN_THREADS" } });
    }
  });

  it("leaves the Workspace as it was", () => {
    mkdirSync(path.join(ws, "unrelated"), { recursive: true });
    const before = run("pixir-log", ["ls", "--json"], { cwd: ws }).stdout;
    forest(ws, "2");
    expect(run("pixir-log", ["ls", "--json"], { cwd: ws }).stdout).toBe(before);
  });
});
