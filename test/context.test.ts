// context-and-compaction.md §1, acceptance.md §I case 64: `pixir context`, the model-visible History,
// against the built binary.
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, run, sh, toolResult, user, workspace, writeRaw } from "./support/cli.js";

/** summarize.md §6: the golden branch_summary data and its provider rendering. */
const GOLDEN_SUMMARY = {
  strategy: "deterministic_operational_summary_v1",
  parent_session_id: "p1",
  forked_to_seq: 2,
  range: { from_seq: 0, to_seq: 2 },
  source_event_count: 3,
  event_counts: { user_message: 1, assistant_message: 1, tool_call: 1 },
  tool_calls: [{ seq: 3, call_id: "call-1", name: "read" }],
  files_touched: ["a.txt"],
  open_tasks: ["user: one", "assistant: two"],
  limitations: [
    "Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.",
    "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
  ],
  summary:
    "Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).\nRecent forked conversational facts:\n- user: one\n- assistant: two",
};
const GOLDEN_TEXT = `Branch summary from forked parent prefix
Parent: p1
Range: seq 0..2 (3 events)
Strategy: deterministic_operational_summary_v1

Summary:
Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).
Recent forked conversational facts:
- user: one
- assistant: two

Files touched:
- a.txt

Open tasks:
- user: one
- assistant: two

Limitations:
- Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.
- The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.`;

const checkpoint = (from: unknown, to: unknown, summary = "earlier work") =>
  ev("history_compaction", {
    strategy: "deterministic_operational_summary_v1",
    range: { from_seq: from, to_seq: to },
    source_event_count: 2,
    summary,
    files_touched: ["lib/a.ts"],
    open_tasks: ["user: old"],
    limitations: ["kept"],
  });

const context = (ws: string, id: string, ...flags: string[]) => run("pixir", ["context", id, ...flags], { cwd: ws });

describe("64. fold rules", () => {
  it("omits lineage, usage, failure, workflow and partial answers; shows terminal subagent Events; renders summaries", () => {
    const ws = workspace({
      x: [
        user("u"),
        ev("provider_usage"),
        ev("workflow_event"),
        ev("assistant_message", { text: "p", metadata: { partial: true } }),
        ev("subagent_event", { subagent_id: "a", event: "started" }),
        ev("subagent_event", { subagent_id: "a", event: "finished", summary: "ok" }),
        ev("turn_failed"),
        ev("branch_summary", GOLDEN_SUMMARY),
        assistant("done"),
      ],
    });
    const r = context(ws, "x");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.lines).toEqual([
      { seq: 0, id: "x-0", type: "user_message", role: "user", data: { text: "u" } },
      { seq: 5, id: "x-5", type: "subagent_event", role: "user", data: { subagent_id: "a", event: "finished", summary: "ok" } },
      { seq: 7, id: "x-7", type: "branch_summary", role: "user", text: GOLDEN_TEXT },
      { seq: 8, id: "x-8", type: "assistant_message", role: "assistant", data: { text: "done" } },
    ]);
    expect(r.lines[2].text.startsWith("Branch summary from forked parent prefix")).toBe(true);
    // Rendered items carry text, the others data: exactly these keys, in this order.
    expect(Object.keys(r.lines[2])).toEqual(["seq", "id", "type", "role", "text"]);
    expect(Object.keys(r.lines[0])).toEqual(["seq", "id", "type", "role", "data"]);
  });

  it("maps every other type to its role, and every terminal subagent state", () => {
    const ws = workspace({
      s: [
        ev("reasoning", { text: "think" }),
        call("c1"),
        toolResult("c1"),
        ev("permission_decision", { decision: "allow" }),
        ev("skill_activation", { name: "lint" }),
        ev("session_fork", { parent_session_id: "p", strategy: "replay_v1" }),
        ev("subagent_event", { event: "failed" }),
        ev("subagent_event", { event: "cancelled" }),
        ev("subagent_event", { event: "timed_out" }),
        ev("subagent_event", { event: "permission_posture" }),
        ev("subagent_event", { event: "progress" }),
        ev("assistant_message", { text: "partial false", metadata: { partial: false } }),
      ],
    });
    const r = context(ws, "s");
    expect(r.code).toBe(0);
    expect(r.lines.map((i) => [i.seq, i.type, i.role])).toEqual([
      [0, "reasoning", "assistant"],
      [1, "tool_call", "assistant"],
      [2, "tool_result", "tool"],
      [3, "permission_decision", "tool"],
      [4, "skill_activation", "user"],
      [6, "subagent_event", "user"],
      [7, "subagent_event", "user"],
      [8, "subagent_event", "user"],
      [11, "assistant_message", "assistant"],
    ]);
  });
});

