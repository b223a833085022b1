// claude-interop.md §4.2, §4.3 step 3: reading a source file: its bytes (refused at an over-long line
// before it is buffered), its prefix's digest, whether it grew a line, and the checking pass's look at it.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { PixirError } from "../../event/errors.js";
import { MAX_LINE_BYTES } from "../../lines/codec.js";
import { overlongLine, sourceLineTooLong } from "../../lines/line-bound.js";
import type { SourceFile } from "./discover.js";
import type { ClaudeImportOptions } from "./report.js";
import { readTranscriptBytes, readTranscriptFile, type ReadFile } from "./transcript.js";

export const PROGRESS_BYTES = 1024 * 1024;

export function sha256Prefix(abs: string, bytes: number): string {
  const h = createHash("sha256");
  const fd = openSync(abs, "r");
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; pos < bytes; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, bytes - pos), pos);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
  return h.digest("hex");
}

/** Is there a `\n` in the file after `from`? (a complete line beyond the checkpoint). */
export function hasLineAfter(abs: string, from: number): { size: number; more: boolean } {
  const fd = openSync(abs, "r");
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(1 << 16);
    for (let pos = from; pos < size; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) break;
      if (buf.subarray(0, n).includes(0x0a)) return { size, more: true };
      pos += n;
    }
    return { size, more: false };
  } finally {
    closeSync(fd);
  }
}

/** §4.2: a source file that cannot be read is `unreadable_file`, or `permission_denied` (exit 3). */
export function readingSource<T>(src: SourceFile, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof PixirError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new PixirError("permission_denied", undefined, { path: src.file, operation: "read" });
    throw new PixirError("invalid_claude_session", undefined, { reason: "unreadable_file", file: src.file });
  }
}

/**
 * A source file, read whole once no line of it is longer than a Log line may be: a record that long
 * can never be stored (its Event holds it), so it is refused before the file is buffered, at the first
 * MAX_LINE_BYTES + 1 bytes of that line, `--lenient` or not (no Log line can keep it raw either).
 */
export const readSource = (src: SourceFile, files?: FileBuffers): Buffer =>
  readingSource(src, () => {
    const line = overlongLine(src.abs);
    if (line !== null) throw sourceLineTooLong("transcript", src.file, line);
    return files !== undefined ? files.read(src.abs) : readFileSync(src.abs);
  });

/**
 * A source file at least this large is never held whole: it is read in blocks, and its records' bytes are
 * read again from the file when its Logs are written (transcript.ts readTranscriptFile). Below it, one read
 * of the whole file is the cheaper way, and the unit's buffers are used again (FileBuffers).
 */
export const WHOLE_FILE_BYTES = 8 * 1024 * 1024;

/**
 * §4.2, §4.3: a source file's records, and the digest of its complete lines. `wholeBelow`: the size from
 * which it is read in blocks (WHOLE_FILE_BYTES; tests choose). With `keep` false its lines are only checked.
 */
export function readTranscript(src: SourceFile, lenient: boolean, say?: (percent: number | null) => void, files?: FileBuffers, wholeBelow = WHOLE_FILE_BYTES, keep = true): { read: ReadFile; sha256: string } {
  const size = readingSource(src, () => statSync(src.abs).size);
  const progress = size >= PROGRESS_BYTES ? say : undefined;
  if (size < wholeBelow) {
    const bytes = readSource(src, files);
    const read = readTranscriptBytes(bytes, src.file, lenient, progress, keep, true);
    return { read, sha256: createHash("sha256").update(bytes.subarray(0, read.completeBytes)).digest("hex") };
  }
  return readingSource(src, () => {
    const line = overlongLine(src.abs);
    if (line !== null) throw sourceLineTooLong("transcript", src.file, line);
    const h = createHash("sha256");
    const read = readTranscriptFile(src.abs, src.file, lenient, (bytes) => h.update(bytes), progress, keep);
    return { read, sha256: h.digest("hex") };
  });
}

/**
 * Source files read into buffers that the next unit uses again once the unit that read them is prepared
 * (prepareFreshUnit), so that a thread preparing many units keeps a flat memory.
 */
export class FileBuffers {
  private static readonly free: Buffer[] = [];
  /** Bytes the free buffers of this thread may keep: a tree of large transcripts keeps no more. */
  private static readonly FREE_BYTES = 16 * 1024 * 1024;
  private static freeBytes = 0;
  private readonly held: Buffer[] = [];
  read(abs: string): Buffer {
    const fd = openSync(abs, "r");
    try {
      const size = fstatSync(fd).size;
      const at = FileBuffers.free.findIndex((b) => b.length >= size);
      const reused = at >= 0 ? FileBuffers.free.splice(at, 1)[0]! : null;
      if (reused !== null) FileBuffers.freeBytes -= reused.length;
      const buf = reused ?? Buffer.allocUnsafeSlow(Math.max(size, 256 * 1024));
      this.held.push(buf);
      let n = 0;
      while (n < size) {
        const got = readSync(fd, buf, n, size - n, n);
        if (got <= 0) break;
        n += got;
      }
      return buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  }
  /** The unit is prepared: nothing refers to its files any more. */
  done(): void {
    for (const b of this.held.splice(0)) {
      if (FileBuffers.freeBytes + b.length > FileBuffers.FREE_BYTES) continue;
      FileBuffers.free.push(b);
      FileBuffers.freeBytes += b.length;
    }
  }
}

export const parentUuidsOf = (src: SourceFile) => {
  let cache: Set<string> | null = null;
  return () => {
    if (cache === null) {
      cache = new Set();
      try {
        for (const r of readTranscript(src, true).read.records) if (r.parentUuid !== null) cache.add(r.parentUuid);
      } catch {
        /* unreadable: links nothing */
      }
    }
    return cache;
  };
};

/**
 * The checking pass of a file whose Logs cannot exist yet: §4.2's reading rules (a malformed line is an
 * error unless lenient), and whether its longest line leaves room for its Events in one Log line (an
 * Event holds the record and at most the record's text again). False sends the unit to a full plan, which
 * names a line that does not fit before anything is written.
 */
export function linesFitLog(src: SourceFile, options: ClaudeImportOptions, say?: (percent: number | null) => void): boolean {
  say?.(null);
  const { read } = readTranscript(src, Boolean(options.lenient), say, undefined, WHOLE_FILE_BYTES, false);
  // The record's bytes (a raw_base64 line: a third more), its mapped text at most as long again, the rest.
  return (read.longestLine * 4) / 3 + read.longestLine + 1024 * 1024 <= MAX_LINE_BYTES;
}
