// codex-interop.md §1 and §4.1–§4.3: reading a Codex rollout, line by line, and the text rules of the
// format (T, OT, contextual content, turn boundaries) that the importer, the export and tests share.
import { sha256Hex } from "../../event/ids.js";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { isEncodable, isJsonObject, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { nestsDeeperThan } from "../../event/nesting.js";
import { isValidSessionId } from "../../event/session-id.js";
import { MAX_LINE_BYTES } from "../../lines/codec.js";
import { sourceLineTooLong } from "../../lines/line-bound.js";

export const EPOCH = "1970-01-01T00:00:00.000Z";
const MAX_BASE_BYTES = 200;
// ignoreBOM keeps a byte-order mark in the text: a line that starts with one is not JSON, so it is a malformed
// line (named, or kept raw under --lenient and given back byte for byte), never a line silently 3 bytes short.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });


/** §3.1: the session id of a thread's root Log; an invalid thread id is hashed, never echoed. */
export function codexBaseId(threadId: string): string {
  return isValidSessionId(threadId) && Buffer.byteLength(threadId, "utf8") <= MAX_BASE_BYTES ? threadId : `codex-${sha256Hex(threadId).slice(0, 32)}`;
}

/** A thread id as output may show it: null when it fails the session-id grammar (§4.7). */
export const shownThreadId = (t: unknown): string | null => (isValidSessionId(t) ? t : null);

/** One complete, non-blank line of a rollout (§4.2). */
export interface RolloutLine {
  /** Line number n, counting complete non-blank lines from 1. */
  n: number;
  /**
   * The exact text, without its `\n`, where JSON.stringify(record) does not give it back (and for a skipped
   * line); null where it does, so that a rollout in memory holds each line once, as its record.
   */
  raw: string | null;
  /** The record, or null for a line skipped by --lenient. */
  record: JsonObject | null;
  /** Why a lenient import skipped it. */
  skipped?: "malformed_line" | "invalid_record";
}

export interface Rollout {
  /** The file as named in output and errors (§4.3). */
  display: string;
  /** Where it is read. */
  path: string;
  threadId: string;
  lines: RolloutLine[];
  pendingTail: boolean;
  /** Line 1's payload. */
  meta: JsonObject;
  size: number;
  /** The modification time before the file was read, and the digests of its edges (import index). */
  mtimeMs: number;
  edges: EdgeDigests;
}

/** SHA-256 of a file's first and last EDGE_BYTES (the whole file when it is 2 × EDGE_BYTES or less). */
export interface EdgeDigests {
  head: string;
  tail: string;
}

export const EDGE_BYTES = 64 * 1024;

/** The edge digests of `size` bytes, each edge read by `read(buffer, position)`. */
export function edgeDigests(size: number, read: (buf: Buffer, position: number) => void): EdgeDigests {
  const n = Math.min(size, EDGE_BYTES);
  const buf = Buffer.alloc(n);
  read(buf, 0);
  const head = sha256Hex(buf);
  read(buf, size - n);
  return { head, tail: sha256Hex(buf) };
}

const REPLAY_PAYLOAD_TYPES = new Set(["session_meta", "response_item", "compacted", "event_msg", "turn_context"]);

export function invalidRollout(reason: string, file: string, line: number | null, extra: Record<string, unknown> = {}): PixirError {
  return new PixirError("invalid_codex_session", undefined, { reason, ...(line === null ? {} : { line }), file, ...extra });
}

function isBlank(b: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0d) return false;
  }
  return true;
}

/** §4.2–§4.3: why a line cannot be read, or its record. */
function parseLine(bytes: Buffer): { record: JsonObject; text: string } | { problem: "malformed_line" | "invalid_record"; text: string } {
  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    return { problem: "malformed_line", text: bytes.toString("utf8") };
  }
  // JSON nested deeper than a Log may hold (envelope-and-log.md §7) is a malformed line, named like any other.
  if (nestsDeeperThan(bytes)) return { problem: "malformed_line", text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "malformed_line", text };
  }
  if (!isJsonObject(value) || typeof value.type !== "string") return { problem: "invalid_record", text };
  if (REPLAY_PAYLOAD_TYPES.has(value.type) && !isJsonObject(value.payload)) return { problem: "invalid_record", text };
  // Valid UTF-8 holds no lone surrogate; only a \uD8xx-style escape can bring one in (isEncodable).
  if (!isEncodable(text, value)) return { problem: "invalid_record", text };
  return { record: value, text };
}

/** Line n of a rollout read as `record` from `text`. */
export const rolloutLine = (n: number, text: string, record: JsonObject): RolloutLine => ({ n, raw: JSON.stringify(record) === text ? null : text, record });

