// One deterministic test per bug the hardening suites found (docs/reliability.md, "Found and fixed"),
// against the built binaries, so each fix stays pinned even if a generator changes.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { buildSessionTree, scanLog } from "@pixir/envelope";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../../lib/envelope/src/event/nesting.js";
import { rawDataText } from "../../lib/envelope/src/event/envelope.js";
import { binPath, listTree, ROOT, logFile, rawLine, readLog, sh, tempDir, toolCopyForAnyUser, user, workspace, type Tool } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";

const nested = (d: number) => `${"[".repeat(d)}${"]".repeat(d)}`;
const dataOf = (line: string) => line.slice(line.indexOf('"data":') + 7, line.lastIndexOf("}"));

describe("JSON nested deeper than the limit (was: internal_error from a stack overflow)", () => {
  it("append, a Log line and a piped History are refused with corrupt_log_line nesting_too_deep", () => {
    const ws = tempDir();
    const deep = `{"type":"user_message","data":{"d":${nested(5000)}}}\n`;
    const r = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: deep });
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "corrupt_log_line", details: { reason: "nesting_too_deep", line: 1, max_nesting_depth: MAX_NESTING_DEPTH } });
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);

    const bad = workspace({ s: `${rawLine("s", 0, user("a"))}\n${rawLine("s", 1, { type: "user_message", data: { d: JSON.parse(nested(2000)) } })}\n` });
    for (const [tool, argv] of [
      ["pixir-log", ["cat", "s", "--json"]],
      ["pixir-fork", ["--parent", "s", "--json"]],
      ["pixir", ["context", "s", "--json"]],
    ] as const) {
      const c = run(tool, [...argv], { cwd: bad });
      expect(c.code, `${tool} ${argv.join(" ")}`).toBe(1);
      expect(c.errJson.error.details.reason).toBe("nesting_too_deep");
    }
    const piped = run("pixir-fork", ["--json"], { cwd: bad, input: readLog(bad, "s") });
    expect(piped.errJson.error.details).toMatchObject({ reason: "nesting_too_deep", line: 2 });
    expect(run("pixir-log", ["check", "s", "--json"], { cwd: bad }).json.error.details.logs[0].problems[0]).toMatchObject({ code: "nesting_too_deep", line: 2 });
  });

  it("up to the limit, data passes every stage unchanged", () => {
    const ws = tempDir();
    const data = `{"d":${nested(MAX_NESTING_DEPTH - 2)}}`;
    expect(run("pixir-log", ["append", "s"], { cwd: ws, input: `{"type":"user_message","data":${data}}\n{"type":"assistant_message","data":{"text":"ok"}}\n` }).code).toBe(0);
    const fork = run("pixir", ["fork", "s", "--child-id", "c", "--summarize", "--json"], { cwd: ws });
    expect(fork.code, fork.stdout).toBe(0);
    expect(dataOf(readLog(ws, "c").split("\n")[1]!)).toBe(data);
    expect(run("pixir", ["context", "s"], { cwd: ws }).code).toBe(0);
    const compact = run("pixir", ["compact", "s", "--tail-events", "1", "--json"], { cwd: ws });
    expect(compact.json).toMatchObject({ ok: true, recorded: true });
  });

  it("a pi line nested too deep is a malformed line (skipped with --lenient)", () => {
    const ws = tempDir();
    const file = path.join(tempDir(), "p.jsonl");
    const header = JSON.stringify({ type: "session", version: 3, id: "p1", timestamp: "2026-01-10T09:00:00.000Z", cwd: "/x" });
    const entry = JSON.stringify({ type: "message", id: "a1", parentId: null, timestamp: "2026-01-10T09:00:01.000Z", message: { role: "user", content: "hi", timestamp: 1 } });
    writeFileSync(file, `${header}\n${entry}\n{"type":"custom","id":"b1","parentId":"a1","timestamp":"2026-01-10T09:00:02.000Z","customType":"x","data":${nested(3000)}}\n`);
    const strict = run("pixir", ["import", "pi", file, "--json"], { cwd: ws });
    expect(strict.json.error).toMatchObject({ kind: "invalid_pi_session", details: { reason: "malformed_line", line: 3 } });
    const lenient = run("pixir", ["import", "pi", file, "--lenient", "--json"], { cwd: ws });
    expect(lenient.code).toBe(0);
    expect(lenient.json.imports[0].skipped_lines).toBe(1);
  });

  it("nestsDeeperThan counts brackets outside strings only", () => {
    expect(nestsDeeperThan(Buffer.from(nested(1001)))).toBe(true);
    expect(nestsDeeperThan(Buffer.from(nested(1000)))).toBe(false);
    expect(nestsDeeperThan(Buffer.from(`["${"[".repeat(5000)}"]`))).toBe(false);
    expect(nestsDeeperThan(Buffer.from(`["\\"${"[".repeat(1200)}"]`))).toBe(false);
  });
});

