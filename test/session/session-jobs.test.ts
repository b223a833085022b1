// cli.md §12.10, §12.12, §12.13, acceptance.md §J case 67: the wrapper's Session jobs `pixir repair`,
// `pixir diff` and `pixir merge`, against the built binaries.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, logFile, readEvents, readLog, start, toolResult, ULID, user, workspace } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";

const append = (ws: string, id: string, events: object[]) =>
  run("pixir-log", ["append", id], { cwd: ws, input: events.map((e) => `${JSON.stringify(e)}\n`).join("") });
const fork = (ws: string, parent: string, child: string, ...flags: string[]) => {
  const r = run("pixir", ["fork", parent, "--child-id", child, ...flags], { cwd: ws });
  expect(r.code).toBe(0);
};

/** An active lease held by another writer (writer-lease.md §2). */
function holdLease(ws: string, id: string): void {
  const dir = path.join(ws, ".pixir", "session_leases");
  mkdirSync(dir, { recursive: true });
  const now = Date.now();
  writeFileSync(
    path.join(dir, `${id}.json`),
    JSON.stringify({ version: 1, purpose: "session_writer", session_id: id, workspace: ws, holder_id: "wrl_0123456789abcdef", os_pid: "1", hostname: "elsewhere", heartbeat_at_ms: now, stale_after_ms: 600000 }),
  );
}

const FALLBACK = (callId: string) => ({
  call_id: callId,
  ok: false,
  error: { kind: "interrupted", message: "tool call had no result; recorded by pixir repair" },
  repaired: true,
});

