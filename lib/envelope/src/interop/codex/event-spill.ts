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
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes in the file. */
  private written = 0;
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
    const b = Buffer.from(line, "utf8");
    const at = this.written + this.pendingBytes;
    this.pending.push(b);
    this.pendingBytes += b.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
    return { at, len: b.length };
  }

  /** The bytes of a line kept here, in a Buffer of their own. */
  read(p: SpillPlace): Buffer {
    if (p.at + p.len > this.written) this.flush();
    const out = Buffer.allocUnsafe(p.len);
    for (let got = 0; got < p.len; ) {
      const n = readSync(this.fd, out, got, p.len - got, p.at + got);
      if (n === 0) throw new Error("the import's plan file is shorter than what was written to it");
      got += n;
    }
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pending = [];
    closeSync(this.fd);
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const block = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    try {
      for (let done = 0; done < block.length; ) done += writeSync(this.fd, block, done, block.length - done, this.written + done);
    } catch (err) {
      throw osWriteFault(err, this.dir, "spill", WHAT);
    }
    this.written += block.length;
    this.pending = [];
    this.pendingBytes = 0;
  }
}