describe("data bytes are kept as written (was: numbers rounded, 1e400 stored as null)", () => {
  const numbers = '{"id":12345678901234567890,"big":1e400,"tiny":1e-400,"exact":1.00000000000000000001,"neg":-0}';

  it("append of a partial line, write of a reordered line, and cat of a CRLF line keep every digit", () => {
    const ws = tempDir();
    expect(run("pixir-log", ["append", "s"], { cwd: ws, input: `{"type":"tool_result","data":${numbers}}\n` }).code).toBe(0);
    expect(dataOf(readLog(ws, "s"))).toBe(numbers);
    // Pixir writes sorted keys; a spaced line is compacted but keeps its tokens.
    const sorted = `{"data": ${numbers.replace(/,/g, ", ")}, "id":"e1", "seq":1, "session_id":"s", "ts":"2026-07-20T10:00:01.000Z", "type":"user_message"}\n`;
    expect(run("pixir-log", ["write", "s"], { cwd: ws, input: sorted }).code).toBe(0);
    expect(readLog(ws, "s").split("\n").filter(Boolean).map(dataOf)).toEqual([numbers, numbers]);
    writeFileSync(logFile(ws, "t"), `${rawLine("t", 0, user("x")).replace('{"text":"x"}', numbers)}\r\n`);
    expect(dataOf(run("pixir-log", ["cat", "t"], { cwd: ws }).stdout.trim())).toBe(numbers);
  });

  it("a fork (through --parent and through a pipe) keeps them too", () => {
    const ws = tempDir();
    mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
    // A Pixir-style Log: sorted keys, so no line is in our key order.
    writeFileSync(logFile(ws, "p"), `{"data":${numbers},"id":"e0","seq":0,"session_id":"p","ts":"2026-07-20T10:00:00.000Z","type":"tool_result"}\n`);
    expect(run("pixir", ["fork", "p", "--child-id", "c"], { cwd: ws }).code).toBe(0);
    expect(dataOf(readLog(ws, "c").split("\n")[1]!)).toBe(numbers);
    const piped = run("pixir-fork", ["--child-id", "d"], { cwd: ws, input: readFileSync(logFile(ws, "p")) });
    expect(dataOf(piped.stdout.split("\n")[1]!)).toBe(numbers);
  });

  it("the context reads them as Pixir's Jason does: integers exact, other numbers as doubles", () => {
    const ws = tempDir();
    mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
    writeFileSync(logFile(ws, "p"), `{"data":{"args":${numbers},"call_id":"c","name":"n"},"id":"e0","seq":0,"session_id":"p","ts":"2026-07-20T10:00:00.000Z","type":"tool_call"}\n`);
    // context-and-compaction.md §6.7: 1e-400 is the double 0.0, 1.000…01 is 1.0, -0 is the integer 0, and 1e400
    // (no double) is written so that a JSON reader sees the same overflow (cli-contract.md).
    const args = '{"big":1.0e999,"exact":1.0,"id":12345678901234567890,"neg":0,"tiny":0.0}';
    const line = run("pixir", ["context", "p"], { cwd: ws }).stdout.split("\n")[0]!;
    expect(line).toBe(`{"seq":0,"id":"e0","type":"tool_call","item":{"arguments":${JSON.stringify(args)},"call_id":"c","name":"n","type":"function_call"}}`);
  });

  it("rawDataText finds the last data member in any key order and compacts it", () => {
    expect(rawDataText('{"a":{"data":1},"data" : { "x" : [1, 2] , "s":"a b"}}')).toBe('{"x":[1,2],"s":"a b"}');
    expect(rawDataText('{"data":{"a":1},"data":{"b":12345678901234567890}}')).toBe('{"b":12345678901234567890}');
    expect(rawDataText('{"d\\u0061ta":{"k":"}"}}')).toBe('{"k":"}"}');
    expect(rawDataText('{"data":null}')).toBeUndefined();
    expect(rawDataText('{"type":"x"}')).toBeUndefined();
  });
});