/** A line's exact text, without its `\n`. */
export const lineText = (line: RolloutLine): string => line.raw ?? JSON.stringify(line.record);

export type RolloutRead = { kind: "rollout"; rollout: Rollout } | { kind: "skipped"; reason: "empty" | "not_a_rollout" };

/** What a scan learnt of a whole file besides its lines. */
export interface RolloutScan {
  threadId: string;
  meta: JsonObject;
  /** Complete non-blank lines. */
  lineCount: number;
  skippedLines: number;
  pendingTail: boolean;
  size: number;
  mtimeMs: number;
  edges: EdgeDigests;
}

export type RolloutScanResult = { kind: "rollout"; scan: RolloutScan } | { kind: "skipped"; reason: "empty" | "not_a_rollout" };

/** Blocks a rollout is read in; a line longer than one is gathered from several. */
const SCAN_BLOCK = 1024 * 1024;
/** One block for every scan: a scan runs to its end synchronously, and keeps no view of the block. */
const scanBlock = Buffer.allocUnsafe(SCAN_BLOCK);

function unreadable(err: unknown, file: { display: string }): PixirError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM" || code === "EROFS") return new PixirError("permission_denied", undefined, { path: file.display });
  return invalidRollout("unreadable_file", file.display, null);
}

/**
 * §4.1–§4.3: read one file in blocks and hand each complete, non-blank line to `onLine` as it is read
 * (§4.8: a line is held only while it is handled). `named` says the file was given by name (a bad line 1
 * is an error rather than a skipped file). Lines after line 1 that cannot be read fail, or with `lenient`
 * are handed over as skipped placeholders. `onLine` may throw to stop the scan. `onBytes`, when given,
 * is offered each line after line 1 as its bytes first (a view valid only during the call), and takes it
 * by returning true: then the line is neither decoded nor handed to `onLine`.
 */
export function scanRollout(
  file: { path: string; display: string },
  named: boolean,
  lenient: boolean,
  onLine: (line: RolloutLine) => void,
  onBytes?: (bytes: Buffer, n: number) => boolean,
): RolloutScanResult {
  let fd: number;
  let mtimeMs: number;
  try {
    fd = openSync(file.path, "r");
  } catch (err) {
    throw unreadable(err, file);
  }
  try {
    try {
      // The time is taken first: a file that changes while it is read has a later one, and is read again.
      mtimeMs = fstatSync(fd).mtimeMs;
    } catch (err) {
      throw unreadable(err, file);
    }
    let first: { threadId: string; meta: JsonObject } | null = null;
    let n = 0;
    let skippedLines = 0;
    let size = 0;
    let carry: Buffer[] = [];
    let carryBytes = 0;
    let tailBlank = true;
    const handle = (bytes: Buffer): void => {
      if (isBlank(bytes, 0, bytes.length)) return;
      n++;
      // A line nested too deep is malformed (parseLine); the byte path must not walk it either.
      if (n > 1 && !nestsDeeperThan(bytes) && onBytes?.(bytes, n)) return;
      const parsed = parseLine(bytes);
      if (n === 1) {
        const meta = "record" in parsed ? parsed.record.payload : null;
        if ("problem" in parsed || parsed.record.type !== "session_meta" || !isJsonObject(meta) || typeof meta.id !== "string") throw NOT_A_ROLLOUT;
        first = { threadId: meta.id, meta };
        onLine(rolloutLine(n, parsed.text, parsed.record));
        return;
      }
      if ("problem" in parsed) {
        if (!lenient) throw invalidRollout(parsed.problem, file.display, n);
        skippedLines++;
        onLine({ n, raw: parsed.text, record: null, skipped: parsed.problem });
      } else onLine(rolloutLine(n, parsed.text, parsed.record));
    };
    const block = scanBlock;
    for (;;) {
      let got: number;
      try {
        got = readSync(fd, block, 0, SCAN_BLOCK, size);
      } catch (err) {
        throw unreadable(err, file);
      }
      if (got === 0) break;
      size += got;
      let start = 0;
      for (;;) {
        const nl = block.indexOf(0x0a, start);
        if (nl === -1 || nl >= got) break;
        if (carryBytes > 0) {
          if (carryBytes + nl - start > MAX_LINE_BYTES) throw sourceLineTooLong("rollout", file.display, n + 1);
          carry.push(block.subarray(start, nl));
          const whole = Buffer.concat(carry, carryBytes + nl - start);
          carry = [];
          carryBytes = 0;
          handle(whole);
        } else handle(block.subarray(start, nl));
        start = nl + 1;
      }
      if (start < got) {
        // The start of a line that goes on in the next block: copied, since the block is read into again.
        carry.push(Buffer.from(block.subarray(start, got)));
        carryBytes += got - start;
        // Refused as soon as it passes the bound, before more of it is read (a 4 GiB line of zeros).
        if (carryBytes > MAX_LINE_BYTES) throw sourceLineTooLong("rollout", file.display, n + 1);
      }
    }
    if (carryBytes > 0) {
      const rest = Buffer.concat(carry, carryBytes);
      tailBlank = isBlank(rest, 0, rest.length);
    }
    if (first === null) return { kind: "skipped", reason: "empty" };
    const found: { threadId: string; meta: JsonObject } = first;
    let edges: EdgeDigests;
    try {
      edges = edgeDigests(size, (buf, position) => {
        if (readSync(fd, buf, 0, buf.length, position) !== buf.length) throw new Error("short read");
      });
    } catch (err) {
      throw unreadable(err, file);
    }
    return { kind: "rollout", scan: { threadId: found.threadId, meta: found.meta, lineCount: n, skippedLines, pendingTail: !tailBlank, size, mtimeMs, edges } };
  } catch (err) {
    if (err !== NOT_A_ROLLOUT) throw err;
    if (!named) return { kind: "skipped", reason: "not_a_rollout" };
    throw invalidRollout("missing_session_meta", file.display, 1);
  } finally {
    closeSync(fd);
  }
}

