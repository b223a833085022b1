// acceptance.md §A: the envelope and the Log, against the built pixir-log binary.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CANONICAL_TYPES, EPHEMERAL_TYPES } from "../../lib/envelope/src/event/vocabulary.js";
import { assistant, call, ev, listTree, logFile, rawLine, readLog, sh, tempDir, user, workspace, writeRaw } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";

// The vocabulary as the library has it; lib/envelope/test/event/vocabulary.test.ts holds it to the spec's text.
const CANONICAL = [...CANONICAL_TYPES];
const EPHEMERAL = [...EPHEMERAL_TYPES];
const lines = (...objs: object[]) => objs.map((o) => JSON.stringify(o)).join("\n") + "\n";

describe("A2 pinned values", () => {
  it("keeps given id, ts and seq, and refuses a conflicting seq leaving the Log byte-identical", () => {
    const ws = tempDir();
    const pinned = { id: "fixed", ts: "2026-01-01T00:00:00Z", seq: 0, type: "user_message", data: {} };
    expect(run("pixir-log", ["append", "s1"], { cwd: ws, input: lines(pinned) }).code).toBe(0);
    const [e] = run("pixir-log", ["cat", "s1"], { cwd: ws }).lines;
    expect(e).toMatchObject({ id: "fixed", ts: "2026-01-01T00:00:00Z", seq: 0, session_id: "s1" });
    const before = readLog(ws, "s1");
    const r = run("pixir-log", ["append", "s1", "--json"], { cwd: ws, input: lines({ seq: 7, type: "user_message", data: {} }) });
    expect(r.code).toBe(1);
    expect(r.json.error.kind).toBe("stream_integrity_failed");
    expect(r.json.error.details).toMatchObject({ reason: "seq_conflict", expected: 1, observed: 7 });
    expect(readLog(ws, "s1")).toBe(before);
  });
});

describe("A3 ephemeral types are refused", () => {
  for (const type of EPHEMERAL) {
    it(`${type}: exit 1 ephemeral_not_loggable, nothing created`, () => {
      const ws = tempDir();
      const r = run("pixir-log", ["append", "s1", "--json"], { cwd: ws, input: lines({ type, data: {} }) });
      expect(r.code).toBe(1);
      expect(r.json.error.kind).toBe("ephemeral_not_loggable");
      expect(r.json.error.details.type).toBe(type);
      expect(r.json.error.message).toBe("refusing to persist a non-canonical event");
      expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
    });
  }
  it("--drop-ephemeral skips them and counts them", () => {
    const ws = tempDir();
    const r = run("pixir-log", ["append", "s1", "--drop-ephemeral", "--json"], {
      cwd: ws,
      input: lines({ type: "text_delta", data: {} }, { type: "user_message", data: { text: "a" } }, { type: "status", data: {} }),
    });
    expect(r.json).toMatchObject({ ok: true, event_count: 1, dropped_ephemeral: 2, first_seq: 0 });
  });
});

describe("A4 missing Log", () => {
  it("cat never --json: exit 2 not_found on stderr, nothing created", () => {
    const ws = tempDir();
    const r = run("pixir-log", ["cat", "never", "--json"], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.errJson.error.kind).toBe("not_found");
    expect(r.errJson.error.details).toMatchObject({ session_id: "never", log_path: ".pixir/sessions/never.ndjson" });
    expect(listTree(ws)).toEqual([]);
  });
});

describe("A5 History order", () => {
  it("sorts by seq, --raw keeps file order", () => {
    const ws = workspace();
    writeRaw(ws, "s", rawLine("s", 2, { ...user("second"), seq: 2 }) + "\n" + rawLine("s", 1, { ...user("first"), seq: 1 }) + "\n");
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).lines.map((e) => e.data.text)).toEqual(["first", "second"]);
    expect(run("pixir-log", ["cat", "s", "--raw"], { cwd: ws }).lines.map((e) => e.data.text)).toEqual(["second", "first"]);
  });
  it("file seqs [null, 1, 0] read as 0, 1, null; equal seqs keep file order", () => {
    const ws = workspace({ s: [{ ...user("n"), seq: null }, { ...user("one"), seq: 1 }, { ...user("zero"), seq: 0 }] });
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0, 1, null]);
    const ws2 = workspace({ t: [{ ...user("a"), seq: 3 }, { ...user("b"), seq: 3 }] });
    expect(run("pixir-log", ["cat", "t"], { cwd: ws2 }).lines.map((e) => e.data.text)).toEqual(["a", "b"]);
  });
});