describe("a switch given a value (was: --dry-run=yes read as false, so rm really removed the Log)", () => {
  it("--dry-run=yes, --json=true, --force=no are usage errors and change nothing", () => {
    const ws = workspace({ s: [user("a")] });
    const before = readLog(ws, "s");
    for (const [tool, argv] of [
      ["pixir-log", ["rm", "s", "--dry-run=yes"]],
      ["pixir-log", ["append", "s", "--dry-run=1"]],
      ["pixir", ["compact", "s", "--dry-run=true"]],
      ["pixir-log", ["cat", "s", "--json=true"]],
      ["pixir", ["lock", "release", "s", "--force=no"]],
    ] as const) {
      const r = run(tool, [...argv], { cwd: ws, input: '{"type":"user_message"}\n' });
      expect(r.code, `${tool} ${argv.join(" ")}`).toBe(2);
      expect(r.stderr).toMatch(/^error: usage: (?!usage: )/);
      expect(r.stderr).not.toMatch(/yes|=1|=true|=no/);
    }
    expect(readLog(ws, "s")).toBe(before);
    expect(run("pixir-log", ["rm", "s", "--dry-run", "--json"], { cwd: ws }).json).toMatchObject({ ok: true, removed: false });
  });
});

describe("a refused writer leaves no state folder behind (was: an empty .pixir/session_leases)", () => {
  it("pixir-log repair, pixir repair and materialize of a corrupt Log", () => {
    for (const [tool, argv] of [
      ["pixir-log", ["repair", "s"]],
      ["pixir", ["repair", "s"]],
      ["pixir-log", ["materialize", "s"]],
    ] as const) {
      const ws = workspace({ s: `${rawLine("s", 0, user("a"))}\nnot json\n${rawLine("s", 2, user("b"))}\n` });
      const before = listTree(ws);
      const r = run(tool, [...argv, "--json"], { cwd: ws });
      expect(r.json.error.kind, `${tool} ${argv.join(" ")}`).toBe("corrupt_log_line");
      expect(listTree(ws)).toEqual(before);
    }
  });
});

