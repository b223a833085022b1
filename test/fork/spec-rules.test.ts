// Spec rules that had no test of their own: fork.md §3.1 step 7 (fork_root_session_id), §5 (the
// stream's own digest when the parent is absent), §7 (resource descriptors and destinations; every
// inherited Event's resources, docs/cli-contract.md "Resources of a fork"), §6 and §8 (share_v1 own
// Events in History order); envelope-and-log.md §6 (descriptor formats), §7 (History order),
// §9 and §11 (null seqs on stdin).
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, readEvents, readLog, sh, tempDir, user, workspace, writeRaw, type Ev } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import {
  expectJsonError,
  expectJsonOk,
  expectNoEcho,
  expectStreamJsonError,
  INTEGRITY_NEXT_ACTIONS,
  leftovers,
  logIds,
  prefixDigest,
  sha256,
} from "../support/fork.js";

/** The next actions of stream_integrity_failed, as text mode prints them (cli.md §4). */
const PIPELINE_HINTS = "hint: rerun the whole pipeline; an upstream stage failed or was cut short\nhint: check the exit status of every stage (set -o pipefail)\n";
const text = (lines: string[]) => lines.map((l) => `${l}\n`).join("");
const edit = (line: string, f: (e: any) => void) => {
  const e = JSON.parse(line);
  f(e);
  return JSON.stringify(e);
};
/** The fork stream pixir-fork prints for `args`, as lines. */
function forkStream(ws: string, args: string[]): string[] {
  const r = run("pixir-fork", args, { cwd: ws });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.stdout.split("\n").filter((l) => l !== "");
}
const header = (data: Record<string, unknown>): Ev => ev("session_fork", { parent_session_id: "anc", strategy: "replay_v1", ...data });

describe("fork.md §3.1 step 7: fork_root_session_id of a new fork", () => {
  // parent id → [its Log, the root a fork of it must record]
  const parents: Record<string, [Ev[], string]> = {
    "is-root": [[user("one"), assistant("two")], "is-root"],
    "fork-child": [[header({ fork_root_session_id: "R0" }), user("x")], "R0"],
    "no-root-key": [[header({}), user("x")], "no-root-key"],
    "empty-root": [[header({ fork_root_session_id: "" }), user("x")], "empty-root"],
    "number-root": [[header({ fork_root_session_id: 42 }), user("x")], "number-root"],
    "null-root": [[header({ fork_root_session_id: null }), user("x")], "null-root"],
    // Only the first session_fork counts, even when a later one names another root.
    "two-headers": [[header({ fork_root_session_id: "first" }), user("x"), header({ fork_root_session_id: "second" }), user("y")], "first"],
    // "First" is in History order (by seq), not file order.
    "late-line": [[{ ...header({ fork_root_session_id: "late" }), seq: 1 }, { ...header({ fork_root_session_id: "early" }), seq: 0 }, { ...user("x"), seq: 2 }], "early"],
  };

  for (const [parent, [events, root]] of Object.entries(parents)) {
    it(`${parent}: pixir fork, pixir-fork --parent and cat | pixir-fork | write record ${root}`, () => {
      const ws = workspace({ [parent]: events });
      const plans = [
        expectJsonOk(run("pixir", ["fork", parent, "--child-id", "w", "--json"], { cwd: ws })),
        expectJsonOk(sh(`pixir-fork --parent ${parent} --child-id f | pixir-log write --json`, { cwd: ws })),
        expectJsonOk(sh(`pixir-log cat ${parent} | pixir-fork --child-id p | pixir-log write --json`, { cwd: ws })),
      ];
      for (const plan of plans) expect(plan).toMatchObject({ recorded: true, parent_session_id: parent, fork_root_session_id: root });
      for (const child of ["w", "f", "p"]) expect(readEvents(ws, child)[0].data).toMatchObject({ parent_session_id: parent, fork_root_session_id: root });
    });
  }

  it("a share_v1 child as the parent: its header's root, through the wrapper and the pipeline", () => {
    const ws = workspace({ root: [user("one"), assistant("two")] });
    expectJsonOk(run("pixir", ["fork", "root", "--strategy", "share_v1", "--child-id", "s", "--json"], { cwd: ws }));
    expect(expectJsonOk(run("pixir", ["fork", "s", "--child-id", "g1", "--json"], { cwd: ws })).fork_root_session_id).toBe("root");
    const piped = sh("pixir-log cat s | pixir-fork --child-id g2 | pixir-log write --json", { cwd: ws });
    expect(expectJsonOk(piped)).toMatchObject({ parent_session_id: "s", fork_root_session_id: "root" });
    expect(readEvents(ws, "g2")[0].data.fork_root_session_id).toBe("root");
  });

  it("an inherited root that fails the grammar stops pixir-fork --parent and the pipeline, not echoed, nothing written", () => {
    const ws = workspace({ bad: [header({ fork_root_session_id: "../PWN" }), user("x")] });
    const before = listTree(ws);
    const d = expectStreamJsonError(run("pixir-fork", ["--parent", "bad", "--child-id", "g", "--json"], { cwd: ws }), 2, "invalid_args");
    expect(d).toMatchObject({ field: "fork_root_session_id", reason: "invalid_start", next_actions: ["pass_a_valid_session_id"] });
    const piped = sh("pixir-log cat bad | pixir-fork --child-id g | pixir-log write --json", { cwd: ws });
    expect(piped.code).not.toBe(0);
    expect(piped.stderr).toMatch(/^error: invalid_args: session id is invalid \(invalid_start fork_root_session_id; max_bytes=235 observed_bytes=6\)\nhint: pass a valid session id$/m);
    expectNoEcho(piped, "PWN", "../");
    expect(listTree(ws)).toEqual(before);
  });
});

