// acceptance.md §E (cases 39–45), fork.md §6–§9: share_v1 children store only their header and own
// Events; the resolving loader stitches the verified parent prefix back in.
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, logFile, readEvents, readLog, sh, tempDir, user, workspace, writeRaw, type Ev } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); the pipelines below are processes.
import { runInThread as run } from "../support/thread.js";
import {
  derivedUlid,
  expectJsonError,
  expectNoEcho,
  expectJsonOk,
  expectStreamJsonError,
  expectTextError,
  HOSTILE,
  leftovers,
  logIds,
  logical,
  prefixDigest,
  REPLAY_LIMITATIONS,
  sha256,
  SHARE_LIMITATIONS,
  shareHeader,
  withoutHeaderNoise,
} from "../support/fork.js";

const P: Ev[] = [user("one"), assistant("two"), call("c1", "read", "a.txt")];

const cat = (ws: string, id: string, args: string[] = []) => run("pixir-log", ["cat", id, ...args], { cwd: ws });
const catOk = (ws: string, id: string, args: string[] = []) => {
  const r = cat(ws, id, args);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.lines;
};
const fork = (ws: string, parent: string, child: string, extra: string[] = []) =>
  expectJsonOk(run("pixir", ["fork", parent, "--child-id", child, "--json", ...extra], { cwd: ws }));
/** Append one Event with a pinned ts, so two Sessions can get equal own Events. */
const appendPinned = (ws: string, id: string, text: string, ts: string) => {
  const r = run("pixir-log", ["append", id, "--json"], { cwd: ws, input: `${JSON.stringify({ type: "user_message", ts, data: { text } })}\n` });
  return expectJsonOk(r);
};

describe("39. a share child is small on disk but resolves in full", () => {
  it("stores one line, and cat agrees with a replay_v1 child on type, seq, ts and data", () => {
    const ws = workspace({ p: P });
    const sharePlan = fork(ws, "p", "s", ["--strategy", "share_v1"]);
    fork(ws, "p", "r");
    expect(sharePlan).toMatchObject({ strategy: "share_v1", recorded: true, event_count: 3, resource_count: 0 });
    expect(readLog(ws, "s").split("\n").filter(Boolean)).toHaveLength(1);
    const raw = cat(ws, "s", ["--raw"]);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toBe(readLog(ws, "s"));

    const s = catOk(ws, "s");
    const r = catOk(ws, "r");
    expect(s.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(withoutHeaderNoise(s)).toEqual(withoutHeaderNoise(r));
    expect(s[0].data).toMatchObject({ strategy: "share_v1", limitations: SHARE_LIMITATIONS, prefix_digest: prefixDigest(readEvents(ws, "p")) });
    expect(r[0].data).toMatchObject({ strategy: "replay_v1", limitations: REPLAY_LIMITATIONS });
    for (const e of s) expect(e.session_id).toBe("s");
    // The resolved ids follow the same rule as a replay_v1 copy (fork.md §4.2).
    for (const e of s.slice(1)) expect(e.id).toBe(derivedUlid(`fork:${s[0].id}:${e.seq}`, e.ts));
  });

  it("appending to s continues at N+1, and appending to p afterwards leaves s unchanged", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    expect(appendPinned(ws, "s", "child turn", "2026-07-01T00:00:00Z")).toMatchObject({ first_seq: 4, last_seq: 4 });
    const before = catOk(ws, "s");
    expect(before.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(readLog(ws, "s").split("\n").filter(Boolean)).toHaveLength(2);
    appendPinned(ws, "p", "parent moves on", "2026-07-02T00:00:00Z");
    expect(catOk(ws, "s")).toEqual(before);
    // cat's filters apply to the resolved view.
    expect(catOk(ws, "s", ["--from-seq", "2", "--to-seq", "3"]).map((e) => e.seq)).toEqual([2, 3]);
    expect(catOk(ws, "s", ["--type", "user_message"]).map((e) => e.data.text)).toEqual(["one", "child turn"]);
  });

  it("share_v1: a fork of a fork of a fork resolves to the same History as the replay_v1 chain", () => {
    const ws = workspace({ p: [user("one"), assistant("two"), call("c1"), ev("provider_usage"), ev("tool_result", { call_id: "c1", ok: true }), user("three")] });
    let prev = { s: "p", r: "p" };
    const cuts = [["--to-seq", "4"], [], ["--to-seq", "6"]];
    for (const [i, cut] of cuts.entries()) {
      const next = { s: `s${i + 1}`, r: `r${i + 1}` };
      fork(ws, prev.s, next.s, ["--strategy", "share_v1", ...cut]);
      fork(ws, prev.r, next.r, cut);
      const ts = `2026-07-0${i + 1}T00:00:00Z`;
      appendPinned(ws, next.s, `own ${i + 1}`, ts);
      appendPinned(ws, next.r, `own ${i + 1}`, ts);
      const drop = ["strategy", "limitations", "parent_session_id"];
      expect(withoutHeaderNoise(catOk(ws, next.s), drop)).toEqual(withoutHeaderNoise(catOk(ws, next.r), drop));
      prev = next;
    }
    const s3 = catOk(ws, "s3");
    expect(s3.map((e) => e.type)).toEqual(["session_fork", "user_message", "assistant_message", "tool_call", "tool_result", "user_message", "user_message", "user_message"]);
    expect(s3.map((e) => e.data.text ?? null)).toEqual([null, "one", "two", null, null, "own 1", "own 2", "own 3"]);
    expect(logical(s3).slice(1)).toEqual(logical(catOk(ws, "r3")).slice(1));
    // Each share child stores its header and its one own Event only.
    for (const id of ["s1", "s2", "s3"]) expect(readEvents(ws, id)).toHaveLength(2);
    // The root is inherited through the share lineage.
    expect(s3[0].data.fork_root_session_id).toBe("p");
  });

  it("the resolved form of a share stream is written compactly, after checking its prefix", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    appendPinned(ws, "s", "child turn", "2026-07-01T00:00:00Z");
    const ws2 = workspace({ p: P });
    const plan = expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws2, input: cat(ws, "s").stdout }));
    expect(plan).toMatchObject({ strategy: "share_v1", child_session_id: "s", event_count: 3, recorded: true });
    expect(readLog(ws2, "s")).toBe(readLog(ws, "s"));
    expect(catOk(ws2, "s")).toEqual(catOk(ws, "s"));

    // A resolved stream whose inherited Events were changed is refused.
    const lines = cat(ws, "s").stdout.split("\n").filter(Boolean);
    lines[2] = lines[2]!.replace('"two"', '"forged"');
    const ws3 = workspace({ p: P });
    const before = listTree(ws3);
    expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws3, input: `${lines.join("\n")}\n` }), 1, "fork_prefix_mismatch");
    expect(listTree(ws3)).toEqual(before);
  });
});

