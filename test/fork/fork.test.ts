// acceptance.md §C (cases 23–33): `pixir fork` with replay_v1, black-box against the built binaries.
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, logFile, readEvents, readLog, sh, toolResult, ULID, user, workspace } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import {
  derivedUlid,
  EMPTY_DIGEST,
  expectJsonError,
  expectJsonOk,
  expectNoEcho,
  expectStreamJsonError,
  expectTextError,
  HOSTILE,
  leftovers,
  logIds,
  PLAN_KEYS,
  prefixDigest,
  REPLAY_LIMITATIONS,
  sha256,
} from "../support/fork.js";

const ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe("23. dry-run plan", () => {
  it("reports the plan of the replayable prefix and creates nothing", () => {
    const ws = workspace({ "parent-1": [user("one"), assistant("two"), ev("provider_usage"), user("three")] });
    const before = listTree(ws);
    const r = run("pixir", ["fork", "parent-1", "--dry-run", "--json"], { cwd: ws });
    const plan = expectJsonOk(r);
    expect(plan).toMatchObject({
      ok: true,
      recorded: false,
      dry_run: true,
      parent_session_id: "parent-1",
      to_seq: 3,
      event_count: 3,
      from_seq: 0,
      fork_root_session_id: "parent-1",
      summarize: false,
      would_record_branch_summary: false,
      branch_summary_strategy: null,
      strategy: "replay_v1",
      workspace: ws,
      parent_log_path: path.join(ws, ".pixir/sessions/parent-1.ndjson"),
      child_log_path: path.join(ws, `.pixir/sessions/${plan.child_session_id}.ndjson`),
      open_tool_calls: [],
      resource_count: 0,
    });
    const parent = readEvents(ws, "parent-1");
    expect(plan.prefix_digest).toBe(prefixDigest([parent[0], parent[1], parent[3]]));
    expect(existsSync(logFile(ws, plan.child_session_id))).toBe(false);
    expect(listTree(ws)).toEqual(before);
  });

  it("pixir-fork --dry-run prints the same plan from --parent and from stdin, and never summarizes", () => {
    const ws = workspace({ "parent-1": [user("one"), assistant("two"), ev("provider_usage"), user("three")] });
    const before = listTree(ws);
    const fromLog = expectJsonOk(run("pixir-fork", ["--parent", "parent-1", "--child-id", "k", "--dry-run", "--json"], { cwd: ws }));
    const fromStdin = expectJsonOk(run("pixir-fork", ["--child-id", "k", "--dry-run", "--json"], { cwd: ws, input: readLog(ws, "parent-1") }));
    const wrapper = expectJsonOk(run("pixir", ["fork", "parent-1", "--child-id", "k", "--dry-run", "--json"], { cwd: ws }));
    expect(fromStdin).toEqual(fromLog);
    expect(wrapper).toEqual(fromLog);
    expect(fromLog).toMatchObject({ summarize: false, branch_summary_strategy: null, recorded: false, dry_run: true, event_count: 3 });
    expect(listTree(ws)).toEqual(before);
  });
});

