// envelope-and-log.md §8: a new Log appears atomically (temp + rename); an append is all or nothing
// (journal + truncate). Both re-check the Writer Lease just before they commit.
import {
  closeSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
  fstatSync,
  write,
  fdatasync,
} from "node:fs";
import { close as closeCallback, constants as fsConstants, fsync as fsyncCallback, open as openCallback } from "node:fs";
import { promisify } from "node:util";
import { lineTooLongToWrite, MAX_LINE_BYTES } from "../lines/codec.js";
import { isLineProblem, type PixirEvent } from "../event/envelope.js";
import { decodeLogLine } from "../fast/decode-line.js";
import { PixirError } from "../event/errors.js";
import { osWriteFault } from "../event/os-fault.js";
import { corruptLineError, journalText, readJournal } from "./log-read.js";
import { otherWriterAlive, writerProcess, type WriterLease } from "./lease.js";
import { ensureStateDir, inspectStatePath, journalPath, logPath, placeComplete, removeCreatedDirs, sessionsDir, tempSibling, type StatePath } from "./paths.js";

const FLUSH_BYTES = 256 * 1024;

const openAsync = promisify(openCallback);
const fsyncAsync = promisify(fsyncCallback);
const closeAsync = promisify(closeCallback);

export function fsyncDir(dir: StatePath): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir.abs, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY);
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse a directory fsync; the rename itself is still atomic.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A failed write of `p` as a named error (event/os-fault.ts). */
const writeFailed = (err: unknown, p: StatePath, operation: string): PixirError => osWriteFault(err, p.rel, operation);

/**
 * Blocks finished writers gave back (release()), for the next writer of this thread: a writer of many small
 * Logs in a row (an import) then allocates no block of its own, and its memory stays flat.
 */
const FREE_BLOCKS: Buffer[] = [];
const MAX_FREE_BLOCKS = 8;
const takeBlock = (): Buffer => FREE_BLOCKS.pop() ?? Buffer.allocUnsafe(2 * FLUSH_BYTES);

/** Blocks of its own a background writer may have in flight; past that, it writes in the foreground. */
const BACKGROUND_BLOCKS = 3;
/**
 * A writer whose producer awaits ready() between inputs (pixir-fork's spool) may have more in flight:
 * room for a whole block of a piped stdin (streamLineBlocks, up to 1 MiB and a read: five flushes) besides
 * the writes already under way.
 */
const READY_BLOCKS = 5;
/** Writes of handed-over blocks (addOwned) in flight before room() makes the producer wait. */
const OWNED_WRITES = 4;
/** A background writer asks the kernel to start writing back after this many bytes (see drain). */
const BACKGROUND_SYNC_BYTES = 64 * 1024 * 1024;

/**
 * Collects output (text or bytes) in a block and writes it to a file descriptor in large writes.
 * With `background`, full blocks are written by libuv's threads at their file offsets while the
 * caller goes on producing (and the kernel is asked to write back now and then, unless `writeBack` is
 * false: a temp file that is never synced), so a large Log's copying and its disk writes overlap;
 * `drain()` then waits for all of it and reports any failure.
 * A background writer must be drained or settled before its descriptor is closed.
 */
