// context-and-compaction.md §3–§5, acceptance.md §I case 63: `pixir compact`, against the built binary.
// Every compaction vector of context-vectors.md is in context-vectors.test.ts.
import { writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, readEvents, readLog, ULID, user, workspace } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";

const LIMITATIONS = [
  "Deterministic compaction keeps operational facts and recent tail; it is not a semantic substitute for the full Log.",
  "The full NDJSON Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];
const SKILL_LIMITATION =
  "Skills activated only inside the compacted range are not replayed unless they remain in the recent raw tail or are explicitly re-activated.";
const NOTHING = { ok: true, compactable: false, recorded: false };

const compact = (ws: string, id: string, ...flags: string[]) => run("pixir", ["compact", id, ...flags], { cwd: ws });
const append = (ws: string, id: string, events: object[]) =>
  run("pixir-log", ["append", id], { cwd: ws, input: events.map((e) => `${JSON.stringify(e)}\n`).join("") });

/** An active lease held by "another writer" (writer-lease.md §2): fresh heartbeat, long stale_after_ms. */
function holdLease(ws: string, id: string): void {
  const dir = path.join(ws, ".pixir", "session_leases");
  mkdirSync(dir, { recursive: true });
  const now = Date.now();
  writeFileSync(
    path.join(dir, `${id}.json`),
    JSON.stringify({
      version: 1,
      purpose: "session_writer",
      session_id: id,
      workspace: ws,
      holder_id: "wrl_0123456789abcdef",
      os_pid: String(process.pid),
      hostname: "elsewhere",
      heartbeat_at_ms: now,
      heartbeat_at: new Date(now).toISOString(),
      stale_after_ms: 600000,
    }),
  );
}

describe("63. compaction", () => {
  it("a dry run reports the checkpoint and leaves the Log unchanged", () => {
    const ws = workspace({ c: [user("u1"), assistant("a1"), user("u2")] });
    const before = listTree(ws);
    const log = readLog(ws, "c");
    const r = compact(ws, "c", "--dry-run", "--json", "--tail-events", "1");
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, compactable: true, recorded: false, model_assisted: false, tail_events: 1, would_compact_events: 2 });
    expect(r.json.event.range).toEqual({ from_seq: 0, to_seq: 1 });
    expect(r.json.compaction_seq).toBeUndefined();
    expect(readLog(ws, "c")).toBe(log);
    expect(listTree(ws)).toEqual(before);
    expect(compact(ws, "c", "--dry-run", "--tail-events", "1").stdout).toBe("Would compact 2 events, seq 0..1.\n");
  });

  it("a History within the tail has nothing to compact", () => {
    const ws = workspace({ c: [user("u1"), assistant("a1")] });
    const log = readLog(ws, "c");
    const dry = compact(ws, "c", "--tail-events", "5", "--dry-run", "--json");
    expect(dry.code).toBe(0);
    expect(dry.json).toEqual({ ...NOTHING, tail_events: 2, reason: "history does not exceed requested tail" });
    expect(compact(ws, "c", "--tail-events", "5", "--dry-run").stdout).toBe("Nothing to compact: history does not exceed requested tail\n");
    // Without --dry-run the answer says only that nothing was compacted (§4 step 16).
    expect(compact(ws, "c", "--tail-events", "5", "--json")).toMatchObject({ code: 0, json: NOTHING });
    expect(compact(ws, "c", "--tail-events", "5").stdout).toBe("Nothing to compact: no compactable history\n");
    expect(readLog(ws, "c")).toBe(log);
  });

  it("a prefix of null-seq Events gives a checkpoint without a range, as Pixir's does; it then hides every seq'd Event", () => {
    const ws = workspace({ c: [{ ...user("a"), seq: null }, { ...user("b"), seq: null }, { ...user("c"), seq: null }] });
    const r = compact(ws, "c", "--tail-events", "1", "--json");
    expect(r.json).toMatchObject({ compactable: true, recorded: true, would_compact_events: 2, compaction_seq: 3 });
    expect(r.json.event).toMatchObject({ range: { from_seq: null, to_seq: null }, source_event_count: 2 });
    expect(r.stdout.includes('"range":{"from_seq":null,"to_seq":null}')).toBe(true);
    // §1.1: with no integer to_seq, only Events without a seq follow the checkpoint.
    const ctx = run("pixir", ["context", "c"], { cwd: ws });
    expect(ctx.lines.map((l) => [l.seq, l.type])).toEqual([
      [3, "history_compaction"],
      [null, "user_message"],
      [null, "user_message"],
      [null, "user_message"],
    ]);
  });

  it("the worked example: record, append, compact again carrying the checkpoint, then the context", () => {
    const ws = workspace({ c: [user("m0"), assistant("m1"), user("m2"), assistant("m3"), user("m4")] });
    const before = readLog(ws, "c");
    const first = compact(ws, "c", "--tail-events", "2", "--json");
    expect(first.code).toBe(0);
    expect(first.json).toMatchObject({ ok: true, compactable: true, recorded: true, tail_events: 2, would_compact_events: 3, compaction_seq: 5 });
    expect(first.json.compaction_event_id).toMatch(ULID);
    expect(first.json.event).toMatchObject({ range: { from_seq: 0, to_seq: 2 }, source_event_count: 3, tail_event_count: 2, trigger: "manual" });
    // One more line; every earlier byte as it was.
    const log = readLog(ws, "c");
    expect(log.startsWith(before)).toBe(true);
    const events = readEvents(ws, "c");
    expect(events).toHaveLength(6);
    expect(events[5]).toMatchObject({ id: first.json.compaction_event_id, session_id: "c", seq: 5, type: "history_compaction", data: first.json.event });
    expect(Object.keys(events[5])).toEqual(["id", "session_id", "seq", "ts", "type", "data"]);
    expect(Date.parse(events[5].ts)).not.toBeNaN();

    expect(append(ws, "c", [{ type: "user_message", data: { text: "m6" } }, { type: "assistant_message", data: { text: "later answer" } }, { type: "user_message", data: { text: "latest request" } }]).code).toBe(0);
    const second = compact(ws, "c", "--tail-events", "2", "--json");
    expect(second.json).toMatchObject({ recorded: true, would_compact_events: 3, compaction_seq: 9 });
    const data = second.json.event;
    expect(data).toMatchObject({ range: { from_seq: 0, to_seq: 6 }, source_event_count: 6, tail_event_count: 2 });
    // The material is [checkpoint@5, 3, 4, 6]: the carried checkpoint counts as one history_compaction.
    expect(data.event_counts).toEqual({ history_compaction: 1, assistant_message: 1, user_message: 2 });
    expect(data.summary).toContain("previous checkpoint seq 0..2");
    expect(data.summary.split("\n")[0]).toBe("Compacted 4 events (assistant_message=1, history_compaction=1, user_message=2).");

    const ctx = run("pixir", ["context", "c"], { cwd: ws });
    expect(ctx.code).toBe(0);
    expect(ctx.lines).toHaveLength(3);
    expect(ctx.lines[0]).toMatchObject({ seq: 9, type: "history_compaction", item: { role: "user" } });
    expect(ctx.lines[0].item.content[0].text.split("\n").slice(0, 2)).toEqual(["Compressed session memory", "Range: seq 0..6 (6 events)"]);
    expect(ctx.lines[1]).toMatchObject({ seq: 7, item: { role: "assistant", content: [{ type: "output_text", text: "later answer" }] } });
    expect(ctx.lines[2]).toMatchObject({ seq: 8, item: { role: "user", content: [{ type: "input_text", text: "latest request" }] } });
  });

  it("text output of a recorded checkpoint", () => {
    const ws = workspace({ c: [user("m0"), assistant("m1"), user("m2")] });
    const r = compact(ws, "c", "--tail-events", "1");
    expect(r.stdout).toBe("Recorded compaction checkpoint at seq 3 for seq 0..1.\n");
    expect(r.stderr).toBe("");
  });
});