describe("checkpoints in the fold (§1.1, §1.3)", () => {
  it("the worked example: the checkpoint replaces seq 0..1", () => {
    const ws = workspace({ c: [user("old"), assistant("older"), checkpoint(0, 1), user("recent")] });
    const r = context(ws, "c");
    expect(r.code).toBe(0);
    expect(r.lines).toHaveLength(2);
    expect(r.lines[0]).toEqual({
      seq: 2,
      id: "c-2",
      type: "history_compaction",
      role: "user",
      text: [
        "Compressed session memory",
        "Range: seq 0..1 (2 events)",
        "Strategy: deterministic_operational_summary_v1",
        "",
        "Summary:",
        "earlier work",
        "",
        "Files touched:",
        "- lib/a.ts",
        "",
        "Open tasks:",
        "- user: old",
        "",
        "Limitations:",
        "- kept",
      ].join("\n"),
    });
    expect(r.lines[1]).toMatchObject({ seq: 3, type: "user_message", role: "user", data: { text: "recent" } });
  });

  it("the valid checkpoint with the greatest seq wins; invalid ones are never shown", () => {
    const ws = workspace({
      c: [
        user("zero"),
        checkpoint(0, 0, "first"),
        user("two"),
        user("three"),
        checkpoint(0, 3, "second"),
        checkpoint(0, "not an integer", "broken"),
        user("six"),
        { ...checkpoint(0, 6, "null seq"), seq: null },
      ],
    });
    const r = context(ws, "c");
    expect(r.lines.map((i) => [i.seq, i.type])).toEqual([
      [4, "history_compaction"],
      [6, "user_message"],
    ]);
    expect(r.lines[0].text).toContain("\nsecond\n");
  });

  it("a null-seq checkpoint counts as seq −1, so any checkpoint with a seq beats it; Events with a null seq stay visible", () => {
    const ws = workspace({
      c: [user("zero"), user("one"), { ...checkpoint(0, 1, "null seq"), seq: null }, { ...user("late"), seq: null }],
    });
    const r = context(ws, "c");
    // History order puts null seqs last, in file order: the checkpoint, then "late" (kept: its seq is null).
    expect(r.lines.map((i) => [i.seq, i.type, i.text === undefined ? i.data.text : "checkpoint"])).toEqual([
      [null, "history_compaction", "checkpoint"],
      [null, "user_message", "late"],
    ]);
  });

  it("renders null and missing checkpoint fields as empty strings and empty lists as '- none'", () => {
    const ws = workspace({ c: [user("a"), ev("history_compaction", { range: { to_seq: 0 } }), user("b")] });
    const r = context(ws, "c");
    expect(r.lines[0].text).toBe(
      ["Compressed session memory", "Range: seq ..0 ( events)", "Strategy: ", "", "Summary:", "", "", "Files touched:", "- none", "", "Open tasks:", "- none", "", "Limitations:", "- none"].join("\n"),
    );
  });
});

describe("--format text (§1.2)", () => {
  it("prints a header line, the body and an empty line per item", () => {
    const ws = workspace({ t: [user("hello\nworld"), call("c1"), ev("user_message", { text: 7 }), ev("provider_usage"), ev("branch_summary", GOLDEN_SUMMARY)] });
    const r = context(ws, "t", "--format", "text");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "[0] user user_message\nhello\nworld\n\n" +
        '[1] assistant tool_call\n{"call_id":"c1","name":"read","args":{"path":"a.txt"}}\n\n' +
        '[2] user user_message\n{"text":7}\n\n' +
        `[4] user branch_summary\n${GOLDEN_TEXT}\n\n`,
    );
  });

  it("--format=ndjson is the default; another format is a usage error that is not echoed", () => {
    const ws = workspace({ t: [user("x")] });
    expect(context(ws, "t", "--format=ndjson").stdout).toBe(context(ws, "t").stdout);
    const bad = context(ws, "t", "--format", "yaml-please", "--json");
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.errJson.error.kind).toBe("usage");
    expect(bad.stderr).not.toContain("yaml-please");
  });
});

