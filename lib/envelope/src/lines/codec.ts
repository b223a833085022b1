// envelope-and-log.md §7 "Splitting into lines": a streaming NDJSON splitter over raw bytes.
// It works on Buffers (not strings) so that it can report invalid UTF-8, byte offsets for the
// out-of-order index, and refuse an over-long line without holding it in memory.
import { PixirError } from "../event/errors.js";

/** Lines longer than this are refused rather than buffered (a 64 MiB line must not exhaust memory). */
export const MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface RawLine {
  /** The line's bytes without its `\n` (a `\r` before it is kept; JSON treats it as whitespace). */
  bytes: Buffer;
  /** 1-based physical line number, blank lines included. */
  lineNo: number;
  /** Byte offset of the line's first byte in the stream. */
  offset: number;
  /** False only for a final line that had no `\n`. */
  terminated: boolean;
}

export interface SplitOptions {
  /** Where the bytes come from, for error details: a workspace-relative path, or "-" for stdin. */
  path: string;
  maxLineBytes?: number;
}

const NEWLINE = 0x0a;

/** The `\n` bytes in `buf[0, end)`: the lines a block of whole lines held, for the number of a later one. */
export function newlinesBefore(buf: Buffer, end: number): number {
  let n = 0;
  for (let i = buf.indexOf(NEWLINE, 0); i !== -1 && i < end; i = buf.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/** A line of `path` longer than `max` bytes, refused on reading (pipe-read.ts refuses it the same way). */
export function lineTooLong(path: string, lineNo: number, max: number): PixirError {
  return new PixirError("corrupt_log_line", "a line is longer than the line-length limit", {
    reason: "line_too_long",
    line: lineNo,
    path,
    max_line_bytes: max,
  });
}

/**
 * A line a writer was about to store is past the limit every reader holds it to (a stamp, or a fork's
 * longer child id, made it grow): it is refused, since the Log would be unreadable (envelope-and-log.md §8.1).
 */
export function lineTooLongToWrite(bytes: number, type: string | null, lineNo: number | null): PixirError {
  return new PixirError("log_encode_failed", "an event would be stored as a line longer than the line-length limit", {
    reason: "line_too_long",
    type,
    line: lineNo,
    observed_bytes: bytes,
    max_line_bytes: MAX_LINE_BYTES,
  });
}

/** Split a byte stream into lines. Empty lines are counted but not yielded. */
export async function* splitLines(chunks: AsyncIterable<Buffer | string>, options: SplitOptions): AsyncGenerator<RawLine> {
  const max = options.maxLineBytes ?? MAX_LINE_BYTES;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  let lineStart = 0;
  for await (const input of chunks) {
    const chunk = typeof input === "string" ? Buffer.from(input, "utf8") : input;
    let from = 0;
    while (from < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, from);
      if (nl === -1) {
        pendingBytes += chunk.length - from;
        if (pendingBytes > max) throw lineTooLong(options.path, lineNo + 1, max);
        pending.push(chunk.subarray(from));
        break;
      }
      lineNo++;
      let bytes: Buffer;
      if (pending.length === 0) {
        bytes = chunk.subarray(from, nl);
      } else {
        pending.push(chunk.subarray(from, nl));
        bytes = Buffer.concat(pending, pendingBytes + (nl - from));
        pending = [];
        pendingBytes = 0;
      }
      if (bytes.length > max) throw lineTooLong(options.path, lineNo, max);
      const offset = lineStart;
      lineStart += bytes.length + 1;
      from = nl + 1;
      if (bytes.length > 0) yield { bytes, lineNo, offset, terminated: true };
    }
  }
  if (pendingBytes > 0) {
    lineNo++;
    yield { bytes: Buffer.concat(pending, pendingBytes), lineNo, offset: lineStart, terminated: false };
  }
}

/** The size of the reused buffer of the block readers (lineBlocks, streamLineBlocks). */
export const LINE_BLOCK = 1 << 20;

/**
 * A buffer of whole lines: `bytes[0, end)` is lines that each end in `\n`; or, with `tail`, the last
 * bytes of the range, which lack one (a line longer than MAX_LINE_BYTES comes as a tail too).
 */
export interface LineBlock {
  bytes: Buffer;
  end: number;
  tail: boolean;
}

/**
 * A byte stream (stdin) as blocks of whole lines in one reused buffer, for readers that check lines
 * where they lie instead of making an object per line (splitLines). A block is valid until the next
 * is asked for; it holds the whole lines of one input chunk or more (up to the buffer's size). Blank
 * lines are kept (the caller counts them); a line longer than the limit is refused as splitLines refuses
 * it, and a final line without `\n` comes last, as a `tail` block of its own.
 */
export async function* streamLineBlocks(chunks: AsyncIterable<Buffer | string>, options: SplitOptions): AsyncGenerator<LineBlock> {
  const max = options.maxLineBytes ?? MAX_LINE_BYTES;
  // The buffer never exceeds max + 1 bytes, so every whole line in it is within the limit.
  let buf = Buffer.allocUnsafe(Math.min(LINE_BLOCK, max + 1));
  let have = 0;
  let linesBefore = 0;
  const countLines = (end: number) => (linesBefore += newlinesBefore(buf, end));
  for await (const input of chunks) {
    const chunk = typeof input === "string" ? Buffer.from(input, "utf8") : input;
    let from = 0;
    while (from < chunk.length) {
      if (have === buf.length) {
        const last = buf.lastIndexOf(NEWLINE, have - 1);
        if (last >= 0) {
          yield { bytes: buf, end: last + 1, tail: false };
          countLines(last + 1);
          buf.copy(buf, 0, last + 1, have);
          have -= last + 1;
        } else {
          // One line fills the buffer: grow it, up to the limit.
          if (have > max) throw lineTooLong(options.path, linesBefore + 1, max);
          const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, max + 1));
          buf.copy(bigger, 0, 0, have);
          buf = bigger;
        }
      }
      const n = chunk.copy(buf, have, from);
      have += n;
      from += n;
    }
    // Whole lines go on as soon as a chunk completes them: a slow writer's lines are not held back.
    const last = have === 0 ? -1 : buf.lastIndexOf(NEWLINE, have - 1);
    if (last >= 0) {
      yield { bytes: buf, end: last + 1, tail: false };
      countLines(last + 1);
      buf.copy(buf, 0, last + 1, have);
      have -= last + 1;
    }
  }
  // Every whole line has gone on with its chunk: what is left has no `\n`.
  if (have > max) throw lineTooLong(options.path, linesBefore + 1, max);
  if (have > 0) yield { bytes: buf, end: have, tail: true };
}
