// line-bytes.ts is a fast path: the Log line it writes for a rollout line must be byte for byte the one
// the plain rule writes (eventLine over lineEvents(mapLine(…)), as stream.ts runs it), with the running
// state moved the same way, and where it declines the plain rule takes the line. These tests hold it to
// that on the real rollouts of the fixtures, on generated records, and on their lines mutated.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isEncodable, isJsonObject, type JsonObject, type PixirEvent } from "../../src/event/envelope.js";
import { stringKernel } from "../../src/fast/string-scan.js";
import { EPOCH, rolloutLine, validTimestamp, type RolloutLine } from "../../src/interop/codex/format.js";
import { CodexLineBytes, OutBytes } from "../../src/interop/codex/line-bytes.js";
import { eventLine, lineEvents } from "../../src/interop/codex/line-events.js";
import { mapLine, RunningState } from "../../src/interop/codex/line-map.js";

// The licensed rollouts are in the repository; the unlicensed localpush ones are read from ../shared when present.
const FIXTURES = fileURLToPath(new URL("../../../../test/fixtures/real-sessions/codex", import.meta.url));
const LOCALPUSH = fileURLToPath(new URL("../../../../../shared/fixtures/real-sessions/codex/localpush", import.meta.url));
const THREAD = "019f0000-0000-7000-8000-00000000002a";
const SESSION = THREAD;

/** The record the plain reader (format.ts parseLine) gives a line, or null when it refuses the line. */
function plainRecord(b: Buffer): JsonObject | null {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(b);
    const v: unknown = JSON.parse(text);
    if (!isJsonObject(v) || typeof v.type !== "string") return null;
    if (["session_meta", "response_item", "compacted", "event_msg", "turn_context"].includes(v.type) && !isJsonObject(v.payload)) return null;
    return isEncodable(text, v) ? v : null;
  } catch {
    return null;
  }
}

/** What the stream writes for line n by the plain rule, and the ts it goes on with. */
function plain(b: Buffer, n: number, seq: number, lastTs: string, state: RunningState): { text: string; ts: string; events: number } {
  const record = plainRecord(b)!;
  const line: RolloutLine = rolloutLine(n, b.toString("utf8"), record);
  const events = lineEvents(THREAD, line, mapLine(THREAD, line, state), seq, validTimestamp(record.timestamp) ?? lastTs);
  let ts = lastTs;
  const text = events
    .map((e, i) => {
      ts = e.ts ?? ts;
      return eventLine({ ...e, session_id: SESSION, seq: seq + i } as PixirEvent);
    })
    .join("");
  return { text, ts, events: events.length };
}

const stateOf = (s: RunningState): string => JSON.stringify({ ...s, toolNames: [...(s as unknown as { toolNames: Map<string, string> }).toolNames] });

/**
 * Run a rollout's lines 2… through both: each line the twin writes must be the plain rule's bytes, with the
 * same state after it. Lines the plain reader refuses must be declined. Returns how many the twin wrote.
 */
function holdToPlain(lines: Buffer[], twin: CodexLineBytes = new CodexLineBytes(THREAD, SESSION)): number {
  const mine = new RunningState("openai");
  const theirs = new RunningState("openai");
  const out = new OutBytes(64);
  let seq = 1;
  let lastTs = EPOCH;
  let written = 0;
  lines.forEach((b, i) => {
    const n = i + 2;
    // Inside a larger buffer, as lines are read: the bytes around a line must not matter.
    const padded = Buffer.concat([Buffer.from('{"x":1}\n'), b, Buffer.from('\n,}"\\')]);
    out.used = 0;
    const ts = twin.write(padded, 8, 8 + b.length, n, seq, lastTs, mine, out);
    if (plainRecord(b) === null) {
      expect(ts, `line ${n} is refused by the plain reader: ${b.toString()}`).toBeNull();
      return;
    }
    const want = plain(b, n, seq, lastTs, theirs);
    if (ts === null) {
      plain(b, n, seq, lastTs, mine);
    } else {
      expect(out.buf.toString("utf8", 0, out.used), `line ${n}: ${b.toString()}`).toBe(want.text);
      expect(ts).toBe(want.ts);
      expect(want.events).toBe(1);
      written++;
    }
    expect(stateOf(mine), `state after line ${n}`).toBe(stateOf(theirs));
    seq += want.events;
    lastTs = want.ts;
  });
  return written;
}

function fixtureFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (name.endsWith(".jsonl")) out.push(abs);
    }
  };
  walk(FIXTURES);
  if (existsSync(LOCALPUSH)) walk(LOCALPUSH);
  return out;
}

const linesOf = (text: string): Buffer[] =>
  text
    .split("\n")
    .slice(1, -1)
    .filter((l) => l.trim() !== "")
    .map((l) => Buffer.from(l, "utf8"));

// Generated records: the shapes the mapping tells apart, with values near the spelling rules.
const str = fc.oneof(
  fc.constantFrom("", "call_1", "shell", "a\"b\\c", "line\nbreak\ttab", "\u0001\u001f\u007f", "é🙂", "\u2028", "<environment_context>x</environment_context>", "2026-01-01T00:00:00.000Z"),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: "grapheme-composite", maxLength: 6 }),
);
const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    str,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.constantFrom("type", "text", "call_id", "output", "success", "0", "__proto__"), fc.string({ maxLength: 4 })), tie("value"), { maxKeys: 3 }),
  ),
})).value;
const num = fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.double(), fc.constant("7"));
const usage = fc.record(
  { input_tokens: num, cached_input_tokens: num, cache_write_input_tokens: num, output_tokens: num, reasoning_output_tokens: num, total_tokens: num },
  { requiredKeys: [] },
);
const content = fc.oneof(
  str,
  fc.array(fc.record({ type: fc.constantFrom("input_text", "output_text", "text", "input_image", "other"), text: fc.oneof(str, fc.integer()) }, { requiredKeys: ["type"] }), { maxLength: 3 }),
  json,
);
const callId = fc.oneof(fc.constantFrom("c1", "c2", 'c"3'), fc.integer(), fc.constant(undefined));
const item = fc.oneof(
  fc.record({ type: fc.constantFrom("function_call_output", "custom_tool_call_output", "tool_search_output"), call_id: callId, output: fc.oneof(str, json, fc.record({ success: fc.boolean(), content: content })), tools: json }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constantFrom("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"), call_id: callId, id: callId, name: str, arguments: fc.oneof(str, fc.constant('{"cmd":["ls"]}'), json), input: str, action: json, namespace: str }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constant("message"), role: fc.constantFrom("user", "assistant", "developer", "system"), content, phase: str }, { requiredKeys: ["type", "role"] }),
  fc.record({ type: fc.constantFrom("reasoning", "compaction", "compaction_summary", "agent_message", "web_search_call", "ghost_snapshot"), summary: fc.array(fc.record({ type: fc.constantFrom("summary_text", "x"), text: str })), content, encrypted_content: str }, { requiredKeys: ["type"] }),
  fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 3 }),
);
const payload = fc.oneof(
  fc.record({ type: fc.constant("token_count"), info: fc.oneof(fc.record({ total_token_usage: fc.oneof(usage, json), model_context_window: fc.oneof(num, json) }, { requiredKeys: [] }), json), rate_limits: json }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constantFrom("task_started", "turn_aborted", "exec_command_end", "agent_message", "message"), turn_id: fc.oneof(str, json), reason: fc.oneof(str, json), role: str, content, message: str }, { requiredKeys: ["type"] }),
  fc.record({ model: fc.oneof(str, json), turn_id: fc.oneof(str, json), cwd: str, type: json }, { requiredKeys: [] }),
  json,
);
const record = fc.oneof(
  fc.record({ timestamp: fc.oneof(fc.constantFrom("2026-05-11T08:27:17.490Z", "2026-05-11T08:27:17Z", "2026-13-11T08:27:17.490Z", "yesterday"), json), type: fc.constant("response_item"), payload: item }, { requiredKeys: ["type"] }),
  fc.record({ timestamp: fc.constantFrom("2026-05-11T08:27:18.000Z", "x"), type: fc.constantFrom("event_msg", "turn_context", "session_meta", "something_new"), payload }, { requiredKeys: ["type"] }),
  fc.record({ type: fc.constantFrom("event_msg", "turn_context", "other"), payload: json }, { requiredKeys: ["type"] }),
);

