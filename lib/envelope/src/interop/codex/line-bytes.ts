// Twin of eventLine over lineEvents(mapLine(…)) (line-events.ts, line-map.ts) for a line n ≥ 2 of a streamed
// root Log (stream.ts), held to it by lib/envelope/test/interop/codex-line-bytes.test.ts.
// Most of a rollout's bytes are records that the Log stores verbatim (codex-interop.md §2.2) beside a few
// values taken from them. A line whose bytes are as JSON.stringify writes its record (fast/stringified.ts:
// then `raw` is not needed) is not decoded, parsed and serialised again: its Log line is written from its
// bytes, and only the payload members the mapping reads are parsed (recordDraft); a tool output that is a
// string is copied as it lies. A line that is so but for numbers JavaScript spells otherwise (`25.0`) gets
// its record with those numbers spelt again, and `raw`, the line as a JSON string. Any other line (not so spelt, a `compacted` record, a rollback, a record the
// plain rule refuses, or longer than MIRROR_MAX_BYTES) is left to the plain rule, which names its problem.
import { derivedUlidInto } from "../../event/ids.js";
import type { JsonObject } from "../../event/envelope.js";
import { BACKSLASH, QUOTE } from "../../fast/json-bytes.js";
import { copyBytes, MIRROR_MAX_BYTES } from "../../fast/line-check.js";
import { checkStringified, memberAt, StringifiedObject, writeStringified } from "../../fast/stringified.js";
import { validTimestamp } from "./format.js";
import { codexRecord, recordDraft, type RunningState } from "./line-map.js";

const bytes = (s: string): Buffer => Buffer.from(s, "utf8");
const K_TIMESTAMP = bytes("timestamp");
const K_TYPE = bytes("type");
const K_PAYLOAD = bytes("payload");
const K_CALL_ID = bytes("call_id");
const K_OUTPUT = bytes("output");
const RESPONSE_ITEM = bytes('"response_item"');
const EVENT_MSG = bytes('"event_msg"');
const COMPACTED = bytes('"compacted"');
const THREAD_ROLLED_BACK = bytes('"thread_rolled_back"');
/** The two output items whose `output` string is the Event's `output` as it is (§2.4.5 OT), by their `kind`. */
const STRING_OUTPUTS: Array<[Buffer, Buffer]> = [
  [bytes('"function_call_output"'), bytes(',"kind":"function"')],
  [bytes('"custom_tool_call_output"'), bytes(',"kind":"custom"')],
];
/** format.ts REPLAY_PAYLOAD_TYPES: records whose payload must be an object (else the plain rule names invalid_record). */
const OBJECT_PAYLOADS = ["session_meta", "response_item", "compacted", "event_msg", "turn_context"].map((t) => bytes(JSON.stringify(t)));
/** The payload members recordDraft reads of a record that is no response_item (its comment lists them). */
const READ_MEMBERS = ["type", "model", "turn_id", "info", "reason", "num_turns", "role", "content"].map((k) => ({ key: k, bytes: bytes(k) }));
/** The members RunningState.observe reads of a record that is no response_item or compacted. */
const OBSERVED_MEMBERS = READ_MEMBERS.filter((m) => m.key === "type" || m.key === "model" || m.key === "turn_id");
const MESSAGE = bytes('"message"');
const TOKEN_COUNT = bytes('"token_count"');
const TURN_ABORTED = bytes('"turn_aborted"');
/** The data of a codex_record are kept for this many pairs of record and payload types. */
const MAX_RECORD_HEADS = 64;

const ID_OPEN = bytes('{"id":"');
const TS_OPEN = bytes(',"ts":"');
const TYPE_OPEN = bytes('","type":"');
const DATA_OPEN = bytes('","data":');
const CALL_ID_OPEN = bytes('{"call_id":');
const OK_OUTPUT = bytes(',"ok":true,"output":');
const OK_OUTPUT_FIRST = bytes('{"ok":true,"output":');
const TOOL_NAME = bytes(',"tool_name":');
const ITEM = bytes('"$item"');
const LINE_OPEN = bytes(',"line":');
const RECORD_OPEN = bytes(',"record":');
const LINE_CLOSE = bytes("}}}\n");
const RAW_OPEN = bytes(',"raw":"');
const RAW_CLOSE = bytes('"}}}\n');

/**
 * JSON.stringify of the text of a JSON line, without its quotes, written to `out` at `at`: a `\` before
 * each `"` and `\`. A JSON text without whitespace holds no control character, and valid UTF-8 no lone
 * surrogate, so nothing else is escaped. Returns the end.
 */
function writeEscaped(b: Buffer, s: number, e: number, out: Buffer, at: number): number {
  for (let i = s; i < e; i++) {
    const c = b[i]!;
    if (c === QUOTE || c === BACKSLASH) out[at++] = BACKSLASH;
    out[at++] = c;
  }
  return at;
}