describe("24. plan keys", () => {
  it("has exactly the 17 Pixir keys plus prefix_digest, open_tool_calls and resource_count", () => {
    const ws = workspace({ p: [user("one")] });
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--dry-run", "--json"], { cwd: ws }));
    expect(Object.keys(plan).sort()).toEqual(PLAN_KEYS);
    expect(plan.child_session_id).toMatch(ULID);
    expect(plan.resume_command).toBe(`pixir resume ${plan.child_session_id} "..."`);
    expect(plan.prefix_digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("makes a new child id on every dry run", () => {
    const ws = workspace({ p: [user("one")] });
    const a = expectJsonOk(run("pixir", ["fork", "p", "--dry-run", "--json"], { cwd: ws }));
    const b = expectJsonOk(run("pixir", ["fork", "p", "--dry-run", "--json"], { cwd: ws }));
    expect(a.child_session_id).not.toBe(b.child_session_id);
  });

  it("a written fork's plan has the same keys, and a generated child id is a ULID", () => {
    const ws = workspace({ p: [user("one")] });
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--json"], { cwd: ws }));
    expect(Object.keys(plan).sort()).toEqual(PLAN_KEYS);
    expect(plan.child_session_id).toMatch(ULID);
    expect(readEvents(ws, plan.child_session_id)[0].session_id).toBe(plan.child_session_id);
  });
});

describe("25. write", () => {
  it("creates the child: header, then the renumbered prefix with new ids and the parent's ts and data", () => {
    const ws = workspace({ "parent-write": [user("hello"), assistant("world"), call("c1", "read", "a.txt")] });
    const parentBytes = readLog(ws, "parent-write");
    const r = run("pixir", ["fork", "parent-write", "--child-id", "child-fixed", "--json"], { cwd: ws });
    const plan = expectJsonOk(r);
    expect(plan).toMatchObject({ recorded: true, dry_run: false, child_session_id: "child-fixed", event_count: 3, to_seq: 2, from_seq: 0 });

    const parent = readEvents(ws, "parent-write");
    const child = readEvents(ws, "child-fixed");
    expect(child.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    const header = child[0];
    expect(header).toMatchObject({ type: "session_fork", session_id: "child-fixed", seq: 0 });
    expect(header.id).toMatch(ID);
    expect(Number.isNaN(Date.parse(header.ts))).toBe(false);
    expect(header.data).toEqual({
      parent_session_id: "parent-write",
      fork_root_session_id: "parent-write",
      forked_to_seq: 2,
      parent_workspace: ws,
      child_workspace: ws,
      replay_event_count: 3,
      from_seq: 0,
      strategy: "replay_v1",
      limitations: REPLAY_LIMITATIONS,
      prefix_digest: prefixDigest(parent),
      open_tool_calls: ["c1"],
    });
    expect(plan.prefix_digest).toBe(header.data.prefix_digest);
    for (let k = 1; k <= 3; k++) {
      const p = parent[k - 1];
      const e = child[k];
      expect(Object.keys(e).sort()).toEqual(["data", "id", "seq", "session_id", "ts", "type"]);
      expect(e).toMatchObject({ session_id: "child-fixed", seq: k, ts: p.ts, type: p.type, data: p.data });
      expect(e.id).not.toBe(p.id);
      expect(e.id).toBe(derivedUlid(`fork:${header.id}:${k}`, p.ts));
    }
    expect(readLog(ws, "parent-write")).toBe(parentBytes);
    expect(leftovers(ws)).toEqual([]);
    expect(logIds(ws)).toEqual(["child-fixed", "parent-write"]);
  });

  it("keeps the bytes of inherited data (key order, escapes) verbatim", () => {
    const ws = workspace({
      p: '{"id":"x0","session_id":"p","seq":0,"ts":"2026-06-30T00:00:00.123456Z","type":"user_message","data":{"z":1,"text":"caf\\u00e9 \\/ ok","a":[1.0,{"b":null}]}}\n',
    });
    expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }));
    const line = readLog(ws, "c").split("\n")[1]!;
    expect(line).toContain('"ts":"2026-06-30T00:00:00.123456Z"');
    expect(JSON.parse(line).data).toEqual(JSON.parse(readLog(ws, "p")).data);
    // The digest covers the parsed values, so it is the same whichever bytes carry them.
    expect(readEvents(ws, "c")[0].data.prefix_digest).toBe(prefixDigest(readEvents(ws, "p")));
  });
});

describe("26. --to-seq", () => {
  it("cuts the prefix at the given parent seq", () => {
    const ws = workspace({ p: [user("one"), assistant("two"), user("three")] });
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--to-seq", "1", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ event_count: 2, to_seq: 1, from_seq: 0 });
    const child = readEvents(ws, "c");
    expect(child).toHaveLength(3);
    expect(child[2]).toMatchObject({ seq: 2, type: "assistant_message", data: { text: "two" } });
    expect(child[0].data).toMatchObject({ forked_to_seq: 1, replay_event_count: 2 });
  });

  it("refuses a cut above the parent's last seq with max_seq", () => {
    const ws = workspace({ p: [user("one"), assistant("two"), user("three")] });
    const before = listTree(ws);
    for (const extra of [[], ["--dry-run"]]) {
      const d = expectJsonError(run("pixir", ["fork", "p", "--to-seq", "3", "--child-id", "c", "--json", ...extra], { cwd: ws }), 2, "invalid_args");
      expect(d).toEqual({
        field: "to_seq",
        to_seq: 3,
        max_seq: 2,
        next_actions: ["omit --to-seq to fork the full replayable prefix", "pass a non-negative integer no greater than max_seq"],
      });
    }
    const text = run("pixir", ["fork", "p", "--to-seq", "3"], { cwd: ws });
    expect(expectTextError(text, 2, "invalid_args")).toContain("to_seq is above the parent's last seq");
    const stream = run("pixir-fork", ["--parent", "p", "--to-seq", "3", "--json"], { cwd: ws });
    expect(expectStreamJsonError(stream, 2, "invalid_args")).toMatchObject({ field: "to_seq", max_seq: 2 });
    expect(listTree(ws)).toEqual(before);
  });

  it("max_seq counts every type: a cut at a trailing provider_usage is accepted", () => {
    const ws = workspace({ q: [user("u"), assistant("a"), ev("provider_usage")] });
    const plan = expectJsonOk(run("pixir", ["fork", "q", "--to-seq", "2", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ event_count: 2, to_seq: 2 });
    expect(readEvents(ws, "c")[0].data).toMatchObject({ forked_to_seq: 2, replay_event_count: 2 });
  });

  it("accepts 05 and +5 as integers", () => {
    const ws = workspace({ p: [user("a"), user("b"), user("c"), user("d"), user("e"), user("f")] });
    for (const v of ["05", "+5", "--to-seq=5"]) {
      const args = v.startsWith("--") ? [v] : ["--to-seq", v];
      expect(expectJsonOk(run("pixir", ["fork", "p", ...args, "--dry-run", "--json"], { cwd: ws })).to_seq).toBe(5);
    }
  });
});

describe("27. bad --to-seq and bad arguments", () => {
  const bad: Array<[string, string[]]> = [
    ["--to-seq abc", ["--to-seq", "abc"]],
    ["--to-seq -1", ["--to-seq", "-1"]],
    ["--to-seq 1e3", ["--to-seq", "1e3"]],
    ["--to-seq 0x10", ["--to-seq", "0x10"]],
    ["--to-seq ' 5'", ["--to-seq", " 5"]],
    ["a trailing --to-seq", ["--to-seq"]],
    ["--to-seq --json", ["--to-seq", "--json"]],
    ["--bogus", ["--bogus"]],
    ["--strategy bogus_v9", ["--strategy", "bogus_v9"]],
  ];
  for (const [name, args] of bad) {
    it(`pixir fork p ${name}: usage error, nothing created`, () => {
      const ws = workspace({ p: [user("one"), assistant("two")] });
      const before = listTree(ws);
      const r = run("pixir", ["fork", "p", ...args], { cwd: ws });
      // `--json` is a flag wherever it stands, so `--to-seq --json` fails in JSON mode.
      if (args.includes("--json")) expect(expectJsonError(r, 2, "usage")).toHaveProperty("synopsis");
      else expectTextError(r, 2, "usage");
      for (const token of ["abc", "1e3", "0x10", "bogus_v9"]) expect(r.stderr).not.toContain(token);
      expect(listTree(ws)).toEqual(before);
    });
  }

  it("two positionals, or none, are usage errors", () => {
    const ws = workspace({ p: [user("one")], q: [user("two")] });
    const before = listTree(ws);
    expectTextError(run("pixir", ["fork", "p", "q"], { cwd: ws }), 2, "usage");
    expectTextError(run("pixir", ["fork"], { cwd: ws }), 2, "usage");
    expect(listTree(ws)).toEqual(before);
  });

  it("with --json the usage envelope goes to stdout, without echoing the token", () => {
    const ws = workspace({ p: [user("one")] });
    const d = expectJsonError(run("pixir", ["fork", "p", "--to-seq", "1e3", "--json"], { cwd: ws }), 2, "usage");
    expect(d.next_actions).toEqual(["run the command with --help"]);
    expect(typeof d.synopsis).toBe("string");
    const r = run("pixir", ["fork", "p", "--bogusPWN", "--json"], { cwd: ws });
    expectJsonError(r, 2, "usage");
    expectNoEcho(r, "bogus");
  });

  it("pixir-fork is a stream command: usage errors on stderr even with --json, dry-run is a report", () => {
    const ws = workspace({ p: [user("one")] });
    const before = listTree(ws);
    const stream = run("pixir-fork", ["--parent", "p", "--to-seq", "abc", "--json"], { cwd: ws });
    expect(expectStreamJsonError(stream, 2, "usage").next_actions).toEqual(["run the command with --help"]);
    expectTextError(run("pixir-fork", ["--parent", "p", "--to-seq", "-1"], { cwd: ws }), 2, "usage");
    expectJsonError(run("pixir-fork", ["--parent", "p", "--to-seq", "-1", "--dry-run", "--json"], { cwd: ws }), 2, "usage");
    expectTextError(run("pixir-fork", ["p"], { cwd: ws }), 2, "usage");
    // Errors the parser itself finds (an unknown flag, a stray positional) follow --dry-run's class too.
    for (const extra of [["--bogus"], ["stray"]]) {
      expectJsonError(run("pixir-fork", ["--parent", "p", "--dry-run", "--json", ...extra], { cwd: ws }), 2, "usage");
      expectStreamJsonError(run("pixir-fork", ["--parent", "p", "--json", ...extra], { cwd: ws }), 2, "usage");
    }
    expect(listTree(ws)).toEqual(before);
  });
});

describe("28. exclusions", () => {
  const world = () =>
    workspace({
      p: [user("old"), assistant("older"), ev("history_compaction", { range: { from_seq: 0, to_seq: 1 }, summary: "s" }), user("recent"), ev("provider_usage")],
    });

  it("inherits neither checkpoints nor provider usage", () => {
    const ws = world();
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ event_count: 3, to_seq: 3, from_seq: 0 });
    const child = readEvents(ws, "c");
    expect(child.map((e) => e.type)).toEqual(["session_fork", "user_message", "assistant_message", "user_message"]);
    expect(child.map((e) => e.data.text ?? null)).toEqual([null, "old", "older", "recent"]);
  });

  it("the child's model-visible context still holds the whole raw prefix", () => {
    const ws = world();
    expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }));
    const r = run("pixir", ["context", "c"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("old");
    expect(r.stdout).toContain("recent");
  });

  it("keeps workflow_events, in order; never inherits session_fork, branch_summary, turn_failed or null seqs", () => {
    const ws = workspace({
      p: [
        ev("workflow_event", { step: 1 }),
        user("u"),
        ev("branch_summary", { summary: "x" }),
        ev("workflow_event", { step: 2 }),
        ev("turn_failed", {}),
        { ...user("no seq"), seq: null },
        ev("session_fork", { strategy: "replay_v1" }),
        ev("workflow_event", { step: 3 }),
      ],
    });
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ event_count: 4, to_seq: 7 });
    const child = readEvents(ws, "c").slice(1);
    expect(child.map((e) => [e.seq, e.type, e.data.step ?? e.data.text])).toEqual([
      [1, "workflow_event", 1],
      [2, "user_message", "u"],
      [3, "workflow_event", 2],
      [4, "workflow_event", 3],
    ]);
  });

  it("a parent with only provider_usage forks 0 events: to_seq 0, from_seq null, the empty digest", () => {
    const ws = workspace({ p: [ev("provider_usage"), ev("provider_usage")] });
    const dry = expectJsonOk(run("pixir", ["fork", "p", "--dry-run", "--json"], { cwd: ws }));
    expect(dry).toMatchObject({ to_seq: 0, event_count: 0, from_seq: null, prefix_digest: EMPTY_DIGEST, open_tool_calls: [] });
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ recorded: true, to_seq: 0, event_count: 0, from_seq: null });
    const child = readEvents(ws, "c");
    expect(child).toHaveLength(1);
    expect(child[0].data).toMatchObject({ forked_to_seq: 0, replay_event_count: 0, from_seq: null, prefix_digest: EMPTY_DIGEST });
  });
});

