// Where the bytes of a source file's records are read from when they are mapped and written: the file's
// buffer (a file read whole), or the file itself, a window at a time (a large file, read in blocks by
// transcript.ts readTranscriptFile), so that planning and writing a unit holds its records' places, not
// their bytes (claude-interop.md §4.2 reads; docs/performance.md "Round 4: one huge session").
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { PixirError } from "../../event/errors.js";

/**
 * The bytes of one source file by file offset. `hold(start, end)` returns a buffer holding the bytes
 * [start, end) at [start - base, end - base), `base` read after the call; the buffer is valid until the
 * next `hold` (a window may move), so a caller uses or copies it first.
 */
export interface SourceBytes {
  readonly base: number;
  hold(start: number, end: number): Buffer;
}

/** A file read whole: every offset is in its buffer. */
export class BufferBytes implements SourceBytes {
  readonly base = 0;
  constructor(readonly buf: Buffer) {}
  hold(): Buffer {
    return this.buf;
  }
}

/** Bytes read from the file on a miss: a line's records come one after the other, so most reads hit. */
const WINDOW_BYTES = 64 * 1024;

/**
 * A source file read again where its records lie, a window at a time. The file is opened for each window
 * (no descriptor is held between the plan and its writes); it must still be the file that was read (same
 * inode, at least as long), else the import stops naming it rather than mixing two versions of it.
 */
export class FileBytes implements SourceBytes {
  base = 0;
  private window: Buffer = Buffer.alloc(0);
  private have = 0;

  constructor(
    private readonly abs: string,
    /** The source file's path as reports name it. */
    private readonly file: string,
    private readonly ino: number,
    /** The error when the file is no longer the one read: a source transcript's by default; a Log's names it as a Log. */
    private readonly changed: () => PixirError = () => new PixirError("invalid_claude_session", undefined, { reason: "unreadable_file", file, changed_while_importing: true }),
  ) {}

  /** Bytes read of the file (its complete lines end there), set once they are read. */
  length = 0;

  /** Bytes this reader keeps (a test holds it to a window, not the file). */
  get heldBytes(): number {
    return this.window.length;
  }

  hold(start: number, end: number): Buffer {
    if (start >= this.base && end <= this.base + this.have) return this.window;
    const want = Math.max(WINDOW_BYTES, end - start);
    // A long line's window goes once the next one fits the usual size.
    if (this.window.length < want || (this.window.length > WINDOW_BYTES && want === WINDOW_BYTES)) this.window = Buffer.allocUnsafe(want);
    this.have = 0;
    this.base = start;
    this.have = this.read(start, end, want);
    return this.window;
  }

  private read(start: number, end: number, want: number): number {
    let got = 0;
    let fd = -1;
    try {
      fd = openSync(this.abs, "r");
      const st = fstatSync(fd);
      if (st.ino === this.ino && st.size >= this.length) {
        for (let n = -1; got < want && n !== 0; got += n) n = readSync(fd, this.window, got, want - got, start + got);
      }
    } catch (err) {
      // As source.ts readingSource: a refusal is permission_denied (exit 3), anything else the file unreadable.
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EACCES" || code === "EPERM") throw new PixirError("permission_denied", undefined, { path: this.file, operation: "read" });
      got = 0;
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    if (start + got < end) throw this.changed();
    return got;
  }
}