describe("the checkpoint data (§2, §3)", () => {
  it("counts, tool calls, skills, files and excerpts over the prefix", () => {
    const skills = Array.from({ length: 6 }, (_, i) => ev("skill_activation", { name: `skill-${i}`, path: `skills/${i}.md`, ...(i === 5 ? {} : { content_hash: `h${i}` }) }));
    const ws = workspace({
      c: [
        user("first   request\twith  spaces"),
        call("c1", "read", "src/z.ts"),
        ev("tool_call", { call_id: "c2", name: "grep", args: { pattern: "needle", paths: ["b/x", "plain", "a.md"], n: 3 } }),
        ev("tool_call", { name: "noargs" }),
        ...skills,
        ev("subagent_event", { subagent_id: "sa", event: "finished", summary: "done it" }),
        ev("subagent_event", { subagent_id: "sa", event: "permission_posture" }),
        ev("assistant_message", { metadata: {} }),
        ev("provider_usage", { tokens: 5 }),
        user("tail 1"),
        user("tail 2"),
      ],
    });
    const r = compact(ws, "c", "--tail-events", "2", "--dry-run", "--json");
    expect(r.code).toBe(0);
    const d = r.json.event;
    expect(r.json.would_compact_events).toBe(14);
    expect(d.range).toEqual({ from_seq: 0, to_seq: 13 });
    expect(d.strategy).toBe("deterministic_operational_summary_v1");
    expect(d.event_counts).toEqual({ user_message: 1, tool_call: 3, skill_activation: 6, subagent_event: 2, assistant_message: 1, provider_usage: 1 });
    expect(d.tool_calls).toEqual([
      { seq: 1, call_id: "c1", name: "read" },
      { seq: 2, call_id: "c2", name: "grep" },
      { seq: 3, call_id: null, name: "noargs" },
    ]);
    expect(d.files_touched).toEqual(["a.md", "b/x", "src/z.ts"]);
    expect(d.compacted_skill_activation_count).toBe(6);
    expect(d.compacted_skill_activations).toEqual([1, 2, 3, 4, 5].map((i) => ({ seq: 4 + i, name: `skill-${i}`, path: `skills/${i}.md`, content_hash: i === 5 ? null : `h${i}` })));
    expect(d.limitations).toEqual([
      ...LIMITATIONS,
      SKILL_LIMITATION,
      "Compacted skill activations: " +
        "skill-1 (seq 5, skills/1.md, sha256 h1); skill-2 (seq 6, skills/2.md, sha256 h2); skill-3 (seq 7, skills/3.md, sha256 h3); " +
        "skill-4 (seq 8, skills/4.md, sha256 h4); skill-5 (seq 9, skills/5.md, sha256 unknown); +1 earlier.",
    ]);
    // permission_posture subagent Events and messages without text give empty excerpts, which are dropped.
    expect(d.open_tasks).toEqual(["user: first request with spaces", "subagent sa: done it"]);
    expect(d.summary).toBe(
      "Compacted 14 events (assistant_message=1, provider_usage=1, skill_activation=6, subagent_event=2, tool_call=3, user_message=1).\n" +
        "Recent compacted conversational facts:\n- user: first request with spaces\n- subagent sa: done it",
    );
  });

  it("open_tasks keeps the last 8 excerpts and the summary the last 6", () => {
    const ws = workspace({ c: [...Array.from({ length: 10 }, (_, i) => user(`q${i}`)), user("tail")] });
    const d = compact(ws, "c", "--tail-events", "1", "--dry-run", "--json").json.event;
    expect(d.open_tasks).toEqual(["q2", "q3", "q4", "q5", "q6", "q7", "q8", "q9"].map((t) => `user: ${t}`));
    expect(d.summary.split("\n").slice(2)).toEqual(["q4", "q5", "q6", "q7", "q8", "q9"].map((t) => `- user: ${t}`));
  });

  it("no excerpts at all gives '- none recorded'", () => {
    const ws = workspace({ c: [ev("reasoning", { text: "hmm" }), call("c1"), user("tail")] });
    const d = compact(ws, "c", "--tail-events", "1", "--dry-run", "--json").json.event;
    expect(d.summary).toBe("Compacted 2 events (reasoning=1, tool_call=1).\nRecent compacted conversational facts:\n- none recorded");
    expect(d.open_tasks).toEqual([]);
    expect(d.limitations).toEqual(LIMITATIONS);
  });

  it("a carried checkpoint contributes its range start and its source count, not its files", () => {
    const carried = ev("history_compaction", {
      strategy: "pi_compaction",
      range: { from_seq: 0, to_seq: 1 },
      source_event_count: 2,
      summary: "old\nstuff",
      files_touched: ["zz/last.txt", 42, "aa/first.txt"],
    });
    const ws = workspace({ c: [user("gone"), user("gone too"), carried, call("c9", "edit", "mm/mid.txt"), user("kept 1"), user("kept 2")] });
    const d = compact(ws, "c", "--tail-events", "2", "--dry-run", "--json").json.event;
    expect(d.range).toEqual({ from_seq: 0, to_seq: 3 });
    expect(d.source_event_count).toBe(3);
    expect(d.files_touched).toEqual(["mm/mid.txt"]);
    expect(d.open_tasks).toEqual(["previous checkpoint seq 0..1: old stuff"]);
    expect(d.event_counts).toEqual({ history_compaction: 1, tool_call: 1 });
  });
});

