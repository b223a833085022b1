// acceptance.md §G (50–56) and case 41, tree.md: the Session Tree, against the built pixir-tree binary.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, logFile, rawLine, sh, tempDir, toolResult, user, workspace, writeRaw, type Ev } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { writeFork } from "../support/tree.js";

// The details of tree.md §4 are --verbose since archive.md §1 (the readable text is tested in test/archive/ls.test.ts).
const tree = (ws: string, ...args: string[]) => run("pixir-tree", [...args, "--verbose"], { cwd: ws });

/** Every node of a JSON tree, depth first. */
function nodesOf(node: any): any[] {
  const out = [node];
  for (const s of node.subagents) if (s.session) out.push(...nodesOf(s.session));
  for (const f of node.forks) out.push(...nodesOf(f.session));
  return out;
}

function expectNodeContract(node: any): void {
  expect(typeof node.session_id).toBe("string");
  expect(path.isAbsolute(node.workspace)).toBe(true);
  expect(node.log_path).toBe(path.join(node.workspace, ".pixir", "sessions", `${node.session_id}.ndjson`));
  expect(typeof node.log_exists).toBe("boolean");
  expect(Number.isInteger(node.event_count)).toBe(true);
  expect(node.event_counts).toBeTypeOf("object");
  expect(Array.isArray(node.event_counts)).toBe(false);
  for (const v of Object.values(node.event_counts)) expect(Number.isInteger(v)).toBe(true);
  expect(Object.values(node.event_counts).reduce((a: number, b) => a + (b as number), 0)).toBe(node.event_count);
  for (const k of ["first_event_ts", "last_event_ts"]) expect(node[k] === null || typeof node[k] === "string").toBe(true);
  expect(Array.isArray(node.subagents)).toBe(true);
  expect(Array.isArray(node.forks)).toBe(true);
}

const SUB_WS = (ws: string) => path.join(ws, ".pixir", "subagents", "sub_1", "workspace");

/** tree.md §4's subagent example (index 2) or acceptance 50's (index 7, next_actions). */
function subagentWorkspace(index: number): string {
  const ws = tempDir();
  const started = { subagent_id: "sub_1", child_session_id: "child-1", event: "started", status: "running", agent: "explorer", task: "inspect logs", workspace: SUB_WS(ws), index };
  const finished: Record<string, unknown> = { subagent_id: "sub_1", event: "finished", status: "completed", summary: "found one child", elapsed_ms: 42, reason: "finished" };
  if (index === 7) finished.next_actions = ["inspect_child_session_log"];
  writeRaw(ws, "root", [user("start"), ev("subagent_event", started), ev("subagent_event", finished)]);
  writeRaw(SUB_WS(ws), "child-1", [user("look"), assistant("found")]);
  return ws;
}

describe("G50 subagents", () => {
  it("folds the subagent records and nests the child Session", () => {
    const ws = subagentWorkspace(7);
    const r = tree(ws, "root", "--json");
    expect(r.code).toBe(0);
    expect(r.json.ok).toBe(true);
    const root = r.json.tree;
    expect(root).toMatchObject({ session_id: "root", workspace: ws, log_exists: true, event_count: 3 });
    expect(root.event_counts).toEqual({ subagent_event: 2, user_message: 1 });
    expect(root.first_event_ts).toBe("2026-06-30T00:00:00Z");
    expect(root.last_event_ts).toBe("2026-06-30T00:00:02Z");
    expect(root.subagents).toHaveLength(1);
    const sub = root.subagents[0];
    expect(sub).toMatchObject({
      subagent_id: "sub_1",
      child_session_id: "child-1",
      session_id: "child-1",
      status: "completed",
      agent: "explorer",
      task: "inspect logs",
      index: 7,
      event: "finished",
      events: ["started", "finished"],
      summary: "found one child",
      elapsed_ms: 42,
      reason: "finished",
      next_actions: ["inspect_child_session_log"],
      workspace: SUB_WS(ws),
      first_seq: 1,
      last_seq: 2,
    });
    expect(sub.session).toMatchObject({ session_id: "child-1", workspace: SUB_WS(ws), log_exists: true, event_count: 2 });
    expect(sub.session.event_counts).toEqual({ assistant_message: 1, user_message: 1 });
    for (const node of nodesOf(root)) expectNodeContract(node);
  });

  it("ignores subagent Events without a subagent_id (the permission posture record)", () => {
    const posture = { event: "permission_posture", scope: "session", lineage: "root", source: "root_session_start" };
    const ws = workspace({ r: [ev("subagent_event", posture), ev("subagent_event", { subagent_id: "  ", event: "x" }), user("hi")] });
    const r = tree(ws, "r", "--json");
    expect(r.json.tree.subagents).toEqual([]);
    expect(r.json.tree.event_counts).toEqual({ subagent_event: 2, user_message: 1 });
  });

  it("sorts records by (first_seq, subagent_id) and keeps earlier keys a later Event lacks", () => {
    const ws = workspace({
      r: [
        ev("subagent_event", { subagent_id: "b", event: "started", task: "t-b" }),
        ev("subagent_event", { subagent_id: "a", event: "started", task: "t-a", status: "running" }),
        ev("subagent_event", { subagent_id: "b", event: "finished", status: "done" }),
      ],
    });
    const subs = tree(ws, "r", "--json").json.tree.subagents;
    expect(subs.map((s: any) => s.subagent_id)).toEqual(["b", "a"]);
    expect(subs[0]).toMatchObject({ task: "t-b", status: "done", first_seq: 0, last_seq: 2, session_id: null, session: null });
    expect(subs[1]).toMatchObject({ task: "t-a", status: "running", first_seq: 1, last_seq: 1 });
  });
});