describe("40. share plus summary", () => {
  it("stores exactly the header and the branch_summary, whose data is the golden example", () => {
    const ws = workspace({ p: P });
    const plan = fork(ws, "p", "s", ["--strategy", "share_v1", "--summarize"]);
    expect(plan).toMatchObject({ summarize: true, branch_summary_strategy: "deterministic_operational_summary_v1", strategy: "share_v1" });
    const stored = readEvents(ws, "s");
    expect(stored.map((e) => [e.type, e.seq])).toEqual([
      ["session_fork", 0],
      ["branch_summary", 4],
    ]);
    expect(stored[1].data).toEqual({
      strategy: "deterministic_operational_summary_v1",
      parent_session_id: "p",
      forked_to_seq: 2,
      range: { from_seq: 0, to_seq: 2 },
      source_event_count: 3,
      event_counts: { user_message: 1, assistant_message: 1, tool_call: 1 },
      tool_calls: [{ seq: 3, call_id: "c1", name: "read" }],
      files_touched: ["a.txt"],
      open_tasks: ["user: one", "assistant: two"],
      limitations: [
        "Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.",
        "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
      ],
      summary: "Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).\nRecent forked conversational facts:\n- user: one\n- assistant: two",
    });
    expect(catOk(ws, "s").map((e) => e.seq)).toEqual([0, 1, 2, 3, 4]);
    // The compact pipeline gives the same stored Events.
    const piped = expectJsonOk(sh("pixir-fork --parent p --strategy share_v1 --child-id s2 | pixir-summarize | pixir-log write --json", { cwd: ws }));
    expect(piped.summarize).toBe(true);
    const s2 = readEvents(ws, "s2");
    expect(s2.map((e) => [e.type, e.seq])).toEqual([
      ["session_fork", 0],
      ["branch_summary", 4],
    ]);
    expect(s2[1].data).toEqual(stored[1].data);
  });
});