describe("pixir-log check reports what an interrupted writer leaves (was: silent for a Log that never appeared)", () => {
  it("temp files of a missing Log, of resources and of leases, a .steal file, and a symlinked Log", () => {
    const ws = workspace({ s: [user("a")] });
    const sessions = path.join(ws, ".pixir", "sessions");
    writeFileSync(path.join(sessions, "n.ndjson.tmp-0123abcd"), "partial");
    mkdirSync(path.join(sessions, "k", "resources", "r1"), { recursive: true });
    writeFileSync(path.join(sessions, "k", "resources", "r1", `${"a".repeat(64)}.png.tmp-89abcdef`), "x");
    mkdirSync(path.join(ws, ".pixir", "session_leases"));
    writeFileSync(path.join(ws, ".pixir", "session_leases", "s.json.tmp-00ff00ff"), "{}");
    writeFileSync(path.join(ws, ".pixir", "session_leases", "s.json.steal"), "{}");
    const ok = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(ok.code).toBe(0);
    expect(ok.json.checked).toBe(1);
    const byId = Object.fromEntries(ok.json.logs.map((l: { session_id: string }) => [l.session_id, l]));
    expect(byId.n).toMatchObject({ log_exists: false, problems: [], warnings: [{ code: "stale_temp_file", path: ".pixir/sessions/n.ndjson.tmp-0123abcd" }] });
    expect(byId.k.warnings[0]).toMatchObject({ code: "stale_temp_file", path: `.pixir/sessions/k/resources/r1/${"a".repeat(64)}.png.tmp-89abcdef` });
    expect(byId.s.warnings.map((w: { path: string }) => w.path).sort()).toEqual([".pixir/session_leases/s.json.steal", ".pixir/session_leases/s.json.tmp-00ff00ff"]);
    expect(run("pixir-log", ["check"], { cwd: ws }).stdout).toContain("n: warning stale_temp_file: ");

    const outside = tempDir();
    writeFileSync(path.join(outside, "x.ndjson"), `${rawLine("x", 0, user("outside-secret"))}\n`);
    symlinkSync(path.join(outside, "x.ndjson"), path.join(sessions, "x.ndjson"));
    const bad = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(bad.code).toBe(1);
    const x = bad.json.error.details.logs.find((l: { session_id: string }) => l.session_id === "x");
    expect(x.problems[0]).toMatchObject({ code: "unsafe_state_path", reason: "symlink_component", component: ".pixir/sessions/x.ndjson" });
    expect(bad.stdout).not.toContain("outside-secret");
    expect(run("pixir-log", ["ls"], { cwd: ws }).stdout).toBe("s\n");
  });
});

describe("a lease whose write fails (was: an empty lease left behind, ambiguous until a forced release)", () => {
  it("a full disk at the lease's first write (ulimit -f 0: EFBIG) leaves no lease and no temp file; the next writer goes ahead", () => {
    // The same file state a SIGKILL between the exclusive create and the write used to leave.
    const ws = workspace({ s: [user("a")] });
    const before = readLog(ws, "s");
    const r = spawnSync("bash", ["-c", `ulimit -f 0; exec "${process.execPath}" "${binPath("pixir-log")}" append s --json`], { cwd: ws, input: '{"type":"user_message"}\n', encoding: "utf8" });
    expect(r.status).toBe(5);
    expect(JSON.parse(r.stdout).error).toMatchObject({ kind: "session_writer_ambiguous", message: "Session writer lease could not be acquired: the file would exceed the file-size limit", details: { filesystem_reason: "EFBIG" } });
    expect(existsSync(path.join(ws, ".pixir", "session_leases"))).toBe(false);
    expect(readLog(ws, "s")).toBe(before);
    const next = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: '{"type":"user_message"}\n' });
    expect(next.json).toMatchObject({ ok: true, first_seq: 1 });
  });
});