describe("text rendering of values from the Log", () => {
  it("shows control characters of subagent ids, tasks and events as escapes: one line each, no terminal codes", () => {
    const ws = workspace({
      r: [ev("subagent_event", { subagent_id: "a\nb\u001b[31m", event: "started", agent: "x\ty", task: "line1\nline2\r\u0007\u009b\u007f", status: "run\u0000" })],
    });
    const r = tree(ws, "r");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    const lines = r.stdout.split("\n");
    expect(lines).toContain("`-- subagent a\\nb\\u001b[31m (x\\ty) status=run\\u0000");
    expect(lines).toContain("    task: line1\\nline2\\r\\u0007\\u009b\\u007f");
    expect(lines).toContain("    events: started");
    // --json keeps the values as they are.
    expect(tree(ws, "r", "--json").json.tree.subagents[0]).toMatchObject({ subagent_id: "a\nb\u001b[31m", task: "line1\nline2\r\u0007\u009b\u007f" });
  });
});

describe("G51 broken subagent links", () => {
  it("shows a missing child Log as log_exists:false with empty arrays", () => {
    const ws = subagentWorkspace(7);
    const before = listTree(ws).filter((f) => !f.includes("child-1"));
    sh(`rm ${JSON.stringify(logFile(SUB_WS(ws), "child-1"))}`, { cwd: ws });
    const r = tree(ws, "root", "--json");
    expect(r.code).toBe(0);
    const child = r.json.tree.subagents[0].session;
    expect(child).toMatchObject({ session_id: "child-1", log_exists: false, event_count: 0, event_counts: {}, first_event_ts: null, last_event_ts: null, subagents: [], forks: [] });
    expect(listTree(ws)).toEqual(before);
  });

  it("fails the whole projection on a hostile child_session_id, echoing nothing and creating nothing", () => {
    const ws = tempDir();
    const hostile = "../../../outside/tree-child;PWN";
    writeRaw(ws, "root", [user("start"), ev("subagent_event", { subagent_id: "sub_1", child_session_id: hostile, event: "started", workspace: ws })]);
    const before = listTree(ws);
    for (const args of [["root", "--json"], ["root"], ["--json"], ["--format", "dot"]]) {
      const r = tree(ws, ...args);
      expect(r.code).toBe(2);
      const envelope = args.includes("--json") ? r.json : undefined;
      if (envelope) expect(envelope.error).toMatchObject({ kind: "invalid_args", details: { field: "child_session_id" } });
      else expect(r.stderr).toMatch(/^error: invalid_args: /);
      for (const text of [r.stdout, r.stderr]) {
        expect(text).not.toContain("outside");
        expect(text).not.toContain("PWN");
      }
    }
    expect(listTree(ws)).toEqual(before);
    expect(existsSync(path.join(ws, "..", "outside"))).toBe(false);
  });
});

describe("G52 missing root and invalid ids", () => {
  it("reports not_found on stdout with --json", () => {
    const ws = tempDir();
    const r = tree(ws, "missing", "--json");
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("");
    expect(r.json).toMatchObject({ ok: false, error: { kind: "not_found", message: "session log was not found" } });
    expect(r.json.error.details).toMatchObject({
      session_id: "missing",
      workspace: ws,
      next_actions: ["check the session id", "run pixir tree from the workspace that owns the session log"],
    });
    expect(r.json.error.details.log_path.endsWith(".pixir/sessions/missing.ndjson")).toBe(true);
    expect(listTree(ws)).toEqual([]);
  });

  it("rejects a hostile positional id before anything else (acceptance 17)", () => {
    const ws = tempDir();
    const r = tree(ws, "../../../outside/PWN;$HOME%2fsecret", "--json");
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ kind: "invalid_args", details: { field: "session_id", reason: "invalid_start" } });
    expect(r.stdout + r.stderr).not.toMatch(/outside|PWN/);
    expect(listTree(ws)).toEqual([]);
    expect(existsSync(path.join(ws, "..", "outside"))).toBe(false);
  });
});