describe("41. missing parent", () => {
  it("cat of a share child whose parent Log is gone: fork_parent_missing", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    fork(ws, "s", "g", ["--strategy", "share_v1"]);
    rmSync(logFile(ws, "p"));
    // The details name the link that broke, and how deep it lies.
    expect(expectStreamJsonError(cat(ws, "g", ["--json"]), 1, "fork_parent_missing")).toMatchObject({ session_id: "s", parent_session_id: "p", depth: 2 });
    const d = expectStreamJsonError(cat(ws, "s", ["--json"]), 1, "fork_parent_missing");
    expect(d).toEqual({ session_id: "s", parent_session_id: "p", depth: 1, next_actions: ["restore the parent log", "if the parent is gone for good, discard this child"] });
    expectTextError(cat(ws, "s"), 1, "fork_parent_missing");
    // Forking from it, or materializing it, fails the same way.
    expect(expectJsonError(run("pixir", ["fork", "s", "--json"], { cwd: ws }), 1, "fork_parent_missing").parent_session_id).toBe("p");
    expectJsonError(run("pixir-log", ["materialize", "s", "--json"], { cwd: ws }), 1, "fork_parent_missing");
    expect(leftovers(ws)).toEqual([]);
  });

  it("cat --raw resolves nothing: it shows the physical lines of an orphan and of a cycle", () => {
    const ws = workspace({ p: P, a: [shareHeader("b", 0, 0, prefixDigest([]))], b: [shareHeader("a", 0, 0, prefixDigest([]))] });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    rmSync(logFile(ws, "p"));
    for (const id of ["s", "a"]) {
      const r = cat(ws, id, ["--raw"]);
      expect(r).toMatchObject({ code: 0, stdout: readLog(ws, id), stderr: "" });
    }
  });

  it("a share stream cannot be written without its parent", () => {
    const ws = workspace({ p: P });
    const stream = run("pixir-fork", ["--parent", "p", "--strategy", "share_v1", "--child-id", "s"], { cwd: ws }).stdout;
    const elsewhere = tempDir();
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: elsewhere, input: stream }), 1, "fork_parent_missing");
    expect(d).toMatchObject({ session_id: "s", parent_session_id: "p" });
    expect(logIds(elsewhere)).toEqual([]);
    expect(leftovers(elsewhere)).toEqual([]);
  });

  it("pixir-tree --json lists the orphan as a forest root with parent_missing", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    rmSync(logFile(ws, "p"));
    const r = run("pixir-tree", ["--json"], { cwd: ws });
    const forest = expectJsonOk(r).forest as any[];
    expect(forest.find((n) => n.session_id === "s")).toMatchObject({ parent_missing: true, missing_parent_session_id: "p" });
  });
});

describe("42. rewritten parent", () => {
  it("an edited parent prefix: fork_prefix_mismatch with both digests and counts", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    fork(ws, "s", "g", ["--strategy", "share_v1"]);
    const digest = readEvents(ws, "s")[0].data.prefix_digest;
    writeFileSync(logFile(ws, "p"), readLog(ws, "p").replace('"text":"one"', '"text":"ONE"'));
    const d = expectStreamJsonError(cat(ws, "s", ["--json"]), 1, "fork_prefix_mismatch");
    expect(d).toMatchObject({ session_id: "s", parent_session_id: "p", expected_digest: digest, expected_count: 3, actual_count: 3 });
    expect(d.actual_digest).toBe(prefixDigest(readEvents(ws, "p")));
    expect(d.actual_digest).not.toBe(d.expected_digest);
    // A grandchild depends on the same prefix, so it fails too.
    expectStreamJsonError(cat(ws, "g", ["--json"]), 1, "fork_prefix_mismatch");
  });

  it("a dropped prefix line changes the count", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    const lines = readLog(ws, "p").split("\n");
    writeFileSync(logFile(ws, "p"), [lines[0], lines[2], ""].join("\n"));
    const d = expectStreamJsonError(cat(ws, "s", ["--json"]), 1, "fork_prefix_mismatch");
    expect(d).toMatchObject({ expected_count: 3, actual_count: 2 });
  });

  it("a legal append to the parent, even inside the forked seq range of another type, does not break it", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1", "--to-seq", "1"]);
    appendPinned(ws, "p", "later", "2026-07-01T00:00:00Z");
    appendFileSync(logFile(ws, "p"), `${JSON.stringify({ id: "x", session_id: "p", seq: null, ts: "2026-07-01T00:00:00Z", type: "user_message", data: {} })}\n`);
    expect(catOk(ws, "s").map((e) => e.data.text ?? null)).toEqual([null, "one", "two"]);
  });

  it("cat --lenient skips a corrupt own line of a share child as it does in a root Log, and only there", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    appendFileSync(logFile(ws, "s"), `{bad\n${JSON.stringify({ id: "own", session_id: "s", seq: 4, ts: "2026-07-01T00:00:00Z", type: "user_message", data: { text: "mine" } })}\n`);
    const lenient = cat(ws, "s", ["--lenient", "--exit-zero"]);
    expect(lenient.code).toBe(0);
    expect(lenient.lines.map((e) => e.data.text ?? null)).toEqual([null, "one", "two", null, "mine"]);
    expect(lenient.stderr).toBe("warning: corrupt_log_line: line 2: invalid_json\nwarning: corrupt_log_line: skipped 1 corrupt log lines\n");
    expect(cat(ws, "s", ["--lenient"]).code).toBe(1);
    expect(cat(ws, "s").code).toBe(1);
    // A corrupt parent line is never skipped on a child's behalf.
    writeFileSync(logFile(ws, "p"), `{bad\n${readLog(ws, "p")}`);
    const parentBad = cat(ws, "s", ["--lenient", "--exit-zero"]);
    expect([parentBad.code, parentBad.stdout]).toEqual([1, ""]);
  });

  it("pixir-log check reports the mismatch as a problem", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    writeFileSync(logFile(ws, "p"), readLog(ws, "p").replace('"text":"one"', '"text":"ONE"'));
    const d = expectJsonError(run("pixir-log", ["check", "s", "--json"], { cwd: ws }), 1, "log_check_failed");
    const codes = d.logs.flatMap((l: any) => l.problems.map((p: any) => p.code));
    expect(codes).toContain("fork_prefix_mismatch");
  });
});

