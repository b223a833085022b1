// An exported file written with --out (pi-interop.md §4 step 6, view.md §1): it appears whole or not at
// all (a temp sibling, fsync, then rename), and an existing file is refused (`already_exists`), never
// replaced. The bytes may come in pieces, so a large export streams to disk instead of being held whole.
import { close, closeSync, fsync, fsyncSync, lstatSync, openSync, renameSync, statSync, unlinkSync } from "node:fs";
import { promisify } from "node:util";
import path from "node:path";
import { PixirError } from "../event/errors.js";
import { randomHex } from "../event/ids.js";
import { osWriteFault } from "../event/os-fault.js";
import { writeWhole } from "./paths.js";

export function exportExists(display: string): PixirError {
  return new PixirError("already_exists", "export file already exists", {
    file: display,
    next_actions: ["pass --out a path that does not exist yet", "remove the existing file if safe"],
  });
}

export function pathExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** The directory an export file goes into must exist: --out never creates one. */
export function assertOutDirectory(target: string): void {
  try {
    if (!statSync(path.dirname(target)).isDirectory()) throw new Error("not a directory");
  } catch {
    throw new PixirError("invalid_args", "the directory of --out does not exist", {
      field: "out",
      reason: "missing_directory",
      next_actions: ["create the directory first, or pass --out inside an existing directory"],
    });
  }
}

const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);

export class ExportFile {
  private fd: number | null;
  private readonly tmp: string;
  private done = false;

  /**
   * Start writing `target` (absolute); `display` is the path as the user gave it (for errors), `what` the
   * file's name in an error's message ("the exported pi file").
   */
  constructor(
    private readonly target: string,
    private readonly display: string,
    private readonly what: string,
    /** Replace an existing file (a page of `export html --all` rewritten on a rerun) instead of refusing it. */
    private readonly replace = false,
  ) {
    if (!replace && pathExists(target)) throw exportExists(display);
    this.tmp = `${target}.tmp-${randomHex(4)}`;
    try {
      this.fd = openSync(this.tmp, "wx", 0o644);
    } catch (err) {
      throw this.fault(err, "open");
    }
  }

  write(bytes: Uint8Array): void {
    try {
      writeWhole(this.fd!, bytes);
    } catch (err) {
      throw this.fault(err, "write");
    }
  }

  /** Sync and put the file in place; a target that appeared meanwhile is refused. */
  commit(): void {
    try {
      fsyncSync(this.fd!);
      closeSync(this.fd!);
      this.fd = null;
    } catch (err) {
      throw this.fault(err, "write");
    }
    this.place();
  }

  /** commit() with the sync and close on libuv's threads: a caller writing many files makes the next meanwhile. */
  async commitAsync(): Promise<void> {
    try {
      await fsyncAsync(this.fd!);
      const fd = this.fd!;
      this.fd = null;
      await closeAsync(fd);
    } catch (err) {
      throw this.fault(err, "write");
    }
    this.place();
  }

  private place(): void {
    if (!this.replace && pathExists(this.target)) throw exportExists(this.display);
    try {
      renameSync(this.tmp, this.target);
    } catch (err) {
      throw this.fault(err, "rename");
    }
    this.done = true;
  }

  /** Close and remove the temp file unless commit() placed it; safe to call after commit(). */
  discard(): void {
    if (this.done) return;
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        /* closed already */
      }
      this.fd = null;
    }
    try {
      unlinkSync(this.tmp);
    } catch {
      /* never created, or gone */
    }
  }

  private fault(err: unknown, operation: string): PixirError {
    return osWriteFault(err, this.display, operation, this.what);
  }
}