/** Output bytes that grow as lines are written; the caller takes `buf[0, used)` and resets `used`. */
export class OutBytes {
  buf: Buffer;
  used = 0;
  constructor(size = 256 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }
  /** Room for `n` more bytes. */
  ensure(n: number): void {
    if (this.used + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.used + n, 2 * this.buf.length));
    this.buf.copy(bigger, 0, 0, this.used);
    this.buf = bigger;
  }
  put(src: Uint8Array, s = 0, e = src.length): void {
    this.used = copyBytes(src, s, e, this.buf, this.used);
  }
  /** A string of at most `room` UTF-8 bytes, as ensured. */
  text(s: string): void {
    this.used += this.buf.write(s, this.used, "utf8");
  }
  digits(n: number): void {
    let count = 1;
    for (let v = n; v >= 10; v = Math.floor(v / 10)) count++;
    for (let i = count - 1, v = n; i >= 0; i--, v = Math.floor(v / 10)) this.buf[this.used + i] = 0x30 + (v % 10);
    this.used += count;
  }
}

/** The string a canonical JSON string `b[s, e)` (quotes included) stands for. */
function stringAt(b: Buffer, s: number, e: number): string {
  for (let i = s + 1; i < e - 1; i++) if (b[i] === BACKSLASH) return JSON.parse(b.toString("utf8", s, e)) as string;
  return b.toString("utf8", s + 1, e - 1);
}

const sameAs = (b: Buffer, s: number, e: number, lit: Buffer): boolean => e - s === lit.length && b.compare(lit, 0, lit.length, s, e) === 0;

/** The Log lines of one streamed thread's lines, from their bytes. */
export class CodexLineBytes {
  private readonly o = new StringifiedObject();
  /** `","session_id":<id>,"seq":` */
  private readonly sessionSeq: Buffer;
  /** `,"codex":{"thread":<thread>` */
  private readonly codexThread: Buffer;
  /** `codex:<thread>:`, then the line number's digits: the key of a line Event's id (§2.6). */
  private readonly key: OutBytes;
  private readonly keyPrefix: number;
  /** JSON of a codex_record's data by record type and payload type (recordHeads' key). */
  private readonly recordHeads = new Map<string, string>();

  constructor(thread: string, sessionId: string) {
    this.sessionSeq = bytes(`","session_id":${JSON.stringify(sessionId)},"seq":`);
    this.codexThread = bytes(`,"codex":{"thread":${JSON.stringify(thread)}`);
    const prefix = bytes(`codex:${thread}:`);
    this.key = new OutBytes(prefix.length + 20);
    this.key.put(prefix);
    this.keyPrefix = prefix.length;
  }