describe("a reader racing an append (was: log_read_failed 'append journal is unreadable')", () => {
  it("every lease-less read sees whole committed appends, never a vanished journal or a torn tail", async () => {
    const ws = workspace({ s: [user("base")] });
    const BATCHES = 300;
    // A second process appends batches of three Events back to back through the built library.
    const script = `
      import { appendEvents } from ${JSON.stringify(pathToFileURL(path.join(ROOT, "lib/envelope/dist/index.js")).href)};
      const line = (k, i) => JSON.stringify({ type: "user_message", data: { text: "b" + k + ":" + i } }) + "\\n";
      for (let k = 0; k < ${BATCHES}; k++) {
        const input = (async function* () { for (let i = 0; i < 3; i++) yield Buffer.from(line(k, i)); })();
        await appendEvents(process.argv[1], "s", input, { program: "race-test", env: {} });
      }`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script, ws], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const done = new Promise<number | null>((resolve) => child.on("close", resolve));
    let finished = false;
    void done.then(() => (finished = true));

    let reads = 0;
    let last = 1;
    while (!finished) {
      const scan = await scanLog(ws, "s");
      expect(scan.endsWithNewline).toBe(true);
      expect((scan.eventCount - 1) % 3, `a read saw part of an append: ${scan.eventCount} Events`).toBe(0);
      expect(scan.eventCount).toBeGreaterThanOrEqual(last);
      last = scan.eventCount;
      const node = buildSessionTree(ws, "s");
      expect(node.error, JSON.stringify(node.error)).toBeUndefined();
      expect((node.event_count - 1) % 3).toBe(0);
      reads++;
      await new Promise((r) => setImmediate(r));
    }
    expect(await done, stderr).toBe(0);
    expect(reads).toBeGreaterThan(10);
    expect((await scanLog(ws, "s")).eventCount).toBe(1 + 3 * BATCHES);
  });
});

describe("pixir-log check of a line over the length limit (was: the whole check failed with corrupt_log_line)", () => {
  it("reports line_too_long as a problem of that Log (exit 1, log_check_failed) and goes on with the others", () => {
    const ws = workspace({ a: [user("fine")] });
    const long = rawLine("s", 1, user("x".repeat(33 * 1024 * 1024)));
    writeFileSync(logFile(ws, "s"), `${rawLine("s", 0, user("first"))}\n${long}\n${rawLine("s", 2, user("after"))}\n`);
    for (const argv of [["check", "s", "--json"], ["check", "--json"]]) {
      const r = run("pixir-log", argv, { cwd: ws });
      expect(r.code, r.stderr).toBe(1);
      expect(r.json.error.kind).toBe("log_check_failed");
      const logs = r.json.error.details.logs as Array<{ session_id: string; event_count: number; problems: Array<Record<string, unknown>> }>;
      const s = logs.find((l) => l.session_id === "s")!;
      expect(s.problems).toEqual([expect.objectContaining({ code: "line_too_long", line: 2, max_line_bytes: 32 * 1024 * 1024 })]);
      expect(s.event_count).toBe(1);
      if (argv.length === 2) expect(logs.find((l) => l.session_id === "a")!.problems).toEqual([]);
    }
  });
});

describe("check of a Workspace whose first write was killed while taking the lease (was: reported nothing)", () => {
  it("names the lease's temp file although no .pixir/sessions exists yet", () => {
    const ws = tempDir();
    mkdirSync(path.join(ws, ".pixir", "session_leases"), { recursive: true });
    writeFileSync(path.join(ws, ".pixir", "session_leases", "n.json.tmp-0123abcd"), "");
    const r = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ ok: true, checked: 0, warning_count: 1 });
    expect(r.json.logs).toEqual([
      expect.objectContaining({ session_id: "n", log_exists: false, warnings: [expect.objectContaining({ code: "stale_temp_file", path: ".pixir/session_leases/n.json.tmp-0123abcd" })] }),
    ]);
  });
});