describe("G53 fork records and node keys", () => {
  const parentEvents = [user("hello"), assistant("world")];

  it("copies the session_fork data and reports branch_summary presence", () => {
    const ws = workspace({ "tree-parent": parentEvents });
    writeFork(ws, { child: "tree-child", parent: "tree-parent", parentEvents, toSeq: 1 });
    let r = tree(ws, "tree-parent", "--json");
    expect(r.code).toBe(0);
    const [fork] = r.json.tree.forks;
    expect(fork).toMatchObject({
      child_session_id: "tree-child",
      parent_session_id: "tree-parent",
      fork_root_session_id: "tree-parent",
      forked_to_seq: 1,
      replay_event_count: 2,
      from_seq: 0,
      strategy: "replay_v1",
      workspace: ws,
      branch_summary: { present: false },
    });
    expect(fork.session.event_counts.session_fork).toBe(1);
    expect(fork.session).toMatchObject({ session_id: "tree-child", event_count: 3, first_event_ts: "2026-07-01T00:00:00Z", last_event_ts: "2026-06-30T00:00:01Z" });
    for (const node of nodesOf(r.json.tree)) expectNodeContract(node);

    const summary = { strategy: "deterministic_operational_summary_v1", limitations: ["test fixture"], summary: "s" };
    appendFileSync(logFile(ws, "tree-child"), `${rawLine("tree-child", 3, ev("branch_summary", summary))}\n`);
    r = tree(ws, "tree-parent", "--json");
    expect(r.json.tree.forks[0].branch_summary).toEqual({ present: true, strategy: "deterministic_operational_summary_v1", limitations: ["test fixture"] });
    expect(r.json.tree.forks[0].session.event_counts.branch_summary).toBe(1);
  });

  it("sorts fork records by (forked_to_seq, child id) and skips unreadable first lines", () => {
    const events = [user("a"), assistant("b"), user("c")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "z-early", parent: "p", parentEvents: events, toSeq: 0 });
    writeFork(ws, { child: "b-late", parent: "p", parentEvents: events, toSeq: 2 });
    writeFork(ws, { child: "a-late", parent: "p", parentEvents: events, toSeq: 2 });
    writeRaw(ws, "broken", "not json\n");
    writeFork(ws, { child: "self", parent: "self", parentEvents: [], toSeq: 0 });
    const forks = tree(ws, "p", "--json").json.tree.forks;
    expect(forks.map((f: any) => f.child_session_id)).toEqual(["z-early", "a-late", "b-late"]);
  });

  it("counts a share_v1 child over its resolved History and shows its strategy", () => {
    const events = [user("one"), assistant("two"), call("c1"), toolResult("c1"), ev("provider_usage", { tokens: 1 })];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "s", parent: "p", parentEvents: events, toSeq: 4, strategy: "share_v1", own: [user("mine")] });
    writeFork(ws, { child: "s2", parent: "s", parentEvents: [], toSeq: 0, strategy: "replay_v1" });
    const r = tree(ws, "p", "--json");
    expect(r.code).toBe(0);
    const share = r.json.tree.forks.find((f: any) => f.child_session_id === "s");
    expect(share).toMatchObject({ strategy: "share_v1", replay_event_count: 4 });
    // 1 header + 4 inherited + 1 own; what `pixir-log cat s` prints.
    const cat = run("pixir-log", ["cat", "s"], { cwd: ws }).lines;
    expect(share.session.event_count).toBe(cat.length);
    expect(share.session.event_count).toBe(6);
    expect(share.session.event_counts).toEqual({ assistant_message: 1, session_fork: 1, tool_call: 1, tool_result: 1, user_message: 2 });
    expect(share.session.first_event_ts).toBe(cat[0].ts);
    expect(share.session.last_event_ts).toBe(cat.at(-1).ts);
    const text = tree(ws, "p").stdout;
    expect(text).toContain("    strategy: share_v1\n");
    expect(text).toContain("    child session s (events=6)\n");
  });

  it("a share child's last ts is its prefix's when it has no own Events", () => {
    const events = [user("one"), assistant("two")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "s", parent: "p", parentEvents: events, toSeq: 1, strategy: "share_v1" });
    const node = tree(ws, "s", "--json").json.tree;
    expect(node).toMatchObject({ event_count: 3, first_event_ts: "2026-07-01T00:00:00Z", last_event_ts: "2026-06-30T00:00:01Z" });
  });

  it("shows the error kind of a share child whose prefix no longer resolves", () => {
    const events = [user("one"), assistant("two")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "s", parent: "p", parentEvents: events, toSeq: 1, strategy: "share_v1", own: [user("mine")] });
    // The parent's prefix was rewritten with one Event fewer: the count no longer matches.
    writeRaw(ws, "p", [user("one"), ev("provider_usage", {}), assistant("later")]);
    expect(run("pixir-log", ["cat", "s", "--json"], { cwd: ws }).errJson.error.kind).toBe("fork_prefix_mismatch");
    const r = tree(ws, "p", "--json");
    expect(r.code).toBe(0);
    const node = r.json.tree.forks[0].session;
    expect(node.error).toEqual({ kind: "fork_prefix_mismatch", reason: null });
    // Only its own physical Log is counted, and it is not recursed into.
    expect(node).toMatchObject({ event_count: 2, event_counts: { session_fork: 1, user_message: 1 }, subagents: [], forks: [] });
    expect(tree(ws, "p").stdout).toContain("child session s (events=2) [error: fork_prefix_mismatch]");
    const direct = tree(ws, "s", "--json");
    expect(direct.code).toBe(1);
    expect(direct.json.error.kind).toBe("fork_prefix_mismatch");
  });

  it("checks a share prefix by count, not by digest (tree.md §2.7)", () => {
    const events = [user("one"), assistant("two")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "s", parent: "p", parentEvents: events, toSeq: 1, strategy: "share_v1" });
    writeRaw(ws, "p", [user("EDITED"), assistant("two")]);
    expect(run("pixir-log", ["cat", "s", "--json"], { cwd: ws }).errJson.error.kind).toBe("fork_prefix_mismatch");
    const node = tree(ws, "s", "--json").json.tree;
    expect(node.error).toBeUndefined();
    expect(node.event_count).toBe(3);
  });

  it("resolves share chains like the loader: share of share, share of a replay child", () => {
    const events = [user("one"), assistant("two"), call("c1"), toolResult("c1"), ev("subagent_event", { subagent_id: "x", event: "started" }), user("three")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "r", parent: "p", parentEvents: events, toSeq: 5, own: [assistant("r-own")] });
    const rEvents = run("pixir-log", ["cat", "r"], { cwd: ws }).lines.map((e: any) => ({ type: e.type, data: e.data, ts: e.ts, seq: e.seq }));
    writeFork(ws, { child: "s1", parent: "r", parentEvents: rEvents, toSeq: 6, strategy: "share_v1", own: [user("s1-own"), ev("provider_usage", {})] });
    const s1Events = run("pixir-log", ["cat", "s1"], { cwd: ws }).lines.map((e: any) => ({ type: e.type, data: e.data, ts: e.ts, seq: e.seq }));
    expect(s1Events.length).toBe(9); // header, 6 inherited from r, 2 own
    // s2 cuts inside s1's inherited prefix; s3 cuts after it, taking s1's own Event too.
    writeFork(ws, { child: "s2", parent: "s1", parentEvents: s1Events, toSeq: 3, strategy: "share_v1" });
    writeFork(ws, { child: "s3", parent: "s1", parentEvents: s1Events, toSeq: 8, strategy: "share_v1", own: [user("s3-own")] });
    const forest = tree(ws, "--json").json.forest;
    const all = nodesOf(forest[0]);
    expect(all.map((n: any) => n.session_id)).toEqual(["p", "r", "s1", "s2", "s3"]);
    expect(all.filter((n: any) => n.subagents.length === 0).map((n: any) => n.session_id)).toEqual(["s2"]);
    for (const node of all) {
      const cat = run("pixir-log", ["cat", node.session_id], { cwd: ws }).lines;
      const counts: Record<string, number> = {};
      for (const e of cat) counts[e.type] = (counts[e.type] ?? 0) + 1;
      expect([node.session_id, node.event_count, node.event_counts, node.first_event_ts, node.last_event_ts]).toEqual([node.session_id, cat.length, counts, cat[0].ts, cat.at(-1).ts]);
      expect(node.error).toBeUndefined();
      // The subagent record of the prefix is inherited, at its renumbered seq (s2's cut is before it).
      const sub = cat.find((e: any) => e.type === "subagent_event");
      expect(node.subagents.map((x: any) => [x.subagent_id, x.first_seq])).toEqual(sub ? [["x", sub.seq]] : []);
    }
  });

  it("shows the loader's error kinds for broken share lineage", () => {
    const ws = tempDir();
    writeFork(ws, { child: "a", parent: "b", parentEvents: [], toSeq: 0, strategy: "share_v1" });
    writeFork(ws, { child: "b", parent: "a", parentEvents: [], toSeq: 0, strategy: "share_v1" });
    writeRaw(ws, "q", [user("q")]);
    writeFork(ws, { child: "conflict", parent: "q", parentEvents: [user("q")], toSeq: 0, strategy: "share_v1" });
    appendFileSync(logFile(ws, "conflict"), `${rawLine("conflict", 1, user("seq 1 is inside the shared prefix"))}
`);
    for (const id of ["a", "conflict"]) {
      const cat = run("pixir-log", ["cat", id, "--json"], { cwd: ws }).errJson.error;
      const t = tree(ws, id, "--json");
      expect([id, t.code, t.json.error.kind, t.json.error.details.reason]).toEqual([id, 1, cat.kind, cat.details.reason]);
    }
    const forest = tree(ws, "--json").json.forest;
    expect(forest.map((n: any) => [n.session_id, n.cycle_root ?? false, n.error?.kind ?? null])).toEqual([
      ["a", true, "fork_cycle"],
      ["b", true, "fork_cycle"],
      ["q", false, null],
    ]);
    expect(forest[2].forks[0].session.error).toEqual({ kind: "corrupt_log_line", reason: "seq_conflicts_with_shared_prefix" });
  });
});