const payload = Buffer.from("\x89PNG fake image bytes\n", "latin1");
const sha = sha256(payload);
const descriptor = { resource_id: "r1", content_sha256: sha, extension: "png", store_ref: "x" };
const storePayload = (ws: string, session: string, bytes = payload, d = descriptor) => {
  const dir = path.join(ws, `.pixir/sessions/${session}/resources/${d.resource_id}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${d.content_sha256}.${d.extension}`), bytes);
  return path.join(dir, `${d.content_sha256}.${d.extension}`);
};

describe("fork.md §7 step 2, envelope-and-log.md §6: resource descriptor formats", () => {
  const badId = (reason: string, id: string) =>
    ["resource id is invalid", { field: "resource_id", reason, max_bytes: 235, observed_bytes: Buffer.byteLength(id), next_actions: ["pass_a_valid_session_id"] }] as const;
  const badExt = ["resource extension is invalid", { field: "extension", reason: "invalid_format" }] as const;
  const badSha = ["resource checksum is invalid", { field: "content_sha256", reason: "invalid_format" }] as const;
  const cases: Array<[string, Record<string, unknown>, readonly [string, Record<string, unknown>]]> = [
    ["resource_id with a slash", { resource_id: "a/b" }, badId("invalid_character", "a/b")],
    ["resource_id climbing out", { resource_id: "../PWN" }, badId("invalid_start", "../PWN")],
    ["empty resource_id", { resource_id: "" }, badId("empty", "")],
    ["uppercase sha", { content_sha256: sha.toUpperCase() }, badSha],
    ["63-hex sha", { content_sha256: sha.slice(1) }, badSha],
    ["sha with a path", { content_sha256: `../${sha.slice(3)}` }, badSha],
    ["extension with a dot", { extension: ".png" }, badExt],
    ["extension with a path", { extension: "png/../x" }, badExt],
    ["17-character extension", { extension: "a".repeat(17) }, badExt],
    ["empty extension", { extension: "" }, badExt],
    ["numeric extension", { extension: 5 }, badExt],
  ];
  for (const [name, change, [message, details]] of cases) {
    it(`${name}: invalid_args from pixir fork, pixir-fork and a forged stream's write; nothing written`, () => {
      const bad = { ...descriptor, ...change };
      const ws = workspace({ p: [user("first"), { type: "user_message", data: { text: "see", resources: [bad] } }] });
      storePayload(ws, "p");
      const before = listTree(ws);
      const r = run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws });
      expect(expectJsonError(r, 2, "invalid_args")).toEqual(details);
      expect(r.json.error.message).toBe(message);
      expect(expectStreamJsonError(run("pixir-fork", ["--parent", "p", "--child-id", "c", "--json"], { cwd: ws }), 2, "invalid_args")).toEqual(details);
      expectNoEcho(r);
      expect(listTree(ws)).toEqual(before);

      // A stream made elsewhere, its digest made consistent, written where its parent is absent.
      const good = workspace({ p: [user("first"), { type: "user_message", data: { text: "see", resources: [descriptor] } }] });
      const lines = forkStream(good, ["--parent", "p", "--child-id", "c"]);
      const body = [lines[1]!, edit(lines[2]!, (e) => (e.data.resources = [bad]))];
      const head = edit(lines[0]!, (e) => (e.data.prefix_digest = prefixDigest(body.map((l) => JSON.parse(l)))));
      const elsewhere = tempDir();
      const w = run("pixir-log", ["write", "--json"], { cwd: elsewhere, input: text([head, ...body]) });
      expect(expectJsonError(w, 2, "invalid_args")).toEqual(details);
      expect(w.json.error.message).toBe(message);
      expect(listTree(elsewhere)).toEqual([]);
    });
  }
});

