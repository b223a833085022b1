// envelope-and-log.md §8.1: checks on Events that arrive on stdin to be written.
import { isUtf8 } from "node:buffer";
import { type LineBlock, type RawLine } from "./codec.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../event/nesting.js";
import { lineBlocksOf } from "./pipe-read.js";
import { abortable } from "./abortable.js";
import { deepWellFormed, isCanonicalType, isIsoUtc, isUtf8UpToCut, isReplayType, lineDataText, isEncodable, isEphemeralType, isJsonObject, isSeq, serializeEvent, typeForDetails, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { PixirError, prefixMismatch } from "../event/errors.js";
import { IdSet } from "../event/id-set.js";
import { sessionIdProblem } from "../event/session-id.js";
import { stdinLineActions } from "./foreign.js";

export const STDIN_PATH = "-";
const NEWLINE = 0x0a;

/** An input object that passed the shape checks; fields may still be missing (append stamps them). */
export interface InputEvent {
  value: JsonObject;
  text: string;
  lineNo: number;
}

function corruptInput(reason: string, lineNo: number, extra: Record<string, unknown> = {}, bytes?: Uint8Array): PixirError {
  // The Log is not the problem (`pixir-log check` would find nothing): the hint is about the input.
  const next_actions = stdinLineActions(bytes ?? new Uint8Array());
  return new PixirError("corrupt_log_line", undefined, { reason, line: lineNo, path: STDIN_PATH, ...extra, next_actions });
}

export interface DecodeInputOptions {
  /** Ephemeral Events are returned as null instead of refused (pixir-log append --drop-ephemeral). */
  dropEphemeral?: boolean;
  /**
   * A `null` ts passes (a fork stream's lines after the header: inherited Events copy the parent's ts,
   * which readers tolerate as null); requireStamped(e, inherited) then decides where it may stand.
   */
  nullTs?: boolean;
}

/** Parse and shape-check one input line. Returns null for a dropped ephemeral Event. */
export function decodeInputLine(raw: RawLine, options: DecodeInputOptions = {}): InputEvent | null {
  if (!isUtf8(raw.bytes)) throw corruptInput(!raw.terminated && isUtf8UpToCut(raw.bytes) ? "torn_tail" : "invalid_utf8", raw.lineNo);
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
  if (typeof type !== "string") throw corruptInput("missing_event_type", raw.lineNo, {}, raw.bytes);
  if (isEphemeralType(type)) {
    if (options.dropEphemeral) return null;
    throw new PixirError("ephemeral_not_loggable", undefined, { type, line: raw.lineNo });
  }
  if (!isCanonicalType(type)) throw corruptInput("unknown_event_type", raw.lineNo, { type: typeForDetails(type) }, raw.bytes);
  if (value.seq !== undefined && value.seq !== null && !isSeq(value.seq)) throw corruptInput("invalid_seq", raw.lineNo);
  if (value.data !== undefined && !isJsonObject(value.data)) throw corruptInput("invalid_data", raw.lineNo);
  for (const field of ["id", "ts"] as const) {
    const v = value[field];
    if (v === undefined || (v === null && field === "ts" && options.nullTs)) continue;
    if (typeof v !== "string" || (field === "id" && v === "")) throw corruptInput("invalid_field", raw.lineNo, { field });
  }
  if (!isEncodable(text, value)) {
    throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type, line: raw.lineNo });
  }
  return { value, text, lineNo: raw.lineNo };
}

/**
 * envelope-and-log.md §8.1 for an Event read from a Log and about to be written again (a fork's or a
 * materialize's inherited Events): a lone surrogate, which a reader accepts from its `\\udXXX` escape,
 * cannot be written, so such an Event gives the log_encode_failed that pixir-log write gives it.
 * `source` is its stored line (bytes) or its data's JSON text; only one with such an escape is walked.
 */