describe("an inherited lone surrogate (readable, never writable: envelope-and-log.md §3, §8.1)", () => {
  const parentLines = [
    '{"id":"a","session_id":"p","seq":0,"ts":"2026-07-01T00:00:00Z","type":"user_message","data":{"text":"pair \\ud83d\\ude00 ok"}}',
    '{"id":"b","session_id":"p","seq":1,"ts":"2026-07-01T00:00:01Z","type":"assistant_message","data":{"text":"lone \\ud800 x"}}',
  ];
  const parentLog = parentLines.map((l) => `${l}\n`).join("");

  it("is refused by every fork, as pixir-log write refuses it in the pipeline, and nothing is written", () => {
    const ws = workspace({ p: parentLog });
    expect(cat(ws, "p").code).toBe(0);
    const before = listTree(ws);
    for (const args of [[], ["--dry-run"], ["--strategy", "share_v1"]]) {
      const d = expectJsonError(run("pixir", ["fork", "p", "--child-id", "c", "--json", ...args], { cwd: ws }), 1, "log_encode_failed");
      expect(d).toMatchObject({ reason: "invalid_unicode", type: "assistant_message", line: 2 });
    }
    const piped = sh("pixir-log cat p | pixir-fork --child-id c | pixir-log write --json", { cwd: ws });
    expect(piped.code).toBe(1);
    expect(JSON.parse(piped.stdout).ok).toBe(false);
    expect(piped.stderr).toContain("log_encode_failed");
    expect(listTree(ws)).toEqual(before);
    // Up to the Event before it, the fork goes through; the well-formed pair is copied as it is.
    expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--to-seq", "0", "--json"], { cwd: ws }));
    expect(readEvents(ws, "c")[1].data.text).toBe("pair \u{1f600} ok");
  });

  it("pixir-log materialize refuses a share child whose prefix holds one, and leaves it as it was", () => {
    const ws = workspace({ p: parentLog });
    const events = parentLines.map((l) => JSON.parse(l));
    writeRaw(ws, "s", `${JSON.stringify({ id: "h", session_id: "s", seq: 0, ts: "2026-07-02T00:00:00Z", ...shareHeader("p", 2, 1, prefixDigest(events)) })}\n`);
    const before = readLog(ws, "s");
    expect(cat(ws, "s").lines.map((e) => e.seq)).toEqual([0, 1, 2]);
    const d = expectJsonError(run("pixir-log", ["materialize", "s", "--json"], { cwd: ws }), 1, "log_encode_failed");
    expect(d).toMatchObject({ reason: "invalid_unicode", type: "assistant_message" });
    expect(readLog(ws, "s")).toBe(before);
  });
});

