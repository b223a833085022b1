// An output made as a stream of chunks (an export of a long Log), never held whole: batched into larger
// writes, compared with the file already at its target, or put there whole (temp sibling, fsync, rename).
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { randomHex } from "../event/ids.js";
import { writeWhole } from "./paths.js";

export type Chunk = Uint8Array | string;
export type Chunks = AsyncIterable<Chunk> | Iterable<Chunk>;

const bytesOf = (chunk: Chunk): Uint8Array => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);

/** The chunks joined into buffers of about `size` bytes, in order (one write per buffer, not per line). */
export async function* batchedBytes(chunks: Chunks, size = 1 << 20): AsyncGenerator<Buffer> {
  let parts: Uint8Array[] = [];
  let length = 0;
  for await (const chunk of chunks) {
    const bytes = bytesOf(chunk);
    parts.push(bytes);
    length += bytes.length;
    if (length >= size) {
      yield Buffer.concat(parts, length);
      parts = [];
      length = 0;
    }
  }
  if (length > 0) yield Buffer.concat(parts, length);
}

/** What is at an export's target: nothing, the export's very bytes, or something else. */
export type TargetState = "absent" | "same" | "different";

/**
 * The file at `file` compared with the chunks' bytes, read alongside them: it stops at the first difference.
 * Nothing there (`absent`) is known before a chunk is taken; a directory or a file that cannot be read is
 * `different`, never taken for absent.
 */
export async function compareWithFile(file: string, chunks: Chunks): Promise<TargetState> {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "absent" : "different";
  }
  try {
    let block = Buffer.alloc(0);
    for await (const chunk of chunks) {
      const want = bytesOf(chunk);
      if (block.length < want.length) block = Buffer.allocUnsafe(want.length);
      if (readFull(fd, block, want.length) !== want.length || !block.subarray(0, want.length).equals(want)) return "different";
    }
    return readFull(fd, Buffer.allocUnsafe(1), 1) === 0 ? "same" : "different";
  } finally {
    closeSync(fd);
  }
}

/** Whether the regular file at `file` holds exactly the chunks' bytes (`compareWithFile`). */
export async function sameAsFile(file: string, chunks: Chunks): Promise<boolean> {
  return (await compareWithFile(file, chunks)) === "same";
}

/**
 * Read up to `n` bytes from the current position into `block`; fewer only at the end of the file. A read
 * that fails (a directory, an I/O error) reads as the end: such a file is not the same.
 */
function readFull(fd: number, block: Buffer, n: number): number {
  let got = 0;
  while (got < n) {
    let k: number;
    try {
      k = readSync(fd, block, got, n - got, null);
    } catch {
      return -1;
    }
    if (k === 0) break;
    got += k;
  }
  return got;
}

export interface AtomicWriteOptions {
  /** The new file's mode. */
  mode: number;
  /** The error a failed step becomes (`operation`: mkdir, open, write, rename). */
  fault(err: unknown, operation: string): Error;
  /** Make the target's missing directories (0700), taken back with the temp file when the write fails. */
  parents?: boolean;
}

/**
 * Write the chunks to `target` whole or not at all: a temp sibling written as the chunks come, synced, then
 * renamed over the target. Any failure (a full disk, an error from the chunks themselves) removes the temp
 * file (and the directories it made) and leaves the target as it was. Returns the bytes written.
 */
export async function writeChunksAtomically(target: string, chunks: Chunks, options: AtomicWriteOptions): Promise<number> {
  const tmp = `${target}.tmp-${randomHex(4)}`;
  let fd: number | undefined;
  let placed = false;
  let madeDir: string | undefined;
  let size = 0;
  try {
    if (options.parents === true) madeDir = step(() => makeDirs(path.dirname(target)), "mkdir", options);
    fd = step(() => openSync(tmp, "wx", options.mode), "open", options);
    for await (const chunk of chunks) {
      const bytes = bytesOf(chunk);
      step(() => writeWhole(fd!, bytes), "write", options);
      size += bytes.length;
    }
    step(() => fsyncSync(fd!), "write", options);
    const open = fd;
    fd = undefined;
    step(() => closeSync(open), "write", options);
    step(() => renameSync(tmp, target), "rename", options);
    placed = true;
    return size;
  } finally {
    if (fd !== undefined) closeQuietly(fd);
    if (!placed) unlinkQuietly(tmp);
    if (!placed && madeDir !== undefined) rmSync(madeDir, { recursive: true, force: true });
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

function step<T>(run: () => T, operation: string, options: AtomicWriteOptions): T {
  try {
    return run();
  } catch (err) {
    throw options.fault(err, operation);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* closed already */
  }
}

function unlinkQuietly(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    /* never created, or gone */
  }
}