describe("G54 text rendering", () => {
  it("reproduces the fork golden example", () => {
    const parentEvents = [user("hi")];
    const ws = workspace({ "tree-parent-render": parentEvents });
    writeFork(ws, { child: "tree-child-render", parent: "tree-parent-render", parentEvents, toSeq: 0 });
    const r = tree(ws, "tree-parent-render");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe(
      [
        "session tree-parent-render (events=1)",
        `  workspace: ${ws}`,
        "`-- fork tree-child-render (forked_to_seq=0)",
        "    fork_root: tree-parent-render",
        "    replay_events: 1",
        "    strategy: replay_v1",
        "    branch_summary: none",
        "    child session tree-child-render (events=2)",
        `      workspace: ${ws}`,
        "",
      ].join("\n"),
    );
  });

  it("reproduces the subagent golden example", () => {
    const ws = subagentWorkspace(2);
    expect(tree(ws, "root").stdout).toBe(
      [
        "session root (events=3)",
        `  workspace: ${ws}`,
        "`-- subagent sub_1 (explorer) status=completed",
        "    index: 2",
        "    child_session: child-1",
        "    task: inspect logs",
        "    summary: found one child",
        "    reason: finished",
        "    elapsed_ms: 42",
        "    events: started -> finished",
        "    child session child-1 (events=2)",
        `      workspace: ${ws}/.pixir/subagents/sub_1/workspace`,
        "",
      ].join("\n"),
    );
  });

  it("uses |-- for all but the last item, subagents before forks, and marks missing Logs", () => {
    const events = [user("a"), ev("subagent_event", { subagent_id: "s1", child_session_id: "gone", workspace: "/nonexistent-pixir-ws" })];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "c", parent: "p", parentEvents: events, toSeq: 0 });
    expect(tree(ws, "p").stdout).toBe(
      [
        "session p (events=2)",
        `  workspace: ${ws}`,
        "|-- subagent s1",
        "    child_session: gone",
        "    child session gone (log=missing)",
        "      workspace: /nonexistent-pixir-ws",
        "`-- fork c (forked_to_seq=0)",
        "    fork_root: p",
        "    replay_events: 1",
        "    strategy: replay_v1",
        "    branch_summary: none",
        "    child session c (events=2)",
        `      workspace: ${ws}`,
        "",
      ].join("\n"),
    );
  });
});