describe("29. the fork root is inherited", () => {
  it("grandchild plan and header name the root, whether the parent is read from the Log or from stdin", () => {
    const ws = workspace({ root: [user("one"), assistant("two"), user("three")] });
    expectJsonOk(run("pixir", ["fork", "root", "--to-seq", "1", "--child-id", "child", "--json"], { cwd: ws }));
    const plan = expectJsonOk(run("pixir", ["fork", "child", "--child-id", "grandchild", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ parent_session_id: "child", fork_root_session_id: "root", event_count: 2 });
    expect(readEvents(ws, "grandchild")[0].data).toMatchObject({ parent_session_id: "child", fork_root_session_id: "root" });

    const piped = sh("pixir-log cat child | pixir-fork --child-id gc2 | pixir-log write --json", { cwd: ws });
    expect(expectJsonOk(piped)).toMatchObject({ parent_session_id: "child", fork_root_session_id: "root" });
    expect(readEvents(ws, "gc2")[0].data.fork_root_session_id).toBe("root");
  });

  it("an inherited root that fails the grammar is invalid_args (fork_root_session_id) and is not echoed", () => {
    const ws = workspace({
      child: [ev("session_fork", { parent_session_id: "root", fork_root_session_id: HOSTILE, strategy: "replay_v1" }), user("x")],
    });
    const before = listTree(ws);
    const r = run("pixir", ["fork", "child", "--child-id", "g", "--json"], { cwd: ws });
    expect(expectJsonError(r, 2, "invalid_args").field).toBe("fork_root_session_id");
    expectNoEcho(r);
    const s = run("pixir-fork", ["--child-id", "g"], { cwd: ws, input: readLog(ws, "child") });
    expectTextError(s, 2, "invalid_args");
    expectNoEcho(s);
    expect(listTree(ws)).toEqual(before);
  });
});

describe("30. resources", () => {
  const png = Buffer.from("\x89PNG fake image bytes\n", "latin1");
  const sha = sha256(png);
  const descriptor = { resource_id: "r1", content_sha256: sha, extension: "png", store_ref: "x" };
  const world = () => {
    const ws = workspace({ p: [user("first"), { type: "user_message", data: { text: "see", resources: [descriptor] } }, assistant("ok")] });
    const dir = path.join(ws, ".pixir/sessions/p/resources/r1");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${sha}.png`), png);
    return ws;
  };

  it("copies each referenced payload to the child, byte for byte, before the Log exists", () => {
    const ws = world();
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan.resource_count).toBe(1);
    const copy = path.join(ws, `.pixir/sessions/c/resources/r1/${sha}.png`);
    expect(readFileSync(copy).equals(png)).toBe(true);
    // The descriptor still names the parent's store_ref.
    expect(readEvents(ws, "c")[2].data.resources).toEqual([descriptor]);
    expect(leftovers(ws)).toEqual([]);
  });

  it("the pipeline copies them too, and a dry run counts them without copying", () => {
    const ws = world();
    const dry = expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--dry-run", "--json"], { cwd: ws }));
    expect(dry.resource_count).toBe(1);
    expect(existsSync(path.join(ws, ".pixir/sessions/c"))).toBe(false);
    const r = sh("pixir-fork --parent p --child-id c | pixir-log write --json", { cwd: ws });
    expect(expectJsonOk(r).resource_count).toBe(1);
    expect(readFileSync(path.join(ws, `.pixir/sessions/c/resources/r1/${sha}.png`)).equals(png)).toBe(true);
  });

  it("a share_v1 child copies nothing (resource_count 0)", () => {
    const ws = world();
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "s", "--json"], { cwd: ws }));
    expect(plan.resource_count).toBe(0);
    expect(existsSync(path.join(ws, ".pixir/sessions/s"))).toBe(false);
  });

  it("a missing payload: resource_missing, and no child Log", () => {
    const ws = world();
    rmSync(path.join(ws, `.pixir/sessions/p/resources/r1/${sha}.png`));
    const r = run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws });
    const d = expectJsonError(r, 1, "resource_missing");
    expect(r.json.error.message).toBe("session resource payload is missing");
    expect(d).toMatchObject({ resource_id: "r1", path: `.pixir/sessions/p/resources/r1/${sha}.png` });
    expect(d.next_actions).toEqual(["restore the resource payload in the parent session", "fork at a seq before the event that references it"]);
    expect(logIds(ws)).toEqual(["p"]);
    expect(leftovers(ws)).toEqual([]);
    // A dry run reads and verifies what the real run reads (cli.md §5): the same error.
    expect(expectJsonError(run("pixir", ["fork", "p", "--child-id", "c", "--dry-run", "--json"], { cwd: ws }), 1, "resource_missing")).toMatchObject({ resource_id: "r1" });
    // So does rm's dry run for the share children it would materialize.
    expectJsonOk(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "s", "--json"], { cwd: ws }));
    expect(expectJsonError(run("pixir-log", ["rm", "p", "--materialize-children", "--dry-run", "--json"], { cwd: ws }), 1, "resource_missing")).toMatchObject({ resource_id: "r1" });
    expect(logIds(ws)).toEqual(["p", "s"]);
    // Forking before the Event that references it works.
    const ok = sh("pixir-log cat p | pixir-fork --to-seq 0 --child-id c0 | pixir-log write --json", { cwd: ws });
    expect(expectJsonOk(ok)).toMatchObject({ event_count: 1, resource_count: 0 });
  });

  it("an altered payload: resource_missing with expected and actual sha256, no child Log", () => {
    const ws = world();
    const altered = Buffer.from("altered");
    writeFileSync(path.join(ws, `.pixir/sessions/p/resources/r1/${sha}.png`), altered);
    for (const r of [
      run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }),
      sh("pixir-fork --parent p --child-id c | pixir-log write --json", { cwd: ws }),
    ]) {
      const d = expectJsonError(r, 1, "resource_missing");
      expect(r.json.error.message).toBe("session resource checksum mismatch");
      expect(d).toMatchObject({ resource_id: "r1", expected_sha256: sha, actual_sha256: sha256(altered) });
      expect(logIds(ws)).toEqual(["p"]);
      expect(leftovers(ws)).toEqual([]);
    }
  });

  it("a descriptor missing a field is invalid_args naming the key", () => {
    const ws = workspace({ p: [{ type: "user_message", data: { text: "see", resources: [{ resource_id: "r1", content_sha256: sha, store_ref: "x" }] } }] });
    const r = run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws });
    expectJsonError(r, 2, "invalid_args");
    expect(r.json.error.message).toBe("resource descriptor is missing extension");
    expect(logIds(ws)).toEqual(["p"]);
  });
});

describe("31. existing and missing Logs", () => {
  it("an existing child Log: already_exists; a dry run with the same id succeeds", () => {
    const ws = workspace({ p: [user("one")], c: [user("mine")] });
    const before = listTree(ws);
    const cBytes = readLog(ws, "c");
    const d = expectJsonError(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }), 1, "already_exists");
    expect(d).toMatchObject({ child_session_id: "c", log_path: ".pixir/sessions/c.ndjson" });
    expect(d.next_actions).toEqual(["pick a new child session id", "remove the existing log if safe"]);
    expect(readLog(ws, "c")).toBe(cBytes);
    expect(listTree(ws)).toEqual(before);
    expect(expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--dry-run", "--json"], { cwd: ws })).child_session_id).toBe("c");
    expect(expectJsonOk(run("pixir-fork", ["--parent", "p", "--child-id", "c", "--dry-run", "--json"], { cwd: ws })).child_session_id).toBe("c");
  });

  it("a missing parent: not_found with fork next_actions, nothing created", () => {
    const ws = workspace();
    const r = run("pixir", ["fork", "nope", "--json"], { cwd: ws });
    const d = expectJsonError(r, 2, "not_found");
    expect(r.json.error.message).toBe("parent session log was not found or is empty");
    expect(d).toEqual({
      parent_session_id: "nope",
      log_path: ".pixir/sessions/nope.ndjson",
      next_actions: ["check the session id", "run pixir fork from the workspace that owns the parent log"],
    });
    expect(listTree(ws)).toEqual([]);
    expectJsonError(run("pixir", ["fork", "nope", "--dry-run", "--json"], { cwd: ws }), 2, "not_found");
    expectTextError(run("pixir-fork", ["--parent", "nope"], { cwd: ws }), 2, "not_found");
    expect(listTree(ws)).toEqual([]);
  });

  it("a 0-byte parent Log is not_found too", () => {
    const ws = workspace({ p: "" });
    const before = listTree(ws);
    const d = expectJsonError(run("pixir", ["fork", "p", "--json"], { cwd: ws }), 2, "not_found");
    expect(d.next_actions).toEqual(["check the session id", "run pixir fork from the workspace that owns the parent log"]);
    expect(listTree(ws)).toEqual(before);
  });

  it("a leased child: exit 5, while its dry run exits 0 (acceptance 57)", () => {
    const ws = workspace({ p: [user("one")] });
    const lease = path.join(ws, ".pixir/session_leases/s.json");
    mkdirSync(path.dirname(lease), { recursive: true });
    const now = Date.now();
    writeFileSync(
      lease,
      JSON.stringify({ version: 1, purpose: "session_writer", session_id: "s", workspace: ws, holder_id: "wrl_0123456789abcdef", os_pid: String(process.pid), heartbeat_at_ms: now, stale_after_ms: 60000 }),
    );
    const r = run("pixir", ["fork", "p", "--child-id", "s", "--json"], { cwd: ws });
    expect(expectJsonError(r, 5, "session_writer_active").lease.state).toBe("active");
    expect(logIds(ws)).toEqual(["p"]);
    expect(expectJsonOk(run("pixir", ["fork", "p", "--child-id", "s", "--dry-run", "--json"], { cwd: ws })).dry_run).toBe(true);
    // pixir-log write of the fork stream takes the same lease; its dry run takes none.
    expectJsonError(sh("pixir-fork --parent p --child-id s | pixir-log write --json", { cwd: ws }), 5, "session_writer_active");
    expect(expectJsonOk(sh("pixir-fork --parent p --child-id s | pixir-log write --dry-run --json", { cwd: ws })).recorded).toBe(false);
    // The holder may write it.
    const held = sh("pixir-fork --parent p --child-id s | pixir-log write --json", { cwd: ws, env: { PIXIR_WRITER_LEASE: "wrl_0123456789abcdef" } });
    expect(expectJsonOk(held)).toMatchObject({ recorded: true, child_session_id: "s" });
    expect(existsSync(lease)).toBe(true);
  });
});

describe("32. text output", () => {
  it("write: the Pixir line on stdout and the resume hint on stderr", () => {
    const ws = workspace({ p: [user("u"), assistant("a")] });
    const r = run("pixir", ["fork", "p", "--child-id", "c"], { cwd: ws });
    expect(r).toMatchObject({ code: 0, stdout: "Forked p → c (2 events through seq 1).\n", stderr: 'hint: continue the child with pixir append c; pixir context c prints what a model sees of it\n' });
  });

  it("dry run: the plan line, nothing on stderr", () => {
    const ws = workspace({ p: [user("u"), assistant("a")] });
    const r = run("pixir", ["fork", "p", "--child-id", "c", "--dry-run"], { cwd: ws });
    expect(r).toMatchObject({ code: 0, stdout: "Fork plan for p: would create child c with 2 replayed events through seq 1.\n", stderr: "" });
    const f = run("pixir-fork", ["--parent", "p", "--child-id", "c", "--dry-run"], { cwd: ws });
    expect(f).toMatchObject({ code: 0, stdout: "Fork plan for p: would create child c with 2 replayed events through seq 1.\n", stderr: "" });
  });

  it("pixir-log write of a fork stream prints the same lines", () => {
    const ws = workspace({ p: [user("u"), assistant("a")] });
    const r = sh("pixir-fork --parent p --child-id c | pixir-log write", { cwd: ws });
    expect(r).toMatchObject({ code: 0, stdout: "Forked p → c (2 events through seq 1).\n", stderr: 'hint: continue the child with pixir append c; pixir context c prints what a model sees of it\n' });
  });
});

describe("33. boundary check", () => {
  const world = () => workspace({ b: [user("u"), call("c1", "read", "a.txt"), toolResult("c1"), assistant("a")] });

  it("--strict-boundary refuses a cut inside a tool call, naming the safe seqs", () => {
    const ws = world();
    const before = listTree(ws);
    const expected = {
      to_seq: 1,
      open_tool_calls: ["c1"],
      nearest_safe_seq: 0,
      next_safe_seq: 2,
      next_actions: ["pass --to-seq at nearest_safe_seq or next_safe_seq", "omit --strict-boundary to fork anyway"],
    };
    for (const extra of [[], ["--dry-run"]]) {
      const d = expectJsonError(run("pixir", ["fork", "b", "--to-seq", "1", "--strict-boundary", "--child-id", "c", "--json", ...extra], { cwd: ws }), 1, "unsafe_fork_boundary");
      expect(d).toEqual(expected);
    }
    expect(expectStreamJsonError(run("pixir-fork", ["--parent", "b", "--to-seq", "1", "--strict-boundary", "--json"], { cwd: ws }), 1, "unsafe_fork_boundary")).toEqual(expected);
    expect(expectJsonError(run("pixir-fork", ["--to-seq", "1", "--strict-boundary", "--dry-run", "--json"], { cwd: ws, input: readLog(ws, "b") }), 1, "unsafe_fork_boundary")).toEqual(expected);
    for (const strategy of ["share_v1"]) {
      expectJsonError(run("pixir", ["fork", "b", "--to-seq", "1", "--strict-boundary", "--strategy", strategy, "--json"], { cwd: ws }), 1, "unsafe_fork_boundary");
    }
    expect(listTree(ws)).toEqual(before);
  });

  it("without the flag the fork succeeds and records the open call", () => {
    const ws = world();
    const plan = expectJsonOk(run("pixir", ["fork", "b", "--to-seq", "1", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan.open_tool_calls).toEqual(["c1"]);
    expect(readEvents(ws, "c")[0].data.open_tool_calls).toEqual(["c1"]);
  });

  it("a safe cut passes --strict-boundary; with no safe seq on a side the value is null", () => {
    const ws = world();
    expect(expectJsonOk(run("pixir", ["fork", "b", "--to-seq", "2", "--strict-boundary", "--dry-run", "--json"], { cwd: ws })).open_tool_calls).toEqual([]);
    const ws2 = workspace({ b: [call("c1"), call("c2"), toolResult("c1")] });
    const d = expectJsonError(run("pixir", ["fork", "b", "--to-seq", "1", "--strict-boundary", "--json"], { cwd: ws2 }), 1, "unsafe_fork_boundary");
    expect(d).toMatchObject({ open_tool_calls: ["c1", "c2"], nearest_safe_seq: null, next_safe_seq: null });
  });

  it("a result closes its call wherever it stands in the prefix (§4.3 names no order)", () => {
    // A result before its call; a call repeated after its result; each is closed. c3 stays open.
    const ws = workspace({ b: [toolResult("c0"), call("c0"), call("c1"), toolResult("c1"), call("c1"), call("c3"), call("c3")] });
    for (const [toSeq, open] of [["1", []], ["4", []], ["6", ["c3"]]] as const) {
      const plan = expectJsonOk(run("pixir", ["fork", "b", "--to-seq", toSeq, "--dry-run", "--json"], { cwd: ws }));
      expect(plan.open_tool_calls, `to_seq ${toSeq}`).toEqual(open);
      const viaStdin = expectJsonOk(run("pixir-fork", ["--to-seq", toSeq, "--dry-run", "--json"], { cwd: ws, input: readLog(ws, "b") }));
      expect(viaStdin.open_tool_calls).toEqual(open);
    }
    expect(run("pixir", ["fork", "b", "--to-seq", "4", "--strict-boundary", "--dry-run", "--json"], { cwd: ws }).code).toBe(0);
    const d = expectJsonError(run("pixir", ["fork", "b", "--to-seq", "6", "--strict-boundary", "--dry-run", "--json"], { cwd: ws }), 1, "unsafe_fork_boundary");
    expect(d).toMatchObject({ open_tool_calls: ["c3"], nearest_safe_seq: 4, next_safe_seq: null });
  });
});

describe("hostile ids in fork commands (acceptance 17, 19)", () => {
  it("a hostile parent or child id is invalid_args, never echoed, nothing created", () => {
    const ws = workspace({ p: [user("one")] });
    const before = listTree(ws);
    const cases: Array<[Parameters<typeof run>[0], string[], string]> = [
      ["pixir", ["fork", HOSTILE, "--dry-run", "--json"], "session_id"],
      ["pixir", ["fork", HOSTILE, "--json"], "session_id"],
      ["pixir", ["fork", "p", "--child-id", HOSTILE, "--json"], "child_session_id"],
      ["pixir", ["fork", "p", "--child-id", HOSTILE, "--dry-run", "--json"], "child_session_id"],
      ["pixir-fork", ["--parent", HOSTILE, "--dry-run", "--json"], "session_id"],
      ["pixir-fork", ["--parent", "p", "--child-id", HOSTILE, "--dry-run", "--json"], "child_session_id"],
    ];
    for (const [tool, args, field] of cases) {
      const r = run(tool, args, { cwd: ws });
      const d = expectJsonError(r, 2, "invalid_args");
      expect(d).toMatchObject({ field, reason: "invalid_start" });
      expectNoEcho(r);
    }
    const stream = run("pixir-fork", ["--parent", "p", "--child-id", HOSTILE], { cwd: ws });
    expectTextError(stream, 2, "invalid_args");
    expectNoEcho(stream);
    expect(listTree(ws)).toEqual(before);
    expect(existsSync(path.join(ws, "../outside"))).toBe(false);
  });

  it("the child id is checked before a corrupt parent is read (case 19)", () => {
    const ws = workspace({ "parent-safe": `${JSON.stringify({ id: "a", session_id: "parent-safe", seq: 0, ts: "2026-06-30T00:00:00Z", type: "user_message", data: {} })}\n{not json}\n` });
    const before = listTree(ws);
    const r = run("pixir", ["fork", "parent-safe", "--child-id", "../../../outside/fork-child", "--json"], { cwd: ws });
    expect(expectJsonError(r, 2, "invalid_args").field).toBe("child_session_id");
    expectNoEcho(r, "fork-child");
    expect(listTree(ws)).toEqual(before);
  });

  it("a hostile session_id on pixir-fork's stdin is invalid_args and not echoed", () => {
    const ws = workspace();
    const input = `${JSON.stringify({ id: "x", session_id: HOSTILE, seq: 0, ts: "2026-06-30T00:00:00Z", type: "user_message", data: {} })}\n`;
    const r = run("pixir-fork", ["--json"], { cwd: ws, input });
    expectStreamJsonError(r, 2, "invalid_args");
    expectNoEcho(r);
    expect(listTree(ws)).toEqual([]);
  });
});

describe("48. summaries of forks skip what says nothing", () => {
  it("a forked root's permission_posture is counted but never excerpted", () => {
    const posture = ev("subagent_event", { event: "permission_posture", scope: "session", lineage: "root", source: "root_session_start" });
    const ws = workspace({ root: [posture, user("task"), assistant("done")] });
    for (const [child, r] of [
      ["c", run("pixir", ["fork", "root", "--summarize", "--child-id", "c", "--json"], { cwd: ws })],
      ["d", sh("pixir-fork --parent root --child-id d | pixir-summarize | pixir-log write --json", { cwd: ws })],
    ] as const) {
      expect(expectJsonOk(r)).toMatchObject({ summarize: true, event_count: 3 });
      const summary = readEvents(ws, child).at(-1);
      expect(summary).toMatchObject({ type: "branch_summary", seq: 4 });
      expect(summary.data.event_counts.subagent_event).toBe(1);
      expect(summary.data.summary).not.toContain("permission_posture");
      expect(JSON.stringify(summary.data.open_tasks)).not.toContain("permission_posture");
      expect(summary.data.open_tasks).toEqual(["user: task", "assistant: done"]);
    }
  });

  it("a fork of 0 Events has the fixed empty summary", () => {
    const ws = workspace({ p: [ev("provider_usage")] });
    const plan = expectJsonOk(run("pixir", ["fork", "p", "--summarize", "--child-id", "c", "--json"], { cwd: ws }));
    expect(plan).toMatchObject({ event_count: 0, summarize: true });
    const child = readEvents(ws, "c");
    expect(child.map((e) => [e.type, e.seq])).toEqual([
      ["session_fork", 0],
      ["branch_summary", 1],
    ]);
    expect(child[1].data.summary).toBe("Forked 0 replayed events ().\nRecent forked conversational facts:\n- none recorded");
    expect(child[1].data).toMatchObject({ source_event_count: 0, range: { from_seq: null, to_seq: 0 }, event_counts: {}, open_tasks: [] });
  });
});

describe("own Events after the prefix (fork.md §4.1)", () => {
  it("pixir-log write stores them at N+1.., and a branch_summary among them makes summarize true", () => {
    const ws = workspace({ p: [user("one"), assistant("two")] });
    const fork = run("pixir-fork", ["--parent", "p", "--child-id", "c"], { cwd: ws }).stdout;
    const own = (seq: number, type: string, data: object) => `${JSON.stringify({ id: `own-${seq}`, session_id: "c", seq, ts: "2026-07-01T00:00:00Z", type, data })}\n`;
    const plain = expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: fork + own(3, "user_message", { text: "next" }) }));
    expect(plain).toMatchObject({ summarize: false, branch_summary_strategy: null, event_count: 2 });
    expect(readEvents(ws, "c").map((e) => e.seq)).toEqual([0, 1, 2, 3]);

    const fork2 = run("pixir-fork", ["--parent", "p", "--child-id", "c2"], { cwd: ws }).stdout;
    const summary = JSON.stringify({ id: "own-3", session_id: "c2", seq: 3, ts: "2026-07-01T00:00:00Z", type: "branch_summary", data: { strategy: "model_assisted_operational_summary_v1", summary: "s" } });
    const withSummary = expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: `${fork2}${summary}\n` }));
    expect(withSummary).toMatchObject({ summarize: true, would_record_branch_summary: true, branch_summary_strategy: "model_assisted_operational_summary_v1" });

    // An own Event at a wrong seq is a gap.
    const before = listTree(ws);
    const fork3 = run("pixir-fork", ["--parent", "p", "--child-id", "c3"], { cwd: ws }).stdout;
    const gap = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input: fork3 + own(4, "user_message", {}).replace('"c"', '"c3"') }), 1, "stream_integrity_failed");
    expect(gap).toMatchObject({ reason: "seq_gap", expected: 3, observed: 4 });
    expect(listTree(ws)).toEqual(before);
  });
});