  /**
   * Write the Log line of line `n` (`b[s, e)`, without its `\n`) to `out`, as the Event with seq `seq`
   * whose ts falls back to `lastTs` (§2.6), and move the running state. Returns the Event's ts, or null
   * when the line takes the plain rule: then nothing was written and the state did not move.
   */
  write(b: Buffer, s: number, e: number, n: number, seq: number, lastTs: string, state: RunningState, out: OutBytes): string | null {
    const o = this.o;
    if (e - s > MIRROR_MAX_BYTES || !checkStringified(b, s, e, o, K_PAYLOAD)) return null;
    const m = o.members;
    const typeAt = memberAt(o, b, K_TYPE);
    if (typeAt < 0 || b[m[typeAt + 2]!] !== QUOTE) return null;
    const ts0 = m[typeAt + 2]!;
    const ts1 = m[typeAt + 3]!;
    const payloadAt = memberAt(o, b, K_PAYLOAD);
    const payloadObject = payloadAt >= 0 && o.innerCount >= 0;
    if (!payloadObject && OBJECT_PAYLOADS.some((t) => sameAs(b, ts0, ts1, t))) return null;
    if (sameAs(b, ts0, ts1, COMPACTED)) return null;
    const pTypeAt = payloadObject ? memberAt(o, b, K_TYPE, true) : -1;
    const pt0 = pTypeAt < 0 ? 0 : o.inner[pTypeAt + 2]!;
    const pt1 = pTypeAt < 0 ? 0 : o.inner[pTypeAt + 3]!;
    const responseItem = sameAs(b, ts0, ts1, RESPONSE_ITEM);
    if (!responseItem && sameAs(b, ts0, ts1, EVENT_MSG) && sameAs(b, pt0, pt1, THREAD_ROLLED_BACK)) return null;

    const timestampAt = memberAt(o, b, K_TIMESTAMP);
    const timestamp = timestampAt >= 0 && b[m[timestampAt + 2]!] === QUOTE ? validTimestamp(stringAt(b, m[timestampAt + 2]!, m[timestampAt + 3]!)) : null;
    const ts = timestamp ?? lastTs;

    // A tool output whose `output` is a string: its data is written from the bytes (itemDraft's rule).
    const kind = responseItem && pTypeAt >= 0 ? STRING_OUTPUTS.find(([t]) => sameAs(b, pt0, pt1, t))?.[1] : undefined;
    const outputAt = kind === undefined ? -1 : memberAt(o, b, K_OUTPUT, true);
    let eventType: string;
    let dataHead: string | null = null;
    let storedAsItem = false;
    let callIdAt = -1;
    let toolName: string | undefined;
    if (outputAt >= 0 && b[o.inner[outputAt + 2]!] === QUOTE) {
      eventType = "tool_result";
      callIdAt = memberAt(o, b, K_CALL_ID, true);
      if (callIdAt >= 0 && b[o.inner[callIdAt + 2]!] !== QUOTE) callIdAt = -1;
      if (callIdAt >= 0) toolName = state.toolName(stringAt(b, o.inner[callIdAt + 2]!, o.inner[callIdAt + 3]!));
    } else {
      const recordType = stringAt(b, ts0, ts1);
      const eventMsg = sameAs(b, ts0, ts1, EVENT_MSG);
      if (!responseItem && !sameAs(b, pt0, pt1, MESSAGE) && !(eventMsg && (sameAs(b, pt0, pt1, TOKEN_COUNT) || sameAs(b, pt0, pt1, TURN_ABORTED)))) {
        // recordDraft's last rule, a codex_record of the record's type and the payload's: the state moves by
        // the members observe reads, and the data is the same for every such line of the two types.
        const p: JsonObject = payloadObject ? this.readMembers(b, OBSERVED_MEMBERS) : {};
        state.observe(recordType, p);
        eventType = "workflow_event";
        const key = JSON.stringify([recordType, typeof p.type === "string" ? p.type : null]);
        dataHead = this.recordHeads.get(key) ?? null;
        if (dataHead === null) {
          dataHead = JSON.stringify(codexRecord(recordType, typeof p.type === "string" ? { type: p.type } : {}));
          if (this.recordHeads.size < MAX_RECORD_HEADS) this.recordHeads.set(key, dataHead);
        }
      } else {
        const p0 = payloadAt >= 0 ? m[payloadAt + 2]! : 0;
        const p1 = payloadAt >= 0 ? m[payloadAt + 3]! : 0;
        const p: JsonObject = !payloadObject ? {} : responseItem ? (JSON.parse(b.toString("utf8", p0, p1)) as JsonObject) : this.readMembers(b, READ_MEMBERS);
        const draft = recordDraft(recordType, p, state);
        eventType = draft.type;
        storedAsItem = draft.storedAsItem;
        dataHead = JSON.stringify(draft.data);
      }
    }

    // The line: {"id":…,"session_id":…,"seq":…,"ts":…,"type":…,"data":{…,"codex":{"thread":…,"line":n,"record":<record>}}}
    const k = this.key;
    k.used = this.keyPrefix;
    k.digits(n);
    const room = 200 + this.sessionSeq.length + this.codexThread.length + ts.length + 4 * (e - s) + Math.max(0, o.growth) + (dataHead === null ? 3 * (toolName?.length ?? 0) : 3 * dataHead.length);
    out.ensure(room);
    const buf = out.buf;
    out.put(ID_OPEN);
    const idAt = out.used;
    out.used += 26;
    out.put(this.sessionSeq);
    out.digits(seq);
    out.put(TS_OPEN);
    const tsAt = out.used;
    out.text(ts);
    derivedUlidInto(buf, idAt, k.buf, k.used, buf, tsAt, out.used);
    out.put(TYPE_OPEN);
    out.text(eventType);
    out.put(DATA_OPEN);
    if (dataHead === null) {
      if (callIdAt >= 0) {
        out.put(CALL_ID_OPEN);
        out.put(b, o.inner[callIdAt + 2]!, o.inner[callIdAt + 3]!);
        out.put(OK_OUTPUT);
      } else out.put(OK_OUTPUT_FIRST);
      out.put(b, o.inner[outputAt + 2]!, o.inner[outputAt + 3]!);
      if (toolName !== undefined) {
        out.put(TOOL_NAME);
        out.text(JSON.stringify(toolName));
      }
      out.put(kind!);
    } else if (dataHead === "{}") out.text("{");
    else out.text(dataHead.slice(0, -1));
    if (dataHead === "{}") out.put(this.codexThread, 1);
    else out.put(this.codexThread);
    out.put(LINE_OPEN);
    out.digits(n);
    out.put(RECORD_OPEN);
    // The record as JSON.stringify writes it; with `raw` when that is not the line (§2.2).
    if (storedAsItem) {
      out.used = writeStringified(o, b, s, m[payloadAt + 2]!, buf, out.used);
      out.put(ITEM);
      out.used = writeStringified(o, b, m[payloadAt + 3]!, e, buf, out.used);
    } else out.used = writeStringified(o, b, s, e, buf, out.used);
    if (o.respeltCount > 0) {
      out.put(RAW_OPEN);
      out.used = writeEscaped(b, s, e, buf, out.used);
      out.put(RAW_CLOSE);
    } else out.put(LINE_CLOSE);
    return ts;
  }

  /** Payload members, parsed from their bytes. */
  private readMembers(b: Buffer, members: typeof READ_MEMBERS): JsonObject {
    const p: JsonObject = {};
    const o = this.o;
    for (const { key, bytes: kb } of members) {
      const at = memberAt(o, b, kb, true);
      if (at >= 0) p[key] = JSON.parse(b.toString("utf8", o.inner[at + 2]!, o.inner[at + 3]!)) as JsonObject[string];
    }
    return p;
  }
}