describe("writers never store what check warns about: a ts not in ISO-8601 UTC, an id twice", () => {
  const refused = (r: ReturnType<typeof run>) => {
    expect(r.code).toBe(1);
    return { kind: r.json.error.kind, ...r.json.error.details };
  };
  const badTs = { kind: "corrupt_log_line", reason: "invalid_field", field: "ts", expected: "ISO-8601 UTC" };
  const dup = { kind: "stream_integrity_failed", reason: "duplicate_id" };

  it("append refuses a bad ts, an id its input repeats and the last Event's id, writing nothing", () => {
    const ws = workspace({ s: [{ ...user("a"), id: "first" }, { ...user("b"), id: "last" }] });
    const before = listTree(ws);
    const bytes = readLog(ws, "s");
    const u = (more: object) => ({ type: "user_message", data: {}, ...more });
    for (const [input, line, want] of [
      [lines(u({ ts: "yesterday" })), 1, badTs],
      [lines(u({}), u({ ts: "2026-06-30 00:00:00" })), 2, badTs],
      [lines(u({ ts: "2026-06-30T00:00:00+02:00" })), 1, badTs],
      [lines(u({ id: "x" }), u({}), u({ id: "x" })), 3, dup],
      [lines(u({ id: "last" })), 1, dup],
    ] as const) {
      expect(refused(run("pixir-log", ["append", "s", "--json"], { cwd: ws, input }))).toMatchObject({ ...want, line });
      expect(refused(run("pixir-log", ["append", "s", "--json", "--dry-run"], { cwd: ws, input }))).toMatchObject({ ...want, line });
    }
    expect(readLog(ws, "s")).toBe(bytes);
    expect(listTree(ws)).toEqual(before);
    // Accepted: ISO-8601 UTC with or without fractions, an id seen earlier in the Log (only the tail is read, §9).
    const ok = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: lines(u({ ts: "2026-06-30T00:00:00Z" }), u({ ts: "2026-06-30T00:00:00.123456Z", id: "first" })) });
    expect(ok.json).toMatchObject({ ok: true, event_count: 2 });
  });

  it("write refuses a bad ts or a repeated id in a plain stream, new Log or existing, writing nothing", () => {
    const ws = workspace({ s: [{ ...user("a"), id: "last" }] });
    const before = listTree(ws);
    const cases = [
      ["n", [rawLine("n", 0, user("a")), rawLine("n", 1, { ...user("b"), ts: "1 Jan 2026" })], 2, badTs],
      ["n", [rawLine("n", 0, { ...user("a"), id: "same" }), rawLine("n", 1, { ...user("b"), id: "same" })], 2, dup],
      ["s", [rawLine("s", 1, { ...user("b"), id: "last" })], 1, dup],
      ["s", [rawLine("s", 1, { ...user("b"), ts: "" })], 1, badTs],
    ] as const;
    for (const [id, stream, line, want] of cases) {
      for (const dry of [[], ["--dry-run"]]) {
        expect(refused(run("pixir-log", ["write", id, "--json", ...dry], { cwd: ws, input: stream.join("\n") + "\n" }))).toMatchObject({ ...want, line });
      }
    }
    expect(listTree(ws)).toEqual(before);
  });
});