describe("data is passed through unchanged", () => {
  it("keeps the stored bytes of data", () => {
    const ws = workspace();
    writeRaw(ws, "b", '{"id":"b-0","session_id":"b","seq":0,"ts":"2026-06-30T00:00:00Z","type":"tool_result","data":{"call_id":"c1","n":1.50,"big":12345678901234567890}}\n');
    const r = context(ws, "b");
    expect(r.stdout).toBe('{"seq":0,"id":"b-0","type":"tool_result","role":"tool","data":{"call_id":"c1","n":1.50,"big":12345678901234567890}}\n');
  });
});

describe("forks (fork.md §2, §6)", () => {
  it("a share_v1 child shows the parent's raw prefix, not the parent's checkpoint", () => {
    const ws = workspace({ p: [user("m0"), assistant("m1"), user("m2"), assistant("m3"), user("m4")] });
    expect(run("pixir", ["compact", "p", "--tail-events", "2"], { cwd: ws }).code).toBe(0);
    expect(context(ws, "p").lines.map((i) => i.type)).toEqual(["history_compaction", "assistant_message", "user_message"]);
    expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "k"], { cwd: ws }).code).toBe(0);
    expect(run("pixir-log", ["append", "k"], { cwd: ws, input: '{"type":"user_message","data":{"text":"own"}}\n' }).code).toBe(0);
    const r = context(ws, "k");
    expect(r.code).toBe(0);
    expect(r.lines.map((i) => [i.seq, i.data.text])).toEqual([
      [1, "m0"],
      [2, "m1"],
      [3, "m2"],
      [4, "m3"],
      [5, "m4"],
      [6, "own"],
    ]);
  });

  it("reports loader errors as they are: a share child whose parent is gone", () => {
    const ws = workspace({ p: [user("a")] });
    expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "k"], { cwd: ws }).code).toBe(0);
    writeRaw(ws, "p", [user("rewritten")]);
    const r = context(ws, "k", "--json");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.errJson.error.kind).toBe("fork_prefix_mismatch");
  });
});

describe("errors and pipes", () => {
  it("a missing Log is not_found (exit 2) and creates nothing", () => {
    const ws = workspace();
    const r = context(ws, "never", "--json");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.errJson.error).toMatchObject({ kind: "not_found", details: { session_id: "never", log_path: ".pixir/sessions/never.ndjson" } });
    expect(listTree(ws)).toEqual([]);
    const text = context(ws, "never");
    expect(text.stderr).toBe("error: not_found: session log was not found\nhint: check the session id\nhint: run pixir context from the workspace that owns the session log\n");
  });

  it("an invalid id is invalid_args and never echoed", () => {
    const ws = workspace();
    const r = context(ws, "bad/../id", "--json");
    expect(r.code).toBe(2);
    expect(r.errJson.error.kind).toBe("invalid_args");
    expect(r.stderr).not.toContain("bad/../id");
  });

  it("a corrupt Log prints nothing", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${JSON.stringify({ id: "s-0", session_id: "s", seq: 0, ts: "2026-06-30T00:00:00Z", type: "user_message", data: { text: "a" } })}\n{not json}\n`);
    const r = context(ws, "s");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("error: corrupt_log_line: could not decode a log line (.pixir/sessions/s.ndjson:2: invalid_json)\nhint: run pixir-log check to list every problem in this log\n");
  });

  it("ends quietly with exit 0 when the reader goes away", () => {
    const ws = workspace({ big: Array.from({ length: 30000 }, (_, i) => user(`message ${i} ${"x".repeat(40)}`)) });
    const r = sh("pixir context big | head -1", { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({ seq: 0, role: "user" });
  });
});
