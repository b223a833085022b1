// A parent source: a regular file on stdin (`pixir-fork < FILE`), read in place twice like a Log in our
// layout (parent-bytes.ts), with no spool, from where stdin stands to the file's end. A file not all in
// our layout, or not all of one session, gives null, and fork.ts reads the same bytes the pipe's way.
import { fstatSync } from "node:fs";
import { type ParentSource } from "./fork-plan.js";
import { type PositionalReader } from "../store/log-read.js";
import { copyPlannedBytes, inheritedOfBlocks, planFromBytes, readFd } from "./parent-bytes.js";

/**
 * A History in a regular file on stdin (`pixir-fork < FILE`), read in place twice like a Log, with no
 * spool: `fd` is read on from where it stands to its end. Null when the lines are not all of the form
 * parentFromOurLog handles, or are not all of one session; the caller then reads the same bytes again
 * the general way, from `start` for `length` bytes (both given in `range`).
 */
export async function parentFromStdinFile(
  fd: number,
  toSeq: number | undefined,
  range: { start: number; length: number },
): Promise<ParentSource | null> {
  let read = 0;
  const sequential: PositionalReader = {
    async read(buffer, offset, length) {
      const got = await readFd(fd, buffer, offset, length, null);
      read += got.bytesRead;
      return got;
    },
  };
  const plan = await planFromBytes(sequential, Infinity, null, toSeq);
  // A pass that gave up read part of the input: read to its end, so that its start is known.
  const rest = Buffer.allocUnsafe(1 << 16);
  while (plan === null && (await sequential.read(rest, 0, rest.length, 0)).bytesRead > 0);
  // stdin's offset cannot be asked for; at its end it is the file's size, so the input began `read` bytes before.
  range.length = read;
  range.start = fstatSync(fd).size - read;
  if (plan === null || read === 0 || range.start < 0) return null;
  const start = range.start;
  const positional: PositionalReader = { read: (buffer, offset, length, position) => readFd(fd, buffer, offset, length, start + position) };
  const source: ParentSource = {
    parentId: plan.parentId,
    facts: plan.facts,
    async *inherited() {
      yield* inheritedOfBlocks(positional, read, source);
    },
    inheritedBlocks: (forkEventId, childId) => copyPlannedBytes(async () => positional, read, source, forkEventId, childId),
    dispose() {},
  };
  return source;
}

/** The descriptor behind `stdin` when it is a regular file (process.stdin is then an fs.ReadStream); else null. */
export function seekableFd(stdin: unknown): number | null {
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== "number") return null;
  try {
    return fstatSync(fd).isFile() ? fd : null;
  } catch {
    return null;
  }
}

/** `[start, start + length)` of `fd`, read by position in chunks of one reused buffer. */
export async function* fdRange(fd: number, start: number, length: number): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let at = 0; at < length; ) {
    const { bytesRead: n } = await readFd(fd, buf, 0, Math.min(buf.length, length - at), start + at);
    if (n === 0) return;
    at += n;
    yield buf.subarray(0, n);
  }
}