describe("lease, dry runs and errors", () => {
  it("a held lease gives exit 5 and leaves the Log unchanged", () => {
    const ws = workspace({ c: [user("a"), user("b"), user("c")] });
    holdLease(ws, "c");
    const log = readLog(ws, "c");
    const r = compact(ws, "c", "--tail-events", "1", "--json");
    expect(r.code).toBe(5);
    expect(r.json.error.kind).toBe("session_writer_active");
    expect(readLog(ws, "c")).toBe(log);
    // A dry run takes no lease and does not look at it.
    expect(compact(ws, "c", "--tail-events", "1", "--dry-run", "--json").json).toMatchObject({ compactable: true, recorded: false });
  });

  it("a missing Session is not compactable, exits 0 and creates nothing", () => {
    const ws = workspace();
    const r = compact(ws, "nobody", "--json");
    expect(r.code).toBe(0);
    expect(r.json).toEqual(NOTHING);
    expect(compact(ws, "nobody", "--json", "--dry-run").json).toEqual({ ...NOTHING, tail_events: 0, reason: "history does not exceed requested tail" });
    expect(listTree(ws)).toEqual([]);
  });

  it("the default tail is 40", () => {
    const ws = workspace({ c: Array.from({ length: 41 }, (_, i) => user(`m${i}`)) });
    expect(compact(ws, "c", "--dry-run", "--json").json).toMatchObject({ tail_events: 40, would_compact_events: 1 });
    const few = workspace({ c: Array.from({ length: 40 }, (_, i) => user(`m${i}`)) });
    expect(compact(few, "c", "--json", "--dry-run").json).toMatchObject({ compactable: false, tail_events: 40 });
  });

  it.each([
    [["--tail-events", "0"], "--tail-events must be a positive integer"],
    [["--tail-events", "-1"], "--tail-events must be a positive integer"],
    [["--tail-events", "1e3"], "--tail-events must be a positive integer"],
    [["--tail-events", "5x"], "--tail-events must be a positive integer"],
    [["--tail-events"], "--tail-events requires a positive integer value"],
    [["--tail-events", "--dry-run"], "--tail-events requires a positive integer value"],
  ])("%j is a usage error", (flags, message) => {
    const ws = workspace({ c: [user("a"), user("b")] });
    const r = compact(ws, "c", ...flags, "--json");
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ kind: "usage", message });
    expect(r.stderr).toBe("");
  });

  it("accepts +N and leading zeros", () => {
    const ws = workspace({ c: [user("a"), user("b"), user("c")] });
    expect(compact(ws, "c", "--tail-events=+02", "--dry-run", "--json").json).toMatchObject({ tail_events: 2, would_compact_events: 1 });
  });

  it("an invalid id is invalid_args and never echoed", () => {
    const ws = workspace();
    const r = compact(ws, "-x/..", "--json");
    expect(r.code).toBe(2);
    expect(r.stdout).not.toContain("-x/..");
    const r2 = compact(ws, "a/b", "--json");
    expect(r2.json.error.kind).toBe("invalid_args");
    expect(r2.stdout).not.toContain("a/b");
  });

  it("help names history_compaction, --dry-run and --tail-events", () => {
    const r = run("pixir", ["compact", "--help"], { cwd: workspace() });
    expect(r.code).toBe(0);
    for (const s of ["history_compaction", "--dry-run", "--tail-events"]) expect(r.stdout).toContain(s);
  });
});

