// acceptance.md §D (cases 34–38), envelope-and-log.md §11: fork streams across processes verify
// themselves, so a cut, forged or mixed-up stream never becomes a child Log.
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, readEvents, readLog, sh, start, tempDir, toolResult, user, workspace, type Ev } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import {
  derivedUlid,
  expectJsonError,
  expectJsonOk,
  expectStreamJsonError,
  expectTextError,
  INTEGRITY_NEXT_ACTIONS,
  leftovers,
  logIds,
  logical,
  prefixDigest,
} from "../support/fork.js";

const P: Ev[] = [user("one"), assistant("two"), call("c1", "read", "src/a.ts"), toolResult("c1"), ev("provider_usage", { tokens: 3 }), user("three")];

/** The fork stream pixir-fork prints for `args`, as lines. */
function forkStream(ws: string, args: string[]): string[] {
  const r = run("pixir-fork", args, { cwd: ws });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.stdout.split("\n").filter((l) => l !== "");
}

const text = (lines: string[]) => lines.map((l) => `${l}\n`).join("");
const edit = (line: string, f: (e: any) => void) => {
  const e = JSON.parse(line);
  f(e);
  return JSON.stringify(e);
};

/** Nothing of `child` exists: no Log, no temp file, no journal, no lease. */
function expectNothingOf(ws: string, child: string, before: string[]): void {
  expect(listTree(ws)).toEqual(before);
  expect(logIds(ws)).not.toContain(child);
  expect(leftovers(ws)).toEqual([]);
}

describe("34. the pipeline equals the wrapper", () => {
  const compare = (a: any[], b: any[]) => {
    expect(a.map((e) => [e.type, e.seq])).toEqual(b.map((e) => [e.type, e.seq]));
    // The inherited Events have equal ts and data; the headers differ only in ts, id and workspaces.
    const n = a[0].data.replay_event_count;
    expect(logical(a.slice(1, n + 1))).toEqual(logical(b.slice(1, n + 1)));
    const strip = (d: any) => ({ ...d, parent_workspace: null, child_workspace: null });
    expect(strip(a[0].data)).toEqual(strip(b[0].data));
  };

  it("replay_v1: cat | pixir-fork | write and pixir fork make the same child", () => {
    const ws1 = workspace({ P });
    const ws2 = workspace({ P });
    const piped = expectJsonOk(sh("pixir-log cat P | pixir-fork --to-seq 3 --child-id c | pixir-log write --json", { cwd: ws1 }));
    const wrapped = expectJsonOk(run("pixir", ["fork", "P", "--to-seq", "3", "--child-id", "c", "--json"], { cwd: ws2 }));
    const a = readEvents(ws1, "c");
    const b = readEvents(ws2, "c");
    compare(a, b);
    expect(a[0].data.prefix_digest).toBe(prefixDigest(readEvents(ws1, "P").slice(0, 4)));
    expect(a[0].data.open_tool_calls).toEqual([]);
    const paths = (p: any) => ({ ...p, workspace: null, parent_log_path: null, child_log_path: null });
    expect(paths(piped)).toEqual(paths(wrapped));
    expect(piped).toMatchObject({ recorded: true, dry_run: false, event_count: 4, to_seq: 3, summarize: false, workspace: ws1 });
    // Each inherited id is derived from its own header (fork.md §4.2).
    for (const child of [a, b]) for (const e of child.slice(1)) expect(e.id).toBe(derivedUlid(`fork:${child[0].id}:${e.seq}`, e.ts));
  });

  it("the three entry points agree: --parent, stdin and the wrapper, for both strategies", () => {
    const ws = workspace({ P });
    for (const strategy of ["replay_v1", "share_v1"]) {
      expectJsonOk(sh(`pixir-fork --parent P --strategy ${strategy} --child-id ${strategy}-a | pixir-log write --json`, { cwd: ws }));
      expectJsonOk(sh(`pixir-log cat P | pixir-fork --strategy ${strategy} --child-id ${strategy}-b | pixir-log write --json`, { cwd: ws }));
      expectJsonOk(run("pixir", ["fork", "P", "--strategy", strategy, "--child-id", `${strategy}-c`, "--json"], { cwd: ws }));
      const views = ["a", "b", "c"].map((x) => run("pixir-log", ["cat", `${strategy}-${x}`], { cwd: ws }).lines);
      expect(logical(views[1]!).slice(1)).toEqual(logical(views[0]!).slice(1));
      expect(logical(views[2]!).slice(1)).toEqual(logical(views[0]!).slice(1));
      expect(views.map((v) => v[0].data.prefix_digest)).toEqual(Array(3).fill(views[0]![0].data.prefix_digest));
      const physical = ["a", "b", "c"].map((x) => readEvents(ws, `${strategy}-${x}`).length);
      expect(physical).toEqual(Array(3).fill(strategy === "share_v1" ? 1 : 6));
    }
  });

  it("with pixir-summarize and --summarize: the same summary too", () => {
    const ws1 = workspace({ P });
    const ws2 = workspace({ P });
    const piped = expectJsonOk(sh("pixir-log cat P | pixir-fork --to-seq 1 --child-id c | pixir-summarize | pixir-log write --json", { cwd: ws1 }));
    const wrapped = expectJsonOk(run("pixir", ["fork", "P", "--to-seq", "1", "--summarize", "--child-id", "c", "--json"], { cwd: ws2 }));
    for (const plan of [piped, wrapped]) {
      expect(plan).toMatchObject({ recorded: true, summarize: true, would_record_branch_summary: true, branch_summary_strategy: "deterministic_operational_summary_v1" });
    }
    const a = readEvents(ws1, "c");
    const b = readEvents(ws2, "c");
    expect(a.map((e) => [e.type, e.seq])).toEqual([
      ["session_fork", 0],
      ["user_message", 1],
      ["assistant_message", 2],
      ["branch_summary", 3],
    ]);
    compare(a, b);
    expect(a[3].data).toEqual(b[3].data);
    expect(a[3].data).toMatchObject({ parent_session_id: "P", forked_to_seq: 1, source_event_count: 2 });
  });
});

