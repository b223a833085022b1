// The lines of a pi file read again where they lie, when the importer makes an entry's Events (it keeps
// each entry's place, not its parsed value: docs/performance.md "Round 9: import pi in less memory").
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import type { PixirError } from "../../event/errors.js";

/** Bytes read of the file at a time: an entry's Events are made one entry after the next, so most reads hit. */
const WINDOW_BYTES = 64 * 1024;

/**
 * A pi file's lines by place. The file is opened for each window (no descriptor is held between the plan
 * and its writes); it must still be the file that was parsed (same inode, at least as long), else
 * `changed()` stops the import rather than mixing two versions of the file.
 */
export class PiSourceLines {
  private window: Buffer = Buffer.alloc(0);
  private base = 0;
  private have = 0;

  constructor(
    private readonly abs: string,
    private readonly ino: number,
    /** The bytes the parse read. */
    private readonly size: number,
    readonly changed: () => PixirError,
  ) {}

  /** The text of the line at [offset, offset + length). */
  line(offset: number, length: number): string {
    if (offset < this.base || offset + length > this.base + this.have) this.fill(offset, length);
    return this.window.toString("utf8", offset - this.base, offset - this.base + length);
  }

  private fill(offset: number, length: number): void {
    const want = Math.max(WINDOW_BYTES, length);
    // A long line's window goes once the next one fits the usual size.
    if (this.window.length < want || (this.window.length > WINDOW_BYTES && want === WINDOW_BYTES)) this.window = Buffer.allocUnsafe(want);
    this.base = offset;
    this.have = 0;
    let fd = -1;
    try {
      fd = openSync(this.abs, "r");
      const st = fstatSync(fd);
      if (st.ino === this.ino && st.size >= this.size) {
        for (let n = -1; this.have < want && n !== 0; this.have += n) n = readSync(fd, this.window, this.have, want - this.have, offset + this.have);
      }
    } catch {
      this.have = 0;
    } finally {
      if (fd >= 0) closeSync(fd);
    }
    if (this.have < length) throw this.changed();
  }
}
