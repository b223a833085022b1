// The line bound of a file read whole (the Claude importer reads a transcript into one buffer): before a
// file larger than the bound is read, one pass with a small buffer finds a line longer than the bound and
// stops there, so a 200 MB line or a sparse 4 GB file of zeros is refused after MAX_LINE_BYTES + 1 bytes
// of it, not after it has been buffered whole.
// Importers that stream a source (Codex) hold the carried part of a line to the same bound and refuse it
// with the same error as soon as it passes (sourceLineTooLong).
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { PixirError } from "../event/errors.js";
import { MAX_LINE_BYTES } from "./codec.js";

/**
 * A source line longer than a Log line may be: its record can never be stored (its Event holds it), nor
 * kept raw, so it is refused, `--lenient` or not. `what` names the source ("transcript", "rollout").
 */
export function sourceLineTooLong(what: string, file: string, line: number): PixirError {
  return new PixirError("log_encode_failed", `a line of the ${what} is longer than a Log line may be`, {
    reason: "line_too_long",
    type: null,
    file,
    line,
    max_line_bytes: MAX_LINE_BYTES,
    next_actions: [`this ${what} cannot be imported whole: the line is refused with --lenient too`],
  });
}

const SCAN_BLOCK = 1 << 20;
/** Files already scanned in this process, by path, size and mtime: an import reads a file more than once. */
const scanned = new Map<string, string>();

/** A line of the file longer than `max` bytes (its `\n` not counted): its 1-based number, or null for none. */
export function overlongLine(abs: string, max: number = MAX_LINE_BYTES): number | null {
  const fd = openSync(abs, "r");
  try {
    const st = fstatSync(fd);
    // No line of a file this small can pass the bound.
    if (st.size <= max) return null;
    const key = `${st.size}:${st.mtimeMs}:${st.ino}:${max}`;
    if (scanned.get(abs) === key) return null;
    const found = scanLines(fd, max);
    if (found === null) scanned.set(abs, key);
    return found;
  } finally {
    closeSync(fd);
  }
}

/** Read the file in blocks, counting newlines and the length of the current line; stop past `max`. */
function scanLines(fd: number, max: number): number | null {
  const buf = Buffer.allocUnsafe(SCAN_BLOCK);
  let lineNo = 1;
  let lineBytes = 0;
  for (let pos = 0; ; ) {
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n <= 0) return null;
    let start = 0;
    for (let nl = buf.indexOf(0x0a, 0); nl !== -1 && nl < n; nl = buf.indexOf(0x0a, start)) {
      if (lineBytes + nl - start > max) return lineNo;
      lineNo++;
      lineBytes = 0;
      start = nl + 1;
    }
    lineBytes += n - start;
    if (lineBytes > max) return lineNo;
    pos += n;
  }
}

/**
 * The complete lines of an open file, read in blocks (1 MiB at most): `next()` gives the next line's bytes without
 * its `\n` (a view valid until the following call), or null at the end. A line is gathered across blocks
 * only up to `max` bytes: past it `tooLong(line)` is thrown before more of it is read. After the end,
 * `tailBytes` is the length of a last line without `\n` (pending: its writer may be writing it).
 */
export class FileLines {
  /** The 1-based number of the line `next()` gave last. */
  line = 0;
  tailBytes = 0;
  private readonly block: Buffer;
  private got = 0;
  private start = 0;
  private pos = 0;
  private carry: Buffer[] = [];
  private carryBytes = 0;
  private ended = false;

  /** `blockBytes`: smaller for a small file (many small files do not each take a 1 MiB buffer). */
  constructor(
    private readonly fd: number,
    private readonly tooLong: (line: number) => Error,
    private readonly max: number = MAX_LINE_BYTES,
    blockBytes: number = SCAN_BLOCK,
  ) {
    this.block = Buffer.allocUnsafe(Math.max(1, Math.min(blockBytes, SCAN_BLOCK)));
  }

  next(): Buffer | null {
    for (;;) {
      const nl = this.start < this.got ? this.block.indexOf(0x0a, this.start) : -1;
      if (nl !== -1 && nl < this.got) {
        const from = this.start;
        this.start = nl + 1;
        this.line++;
        if (this.carryBytes + nl - from > this.max) throw this.tooLong(this.line);
        if (this.carryBytes === 0) return this.block.subarray(from, nl);
        const whole = Buffer.concat([...this.carry, this.block.subarray(from, nl)]);
        this.carry = [];
        this.carryBytes = 0;
        return whole;
      }
      if (this.ended) return null;
      if (this.start < this.got) {
        // The start of a line that goes on in the next block: copied, since the block is read into again.
        this.carry.push(Buffer.from(this.block.subarray(this.start, this.got)));
        this.carryBytes += this.got - this.start;
        if (this.carryBytes > this.max) throw this.tooLong(this.line + 1);
      }
      this.got = readSync(this.fd, this.block, 0, this.block.length, this.pos);
      this.pos += this.got;
      this.start = 0;
      if (this.got === 0) {
        this.ended = true;
        this.tailBytes = this.carryBytes;
      }
    }
  }
}