describe("35. a short stream is refused", () => {
  it("pixir-fork --parent P | head -n 2 | pixir-log write: count_mismatch, nothing behind", () => {
    const ws = workspace({ P: [user("one"), assistant("two"), user("three")] });
    const before = listTree(ws);
    const r = sh("pixir-fork --parent P --child-id c | head -n 2 | pixir-log write --json", { cwd: ws });
    const d = expectJsonError(r, 1, "stream_integrity_failed");
    expect(d).toMatchObject({ reason: "count_mismatch", expected: 3, observed: 1, next_actions: INTEGRITY_NEXT_ACTIONS });
    expectNothingOf(ws, "c", before);
  });

  it("head in the middle of the whole pipeline (cat | fork | head | write), text mode", () => {
    const ws = workspace({ P });
    const before = listTree(ws);
    for (const n of [1, 2, 4]) {
      const r = sh(`pixir-log cat P | pixir-fork --child-id c | head -n ${n} | pixir-log write`, { cwd: ws });
      expectTextError(r, 1, "stream_integrity_failed");
      expectNothingOf(ws, "c", before);
    }
    // The whole stream goes through, so the cut was the only problem.
    expect(expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id c | pixir-log write --json", { cwd: ws })).event_count).toBe(5);
  });

  it("a stream cut to nothing is an empty stream; a dry-run write of a short stream fails the same way", () => {
    const ws = workspace({ P });
    const before = listTree(ws);
    expect(expectJsonError(sh("pixir-fork --parent P --child-id c | head -n 0 | pixir-log write --json", { cwd: ws }), 1, "stream_integrity_failed").reason).toBe("empty_stream");
    expect(expectJsonError(sh("pixir-fork --parent P --child-id c | head -n 3 | pixir-log write --dry-run --json", { cwd: ws }), 1, "stream_integrity_failed").reason).toBe("count_mismatch");
    expectNothingOf(ws, "c", before);
  });
});

describe("36. bad streams write nothing", () => {
  const world = () => {
    const ws = workspace({ P });
    return { ws, lines: forkStream(ws, ["--parent", "P", "--child-id", "c"]), before: listTree(ws) };
  };

  it("two session_ids: session_id_mismatch", () => {
    const { ws, lines, before } = world();
    const input = text([lines[0]!, lines[1]!, edit(lines[2]!, (e) => (e.session_id = "other")), ...lines.slice(3)]);
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input }), 1, "stream_integrity_failed");
    expect(d).toMatchObject({ reason: "session_id_mismatch", expected: "c", observed: "other", line: 3 });
    expectNothingOf(ws, "c", before);
  });

  it("a target that is not the stream's session: session_id_mismatch", () => {
    const { ws, lines, before } = world();
    const d = expectJsonError(run("pixir-log", ["write", "d", "--json"], { cwd: ws, input: text(lines) }), 1, "stream_integrity_failed");
    expect(d.reason).toBe("session_id_mismatch");
    expectNothingOf(ws, "d", before);
  });

  it("a seq gap: seq_gap", () => {
    const { ws, lines, before } = world();
    for (const input of [text([lines[0]!, ...lines.slice(2)]), text([...lines.slice(0, 3), edit(lines[3]!, (e) => (e.seq = 7)), ...lines.slice(4)])]) {
      const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input }), 1, "stream_integrity_failed");
      expect(d.reason).toBe("seq_gap");
    }
    // A duplicated line is a gap too.
    const dup = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input: text([lines[0]!, lines[1]!, lines[1]!, ...lines.slice(2)]) }), 1, "stream_integrity_failed");
    expect(dup.reason).toBe("seq_gap");
    expectNothingOf(ws, "c", before);
  });

  it("a fork header aimed at an existing Log: fork_header_on_existing_log, the Log unchanged", () => {
    const { ws, lines } = world();
    const existing = run("pixir-log", ["append", "c"], { cwd: ws, input: '{"type":"user_message","data":{"text":"mine"}}\n' });
    expect(existing.code).toBe(0);
    const bytes = readLog(ws, "c");
    const before = listTree(ws);
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input: text(lines) }), 1, "stream_integrity_failed");
    expect(d.reason).toBe("fork_header_on_existing_log");
    // A session_fork in the middle of a plain stream to the existing Log is refused the same way.
    const own = JSON.stringify({ id: "own-1", session_id: "c", seq: 1, ts: "2026-06-30T00:00:09Z", type: "user_message", data: { text: "x" } });
    const header = edit(lines[0]!, (e) => (e.seq = 2));
    const plain = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input: text([own, header]) }), 1, "stream_integrity_failed");
    expect(plain.reason).toBe("fork_header_on_existing_log");
    expect(readLog(ws, "c")).toBe(bytes);
    expect(listTree(ws)).toEqual(before);
    expect(leftovers(ws)).toEqual([]);
  });

  it("a second fork header, among a fork stream's own Events or in an append, is refused by every writer", () => {
    for (const strategy of ["replay_v1", "share_v1"]) {
      const ws = workspace({ P });
      const lines = forkStream(ws, ["--parent", "P", "--child-id", "c", "--strategy", strategy]);
      const n = JSON.parse(lines[0]!).data.replay_event_count;
      // The header again, as the child's first own Event (a share_v1 one would make the child unreadable).
      const again = edit(lines[0]!, (e) => ((e.seq = n + 1), (e.id = "again")));
      const before = listTree(ws);
      const input = text([...lines, again]);
      const written = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input }), 1, "stream_integrity_failed");
      const summarized = expectStreamJsonError(run("pixir-summarize", ["--json"], { cwd: ws, input }), 1, "stream_integrity_failed");
      for (const d of [written, summarized]) {
        expect(d).toMatchObject({ reason: "fork_header_on_existing_log", observed: "session_fork", line: lines.length + 1 });
      }
      expectNothingOf(ws, "c", before);
    }
    // pixir-log append never writes a fork header: not to an existing Log, not as a new Log's first line.
    const ws = workspace({ P });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c", "--strategy", "share_v1"]);
    const bytes = readLog(ws, "P");
    const before = listTree(ws);
    const bare = JSON.stringify({ type: "session_fork", data: JSON.parse(lines[0]!).data });
    for (const [id, input] of [["P", bare], ["c", bare], ["c", lines[0]!], ["P", text([JSON.stringify({ type: "user_message", data: {} }), bare])]] as const) {
      const d = expectJsonError(run("pixir-log", ["append", id, "--json"], { cwd: ws, input: `${input}\n` }), 1, "stream_integrity_failed");
      expect(d).toMatchObject({ reason: "fork_header_on_existing_log", observed: "session_fork" });
    }
    expect(readLog(ws, "P")).toBe(bytes);
    expectNothingOf(ws, "c", before);
  });

  it("an own Event of a fork stream repeating the header's or another own Event's id, or with a ts not in ISO-8601 UTC, is refused by write", () => {
    const ws = workspace({ P });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const n = JSON.parse(lines[0]!).data.replay_event_count;
    const ids = lines.map((l) => JSON.parse(l).id);
    const own = (more: object) => JSON.stringify({ id: "own", session_id: "c", seq: n + 1, ts: "2026-06-30T00:00:09Z", type: "user_message", data: {}, ...more });
    /** The same Event with its keys in another order: the full decode instead of the byte check. */
    const reordered = (line: string) => {
      const { data, ...rest } = JSON.parse(line);
      return JSON.stringify({ data, ...rest });
    };
    const before = listTree(ws);
    const cases: Array<[string[], number, object]> = [
      [[...lines, own({ id: ids[0] })], n + 2, { reason: "duplicate_id" }],
      [[...lines, reordered(own({ id: ids[0] }))], n + 2, { reason: "duplicate_id" }],
      [[...lines, own({}), own({ seq: n + 2 })], n + 3, { reason: "duplicate_id" }],
      [[...lines, own({}), reordered(own({ seq: n + 2 }))], n + 3, { reason: "duplicate_id" }],
      [[...lines, own({ ts: "yesterday" })], n + 2, { reason: "invalid_field", field: "ts", expected: "ISO-8601 UTC" }],
      [[...lines, reordered(own({ ts: "2026-06-30T00:00:09" }))], n + 2, { reason: "invalid_field", field: "ts" }],
    ];
    for (const [stream, line, want] of cases) {
      const r = run("pixir-log", ["write", "--json"], { cwd: ws, input: text(stream) });
      expect(r.code).toBe(1);
      expect(r.json.error.details).toMatchObject({ ...want, line });
    }
    expectNothingOf(ws, "c", before);
    // The stream as pixir-fork printed it, with a good own Event, is written.
    expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: text([...lines, own({})]) }));
  });

  it("inherited Events keep the parent's ts verbatim, ISO-8601 UTC or not", () => {
    const ws = workspace({ P: [{ ...user("one"), ts: "2026-06-30 00:00:00" }, assistant("two")] });
    expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id c | pixir-log write --json", { cwd: ws }));
    expect(readEvents(ws, "c")[1].ts).toBe("2026-06-30 00:00:00");
  });

  it("empty stdin: empty_stream", () => {
    const ws = workspace({ P });
    const before = listTree(ws);
    const d = expectJsonError(run("pixir-log", ["write", "c", "--json"], { cwd: ws, input: "" }), 1, "stream_integrity_failed");
    expect(d).toMatchObject({ reason: "empty_stream", next_actions: INTEGRITY_NEXT_ACTIONS });
    expectNothingOf(ws, "c", before);
  });

  it("a non-replay type inside the prefix: non_replay_type_in_prefix", () => {
    const { ws, lines, before } = world();
    const input = text([lines[0]!, edit(lines[1]!, (e) => (e.type = "provider_usage")), ...lines.slice(2)]);
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input }), 1, "stream_integrity_failed");
    expect(d).toMatchObject({ reason: "non_replay_type_in_prefix", line: 2 });
    expectNothingOf(ws, "c", before);
  });

  it("a header that is not at seq 0 starts no fork: seq_conflict", () => {
    const { ws, lines, before } = world();
    const input = text(lines.map((l) => edit(l, (e) => (e.seq += 1))));
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input }), 1, "stream_integrity_failed");
    expect(d.reason).toBe("seq_conflict");
    expectNothingOf(ws, "c", before);
  });

  it("--dry-run of a valid fork stream prints the plan (recorded false) and creates nothing", () => {
    const { ws, lines, before } = world();
    const plan = expectJsonOk(run("pixir-log", ["write", "--dry-run", "--json"], { cwd: ws, input: text(lines) }));
    expect(plan).toMatchObject({ ok: true, recorded: false, dry_run: true, child_session_id: "c", parent_session_id: "P", event_count: 5 });
    const t = run("pixir-log", ["write", "--dry-run"], { cwd: ws, input: text(lines) });
    expect(t).toMatchObject({ code: 0, stdout: "Fork plan for P: would create child c with 5 replayed events through seq 5.\n", stderr: "" });
    expectNothingOf(ws, "c", before);
    // And the real write of the same stream records exactly that plan.
    const real = expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: text(lines) }));
    expect({ ...real, recorded: false, dry_run: true }).toEqual(plan);
  });

  it("a hostile id inside a fork stream is invalid_args and is not echoed", () => {
    const { ws, lines, before } = world();
    const hostile = "../../../outside/PWN;x";
    for (const input of [
      text(lines.map((l) => edit(l, (e) => (e.session_id = hostile)))),
      text([edit(lines[0]!, (e) => (e.data.parent_session_id = hostile)), ...lines.slice(1)]),
      text([edit(lines[0]!, (e) => (e.data.fork_root_session_id = hostile)), ...lines.slice(1)]),
    ]) {
      const r = run("pixir-log", ["write", "--json"], { cwd: ws, input });
      expectJsonError(r, 2, "invalid_args");
      expect(r.stdout).not.toContain("outside");
      expect(r.stdout).not.toContain("PWN");
    }
    expect(listTree(ws)).toEqual(before);
  });
});