describe("a line a writer makes longer than the reader's limit (was: a Log every reader refused)", () => {
  const MAX = 32 * 1024 * 1024;
  /** A user_message line of exactly `bytes` bytes (without its newline), in `make`'s envelope. */
  const sized = (bytes: number, make: (text: string) => string) => make("x".repeat(bytes - Buffer.byteLength(make(""))));
  const tooLong = (r: ReturnType<typeof run>, type: string) => {
    expect(r.code).toBe(1);
    const e = r.json?.error ?? JSON.parse(r.stderr.trim().split("\n").pop()!).error;
    expect(e).toMatchObject({ kind: "log_encode_failed", details: { reason: "line_too_long", type, max_line_bytes: MAX } });
    expect(e.details.observed_bytes).toBeGreaterThan(MAX);
  };

  it("append: stamping id, seq and ts onto a line just under the limit is refused; the Log is unchanged", () => {
    const ws = workspace({ s: [user("a")] });
    const bytes = readLog(ws, "s");
    const input = sized(MAX - 10, (t) => JSON.stringify({ type: "user_message", data: { text: t } }));
    expect(Buffer.byteLength(input)).toBe(MAX - 10);
    tooLong(run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: `${input}\n` }), "user_message");
    tooLong(run("pixir-log", ["append", "new", "--json"], { cwd: ws, input: `${input}\n` }), "user_message");
    expect(readLog(ws, "s")).toBe(bytes);
    expect(existsSync(logFile(ws, "new"))).toBe(false);
    // The same line stamped already is exactly as long as it came, and is stored.
    const stamped = sized(MAX, (t) => rawLine("s", 1, user(t)));
    expect(run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: `${stamped}\n` }).code).toBe(0);
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).lines).toHaveLength(2);
  });

  it("fork: a child id longer than the parent's pushes an inherited line past the limit; nothing is written", () => {
    // Both of the copy's ways: a line in our layout (copied as bytes) and one with its keys in another order.
    const id = "01ARZ3NDEKTSV4RRFFQ69G5FAV"; // as long as a derived id: only the session id grows
    const ours = (t: string) => rawLine("p", 0, { ...user(t), id });
    const other = (t: string) => JSON.stringify({ type: "user_message", data: { text: t }, id, session_id: "p", seq: 0, ts: "2026-06-30T00:00:00Z" });
    for (const make of [ours, other]) {
      const line = sized(MAX - 20, make);
      const ws = workspace({ p: `${line}\n` });
      const before = listTree(ws);
      const child = "c".repeat(200);
      tooLong(run("pixir", ["fork", "p", "--child-id", child, "--json"], { cwd: ws }), "user_message");
      tooLong(run("pixir-fork", ["--parent", "p", "--child-id", child, "--json"], { cwd: ws }), "user_message");
      expect(listTree(ws)).toEqual(before);
      // A short child id fits.
      expect(run("pixir", ["fork", "p", "--child-id", "c", "--json"], { cwd: ws }).code).toBe(0);
    }
  });
});

describe("a Log this user may not read (was: permission_denied with path null; ls and check stopped at it)", () => {
  // Root reads a mode-000 file anyway: as root, the tools run as nobody, from copies nobody can reach
  // (the clone may lie where only root may enter).
  const root = process.getuid?.() === 0;
  const asOther = (tool: Tool) => (root ? { uid: 65534, gid: 65534, bin: toolCopyForAnyUser(tool) } : {});

  it("cat names the path; ls lists it with first_line_error; check reports it as a problem and checks the others", () => {
    const ws = workspace({ a: [user("a")], b: [user("b")] });
    chmodSync(ws, 0o755);
    chmodSync(path.join(ws, ".pixir"), 0o755);
    chmodSync(path.join(ws, ".pixir", "sessions"), 0o755);
    chmodSync(logFile(ws, "b"), 0o644);
    chmodSync(logFile(ws, "a"), 0o000);
    const denied = { path: ".pixir/sessions/a.ndjson", operation: "open" };
    const asNobody = { log: asOther("pixir-log"), tree: asOther("pixir-tree") };
    // The premise: that user can run the tools in the Workspace and read its other Log.
    const premise = run("pixir-log", ["cat", "b", "--json"], { cwd: ws, ...asNobody.log });
    expect(premise.code, `pixir-log runs as uid ${root ? 65534 : "self"}: ${premise.stderr}`).toBe(0);
    const treePremise = run("pixir-tree", ["--version"], { cwd: ws, ...asNobody.tree });
    expect(treePremise.code, `pixir-tree runs as uid ${root ? 65534 : "self"}: ${treePremise.stderr}`).toBe(0);

    const cat = run("pixir-log", ["cat", "a", "--json"], { cwd: ws, ...asNobody.log });
    expect(cat.code).toBe(3);
    expect(cat.errJson.error).toMatchObject({ kind: "permission_denied", details: denied });

    const ls = run("pixir-log", ["ls", "--json"], { cwd: ws, ...asNobody.log });
    expect(ls.code).toBe(0);
    expect(ls.json.sessions.map((s: any) => [s.session_id, s.first_line_error ?? null])).toEqual([["a", "permission_denied"], ["b", null]]);

    const check = run("pixir-log", ["check", "--json"], { cwd: ws, ...asNobody.log });
    expect(check.code).toBe(1);
    const logs = check.json.error.details.logs;
    expect(logs.map((l: any) => [l.session_id, l.problems.map((p: any) => p.code), l.event_count])).toEqual([["a", ["permission_denied"], 0], ["b", [], 1]]);
    expect(logs[0].problems[0]).toMatchObject(denied);

    // The tree shows it as a Log that is there (tree.md §2: a regular file) but could not be read.
    const forest = run("pixir-tree", ["--json"], { cwd: ws, ...asNobody.tree });
    expect(forest.code).toBe(0);
    const node = forest.json.forest.find((n: any) => n.session_id === "a");
    expect(node).toMatchObject({ log_exists: true, error: { kind: "permission_denied" } });
  });
});