/** A line changed where the spelling rules bite: whitespace, escapes, numbers, keys, bytes. */
function mutate(line: string, at: number, how: number): Buffer {
  const i = at % (line.length + 1);
  const insert = (s: string) => Buffer.from(line.slice(0, i) + s + line.slice(i), "utf8");
  switch (how) {
    case 0:
      return insert(" ");
    case 1:
      return Buffer.from(line.replace(/"([a-z_]+)":/, '"$1":1,"$1":'), "utf8"); // a duplicate key
    case 2:
      return Buffer.from(line.replace(/(\d)([,}\]])/, "$1.0$2"), "utf8");
    case 3:
      return Buffer.from(`${line}\r`, "utf8");
    case 4:
      return Buffer.from(line.replace(/"([a-z])/, '"\\u0061$1'), "utf8");
    case 5:
      return Buffer.from(line.replace(/\{"/, '{"0":1,"'), "utf8");
    case 6: {
      const b = Buffer.from(line, "utf8");
      if (b.length > 0) b[at % b.length] = 0xff;
      return b;
    }
    case 7:
      return insert("\\/");
    case 8:
      return Buffer.from(line.slice(0, i), "utf8");
    default:
      return Buffer.from(line.replace(/"type":"[a-z_]+"/, '"type":"compacted"'), "utf8");
  }
}

describe.each([
  ["with the string kernel", true],
  ["with the JavaScript loop", false],
])("CodexLineBytes %s", (_, kernelOn) => {
  const twin = new CodexLineBytes(THREAD, SESSION);
  const walk = (twin as unknown as { o: { kernel: unknown } }).o;
  beforeAll(() => {
    walk.kernel = kernelOn ? stringKernel : null;
  });
  afterAll(() => {
    walk.kernel = stringKernel;
  });

  it.each(fixtureFiles().map((f) => [f.startsWith(LOCALPUSH) ? `localpush/${path.basename(f)}` : path.relative(FIXTURES, f), f]))("writes the plain rule's bytes for every line of %s", (_rel, file) => {
    const lines = linesOf(readFileSync(file, "utf8"));
    const written = holdToPlain(lines, twin);
    // The point of the twin: nearly every line of a real rollout takes it (not line 1, compacted records,
    // rollbacks, nor the hand-made lines of small.jsonl that JSON.stringify would spell otherwise).
    expect(written).toBeGreaterThanOrEqual(lines.length * 0.9);
  });

  it("writes the plain rule's bytes for generated records, or declines", () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 12 }), (records) => {
        holdToPlain(records.map((r) => Buffer.from(JSON.stringify(r), "utf8")), twin);
      }),
      { numRuns: 300 },
    );
  });

  it("writes the plain rule's bytes for mutated lines, or declines them", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(record, fc.nat(), fc.nat(9)), { minLength: 1, maxLength: 8 }), (cases) => {
        holdToPlain(cases.map(([r, at, how]) => mutate(JSON.stringify(r), at, how)), twin);
      }),
      { numRuns: 300 },
    );
  });

  it("declines compacted records, rollbacks and lines past the mirror limit, so the stream plans or maps them", () => {
    const out = new OutBytes();
    const state = new RunningState(null);
    const decline = (line: string) => {
      const b = Buffer.from(line);
      expect(twin.write(b, 0, b.length, 2, 1, EPOCH, state, out)).toBeNull();
      expect(out.used).toBe(0);
    };
    decline('{"timestamp":"2026-05-11T08:27:17.490Z","type":"compacted","payload":{"message":"m","replacement_history":[]}}');
    decline('{"timestamp":"2026-05-11T08:27:17.490Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}');
    decline(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"${"x".repeat(1024 * 1024)}"}}`);
    decline('{"type":"response_item","payload":"not an object"}');
    decline('{"type":"response_item" ,"payload":{}}');
  });
});