describe("43. cycle and depth", () => {
  it("share Logs that name each other: fork_cycle with the lineage walked", () => {
    const ws = workspace({
      a: [shareHeader("b", 0, 0, prefixDigest([]))],
      b: [shareHeader("a", 0, 0, prefixDigest([]))],
      self: [shareHeader("self", 0, 0, prefixDigest([]))],
    });
    const d = expectStreamJsonError(cat(ws, "a", ["--json"]), 1, "fork_cycle");
    expect(d).toMatchObject({ session_id: "a", next_actions: ["inspect the session_fork lines with pixir-log cat --raw"] });
    // The ids walked, in order (the repeated id may close the list).
    expect(d.lineage.slice(0, 2)).toEqual(["a", "b"]);
    expect(d.lineage.every((id: string) => id === "a" || id === "b")).toBe(true);
    const self = expectStreamJsonError(cat(ws, "self", ["--json"]), 1, "fork_cycle");
    expect(self.lineage[0]).toBe("self");
    expect(self.lineage.every((id: string) => id === "self")).toBe(true);
    expectJsonError(run("pixir", ["fork", "a", "--json"], { cwd: ws }), 1, "fork_cycle");
    expectJsonError(run("pixir-log", ["materialize", "b", "--json"], { cwd: ws }), 1, "fork_cycle");
    expect(leftovers(ws)).toEqual([]);
  });

  it("32 share hops resolve; the 33rd is fork_depth_exceeded", () => {
    const root: Ev[] = [user("one"), assistant("two"), ev("provider_usage")];
    const ws = workspace({ root });
    const rootEvents = readEvents(ws, "root");
    const digest = prefixDigest(rootEvents.slice(0, 2));
    // Every hop inherits the same two Events (seq 1..2 of its parent's History), so one digest fits all.
    writeRaw(ws, "h1", [shareHeader("root", 2, 1, digest)]);
    for (let i = 2; i <= 32; i++) writeRaw(ws, `h${i}`, [shareHeader(`h${i - 1}`, 2, 2, digest)]);
    const h32 = catOk(ws, "h32");
    expect(logical(h32).slice(1)).toEqual(logical(rootEvents.slice(0, 2)).map((e, k) => ({ ...e, seq: k + 1 })));
    expect(h32.every((e) => e.session_id === "h32")).toBe(true);

    // No writer makes a 33rd hop: every reader would refuse it. Nothing is left behind.
    const before = listTree(ws);
    const refused = { session_id: "deep", parent_session_id: "h32", max_depth: 32 };
    const share = ["--strategy", "share_v1", "--child-id", "deep", "--json"];
    expect(expectJsonError(run("pixir", ["fork", "h32", ...share], { cwd: ws }), 1, "fork_depth_exceeded")).toMatchObject(refused);
    expect(expectJsonError(run("pixir", ["fork", "h32", ...share, "--dry-run"], { cwd: ws }), 1, "fork_depth_exceeded")).toMatchObject(refused);
    expect(expectStreamJsonError(run("pixir-fork", ["--parent", "h32", ...share], { cwd: ws }), 1, "fork_depth_exceeded")).toMatchObject(refused);
    const piped = sh(`pixir-log cat h32 | pixir-fork --strategy share_v1 --child-id deep | pixir-log write --json`, { cwd: ws });
    expect(expectJsonError(piped, 1, "fork_depth_exceeded")).toMatchObject(refused);
    expect(listTree(ws)).toEqual(before);
    // A share fork of h31 is the 32nd hop: made, and readable.
    fork(ws, "h31", "deep", ["--strategy", "share_v1"]);
    expect(logical(catOk(ws, "deep")).slice(1)).toEqual(logical(h32).slice(1));
    expect(run("pixir-log", ["rm", "deep"], { cwd: ws }).code).toBe(0);

    // One more hop is too deep to read.
    writeRaw(ws, "h33", [shareHeader("h32", 2, 2, digest)]);
    const d = expectStreamJsonError(cat(ws, "h33", ["--json"]), 1, "fork_depth_exceeded");
    expect(d).toEqual({ session_id: "h33", max_depth: 32, next_actions: ["materialize an intermediate share child with pixir-log materialize"] });
    expectJsonError(run("pixir", ["fork", "h33", "--dry-run", "--json"], { cwd: ws }), 1, "fork_depth_exceeded");
    // The remedy works: materialize an intermediate hop, and the chain is short enough again.
    expectJsonOk(run("pixir-log", ["materialize", "h16", "--json"], { cwd: ws }));
    expect(logical(catOk(ws, "h33")).slice(1)).toEqual(logical(h32).slice(1));
    // A replay_v1 child of the deep chain is self-contained.
    fork(ws, "h32", "flat");
    expect(readEvents(ws, "flat")).toHaveLength(3);
  });

  it("a share header that is not the first line, or own seqs inside the prefix, are corrupt", () => {
    const digest = prefixDigest([]);
    const ws = workspace({
      p: P,
      late: [user("x"), { ...shareHeader("p", 0, 0, digest), seq: 1 }],
      seq1: [{ ...shareHeader("p", 0, 0, digest), seq: 1 }],
    });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    appendFileSync(logFile(ws, "s"), `${JSON.stringify({ id: "o", session_id: "s", seq: 2, ts: "2026-07-01T00:00:00Z", type: "user_message", data: {} })}\n`);
    const conflict = expectStreamJsonError(cat(ws, "s", ["--json"]), 1, "corrupt_log_line");
    expect(conflict).toMatchObject({ reason: "seq_conflicts_with_shared_prefix", line: 2, path: ".pixir/sessions/s.ndjson" });
    expect(expectStreamJsonError(cat(ws, "late", ["--json"]), 1, "corrupt_log_line")).toMatchObject({ reason: "misplaced_share_header", line: 2 });
    expect(expectStreamJsonError(cat(ws, "seq1", ["--json"]), 1, "corrupt_log_line")).toMatchObject({ reason: "misplaced_share_header", line: 1 });
  });

  it("materialize and rm refuse a hostile id without echoing it or touching anything", () => {
    const ws = workspace({ p: P });
    const before = listTree(ws);
    for (const args of [["materialize", HOSTILE], ["rm", HOSTILE], ["rm", HOSTILE, "--materialize-children"], ["materialize", HOSTILE, "--dry-run"]]) {
      const r = run("pixir-log", [...args, "--json"], { cwd: ws });
      expect(expectJsonError(r, 2, "invalid_args")).toMatchObject({ field: "session_id", reason: "invalid_start" });
      expectNoEcho(r);
      const t = run("pixir-log", args, { cwd: ws });
      expectTextError(t, 2, "invalid_args");
      expectNoEcho(t);
    }
    expect(listTree(ws)).toEqual(before);
  });

  it("a hostile parent id in a share header is invalid_args and is not echoed", () => {
    const ws = workspace({ s: [shareHeader("../../../outside/PWN", 0, 0, prefixDigest([]))] });
    const r = cat(ws, "s", ["--json"]);
    expect(expectStreamJsonError(r, 2, "invalid_args").field).toBe("parent_session_id");
    expect(r.stderr).not.toContain("outside");
    expect(r.stderr).not.toContain("PWN");
  });
});