describe("A6 create is atomic; a second write is refused", () => {
  it("creates, then refuses seq_conflict leaving the Log unchanged and no temp files", () => {
    const ws = tempDir();
    const stream = rawLine("sess-1", 0, user("a")) + "\n" + rawLine("sess-1", 1, assistant("b")) + "\n";
    const first = run("pixir-log", ["write"], { cwd: ws, input: stream });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe("Created sess-1 with 2 events (seq 0..1).\n");
    const before = readLog(ws, "sess-1");
    const second = run("pixir-log", ["write", "--json"], { cwd: ws, input: stream });
    expect(second.code).toBe(1);
    expect(second.json.error).toMatchObject({ kind: "stream_integrity_failed", details: { reason: "seq_conflict" } });
    expect(readLog(ws, "sess-1")).toBe(before);
    expect(readdirSync(path.join(ws, ".pixir/sessions"))).toEqual(["sess-1.ndjson"]);
  });
  it("appends a contiguous plain stream to an existing Log", () => {
    const ws = workspace({ s: [user("a")] });
    const r = run("pixir-log", ["write", "s"], { cwd: ws, input: rawLine("s", 1, assistant("b")) + "\n" });
    expect(r.stdout).toBe("Wrote 1 events to s (seq 1..1).\n");
  });
  it("refuses gaps, two session ids and empty input, writing nothing", () => {
    const ws = tempDir();
    const gap = run("pixir-log", ["write", "--json"], { cwd: ws, input: rawLine("g", 0, user("a")) + "\n" + rawLine("g", 2, user("b")) + "\n" });
    expect(gap.json.error.details.reason).toBe("seq_gap");
    const two = run("pixir-log", ["write", "--json"], { cwd: ws, input: rawLine("g", 0, user("a")) + "\n" + rawLine("h", 1, user("b")) + "\n" });
    expect(two.json.error.details.reason).toBe("session_id_mismatch");
    const empty = run("pixir-log", ["write", "--json"], { cwd: ws, input: "" });
    expect(empty.json.error.details.reason).toBe("empty_stream");
    expect(listTree(ws)).toEqual([]);
    const allowed = run("pixir-log", ["write", "e", "--allow-empty", "--json"], { cwd: ws, input: "" });
    expect(allowed.json).toMatchObject({ ok: true, created: true, event_count: 0 });
    expect(readLog(ws, "e")).toBe("");
  });
  it("--dry-run checks the stream and creates nothing", () => {
    const ws = tempDir();
    const r = run("pixir-log", ["write", "--dry-run", "--json"], { cwd: ws, input: rawLine("d", 0, user("a")) + "\n" });
    expect(r.json).toMatchObject({ ok: true, recorded: false, dry_run: true, event_count: 1 });
    expect(listTree(ws)).toEqual([]);
  });
});

describe("A7 canonical vocabulary", () => {
  it("reads one line of each of the 14 types in order and check is clean", () => {
    const ws = workspace({ v: CANONICAL.map((t) => ev(t)) });
    expect(run("pixir-log", ["cat", "v"], { cwd: ws }).lines.map((e) => e.type)).toEqual(CANONICAL);
    const check = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(check.code).toBe(0);
    expect(check.json.logs[0].problems).toEqual([]);
  });
});