describe("G55 trees do not break", () => {
  it("terminates on a fork cycle and marks the revisited ancestor", () => {
    const ws = tempDir();
    writeFork(ws, { child: "A", parent: "B", parentEvents: [], toSeq: 0, own: [user("a")] });
    writeFork(ws, { child: "B", parent: "A", parentEvents: [], toSeq: 0, own: [user("b")] });
    const r = tree(ws, "A", "--json");
    expect(r.code).toBe(0);
    const b = r.json.tree.forks[0].session;
    expect(b.session_id).toBe("B");
    const again = b.forks[0].session;
    expect(again).toMatchObject({ session_id: "A", cycle: true, truncated_reason: "cycle", log_exists: true, event_count: 0, event_counts: {}, subagents: [], forks: [] });
    expect(tree(ws, "A").stdout).toContain("        child session A (events=0) [cycle]\n");
    for (const node of nodesOf(r.json.tree)) expectNodeContract(node);
  });

  it("lets the same Session appear in sibling branches (the guard is the ancestor path only)", () => {
    const ws = tempDir();
    const sub = (sid: string) => ev("subagent_event", { subagent_id: sid, child_session_id: "shared", workspace: ws });
    writeRaw(ws, "r", [sub("x"), sub("y")]);
    writeRaw(ws, "shared", [user("s")]);
    const subs = tree(ws, "r", "--json").json.tree.subagents;
    expect(subs.map((s: any) => [s.session.session_id, s.session.event_count, s.session.cycle])).toEqual([
      ["shared", 1, undefined],
      ["shared", 1, undefined],
    ]);
  });

  it("is not affected by a corrupt unrelated Log, and fails on a corrupt root", () => {
    const ws = workspace({ other: [user("fine")], bad: `${rawLine("bad", 0, user("x"))}\nnot json\n` });
    const ok = tree(ws, "other", "--json");
    expect(ok.code).toBe(0);
    expect(ok.json.tree.event_count).toBe(1);
    const bad = tree(ws, "bad", "--json");
    expect(bad.code).toBe(1);
    expect(bad.json.error).toMatchObject({ kind: "corrupt_log_line", details: { reason: "invalid_json", line: 2, path: ".pixir/sessions/bad.ndjson" } });
    const text = tree(ws, "bad");
    expect(text.code).toBe(1);
    expect(text.stdout).toBe("");
    expect(text.stderr).toBe("error: corrupt_log_line: could not decode a log line (.pixir/sessions/bad.ndjson:2: invalid_json)\nhint: run pixir-log check to list every problem in this log\n");
  });

  it("shows a corrupt child with its error, counting what could be read", () => {
    const events = [user("a")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "c", parent: "p", parentEvents: events, toSeq: 0, own: [user("b")] });
    appendFileSync(logFile(ws, "c"), "{oops\n");
    const node = tree(ws, "p", "--json").json.tree.forks[0].session;
    expect(node).toMatchObject({ log_exists: true, event_count: 3, error: { kind: "corrupt_log_line", reason: "invalid_json" } });
  });

  it("agrees with the loader about corrupt lines: reason and line number", () => {
    const good = rawLine("s", 0, user("ok"));
    const cases: Array<[string, string | Buffer]> = [
      ["whitespace line", `${good}\n   \n`],
      ["unknown type", `${good}\n${rawLine("s", 1, ev("text_delta", {}))}\n`],
      ["ephemeral in writer order", `${good}\n{"id":"x","session_id":"s","seq":1,"ts":"t","type":"status","data":{}}\n`],
      ["bad seq", `${good}\n{"id":"x","session_id":"s","seq":-1,"ts":"t","type":"user_message","data":{}}\n`],
      ["leading zero seq", `${good}\n{"id":"x","session_id":"s","seq":01,"ts":"t","type":"user_message","data":{}}\n`],
      ["control char in id", `${good}\n{"id":"a\tb","session_id":"s","seq":1,"ts":"t","type":"user_message","data":{}}\n`],
      ["data not an object", `${good}\n{"id":"x","session_id":"s","seq":1,"ts":"t","type":"user_message","data":[]}\n`],
      ["torn tail", `${good}\n{"id":"x","session_id":"s","seq":1,"ts":"t","type":"user_mess`],
      ["invalid utf8", Buffer.concat([Buffer.from(`${good}\n{"id":"x","session_id":"s","seq":1,"ts":"t","type":"user_message","data":{"t":"`), Buffer.from([0xff]), Buffer.from('"}}\n')])],
      ["misplaced share header", `${good}\n${rawLine("s", 1, ev("session_fork", { strategy: "share_v1", parent_session_id: "p" }))}\n`],
    ];
    for (const [name, content] of cases) {
      const ws = tempDir();
      mkdirSync(path.dirname(logFile(ws, "s")), { recursive: true });
      writeFileSync(logFile(ws, "s"), content);
      const cat = run("pixir-log", ["cat", "s", "--json"], { cwd: ws });
      const t = tree(ws, "s", "--json");
      expect([name, t.code]).toEqual([name, 1]);
      expect([name, t.json.error.kind, t.json.error.details]).toEqual([name, cat.errJson.error.kind, cat.errJson.error.details]);
    }
  });

  it("agrees with the loader's counts and timestamps on Logs in other key orders and seq orders", () => {
    const lines = [
      // Pixir writes sorted keys; a missing ts; a null seq; out-of-order seqs; CRLF; an escaped type; no data.
      `{"data":{"text":"sorted"},"id":"p1","seq":2,"session_id":"s","ts":"2026-01-01T00:00:02.000001Z","type":"user_message"}`,
      `{"id":"p2","session_id":"s","seq":null,"ts":"2026-01-01T00:00:09Z","type":"assistant_message","data":{}}`,
      `{"id":"p3","session_id":"s","seq":0,"ts":"2026-01-01T00:00:00Z","type":"reasoning","data":{"item":"x"}}`,
      `{"id":"p4","session_id":"s","seq":1,"type":"tool_call","data":{"call_id":"c"}}`,
      `{"id":"p5","session_id":"s","seq":3,"ts":"2026-01-01T00:00:03Z","type":"tool_\\u0072esult","data":{"call_id":"c"}}\r`,
      `{"id":"p6","session_id":"s","seq":4,"ts":"2026-01-01T00:00:04Z","type":"provider_usage"}`,
      `{"id":"p7","session_id":"s","seq":1,"ts":"2026-01-01T00:00:01Z","type":"user_message","data":{"t":"é \\" }}"},"extra":1}`,
      `{"id":"p8","session_id":"s","seq":null,"ts":"2026-01-01T00:00:10Z","type":"user_message","data":null}`,
      "",
    ];
    const ws = workspace({ s: `${lines.join("\n")}\n` });
    const cat = run("pixir-log", ["cat", "s"], { cwd: ws }).lines;
    const node = tree(ws, "s", "--json").json.tree;
    const counts: Record<string, number> = {};
    for (const e of cat) counts[e.type] = (counts[e.type] ?? 0) + 1;
    expect(node.event_count).toBe(cat.length);
    expect(node.event_counts).toEqual(counts);
    expect(node.first_event_ts).toBe(cat[0].ts);
    expect(node.last_event_ts).toBe(cat.at(-1).ts);
  });

  it("scans Logs larger than a read chunk, with lines longer than it, and finds forks written in sorted key order", () => {
    const big = "x".repeat(700 * 1024);
    const events: Ev[] = [];
    for (let i = 0; i < 3000; i++) events.push(i % 1000 === 500 ? ev("tool_result", { call_id: `c${i}`, output: big }) : user(`message ${i} ${"é".repeat(i % 97)}`));
    const ws = workspace({ p: events });
    // Pixir writes keys sorted, so `data` (here 700 KB) comes before `type` on the first line.
    const header = { data: { forked_to_seq: 0, filler: big, parent_session_id: "p", replay_event_count: 1, strategy: "replay_v1" }, id: "h", seq: 0, session_id: "k", ts: "2026-07-01T00:00:00Z", type: "session_fork" };
    writeRaw(ws, "k", `${JSON.stringify(header)}\n${rawLine("k", 1, user("message 0"))}\n`);
    const r = tree(ws, "p", "--json");
    expect(r.code).toBe(0);
    const cat = run("pixir-log", ["cat", "p"], { cwd: ws }).lines;
    expect(r.json.tree).toMatchObject({ event_count: cat.length, event_counts: { tool_result: 3, user_message: 2997 }, last_event_ts: cat.at(-1).ts });
    expect(r.json.tree.forks.map((f: any) => [f.child_session_id, f.session.event_count])).toEqual([["k", 2]]);
  });

  it("honours an append journal: only original_length bytes belong to the Log", () => {
    const ws = workspace({ s: [user("a"), user("b")] });
    const first = `${rawLine("s", 0, user("a"))}\n`;
    writeFileSync(`${logFile(ws, "s")}.append-journal`, JSON.stringify({ version: 1, original_length: Buffer.byteLength(first) }));
    expect(tree(ws, "s", "--json").json.tree.event_count).toBe(run("pixir-log", ["cat", "s"], { cwd: ws }).lines.length);
    expect(tree(ws, "s", "--json").json.tree.event_count).toBe(1);
  });

  it("refuses a symlinked sessions folder for the root, and marks an unsafe subagent Workspace", () => {
    const ws = tempDir();
    const outside = tempDir();
    writeRaw(outside, "s", [user("outside-secret")]);
    mkdirSync(path.join(ws, ".pixir"));
    symlinkSync(path.join(outside, ".pixir", "sessions"), path.join(ws, ".pixir", "sessions"));
    const r = tree(ws, "s", "--json");
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "unsafe_state_path", details: { reason: "symlink_component", component: ".pixir/sessions" } });
    expect(r.stdout).not.toContain("outside-secret");

    const ws2 = tempDir();
    const subWs = path.join(ws2, "sub");
    mkdirSync(subWs);
    symlinkSync(path.join(outside, ".pixir"), path.join(subWs, ".pixir"));
    writeRaw(ws2, "r", [ev("subagent_event", { subagent_id: "x", child_session_id: "s", workspace: subWs })]);
    const node = tree(ws2, "r", "--json").json.tree.subagents[0].session;
    expect(node).toMatchObject({ log_exists: false, error: { kind: "unsafe_state_path", reason: "symlink_component" }, event_count: 0 });
  });
});