describe("37. pixir-summarize withholds the last line", () => {
  it("a stream short of one Event: exit 1, stdout is the header and first Event only, and write fails too", () => {
    const ws = workspace({ P: [user("one"), assistant("two"), user("three")] });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const short = text(lines.slice(0, 3));
    const r = run("pixir-summarize", ["--json"], { cwd: ws, input: short });
    expect(r.code).toBe(1);
    expect(r.errJson.error).toMatchObject({ kind: "stream_integrity_failed", details: { reason: "count_mismatch" } });
    expect(r.stdout).toBe(text(lines.slice(0, 2)));
    expect(r.stdout).not.toContain("branch_summary");
    const before = listTree(ws);
    const piped = sh("pixir-fork --parent P --child-id c | head -n 3 | pixir-summarize | pixir-log write --json", { cwd: ws });
    expect(piped.code).toBe(1);
    expect(piped.json.error.kind).toBe("stream_integrity_failed");
    expectNothingOf(ws, "c", before);
  });
});

describe("38. tampering is detected", () => {
  it("one inherited Event's data changed with jq while the parent exists: fork_prefix_mismatch, nothing written", () => {
    const ws = workspace({ P });
    const before = listTree(ws);
    const r = sh(`pixir-fork --parent P --child-id c | jq -c 'if .seq == 2 then .data.text = "forged" else . end' | pixir-log write --json`, { cwd: ws });
    const d = expectJsonError(r, 1, "fork_prefix_mismatch");
    expect(d).toMatchObject({ session_id: "c", parent_session_id: "P", expected_count: 5, actual_count: 5 });
    expect(d.expected_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(d.actual_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(d.expected_digest).not.toBe(d.actual_digest);
    expect(d.next_actions).toEqual(["restore the parent log to the state it had when the child was forked", "or discard this child"]);
    expectNothingOf(ws, "c", before);
  });

  it("a consistent forgery (digest recomputed) is caught by the parent check", () => {
    const ws = workspace({ P });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const body = lines.slice(1).map((l) => edit(l, (e) => e.seq === 1 && (e.data.text = "forged")));
    const header = edit(lines[0]!, (e) => (e.data.prefix_digest = prefixDigest(body.map((l) => JSON.parse(l)))));
    const before = listTree(ws);
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input: text([header, ...body]) }), 1, "fork_prefix_mismatch");
    expect(d).toMatchObject({ session_id: "c", parent_session_id: "P", expected_count: 5, actual_count: 5 });
    expect(d.expected_digest).toBe(JSON.parse(header).data.prefix_digest);
    expect(d.actual_digest).toBe(JSON.parse(lines[0]!).data.prefix_digest);
    expectNothingOf(ws, "c", before);
  });

  it("a replay_v1 stream may be written where its parent does not exist", () => {
    const ws = workspace({ P });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const elsewhere = tempDir();
    const plan = expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: elsewhere, input: text(lines) }));
    expect(plan).toMatchObject({ recorded: true, child_session_id: "c", event_count: 5, workspace: elsewhere });
    expect(readLog(elsewhere, "c")).toBe(text(lines));
  });
});