describe("A8 corrupt lines fail closed", () => {
  const cases: Array<[string, string, Record<string, unknown>?]> = [
    ["{not json}", "invalid_json"],
    ['{"id":"x","session_id":"s","seq":1,"ts":"t","type":"definitely_not_a_real_event_type","data":{}}', "unknown_event_type", { type: "definitely_not_a_real_event_type" }],
    ['{"id":"x","session_id":"s","seq":1,"ts":"t","type":"text_delta","data":{}}', "unknown_event_type"],
    ["[1]", "unexpected_shape"],
    ["   ", "invalid_json"],
    ['{"id":"x","session_id":"s","seq":-1,"ts":"t","type":"user_message","data":{}}', "invalid_seq"],
  ];
  for (const [line, reason, extra] of cases) {
    it(`line 2 = ${JSON.stringify(line).slice(0, 40)} → ${reason}`, () => {
      const ws = workspace();
      writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n${line}\n${rawLine("s", 2, user("c"))}\n`);
      const r = run("pixir-log", ["cat", "s", "--json"], { cwd: ws });
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.errJson.error.kind).toBe("corrupt_log_line");
      expect(r.errJson.error.details).toMatchObject({ reason, line: 2, path: ".pixir/sessions/s.ndjson", ...(extra ?? {}) });
    });
  }
  it("text mode prints the error line on stderr only", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n{not json}\n`);
    const r = run("pixir-log", ["cat", "s"], { cwd: ws });
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("error: corrupt_log_line: could not decode a log line (.pixir/sessions/s.ndjson:2: invalid_json)\nhint: run pixir-log check to list every problem in this log\n");
  });
  it("invalid UTF-8 is its own reason", () => {
    const ws = workspace();
    const file = writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n`);
    appendFileSync(file, Buffer.concat([Buffer.from('{"type":"user_message","data":{"text":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}\n')]));
    expect(run("pixir-log", ["cat", "s", "--json"], { cwd: ws }).errJson.error.details).toMatchObject({ reason: "invalid_utf8", line: 2 });
  });
});

describe("A9 blank lines and a missing final newline", () => {
  it("reads them, and append inserts the missing newline", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n\n\n${rawLine("s", 1, user("b"))}`);
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0, 1]);
    expect(run("pixir-log", ["append", "s"], { cwd: ws, input: lines({ type: "user_message", data: { text: "c" } }) }).code).toBe(0);
    const text = readLog(ws, "s");
    expect(text.endsWith("\n")).toBe(true);
    const physical = text.split("\n").filter((l) => l !== "");
    expect(physical).toHaveLength(3);
    expect(JSON.parse(physical[2]!)).toMatchObject({ seq: 2, data: { text: "c" } });
  });
  it("CRLF line endings are tolerated", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\r\n${rawLine("s", 1, user("b"))}\r\n`);
    const r = run("pixir-log", ["cat", "s"], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("\r");
    expect(r.lines.map((e) => e.seq)).toEqual([0, 1]);
  });
});

describe("A10 torn tail", () => {
  it("cat and append refuse; repair --dry-run reports; repair truncates; append continues at seq 2", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n${rawLine("s", 1, user("b"))}\n{"id":"x","ty`);
    const cat = run("pixir-log", ["cat", "s", "--json"], { cwd: ws });
    expect(cat.errJson.error.details.reason).toBe("torn_tail");
    expect(cat.errJson.error.details.next_actions.join(" ")).toContain("pixir-log repair");
    const before = readLog(ws, "s");
    const append = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: lines({ type: "user_message", data: {} }) });
    expect(append.code).toBe(1);
    expect(append.json.error).toMatchObject({ kind: "corrupt_log_line", details: { reason: "torn_tail" } });
    expect(readLog(ws, "s")).toBe(before);
    const dry = run("pixir-log", ["repair", "s", "--dry-run", "--json"], { cwd: ws });
    expect(dry.json).toMatchObject({ ok: true, recorded: false, dry_run: true, repaired: true, dropped_bytes: '{"id":"x","ty'.length, dropped_line: 3 });
    expect(readLog(ws, "s")).toBe(before);
    const fix = run("pixir-log", ["repair", "s"], { cwd: ws });
    expect(fix.stdout).toBe(`Repaired s: dropped ${'{"id":"x","ty'.length} bytes of a torn final line (line 3).\n`);
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).code).toBe(0);
    expect(run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: lines({ type: "user_message", data: {} }) }).json.first_seq).toBe(2);
    expect(run("pixir-log", ["repair", "s"], { cwd: ws }).stdout).toBe("Nothing to repair in s.\n");
  });
  it("a final line cut inside a multi-byte character is a torn tail too (was: invalid_utf8, which repair refused)", () => {
    const good = `${rawLine("s", 0, user("a"))}\n`;
    const put = (ws: string, bytes: Buffer) => {
      writeRaw(ws, "s", "");
      writeFileSync(logFile(ws, "s"), bytes);
    };
    for (const char of ["é", "€", "😀"]) {
      const whole = Buffer.from(`${rawLine("s", 1, user(`x${char}`))}\n`);
      const at = whole.indexOf(Buffer.from(char));
      for (let cut = at + 1; cut < at + Buffer.byteLength(char); cut++) {
        const ws = workspace();
        put(ws, Buffer.concat([Buffer.from(good), whole.subarray(0, cut)]));
        expect(run("pixir-log", ["cat", "s", "--json"], { cwd: ws }).errJson.error.details.reason, `${char} cut at ${cut - at}`).toBe("torn_tail");
        expect(run("pixir-log", ["repair", "s", "--json"], { cwd: ws }).json).toMatchObject({ ok: true, repaired: true, dropped_bytes: cut, dropped_line: 2 });
        expect(readLog(ws, "s")).toBe(good);
        // On stdin, a stream cut there is torn as well.
        const piped = run("pixir-log", ["write", "t", "--json"], { cwd: ws, input: Buffer.concat([Buffer.from(good.replaceAll('"s"', '"t"')), whole.subarray(0, cut)]) });
        expect(piped.json.error.details.reason).toBe("torn_tail");
      }
    }
    // Bytes that begin no character, or a cut character followed by a newline, stay invalid_utf8.
    for (const bad of [Buffer.from([0x7b, 0xff]), Buffer.from([0x7b, 0xe0, 0x80]), Buffer.from([0x7b, 0xc3, 0x0a]), Buffer.from([0x7b, 0xff, 0x41, 0xc3])]) {
      const ws = workspace();
      put(ws, Buffer.concat([Buffer.from(good), bad]));
      expect(run("pixir-log", ["cat", "s", "--json"], { cwd: ws }).errJson.error.details.reason, bad.toString("hex")).toBe("invalid_utf8");
    }
  });
  it("repair removes the temp files of an interrupted write of that Log (owner only), even where the Log never appeared", () => {
    const ws = workspace({ s: [user("a")], t: [user("b")] });
    const dir = path.join(ws, ".pixir", "sessions");
    const stale = ["s.ndjson.tmp-0123abcd", "s.ndjson.tmp-ffffffff", "gone.ndjson.tmp-00000000"];
    const kept = ["t.ndjson.tmp-0123abcd", "s.ndjson.tmp-xyz", "s2.ndjson.tmp-0123abcd"];
    for (const name of [...stale, ...kept]) writeFileSync(path.join(dir, name), "partial");
    const bytes = readLog(ws, "s");
    const rels = (names: string[]) => names.map((n) => `.pixir/sessions/${n}`);

    const dry = run("pixir-log", ["repair", "s", "--dry-run", "--json"], { cwd: ws });
    expect(dry.json).toMatchObject({ ok: true, recorded: false, repaired: false, removed_temp_files: rels(stale.slice(0, 2)) });
    expect(readdirSync(dir)).toHaveLength(8);
    // A borrower shares the lease with a writer whose temp file may be in flight: it removes nothing.
    const leases = path.join(ws, ".pixir", "session_leases");
    mkdirSync(leases, { recursive: true });
    const lease = { version: 1, purpose: "session_writer", session_id: "s", workspace: ws, holder_id: "wrl_0123456789abcdef", os_pid: "1", hostname: "elsewhere", heartbeat_at_ms: Date.now(), stale_after_ms: 600000 };
    writeFileSync(path.join(leases, "s.json"), JSON.stringify(lease));
    const borrowed = run("pixir-log", ["repair", "s", "--json"], { cwd: ws, env: { PIXIR_WRITER_LEASE: lease.holder_id } });
    expect(borrowed.json).toMatchObject({ ok: true, removed_temp_files: [] });
    expect(readdirSync(dir)).toHaveLength(8);
    rmSync(path.join(leases, "s.json"));

    const r = run("pixir-log", ["repair", "s"], { cwd: ws });
    expect(r.stdout).toBe("Repaired s: removed 2 temp files of an interrupted write.\n");
    expect(readLog(ws, "s")).toBe(bytes);
    const gone = run("pixir-log", ["repair", "gone", "--json"], { cwd: ws });
    expect(gone.json).toMatchObject({ ok: true, recorded: true, repaired: false, removed_temp_files: rels(["gone.ndjson.tmp-00000000"]) });
    expect(readdirSync(dir).sort()).toEqual(["s.ndjson", "t.ndjson", ...kept].sort());
    expect(run("pixir-log", ["check", "s", "--json"], { cwd: ws }).json.logs[0].warnings).toEqual([]);
    // Nothing left: not_found for a Log that never was, as before.
    expect(run("pixir-log", ["repair", "gone", "--json"], { cwd: ws }).json.error.kind).toBe("not_found");
  });
  it("repair refuses corruption that is not a torn tail and leaves the file alone", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n{bad}\n${rawLine("s", 2, user("c"))}\n`);
    const before = readLog(ws, "s");
    const r = run("pixir-log", ["repair", "s", "--json"], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.json.error.details).toMatchObject({ reason: "invalid_json", line: 2 });
    expect(readLog(ws, "s")).toBe(before);
  });
});

describe("A11 an append is all or nothing", () => {
  it("a text_delta third event leaves the Log byte-identical and no journal", () => {
    const ws = workspace({ s: [user("a"), assistant("b")] });
    const before = readLog(ws, "s");
    const r = run("pixir-log", ["append", "s"], {
      cwd: ws,
      input: lines({ type: "user_message", data: {} }, { type: "assistant_message", data: {} }, { type: "text_delta", data: {} }),
    });
    expect(r.code).toBe(1);
    expect(readLog(ws, "s")).toBe(before);
    expect(readdirSync(path.join(ws, ".pixir/sessions")).sort()).toEqual(["s.ndjson"]);
    expect(existsSync(path.join(ws, ".pixir/session_leases/s.json"))).toBe(false);
  });
});

describe("A12 crash recovery through the journal", () => {
  it("readers see the original length; check warns; the next append rolls back first", () => {
    const ws = workspace({ s: [user("a"), assistant("b")] });
    const file = logFile(ws, "s");
    const size = statSync(file).size;
    appendFileSync(file, '{"partial');
    writeFileSync(`${file}.append-journal`, JSON.stringify({ version: 1, original_length: size, holder_id: "wrl_0000000000000000", started_at: "2026-01-01T00:00:00Z" }));
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0, 1]);
    const check = run("pixir-log", ["check", "s", "--json"], { cwd: ws });
    expect(check.json.logs[0].warnings.map((w: { code: string }) => w.code)).toContain("append_journal_present");
    const r = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: lines({ type: "user_message", data: { text: "c" } }) });
    expect(r.json.first_seq).toBe(2);
    expect(existsSync(`${file}.append-journal`)).toBe(false);
    const text = readLog(ws, "s");
    expect(text).not.toContain("partial");
    expect(text.split("\n").filter(Boolean)).toHaveLength(3);
  });
});

describe("A13 lenient read and check", () => {
  const setup = () => {
    const ws = workspace();
    writeRaw(ws, "s", `${rawLine("s", 0, user("a"))}\n{bad\n${rawLine("s", 1, user("b"))}\n[1]\n${rawLine("s", 3, user("d"))}\n`);
    return ws;
  };
  it("cat --lenient prints 3 events, 2 warnings and a summary, exit 1; --exit-zero exits 0; --exit-zero alone is usage", () => {
    const ws = setup();
    const r = run("pixir-log", ["cat", "s", "--lenient"], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(3);
    const err = r.stderr.trim().split("\n");
    expect(err).toEqual([
      "warning: corrupt_log_line: line 2: invalid_json",
      "warning: corrupt_log_line: line 4: unexpected_shape",
      "error: corrupt_log_line: skipped 2 corrupt log lines (.pixir/sessions/s.ndjson; skipped=2)",
      "hint: run pixir-log check to list every problem in this log",
    ]);
    const json = run("pixir-log", ["cat", "s", "--lenient", "--json"], { cwd: ws });
    expect(json.errJson.error.details).toMatchObject({ skipped: 2, lines: [2, 4], path: ".pixir/sessions/s.ndjson" });
    expect(run("pixir-log", ["cat", "s", "--lenient", "--exit-zero"], { cwd: ws }).code).toBe(0);
    const usage = run("pixir-log", ["cat", "s", "--exit-zero"], { cwd: ws });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/^error: usage: /);
  });
  it("check --json: log_check_failed with 2 problems and a seq_gap warning; text lists all three", () => {
    const ws = setup();
    const r = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.json.error.kind).toBe("log_check_failed");
    expect(r.json.error.details.problem_count).toBe(2);
    expect(r.json.error.details.logs[0].warnings.map((w: { code: string }) => w.code)).toEqual(["seq_gap"]);
    const text = run("pixir-log", ["check"], { cwd: ws });
    expect(text.stdout).toContain("s:2: problem invalid_json:");
    expect(text.stdout).toContain("s:4: problem unexpected_shape:");
    expect(text.stdout).toContain("s:5: warning seq_gap:");
    expect(text.stdout).toContain("checked 1 logs: 2 problems, 1 warnings");
    expect(text.stderr).toBe("error: log_check_failed: log check found problems (checked=1 problem_count=2 warning_count=1)\nhint: fix or restore the listed logs; pixir-log repair handles torn tails only\n");
  });
  it("check warns about what readers tolerate", () => {
    const ws = workspace();
    writeRaw(ws, "w", [
      JSON.stringify({ id: "a", session_id: "w", seq: 0, ts: "2026-01-01T00:00:00Z", type: "user_message", data: {}, extra: 1 }),
      JSON.stringify({ id: "a", session_id: "other", seq: 0, ts: "yesterday", type: "user_message" }),
      JSON.stringify({ id: "c", session_id: "w", seq: null, ts: "2026-01-01T00:00:00Z", type: "session_fork", data: {} }),
    ].join("\n"));
    const codes = run("pixir-log", ["check", "w", "--json"], { cwd: ws }).json.logs[0].warnings.map((w: { code: string }) => w.code);
    for (const code of ["extra_field", "missing_field", "session_id_mismatch", "invalid_ts", "duplicate_seq", "duplicate_id", "null_seq", "session_fork_not_first", "missing_final_newline"]) {
      expect(codes).toContain(code);
    }
  });
});

describe("A14 strings that cannot be encoded", () => {
  it("a lone surrogate escape gives log_encode_failed and nothing is written", () => {
    const ws = workspace({ s: [user("a")] });
    const before = readLog(ws, "s");
    const r = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: '{"type":"user_message","data":{"text":"\\ud800"}}\n' });
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "log_encode_failed", details: { reason: "invalid_unicode", type: "user_message", line: 1 } });
    expect(readLog(ws, "s")).toBe(before);
  });
});

describe("cat filters and pipe etiquette", () => {
  it("--from-seq, --to-seq and --type select events; an unknown --type is invalid_args", () => {
    const ws = workspace({ s: [user("a"), assistant("b"), call("c1"), user("d")] });
    expect(run("pixir-log", ["cat", "s", "--from-seq", "1", "--to-seq", "2"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([1, 2]);
    expect(run("pixir-log", ["cat", "s", "--type", "user_message"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0, 3]);
    expect(run("pixir-log", ["cat", "s", "--type", "tool_call,assistant_message"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([1, 2]);
    expect(run("pixir-log", ["cat", "s", "--type", "user_message", "--type", "tool_call"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0, 2, 3]);
    const bad = run("pixir-log", ["cat", "s", "--type", "text_delta", "--json"], { cwd: ws });
    expect(bad.code).toBe(2);
    expect(bad.errJson.error).toMatchObject({ kind: "invalid_args", details: { field: "type" } });
  });
  it("a passed-through Log is byte-identical to the file", () => {
    const ws = workspace({ s: [user("é ✓ \u2028"), assistant("b")] });
    expect(run("pixir-log", ["cat", "s"], { cwd: ws }).stdout).toBe(readFileSync(logFile(ws, "s"), "utf8"));
  });
  it("| head -1 exits 0 quietly", () => {
    const ws = tempDir();
    const many = Array.from({ length: 20000 }, (_, i) => JSON.stringify({ type: "user_message", data: { text: `m${i} ${"x".repeat(100)}` } })).join("\n") + "\n";
    expect(run("pixir-log", ["append", "big"], { cwd: ws, input: many }).code).toBe(0);
    for (const args of ["cat big", "cat big --type user_message", "cat big --raw"]) {
      const r = sh(`pixir-log ${args} | head -1`, { cwd: ws });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(r.lines).toHaveLength(1);
    }
  });
});