describe("max depth", () => {
  const chain = () => {
    const ws = workspace({ a: [user("a")] });
    writeFork(ws, { child: "b", parent: "a", parentEvents: [user("a")], toSeq: 0 });
    writeFork(ws, { child: "c", parent: "b", parentEvents: [ev("session_fork", {}), user("a")], toSeq: 1 });
    return ws;
  };

  it("truncates nodes deeper than --max-depth, keeping log_exists and fork records", () => {
    const ws = chain();
    const root = tree(ws, "a", "--json", "--max-depth", "1").json.tree;
    const b = root.forks[0].session;
    expect(b).toMatchObject({ session_id: "b", event_count: 2 });
    expect(b.forks[0].session).toMatchObject({ session_id: "c", truncated: true, truncated_reason: "max_depth", log_exists: true, event_count: 0, event_counts: {}, subagents: [], forks: [] });
    expect(tree(ws, "a", "--max-depth=0").stdout).toContain("    child session b (events=0) [max_depth]\n");
    expect(tree(ws, "a", "--max-depth", "0", "--json").json.tree.forks[0].session.truncated).toBe(true);
  });

  it("does not turn Logs below a depth cut into forest roots", () => {
    const ws = chain();
    const forest = tree(ws, "--json", "--max-depth", "0").json.forest;
    expect(forest.map((n: any) => n.session_id)).toEqual(["a"]);
  });

  it("rejects a malformed --max-depth", () => {
    const ws = tempDir();
    for (const v of ["-1", "1.5", "x", "1e3", " 5"]) {
      const r = tree(ws, "--json", `--max-depth=${v}`);
      expect([v, r.code, r.json.error.kind]).toEqual([v, 2, "usage"]);
      expect(r.json.error.message).toBe("--max-depth must be a non-negative integer");
    }
  });
});