describe("share_v1 children", () => {
  it("compacts the resolved History and appends the checkpoint to the child only", () => {
    const ws = workspace({ p: [user("m0"), assistant("m1"), user("m2")] });
    expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "k"], { cwd: ws }).code).toBe(0);
    const parent = readLog(ws, "p");
    expect(append(ws, "k", [{ type: "user_message", data: { text: "own" } }]).code).toBe(0);
    const r = compact(ws, "k", "--tail-events", "1", "--json");
    // Candidates are every Event that is not a checkpoint: the header, the inherited seqs 1..3, and seq 4.
    expect(r.json).toMatchObject({ recorded: true, compaction_seq: 5, would_compact_events: 4 });
    expect(r.json.event.range).toEqual({ from_seq: 0, to_seq: 3 });
    expect(r.json.event.event_counts).toEqual({ session_fork: 1, user_message: 2, assistant_message: 1 });
    expect(readLog(ws, "p")).toBe(parent);
    expect(readEvents(ws, "k").map((e) => e.type)).toEqual(["session_fork", "user_message", "history_compaction"]);
    expect(run("pixir", ["context", "k"], { cwd: ws }).lines.map((i) => [i.seq, i.type])).toEqual([
      [5, "history_compaction"],
      [4, "user_message"],
    ]);
  });
});
