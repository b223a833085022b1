// codex-interop.md §5.5 for a streamed export: the rollout's lines go to a sink as they are made, in chunks:
// stdout, a temp file renamed into place, or a digest that an existing file is compared with.
import { createHash } from "node:crypto";
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { osWriteFault } from "../../event/os-fault.js";
import { randomHex } from "../../event/ids.js";
import { writeWhole } from "../../store/paths.js";

/** Where an export's text goes: stdout (with backpressure), a file, a digest. */
export interface TextSink {
  write(text: string): Promise<void> | void;
}

const CHUNK = 64 * 1024;

/** Gathers lines into chunks of about 64 KiB: a write per line would dominate the cost. */
export class LineWriter {
  private parts: string[] = [];
  private size = 0;
  lines = 0;
  constructor(private readonly sink: TextSink) {}

  async line(text: string): Promise<void> {
    this.parts.push(text, "\n");
    this.size += text.length + 1;
    this.lines++;
    if (this.size >= CHUNK) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.size === 0) return;
    const chunk = this.parts.join("");
    this.parts = [];
    this.size = 0;
    await this.sink.write(chunk);
  }
}

/** The SHA-256 and byte count of what is written. */
export class DigestSink implements TextSink {
  private readonly hash = createHash("sha256");
  bytes = 0;
  write(text: string): void {
    const b = Buffer.from(text, "utf8");
    this.hash.update(b);
    this.bytes += b.length;
  }
  digest(): string {
    return this.hash.digest("hex");
  }
}

/** The SHA-256 and byte count of a file, read in chunks; null when it cannot be read (absent, a directory). */
export function fileDigest(file: string): { sha256: string; bytes: number } | null {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return null;
  }
  try {
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(1 << 20);
    let bytes = 0;
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) {
      hash.update(buf.subarray(0, n));
      bytes += n;
    }
    return { sha256: hash.digest("hex"), bytes };
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * Write `target` with temp plus rename, the text coming from `make` as it is made. A full or read-only disk
 * is named after the file (cli-contract.md "Operating-system faults"); a failure leaves nothing, not even
 * the date directories this write made.
 */
export async function writeAtomically<T>(target: string, make: (sink: TextSink) => Promise<T>): Promise<T> {
  const tmp = `${target}.tmp-${randomHex(4)}`;
  let renamed = false;
  let madeDir: string | undefined;
  try {
    try {
      madeDir = makeDirs(path.dirname(target));
      const fd = openSync(tmp, "wx", 0o644);
      let result: T;
      try {
        result = await make({ write: (text) => writeWhole(fd, Buffer.from(text, "utf8")) });
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, target);
      renamed = true;
      return result;
    } catch (err) {
      throw osWriteFault(err, target, "write", "the exported Codex file");
    }
  } finally {
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        /* gone */
      }
      if (madeDir !== undefined) rmSync(madeDir, { recursive: true, force: true });
    }
  }
}

/**
 * `mkdir -p`, one directory at a time, so that a refusal is reported as the OS gave it (a recursive
 * mkdirSync says ENOENT for a read-only file system). Returns the first directory it made.
 */
function makeDirs(dir: string): string | undefined {
  const missing: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    try {
      statSync(d);
      break;
    } catch {
      missing.unshift(d);
      if (path.dirname(d) === d) break;
    }
  }
  for (const d of missing) {
    try {
      // README "Rules that hold across the two agent importers": directories below --out are made 0700.
      mkdirSync(d, 0o700);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  return missing[0];
}
