// envelope-and-log.md §8.1: checks on Events that arrive on stdin to be written.
import { isUtf8 } from "node:buffer";
import { MAX_NESTING_DEPTH, nestsDeeperThan, splitLines, type RawLine } from "./codec.js";
import { abortable } from "./cli/io.js";
import { checkedLine, isCanonicalType, lineDataText, isEncodable, isEphemeralType, isJsonObject, isSeq, serializeEvent, typeForDetails, type DecodedLine, type JsonObject, type PixirEvent } from "./envelope.js";
import { checkLine, facts } from "./line-check.js";
import { head } from "./line-head.js";
import { PixirError } from "./errors.js";
import { sessionIdProblem } from "./session-id.js";

export const STDIN_PATH = "-";

/** An input object that passed the shape checks; fields may still be missing (append stamps them). */
export interface InputEvent {
  value: JsonObject;
  text: string;
  lineNo: number;
}

function corruptInput(reason: string, lineNo: number, extra: Record<string, unknown> = {}): PixirError {
  return new PixirError("corrupt_log_line", undefined, { reason, line: lineNo, path: STDIN_PATH, ...extra });
}

export interface DecodeInputOptions {
  /** Ephemeral Events are returned as null instead of refused (pixir-log append --drop-ephemeral). */
  dropEphemeral?: boolean;
}

/** Parse and shape-check one input line. Returns null for a dropped ephemeral Event. */
export function decodeInputLine(raw: RawLine, options: DecodeInputOptions = {}): InputEvent | null {
  if (!isUtf8(raw.bytes)) throw corruptInput("invalid_utf8", raw.lineNo);
  const text = raw.bytes.toString("utf8");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw corruptInput(raw.terminated ? "invalid_json" : "torn_tail", raw.lineNo);
  }
  if (nestsDeeperThan(raw.bytes)) throw corruptInput("nesting_too_deep", raw.lineNo, { max_nesting_depth: MAX_NESTING_DEPTH });
  if (!isJsonObject(value)) throw corruptInput("unexpected_shape", raw.lineNo);
  const type = value.type;
  if (typeof type !== "string") throw corruptInput("missing_event_type", raw.lineNo);
  if (isEphemeralType(type)) {
    if (options.dropEphemeral) return null;
    throw new PixirError("ephemeral_not_loggable", undefined, { type, line: raw.lineNo });
  }
  if (!isCanonicalType(type)) throw corruptInput("unknown_event_type", raw.lineNo, { type: typeForDetails(type) });
  if (value.seq !== undefined && value.seq !== null && !isSeq(value.seq)) throw corruptInput("invalid_seq", raw.lineNo);
  if (value.data !== undefined && !isJsonObject(value.data)) throw corruptInput("invalid_data", raw.lineNo);
  for (const field of ["id", "ts"] as const) {
    const v = value[field];
    if (v !== undefined && (typeof v !== "string" || (field === "id" && v === ""))) throw corruptInput("invalid_field", raw.lineNo, { field });
  }
  if (!isEncodable(text, value)) {
    throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type, line: raw.lineNo });
  }
  return { value, text, lineNo: raw.lineNo };
}

/**
 * A stamped line of Session `sessionId` (its UTF-8 bytes) in our writers' layout whose data is
 * canonical (line-check.ts), decoded without JSON.parse; its data is parsed only when read. Such a
 * line passes every check of decodeInputLine, checkInputSessionId and requireStamped, and it is
 * already the line inputLine would write. Null for any other line: the caller decodes it in full, and
 * the full decode names its problem. The stages a fork stream passes through take this path for the
 * lines our own tools write.
 */
export function decodeStampedLine(raw: RawLine, sessionId: Buffer): DecodedLine | null {
  const b = raw.bytes;
  if (checkLine(b, 0, b.length) < 0 || facts.seq === null || head.idEnd === head.idStart) return null;
  if (head.sessionEnd - head.sessionStart !== sessionId.length || b.compare(sessionId, 0, sessionId.length, head.sessionStart, head.sessionEnd) !== 0) return null;
  return checkedLine(b);
}

/** The next input line: checked from its bytes when decodeStampedLine accepts it, else decoded in full. */
export type NextLine = { fast: DecodedLine; raw: RawLine } | { fast: null; input: InputEvent };