describe("G56 forest and pictures", () => {
  /** tree-parent (2 Events) forked at seq 1 into tree-child; an unrelated root; an orphan. */
  function forestWorkspace(): string {
    const events = [user("hello"), assistant("world")];
    const ws = workspace({ "tree-parent": events, "0-solo": [user("x")] });
    writeFork(ws, { child: "tree-child", parent: "tree-parent", parentEvents: events, toSeq: 1 });
    writeFork(ws, { child: "orphan", parent: "gone", parentEvents: events, toSeq: 1 });
    return ws;
  }

  it("lists every root sorted by id, orphans flagged parent_missing", () => {
    const ws = forestWorkspace();
    const r = tree(ws, "--json");
    expect(r.code).toBe(0);
    expect(r.json.ok).toBe(true);
    expect(r.json.forest.map((n: any) => n.session_id)).toEqual(["0-solo", "orphan", "tree-parent"]);
    expect(r.json.forest[1]).toMatchObject({ parent_missing: true, missing_parent_session_id: "gone", event_count: 3 });
    expect(r.json.forest[2].forks[0].session.session_id).toBe("tree-child");
    for (const root of r.json.forest) for (const node of nodesOf(root)) expectNodeContract(node);
    const text = tree(ws).stdout;
    expect(text).toContain("session orphan (events=3) [parent missing: gone]\n");
    expect(text.split("\n\n")).toHaveLength(3);
    expect(text.endsWith("\n")).toBe(true);
  });

  it("prints an empty forest for an empty Workspace and creates nothing", () => {
    const ws = tempDir();
    const r = tree(ws, "--json");
    expect(r.code).toBe(0);
    expect(r.json).toEqual({ ok: true, forest: [] });
    expect(tree(ws).stdout).toBe("");
    expect(listTree(ws)).toEqual([]);
  });

  it("prints dot and Mermaid with one node per Session, deterministically", () => {
    const ws = forestWorkspace();
    const dot = tree(ws, "--format", "dot");
    expect(dot.code).toBe(0);
    expect(dot.stdout.startsWith("digraph pixir {\n  rankdir=LR;\n  node [shape=box];\n")).toBe(true);
    expect(dot.stdout.match(/^ {2}n\d+ \[label=/gm)).toHaveLength(4);
    // Roots in byte order (0-solo, orphan, tree-parent), then tree-parent's child.
    expect(dot.stdout).toContain('  n2 [label="tree-parent\\nevents=2"];\n  n3 [label="tree-child\\nevents=3"];\n');
    expect(dot.stdout).toContain('  n2 -> n3 [label="fork @1"];\n');
    expect(dot.stdout).toContain('[label="orphan\\nevents=3\\nparent missing: gone"];');
    expect(dot.stdout.trimEnd().endsWith("}")).toBe(true);

    const solo = workspace({ "tree-parent": [user("hello"), assistant("world")] });
    writeFork(solo, { child: "tree-child", parent: "tree-parent", parentEvents: [user("hello"), assistant("world")], toSeq: 1 });
    expect(tree(solo, "tree-parent", "--format", "dot").stdout).toBe(
      [
        "digraph pixir {",
        "  rankdir=LR;",
        "  node [shape=box];",
        '  n0 [label="tree-parent\\nevents=2"];',
        '  n1 [label="tree-child\\nevents=3"];',
        '  n0 -> n1 [label="fork @1"];',
        "}",
        "",
      ].join("\n"),
    );
    expect(tree(solo, "tree-parent", "--format", "mermaid").stdout).toBe(
      ["graph TD", '  n0["tree-parent<br/>events=2"]', '  n1["tree-child<br/>events=3"]', "  n0 -->|fork @1| n1", ""].join("\n"),
    );

    for (const args of [["--format", "dot"], ["--format", "mermaid"], ["--json"], []]) {
      const a = tree(ws, ...args);
      const b = tree(ws, ...args);
      expect(a.code).toBe(0);
      expect(Buffer.from(a.stdout).equals(Buffer.from(b.stdout))).toBe(true);
    }
  });

  it("draws subagent edges dashed, cycle edges red, and escapes labels", () => {
    const ws = tempDir();
    writeRaw(ws, "r", [ev("subagent_event", { subagent_id: 'q"u|o\\te', child_session_id: "kid", workspace: ws })]);
    writeRaw(ws, "kid", [user("k")]);
    writeFork(ws, { child: "A", parent: "B", parentEvents: [], toSeq: 0 });
    writeFork(ws, { child: "B", parent: "A", parentEvents: [], toSeq: 0 });
    const dot = tree(ws, "r", "--format", "dot").stdout;
    expect(dot).toContain('  n0 -> n1 [label="subagent q\\"u|o\\\\te", style=dashed];\n');
    const mermaid = tree(ws, "r", "--format", "mermaid").stdout;
    expect(mermaid).toContain("  n0 -.->|subagent q#quot;u#124;o\\te| n1\n");
    const cyc = tree(ws, "A", "--format", "dot").stdout;
    expect(cyc.match(/\[label=/g)).toHaveLength(4);
    expect(cyc).toContain('  n1 -> n0 [label="fork @0", color=red];\n');
    expect(tree(ws, "A", "--format", "mermaid").stdout).toContain("  n1 -->|fork @0| n0\n");
  });

  it("forest graphs: a node first met below a max_depth cut gets its full label; an edge met from two roots is drawn once", () => {
    const ws = tempDir();
    writeRaw(ws, "a", [ev("subagent_event", { subagent_id: "s1", child_session_id: "b", workspace: ws })]);
    writeRaw(ws, "b", [user("one"), ev("subagent_event", { subagent_id: "s2", child_session_id: "a", workspace: ws })]);
    // b is a root of its own too (a subagent child is not placed under its parent in the forest).
    const text = tree(ws, "--max-depth", "0").stdout;
    expect(text).toContain("session b (events=2)");
    const dot = tree(ws, "--max-depth", "0", "--format", "dot").stdout;
    expect(dot).toMatch(/\[label="b\\nevents=2"\]/);
    expect(dot).not.toContain("events=0");
    for (const format of ["dot", "mermaid"]) {
      const lines = tree(ws, "--format", format).stdout.split("\n").filter((l) => l.includes("subagent"));
      expect(lines, format).toHaveLength(2);
      expect(new Set(lines.map((l) => l.replace(/, color=red/, ""))).size, format).toBe(2);
    }
  });

  it("renders the dot output with Graphviz: one SVG node per Session", (ctx) => {
    const hasDot = spawnSync("dot", ["-V"]).status === 0;
    if (!hasDot) {
      // .ci/run installs Graphviz, so in CI its absence is a failure, not a quiet skip.
      if (process.env.CI) throw new Error("Graphviz `dot` is not installed; .ci/run should have installed it");
      console.warn("skipping the Graphviz render test: `dot` is not installed (apt-get install graphviz)");
      ctx.skip();
    }
    const ws = forestWorkspace();
    writeRaw(ws, "kid", [user("k")]);
    appendFileSync(logFile(ws, "0-solo"), `${rawLine("0-solo", 1, ev("subagent_event", { subagent_id: "s", child_session_id: "kid", workspace: ws }))}\n`);
    const sessions = run("pixir-log", ["ls"], { cwd: ws }).stdout.trim().split("\n");
    const r = sh("pixir-tree --format dot | dot -Tsvg", { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("<svg");
    const titles = [...r.stdout.matchAll(/<g id="node\d+" class="node">\s*<title>([^<]*)<\/title>/g)].map((m) => m[1]);
    expect(titles).toHaveLength(sessions.length);
    expect(new Set(titles).size).toBe(sessions.length);
    // 0-solo -> kid (subagent) and tree-parent -> tree-child (fork).
    expect(r.stdout.match(/class="edge"/g)).toHaveLength(2);
  });
});

describe("forest placement", () => {
  it("lists a subagent child in the same Workspace under its parent and as a root", () => {
    const ws = workspace({ kid: [user("k")] });
    writeRaw(ws, "parent", [ev("subagent_event", { subagent_id: "s", child_session_id: "kid", workspace: ws })]);
    const forest = tree(ws, "--json").json.forest;
    expect(forest.map((n: any) => n.session_id)).toEqual(["kid", "parent"]);
    expect(forest[1].subagents[0].session.session_id).toBe("kid");
  });

  it("takes Logs on a fork cycle as cycle roots in byte order (case 55 in forest mode)", () => {
    const ws = workspace({ r: [user("r")] });
    writeFork(ws, { child: "B", parent: "A", parentEvents: [], toSeq: 0 });
    writeFork(ws, { child: "A", parent: "B", parentEvents: [], toSeq: 0 });
    writeFork(ws, { child: "C", parent: "B", parentEvents: [], toSeq: 0 });
    writeFork(ws, { child: "self", parent: "self", parentEvents: [], toSeq: 0 });
    const forest = tree(ws, "--json").json.forest;
    expect(forest.map((n: any) => [n.session_id, n.cycle_root ?? false])).toEqual([
      ["A", true],
      ["r", false],
      ["self", true],
    ]);
    const b = forest[0].forks[0].session;
    expect(b.forks.map((f: any) => [f.child_session_id, f.session.cycle ?? false])).toEqual([
      ["A", true],
      ["C", false],
    ]);
    expect(tree(ws).stdout).toContain("session A (events=1) [cycle root]\n");
  });

  it("shows an unreadable Log as an error root and keeps its fork children in the forest", () => {
    const ws = workspace({ broken: "not json\n", fine: [user("ok")] });
    writeFork(ws, { child: "kid", parent: "broken", parentEvents: [], toSeq: 0 });
    const r = tree(ws, "--json");
    expect(r.code).toBe(0);
    expect(r.json.forest.map((n: any) => n.session_id)).toEqual(["broken", "fine", "kid"]);
    expect(r.json.forest[0]).toMatchObject({ error: { kind: "corrupt_log_line", reason: "invalid_json" }, forks: [] });
    expect(r.json.forest[2]).toMatchObject({ parent_unreadable: true, unreadable_parent_session_id: "broken", event_count: 1 });
    expect(r.json.forest[2].cycle_root).toBeUndefined();
    expect(tree(ws).stdout).toContain("session kid (events=1) [parent unreadable: broken]\n");
  });

  it("lists a share child whose parent Log was deleted as parent_missing (case 41)", () => {
    const events = [user("one"), assistant("two"), call("c1")];
    const ws = workspace({ p: events });
    writeFork(ws, { child: "s", parent: "p", parentEvents: events, toSeq: 2, strategy: "share_v1" });
    sh("rm .pixir/sessions/p.ndjson", { cwd: ws });
    expect(run("pixir-log", ["cat", "s", "--json"], { cwd: ws }).errJson.error.kind).toBe("fork_parent_missing");
    const r = tree(ws, "--json");
    expect(r.code).toBe(0);
    expect(r.json.forest).toHaveLength(1);
    expect(r.json.forest[0]).toMatchObject({ session_id: "s", parent_missing: true, missing_parent_session_id: "p", error: { kind: "fork_parent_missing" } });
  });

  it("never echoes an invalid parent id from a hand-written session_fork", () => {
    const ws = tempDir();
    writeRaw(ws, "x", [ev("session_fork", { parent_session_id: "../PWN", strategy: "replay_v1", forked_to_seq: 0 })]);
    const r = tree(ws, "--json");
    expect(r.json.forest[0]).toMatchObject({ session_id: "x", parent_missing: true, missing_parent_session_id: null });
    expect(r.stdout).not.toContain("PWN");
    expect(tree(ws).stdout).not.toContain("PWN");
  });
});

describe("command line", () => {
  it("prints help with the required substrings and creates nothing", () => {
    const ws = tempDir();
    for (const args of [["--help"], ["-h"], ["x/y", "--help", "--bogus"]]) {
      const r = tree(ws, ...args);
      expect(r.code).toBe(0);
      for (const s of ["Session/Subagent tree", "session_fork", "--json", "--format", "--max-depth"]) expect(r.stdout).toContain(s);
    }
    expect(tree(ws, "--version").stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect(listTree(ws)).toEqual([]);
  });

  it("treats --format json as --json, errors included, and refuses --json with another format", () => {
    const ws = workspace({ s: [user("x")] });
    expect(tree(ws, "s", "--format", "json").stdout).toBe(tree(ws, "s", "--json").stdout);
    expect(tree(ws, "--format=json").stdout).toBe(tree(ws, "--json").stdout);
    const missing = tree(ws, "nope", "--format", "json");
    expect(missing.code).toBe(2);
    expect(missing.json.error.kind).toBe("not_found");
    expect(missing.stderr).toBe("");
    for (const f of ["text", "dot", "mermaid"]) {
      const r = tree(ws, "s", "--json", "--format", f);
      expect([f, r.code, r.json.error.kind]).toEqual([f, 2, "usage"]);
    }
    const bogus = tree(ws, "--format", "svg");
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toBe("error: usage: --format must be text, json, dot or mermaid\nhint: run the command with --help\n");
    const two = tree(ws, "a", "b", "--json");
    expect([two.code, two.json.error.kind]).toEqual([2, "usage"]);
    const dash = tree(ws, "-PWN");
    expect(dash.code).toBe(2);
    expect(dash.stderr).toMatch(/^error: usage: /);
    expect(dash.stderr).not.toContain("PWN");
  });

  it("takes the Workspace from --workspace, then PIXIR_WORKSPACE", () => {
    const a = workspace({ s: [user("a")] });
    const b = workspace({ s: [user("b"), user("b")] });
    const elsewhere = tempDir();
    expect(run("pixir-tree", ["s", "--json", "--workspace", a], { cwd: elsewhere, env: { PIXIR_WORKSPACE: b } }).json.tree.event_count).toBe(1);
    expect(run("pixir-tree", ["s", "--json"], { cwd: elsewhere, env: { PIXIR_WORKSPACE: b } }).json.tree.workspace).toBe(b);
    const r = run("pixir-tree", ["--json", "--workspace", path.join(elsewhere, "nope")], { cwd: elsewhere });
    expect([r.code, r.json.error.kind, r.json.error.details.field]).toEqual([2, "invalid_args", "workspace"]);
  });
});