describe("44. materialize", () => {
  it("rewrites s as replay_v1: cat is identical except three header fields, --raw holds the prefix", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    appendPinned(ws, "s", "child turn", "2026-07-01T00:00:00Z");
    fork(ws, "s", "g", ["--strategy", "share_v1"]);
    const gBefore = catOk(ws, "g");
    const before = catOk(ws, "s");

    const dry = expectJsonOk(run("pixir-log", ["materialize", "s", "--dry-run", "--json"], { cwd: ws }));
    expect(dry).toMatchObject({ recorded: false, dry_run: true, materialized: true, inherited_event_count: 3 });
    expect(readEvents(ws, "s")).toHaveLength(2);

    const r = expectJsonOk(run("pixir-log", ["materialize", "s", "--json"], { cwd: ws }));
    expect(r).toMatchObject({
      ok: true,
      recorded: true,
      dry_run: false,
      session_id: "s",
      log_path: logFile(ws, "s"),
      materialized: true,
      inherited_event_count: 3,
      event_count: 5,
      resources_copied: 0,
    });
    const after = catOk(ws, "s");
    expect(after[0].data).toEqual({ ...before[0].data, strategy: "replay_v1", limitations: REPLAY_LIMITATIONS, materialized_from: "share_v1" });
    expect({ ...after[0], data: null }).toEqual({ ...before[0], data: null });
    expect(after.slice(1)).toEqual(before.slice(1));
    expect(cat(ws, "s", ["--raw"]).lines).toEqual(after);
    // The share grandchild still verifies.
    expect(catOk(ws, "g")).toEqual(gBefore);
    // Now s is self-contained: p can go.
    rmSync(logFile(ws, "p"));
    expect(catOk(ws, "s")).toEqual(after);
    expect(leftovers(ws)).toEqual([]);
  });

  it("keeps the own lines as stored, takes the lease, and refuses a leased child", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    // An own line in Pixir's sorted key order.
    const own = '{"data":{"text":"pixir wrote me"},"id":"own","seq":4,"session_id":"s","ts":"2026-07-01T00:00:00.123456Z","type":"user_message"}\n';
    appendFileSync(logFile(ws, "s"), own);
    const lease = path.join(ws, ".pixir/session_leases/s.json");
    mkdirSync(path.dirname(lease), { recursive: true });
    const now = Date.now();
    writeFileSync(lease, JSON.stringify({ version: 1, purpose: "session_writer", session_id: "s", workspace: ws, holder_id: "wrl_0123456789abcdef", os_pid: String(process.pid), heartbeat_at_ms: now, stale_after_ms: 60000 }));
    const bytes = readLog(ws, "s");
    expectJsonError(run("pixir-log", ["materialize", "s", "--json"], { cwd: ws }), 5, "session_writer_active");
    expect(readLog(ws, "s")).toBe(bytes);
    // A dry run needs no lease.
    expect(expectJsonOk(run("pixir-log", ["materialize", "s", "--dry-run", "--json"], { cwd: ws })).materialized).toBe(true);
    // The holder may materialize through PIXIR_WRITER_LEASE.
    const r = run("pixir-log", ["materialize", "s", "--json"], { cwd: ws, env: { PIXIR_WRITER_LEASE: "wrl_0123456789abcdef" } });
    expect(expectJsonOk(r).inherited_event_count).toBe(3);
    expect(readLog(ws, "s").endsWith(own)).toBe(true);
    expect(readEvents(ws, "s")).toHaveLength(5);
  });

  it("rolls back a crashed append's journal first, so the replacement is never cut back to the old length", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    appendPinned(ws, "s", "child turn", "2026-07-01T00:00:00Z");
    const view = catOk(ws, "s");
    // An append killed mid-line: its journal names the length before it, and a torn line follows.
    const file = logFile(ws, "s");
    const size = readLog(ws, "s").length;
    writeFileSync(`${file}.append-journal`, JSON.stringify({ version: 1, original_length: size, holder_id: "wrl_0000000000000000", started_at: "2026-01-01T00:00:00Z" }));
    appendFileSync(file, '{"id":"torn","session_id":"s","seq":5,"type":"user_mess');

    expectJsonOk(run("pixir-log", ["materialize", "s", "--json"], { cwd: ws }));
    const after = catOk(ws, "s");
    expect(after.slice(1)).toEqual(view.slice(1));
    expect(cat(ws, "s", ["--raw"]).lines).toEqual(after);
    expect(leftovers(ws)).toEqual([]);
    // The next writer finds nothing to roll back: the own Event survives.
    expectJsonOk(run("pixir-log", ["repair", "s", "--json"], { cwd: ws }));
    expect(catOk(ws, "s")).toEqual(after);
  });

  it("materializing a root or a replay_v1 child is a no-op that exits 0", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "r");
    for (const id of ["p", "r"]) {
      const bytes = readLog(ws, id);
      const r = expectJsonOk(run("pixir-log", ["materialize", id, "--json"], { cwd: ws }));
      expect(r).toMatchObject({ materialized: false, reason: "not_a_share_child", session_id: id });
      expect(readLog(ws, id)).toBe(bytes);
    }
    expect(run("pixir-log", ["materialize", "p"], { cwd: ws })).toMatchObject({ code: 0, stdout: "Nothing to materialize: p is not a share_v1 child.\n", stderr: "" });
    expectJsonError(run("pixir-log", ["materialize", "nope", "--json"], { cwd: ws }), 2, "not_found");
  });

  it("text output names the parent", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    expect(run("pixir-log", ["materialize", "s"], { cwd: ws })).toMatchObject({ code: 0, stdout: "Materialized s: 3 inherited events copied from p.\n", stderr: "" });
  });

  it("copies resources, looked up through the share lineage", () => {
    const payload = Buffer.from("payload bytes");
    const sha = sha256(payload);
    const ws = workspace({ p: [{ type: "user_message", data: { text: "see", resources: [{ resource_id: "r1", content_sha256: sha, extension: "txt" }] } }] });
    const dir = path.join(ws, ".pixir/sessions/p/resources/r1");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${sha}.txt`), payload);
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    fork(ws, "s", "g", ["--strategy", "share_v1"]);
    // g's parent s has no payload; the grandparent p does.
    const r = expectJsonOk(run("pixir-log", ["materialize", "g", "--json"], { cwd: ws }));
    expect(r.resources_copied).toBe(1);
    expect(readFileSync(path.join(ws, `.pixir/sessions/g/resources/r1/${sha}.txt`)).equals(payload)).toBe(true);
    // A replay_v1 fork of a share child finds the payload the same way.
    expect(fork(ws, "s", "r").resource_count).toBe(1);
    expect(existsSync(path.join(ws, `.pixir/sessions/r/resources/r1/${sha}.txt`))).toBe(true);
  });
});

describe("45. deleting a parent that share children depend on", () => {
  it("rm refuses while share children exist, and changes nothing", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    fork(ws, "p", "s0", ["--strategy", "share_v1"]);
    const before = listTree(ws);
    const bytes = readLog(ws, "p");
    const d = expectJsonError(run("pixir-log", ["rm", "p", "--json"], { cwd: ws }), 1, "share_children_exist");
    expect(d).toEqual({ session_id: "p", children: ["s", "s0"], next_actions: ["materialize each child with pixir-log materialize", "or rerun with --materialize-children"] });
    expectTextError(run("pixir-log", ["rm", "p"], { cwd: ws }), 1, "share_children_exist");
    expect(listTree(ws)).toEqual(before);
    expect(readLog(ws, "p")).toBe(bytes);
  });

  it("--materialize-children materializes each child, then removes the Log and its resources folder", () => {
    const ws = workspace({ p: P });
    mkdirSync(path.join(ws, ".pixir/sessions/p/resources/r1"), { recursive: true });
    writeFileSync(path.join(ws, ".pixir/sessions/p/resources/r1/x.txt"), "x");
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    const view = catOk(ws, "s");

    const dry = expectJsonOk(run("pixir-log", ["rm", "p", "--materialize-children", "--dry-run", "--json"], { cwd: ws }));
    expect(dry).toMatchObject({ recorded: false, dry_run: true, removed: false, materialized_children: ["s"] });
    expect(existsSync(logFile(ws, "p"))).toBe(true);
    expect(readEvents(ws, "s")).toHaveLength(1);

    const r = expectJsonOk(run("pixir-log", ["rm", "p", "--materialize-children", "--json"], { cwd: ws }));
    expect(r).toMatchObject({ ok: true, recorded: true, session_id: "p", removed: true, materialized_children: ["s"] });
    expect(existsSync(logFile(ws, "p"))).toBe(false);
    expect(existsSync(path.join(ws, ".pixir/sessions/p"))).toBe(false);
    const after = catOk(ws, "s");
    expect(after.slice(1)).toEqual(view.slice(1));
    expect(after[0].data).toMatchObject({ strategy: "replay_v1", materialized_from: "share_v1" });
    expect(leftovers(ws)).toEqual([]);
  });

  it("a replay_v1 child never blocks rm; text output", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "r");
    const r = run("pixir-log", ["rm", "p"], { cwd: ws });
    expect(r).toMatchObject({ code: 0, stdout: "Removed p.\n", stderr: "" });
    expect(logIds(ws)).toEqual(["r"]);
    expect(catOk(ws, "r")).toHaveLength(4);
    expectJsonError(run("pixir-log", ["rm", "p", "--json"], { cwd: ws }), 2, "not_found");
  });

  it("a child that cannot be materialized stops rm before anything is deleted", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    fork(ws, "p", "t", ["--strategy", "share_v1"]);
    // t is leased by a live writer, so its materialization fails.
    const lease = path.join(ws, ".pixir/session_leases/t.json");
    mkdirSync(path.dirname(lease), { recursive: true });
    const now = Date.now();
    writeFileSync(lease, JSON.stringify({ version: 1, purpose: "session_writer", session_id: "t", workspace: ws, holder_id: "wrl_0123456789abcdef", os_pid: String(process.pid), heartbeat_at_ms: now, stale_after_ms: 60000 }));
    const pBytes = readLog(ws, "p");
    const tBytes = readLog(ws, "t");
    expectJsonError(run("pixir-log", ["rm", "p", "--materialize-children", "--json"], { cwd: ws }), 5, "session_writer_active");
    expect(readLog(ws, "p")).toBe(pBytes);
    expect(readLog(ws, "t")).toBe(tBytes);
    expect(catOk(ws, "s")).toHaveLength(4);
    expect(catOk(ws, "t")).toHaveLength(4);
  });

  it("a resources folder that is a symlink is refused before anything is removed", () => {
    const ws = workspace({ p: P });
    const outside = tempDir("pixir-outside-");
    writeFileSync(path.join(outside, "keep.txt"), "outside");
    symlinkSync(outside, path.join(ws, ".pixir/sessions/p"));
    const d = expectJsonError(run("pixir-log", ["rm", "p", "--json"], { cwd: ws }), 1, "unsafe_state_path");
    expect(d).toMatchObject({ reason: "symlink_component", component: ".pixir/sessions/p" });
    expect(existsSync(logFile(ws, "p"))).toBe(true);
    expect(readFileSync(path.join(outside, "keep.txt"), "utf8")).toBe("outside");
  });

  it("text output lists the materialized children first", () => {
    const ws = workspace({ p: P });
    fork(ws, "p", "s", ["--strategy", "share_v1"]);
    const r = run("pixir-log", ["rm", "p", "--materialize-children"], { cwd: ws });
    expect(r).toMatchObject({ code: 0, stdout: "Materialized s.\nRemoved p.\n", stderr: "" });
  });
});
