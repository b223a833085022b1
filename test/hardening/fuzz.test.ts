// Fuzz suite (docs/reliability.md §3): generated bad inputs for every tool. Each input is a valid
// Session (or stream, or pi file) with one defect injected, so the outcome is known: a structured error
// with the documented exit code (never a stack trace, never internal_error, never a hang) and nothing
// written, or, for what the spec tolerates, success with the data kept byte for byte. The bulk runs
// in-process through each tool's main(argv, io), every run in its own Workspace; a smaller sample of
// the same inputs runs through the built binaries. Inputs come from fast-check with a fixed seed.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binPath, ROOT, type RunResult, type Tool } from "../support/cli.js";
import {
  cleanEnv,
  expectDocumentedFailure,
  freshDir,
  LONG,
  nonEmptyLines,
  recordFigures,
  removeDir,
  runInProcess,
  scaled,
  SEED,
  snapshot,
  snapshotDiff,
  STACK,
  subSeed,
  type Channel,
} from "./support.js";

/** Inputs per tool in-process, and the share of them also run through the built binaries. */
const RUNS = scaled(40, 10_000);
const SPAWNED = scaled(3, 200);
const MAX_DEPTH = 1000;
/** Per property: the long run feeds 10,000 inputs through each. */
const TIMEOUT = LONG ? 4 * 3_600_000 : 120_000;

// ---------------------------------------------------------------------------------------------
// A private TMPDIR: pixir-fork spools a piped parent there and must remove it on every exit.

let tmpRoot: string;
const savedTmp = process.env.TMPDIR;
beforeAll(() => {
  tmpRoot = path.join(freshDir("pixir-fuzz-tmp-"));
  process.env.TMPDIR = tmpRoot;
});
afterAll(() => {
  process.env.TMPDIR = savedTmp;
  removeDir(tmpRoot);
});

const figures: Record<string, unknown> = {};
const started = Date.now();
afterAll(() => recordFigures("fuzz", { ...figures, duration_ms: Date.now() - started }));

// ---------------------------------------------------------------------------------------------
// Events as parts, so a defect can change one field's raw JSON text.

const ID = "s";
const TYPES = ["user_message", "assistant_message", "tool_call", "tool_result", "reasoning", "provider_usage"] as const;

interface Parts {
  /** Raw JSON text of each key, in line order; undefined drops the key. */
  fields: Array<[string, string | undefined]>;
  /** The compact text of `data` as it must be stored. */
  dataText: string;
  type: string;
}

const tsOf = (seq: number) => `2026-07-20T10:${String(Math.floor(seq / 60) % 60).padStart(2, "0")}:${String(seq % 60).padStart(2, "0")}.000Z`;

function stamped(seq: number, type: string, dataText: string, id = ID): Parts {
  return {
    fields: [
      ["id", JSON.stringify(`e${seq}`)],
      ["session_id", JSON.stringify(id)],
      ["seq", String(seq)],
      ["ts", JSON.stringify(tsOf(seq))],
      ["type", JSON.stringify(type)],
      ["data", dataText],
    ],
    dataText,
    type,
  };
}

const partial = (type: string, dataText: string): Parts => ({ fields: [["type", JSON.stringify(type)], ["data", dataText]], dataText, type });

function lineText(p: Parts): string {
  return `{${p.fields
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(",")}}`;
}

function setField(p: Parts, key: string, raw: string | undefined): Parts {
  const fields = p.fields.some(([k]) => k === key) ? p.fields.map(([k, v]): [string, string | undefined] => [k, k === key ? raw : v]) : [...p.fields, [key, raw] as [string, string | undefined]];
  return { ...p, fields };
}