describe("an append journal no tool can read (was: advice to run repair, which failed on it too)", () => {
  it("every reader and writer refuses it with advice that leads out; removed by hand, the Log reads again", () => {
    const ws = workspace({ s: [user("a")] });
    const journal = path.join(ws, ".pixir", "sessions", "s.ndjson.append-journal");
    writeFileSync(journal, "garbage");
    const bytes = readLog(ws, "s");
    for (const [tool, argv, input] of [
      ["pixir-log", ["cat", "s", "--json"], ""],
      ["pixir-log", ["repair", "s", "--json"], ""],
      ["pixir-log", ["append", "s", "--json"], '{"type":"user_message","data":{}}\n'],
    ] as const) {
      const r = run(tool, [...argv], { cwd: ws, input });
      expect(r.code).toBe(1);
      const e = (r.json ?? r.errJson).error;
      expect(e).toMatchObject({ kind: "log_read_failed", details: { reason: "invalid_append_journal", path: ".pixir/sessions/s.ndjson.append-journal" } });
      expect(e.details.next_actions.join(" ")).toContain("remove it by hand");
      expect(e.details.next_actions.join(" ")).not.toMatch(/^run pixir-log repair to roll back/);
    }
    expect(readLog(ws, "s")).toBe(bytes);
    // The advice works.
    rmSync(journal);
    expect(run("pixir-log", ["check", "s", "--json"], { cwd: ws }).json.ok).toBe(true);
  });
});