describe("pixir repair (§12.12)", () => {
  it("closes a crashed turn: torn tail dropped, then one fallback tool_result per open call, in History order", () => {
    const ws = workspace({ s: [user("go"), call("c1"), toolResult("c1"), call("c2", "edit", "b.txt"), call("c3", "read", "c.txt")] });
    appendFileSync(logFile(ws, "s"), '{"id":"s-5","session_id":"s","seq":5,"type":"tool_res');
    const intact = readLog(ws, "s").slice(0, readLog(ws, "s").lastIndexOf("\n") + 1);

    const r = run("pixir", ["repair", "s", "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ ok: true, recorded: true, dry_run: false, session_id: "s", closed_tool_calls: ["c2", "c3"], torn_tail_repaired: true, journal_rolled_back: false });
    const log = readLog(ws, "s");
    expect(log.startsWith(intact)).toBe(true);
    const events = readEvents(ws, "s");
    expect(events).toHaveLength(7);
    expect(events.slice(5).map((e) => [e.seq, e.type, e.session_id, e.data])).toEqual([
      [5, "tool_result", "s", FALLBACK("c2")],
      [6, "tool_result", "s", FALLBACK("c3")],
    ]);
    for (const e of events.slice(5)) expect(e.id).toMatch(ULID);
    expect(listTree(ws).filter((f) => /tmp-|journal|session_leases\/s\.json/.test(f))).toEqual([]);

    const ctx = run("pixir", ["context", "s"], { cwd: ws });
    // The context now has a real result for every call, so the fold invents no orphan output.
    const calls = ctx.lines.filter((i) => i.item.type === "function_call").map((i) => i.item.call_id);
    const results = new Set(ctx.lines.filter((i) => i.type === "tool_result" && i.item.type === "function_call_output").map((i) => i.item.call_id));
    expect(calls).toEqual(["c1", "c2", "c3"]);
    for (const c of calls) expect(results.has(c)).toBe(true);
    expect(ctx.lines.filter((i) => i.type === "tool_call" && i.item.type === "function_call_output")).toEqual([]);
  });

  it("is idempotent: a second run appends nothing", () => {
    const ws = workspace({ s: [user("go"), call("c1")] });
    expect(run("pixir", ["repair", "s"], { cwd: ws }).stdout).toBe("Closed 1 open tool calls in s.\n");
    const once = readLog(ws, "s");
    const again = run("pixir", ["repair", "s", "--json"], { cwd: ws });
    expect(again.json).toEqual({ ok: true, recorded: false, dry_run: false, session_id: "s", closed_tool_calls: [], torn_tail_repaired: false, journal_rolled_back: false });
    expect(readLog(ws, "s")).toBe(once);
    expect(run("pixir", ["repair", "s"], { cwd: ws }).stdout).toBe("Nothing to repair in s.\n");
  });

  it("is idempotent for a call with a null seq too (it sorts after its own fallback)", () => {
    const ws = workspace({ s: [user("go"), { ...call("c1"), seq: null }] });
    expect(run("pixir", ["repair", "s", "--json"], { cwd: ws }).json).toMatchObject({ recorded: true, closed_tool_calls: ["c1"] });
    const once = readLog(ws, "s");
    for (let i = 0; i < 2; i++) {
      expect(run("pixir", ["repair", "s", "--json"], { cwd: ws }).json).toMatchObject({ recorded: false, closed_tool_calls: [] });
    }
    expect(readLog(ws, "s")).toBe(once);
  });

  it("a later result closes a call; a result before its call does not; each open call id is closed once", () => {
    const ws = workspace({ s: [toolResult("early"), call("early"), call("dup"), call("dup"), call("done"), toolResult("done"), ev("tool_call", { name: "no id" })] });
    const r = run("pixir", ["repair", "s", "--dry-run", "--json"], { cwd: ws });
    expect(r.json.closed_tool_calls).toEqual(["early", "dup"]);
  });

  it("a dry run reports and creates nothing", () => {
    const ws = workspace({ s: [user("go"), call("c1")] });
    appendFileSync(logFile(ws, "s"), "{torn");
    const before = readLog(ws, "s");
    const tree = listTree(ws);
    const r = run("pixir", ["repair", "s", "--dry-run", "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ ok: true, recorded: false, dry_run: true, session_id: "s", closed_tool_calls: ["c1"], torn_tail_repaired: true, journal_rolled_back: false });
    expect(readLog(ws, "s")).toBe(before);
    expect(listTree(ws)).toEqual(tree);
    expect(run("pixir", ["repair", "s", "--dry-run"], { cwd: ws }).stdout).toBe("Would drop a torn final line from s.\nWould close 1 open tool calls in s.\n");
  });

  it("closes calls left open by a fork's inherited prefix in the child only", () => {
    const ws = workspace({ p: [user("go"), call("c1"), toolResult("c1")] });
    fork(ws, "p", "k", "--to-seq", "1", "--strategy", "share_v1");
    const parent = readLog(ws, "p");
    const r = run("pixir", ["repair", "k", "--json"], { cwd: ws });
    expect(r.json.closed_tool_calls).toEqual(["c1"]);
    expect(readLog(ws, "p")).toBe(parent);
    expect(readEvents(ws, "k").map((e) => [e.seq, e.type])).toEqual([
      [0, "session_fork"],
      [3, "tool_result"],
    ]);
  });

  it("refuses other corruption, a held lease and a missing Log", () => {
    const ws = workspace({ s: [user("go"), call("c1")] });
    const good = readLog(ws, "s");
    writeFileSync(logFile(ws, "s"), `{not json}\n${good}`);
    const corrupt = run("pixir", ["repair", "s", "--json"], { cwd: ws });
    expect(corrupt.code).toBe(1);
    expect(corrupt.json.error).toMatchObject({ kind: "corrupt_log_line", details: { line: 1, reason: "invalid_json" } });
    expect(readLog(ws, "s")).toBe(`{not json}\n${good}`);

    writeFileSync(logFile(ws, "s"), good);
    holdLease(ws, "s");
    const held = run("pixir", ["repair", "s", "--json"], { cwd: ws });
    expect(held.code).toBe(5);
    expect(held.json.error.kind).toBe("session_writer_active");
    expect(readLog(ws, "s")).toBe(good);

    const missing = run("pixir", ["repair", "nobody", "--json"], { cwd: workspace() });
    expect(missing.code).toBe(2);
    expect(missing.json.error.kind).toBe("not_found");
  });
});

describe("67. pixir diff (§12.10)", () => {
  it("a Session and its fork child", () => {
    const ws = workspace({ p: [user("a"), assistant("b"), user("c")] });
    fork(ws, "p", "k", "--to-seq", "1");
    expect(append(ws, "k", [{ type: "user_message", data: { text: "d" } }]).code).toBe(0);
    const r = run("pixir", ["diff", "p", "k", "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({
      ok: true,
      a: { session_id: "p", event_count: 3 },
      b: { session_id: "k", event_count: 3 },
      relation: "a_is_ancestor_of_b",
      identical: false,
      common_prefix_events: 2,
      diverged_at: { a_seq: 2, b_seq: 3, a_type: "user_message", b_type: "user_message" },
      a_remaining: 1,
      b_remaining: 1,
    });
    expect(run("pixir", ["diff", "p", "k", "--exit-code", "--json"], { cwd: ws }).code).toBe(1);
    const same = run("pixir", ["diff", "p", "p", "--json"], { cwd: ws });
    expect(same.json).toMatchObject({ relation: "same", identical: true, common_prefix_events: 3, a_remaining: 0, b_remaining: 0 });
    expect(same.json.diverged_at).toEqual({ a_seq: null, b_seq: null, a_type: null, b_type: null });
    expect(run("pixir", ["diff", "p", "p", "--exit-code"], { cwd: ws })).toMatchObject({ code: 0, stdout: "identical: 3 events\n" });
  });

  it("a fork at seq 5: the fork point at parent seq 5 and both tails", () => {
    const ws = workspace({ P: [user("0"), assistant("1"), user("2"), assistant("3"), user("4"), assistant("5"), user("6"), assistant("7")] });
    fork(ws, "P", "F", "--to-seq", "5", "--strategy", "share_v1");
    expect(append(ws, "F", [{ type: "user_message", data: { text: "child 1" } }, { type: "assistant_message", data: { text: "child 2" } }, { type: "user_message", data: { text: "child 3" } }]).code).toBe(0);
    const r = run("pixir", ["diff", "P", "F", "--json"], { cwd: ws });
    expect(r.json).toMatchObject({
      relation: "a_is_ancestor_of_b",
      common_prefix_events: 6,
      last_common: { a_seq: 5, b_seq: 6 },
      diverged_at: { a_seq: 6, b_seq: 7, a_type: "user_message", b_type: "user_message" },
      a_remaining: 2,
      b_remaining: 3,
    });
    const text = run("pixir", ["diff", "P", "F"], { cwd: ws });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe("common prefix: 6 events\nP: diverges at seq 6 (user_message), 2 events remain\nF: diverges at seq 7 (user_message), 3 events remain\n");
    const reverse = run("pixir", ["diff", "F", "P", "--json"], { cwd: ws });
    expect(reverse.json).toMatchObject({ relation: "b_is_ancestor_of_a", diverged_at: { a_seq: 7, b_seq: 6 }, a_remaining: 3, b_remaining: 2 });
  });

  it("a History that ends after the common prefix; siblings share the fork root; non-replay Events are not compared", () => {
    const ws = workspace({ p: [user("a"), ev("provider_usage", { n: 1 }), assistant("b")], q: [user("x"), assistant("b")] });
    fork(ws, "p", "k1", "--to-seq", "0");
    fork(ws, "p", "k2", "--to-seq", "0", "--strategy", "share_v1");
    expect(append(ws, "k2", [{ type: "turn_failed", data: {} }]).code).toBe(0);
    const siblings = run("pixir", ["diff", "k1", "k2", "--json"], { cwd: ws });
    expect(siblings.json).toMatchObject({ relation: "same_fork_root", identical: true, common_prefix_events: 1 });
    const ended = run("pixir", ["diff", "k1", "p"], { cwd: ws });
    expect(ended.stdout).toBe("common prefix: 1 events\nk1: ends after the common prefix\np: diverges at seq 2 (assistant_message), 1 events remain\n");
    const unrelated = run("pixir", ["diff", "p", "q", "--json"], { cwd: ws });
    expect(unrelated.json).toMatchObject({ relation: "unrelated", identical: false, common_prefix_events: 0, last_common: { a_seq: null, b_seq: null } });
    expect(unrelated.json.diverged_at).toEqual({ a_seq: 0, b_seq: 0, a_type: "user_message", b_type: "user_message" });
  });

  it("errors: a missing Session is not_found, invalid ids are not echoed, one positional is a usage error", () => {
    const ws = workspace({ p: [user("a")] });
    const missing = run("pixir", ["diff", "p", "gone", "--json"], { cwd: ws });
    expect(missing.code).toBe(2);
    expect(missing.json.error).toMatchObject({ kind: "not_found", details: { session_id: "gone" } });
    const bad = run("pixir", ["diff", "p", "../x", "--json"], { cwd: ws });
    expect(bad.code).toBe(2);
    expect(bad.json.error.kind).toBe("invalid_args");
    expect(bad.stdout).not.toContain("../x");
    expect(run("pixir", ["diff", "p", "--json"], { cwd: ws }).json.error.kind).toBe("usage");
  });
});

describe("pixir merge (§12.13)", () => {
  const setup = (strategy = "replay_v1") => {
    const ws = workspace({ P: [user("goal"), assistant("plan"), call("c0", "read", "a.txt"), toolResult("c0"), user("more")] });
    fork(ws, "P", "K", "--to-seq", "3", "--strategy", strategy);
    expect(
      append(ws, "K", [
        { type: "user_message", data: { text: "try the experiment" } },
        { type: "tool_call", data: { call_id: "k1", name: "edit", args: { path: "src/exp.ts" } } },
        { type: "tool_result", data: { call_id: "k1", ok: true } },
        { type: "assistant_message", data: { text: "it worked" } },
      ]).code,
    ).toBe(0);
    return ws;
  };

  it("appends exactly one branch_summary of the child's own Events; every earlier parent byte unchanged", () => {
    const ws = setup();
    const before = readLog(ws, "P");
    const child = readLog(ws, "K");
    const r = run("pixir", ["merge", "K", "--into", "P", "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    const after = readLog(ws, "P");
    expect(after.startsWith(before)).toBe(true);
    expect(after.slice(before.length).split("\n").filter((l) => l !== "")).toHaveLength(1);
    expect(readLog(ws, "K")).toBe(child);
    const appended = readEvents(ws, "P").at(-1);
    expect(appended).toMatchObject({ session_id: "P", seq: 5, type: "branch_summary" });
    expect(appended.id).toMatch(ULID);
    expect(r.json).toMatchObject({ ok: true, recorded: true, dry_run: false, parent_session_id: "P", child_session_id: "K", seq: 5 });
    expect(r.json.event).toEqual(appended.data);
    expect(appended.data).toEqual({
      strategy: "deterministic_operational_summary_v1",
      parent_session_id: "P",
      forked_to_seq: 3,
      range: { from_seq: 5, to_seq: 8 },
      source_event_count: 4,
      event_counts: { user_message: 1, tool_call: 1, tool_result: 1, assistant_message: 1 },
      tool_calls: [{ seq: 6, call_id: "k1", name: "edit" }],
      files_touched: ["src/exp.ts"],
      open_tasks: ["user: try the experiment", "assistant: it worked"],
      limitations: [
        "Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.",
        "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
      ],
      summary:
        "Forked 4 replayed events (assistant_message=1, tool_call=1, tool_result=1, user_message=1).\nRecent forked conversational facts:\n- user: try the experiment\n- assistant: it worked",
      merge: { child_session_id: "K", child_from_seq: 5, child_to_seq: 8, child_event_count: 4, fork_point_seq: 3 },
    });
    // The parent's model-visible context ends with the summary as user text.
    const ctx = run("pixir", ["context", "P"], { cwd: ws });
    expect(ctx.lines.at(-1)).toMatchObject({ seq: 5, type: "branch_summary", item: { role: "user" } });
    expect(ctx.lines.at(-1).item.content[0].text.split("\n").slice(0, 3)).toEqual(["Branch summary from forked parent prefix", "Parent: P", "Range: seq 5..8 (4 events)"]);
  });

  it("text output, and a share_v1 child", () => {
    const ws = setup("share_v1");
    const r = run("pixir", ["merge", "K", "--into", "P"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Merged K into P as branch_summary at seq 5.\n");
    expect(readEvents(ws, "P").at(-1).data.merge).toEqual({ child_session_id: "K", child_from_seq: 5, child_to_seq: 8, child_event_count: 4, fork_point_seq: 3 });
  });

  it("a dry run reports the summary and the seq it would get, and creates nothing", () => {
    const ws = setup();
    const before = readLog(ws, "P");
    const tree = listTree(ws);
    const r = run("pixir", ["merge", "K", "--into", "P", "--dry-run", "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, recorded: false, dry_run: true, seq: 5, event: { source_event_count: 4 } });
    expect(readLog(ws, "P")).toBe(before);
    expect(listTree(ws)).toEqual(tree);
    expect(run("pixir", ["merge", "K", "--into", "P", "--dry-run"], { cwd: ws }).stdout).toBe("Would merge K into P as branch_summary at seq 5.\n");
  });

  it("--model-cmd writes the summary text", () => {
    const ws = setup();
    const r = run("pixir", ["merge", "K", "--into", "P", "--model-cmd", 'cat >/dev/null; echo "merged by $PIXIR_SUMMARY_KIND for $PIXIR_SESSION_ID"', "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    const data = readEvents(ws, "P").at(-1).data;
    expect(data).toMatchObject({ strategy: "model_assisted_operational_summary_v1", summary: "merged by branch_summary for K", merge: { child_session_id: "K" } });
    expect(data.model_checkpoint.command_sha256).toMatch(/^sha256:[0-9a-f]{64}$/);
    const failing = run("pixir", ["merge", "K", "--into", "P", "--model-cmd", "exit 3", "--dry-run", "--json"], { cwd: ws });
    expect(failing.json.event).toMatchObject({ strategy: "deterministic_operational_summary_v1", model_assisted_fallback: true, model_assisted_fallback_reason: "nonzero_exit" });
    // A report command's --json keeps stderr empty (cli.md §2): the fallback is in the document; text mode warns.
    expect(failing.stderr).toBe("");
    const forked = run("pixir", ["fork", "P", "--child-id", "F", "--summarize", "--model-cmd", "exit 3", "--json"], { cwd: ws });
    expect([forked.code, forked.stderr]).toEqual([0, ""]);
    expect(readEvents(ws, "F").at(-1).data).toMatchObject({ model_assisted_fallback: true, model_assisted_fallback_reason: "nonzero_exit" });
    const text = run("pixir", ["fork", "P", "--child-id", "G", "--summarize", "--model-cmd", "exit 3"], { cwd: ws });
    expect([text.code, text.stderr]).toEqual([0, "warning: model_assisted_fallback: nonzero_exit\nhint: continue the child with pixir append G; pixir context G prints what a model sees of it\n"]);
  });

  it("SIGINT while the model runs: pixir fork --summarize and pixir merge exit 130, the command is killed, nothing is written", async () => {
    const ws = setup();
    const before = readLog(ws, "P");
    for (const [args, pidFile] of [
      [["fork", "P", "--child-id", "F", "--summarize"], "fork.pid"],
      [["merge", "K", "--into", "P"], "merge.pid"],
    ] as const) {
      // The command records its pid, then waits; it would write a summary 30 s later.
      const job = start("pixir", [...args, "--model-cmd", `echo $$ > ${pidFile}; sleep 30; echo late`], { cwd: ws });
      job.child.stdin.end();
      const deadline = Date.now() + 10_000;
      while (!existsSync(path.join(ws, pidFile)) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      job.child.kill("SIGINT");
      const r = await job.done;
      expect([r.code, r.stdout, r.stderr]).toEqual([130, "", "error: interrupted: stopped by SIGINT before it finished\nhint: rerun; nothing was written\n"]);
      const pid = Number(readFileSync(path.join(ws, pidFile), "utf8"));
      // Killed: gone, or a zombie that nobody has reaped yet.
      let stat = "";
      try {
        stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        // gone
      }
      expect(stat === "" || /^\d+ \(.*\) Z/.test(stat)).toBe(true);
    }
    expect(existsSync(logFile(ws, "F"))).toBe(false);
    expect(readLog(ws, "P")).toBe(before);
    expect(listTree(ws).filter((f) => f.includes("session_leases/") && !f.endsWith("session_leases/"))).toEqual([]);
  });

  it("a child with no events of its own: nothing to merge, exit 0, the parent untouched, no model asked", () => {
    for (const strategy of ["replay_v1", "share_v1"]) {
      const ws = workspace({ P: [user("goal"), assistant("plan")] });
      fork(ws, "P", "K", "--strategy", strategy);
      const bytes = readLog(ws, "P");
      // Even while another writer holds the parent: no lease is taken for nothing.
      holdLease(ws, "P");
      const before = listTree(ws);
      for (const extra of [[], ["--dry-run"], ["--model-cmd", "touch asked; echo x"]]) {
        const r = run("pixir", ["merge", "K", "--into", "P", "--json", ...extra], { cwd: ws });
        expect(r.code).toBe(0);
        expect(r.json).toEqual({ ok: true, recorded: false, dry_run: extra[0] === "--dry-run", parent_session_id: "P", child_session_id: "K", seq: null, event: null, nothing_to_merge: true });
      }
      expect(run("pixir", ["merge", "K", "--into", "P"], { cwd: ws }).stdout).toBe("Nothing to merge: K has no events of its own.\n");
      expect(readLog(ws, "P")).toBe(bytes);
      expect(existsSync(path.join(ws, "asked"))).toBe(false);
      expect(listTree(ws)).toEqual(before);
    }
  });

  it("refuses a child that is not a fork of the parent, a held parent lease, and a missing --into", () => {
    const ws = setup();
    const before = readLog(ws, "P");
    append(ws, "other", [{ type: "user_message", data: { text: "x" } }]);
    const notFork = run("pixir", ["merge", "K", "--into", "other", "--json"], { cwd: ws });
    expect(notFork.code).toBe(2);
    expect(notFork.json.error).toMatchObject({ kind: "invalid_args", details: { field: "into" } });
    const root = run("pixir", ["merge", "P", "--into", "K", "--json"], { cwd: ws });
    expect(root.json.error).toMatchObject({ kind: "invalid_args", details: { field: "into" } });

    holdLease(ws, "P");
    const held = run("pixir", ["merge", "K", "--into", "P", "--json"], { cwd: ws });
    expect(held.code).toBe(5);
    expect(held.json.error.kind).toBe("session_writer_active");
    expect(readLog(ws, "P")).toBe(before);

    expect(run("pixir", ["merge", "K", "--json"], { cwd: ws }).json.error.kind).toBe("usage");
    const bad = run("pixir", ["merge", "K", "--into", "a/b", "--json"], { cwd: ws });
    expect(bad.json.error).toMatchObject({ kind: "invalid_args", details: { field: "into" } });
    expect(bad.stdout).not.toContain("a/b");
  });
});
