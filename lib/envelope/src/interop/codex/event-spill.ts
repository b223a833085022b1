// The lines of the Events a lean plan made (lean-plan.ts), kept in a file instead of memory until they are
// written to their Logs. The file is made in the temp directory (TMPDIR), as pixir fork's spool is, and
// unlinked at once: it holds nothing once the process ends, however it ends.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { osWriteFault } from "../../event/os-fault.js";

/** Where one line lies in the file. */
export interface SpillPlace {
  at: number;
  len: number;
}

/** Lines gathered before they are written, so that the file takes few large writes. */
const FLUSH_BYTES = 1 << 20;

const WHAT = "the import's plan file in the temp directory";

export class EventSpill {
  /** Lines not yet written, gathered in one block (a line larger than it is written on its own). */
  private block = Buffer.allocUnsafeSlow(FLUSH_BYTES);
  private used = 0;
  /** Bytes in the file. */
  private written = 0;
  /**
   * The bytes read() gives views of: the file's bytes from `windowAt`, `windowLen` of them. A read that
   * goes on from the one before (a Log's lines are written in the order they were put) fills it with the
   * block's size at once, so that most lines take no system call.
   */
  private window = Buffer.allocUnsafeSlow(FLUSH_BYTES);
  private windowAt = 0;
  private windowLen = 0;
  /** Where the last line read ends. */
  private readEnd = -1;
  private closed = false;

  private constructor(
    private readonly fd: number,
    private readonly dir: string,
  ) {}

  static open(): EventSpill {
    let dir: string;
    try {
      dir = mkdtempSync(path.join(os.tmpdir(), "pixir-codex-plan-"));
    } catch (err) {
      throw osWriteFault(err, os.tmpdir(), "spill", WHAT);
    }
    const file = path.join(dir, "events.ndjson");
    let fd: number;
    try {
      fd = openSync(file, "wx+", 0o600);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw osWriteFault(err, dir, "spill", WHAT);
    }
    // Unlinked at once: the open descriptor keeps the file while this process lives, and no longer.
    rmSync(dir, { recursive: true, force: true });
    return new EventSpill(fd, dir);
  }

  /** Keep `line` (a whole line with its `\n`); where it lies. */
  put(line: string): SpillPlace {
    // A UTF-16 unit takes at most 3 bytes in UTF-8: a line that may not fit the block's room flushes it first.
    if (line.length * 3 > this.block.length - this.used) this.flush();
    const at = this.written + this.used;
    if (line.length * 3 <= this.block.length) {
      const len = this.block.write(line, this.used, "utf8");
      this.used += len;
      return { at, len };
    }
    const bytes = Buffer.from(line, "utf8");
    this.writeAt(bytes, this.written);
    this.written += bytes.length;
    return { at, len: bytes.length };
  }

  /** The bytes of a line kept here: a view, valid until the next read. */
  read(p: SpillPlace): Buffer {
    if (p.at + p.len > this.written) this.flush();
    const sequential = p.at === this.readEnd;
    this.readEnd = p.at + p.len;
    if (p.at < this.windowAt || p.at + p.len > this.windowAt + this.windowLen) {
      if (this.window.length < p.len) this.window = Buffer.allocUnsafeSlow(p.len);
      const len = sequential ? Math.min(this.window.length, this.written - p.at) : p.len;
      for (let got = 0; got < len; ) {
        const n = readSync(this.fd, this.window, got, len - got, p.at + got);
        if (n === 0) throw new Error("the import's plan file is shorter than what was written to it");
        got += n;
      }
      [this.windowAt, this.windowLen] = [p.at, len];
    }
    return this.window.subarray(p.at - this.windowAt, p.at - this.windowAt + p.len);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private flush(): void {
    if (this.used === 0) return;
    this.writeAt(this.block.subarray(0, this.used), this.written);
    this.written += this.used;
    this.used = 0;
  }

  private writeAt(bytes: Buffer, position: number): void {
    try {
      for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, position + done);
    } catch (err) {
      throw osWriteFault(err, this.dir, "spill", WHAT);
    }
  }
}