/** Thrown inside a scan when line 1 does not make the file a rollout. */
const NOT_A_ROLLOUT = new Error("not a rollout");

/** §4.1–§4.3: read one file whole, its lines in memory (a family planned in memory needs them all). */
export function readRollout(file: { path: string; display: string }, named: boolean, lenient: boolean): RolloutRead {
  const lines: RolloutLine[] = [];
  const read = scanRollout(file, named, lenient, (line) => lines.push(line));
  if (read.kind === "skipped") return read;
  const { threadId, meta, pendingTail, size, mtimeMs, edges } = read.scan;
  return { kind: "rollout", rollout: { display: file.display, path: file.path, threadId, lines, pendingTail, meta, size, mtimeMs, edges } };
}

// ---------------------------------------------------------------------------------------------------
// §2.4.1, §2.4.5, §1.8: the text rules.

/** §2.4.1 `T(content)`. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const c of content) {
    if (isJsonObject(c) && (c.type === "input_text" || c.type === "output_text" || c.type === "text") && typeof c.text === "string") parts.push(c.text);
  }
  return parts.join("\n");
}

/** §2.4.5 `OT(v)`. */
export function outputText(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) {
    const parts: string[] = [];
    for (const c of v) if (isJsonObject(c) && typeof c.text === "string") parts.push(c.text);
    return parts.join("\n");
  }
  if (isJsonObject(v)) {
    if (typeof v.text === "string") return v.text;
    if (Object.hasOwn(v, "content")) return outputText(v.content);
  }
  return JSON.stringify(v);
}

const CONTEXT_MARKERS: Array<[string, string]> = [
  ["# agents.md instructions for ", "</instructions>"],
  ["<environment_context>", "</environment_context>"],
  ["<user_instructions>", "</user_instructions>"],
  ["<skill>", "</skill>"],
  ["<user_shell_command>", "</user_shell_command>"],
  ["<turn_aborted>", "</turn_aborted>"],
  ["<subagent_notification>", "</subagent_notification>"],
  ["<additional_context>", "</additional_context>"],
];

/** ASCII lower case only (§1.8: comparisons ignore ASCII case). */
const asciiLower = (s: string): string => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * §1.8: content is contextual when one of its input_text parts is wrapped in a known marker pair. Only
 * the ends of a text are lowered for the comparison (a part can be the whole of AGENTS.md).
 */
export function isContextual(content: unknown): boolean {
  if (!Array.isArray(content)) return false;
  for (const c of content) {
    if (!isJsonObject(c) || c.type !== "input_text" || typeof c.text !== "string") continue;
    const head = c.text.trimStart();
    const whole = head.trimEnd();
    for (const [open, close] of CONTEXT_MARKERS) {
      if (asciiLower(head.slice(0, open.length)) === open && whole.length >= close.length && asciiLower(whole.slice(whole.length - close.length)) === close) return true;
    }
  }
  return false;
}

/** §1.8: an item that is a user turn. */
export function isBoundaryItem(item: unknown): boolean {
  if (!isJsonObject(item)) return false;
  if (item.type === "agent_message") return true;
  return item.type === "message" && item.role === "user" && !isContextual(item.content);
}