describe("pixir-fork reading the parent from stdin (fork.md §3.1 step 4)", () => {
  it("an empty stream, two session ids, or seqs out of order are refused on stderr", () => {
    const ws = workspace({ P, Q: [user("q")] });
    const cases: Array<[string, string]> = [
      ["", "empty_stream"],
      [readLog(ws, "P") + readLog(ws, "Q"), "session_id_mismatch"],
      [readLog(ws, "P").split("\n").reverse().join("\n"), "seq_out_of_order"],
    ];
    for (const [input, reason] of cases) {
      for (const json of [true, false]) {
        const r = run("pixir-fork", json ? ["--json"] : [], { cwd: ws, input });
        if (json) expect(expectStreamJsonError(r, 1, "stream_integrity_failed").reason).toBe(reason);
        else expectTextError(r, 1, "stream_integrity_failed");
      }
    }
    // `cat --raw` of a Log written out of order is not History order; plain `cat` is.
    const ws2 = workspace({ R: [{ ...user("second"), seq: 1 }, { ...user("first"), seq: 0 }] });
    expect(expectStreamJsonError(sh("pixir-log cat R --raw | pixir-fork --json", { cwd: ws2 }), 1, "stream_integrity_failed").reason).toBe("seq_out_of_order");
    const ok = sh("pixir-log cat R | pixir-fork --child-id c | pixir-log write --json", { cwd: ws2 });
    expect(expectJsonOk(ok).event_count).toBe(2);
    expect(readEvents(ws2, "c").map((e) => e.data.text ?? null)).toEqual([null, "first", "second"]);
  });

  it("spools a piped parent to a temp file while it reads, and removes it at the end", async () => {
    const ws = workspace({ P });
    const tmp = tempDir("pixir-spool-");
    const child = start("pixir-fork", ["--child-id", "c"], { cwd: ws, env: { TMPDIR: tmp } });
    const lines = readLog(ws, "P").split("\n");
    child.child.stdin.write(`${lines[0]}\n`);
    // The spool exists while the input is still open (the header needs the count first).
    for (let i = 0; i < 200 && readdirSync(tmp).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(readdirSync(tmp)).toHaveLength(1);
    child.child.stdin.end(`${lines.slice(1).join("\n")}`);
    const r = await child.done;
    expect(r.code).toBe(0);
    expect(r.lines.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("removes its spool when interrupted while reading (SIGTERM, SIGINT, or SIGHUP as a closed terminal sends)", async () => {
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
      const ws = workspace({ P });
      const tmp = tempDir("pixir-spool-");
      const child = start("pixir-fork", ["--json"], { cwd: ws, env: { TMPDIR: tmp } });
      child.child.stdin.write(readLog(ws, "P"));
      for (let i = 0; i < 200 && readdirSync(tmp).length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(readdirSync(tmp)).toHaveLength(1);
      child.child.kill(signal);
      const r = await child.done;
      expect(r.code, signal).toBe(130);
      expect(r.stdout).toBe("");
      expect(r.errJson.error).toMatchObject({ kind: "interrupted", details: { signal } });
      expect(readdirSync(tmp)).toEqual([]);
    }
  });

  it("removes its temp spool file on success, on failure and when stdout closes early", () => {
    const ws = workspace({ P });
    const tmp = tempDir("pixir-spool-");
    const env = { TMPDIR: tmp };
    const spooled = () => readdirSync(tmp);
    // A pipe is not seekable, so the parent is spooled.
    const ok = sh("pixir-log cat P | pixir-fork --child-id c | pixir-log write --json", { cwd: ws, env });
    expect(expectJsonOk(ok).event_count).toBe(5);
    expect(spooled()).toEqual([]);

    const bad = sh(`{ pixir-log cat P; echo '{"id":"z","session_id":"Q","seq":9,"ts":"2026-06-30T00:00:09Z","type":"user_message","data":{}}'; } | pixir-fork --json`, { cwd: ws, env });
    expect(expectStreamJsonError(bad, 1, "stream_integrity_failed").reason).toBe("session_id_mismatch");
    expect(spooled()).toEqual([]);

    const big: Ev[] = Array.from({ length: 3000 }, (_, i) => user(`line ${i} ${"x".repeat(200)}`));
    const ws2 = workspace({ big });
    const early = sh("pixir-log cat big | pixir-fork | head -n 1", { cwd: ws2, env });
    expect(early.code).toBe(0);
    expect(early.lines).toHaveLength(1);
    expect(early.lines[0].type).toBe("session_fork");
    expect(spooled()).toEqual([]);

    const dry = sh("pixir-log cat P | pixir-fork --dry-run --json", { cwd: ws, env });
    expect(expectJsonOk(dry).event_count).toBe(5);
    expect(spooled()).toEqual([]);

    // The plan's refusals after the whole input is spooled: a --to-seq above the last seq, a bad fork root.
    for (const args of ["--to-seq 99 --json", "--to-seq 99 --dry-run --json"]) {
      const above = sh(`pixir-log cat P | pixir-fork ${args}`, { cwd: ws, env });
      expect(args.includes("--dry-run") ? expectJsonError(above, 2, "invalid_args").field : expectStreamJsonError(above, 2, "invalid_args").field).toBe("to_seq");
      expect(spooled()).toEqual([]);
    }
    const badRoot = `{"id":"f","session_id":"R","seq":0,"ts":"2026-06-30T00:00:00Z","type":"session_fork","data":{"fork_root_session_id":"../x"}}`;
    const root = sh(`printf '%s\\n' '${badRoot}' | pixir-fork --json`, { cwd: ws, env });
    expect(expectStreamJsonError(root, 2, "invalid_args").field).toBe("fork_root_session_id");
    expect(spooled()).toEqual([]);
  });

  it("a large parent streams through with the same digest as the wrapper", () => {
    const big: Ev[] = Array.from({ length: 2000 }, (_, i) => (i % 2 ? assistant(`a${i} ${"y".repeat(300)}`) : user(`u${i}`)));
    const ws = workspace({ big });
    const piped = expectJsonOk(sh("pixir-log cat big | pixir-fork --child-id c | pixir-log write --json", { cwd: ws }));
    const dry = expectJsonOk(run("pixir", ["fork", "big", "--dry-run", "--json"], { cwd: ws }));
    expect(piped.prefix_digest).toBe(dry.prefix_digest);
    expect(piped.event_count).toBe(2000);
    expect(readEvents(ws, "c")).toHaveLength(2001);
  });
});

describe("what readers tolerate, pixir-fork tolerates on stdin", () => {
  it("a parent Event without id, with null data or an extra key forks the same through stdin, --parent and the wrapper", () => {
    const lines = [
      '{"session_id":"P","seq":0,"ts":"2026-06-30T00:00:00Z","type":"user_message","data":{"text":"no id"}}',
      '{"id":"b","session_id":"P","seq":1,"ts":"2026-06-30T00:00:01Z","type":"assistant_message","data":null}',
      '{"id":"c","session_id":"P","seq":2,"ts":"2026-06-30T00:00:02Z","type":"user_message","data":{"text":"x"},"extra":1}',
    ];
    const ws = workspace({ P: text(lines) });
    expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id a | pixir-log write --json", { cwd: ws }));
    expectJsonOk(sh("pixir-fork --parent P --child-id b | pixir-log write --json", { cwd: ws }));
    expectJsonOk(run("pixir", ["fork", "P", "--child-id", "c", "--json"], { cwd: ws }));
    const [a, b, c] = ["a", "b", "c"].map((id) => readEvents(ws, id));
    expect(a!.slice(1).map((e) => e.data)).toEqual([{ text: "no id" }, {}, { text: "x" }]);
    expect(logical(b!).slice(1)).toEqual(logical(a!).slice(1));
    expect(logical(c!).slice(1)).toEqual(logical(a!).slice(1));
    expect(new Set([a, b, c].map((x) => x![0].data.prefix_digest)).size).toBe(1);
  });

  it("a parent Event without a ts (or with a null one) forks through every stage, with or without the summary", () => {
    const lines = [
      '{"id":"a","session_id":"P","seq":0,"type":"user_message","data":{"text":"no ts"}}',
      '{"id":"b","session_id":"P","seq":1,"ts":null,"type":"tool_call","data":{"call_id":"c1","name":"read","args":{"path":"a.ts"}}}',
      '{"id":"c","session_id":"P","seq":2,"ts":"2026-06-30T00:00:02Z","type":"assistant_message","data":{"text":"x"}}',
    ];
    const ws = workspace({ P: text(lines) });
    expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id a | pixir-log write --json", { cwd: ws }));
    expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id b | pixir-summarize | pixir-log write --json", { cwd: ws }));
    expectJsonOk(run("pixir", ["fork", "P", "--child-id", "c", "--summarize", "--json"], { cwd: ws }));
    const [a, b, c] = ["a", "b", "c"].map((id) => readEvents(ws, id));
    expect(a!.slice(1).map((e) => e.ts)).toEqual([null, null, "2026-06-30T00:00:02Z"]);
    expect(logical(b!).slice(1, 4)).toEqual(logical(a!).slice(1));
    expect(logical(c!).slice(1, 4)).toEqual(logical(b!).slice(1, 4));
    expect(c!.at(-1)!.data).toEqual(b!.at(-1)!.data);
    expect(b!.at(-1)!.data.tool_calls).toEqual([{ seq: 2, call_id: "c1", name: "read" }]);
    const textSummary = sh("pixir-log cat a | sed 's/\"a\"/\"d\"/g' | pixir-summarize --format text", { cwd: ws });
    expect(textSummary.code).toBe(0);
    expect(textSummary.stdout).toContain("Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).");
    // The child's own Events still need a real ts: only inherited ones copy the parent's null.
    const own = JSON.stringify({ id: "own", session_id: "e", seq: 4, ts: null, type: "user_message", data: {} });
    for (const tail of ["pixir-log write --json", "pixir-summarize --json"]) {
      const r = sh(`{ pixir-log cat P | pixir-fork --child-id e; echo '${own}'; } | ${tail}`, { cwd: ws });
      // pixir-summarize streams: the lines before the bad one are out already (short of the held-back one).
      const error = tail.startsWith("pixir-log") ? expectJsonError(r, 1, "corrupt_log_line") : JSON.parse(r.stderr).error.details;
      expect([r.code, error]).toMatchObject([1, { reason: "invalid_field", field: "ts", line: 5 }]);
    }
  });
});

describe("the fork header line is the contract between stages", () => {
  it("a stream made by pixir-fork into a Workspace whose parent differs is refused", () => {
    const ws = workspace({ P });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const other = workspace({ P: [user("not the same"), assistant("two")] });
    const before = listTree(other);
    const d = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: other, input: text(lines) }), 1, "fork_prefix_mismatch");
    expect(d).toMatchObject({ expected_count: 5, actual_count: 2 });
    expectNothingOf(other, "c", before);
  });
});