export function assertWritable(e: PixirEvent, source: Uint8Array | string | undefined, lineNo: number | null): void {
  const hasEscape = (t: { indexOf(s: string): number }) => t.indexOf("\\ud") >= 0 || t.indexOf("\\uD") >= 0;
  const suspect =
    source === undefined ||
    (typeof source === "string" ? hasEscape(source) : hasEscape(Buffer.from(source.buffer, source.byteOffset, source.byteLength))) ||
    (typeof e.id === "string" && !e.id.isWellFormed()) ||
    (typeof e.ts === "string" && !e.ts.isWellFormed());
  if (suspect && !deepWellFormed(e)) throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type: e.type, line: lineNo });
}

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
  if (!inherited) requireIsoTs(v.ts, e.lineNo);
  if (!isJsonObject(v.data)) throw corruptInput("invalid_data", e.lineNo);
  if (typeof v.session_id !== "string") throw corruptInput("invalid_field", e.lineNo, { field: "session_id" });
  if (!isSeq(v.seq)) throw integrityError("seq_gap", "an integer seq", v.seq ?? null, e.lineNo);
}

/**
 * cli.md §8.5 lists `invalid_ts` among what our writers never produce: an Event a writer stamps or
 * takes as its own (not one a fork inherits verbatim) must carry an ISO-8601 UTC ts.
 */
export function requireIsoTs(ts: unknown, lineNo: number): void {
  if (typeof ts === "string" && !isIsoUtc(ts)) throw corruptInput("invalid_field", lineNo, { field: "ts", expected: "ISO-8601 UTC" });
}

/**
 * cli.md §8.5: our writers never store an id twice (`duplicate_id`). A writer refuses an id its stream
 * repeats, or the id of the Log's last Event (an append sent again). The rest of an existing Log is not
 * read, so that appends stay O(tail) (envelope-and-log.md §9); `pixir-log check` finds any other.
 */
export class StreamIds {
  private readonly ids = new IdSet();
  private count = 0;
  constructor(private readonly lastId: string | null = null) {}

  admit(id: string, lineNo: number): void {
    // Memory stays flat (envelope-and-log.md §12): past STREAM_IDS_KEPT ids (16 MiB of fingerprints, some
    // 1.3 GiB of Log), later ids are checked against those kept but not kept themselves.
    const repeated = this.count < STREAM_IDS_KEPT ? !this.ids.add(id) : this.ids.has(id);
    if (id === this.lastId || repeated) throw integrityError("duplicate_id", "an id not used before", "an id used before", lineNo);
    this.count++;
  }
}

/** Ids a writer keeps per stream: the most that fit 2^20 slots of IdSet below its load limit. */
export const STREAM_IDS_KEPT = 700_000;

/**
 * Lines of input left in a block (InputStream.restBlocks): `bytes[start, end)` is whole lines, each
 * ending in `\n`; with `tail`, `[start, end)` is the stream's last line, which had no `\n`. Valid until
 * the next block is asked for.
 */
export interface InputBlock {
  bytes: Buffer;
  start: number;
  end: number;
  tail: boolean;
}

/**
 * Input Events of a stream, decoded and shape-checked, with one Event of look-ahead for the caller;
 * or, after the first lines, the rest of the stream as blocks of bytes (restBlocks), for a reader that
 * checks lines where they lie (a fork stream's many inherited lines).
 */
export class InputStream {
  private readonly source: AsyncIterator<LineBlock>;
  private block: LineBlock | null = null;
  /** The next unread byte of `block`. */
  private at = 0;
  private lineNo = 0;
  /** Physical lines (blank ones included) that peek() and next() have read: restBlocks() starts after them. */
  get linesRead(): number {
    return this.lineNo;
  }
  /** Bytes of the stream before `block`. */
  private blockOffset = 0;
  private peeked: InputEvent | null | undefined;

