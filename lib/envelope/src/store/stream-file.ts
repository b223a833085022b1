// An output made as a stream of chunks (an export of a long Log), never held whole: batched into larger
// writes, compared with the file already at its target, or put there whole (temp sibling, fsync, rename).
import { closeSync, fsyncSync, openSync, readSync, renameSync, unlinkSync } from "node:fs";
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

/**
 * Whether the regular file at `file` holds exactly the chunks' bytes, read alongside them: it stops at the
 * first difference. A missing or unreadable file is not the same.
 */
export async function sameAsFile(file: string, chunks: Chunks): Promise<boolean> {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    return false;
  }
  try {
    let block = Buffer.alloc(0);
    for await (const chunk of chunks) {
      const want = bytesOf(chunk);
      if (block.length < want.length) block = Buffer.allocUnsafe(want.length);
      if (readFull(fd, block, want.length) !== want.length || !block.subarray(0, want.length).equals(want)) return false;
    }
    return readFull(fd, Buffer.allocUnsafe(1), 1) === 0;
  } finally {
    closeSync(fd);
  }
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
  /** The error a failed step becomes (`operation`: open, write, rename). */
  fault(err: unknown, operation: string): Error;
}

/**
 * Write the chunks to `target` whole or not at all: a temp sibling written as the chunks come, synced, then
 * renamed over the target. Any failure (a full disk, an error from the chunks themselves) removes the temp
 * file and leaves the target as it was. Returns the bytes written.
 */
export async function writeChunksAtomically(target: string, chunks: Chunks, options: AtomicWriteOptions): Promise<number> {
  const tmp = `${target}.tmp-${randomHex(4)}`;
  let fd: number | undefined;
  let placed = false;
  let size = 0;
  try {
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
  }
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