describe("fork.md §7 step 5: a destination payload that already exists", () => {
  const world = () => workspace({ p: [{ type: "user_message", data: { text: "see", resources: [descriptor] } }] });

  it("with identical bytes it is kept (same file, not rewritten), by pixir fork and by the pipeline", () => {
    const ws = world();
    storePayload(ws, "p");
    for (const [child, fork] of [
      ["c", () => run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws })],
      ["d", () => sh("pixir-log cat p | pixir-fork --child-id d | pixir-log write --json", { cwd: ws })],
    ] as const) {
      const dest = storePayload(ws, child);
      const { ino, mtimeMs } = statSync(dest);
      expect(expectJsonOk(fork())).toMatchObject({ recorded: true, resource_count: 1 });
      expect(statSync(dest)).toMatchObject({ ino, mtimeMs });
      expect(readFileSync(dest).equals(payload)).toBe(true);
    }
    expect(logIds(ws)).toEqual(["c", "d", "p"]);
    expect(leftovers(ws)).toEqual([]);
  });

  it("with differing bytes it is replaced by the verified payload (temp plus rename), no error", () => {
    const ws = world();
    storePayload(ws, "p");
    const dest = storePayload(ws, "c", Buffer.from("stale bytes"));
    const { ino } = statSync(dest);
    expect(expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws })).resource_count).toBe(1);
    expect(readFileSync(dest).equals(payload)).toBe(true);
    expect(statSync(dest).ino).not.toBe(ino);
    const dest2 = storePayload(ws, "d", Buffer.from("stale bytes"));
    expectJsonOk(sh("pixir-log cat p | pixir-fork --child-id d | pixir-log write --json", { cwd: ws }));
    expect(readFileSync(dest2).equals(payload)).toBe(true);
    expect(listTree(path.join(ws, ".pixir/sessions/c"))).toEqual(["resources", "resources/r1", `resources/r1/${sha}.png`]);
    expect(leftovers(ws)).toEqual([]);
  });
});