describe("a signal while a writer waits for lines typed at a terminal (was: error printed, process kept running)", () => {
  // Runs the tool with a pseudo-terminal as stdin (python3's pty), sends the signal, and reports how it ended.
  const PTY = `
import pty, signal, subprocess, sys, time
master, slave = pty.openpty()
p = subprocess.Popen(sys.argv[2:], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sig = getattr(signal, sys.argv[1])
# Signal once the tool's handlers are in place, not after a fixed sleep: a loaded machine can take longer
# than any sleep to start Node, and the default action would end it first. Node itself catches SIGINT
# and SIGTERM from its start (to reset the terminal), so the sign is SIGHUP in SigCgt (/proc), which
# runProcess catches together with the other two.
deadline = time.time() + 20
while time.time() < deadline:
    try:
        caught = int([l for l in open("/proc/%d/status" % p.pid) if l.startswith("SigCgt:")][0].split()[1], 16)
    except (OSError, IndexError):
        time.sleep(1.0)
        break
    if caught & (1 << (signal.SIGHUP - 1)):
        break
    time.sleep(0.05)
time.sleep(0.3)
p.send_signal(sig)
try:
    out, err = p.communicate(timeout=8)
    print(p.returncode)
except subprocess.TimeoutExpired:
    p.kill()
    p.communicate()
    print("hung")
`;
  const hasPython = spawnSync("python3", ["-c", "import pty"]).status === 0;

  it.skipIf(!hasPython)("append, write, pixir-fork and pixir-summarize exit 130 at once on SIGINT, SIGTERM and SIGHUP", () => {
    const ws = workspace({ s: [user("a")] });
    const bins: Array<[string, string[]]> = [
      ["pixir-log", ["append", "s"]],
      ["pixir-log", ["write", "w"]],
      ["pixir-fork", []],
      ["pixir-summarize", []],
    ];
    for (const [tool, args] of bins) {
      for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
        const r = spawnSync("python3", ["-c", PTY, signal, process.execPath, binPath(tool as "pixir-log"), ...args], { cwd: ws, encoding: "utf8" });
        expect(r.stdout.trim(), `${tool} ${args.join(" ")} ${signal}: ${r.stderr}`).toBe("130");
      }
    }
    expect(readLog(ws, "s")).toBe(`${rawLine("s", 0, user("a"))}\n`);
  }, 120_000);
});

describe("stdout that cannot be written, e.g. >/dev/full (was: a Node stack trace, or exit 0 with the output lost)", () => {
  const full = (cmd: string, ws: string, input = "") => sh(`${cmd} >/dev/full`, { cwd: ws, input });
  const failed = { kind: "log_write_failed", details: { reason: "enospc", path: "-" } };

  it("every kind of command exits 1 with log_write_failed on stderr, no stack trace", () => {
    const ws = workspace({ s: [user("a")] });
    for (const cmd of ["pixir-log ls --json", "pixir-log ls", "pixir-log --version", "pixir-log cat s", "pixir-log cat s --json", "pixir-tree --json", "pixir tree s", "pixir-fork --parent s"]) {
      const r = full(cmd, ws);
      expect(r.code, cmd).toBe(1);
      expect(r.stderr, cmd).not.toMatch(/\n\s+at |triggerUncaughtException/);
      if (cmd.includes("--json")) expect(r.errJson.error, cmd).toMatchObject(failed);
      else expect(r.stderr, cmd).toBe("error: log_write_failed: could not write to stdout (stdout: enospc)\nhint: check where stdout goes: a full disk, a file-size limit, a closed terminal\n");
    }
    // A usage error of a report command goes to stderr when stdout cannot take it.
    expect(full("pixir-log ls --bogus --json", ws).errJson.error.kind).toBe("usage");
  });

  it("a writer whose report is lost after its commit says the changes were recorded", () => {
    const ws = workspace({ s: [user("a")] });
    const r = full("pixir-log append s --json", ws, '{"type":"user_message","data":{}}\n');
    expect(r.code).toBe(1);
    expect(r.errJson.error).toMatchObject({ ...failed, details: { ...failed.details, recorded: true } });
    expect(r.errJson.error.details.next_actions[0]).toMatch(/^do not run the command again/);
    expect(readLog(ws, "s").split("\n").filter(Boolean)).toHaveLength(2);
    const fork = full("pixir fork s --child-id c", ws);
    expect(fork.stderr).toBe("error: log_write_failed: the command's changes were recorded, but its report could not be written to stdout (stdout: enospc)\nhint: do not run the command again: its changes are in the workspace\nhint: inspect them with pixir-log cat or pixir-log ls\n");
    expect(run("pixir-log", ["cat", "c"], { cwd: ws }).lines).toHaveLength(3);
    // A refusal is not a commit: no `recorded` claim.
    const dry = full("pixir-log append s --json --dry-run", ws, '{"type":"user_message","data":{}}\n');
    expect(dry.errJson.error.details.recorded).toBeUndefined();
  });
});