export class BlockWriter {
  private block: Buffer = takeBlock();
  private used = 0;
  bytesWritten = 0;
  private readonly spare: Buffer[] = [];
  /** Background writes in flight (they hold blocks), and write-back requests (they hold none). */
  private writes = 0;
  private syncs = 0;
  private failure: unknown = null;
  private waiters: Array<() => void> = [];
  private syncedAt = 0;
  /** Blocks of its own this writer may have in flight (more when `paced`: its producer awaits ready()). */
  private readonly inFlight: number;
  /** ready() resolves when fewer than this many are in flight. */
  private readonly readyBelow: number;
  constructor(
    private readonly fd: number,
    private readonly options: {
      background?: boolean;
      writeBack?: boolean;
      beforeWrite?: () => void;
      paced?: boolean;
      /** Names a failed write (a full disk), e.g. osWriteFault for the file's path; else it is thrown as the OS gave it. */
      fault?: (err: unknown) => unknown;
    } = {},
  ) {
    this.inFlight = options.paced ? BACKGROUND_BLOCKS + READY_BLOCKS : BACKGROUND_BLOCKS;
    this.readyBelow = options.paced ? BACKGROUND_BLOCKS + 1 : BACKGROUND_BLOCKS;
  }
  add(part: string | Buffer): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8, so 3 × length always fits.
    const room = typeof part === "string" ? part.length * 3 : part.length;
    if (room > this.block.length - this.used) {
      this.flush();
      if (room > this.block.length) {
        const bytes = typeof part === "string" ? Buffer.from(part, "utf8") : part;
        // A background writer takes a large part a block at a time, so it too is written behind.
        if (!this.options.background) this.writeAll(bytes);
        else for (let at = 0; at < bytes.length; ) this.addBytes(bytes.subarray(at, (at += FLUSH_BYTES)));
        return;
      }
    }
    if (typeof part === "string") {
      this.used += this.block.write(part, this.used, "utf8");
      if (this.used >= FLUSH_BYTES) this.flush();
    } else this.addBytes(part);
  }
  /** Add bytes that fit in the block. */
  private addBytes(part: Buffer): void {
    if (part.length > this.block.length - this.used) this.flush();
    this.used += part.copy(this.block, this.used);
    if (this.used >= FLUSH_BYTES) this.flush();
  }
  /**
   * Add `block`, which the caller hands over and never touches again: a background writer writes it
   * as it is, without copying it into its own block (a large block of a fork's copies, say).
   */
  addOwned(block: Buffer, written?: (block: Buffer) => void): void {
    // A small block is cheaper copied than written on its own.
    if (!this.options.background || this.failure !== null || block.length < FLUSH_BYTES / 4) {
      this.add(block);
      written?.(block);
      return;
    }
    this.flush();
    this.writeBehind(block, block.length, false, written);
  }
  /** Resolves when a background writer has fewer than its limit of blocks in flight (at once otherwise). */
  async room(): Promise<void> {
    while (this.options.background && this.writes >= OWNED_WRITES) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  /**
   * Resolves when the next full block (READY_BLOCKS of them, for a paced writer) would be written in the
   * background rather than in the foreground: a producer that awaits this between inputs of up to that
   * size keeps its thread off the disk.
   */
  async ready(): Promise<void> {
    while (this.options.background && this.failure === null && this.writes >= this.readyBelow) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  flush(): void {
    if (this.used === 0) return;
    const used = this.used;
    this.used = 0;
    if (this.options.background && this.writes < this.inFlight && this.failure === null) {
      const block = this.block;
      this.block = this.spare.pop() ?? takeBlock();
      this.writeBehind(block, used, true);
    } else this.writeAll(this.block.subarray(0, used));
  }
  /** Wait for every background write (and write-back request) and rethrow the first failure. */
  async drain(): Promise<void> {
    this.flush();
    await this.settle();
    if (this.failure !== null) throw this.options.fault ? this.options.fault(this.failure) : this.failure;
  }
  /** Wait until nothing is in flight, whatever happened to it. */
  async settle(): Promise<void> {
    while (this.writes + this.syncs > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
  /** Give this writer's blocks to the next writer; call it once it is settled, and use it no more. */
  release(): void {
    if (this.writes + this.syncs > 0) return;
    for (const b of [this.block, ...this.spare]) if (FREE_BLOCKS.length < MAX_FREE_BLOCKS && b.length === 2 * FLUSH_BYTES) FREE_BLOCKS.push(b);
    this.spare.length = 0;
    this.used = 0;
  }
  private writeAll(buf: Buffer): void {
    this.options.beforeWrite?.();
    let off = 0;
    // A background writer's blocks land at their own offsets, so it writes at explicit positions too.
    const at = this.options.background ? this.bytesWritten : null;
    try {
      while (off < buf.length) off += writeSync(this.fd, buf, off, buf.length - off, at === null ? null : at + off);
    } catch (err) {
      throw this.options.fault ? this.options.fault(err) : err;
    }
    this.bytesWritten += buf.length;
  }
  /**
   * Write `block[0, length)` at the current end on libuv's threads; `reuse`: it is one of ours, kept for
   * the next flush; else `written` gets it back once it is on its way to the disk.
   */
  private writeBehind(block: Buffer, length: number, reuse: boolean, written?: (block: Buffer) => void): void {
    this.options.beforeWrite?.();
    const position = this.bytesWritten;
    this.bytesWritten += length;
    this.writes++;
    const done = (err: unknown) => {
      if (err && this.failure === null) this.failure = err;
      if (reuse) this.spare.push(block);
      else if (err === null) written?.(block);
      this.writes--;
      this.wake();
    };
    const writeFrom = (off: number) => {
      write(this.fd, block, off, length - off, position + off, (err, n) => {
        if (err) done(err);
        else if (off + n < length) writeFrom(off + n);
        else done(null);
      });
    };
    writeFrom(0);
    if (this.options.writeBack !== false && this.bytesWritten - this.syncedAt >= BACKGROUND_SYNC_BYTES) {
      // Start write-back of what has been written so far, so that the final fsync has little left.
      this.syncedAt = this.bytesWritten;
      this.syncs++;
      fdatasync(this.fd, (err) => {
        if (err && this.failure === null) this.failure = err;
        this.syncs--;
        this.wake();
      });
    }
  }
  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/**
 * Takes output as text or as bytes: text is whole lines, each with its `\n` (serializeEvent; a pi
 * import's whole Log), bytes are whole lines that are no longer than the lines they were read as, or
 * were checked where they were made (ChildLines).
 */
export type LineSink = (line: string | Buffer) => void;

/** A line of text past the limit every reader holds a Log to is refused before it is stored. */
function assertLinesFit(text: string | Buffer): void {
  // A UTF-16 unit takes at most 3 bytes in UTF-8: most text needs no count.
  if (typeof text !== "string" || text.length * 3 <= MAX_LINE_BYTES) return;
  for (let start = 0; start < text.length; ) {
    const nl = text.indexOf("\n", start);
    const end = nl < 0 ? text.length : nl;
    if ((end - start) * 3 > MAX_LINE_BYTES) {
      const line = text.slice(start, end);
      const bytes = Buffer.byteLength(line, "utf8");
      if (bytes > MAX_LINE_BYTES) throw lineTooLongToWrite(bytes, /"type":"([a-z_]+)"/.exec(line.slice(0, 4096))?.[1] ?? null, null);
    }
    start = end + 1;
  }
}
/**
 * Takes a large block of whole lines that the caller hands over and does not touch until `written` gives
 * it back; resolves when the writer can take the next one (a producer of big blocks waits for the disk
 * instead of blocking on it).
 */
export type OwnedBlockSink = (block: Buffer, written?: (block: Buffer) => void) => Promise<void>;

export interface CommitContext {
  lease: WriterLease | null;
  signal?: AbortSignal;
}

function checkAborted(ctx: CommitContext): void {
  if (ctx.lease?.lost) throw ctx.lease.lost;
  const reason = ctx.signal?.reason;
  if (ctx.signal?.aborted) throw reason instanceof PixirError ? reason : new PixirError("interrupted", undefined, { signal: String(reason ?? "SIGINT") });
}

/**
 * §8.2: create `id`'s Log from the lines `produce` emits. The Log appears only complete;
 * on any failure the temp file is removed. `beforeCommit` runs after the temp file is durable.
 * With `replace` (§8.4, materialize only) an existing Log is replaced by the rename instead.
 */
export async function createLogAtomically(
  ws: string,
  id: string,
  produce: (emit: LineSink, emitOwned: OwnedBlockSink) => Promise<void>,
  ctx: CommitContext,
  beforeCommit?: () => Promise<void> | void,
  replace = false,
): Promise<{ bytes: number }> {
  const prepared = await prepareLog(ws, id, produce, ctx, replace);
  try {
    await beforeCommit?.();
  } catch (err) {
    discardPreparedLog(prepared);
    throw err;
  }
  commitPreparedLog(ws, prepared, ctx, { replace });
  return { bytes: prepared.bytes };
}

/** A new Log written to its temp file and made durable, not yet in place (commitPreparedLog puts it there). */
export interface PreparedLog {
  id: string;
  final: StatePath;
  tmp: StatePath;
  bytes: number;
  /** Directories made for it, taken back when it is discarded. */
  createdDirs: string[];
}

/**
 * How prepareLog meets the file system: `here`, the plain writers' way (the writes behind on libuv's
 * threads, the open, fsync and close in this thread); `worker`, a worker thread that prepares one Log
 * after another (the Codex import's streams: it writes in its own thread, which has nothing else to do
 * meanwhile, and syncs on libuv's threads); `overlapped`, a thread that prepares several Logs at once (a
 * Claude unit's): the open, fsync and close too wait on libuv's threads, so one Log is made while the file
 * system commits another.
 */
export type PrepareMode = "here" | "worker" | "overlapped";

/**
 * The first half of createLogAtomically: the lines `produce` emits go to a temp file beside the Log,
 * which is synced and closed. Nothing is visible under the Log's name. On any failure the temp file goes.
 * A caller may prepare before it holds the lease, and must then commit or discard.
 */
export async function prepareLog(
  ws: string,
  id: string,
  produce: (emit: LineSink, emitOwned: OwnedBlockSink) => Promise<void>,
  ctx: CommitContext,
  replace = false,
  mode: PrepareMode = "here",
): Promise<PreparedLog> {
  const final = logPath(ws, id);
  const createdDirs = ensureStateDir(sessionsDir(ws));
  if (!replace && inspectStatePath(final) === "present") throw alreadyExists(id, final);
  const tmp = tempSibling(final);
  const overlapped = mode === "overlapped";
  let fd: number | undefined;
  let out: BlockWriter | undefined;
  let prepared = false;
  try {
    const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW;
    try {
      fd = overlapped ? await openAsync(tmp.abs, flags, 0o644) : openSync(tmp.abs, flags, 0o644);
    } catch (err) {
      throw writeFailed(err, final, "open");
    }
    // A write of the temp file that fails is reported for the Log it was to become (the temp file goes).
    const fault = (err: unknown): PixirError => writeFailed(err, final, "write");
    out = new BlockWriter(fd, { background: mode !== "worker", fault });
    const writer = out;
    await produce(
      (line) => {
        checkAborted(ctx);
        assertLinesFit(line);
        writer.add(line);
      },
      async (block, written) => {
        checkAborted(ctx);
        await writer.room();
        writer.addOwned(block, written);
      },
    );
    checkAborted(ctx);
    try {
      await out.drain();
      if (mode === "here") fsyncSync(fd);
      else await fsyncAsync(fd);
    } catch (err) {
      throw writeFailed(err, final, "fsync");
    }
    const closing = fd;
    fd = undefined;
    try {
      // Some file systems (NFS) report a deferred write error only here.
      if (overlapped) await closeAsync(closing);
      else closeSync(closing);
    } catch (err) {
      throw writeFailed(err, final, "close");
    }
    prepared = true;
    return { id, final, tmp, bytes: out.bytesWritten, createdDirs };
  } finally {
    // Background writes still in flight would otherwise land on whatever file reuses the descriptor.
    await out?.settle();
    out?.release();
    if (fd !== undefined) closeSync(fd);
    if (!prepared) discardPreparedLog({ id, final, tmp, bytes: 0, createdDirs });
  }
}

/**
 * The second half of createLogAtomically: put a prepared Log in place by a rename, after checking that
 * the temp file is still ours, that no Log of that name appeared (unless `replace`) and that the lease
 * is held. On failure the temp file goes. `syncDir: false` leaves the directory's fsync to the caller,
 * which then makes the renames of many Logs durable with one fsyncDir of the sessions directory.
 */
export function commitPreparedLog(ws: string, p: PreparedLog, ctx: CommitContext, options: { replace?: boolean; syncDir?: boolean } = {}): void {
  let committed = false;
  try {
    if (!lstatSync(p.tmp.abs).isFile()) throw new PixirError("unsafe_state_path", undefined, { reason: "unexpected_file_type", component: p.tmp.rel });
    if (inspectStatePath(p.final) === "present" && !options.replace) throw alreadyExists(p.id, p.final);
    checkAborted(ctx);
    ctx.lease?.assertHeld();
    try {
      renameSync(p.tmp.abs, p.final.abs);
    } catch (err) {
      throw writeFailed(err, p.final, "rename");
    }
    committed = true;
    if (options.syncDir !== false) fsyncDir(p.final.parent());
  } finally {
    if (!committed) discardPreparedLog(p);
  }
}

/** A prepared Log as it crosses from a worker thread: its temp file's name beside the Log. */
export interface SentPrepared {
  id: string;
  tmpName: string;
  bytes: number;
  createdDirs: string[];
}

export const sentPrepared = (p: PreparedLog): SentPrepared => ({ id: p.id, tmpName: p.tmp.components.at(-1)!, bytes: p.bytes, createdDirs: p.createdDirs });

/** A prepared Log from a worker thread, back in the form commitPreparedLog takes. */
export function receivedPrepared(ws: string, p: SentPrepared): PreparedLog {
  const final = logPath(ws, p.id);
  return { id: p.id, final, tmp: final.sibling(p.tmpName), bytes: p.bytes, createdDirs: p.createdDirs };
}

/** Remove a prepared Log's temp file (and the directories made for it). */
export function discardPreparedLog(p: PreparedLog): void {
  try {
    unlinkSync(p.tmp.abs);
  } catch {
    /* never created, or gone */
  }
  removeCreatedDirs(p.createdDirs);
}

export function alreadyExists(id: string, p: StatePath, child = false): PixirError {
  return new PixirError("already_exists", child ? "child session log already exists" : "session log already exists", {
    [child ? "child_session_id" : "session_id"]: id,
    log_path: p.rel,
  });
}

/**
 * §8.3 step 1: a writer that has just taken the lease rolls back a leftover journal, unless the append
 * it names is still running in another process (one that lost the lease and has yet to notice, or one
 * that borrows the same lease): that is refused, since the other process would go on writing.
 */
export function recoverJournal(ws: string, id: string): boolean {
  const journal = readJournal(ws, id);
  if (journal === null) return false;
  if (otherWriterAlive(journal as unknown as Record<string, unknown>)) {
    throw new PixirError("session_writer_active", "An append to this Log by another process is still in flight", {
      session_id: id,
      append_journal: { os_pid: journal.os_pid ?? null, holder_id: journal.holder_id ?? null, started_at: journal.started_at ?? null },
    });
  }
  return rollbackJournal(ws, id);
}

/** Remove the journal we wrote (its exact text), leaving the Log as it is. */
function discardJournal(ws: string, id: string, ours: string): void {
  const jp = journalPath(ws, id);
  if (journalText(jp) !== ours) return;
  unlinkSync(jp.abs);
  fsyncDir(sessionsDir(ws));
}

/**
 * §8.3 step 6: truncate back to the journal's original length and remove the journal. With `ours`, only
 * if the journal is the one we wrote (its exact text): a writer that lost the lease must never roll back
 * the append of the writer that took it over.
 */
export function rollbackJournal(ws: string, id: string, ours?: string): boolean {
  if (ours !== undefined && journalText(journalPath(ws, id)) !== ours) return false;
  const journal = readJournal(ws, id);
  if (journal === null) return false;
  const log = logPath(ws, id);
  const jp = journalPath(ws, id);
  if (inspectStatePath(log) === "present") {
    const fd = openSync(log.abs, fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW);
    try {
      if (fstatSync(fd).size > journal.original_length) ftruncateSync(fd, journal.original_length);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  unlinkSync(jp.abs);
  fsyncDir(sessionsDir(ws));
  return true;
}

export interface TailInfo {
  exists: boolean;
  size: number;
  endsWithNewline: boolean;
  /** The last Event by file position, or null for an empty Log. */
  last: PixirEvent | null;
  lastLineNo: number | null;
}

const TAIL_BLOCK = 64 * 1024;

/**
 * §9 "Appends cost O(tail)": read only the last non-blank line. A torn or corrupt final line refuses
 * the append; the rest of the Log is not read (pixir-log check reads everything).
 */
export function readTail(ws: string, id: string): TailInfo {
  const p = logPath(ws, id);
  if (inspectStatePath(p) === "missing") return { exists: false, size: 0, endsWithNewline: true, last: null, lastLineNo: null };
  const fd = openSync(p.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { exists: true, size, endsWithNewline: true, last: null, lastLineNo: null };
    // Walk back over trailing newlines to the end of the last line, then to its start.
    let end = size;
    const one = Buffer.alloc(1);
    while (end > 0) {
      readSync(fd, one, 0, 1, end - 1);
      if (one[0] !== 0x0a) break;
      end--;
    }
    if (end === 0) return { exists: true, size, endsWithNewline: true, last: null, lastLineNo: null };
    const blocks: Buffer[] = [];
    let start = end;
    for (;;) {
      const from = Math.max(0, start - TAIL_BLOCK);
      const block = Buffer.alloc(start - from);
      readSync(fd, block, 0, block.length, from);
      const nl = block.lastIndexOf(0x0a);
      if (nl !== -1) {
        blocks.unshift(block.subarray(nl + 1));
        start = from + nl + 1;
        break;
      }
      blocks.unshift(block);
      start = from;
      if (from === 0) break;
    }
    const line = Buffer.concat(blocks);
    const endsWithNewline = end < size;
    const decoded = decodeLogLine(line, !endsWithNewline);
    // Line numbers here are unknown without a full read; count them only on failure.
    if (isLineProblem(decoded)) throw corruptLineError(decoded, countLines(fd, start) + 1, p.rel);
    return { exists: true, size, endsWithNewline, last: decoded.event, lastLineNo: null };
  } finally {
    closeSync(fd);
  }
}

function countLines(fd: number, upTo: number): number {
  const buf = Buffer.alloc(1024 * 1024);
  let count = 0;
  for (let pos = 0; pos < upTo; ) {
    const n = readSync(fd, buf, 0, Math.min(buf.length, upTo - pos), pos);
    if (n <= 0) break;
    for (let i = 0; i < n; i++) if (buf[i] === 0x0a) count++;
    pos += n;
  }
  return count;
}

/**
 * §8.3 step 3: the journal appears only complete. An empty or partial journal (a crash or a full disk
 * between its create and its write) would make every reader and `repair` fail on an unreadable journal,
 * so it is written under the Log's temp-file name (which check reports if left) and then linked into
 * place; the link fails, as the exclusive create did, if a journal is already there.
 */
function createJournal(ws: string, id: string, text: string): void {
  const jp = journalPath(ws, id);
  try {
    placeComplete(tempSibling(logPath(ws, id)), jp, text, "link");
  } catch (err) {
    throw writeFailed(err, jp, "open");
  }
}

/**
 * §8.3: append the lines `produce` emits to an existing Log, all or nothing. A journal names the
 * original length; any failure (or a signal) truncates back to it.
 */
export async function appendJournaled(
  ws: string,
  id: string,
  tail: TailInfo,
  produce: (emit: LineSink) => Promise<void>,
  ctx: CommitContext,
): Promise<{ bytes: number }> {
  const log = logPath(ws, id);
  const jp = journalPath(ws, id);
  const original = tail.size;
  const journal = { version: 1, original_length: original, holder_id: ctx.lease?.holderId ?? null, started_at: new Date().toISOString(), ...writerProcess() };
  const ourJournal = JSON.stringify(journal);
  createJournal(ws, id, ourJournal);
  let fd: number | undefined;
  let committed = false;
  let touched = false;
  try {
    try {
      fd = openSync(log.abs, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_NOFOLLOW);
      if (fstatSync(fd).size !== original) throw new PixirError("log_write_failed", undefined, { reason: "log_changed_during_append", path: log.rel });
    } catch (err) {
      throw writeFailed(err, log, "open");
    }
    // Every write to the shared Log is preceded by a look at the lease (§6): a writer that lost it writes nothing more.
    const out = new BlockWriter(fd, {
      fault: (err) => writeFailed(err, log, "write"),
      beforeWrite: () => {
        ctx.lease?.assertHeld();
        touched = true;
      },
    });
    if (!tail.endsWithNewline) out.add("\n");
    await produce((line) => {
      checkAborted(ctx);
      assertLinesFit(line);
      out.add(line);
    });
    checkAborted(ctx);
    try {
      out.flush();
      ctx.lease?.assertHeld(); // the pre-commit check, right before the fsync that commits
      fsyncSync(fd);
    } catch (err) {
      throw writeFailed(err, log, "fsync");
    }
    committed = true;
    unlinkSync(jp.abs);
    fsyncDir(log.parent());
    return { bytes: out.bytesWritten };
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (!committed) {
      try {
        // Before our first write the Log holds nothing of ours (it may not even be writable, or have
        // grown under us): only the journal goes.
        if (!touched) discardJournal(ws, id, ourJournal);
        else rollbackJournal(ws, id, ourJournal);
      } catch {
        // Leave the journal: the next writer or pixir-log repair rolls back before anything else.
      }
    }
  }
}