const word = fc.string({ unit: fc.constantFrom(..."abcdefghijklmnopqrstuvwxyz_ 0123456789é你🙂\\\"/\t"), maxLength: 24 });
const dataValue: fc.Arbitrary<unknown> = fc.oneof(word, fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer({ min: -5, max: 5 }), { maxLength: 3 }), fc.double({ noNaN: true, noDefaultInfinity: true }));
const dataText: fc.Arbitrary<string> = fc
  .uniqueArray(fc.tuple(fc.constantFrom("text", "call_id", "name", "ok", "n", "list", "k"), dataValue), { maxLength: 4, selector: ([k]) => k })
  .map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(",")}}`);

// ---------------------------------------------------------------------------------------------
// Defects. Each gives the defective line and the outcome for each way of using it.

type Outcome = { ok: true } | { kind: string; reason?: string; field?: string };
const OK: Outcome = { ok: true };
/** Unusual but valid `data`, stored byte for byte by every writer and read back as it is. */
const keptData = (name: string, data: string): Defect => ({ name, line: (p) => text(lineText(setField(p, "data", data))), write: OK, append: OK, read: OK, storedData: () => data });
const corrupt = (reason: string, field?: string): Outcome => ({ kind: "corrupt_log_line", reason, ...(field ? { field } : {}) });
const integrity = (reason: string): Outcome => ({ kind: "stream_integrity_failed", reason });
const invalidId: Outcome = { kind: "invalid_args", field: "session_id" };

interface Defect {
  name: string;
  /** The bytes of line i (without `\n`), given its valid parts and whether the line is a partial append line. */
  line: (p: Parts) => Buffer;
  /** pixir-log write of a stamped stream; pixir-log append of stamped or partial lines; a Log line seen by readers. */
  write: Outcome;
  append: Outcome;
  read: Outcome;
  /** The line's data as it must be stored when the outcome is ok (default: the parts' dataText). */
  storedData?: (p: Parts) => string;
  /** The defect only makes sense on a stamped line (it removes or changes stamped fields). */
  stampedOnly?: boolean;
  /** A secret that must never be echoed (invalid ids). */
  secret?: string;
  /** To pixir-tree's fast scan, which reads the head and then only needs the line to end in `}}`, the
   * defect looks like bytes inside `data` (tree.md §2.7; docs/cli-contract.md). */
  looksLikeData?: boolean;
}

const text = (s: string) => Buffer.from(s, "utf8");
const withField = (key: string, raw: string | undefined) => (p: Parts) => text(lineText(setField(p, key, raw)));
const deep = (d: number) => `${"[".repeat(d - 1)}${"]".repeat(d - 1)}`;

/** `bytes` inserted before the character at UTF-16 index `at` (never inside a character's encoding). */
function insertBytes(line: string, at: number, bytes: readonly number[]): Buffer {
  let k = Math.min(Math.max(at, 1), line.length - 1);
  if (k > 0 && /[\ud800-\udbff]/.test(line[k - 1]!)) k--; // not between the halves of a surrogate pair
  const b = text(line);
  const i = Buffer.byteLength(line.slice(0, k), "utf8");
  return Buffer.concat([b.subarray(0, i), Buffer.from(bytes), b.subarray(i)]);
}

/** Positions inside the `data` text, so an inserted byte lands inside the Event, not after it. */
function insideData(line: string, p: Parts, frac: number): number {
  const start = line.lastIndexOf(p.dataText);
  return start + 1 + Math.floor(frac * Math.max(p.dataText.length - 2, 0));
}

const defects: fc.Arbitrary<Defect> = fc.oneof(
  // Broken JSON: a cut line, trailing or leading junk, whitespace only, a BOM, NUL bytes.
  fc.double({ min: 0, max: 0.999, noNaN: true }).map((f): Defect => ({
    name: "truncated",
    line: (p) => {
      const l = lineText(p);
      return text(l.slice(0, 1 + Math.floor(f * (l.length - 1))));
    },
    write: corrupt("invalid_json"),
    append: corrupt("invalid_json"),
    read: corrupt("invalid_json"),
  })),
  fc.constantFrom("x", "}", ",", "]", " x", "{}", '"').map((junk): Defect => ({ name: "trailing_junk", line: (p) => text(lineText(p) + junk), write: corrupt("invalid_json"), append: corrupt("invalid_json"), read: corrupt("invalid_json"), looksLikeData: junk === "}" })),
  fc.constantFrom("x", ",", "]", "//").map((junk): Defect => ({ name: "leading_junk", line: (p) => text(junk + lineText(p)), write: corrupt("invalid_json"), append: corrupt("invalid_json"), read: corrupt("invalid_json") })),
  fc.constantFrom(" ", "\t", " \t ", "\r").map((ws): Defect => ({ name: "whitespace_line", line: () => text(ws), write: corrupt("invalid_json"), append: corrupt("invalid_json"), read: corrupt("invalid_json") })),
  fc.constant<Defect>({ name: "bom", line: (p) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text(lineText(p))]), write: corrupt("invalid_json"), append: corrupt("invalid_json"), read: corrupt("invalid_json") }),
  fc.double({ min: 0, max: 1, noNaN: true }).map((f): Defect => ({
    name: "nul_byte",
    line: (p) => {
      const l = lineText(p);
      return insertBytes(l, insideData(l, p, f), [0]);
    },
    write: corrupt("invalid_json"),
    append: corrupt("invalid_json"),
    read: corrupt("invalid_json"),
  })),
  // Invalid UTF-8 anywhere in the line.
  fc
    .tuple(fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([bytes, f]): Defect => ({
      name: "invalid_utf8",
      line: (p) => {
        const l = lineText(p);
        return insertBytes(l, insideData(l, p, f), bytes);
      },
      write: corrupt("invalid_utf8"),
      append: corrupt("invalid_utf8"),
      read: corrupt("invalid_utf8"),
    })),
  // Not an object; a wrong or missing type; unknown and ephemeral types.
  fc.constantFrom("[1,2]", '"str"', "5", "null", "true", "[]").map((v): Defect => ({ name: "not_object", line: () => text(v), write: corrupt("unexpected_shape"), append: corrupt("unexpected_shape"), read: corrupt("unexpected_shape") })),
  fc.constantFrom("5", "null", "[]", "{}", "true", undefined).map((v): Defect => ({ name: "type_wrong", line: withField("type", v), write: corrupt("missing_event_type"), append: corrupt("missing_event_type"), read: corrupt("missing_event_type") })),
  fc
    .oneof(fc.constantFrom("skill_context_hydration", "User_message", "user_message ", "", "__proto__", "constructor", "toString"), fc.string({ maxLength: 80 }))
    .filter((t) => !(TYPES as readonly string[]).includes(t) && !["skill_activation", "subagent_event", "workflow_event", "session_fork", "branch_summary", "history_compaction", "turn_failed", "permission_decision", "text_delta", "reasoning_delta", "status", "plan", "context_pressure"].includes(t))
    .map((t): Defect => ({ name: "unknown_type", line: withField("type", JSON.stringify(t)), write: corrupt("unknown_event_type"), append: corrupt("unknown_event_type"), read: corrupt("unknown_event_type") })),
  fc.constantFrom("text_delta", "reasoning_delta", "status", "plan", "context_pressure").map((t): Defect => ({
    name: "ephemeral_type",
    line: withField("type", JSON.stringify(t)),
    write: { kind: "ephemeral_not_loggable" },
    append: { kind: "ephemeral_not_loggable" },
    read: corrupt("unknown_event_type"),
  })),
  // Wrong types of envelope fields; huge, negative and fractional seqs.
  fc.constantFrom('"1"', "1.5", "true", "[]", "{}", "-1", "9007199254740992", "1e400", "-1e400", "18446744073709551616", "-0.5").map((v): Defect => ({
    name: "seq_invalid",
    line: withField("seq", v),
    write: corrupt("invalid_seq"),
    append: corrupt("invalid_seq"),
    read: corrupt("invalid_seq"),
  })),
  fc.constantFrom("[]", '"x"', "5", "true", "[1]").map((v): Defect => ({ name: "data_wrong", line: withField("data", v), write: corrupt("invalid_data"), append: corrupt("invalid_data"), read: corrupt("invalid_data") })),
  fc.constantFrom("5", "true", "{}", "[]").map((v): Defect => ({ name: "id_wrong", line: withField("id", v), write: corrupt("invalid_field", "id"), append: corrupt("invalid_field", "id"), read: corrupt("invalid_field", "id") })),
  fc.constantFrom("5", "true", "{}", "[]").map((v): Defect => ({ name: "ts_wrong", line: withField("ts", v), write: corrupt("invalid_field", "ts"), append: corrupt("invalid_field", "ts"), read: corrupt("invalid_field", "ts") })),
  fc.constantFrom("5", "true", "{}", "[]").map((v): Defect => ({ name: "session_id_wrong", line: withField("session_id", v), write: invalidId, append: invalidId, read: corrupt("invalid_field", "session_id") })),
  fc.constantFrom("../../outside/PWN", "a b", ".", "..", "-PWN", "a\nb", "a\u0000b", "a;$HOME", "a%2fb", "b".repeat(236), "é".repeat(118)).map((v): Defect => ({
    name: "session_id_invalid",
    line: withField("session_id", JSON.stringify(v)),
    write: invalidId,
    append: invalidId,
    read: OK,
    secret: v.length > 3 ? v : undefined,
  })),
  fc.constant<Defect>({ name: "session_id_other", line: withField("session_id", '"other"'), write: integrity("session_id_mismatch"), append: integrity("session_id_mismatch"), read: OK }),
  // Missing and null fields: write needs stamped Events, append stamps them, readers tolerate them.
  fc.constantFrom(
    ["id", corrupt("invalid_field", "id")],
    ["ts", corrupt("invalid_field", "ts")],
    ["seq", integrity("seq_gap")],
    ["data", corrupt("invalid_data")],
    ["session_id", corrupt("invalid_field", "session_id")],
  ).map(([key, onWrite]): Defect => ({ name: `missing_${key}`, line: withField(key as string, undefined), write: onWrite as Outcome, append: OK, read: OK, stampedOnly: true, storedData: (p) => (key === "data" ? "{}" : p.dataText) })),
  fc.constantFrom(
    ["id", corrupt("invalid_field", "id"), corrupt("invalid_field", "id")],
    ["ts", corrupt("invalid_field", "ts"), corrupt("invalid_field", "ts")],
    ["seq", integrity("seq_gap"), OK],
    ["session_id", invalidId, invalidId],
    ["data", corrupt("invalid_data"), corrupt("invalid_data")],
  ).map(([key, onWrite, onAppend]): Defect => ({ name: `null_${key}`, line: withField(key as string, "null"), write: onWrite as Outcome, append: onAppend as Outcome, read: OK, stampedOnly: true, storedData: (p) => (key === "data" ? "{}" : p.dataText) })),
  fc.constant<Defect>({ name: "empty_id", line: withField("id", '""'), write: corrupt("invalid_field", "id"), append: corrupt("invalid_field", "id"), read: OK }),
  fc.constantFrom(-1, 1, 2, 1000).map((delta): Defect => ({
    name: "seq_off",
    line: (p) => {
      const seq = Number(p.fields.find(([k]) => k === "seq")?.[1] ?? "0");
      return text(lineText(setField(p, "seq", String(Math.max(seq + delta, 0) === seq ? seq + 1 : Math.max(seq + delta, 0)))));
    },
    write: integrity("seq_gap|seq_conflict"),
    append: integrity("seq_conflict"),
    read: OK,
    stampedOnly: true,
  })),
  // Lone surrogates cannot be stored (envelope-and-log.md §3); readers pass them through.
  fc.constantFrom("\\ud800", "\\udfff", "x\\ud83dy").map((esc): Defect => ({
    name: "lone_surrogate",
    line: (p) => text(lineText(setField(p, "data", `{"text":"${esc}"}`))),
    write: { kind: "log_encode_failed", reason: "invalid_unicode" },
    append: { kind: "log_encode_failed", reason: "invalid_unicode" },
    read: OK,
    storedData: () => `{"text":"${esc}"}`,
  })),
  // Deep nesting: up to the limit it is data; beyond it a line is refused before anything recurses.
  fc.integer({ min: 2, max: MAX_DEPTH - 2 }).map((d) => keptData("deep_ok", `{"deep":${deep(d)}}`)),
  fc.integer({ min: MAX_DEPTH, max: 200_000 }).map((d): Defect => ({
    name: "deep_refused",
    line: (p) => text(lineText(setField(p, "data", `{"deep":${deep(d)}}`))),
    write: corrupt("nesting_too_deep"),
    append: corrupt("nesting_too_deep"),
    read: corrupt("nesting_too_deep"),
  })),
  // Valid but unusual: kept byte for byte.
  fc.constantFrom("1e400", "-1e400", "12345678901234567890", "1.00000000000000000001", "-0", "1E+2", "5e-324", "1e-400").map((n) => keptData("huge_number_in_data", `{"n":${n},"m":[${n}]}`)),
  fc.constant<Defect>({ name: "crlf", line: (p) => text(`${lineText(p)}\r`), write: OK, append: OK, read: OK }),
  fc.constant(keptData("proto_in_data", '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}')),
  fc.constantFrom('"__proto__"', '"extra"', '"constructor"').map((key): Defect => ({
    name: "extra_top_level_key",
    line: (p) => text(lineText(p).replace(/^\{/, `{${key}:{"polluted":1},`)),
    write: OK,
    append: OK,
    read: OK,
  })),
  fc.constant(keptData("nul_escape", '{"text":"a\\u0000b"}')),
  fc.constant<Defect>({
    name: "sorted_keys",
    line: (p) => text(lineText({ ...p, fields: [...p.fields].sort(([a], [b]) => (a < b ? -1 : 1)) })),
    write: OK,
    append: OK,
    read: OK,
  }),
  fc.constant<Defect>({
    name: "spaced_json",
    line: (p) =>
      text(
        `{ ${p.fields
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => `${JSON.stringify(k)} :\t${k === "data" ? v!.replace(/([,:])/g, "$1 ").replace(/^\{/, "{ ") : v}`)
          .join(" , ")} }`,
      ),
    write: OK,
    append: OK,
    read: OK,
  }),
);

/** Rare and large: a 10 MB string (valid) and a line over the 32 MiB limit (refused). */
const bigDefects: fc.Arbitrary<Defect> = fc.constantFrom<Defect>(
  {
    name: "ten_mb_string",
    line: (p) => text(lineText(setField(p, "data", `{"text":"${"x".repeat(10 * 1024 * 1024)}"}`))),
    write: OK,
    append: OK,
    read: OK,
    storedData: () => `{"text":"${"x".repeat(10 * 1024 * 1024)}"}`,
  },
  {
    name: "line_too_long",
    line: (p) => text(lineText(setField(p, "data", `{"text":"${"x".repeat(33 * 1024 * 1024)}"}`))),
    write: corrupt("line_too_long"),
    append: corrupt("line_too_long"),
    read: corrupt("line_too_long"),
  },
);

describe("fuzz: large inputs, once each in every run", () => {
  it("10 MB strings are written and read back byte for byte; a line over 32 MiB is refused without a write", async () => {
    for (const d of [bigDefects.filter((x) => x.name === "ten_mb_string"), bigDefects.filter((x) => x.name === "line_too_long")]) {
      const [defect] = fc.sample(d, { seed: SEED, numRuns: 1 });
      const c: Case = { existing: [], lines: [stamped(0, "user_message", '{"text":"a"}'), stamped(1, "tool_result", '{"ok":true}')], defectAt: 1, defect: defect!, torn: false };
      for (const argv of [["write", ID, "--json"], ["append", ID, "--json"]]) {
        await withWorkspace({}, async (ws) => {
          const before = snapshot(ws);
          const r = await runInProcess("pixir-log", argv, { cwd: ws, input: streamBytes(c) });
          if (judge(r, defect!.write, "report", true) !== null) return nothingWritten(ws, before);
          const cat = await runInProcess("pixir-log", ["cat", ID], { cwd: ws });
          expect(storedDataTexts(cat.stdout)[1]).toBe(defect!.storedData!(c.lines[1]!));
        });
      }
      await withWorkspace({ [ID]: streamBytes(c) }, async (ws) => {
        const r = await runInProcess("pixir-log", ["cat", ID, "--json"], { cwd: ws });
        judge(r, defect!.read, "stream", true);
      });
    }
  }, 120_000);
});

const anyDefect = fc.oneof({ weight: 200, arbitrary: defects }, { weight: LONG ? 1 : 0, arbitrary: bigDefects });

// ---------------------------------------------------------------------------------------------
// Cases

interface Case {
  /** Valid Events already in the Log (0 = no Log). */
  existing: Parts[];
  /** The lines of the input (stdin or the Log under test); `defectAt` is the defective one. */
  lines: Parts[];
  defectAt: number;
  defect: Defect;
  /** The defective line goes last without its `\n` (a torn tail). */
  torn: boolean;
}

const lineBytes = (c: Case, i: number, p: Parts): Buffer => (i === c.defectAt ? c.defect.line(p) : text(lineText(p)));

function streamBytes(c: Case): Buffer {
  const parts: Buffer[] = [];
  c.lines.forEach((p, i) => {
    parts.push(lineBytes(c, i, p));
    if (!(c.torn && i === c.lines.length - 1)) parts.push(Buffer.from("\n"));
  });
  return Buffer.concat(parts);
}

const existingLog = (events: Parts[]): Buffer => Buffer.from(events.map((p) => `${lineText(p)}\n`).join(""));

/** A stream of stamped Events continuing `existing`, with one defect. */
function stampedCase(opts: { maxExisting: number; partialLines?: boolean; defect?: fc.Arbitrary<Defect> }): fc.Arbitrary<Case> {
  return fc
    .record({
      existingData: fc.array(fc.tuple(fc.constantFrom(...TYPES), dataText), { maxLength: opts.maxExisting }),
      newData: fc.array(fc.tuple(fc.constantFrom(...TYPES), dataText, fc.boolean()), { minLength: 1, maxLength: 5 }),
      defect: opts.defect ?? anyDefect,
      at: fc.nat(),
      torn: fc.boolean(),
    })
    .map(({ existingData, newData, defect, at, torn }) => {
      const existing = existingData.map(([t, d], i) => stamped(i, t, d));
      const defectAt = at % newData.length;
      const lines = newData.map(([t, d, full], i) =>
        opts.partialLines && !full && !(i === defectAt && defect.stampedOnly) ? partial(t, d) : stamped(existing.length + i, t, d),
      );
      return { existing, lines, defectAt, defect, torn: torn && defectAt === lines.length - 1 && ["truncated", "trailing_junk"].includes(defect.name) };
    });
}

// ---------------------------------------------------------------------------------------------
// Runners and checks

type Runner = (tool: Tool, argv: string[], options: { cwd: string; input?: Buffer }) => Promise<RunResult & { hung?: boolean }>;

const inProcess: Runner = (tool, argv, options) => runInProcess(tool, argv, options);

const spawned: Runner = async (tool, argv, options) => {
  const r = spawnSync(process.execPath, [binPath(tool), ...argv], {
    cwd: options.cwd,
    input: options.input ?? "",
    env: cleanEnv({ TMPDIR: tmpRoot }),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    timeout: 60_000,
    killSignal: "SIGKILL",
  });
  const hung = (r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT";
  const parse = (t: string) => {
    try {
      return JSON.parse(t);
    } catch {
      return undefined;
    }
  };
  return {
    code: r.status ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    json: parse(r.stdout),
    errJson: parse(r.stderr.trim().split("\n").at(-1) ?? ""),
    lines: [],
    hung,
  };
};

function matches(err: { kind: string; details: Record<string, any> }, o: Outcome): void {
  if ("ok" in o) return;
  const kinds = o.kind.split("|");
  expect(kinds, `error kind ${err.kind}, details ${JSON.stringify(err.details).slice(0, 300)}`).toContain(err.kind);
  if (o.reason !== undefined) expect(o.reason.split("|")).toContain(err.details.reason);
  if (o.field !== undefined) expect(err.details.field).toBe(o.field);
}

/** The common contract of one run: finished, no stack trace, no secret echoed, documented failure. */
function judge(r: RunResult & { hung?: boolean }, expected: Outcome, channel: Channel, json: boolean, secret?: string): { kind: string; details: Record<string, any> } | null {
  expect(r.hung ?? false, "the run finished").toBe(false);
  expect(r.stderr, "no stack trace").not.toMatch(STACK);
  if (secret !== undefined) {
    expect(r.stdout.includes(secret) || r.stderr.includes(secret) || r.stdout.includes(JSON.stringify(secret).slice(1, -1)) || r.stderr.includes(JSON.stringify(secret).slice(1, -1)), "the invalid id is never echoed").toBe(false);
  }
  if ("ok" in expected) {
    expect(r.code, `expected success, got ${r.stderr.slice(0, 400)}${r.stdout.slice(0, 400)}`).toBe(0);
    return null;
  }
  expect(r.code, "expected a failure").not.toBe(0);
  const err = expectDocumentedFailure(r, channel, json);
  if (json) matches(err, expected);
  else expect(expected.kind.split("|")).toContain(err.kind);
  return err;
}

/** The `data` text of each line of our own key order (data is the last key). */
const storedDataTexts = (log: string): string[] =>
  nonEmptyLines(log).map((l) => {
    const i = l.indexOf('"data":');
    return l.slice(i + 7, -1);
  });

function compact(json: string): string {
  // Whitespace outside strings removed: the stored form of a spaced input.
  let out = "";
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json[i]!;
    if (inString) {
      out += ch;
      if (ch === "\\") out += json[++i] ?? "";
      else if (ch === '"') inString = false;
    } else if (ch === '"') {
      inString = true;
      out += ch;
    } else if (!" \t\r\n".includes(ch)) out += ch;
  }
  return out;
}

const ALL_RUNS: Record<string, number> = {};
const count = (name: string) => (ALL_RUNS[name] = (ALL_RUNS[name] ?? 0) + 1);
afterAll(() => {
  figures.runs_by_property = ALL_RUNS;
  figures.total_runs = Object.values(ALL_RUNS).reduce((a, b) => a + b, 0);
});

/** fast-check with the suite's seed; each property gets its own derived seed. */
const PROPERTY_MS: Record<string, number> = {};
afterAll(() => {
  figures.ms_by_property = PROPERTY_MS;
});

async function property<T>(name: string, arb: fc.Arbitrary<T>, body: (value: T, runner: Runner) => Promise<void>): Promise<void> {
  const seed = subSeed(name);
  const t0 = Date.now();
  await fc.assert(
    fc.asyncProperty(arb, async (v) => {
      count(name);
      await body(v, inProcess);
    }),
    { seed, numRuns: RUNS, endOnFailure: true },
  );
  // The same inputs (the first few of the sequence) through the built binaries.
  for (const v of fc.sample(arb, { seed, numRuns: SPAWNED })) {
    count(`${name} (spawned)`);
    await body(v, spawned);
  }
  PROPERTY_MS[name] = Date.now() - t0;
}

/** A Workspace for one run, holding `logs`; removed afterwards even when the run fails. */
async function withWorkspace(logs: Record<string, Buffer>, body: (ws: string) => Promise<void>): Promise<void> {
  const ws = freshDir();
  try {
    if (Object.keys(logs).length > 0) {
      mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
      for (const [id, bytes] of Object.entries(logs)) writeFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), bytes);
    }
    await body(ws);
    expect(readdirSync(tmpRoot).filter((n) => n.startsWith("pixir-fork-")), "no spool file left behind").toEqual([]);
  } finally {
    removeDir(ws);
  }
}

const nothingWritten = (ws: string, before: Map<string, string>) => expect(snapshotDiff(before, snapshot(ws)), "nothing written").toEqual([]);

// ---------------------------------------------------------------------------------------------
// Writers fed on stdin

describe("fuzz: pixir-log write and append", () => {
  it("pixir-log write: a defective stamped stream fails with its documented error and writes nothing", async () => {
    await property("write", fc.tuple(stampedCase({ maxExisting: 3 }), fc.boolean(), fc.boolean()), async ([c, json, viaWrapper], runner) => {
      await withWorkspace(c.existing.length > 0 ? { [ID]: existingLog(c.existing) } : {}, async (ws) => {
        const before = snapshot(ws);
        const argv = [...(viaWrapper ? ["log"] : []), "write", ID, ...(json ? ["--json"] : [])];
        const r = await runner(viaWrapper ? "pixir" : "pixir-log", argv, { cwd: ws, input: streamBytes(c) });
        const expected = c.torn && !("ok" in c.defect.write) ? corrupt("torn_tail") : c.torn ? OK : c.defect.write;
        if (judge(r, expected, "report", json, c.defect.secret) !== null) return nothingWritten(ws, before);
        const log = readFileSync(path.join(ws, ".pixir", "sessions", `${ID}.ndjson`), "utf8");
        expect(log.startsWith(existingLog(c.existing).toString())).toBe(true);
        const stored = storedDataTexts(log).slice(c.existing.length);
        expect(stored).toHaveLength(c.lines.length);
        c.lines.forEach((p, i) => expect(stored[i]).toBe(compact(i === c.defectAt && c.defect.storedData ? c.defect.storedData(p) : p.dataText)));
        expect(readdirSync(path.join(ws, ".pixir", "session_leases")), "the lease is released").toEqual([]);
      });
    });
  }, TIMEOUT);

  it("pixir-log append: defective lines (stamped or partial) fail with their documented error and write nothing", async () => {
    await property("append", fc.tuple(stampedCase({ maxExisting: 3, partialLines: true }), fc.boolean(), fc.boolean()), async ([c, json, viaWrapper], runner) => {
      await withWorkspace(c.existing.length > 0 ? { [ID]: existingLog(c.existing) } : {}, async (ws) => {
        const before = snapshot(ws);
        const argv = ["append", ID, ...(json ? ["--json"] : [])];
        const r = await runner(viaWrapper ? "pixir" : "pixir-log", argv, { cwd: ws, input: streamBytes(c) });
        const expected = c.torn && !("ok" in c.defect.append) ? corrupt("torn_tail") : c.torn ? OK : c.defect.append;
        if (judge(r, expected, "report", json, c.defect.secret) !== null) return nothingWritten(ws, before);
        const log = readFileSync(path.join(ws, ".pixir", "sessions", `${ID}.ndjson`), "utf8");
        expect(log.startsWith(existingLog(c.existing).toString())).toBe(true);
        const events = nonEmptyLines(log).map((l) => JSON.parse(l));
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
        const stored = storedDataTexts(log).slice(c.existing.length);
        c.lines.forEach((p, i) => expect(stored[i]).toBe(compact(i === c.defectAt && c.defect.storedData ? c.defect.storedData(p) : p.dataText)));
      });
    });
  }, TIMEOUT);

  it("pixir-log append --drop-ephemeral and --dry-run never write what they refuse", async () => {
    const arb = fc.tuple(stampedCase({ maxExisting: 2, partialLines: true }), fc.constantFrom<string[]>(["--dry-run"], ["--drop-ephemeral"], ["--dry-run", "--drop-ephemeral"]));
    await property("append-flags", arb, async ([c, flags], runner) => {
      await withWorkspace(c.existing.length > 0 ? { [ID]: existingLog(c.existing) } : {}, async (ws) => {
        const before = snapshot(ws);
        const r = await runner("pixir-log", ["append", ID, "--json", ...flags], { cwd: ws, input: streamBytes(c) });
        const dropped = flags.includes("--drop-ephemeral") && c.defect.name === "ephemeral_type" && !c.torn;
        // A dropped Event takes no seq: a stamped line after it then carries a seq one too high.
        const stampedAfter = c.lines.slice(c.defectAt + 1).some((p) => p.fields.some(([k]) => k === "seq"));
        const expected = c.torn && !("ok" in c.defect.append) ? corrupt("torn_tail") : dropped && stampedAfter ? integrity("seq_conflict") : c.torn || dropped ? OK : c.defect.append;
        const failed = judge(r, expected, "report", true, c.defect.secret) !== null;
        if (failed || flags.includes("--dry-run")) nothingWritten(ws, before);
        if (dropped && r.code === 0) expect(r.json.dropped_ephemeral).toBe(1);
      });
    });
  }, TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// Readers of a Log with one defective line

/** Defects that live inside `data` only. */
const DATA_INTERIOR = new Set(["deep_refused", "invalid_utf8", "nul_byte"]);

/** Defects that keep every seq and type: a fork of such a Log inherits every replayable line. */
const PRESERVING = new Set(["huge_number_in_data", "proto_in_data", "nul_escape", "crlf", "sorted_keys", "spaced_json", "deep_ok", "extra_top_level_key", "ten_mb_string", "lone_surrogate"]);

type ReaderCommand = { name: string; tool: Tool; argv: string[]; channel: Channel; json: boolean; writes?: boolean };

const READERS: ReaderCommand[] = [
  { name: "cat", tool: "pixir-log", argv: ["cat", ID], channel: "stream", json: false },
  { name: "cat --json", tool: "pixir-log", argv: ["cat", ID, "--json"], channel: "stream", json: true },
  { name: "cat --raw", tool: "pixir-log", argv: ["cat", ID, "--raw", "--json"], channel: "stream", json: true },
  { name: "cat --from-seq", tool: "pixir-log", argv: ["cat", ID, "--from-seq", "1", "--type", "user_message,tool_call"], channel: "stream", json: false },
];

/** How each reader reports a Log that readers reject (`read` outcome), or tolerate. */
function readerOutcome(cmd: string, read: Outcome): Outcome {
  if ("ok" in read) return OK;
  if (cmd.startsWith("check")) return { kind: "log_check_failed" };
  return read;
}

describe("fuzz: readers of a defective Log", () => {
  it("pixir-log cat (plain, --raw, filtered): the documented corrupt_log_line or the tolerated History; nothing written", async () => {
    const arb = fc.tuple(stampedCase({ maxExisting: 0 }), fc.constantFrom(...READERS));
    await property("cat", arb, async ([c, cmd], runner) => {
      await withWorkspace({ [ID]: streamBytes(c) }, async (ws) => {
        const before = snapshot(ws);
        const r = await runner(cmd.tool, cmd.argv, { cwd: ws });
        const read = c.torn && !("ok" in c.defect.read) ? corrupt("torn_tail") : c.defect.read;
        const err = judge(r, readerOutcome(cmd.name, read), cmd.channel, cmd.json);
        if (err !== null) expect(r.stdout, "a failed read prints nothing").toBe("");
        nothingWritten(ws, before);
      });
    });
  }, TIMEOUT);

  it("pixir-log cat --lenient: skips exactly the rejected line, exit 1 (0 with --exit-zero)", async () => {
    const arb = fc.tuple(stampedCase({ maxExisting: 0 }), fc.boolean());
    await property("cat-lenient", arb, async ([c, exitZero], runner) => {
      await withWorkspace({ [ID]: streamBytes(c) }, async (ws) => {
        const before = snapshot(ws);
        const r = await runner("pixir-log", ["cat", ID, "--lenient", "--json", ...(exitZero ? ["--exit-zero"] : [])], { cwd: ws });
        expect(r.stderr).not.toMatch(STACK);
        const rejected = !("ok" in c.defect.read) || c.torn;
        if (c.defect.name === "line_too_long") {
          // A line over the limit is refused without being buffered: the read stops there.
          expect(r.code).toBe(1);
        } else {
          expect(r.code).toBe(rejected && !exitZero ? 1 : 0);
          expect(nonEmptyLines(r.stdout)).toHaveLength(c.lines.length - (rejected ? 1 : 0));
        }
        if (rejected && !exitZero && c.defect.name !== "line_too_long") expect(JSON.parse(nonEmptyLines(r.stderr).at(-1)!).error).toMatchObject({ kind: "corrupt_log_line", details: { skipped: 1 } });
        nothingWritten(ws, before);
      });
    });
  }, TIMEOUT);

  it("pixir-log check: every rejected line is a problem (exit 1, log_check_failed), tolerated ones warnings", async () => {
    const arb = fc.tuple(stampedCase({ maxExisting: 0 }), fc.boolean(), fc.boolean());
    await property("check", arb, async ([c, named, json], runner) => {
      await withWorkspace({ [ID]: streamBytes(c) }, async (ws) => {
        const before = snapshot(ws);
        const r = await runner("pixir-log", ["check", ...(named ? [ID] : []), ...(json ? ["--json"] : [])], { cwd: ws });
        const read = c.torn && !("ok" in c.defect.read) ? corrupt("torn_tail") : c.defect.read;
        const err = judge(r, readerOutcome("check", read), "report", json);
        if (err !== null && json && "reason" in read) expect(err.details.logs[0].problems.map((p: { code: string }) => p.code)).toContain(read.reason);
        nothingWritten(ws, before);
      });
    });
  }, TIMEOUT);

  it("pixir-log repair: drops only a torn tail; any other defect is refused and the Log left byte-identical", async () => {
    const arb = fc.tuple(stampedCase({ maxExisting: 0 }), fc.boolean(), fc.boolean());
    await property("repair", arb, async ([c, dryRun, viaWrapper], runner) => {
      const bytes = streamBytes(c);
      await withWorkspace({ [ID]: bytes }, async (ws) => {
        const before = snapshot(ws);
        const argv = [...(viaWrapper ? [] : []), "repair", ID, "--json", ...(dryRun ? ["--dry-run"] : [])];
        const r = await runner(viaWrapper ? "pixir" : "pixir-log", argv, { cwd: ws });
        const read = c.torn && !("ok" in c.defect.read) ? OK : c.defect.read;
        const err = judge(r, read, "report", true);
        const after = readFileSync(path.join(ws, ".pixir", "sessions", `${ID}.ndjson`));
        if (err !== null || dryRun) {
          nothingWritten(ws, before);
          return;
        }
        if (c.torn && !("ok" in c.defect.read)) {
          // The torn line is gone and every complete line stays; `pixir repair` then closes the tool calls
          // left open (cli.md §12.12), and nothing else is added.
          const kept = bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1);
          expect(after.subarray(0, kept.length).equals(kept)).toBe(true);
          expect(nonEmptyLines(kept.toString())).toHaveLength(c.lines.length - 1);
          const added = nonEmptyLines(after.subarray(kept.length).toString()).map((l) => JSON.parse(l));
          if (!viaWrapper) expect(added).toEqual([]);
          for (const e of added) expect(e).toMatchObject({ type: "tool_result", data: { ok: false, repaired: true, error: { kind: "interrupted" } } });
          expect((await runner("pixir-log", ["cat", ID], { cwd: ws })).code).toBe(0);
        } else if (!viaWrapper) expect(after.equals(bytes)).toBe(true);
      });
    });
  }, TIMEOUT);

  it("pixir-fork (--parent and stdin), pixir-tree, pixir context, diff: the same errors as cat, nothing written", async () => {
    const commands: ReaderCommand[] = [
      { name: "fork --parent", tool: "pixir-fork", argv: ["--parent", ID, "--child-id", "c"], channel: "stream", json: false },
      { name: "fork --parent --dry-run", tool: "pixir-fork", argv: ["--parent", ID, "--dry-run", "--json"], channel: "report", json: true },
      { name: "fork stdin", tool: "pixir-fork", argv: ["--child-id", "c", "--json"], channel: "stream", json: true },
      { name: "tree", tool: "pixir-tree", argv: [ID, "--json"], channel: "report", json: true },
      { name: "tree forest", tool: "pixir-tree", argv: ["--format", "text"], channel: "report", json: false },
      { name: "context", tool: "pixir", argv: ["context", ID, "--json"], channel: "stream", json: true },
      { name: "context text", tool: "pixir", argv: ["context", ID, "--format", "text"], channel: "stream", json: false },
      { name: "diff", tool: "pixir", argv: ["diff", ID, "t", "--json"], channel: "report", json: true },
      { name: "compact --dry-run", tool: "pixir", argv: ["compact", ID, "--tail-events", "1", "--dry-run", "--json"], channel: "report", json: true },
      { name: "fork --dry-run (wrapper)", tool: "pixir", argv: ["fork", ID, "--dry-run", "--json"], channel: "report", json: true },
    ];
    const arb = fc.tuple(stampedCase({ maxExisting: 0 }), fc.constantFrom(...commands));
    await property("readers", arb, async ([c, cmd], runner) => {
      const bytes = streamBytes(c);
      await withWorkspace({ [ID]: bytes, t: existingLog([stamped(0, "user_message", '{"text":"t"}', "t")]) }, async (ws) => {
        const before = snapshot(ws);
        const stdin = cmd.name === "fork stdin" ? bytes : undefined;
        const r = await runner(cmd.tool, cmd.argv, { cwd: ws, input: stdin });
        let read = c.torn && !("ok" in c.defect.read) ? corrupt("torn_tail") : c.defect.read;
        // Every fork, and its dry run, refuses an inherited lone surrogate: the child could not store it
        // (docs/cli-contract.md, "An inherited Event with a lone surrogate").
        const inheritedSurrogate = c.defect.name === "lone_surrogate" && !c.torn && c.lines[c.defectAt]!.type !== "provider_usage";
        if (inheritedSurrogate && cmd.name.startsWith("fork")) read = { kind: "log_encode_failed", reason: "invalid_unicode" };
        // pixir-fork reading a pipe checks input Events (§8.1), not Log lines: a torn tail is still torn,
        // an invalid session_id is not used for anything, and a lone surrogate passes through.
        if (cmd.name === "fork stdin" && !("ok" in read) && read.kind === "corrupt_log_line" && read.reason === "missing_event_type") read = corrupt("missing_event_type");
        if (cmd.name === "fork stdin" && "ok" in read && r.code !== 0) {
          // A piped History must also be one Session in seq order (envelope-and-log.md §11).
          read = { kind: "invalid_args|stream_integrity_failed" };
        }
        // pixir-tree counts from the line heads and does not decode data (tree.md §2.7): a defect inside
        // `data` may pass there. Every loader-based reader refuses it.
        if (cmd.name === "tree" && r.code === 0 && (DATA_INTERIOR.has(c.defect.name) || c.defect.looksLikeData)) read = OK;
        // The forest never fails for one bad Log: that node shows the error (tree.md §1, §2.3).
        if (cmd.name === "tree forest") read = OK;
        const err = judge(r, read, cmd.channel, cmd.json);
        if (err === null && cmd.name.startsWith("fork") && !cmd.name.includes("dry-run") && PRESERVING.has(c.defect.name) && !c.torn) {
          // Inherited Events keep their data byte for byte.
          const inherited = storedDataTexts(r.stdout).slice(1);
          const expected = c.lines
            .map((p, i) => ({ p, i }))
            .filter(({ p }) => p.type !== "provider_usage")
            .map(({ p, i }) => compact(i === c.defectAt && c.defect.storedData ? c.defect.storedData(p) : p.dataText));
          expect(inherited).toEqual(expected);
        }
        if (err !== null && cmd.channel === "stream") expect(r.stdout, "a failed read prints nothing").toBe("");
        nothingWritten(ws, before);
      });
    });
  }, TIMEOUT);

  it("pixir compact and pixir repair on a defective Log: refused without a byte changed, or recorded after the old bytes", async () => {
    const commands = [
      ["compact", ID, "--tail-events", "1", "--json"],
      ["repair", ID, "--json"],
    ];
    const arb = fc.tuple(stampedCase({ maxExisting: 0 }), fc.constantFrom(...commands));
    await property("session-writers", arb, async ([c, argv], runner) => {
      const bytes = streamBytes(c);
      await withWorkspace({ [ID]: bytes }, async (ws) => {
        const before = snapshot(ws);
        const r = await runner("pixir", argv, { cwd: ws });
        const read = c.torn && !("ok" in c.defect.read) ? (argv[0] === "repair" ? OK : corrupt("torn_tail")) : c.defect.read;
        if (judge(r, read, "report", true) !== null) return nothingWritten(ws, before);
        const after = readFileSync(path.join(ws, ".pixir", "sessions", `${ID}.ndjson`));
        const kept = c.torn && !("ok" in c.defect.read) ? bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1) : bytes;
        expect(after.subarray(0, kept.length).equals(kept), "earlier bytes stay identical").toBe(true);
        expect((await runner("pixir-log", ["check", ID, "--json"], { cwd: ws })).code, "the result is readable").toBe(0);
      });
    });
  }, TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// Streams between tools: pixir-summarize and pixir-log write of fork streams; pixir merge

describe("fuzz: fork streams, summaries and merge", () => {
  /** A valid parent P, the fork stream of it (from our own pixir-fork), then one defect in the stream. */
  async function forkStream(ws: string, strategy: string): Promise<string[]> {
    const r = await runInProcess("pixir-fork", ["--parent", "P", "--child-id", "c", "--strategy", strategy], { cwd: ws });
    expect(r.code).toBe(0);
    return nonEmptyLines(r.stdout);
  }
  const parent = existingLog([
    stamped(0, "user_message", '{"text":"hello"}', "P"),
    stamped(1, "tool_call", '{"call_id":"c1","name":"read","args":{"path":"a"}}', "P"),
    stamped(2, "tool_result", '{"call_id":"c1","ok":true,"output":"x"}', "P"),
    stamped(3, "assistant_message", '{"text":"done"}', "P"),
  ]);

  /** Stream-level defects of a fork stream (envelope-and-log.md §11): each must be refused by write. */
  const streamDefects = fc.oneof(
    fc.nat().map((n) => ({ name: "drop_line", apply: (ls: string[]) => ls.filter((_, i) => i !== n % ls.length), summarize: "any" })),
    fc.nat().map((n) => ({ name: "duplicate_line", apply: (ls: string[]) => ls.flatMap((l, i) => (i === n % ls.length ? [l, l] : [l])), summarize: "any" })),
    fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => ({
      name: "swap_lines",
      apply: (ls: string[]) => {
        const out = [...ls];
        const i = a % out.length;
        const j = b % out.length;
        [out[i], out[j]] = [out[j]!, out[i]!];
        return i === j ? out.slice(0, -1) : out;
      },
      summarize: "any",
    })),
    fc.tuple(fc.nat(), defects).map(([n, d]) => ({
      name: `line:${d.name}`,
      apply: (ls: string[]) => {
        const i = n % ls.length;
        const v = JSON.parse(ls[i]!);
        const p: Parts = { fields: Object.entries(v).map(([k, x]) => [k, JSON.stringify(x)]), dataText: JSON.stringify(v.data), type: v.type };
        return ls.map((l, k) => (k === i ? d.line(p).toString("latin1") : l));
      },
      summarize: "any",
      binary: true,
    })),
    fc.constantFrom("replay_event_count", "prefix_digest", "parent_session_id", "forked_to_seq", "strategy").map((key) => ({
      name: `header:${key}`,
      apply: (ls: string[]) => {
        const h = JSON.parse(ls[0]!);
        h.data[key] = key === "replay_event_count" || key === "forked_to_seq" ? 99 : key === "parent_session_id" ? "../PWN" : "sha256:00";
        return [JSON.stringify(h), ...ls.slice(1)];
      },
      summarize: "any",
    })),
  );

  it("pixir-summarize | pixir-log write: a damaged fork stream never creates the child", async () => {
    const arb = fc.tuple(fc.constantFrom("replay_v1", "share_v1"), streamDefects, fc.boolean());
    await property("fork-stream", arb, async ([strategy, d, viaSummarize], runner) => {
      await withWorkspace({ P: parent }, async (ws) => {
        const lines = d.apply(await forkStream(ws, strategy));
        const stdin = Buffer.from(lines.map((l) => `${l}\n`).join(""), (d as { binary?: boolean }).binary ? "latin1" : "utf8");
        const before = snapshot(ws);
        let input = stdin;
        if (viaSummarize) {
          const s = await runner("pixir-summarize", ["--json"], { cwd: ws, input: stdin });
          expect(s.hung ?? false).toBe(false);
          expect(s.stderr).not.toMatch(STACK);
          if (s.code !== 0) {
            expectDocumentedFailure(s, "stream", true);
            nothingWritten(ws, before);
          }
          input = Buffer.from(s.stdout);
        }
        const r = await runner("pixir-log", ["write", "--json"], { cwd: ws, input });
        expect(r.hung ?? false).toBe(false);
        expect(r.stderr).not.toMatch(STACK);
        if (r.code === 0) {
          // Only a defect the stream legitimately tolerates may pass: the child must then read cleanly.
          const check = await runInProcess("pixir-log", ["check", "--json"], { cwd: ws });
          expect(check.code, check.stdout).toBe(0);
          return;
        }
        expectDocumentedFailure(r, "report", true);
        nothingWritten(ws, before);
      });
    });
  }, TIMEOUT);

  it("pixir merge: a defective child is refused and the parent stays byte-identical", async () => {
    const arb = stampedCase({ maxExisting: 0 });
    await property("merge", arb, async (c, runner) => {
      await withWorkspace({ P: parent }, async (ws) => {
        const fork = await runInProcess("pixir", ["fork", "P", "--child-id", "c", "--json"], { cwd: ws });
        expect(fork.code).toBe(0);
        // The child's own Events (seq 5..) with one defect, appended raw as another writer might.
        const own = c.lines.map((p) => ({ ...setField(setField(p, "session_id", '"c"'), "seq", String(5 + Number(p.fields.find(([k]) => k === "seq")![1]))) }));
        const childFile = path.join(ws, ".pixir", "sessions", "c.ndjson");
        writeFileSync(childFile, Buffer.concat([readFileSync(childFile), streamBytes({ ...c, lines: own })]));
        const before = snapshot(ws);
        const r = await runner("pixir", ["merge", "c", "--into", "P", "--json"], { cwd: ws });
        const read = c.torn && !("ok" in c.defect.read) ? corrupt("torn_tail") : c.defect.name === "session_id_other" ? OK : c.defect.read;
        if (judge(r, read, "report", true) !== null) return nothingWritten(ws, before);
        // A defect that leaves the child no Event of its own (a seq inside the prefix) leaves nothing to merge.
        if (r.json?.nothing_to_merge === true) return nothingWritten(ws, before);
        const after = readFileSync(path.join(ws, ".pixir", "sessions", "P.ndjson"));
        expect(after.subarray(0, parent.length).equals(parent)).toBe(true);
        expect(nonEmptyLines(after.toString())).toHaveLength(5);
      });
    });
  }, TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// pixir import pi

describe("fuzz: pixir import pi", () => {
  const base = readFileSync(path.join(ROOT, "test", "fixtures", "pi", "hand", "v2-hookmessage.jsonl"), "utf8");
  const baseLines = nonEmptyLines(base);

  const piDefects = fc.oneof(
    fc.tuple(fc.nat(), fc.double({ min: 0, max: 0.999, noNaN: true })).map(([n, f]) => ({ name: "truncated", at: n, mutate: (l: string) => l.slice(0, 1 + Math.floor(f * (l.length - 1))) })),
    fc.nat().map((n) => ({ name: "drop", at: n, mutate: () => null })),
    fc.nat().map((n) => ({ name: "duplicate", at: n, mutate: (l: string) => `${l}\n${l}` })),
    fc.tuple(fc.nat(), fc.constantFrom("id", "parentId", "type", "timestamp", "message", "content", "role", "version", "cwd", "summary", "firstKeptEntryId", "toolCallId", "arguments"), fc.constantFrom(5, null, true, [], {}, "x", "../PWN", "", 1e308, -1, "\ud800")).map(([n, key, value]) => ({
      name: `field:${key}`,
      at: n,
      mutate: (l: string) => JSON.stringify(setDeep(JSON.parse(l), key, value)),
    })),
    fc.tuple(fc.nat(), fc.integer({ min: 2, max: 100_000 })).map(([n, d]) => ({ name: "deep", at: n, mutate: (l: string) => l.replace(/\}$/, `,"deep":${deep(d)}}`) })),
    fc.tuple(fc.nat(), fc.constantFrom([0xff], [0x00], [0xc3, 0x28], [0xed, 0xa0, 0x80])).map(([n, bytes]) => ({ name: "bytes", at: n, mutate: (l: string) => `${l.slice(0, l.length >> 1)}${Buffer.from(bytes).toString("latin1")}${l.slice(l.length >> 1)}`, latin1: true })),
    fc.nat().map((n) => ({ name: "proto", at: n, mutate: (l: string) => l.replace(/^\{/, '{"__proto__":{"polluted":1},') })),
    fc.nat().map((n) => ({ name: "crlf", at: n, mutate: (l: string) => `${l}\r` })),
    fc.constant({ name: "empty", at: 0, mutate: () => "" }),
  );

  function setDeep(v: any, key: string, value: unknown): any {
    if (v === null || typeof v !== "object") return v;
    if (Object.prototype.hasOwnProperty.call(v, key)) {
      v[key] = value;
      return v;
    }
    for (const k of Object.keys(v)) setDeep(v[k], key, value);
    return v;
  }

  it("a damaged pi file is imported into Logs that read cleanly, or refused with nothing written", async () => {
    const arb = fc.tuple(piDefects, fc.boolean(), fc.boolean());
    await property("import-pi", arb, async ([d, lenient, json], runner) => {
      const lines = baseLines.map((l, i) => (i === d.at % baseLines.length ? d.mutate(l) : l)).filter((l): l is string => l !== null);
      const bytes = Buffer.from(`${lines.join("\n")}\n`, (d as { latin1?: boolean }).latin1 ? "latin1" : "utf8");
      await withWorkspace({}, async (ws) => {
        const dir = freshDir("pixir-pi-");
        try {
          const file = path.join(dir, "session.jsonl");
          writeFileSync(file, bytes);
          const before = snapshot(ws);
          const r = await runner("pixir", ["import", "pi", file, ...(lenient ? ["--lenient"] : []), ...(json ? ["--json"] : [])], { cwd: ws });
          expect(r.hung ?? false).toBe(false);
          expect(r.stderr).not.toMatch(STACK);
          if (r.code !== 0) {
            const err = expectDocumentedFailure(r, "report", json);
            expect(["invalid_pi_session", "log_encode_failed", "corrupt_log_line", "invalid_args"]).toContain(err.kind);
            nothingWritten(ws, before);
            return;
          }
          const check = await runInProcess("pixir-log", ["check", "--json"], { cwd: ws });
          expect(check.code, `imported Logs read cleanly: ${check.stdout.slice(0, 500)}`).toBe(0);
        } finally {
          removeDir(dir);
        }
      });
    });
  }, TIMEOUT);
});

// ---------------------------------------------------------------------------------------------
// Bad argv tokens for every command

describe("fuzz: bad argv tokens", () => {
  const COMMANDS: Array<{ tool: Tool; argv: string[]; stdin?: string }> = [
    { tool: "pixir-log", argv: ["cat", ID] },
    { tool: "pixir-log", argv: ["write", ID], stdin: `${lineText(stamped(0, "user_message", "{}"))}\n` },
    { tool: "pixir-log", argv: ["append", ID], stdin: '{"type":"user_message"}\n' },
    { tool: "pixir-log", argv: ["check", ID] },
    { tool: "pixir-log", argv: ["repair", ID] },
    { tool: "pixir-log", argv: ["materialize", ID] },
    { tool: "pixir-log", argv: ["rm", ID] },
    { tool: "pixir-log", argv: ["ls"] },
    { tool: "pixir-fork", argv: ["--parent", ID] },
    { tool: "pixir-summarize", argv: [] },
    { tool: "pixir-tree", argv: [ID] },
    { tool: "pixir", argv: ["context", ID] },
    { tool: "pixir", argv: ["compact", ID] },
    { tool: "pixir", argv: ["diff", ID, ID] },
    { tool: "pixir", argv: ["merge", ID, "--into", ID] },
    { tool: "pixir", argv: ["import", "pi", "x.jsonl"] },
    { tool: "pixir", argv: ["fork", ID] },
    { tool: "pixir", argv: ["lock", "status", ID] },
    { tool: "pixir", argv: ["append", ID], stdin: '{"type":"user_message"}\n' },
  ];
  const SECRET = "PWN";
  const badTokens = fc.oneof(
    fc.constantFrom(["--nope"], [`-${SECRET}`], ["-x"], ["--"], ["--json=maybe"], ["--dry-run=yes"], ["--json=true"], ["--lenient=0"], ["--force=no"], ["--workspace"], ["--workspace", `/nonexistent/${SECRET}`], ["--workspace", "/dev/null"], [`--${SECRET}=1`], ["--help=no"]),
    fc.constantFrom("--to-seq", "--from-seq", "--wait", "--tail-events", "--max-depth", "--model-timeout-ms").chain((flag) =>
      fc.constantFrom([flag, "-1"], [flag, "1e3"], [flag, " 5"], [flag, "0x10"], [flag, "5x"], [flag, "99999999999999999999"], [flag], [flag, "--json"], [`${flag}=`], [flag, "NaN"], [flag, "1", flag, "2"]),
    ),
    fc.constantFrom("--format", "--strategy", "--type", "--child-id", "--parent", "--into", "--reason", "--out").chain((flag) => fc.constantFrom([flag, `x${SECRET}`], [flag], [flag, ""], [flag, `../${SECRET}`])),
    fc.constantFrom(`../../outside/${SECRET}`, `a/${SECRET}`, `.${SECRET}`, `-${SECRET}`, `${SECRET} x`, `${SECRET}\n`, `${SECRET};$HOME`, `${SECRET}%2f`, "b".repeat(236), `${SECRET}${"é".repeat(118)}`, "").map((id) => ["__ID__", id]),
    fc
      .tuple(fc.constantFrom("-", "--"), fc.string({ unit: "binary", minLength: 1, maxLength: 12 }))
      .map(([dash, rest]) => `${dash}${rest}`)
      .filter((s) => !/^--?(h|help|version|json)\b/.test(s) && !s.includes("\0"))
      .map((s) => [s]),
  );

  it("every command refuses a bad token with exit 2 (or its documented error), echoes nothing, creates nothing", async () => {
    const arb = fc.tuple(fc.constantFrom(...COMMANDS), badTokens, fc.nat(), fc.boolean());
    await property("argv", arb, async ([cmd, tokens, pos, json], runner) => {
      await withWorkspace({}, async (ws) => {
        let argv: string[];
        if (tokens[0] === "__ID__") argv = cmd.argv.map((a) => (a === ID ? tokens[1]! : a));
        else {
          const at = pos % (cmd.argv.length + 1);
          argv = [...cmd.argv.slice(0, at), ...tokens, ...cmd.argv.slice(at)];
        }
        if (argv.length === cmd.argv.length && argv.every((a, i) => a === cmd.argv[i])) return; // the command has no id to replace
        if (json) argv.push("--json");
        const before = snapshot(ws);
        const r = await runner(cmd.tool, argv, { cwd: ws, input: cmd.stdin === undefined ? undefined : Buffer.from(cmd.stdin) });
        expect(r.hung ?? false).toBe(false);
        expect(r.stderr).not.toMatch(STACK);
        const leaked = [SECRET, "b".repeat(236), "é".repeat(118)].filter((s) => r.stdout.includes(s) || r.stderr.includes(s));
        expect(leaked, "the offending token is never echoed").toEqual([]);
        if (r.code === 0) {
          // Only `--` can leave a valid command line (flags after it become positionals).
          expect(tokens).toEqual(["--"]);
          return;
        }
        nothingWritten(ws, before);
        let stream = ["cat", "context"].includes(cmd.argv[0]!) || cmd.tool === "pixir-fork" || cmd.tool === "pixir-summarize";
        // A token before the subcommand can hide it: then the tool cannot know the class and reports.
        if (stream && (cmd.tool === "pixir-log" || cmd.tool === "pixir") && r.stdout.startsWith('{"ok":false,"error":{"kind":"usage"')) stream = false;
        const beforeDashes = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
        const err = expectDocumentedFailure(r, stream ? "stream" : "report", beforeDashes.includes("--json"));
        expect(["usage", "invalid_args", "not_found", "invalid_pi_session", "stream_integrity_failed", "corrupt_log_line", "unsafe_state_path"]).toContain(err.kind);
      });
    });
  }, TIMEOUT);
});

// Keep os referenced for the platform note in figures.
figures.platform = `${os.type()} ${os.release()} node ${process.version}, ${os.cpus().length} cores`;
figures.seed = SEED;