describe("share_v1 own Events out of seq order (envelope-and-log.md §7, fork.md §6 step 2.7, §8)", () => {
  it("cat orders them by (seq is null, seq), stably; materialize stores the same History", () => {
    const ws = workspace({ P: [user("one"), assistant("two")] });
    expectJsonOk(run("pixir", ["fork", "P", "--strategy", "share_v1", "--child-id", "s", "--json"], { cwd: ws }));
    const own = (id: string, seq: number | null, t: string) =>
      JSON.stringify({ id, session_id: "s", seq, ts: "2026-07-01T00:00:00Z", type: "user_message", data: { text: t } });
    // File order: 5, null, 3, 4, 4.
    writeRaw(ws, "s", readLog(ws, "s") + text([own("o5", 5, "c"), own("on", null, "n"), own("o3", 3, "a"), own("o4", 4, "b1"), own("o4b", 4, "b2")]));
    const cat = run("pixir-log", ["cat", "s"], { cwd: ws });
    expect({ code: cat.code, stderr: cat.stderr }).toEqual({ code: 0, stderr: "" });
    expect(cat.lines.map((e) => [e.seq, e.id.length === 26 ? e.data.text ?? null : e.id])).toEqual([
      [0, null],
      [1, "one"],
      [2, "two"],
      [3, "o3"],
      [4, "o4"],
      [4, "o4b"],
      [5, "o5"],
      [null, "on"],
    ]);
    const m = expectJsonOk(run("pixir-log", ["materialize", "s", "--json"], { cwd: ws }));
    expect(m).toMatchObject({ materialized: true, inherited_event_count: 2, event_count: 8 });
    const after = run("pixir-log", ["cat", "s"], { cwd: ws }).lines;
    const noHeaderNoise = (es: any[]) => es.map((e, i) => (i === 0 ? { ...e, data: null } : e));
    expect(noHeaderNoise(after)).toEqual(noHeaderNoise(cat.lines));
    expect(after[0].data).toEqual({ ...cat.lines[0].data, strategy: "replay_v1", limitations: expect.any(Array), materialized_from: "share_v1" });
    // The replacement is the resolved view: the physical lines are now in History order.
    expect(readEvents(ws, "s")).toEqual(after);
    expect(leftovers(ws)).toEqual([]);
  });
});

describe("fork.md §5 step 3, envelope-and-log.md §11: a tampered replay_v1 stream, parent absent", () => {
  it("pixir-log write checks the stream's own digest against its header: fork_prefix_mismatch, nothing written", () => {
    const ws = workspace({ P: [user("one"), assistant("two"), user("three")] });
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const body = lines.slice(1).map((l) => edit(l, (e) => e.seq === 2 && (e.data.text = "forged")));
    const elsewhere = tempDir();
    for (const dry of [["--dry-run"], []]) {
      const d = expectJsonError(run("pixir-log", ["write", "--json", ...dry], { cwd: elsewhere, input: text([lines[0]!, ...body]) }), 1, "fork_prefix_mismatch");
      expect(d).toEqual({
        session_id: "c",
        parent_session_id: "P",
        expected_digest: JSON.parse(lines[0]!).data.prefix_digest,
        actual_digest: prefixDigest(body.map((l) => JSON.parse(l))),
        expected_count: 3,
        actual_count: 3,
        next_actions: ["restore the parent log to the state it had when the child was forked", "or discard this child"],
      });
      expect(listTree(elsewhere)).toEqual([]);
    }
    // The same stream untouched is accepted there.
    expect(expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: elsewhere, input: text(lines) })).recorded).toBe(true);
  });
});

