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