/** §1.8 `drop_turns`: how many items of a history with these boundary indexes remain; null when nothing changes. */
export function dropTurnsCut(boundaries: number[], k: unknown): number | null {
  if (typeof k !== "number" || !Number.isInteger(k) || k < 1 || boundaries.length === 0) return null;
  return k >= boundaries.length ? boundaries[0]! : boundaries[boundaries.length - k]!;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** §2.6: a record timestamp usable as an Event ts, or null. */
export function validTimestamp(v: unknown): string | null {
  return typeof v === "string" && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v)) ? v : null;
}

const TIMESTAMP_HEAD = '{"timestamp":';

/** §3.5 `rest(x)`: what follows the leading `{"timestamp":"…"` of a line, or null when it has none. */
export function restAfterTimestamp(line: string): { timestamp: string; rest: string } | null {
  if (!line.startsWith(`${TIMESTAMP_HEAD}"`)) return null;
  // The JSON string starts at the quote; find its closing quote, skipping escapes.
  let i = TIMESTAMP_HEAD.length + 1;
  while (i < line.length) {
    const c = line.charCodeAt(i);
    if (c === 0x5c) i += 2;
    else if (c === 0x22) break;
    else i++;
  }
  if (i >= line.length) return null;
  let timestamp: string;
  try {
    timestamp = JSON.parse(line.slice(TIMESTAMP_HEAD.length, i + 1)) as string;
  } catch {
    return null;
  }
  return { timestamp, rest: line.slice(i + 1) };
}

/** `{"timestamp":` + JSON(τ) + rest: a copied line as Codex's fork writes it (§3.5, §5.3). */
export const withTimestamp = (timestamp: string, rest: string): string => `${TIMESTAMP_HEAD}${JSON.stringify(timestamp)}${rest}`;

export type RolloutHead = { kind: "rollout"; threadId: string; meta: JsonObject } | { kind: "skipped"; reason: "empty" | "not_a_rollout" };

const HEAD_CHUNK = 64 * 1024;

/**
 * The bytes of the first complete non-blank line of an open file, or null (none yet). Each chunk is searched
 * once; a line longer than a Log line may be is refused once it passes the bound, before more is read.
 */
function firstNonBlankLine(fd: number, display: string): Buffer | null {
  const parts: Buffer[] = [];
  let have = 0;
  for (let pos = 0; ; ) {
    // The first chunk is read into the scan block (most first lines fit); a longer line takes more.
    const buf = parts.length === 0 ? scanBlock.subarray(0, HEAD_CHUNK) : Buffer.allocUnsafe(HEAD_CHUNK);
    const n = readSync(fd, buf, 0, HEAD_CHUNK, pos);
    if (n === 0) return null;
    pos += n;
    let start = 0;
    for (let nl = buf.indexOf(0x0a, 0); nl !== -1 && nl < n; nl = buf.indexOf(0x0a, start)) {
      const line = parts.length === 0 ? buf.subarray(start, nl) : Buffer.concat([...parts, buf.subarray(start, nl)]);
      if (!isBlank(line, 0, line.length)) return line;
      parts.length = 0;
      have = 0;
      start = nl + 1;
    }
    // The start of a line that goes on in the next chunk: copied, since the scan block is read into again.
    parts.push(Buffer.from(buf.subarray(start, n)));
    have += n - start;
    if (have > MAX_LINE_BYTES) throw sourceLineTooLong("rollout", display, 1);
  }
}

/** §4.1: line 1 of a file, read without reading the rest: whether it is a rollout, and whose. */
export function readRolloutHead(file: { path: string; display: string }, named: boolean): RolloutHead {
  let fd: number;
  try {
    fd = openSync(file.path, "r");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new PixirError("permission_denied", undefined, { path: file.display });
    throw invalidRollout("unreadable_file", file.display, null);
  }
  try {
    const line = firstNonBlankLine(fd, file.display);
    if (line === null) return { kind: "skipped", reason: "empty" };
    const parsed = parseLine(line);
    const meta = "record" in parsed ? parsed.record.payload : null;
    if ("problem" in parsed || parsed.record.type !== "session_meta" || !isJsonObject(meta) || typeof meta.id !== "string") {
      if (!named) return { kind: "skipped", reason: "not_a_rollout" };
      throw invalidRollout("missing_session_meta", file.display, 1);
    }
    return { kind: "rollout", threadId: meta.id, meta };
  } catch (err) {
    if (err instanceof PixirError) throw err;
    throw invalidRollout("unreadable_file", file.display, null);
  } finally {
    closeSync(fd);
  }
}