describe("a null seq before integer seqs on stdin (fork.md §3.1 step 4, envelope-and-log.md §7, §9, §11)", () => {
  const line = (id: string, seq: number | null, t: string) =>
    JSON.stringify({ id, session_id: "P", seq, ts: "2026-06-30T00:00:00Z", type: "user_message", data: { text: t } });
  const nullFirst = text([line("n", null, "nul"), line("a", 0, "one"), line("b", 1, "two")]);
  // `expected` is left out: the spec does not define it, and after a null it reads "seq >= 0".
  const outOfOrder = { reason: "seq_out_of_order", expected: "no integer seq after a null one", observed: 0, line: 2, next_actions: INTEGRITY_NEXT_ACTIONS };

  it("pixir-fork refuses it as seq_out_of_order (nulls go last), from a pipe, a file and in a dry run", () => {
    const ws = tempDir();
    writeFileSync(path.join(ws, "in.ndjson"), nullFirst);
    expect(expectStreamJsonError(run("pixir-fork", ["--child-id", "c", "--json"], { cwd: ws, input: nullFirst }), 1, "stream_integrity_failed")).toMatchObject(outOfOrder);
    expect(expectStreamJsonError(sh("pixir-fork --child-id c --json < in.ndjson", { cwd: ws }), 1, "stream_integrity_failed")).toMatchObject(outOfOrder);
    expect(expectJsonError(run("pixir-fork", ["--child-id", "c", "--dry-run", "--json"], { cwd: ws, input: nullFirst }), 1, "stream_integrity_failed")).toMatchObject(outOfOrder);
    // In a pipeline pixir-fork prints nothing, so the write stage sees an empty stream.
    const piped = sh("cat in.ndjson | pixir-fork --child-id c | pixir-log write --json", { cwd: ws });
    expect({ code: piped.code, stderr: piped.stderr }).toEqual({ code: 1, stderr: `error: stream_integrity_failed: input stream failed its integrity check (line 2: seq_out_of_order; observed=0)\n${PIPELINE_HINTS}` });
    expect(piped.json.error).toMatchObject({ kind: "stream_integrity_failed", details: { reason: "empty_stream" } });
    expect(listTree(ws)).toEqual(["in.ndjson"]);
  });

  it("the same Events in History order (null last) fork, and the null-seq Event is not inherited", () => {
    const ws = tempDir();
    const inOrder = text([line("a", 0, "one"), line("b", 1, "two"), line("n", null, "nul")]);
    const plan = expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: run("pixir-fork", ["--child-id", "c"], { cwd: ws, input: inOrder }).stdout }));
    expect(plan).toMatchObject({ event_count: 2, to_seq: 1 });
    expect(readEvents(ws, "c").map((e) => e.data.text ?? null)).toEqual([null, "one", "two"]);
  });

  it("pixir-log write refuses a null seq in a plain or a fork stream as seq_gap; nothing written", () => {
    const fresh = tempDir();
    const plain = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: fresh, input: nullFirst }), 1, "stream_integrity_failed");
    expect(plain).toEqual({ reason: "seq_gap", expected: "an integer seq", observed: null, line: 1, next_actions: INTEGRITY_NEXT_ACTIONS });
    expect(listTree(fresh)).toEqual([]);
    const ws = workspace({ P: [user("one"), assistant("two")] });
    const before = listTree(ws);
    const lines = forkStream(ws, ["--parent", "P", "--child-id", "c"]);
    const withNull = text([lines[0]!, JSON.stringify({ ...JSON.parse(lines[1]!), id: "z", seq: null }), ...lines.slice(1)]);
    const fork = expectJsonError(run("pixir-log", ["write", "--json"], { cwd: ws, input: withNull }), 1, "stream_integrity_failed");
    expect(fork).toEqual({ reason: "seq_gap", expected: "an integer seq", observed: null, line: 2, next_actions: INTEGRITY_NEXT_ACTIONS });
    expect(listTree(ws)).toEqual(before);
  });
});

describe("docs/cli-contract.md 'Resources of a fork': every inherited Event's resources", () => {
  it("a tool_result's resources are copied to a replay_v1 child by pixir fork and by the pipeline", () => {
    const result = { type: "tool_result", data: { call_id: "c1", ok: true, output: "shot", resources: [descriptor] } };
    const ws = workspace({ p: [user("look"), call("c1", "screenshot", "x"), result, assistant("done")] });
    storePayload(ws, "p");
    const dry = expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--dry-run", "--json"], { cwd: ws }));
    expect(dry.resource_count).toBe(1);
    expect(expectJsonOk(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws })).resource_count).toBe(1);
    expect(expectJsonOk(sh("pixir-log cat p | pixir-fork --child-id d | pixir-log write --json", { cwd: ws })).resource_count).toBe(1);
    for (const child of ["c", "d"]) {
      expect(readFileSync(path.join(ws, `.pixir/sessions/${child}/resources/r1/${sha}.png`)).equals(payload)).toBe(true);
      expect(readEvents(ws, child)[3].data.resources).toEqual([descriptor]);
    }
    expect(leftovers(ws)).toEqual([]);
  });

  it("so a tool_result's missing payload refuses both forks with resource_missing, nothing written", () => {
    const result = { type: "tool_result", data: { call_id: "c1", ok: true, resources: [descriptor] } };
    const ws = workspace({ p: [call("c1"), result] });
    const before = listTree(ws);
    const missing = { resource_id: "r1", path: `.pixir/sessions/p/resources/r1/${sha}.png` };
    expect(expectJsonError(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }), 1, "resource_missing")).toMatchObject(missing);
    expect(expectJsonError(sh("pixir-log cat p | pixir-fork --child-id c | pixir-log write --json", { cwd: ws }), 1, "resource_missing")).toMatchObject(missing);
    expect(listTree(ws)).toEqual(before);
  });
});