/**
 * An input Event's session_id against the target: invalid ids are refused without echo,
 * valid but different ones are an integrity failure.
 */
export function checkInputSessionId(value: unknown, target: string, lineNo: number): void {
  if (value === undefined) return;
  const problem = sessionIdProblem(value);
  if (problem !== null) {
    throw new PixirError("invalid_args", "session id is invalid", {
      field: "session_id",
      reason: problem.reason,
      max_bytes: 235,
      ...(problem.observedBytes !== undefined ? { observed_bytes: problem.observedBytes } : {}),
      line: lineNo,
      next_actions: ["pass_a_valid_session_id"],
    });
  }
  if (value !== target) {
    throw new PixirError("stream_integrity_failed", undefined, {
      reason: "session_id_mismatch",
      expected: target,
      observed: value,
      line: lineNo,
    });
  }
}

export function integrityError(reason: string, expected: unknown, observed: unknown, line: number | null): PixirError {
  return new PixirError("stream_integrity_failed", undefined, { reason, expected, observed, line });
}

/**
 * `write` needs fully stamped Events (§8.1): a non-empty id, a ts, an object data, an integer seq.
 * `inherited` relaxes ts for a fork's inherited Events, which copy the parent's ts verbatim and so may
 * carry a `null` that readers tolerate in the parent (fork.md §4.2).
 */
export function requireStamped(e: InputEvent, inherited = false): void {
  const v = e.value;
  if (typeof v.id !== "string" || v.id === "") throw corruptInput("invalid_field", e.lineNo, { field: "id" });
  if (typeof v.ts !== "string" && !(inherited && v.ts === null)) throw corruptInput("invalid_field", e.lineNo, { field: "ts" });
  if (!isJsonObject(v.data)) throw corruptInput("invalid_data", e.lineNo);
  if (typeof v.session_id !== "string") throw corruptInput("invalid_field", e.lineNo, { field: "session_id" });
  if (!isSeq(v.seq)) throw integrityError("seq_gap", "an integer seq", v.seq ?? null, e.lineNo);
}

/** Input Events of a stream, decoded and shape-checked, with one Event of look-ahead for the caller. */
export class InputStream {
  private readonly lines: AsyncIterator<RawLine>;
  private peeked: InputEvent | null | undefined;

  constructor(input: AsyncIterable<Buffer>, signal?: AbortSignal) {
    // A signal ends the wait for the next chunk; lines split from a chunk in hand need no wait.
    this.lines = splitLines(abortable(input, signal), { path: STDIN_PATH })[Symbol.asyncIterator]();
  }

  async peek(): Promise<InputEvent | null> {
    if (this.peeked === undefined) this.peeked = await this.read();
    return this.peeked;
  }

  async next(): Promise<InputEvent | null> {
    if (this.peeked !== undefined) {
      const e = this.peeked;
      this.peeked = undefined;
      return e;
    }
    return this.read();
  }

  /** Like next(), but a stamped line of `sessionId` in our layout comes checked from its bytes (decodeStampedLine). */
  async nextLine(sessionId: Buffer): Promise<NextLine | null> {
    if (this.peeked !== undefined) {
      const e = this.peeked;
      this.peeked = undefined;
      return e === null ? null : { fast: null, input: e };
    }
    const r = await this.lines.next();
    if (r.done) return null;
    const fast = decodeStampedLine(r.value, sessionId);
    return fast !== null ? { fast, raw: r.value } : { fast: null, input: decodeInputLine(r.value)! };
  }

  private async read(): Promise<InputEvent | null> {
    const r = await this.lines.next();
    if (r.done) return null;
    return decodeInputLine(r.value);
  }
}

/** The stamped Event an input line describes (after requireStamped). */
export function stampedEvent(e: InputEvent): PixirEvent {
  const v = e.value;
  return { id: v.id as string, session_id: v.session_id as string, seq: v.seq as number, ts: v.ts as string, type: v.type as PixirEvent["type"], data: v.data as PixirEvent["data"] };
}

/** Serialise an input Event in our key order, keeping `data` bytes when the line allows it. */
export function inputLine(e: InputEvent, event: PixirEvent): string {
  const exact = Object.keys(e.value).length === 6;
  return serializeEvent(event, lineDataText(e.text, event, exact));
}