  constructor(input: AsyncIterable<Buffer>, signal?: AbortSignal) {
    // A signal ends the wait for the next chunk; lines of a block in hand need no wait.
    this.source = abortable(lineBlocksOf(input, { path: STDIN_PATH }), signal)[Symbol.asyncIterator]();
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

  /** What next() has not returned yet, as blocks; the stream is then used up. Not after a peek() alone. */
  async *restBlocks(): AsyncGenerator<InputBlock> {
    if (this.peeked !== undefined) throw new Error("InputStream.restBlocks: an Event was peeked and not taken");
    for (;;) {
      const block = this.block;
      if (block !== null && this.at < block.end) {
        const start = this.at;
        this.at = block.end;
        yield { bytes: block.bytes, start, end: block.end, tail: block.tail };
      }
      if (!(await this.nextBlock())) return;
    }
  }

  private async nextBlock(): Promise<boolean> {
    if (this.block !== null) this.blockOffset += this.block.end;
    const r = await this.source.next();
    this.block = r.done ? null : r.value;
    this.at = 0;
    return this.block !== null;
  }

  /** The next non-blank line, as bytes of its own. */
  private async rawLine(): Promise<RawLine | null> {
    for (;;) {
      const block = this.block;
      while (block !== null && this.at < block.end) {
        const s = this.at;
        const e = block.tail ? block.end : block.bytes.indexOf(NEWLINE, s);
        this.at = block.tail ? block.end : e + 1;
        this.lineNo++;
        if (e > s) return { bytes: Buffer.from(block.bytes.subarray(s, e)), lineNo: this.lineNo, offset: this.blockOffset + s, terminated: !block.tail };
      }
      if (!(await this.nextBlock())) return null;
    }
  }

  private async read(): Promise<InputEvent | null> {
    const raw = await this.rawLine();
    return raw === null ? null : decodeInputLine(raw);
  }
}

/**
 * The seqs of a fork stream after its header (fork.md §5), for the stages that read one
 * (pixir-summarize, pixir-log write): 1..N inherited Events, then the child's own; or, for a share_v1
 * stream in compact form (the first seq after the header is N+1, or there is none), N+1.. only.
 */
export class ForkStreamSeqs {
  /** The seq the next Event must have. */
  next = 1;
  /** A share_v1 stream in compact form: its inherited Events are not in it. */
  compact = false;
  private seen = 0;

  constructor(
    private readonly n: number,
    private readonly share: boolean,
  ) {}

  /** Check the next Event's seq (and, inside the prefix, its type): true if it is an inherited one. */
  admit(type: string, seq: number, line: number | null): boolean {
    if (this.seen++ === 0 && this.share && seq === this.n + 1) {
      // The first seq after a share header tells the compact form (N+1) from the resolved one (1).
      this.compact = true;
      this.next = this.n + 1;
    }
    if (seq !== this.next) throw integrityError("seq_gap", this.next, seq, line);
    const inPrefix = !this.compact && this.next <= this.n;
    if (inPrefix && !isReplayType(type)) throw integrityError("non_replay_type_in_prefix", "a replay type", type, line);
    // The child has its header: a second one would be a session_fork that is not the first line.
    if (type === "session_fork") throw integrityError("fork_header_on_existing_log", "a plain event", type, line);
    this.next++;
    return inPrefix;
  }

  /** At the end of the stream: whether it held the inherited Events (a share header alone is compact). */
  end(): boolean {
    if (this.share && this.seen === 0) {
      this.compact = true;
      this.next = this.n + 1;
    }
    return !this.compact;
  }
}

/** The inherited Events a fork stream held must be the header's count and digest (fork.md §5). */
export function checkStreamedPrefix(
  streamed: { count: number; digest(): string },
  h: { childId: string; parentId: string; n: number; digest: string },
  line: number | null,
): void {
  if (streamed.count !== h.n) throw integrityError("count_mismatch", h.n, streamed.count, line);
  const actual = streamed.digest();
  if (actual !== h.digest) throw prefixMismatch(h.childId, h.parentId, { digest: h.digest, count: h.n }, { digest: actual, count: streamed.count });
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
