// envelope-and-log.md §7: reading one Log file. One checking pass validates every line and notes
// whether file order is already History order; a second pass streams. Bodies are never all in memory.
import { open as openFile, type FileHandle } from "node:fs/promises";
import { isUtf8 } from "node:buffer";
import { checkedShareHeader, checkLine, LineFacts } from "../fast/line-check.js";
import { createReadStream, openSync, readSync, closeSync, readFileSync, fstatSync, lstatSync, existsSync, constants as fsConstants } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { workerThreads } from "../event/lazy-builtins.js";
import { LINE_BLOCK, MAX_LINE_BYTES, splitLines, type LineBlock, type RawLine } from "../lines/codec.js";
export type { LineBlock } from "../lines/codec.js";
import { dataTextOf, decodeOwnHead, isLineProblem, type DecodedLine, type LineProblem, type CorruptReason, type PixirEvent } from "../event/envelope.js";
import { decodeLogLine, LineDecoder } from "../fast/decode-line.js";
import { PixirError, CORRUPT_LINE_ACTIONS, TORN_TAIL_ACTIONS } from "../event/errors.js";
import { inspectStatePath, journalPath, logPath, type StatePath } from "./paths.js";
import { scanThreadCount } from "./threads.js";

// Big enough for throughput, small enough that chunks awaiting GC stay a few MiB (external memory).
const READ_CHUNK = 256 * 1024;

export interface AppendJournal {
  version: 1;
  original_length: number;
  holder_id?: string;
  started_at?: string;
  /** Ours: the writing process (see `writerProcess`), so a writer that finds the journal can tell a live append from a leftover. */
  os_pid?: string;
  hostname?: string;
  proc_start?: string | null;
}

/** A decoded line where it lies in its Log (its `canonical` parts lie in `bytes`). */
export interface LogLine extends DecodedLine {
  /** The physical line's bytes, without `\n`. */
  bytes: Buffer;
  lineNo: number;
  offset: number;
  /** The line may be copied to output byte for byte. */
  exact: boolean;
}

export interface ScanResult {
  sessionId: string;
  path: StatePath;
  exists: boolean;
  /** Bytes that belong to the Log: the file size, or the journal's original_length. */
  byteLength: number;
  fileSize: number;
  journal: AppendJournal | null;
  physicalLines: number;
  eventCount: number;
  /** File order equals History order (stable sort by (seq is null, seq)). */
  inOrder: boolean;
  /** Every line is an exact envelope with a `\n` and there are no blank lines: bytes can be copied. */
  passThrough: boolean;
  endsWithNewline: boolean;
  first: LogLine | null;
  /** The last Event in file order. */
  last: LogLine | null;
  /** Greatest integer seq seen, or null. */
  maxSeq: number | null;
  skipped: Array<{ line: number; reason: CorruptReason }>;
  /** The file the checking pass read; every later pass reads the same one (see `openScanned`). */
  identity: FileIdentity | null;
}

/** Which file a path named when it was opened: a rename over the path (materialize) changes it. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

export type ProblemHandler = (problem: LineProblem, line: RawLine) => "skip" | "throw";

export interface ScanOptions {
  /** Called for every good line in file order (which makes an object per line: see scanBytes). */
  onLine?: (line: LogLine) => void;
  /** Decides what a corrupt line does; the default fails closed. */
  onProblem?: ProblemHandler;
  /** A share_v1 header after the first good line is `misplaced_share_header` (fork.md §6; the loader). */
  refuseLaterShareHeaders?: boolean;
}

export function corruptLineError(problem: LineProblem, lineNo: number, rel: string): PixirError {
  return new PixirError("corrupt_log_line", undefined, {
    reason: problem.reason,
    line: lineNo,
    path: rel,
    ...(problem.extra ?? {}),
    next_actions: problem.reason === "torn_tail" ? TORN_TAIL_ACTIONS : CORRUPT_LINE_ACTIONS,
  });
}

/**
 * The journal's text, or null when there is none (it may vanish between the look and the read). Most
 * Logs have none, so the usual answer costs one lstat that does not throw; anything there gets the
 * full confinement check of every component.
 */
export function journalText(p: StatePath): string | null {
  if (lstatSync(p.abs, { throwIfNoEntry: false }) === undefined || inspectStatePath(p) === "missing") return null;
  try {
    return readFileSync(p.abs, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null; // the append committed meanwhile
    throw err;
  }
}

function parseJournal(text: string, p: StatePath): AppendJournal {
  try {
    const j = JSON.parse(text);
    if (j && j.version === 1 && Number.isSafeInteger(j.original_length) && j.original_length >= 0) return j as AppendJournal;
  } catch {
    /* fall through */
  }
  throw new PixirError("log_read_failed", "append journal is unreadable", {
    reason: "invalid_append_journal",
    path: p.rel,
    // Our journals appear only whole (written, then linked into place): this one was damaged or written
    // by another program, and without its original length no tool can roll back. The way out is by hand.
    next_actions: [
      "restore the journal file from a backup, or, once no append is in flight, remove it by hand",
      "then run pixir-log check on the session: the log reads as its whole file, and a torn last line is dropped by pixir-log repair",
    ],
  });
}

/** §7 "Append journal": an interrupted append limits readers to the original length. */
export function readJournal(ws: string, id: string): AppendJournal | null {
  const p = journalPath(ws, id);
  const text = journalText(p);
  return text === null ? null : parseJournal(text, p);
}

export interface CommittedLength {
  fileSize: number;
  journal: AppendJournal | null;
  /** Bytes that belong to the Log: the file size, or the journal's original_length. */
  byteLength: number;
}

const SNAPSHOT_ATTEMPTS = 200;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * What a reader without the lease may read of the Log open on `fd`. A writer can create its journal,
 * write, commit (unlink the journal) or roll back between any two of our system calls, so the journal
 * and the size are read twice in the order journal, size, journal, size: when both pairs agree, no
 * append began or ended in between, and the size is either committed (no journal) or cut to the
 * journal's original length. Otherwise we look again (briefly pausing, so a busy writer can finish).
 */
export function committedLength(ws: string, id: string, fd: number): CommittedLength {
  const p = journalPath(ws, id);
  for (let attempt = 1; ; attempt++) {
    const before = journalText(p);
    const size = fstatSync(fd).size;
    const after = journalText(p);
    const fileSize = fstatSync(fd).size;
    if ((before === after && size === fileSize) || attempt === SNAPSHOT_ATTEMPTS) {
      const journal = after === null ? null : parseJournal(after, p);
      return { fileSize, journal, byteLength: journal ? Math.min(journal.original_length, fileSize) : fileSize };
    }
    if (attempt > 2) Atomics.wait(pause, 0, 0, 1);
  }
}

function logChanged(p: StatePath): PixirError {
  return new PixirError("log_read_failed", "session log was replaced or removed while it was read", {
    reason: "log_changed_during_read",
    path: p.rel,
    next_actions: ["rerun the command; another process (pixir-log materialize or rm) replaced or removed the log while it was read"],
  });
}

function assertSameFile(p: StatePath, identity: FileIdentity | null, st: { dev: number; ino: number }): void {
  if (identity !== null && (st.dev !== identity.dev || st.ino !== identity.ino)) throw logChanged(p);
}

/**
 * Open a Log for a later pass over what its checking pass saw. Readers take no lease, and materialize
 * replaces a share child by rename: a pass that opened the new file would read it with the old file's
 * length and checks (lines cut short, or another Event where the checked one stood), so it fails
 * instead. Once open, the descriptor keeps reading the checked file whatever happens to the path.
 */
export async function openScanned(p: StatePath, identity: FileIdentity | null): Promise<FileHandle> {
  let file: FileHandle;
  try {
    file = await openFile(p.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && identity !== null) throw logChanged(p);
    throw err;
  }
  try {
    assertSameFile(p, identity, await file.stat());
  } catch (err) {
    await file.close();
    throw err;
  }
  return file;
}

/** Bytes of `[start, end)` of the Log at `p` as a stream of chunks, from the file `identity` names. */
async function* readRange(p: StatePath, start: number, end: number, identity: FileIdentity | null): AsyncGenerator<Buffer> {
  if (end <= start) return;
  const file = await openScanned(p, identity);
  try {
    yield* file.createReadStream({ start, end: end - 1, highWaterMark: READ_CHUNK, autoClose: false });
  } finally {
    await file.close();
  }
}

/**
 * A whole file (a spool this process wrote) in the chunks every reader here uses: larger chunks held
 * outside V8's heap pile up between collections (1 MiB ones took pixir-fork's copy past 128 MiB).
 */
export function readFileChunks(abs: string): AsyncIterable<Buffer> {
  return createReadStream(abs, { highWaterMark: READ_CHUNK });
}

/** Bytes `[start, end)` of a Log; with `identity` (a ScanResult's), only of the file its scan read. */
export function readLogRange(p: StatePath, start: number, end: number, identity: FileIdentity | null = null): AsyncIterable<Buffer> {
  return readRange(p, start, end, identity);
}

/** The bytes of a scanned Log that belong to it, from the file its checking pass read. */
export function scannedBytes(scan: ScanResult): AsyncIterable<Buffer> {
  return readRange(scan.path, 0, scan.byteLength, scan.identity);
}

/** Lines of a Log file within its readable length, validated; corrupt ones go to `onProblem`. */
async function* decodedLines(
  p: StatePath,
  byteLength: number,
  identity: FileIdentity | null,
  onProblem: ProblemHandler,
  skipped: ScanResult["skipped"],
): AsyncGenerator<LogLine> {
  const decoder = new LineDecoder();
  for await (const raw of splitLines(readRange(p, 0, byteLength, identity), { path: p.rel })) {
    const decoded = decodeLogLine(raw.bytes, !raw.terminated, decoder);
    if (isLineProblem(decoded)) {
      if (onProblem(decoded, raw) === "throw") throw corruptLineError(decoded, raw.lineNo, p.rel);
      skipped.push({ line: raw.lineNo, reason: decoded.reason });
      continue;
    }
    yield toLogLine(decoded, raw);
  }
}

function toLogLine(decoded: DecodedLine, raw: RawLine): LogLine {
  const crlf = raw.bytes.length > 0 && raw.bytes[raw.bytes.length - 1] === 0x0d;
  return {
    event: decoded.event,
    bytes: raw.bytes,
    lineNo: raw.lineNo,
    offset: raw.offset,
    exact: decoded.exact && !crlf && raw.terminated,
    missingFields: decoded.missingFields,
    extraFields: decoded.extraFields,
    canonical: decoded.canonical,
  };
}

const failClosed: ProblemHandler = () => "throw";

/** The one checking pass. A missing Log scans as empty with `exists: false`. */
export async function scanLog(ws: string, id: string, options: ScanOptions = {}): Promise<ScanResult> {
  const p = logPath(ws, id);
  const result: ScanResult = {
    sessionId: id,
    path: p,
    exists: false,
    byteLength: 0,
    fileSize: 0,
    journal: null,
    physicalLines: 0,
    eventCount: 0,
    inOrder: true,
    passThrough: true,
    endsWithNewline: true,
    first: null,
    last: null,
    maxSeq: null,
    skipped: [],
    identity: null,
  };
  if (inspectStatePath(p) === "missing") return result;
  result.exists = true;
  const fd = openSync(p.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    result.identity = { dev: st.dev, ino: st.ino };
    Object.assign(result, committedLength(ws, id, fd));
    result.endsWithNewline = result.byteLength === 0 || lastByte(fd, result.byteLength) === 0x0a;
  } finally {
    closeSync(fd);
  }
  if (options.onLine === undefined && (await scanBytes(p, result, options.refuseLaterShareHeaders === true))) return result;
  let prevSeq = -1;
  let seenNull = false;
  let expectedOffset = 0;
  for await (const line of decodedLines(p, result.byteLength, result.identity, options.onProblem ?? failClosed, result.skipped)) {
    if (options.refuseLaterShareHeaders && result.first !== null && isShareHeader(line.event)) {
      throw corruptLineError({ reason: "misplaced_share_header" }, line.lineNo, p.rel);
    }
    const seq = line.event.seq;
    if (seq === null) seenNull = true;
    else {
      if (seenNull || seq < prevSeq) result.inOrder = false;
      prevSeq = Math.max(prevSeq, seq);
      if (result.maxSeq === null || seq > result.maxSeq) result.maxSeq = seq;
    }
    if (!line.exact || line.offset !== expectedOffset) result.passThrough = false;
    expectedOffset = line.offset + line.bytes.length + 1;
    result.eventCount++;
    if (result.first === null) result.first = line;
    result.last = line;
    options.onLine?.(line);
  }
  if (expectedOffset !== result.byteLength || result.skipped.length > 0) result.passThrough = false;
  result.physicalLines = countPhysicalLines(result);
  return result;
}

const isShareHeader = (e: PixirEvent): boolean => e.type === "session_fork" && e.data.strategy === "share_v1";

/** A line of a Log as scanLog reports it, decoded from its own copy of the bytes. */
function scannedLine(bytes: Buffer, lineNo: number, offset: number): LogLine {
  return toLogLine(decodeLogLine(bytes, false) as DecodedLine, { bytes, lineNo, offset, terminated: true });
}

/**
 * The checking pass for the usual Log, over blocks of its bytes with no object per line: when every
 * line passes the byte check (line-check.ts) with an integer seq, in seq order, each ending in `\n`,
 * the result is what the per-line pass would find (in order, pass-through, nothing skipped), with
 * only the first and last lines decoded. Any other Log gives false, and `result` is left as it was
 * for the per-line pass, which handles or names every problem. A large Log is checked in ranges of
 * whole lines, the later ones by worker threads (checkRangesInWorkers); the answer is the same.
 */
export async function scanBytes(p: StatePath, result: ScanResult, refuseLaterShareHeaders: boolean): Promise<boolean> {
  if (result.byteLength === 0) return false;
  let file: FileHandle;
  try {
    file = await openFile(p.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return false;
  }
  let ranges: Array<RangeScan | null>;
  try {
    assertSameFile(p, result.identity, await file.stat());
    const threads = scanThreadCount(process.env, result.byteLength, PARALLEL_CHECK_MIN_BYTES);
    const bounds = threads > 1 ? await rangeBounds(file, result.byteLength, threads) : [0, result.byteLength];
    rangeCheckStats.ranges += bounds.length - 1;
    const later: ShareHeaders = refuseLaterShareHeaders ? "all" : "none";
    const helpers = checkRangesInWorkers(p.abs, result.identity!, bounds, later);
    try {
      const own = await scanRange(file, 0, bounds[1]!, refuseLaterShareHeaders ? "after-first" : "none");
      if (own === null) return false;
      ranges = [own];
      for (let k = 1; k < bounds.length - 1; k++) {
        // A range no worker delivered (none started, or it failed) is checked here.
        const theirs = await helpers.results[k - 1]!;
        if (theirs !== undefined) rangeCheckStats.byWorkers++;
        ranges.push(theirs !== undefined ? theirs : await scanRange(file, bounds[k]!, bounds[k + 1]!, later));
        if (ranges[k] === null) return false;
      }
    } finally {
      helpers.stop();
    }
  } finally {
    await file.close();
  }
  let count = 0;
  let prevSeq = -1;
  for (const r of ranges as RangeScan[]) {
    if (r.firstSeq < prevSeq) return false;
    count += r.count;
    prevSeq = r.lastSeq;
  }
  const first = ranges[0]!;
  const last = ranges.at(-1)!;
  result.eventCount = count;
  result.maxSeq = prevSeq;
  result.first = scannedLine(first.first, 1, 0);
  result.last = count === 1 ? result.first : scannedLine(last.last, count, last.lastOffset);
  result.physicalLines = count;
  return true;
}

/** Ranges the checking passes of this process took, and how many of them worker threads checked (PIXIR_DEBUG). */
export const rangeCheckStats = { ranges: 0, byWorkers: 0 };

/** Below this size one thread checks a Log: a worker takes some 20 ms to start. */
const PARALLEL_CHECK_MIN_BYTES = 64 * 1024 * 1024;

/** Which lines of a range may not be a share_v1 header (the loader refuses one after a Log's first line). */
export type ShareHeaders = "none" | "after-first" | "all";

/** What the byte check found in a range of whole lines that all passed it (scanRange). */
export interface RangeScan {
  count: number;
  firstSeq: number;
  lastSeq: number;
  /** Copies of the range's first and last lines, without `\n`; where the last begins in the file. */
  first: Buffer;
  last: Buffer;
  lastOffset: number;
}

/**
 * scanBytes's check of the whole lines in `[start, end)` of `file`: null when any line would send the
 * Log to the per-line pass (not a canonical envelope, no integer seq, a seq lower than the one before,
 * a blank line, a share header where `shareHeaders` forbids one, or bytes that do not end in `\n`).
 */
export async function scanRange(file: PositionalReader, start: number, end: number, shareHeaders: ShareHeaders): Promise<RangeScan | null> {
  const facts = new LineFacts();
  let count = 0;
  let prevSeq = -1;
  let firstSeq = -1;
  let first: Buffer | null = null;
  let last: Buffer | null = null;
  let lastOffset = 0;
  let blockOffset = start;
  const from: PositionalReader = start === 0 ? file : { read: (buffer, offset, length, position) => file.read(buffer, offset, length, position + start) };
  for await (const block of lineBlocks(from, end - start)) {
    const b = block.bytes;
    // A line ends at the first `\n`, which is never part of a multi-byte character: the lines of a
    // block are valid UTF-8 each exactly when the block is.
    if (block.tail || !isUtf8(b.subarray(0, block.end))) return null;
    let s = 0;
    let lineStart = 0;
    while (s < block.end) {
      const e = b.indexOf(0x0a, s);
      if (e === s || checkLine(b, s, e, facts, true) < 0) return null;
      const seq = facts.seq;
      if (seq === null || seq < prevSeq) return null;
      prevSeq = seq;
      if (shareHeaders !== "none" && (count > 0 || shareHeaders === "all") && checkedShareHeader(b, facts)) return null;
      if (count === 0) {
        first = Buffer.from(b.subarray(s, e));
        firstSeq = seq;
      }
      count++;
      lineStart = s;
      s = e + 1;
    }
    last = Buffer.from(b.subarray(lineStart, block.end - 1));
    lastOffset = blockOffset + lineStart;
    blockOffset += block.end;
  }
  if (count === 0 || blockOffset !== end) return null;
  return { count, firstSeq, lastSeq: prevSeq, first: first!, last: last!, lastOffset };
}

/**
 * Where `threads` ranges of whole lines of the first `length` bytes begin, then `length`: each range
 * starts after the first `\n` at or past an equal share of the bytes. A share with no `\n` within
 * RANGE_SEEK bytes (one very long line) is left to the range before it.
 */
async function rangeBounds(file: FileHandle, length: number, threads: number): Promise<number[]> {
  const bounds = [0];
  const window = Buffer.allocUnsafe(RANGE_SEEK);
  for (let k = 1; k < threads; k++) {
    const at = Math.max(Math.floor((length * k) / threads), bounds.at(-1)!);
    const { bytesRead } = await file.read(window, 0, Math.min(RANGE_SEEK, length - at), at);
    const nl = window.subarray(0, bytesRead).indexOf(0x0a);
    if (nl >= 0 && at + nl + 1 < length) bounds.push(at + nl + 1);
  }
  bounds.push(length);
  return bounds;
}
const RANGE_SEEK = 1 << 20;

/** The worker entry point, bundled next to the module that holds this code (scripts/build.mjs). */
const CHECK_WORKER_FILE = "./check-worker.js";

/** What a check worker is asked, and answers (Buffers arrive as Uint8Arrays). */
export interface RangeCheckTask {
  path: string;
  identity: FileIdentity;
  start: number;
  end: number;
  shareHeaders: ShareHeaders;
}
type RangeCheckReply = { scan: (Omit<RangeScan, "first" | "last"> & { first: Uint8Array; last: Uint8Array }) | null };

/**
 * Start a worker for each range after the first (bounds k..k+1, k ≥ 1). `results[k - 1]` resolves to
 * the worker's RangeScan or null, or undefined when it gave no answer (it could not start, failed, or
 * the build has no worker file: a library run from its sources); `stop` ends those still running.
 */
function checkRangesInWorkers(path: string, identity: FileIdentity, bounds: number[], shareHeaders: ShareHeaders): { results: Array<Promise<RangeScan | null | undefined>>; stop: () => void } {
  const workers: Worker[] = [];
  const results: Array<Promise<RangeScan | null | undefined>> = [];
  const url = new URL(CHECK_WORKER_FILE, import.meta.url);
  const available = bounds.length > 2 && url.protocol === "file:" && existsSync(fileURLToPath(url));
  for (let k = 1; k < bounds.length - 1; k++) {
    if (!available) {
      results.push(Promise.resolve(undefined));
      continue;
    }
    const task: RangeCheckTask = { path, identity, start: bounds[k]!, end: bounds[k + 1]!, shareHeaders };
    results.push(
      new Promise((resolve) => {
        let worker: Worker;
        try {
          worker = new (workerThreads().Worker)(url, { workerData: task, stdout: true, stderr: true });
        } catch {
          resolve(undefined);
          return;
        }
        workers.push(worker);
        worker.once("message", (reply: RangeCheckReply) => {
          const r = reply.scan;
          resolve(r === null ? null : { ...r, first: asBuffer(r.first), last: asBuffer(r.last) });
        });
        // A failed worker's range is checked again in this thread, so its error is not news.
        worker.on("error", () => resolve(undefined));
        worker.once("exit", () => resolve(undefined));
      }),
    );
  }
  return {
    results,
    stop: () => {
      for (const w of workers) void w.terminate();
    },
  };
}

const asBuffer = (u: Uint8Array): Buffer => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/** The worker side: check the task's range of the file it names, if it is still the file the pass opened. */
export async function serveRangeCheck(task: RangeCheckTask): Promise<RangeCheckReply> {
  const file = await openFile(task.path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    const st = await file.stat();
    if (st.dev !== task.identity.dev || st.ino !== task.identity.ino) return { scan: null };
    return { scan: await scanRange(file, task.start, task.end, task.shareHeaders) };
  } finally {
    await file.close();
  }
}

function countPhysicalLines(r: ScanResult): number {
  // Only check uses this, and only for messages; the last good line is a fair lower bound.
  return r.last ? r.last.lineNo : 0;
}

function lastByte(fd: number, length: number): number {
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, length - 1);
  return b[0]!;
}

/**
 * The Events of a scanned Log in History order. Lines are re-read (and re-checked) from disk;
 * only an out-of-order Log builds a small (seq, offset, length) index.
 */
export async function* historyLines(scan: ScanResult, onProblem: ProblemHandler = failClosed): AsyncGenerator<LogLine> {
  if (!scan.exists || scan.eventCount === 0) return;
  const skipped: ScanResult["skipped"] = [];
  if (scan.inOrder) {
    yield* decodedLines(scan.path, scan.byteLength, scan.identity, onProblem, skipped);
    return;
  }
  const seqs: number[] = [];
  const offsets: number[] = [];
  const lengths: number[] = [];
  const lineNos: number[] = [];
  for await (const line of decodedLines(scan.path, scan.byteLength, scan.identity, onProblem, skipped)) {
    seqs.push(line.event.seq ?? Number.POSITIVE_INFINITY);
    offsets.push(line.offset);
    lengths.push(line.bytes.length);
    lineNos.push(line.lineNo);
  }
  const order = seqs.map((_, i) => i);
  order.sort((a, b) => seqs[a]! - seqs[b]! || a - b || 0);
  let fd: number;
  try {
    fd = openSync(scan.path.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw logChanged(scan.path);
    throw err;
  }
  try {
    assertSameFile(scan.path, scan.identity, fstatSync(fd));
    const decoder = new LineDecoder();
    for (const i of order) {
      const bytes = Buffer.alloc(lengths[i]!);
      readSync(fd, bytes, 0, bytes.length, offsets[i]!);
      const raw: RawLine = { bytes, lineNo: lineNos[i]!, offset: offsets[i]!, terminated: true };
      const decoded = decodeLogLine(bytes, false, decoder);
      if (isLineProblem(decoded)) throw corruptLineError(decoded, raw.lineNo, scan.path.rel);
      yield toLogLine(decoded, raw);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * The first line of a Log, decoded, reading no more than that line (small synchronous reads): lineage
 * (a first-line session_fork) is all that ls and rm need from most Logs.
 */
export async function readFirstLine(p: StatePath): Promise<{ line: LogLine } | { problem: LineProblem; lineNo: number } | null> {
  const fd = openSync(p.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  try {
    let buf = Buffer.allocUnsafe(4096);
    let have = 0;
    let start = 0;
    let lineNo = 1;
    for (;;) {
      const nl = buf.subarray(0, have).indexOf(0x0a, start);
      if (nl === start) {
        start++; // blank lines are skipped wherever they occur
        lineNo++;
        continue;
      }
      if (nl !== -1) return firstLineResult(buf.subarray(start, nl), lineNo, start, true);
      if (have - start > MAX_LINE_BYTES) return { problem: { reason: "line_too_long" }, lineNo };
      if (have === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 4);
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const n = readSync(fd, buf, have, buf.length - have, have);
      if (n === 0) return have > start ? firstLineResult(buf.subarray(start, have), lineNo, start, false) : null;
      have += n;
    }
  } finally {
    closeSync(fd);
  }
}

function firstLineResult(bytes: Buffer, lineNo: number, offset: number, terminated: boolean): { line: LogLine } | { problem: LineProblem; lineNo: number } {
  const decoded = decodeLogLine(bytes, !terminated);
  if (isLineProblem(decoded)) return { problem: decoded, lineNo };
  return { line: toLogLine(decoded, { bytes: Buffer.from(bytes), lineNo, offset, terminated }) };
}

export interface HeadLine {
  /** The envelope; `data` is a placeholder when it came from the head alone (see `dataText`). */
  event: PixirEvent;
  /** Raw text of `data`, when known without a full decode. */
  dataText: string | undefined;
  bytes: Buffer;
}

/**
 * A second pass over a Log whose checking pass found every line exact (`passThrough`): each line's
 * envelope is read from its head in our key order (decodeOwnHead) without parsing `data`; other
 * layouts are decoded in full. Callers that need `data` itself must use historyLines.
 */
export async function* headLines(scan: ScanResult): AsyncGenerator<HeadLine> {
  const decoder = new LineDecoder();
  for await (const raw of splitLines(scannedBytes(scan), { path: scan.path.rel })) yield headLine(raw, scan, decoder);
}

/** One line of headLines; a reader of many lines passes its own `decoder` (decode-line.ts). */
export function headLine(raw: RawLine, scan: Pick<ScanResult, "path">, decoder?: LineDecoder): HeadLine {
  const text = raw.bytes.toString("utf8");
  const head = decodeOwnHead(text);
  if (head !== null) return { event: head.event, dataText: head.dataText, bytes: raw.bytes };
  const decoded = decodeLogLine(raw.bytes, !raw.terminated, decoder);
  if (isLineProblem(decoded)) throw corruptLineError(decoded, raw.lineNo, scan.path.rel);
  return { event: decoded.event, dataText: decoded.exact ? dataTextOf(text, decoded.event) : undefined, bytes: raw.bytes };
}


/** What lineBlocks reads from: a FileHandle, or a file descriptor such as a seekable stdin (fork/parent-stdin-file.ts). */
export interface PositionalReader {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
}

/**
 * `[0, length)` of the file open as `file`, in blocks of whole lines. A block stays as it is until the
 * reader asks for the next one; a reader that handles each block before asking for the next allocates
 * nothing per line or per read. Two buffers take turns: while the reader handles one block, the next
 * bytes are already being read into the other (behind the partial line the block ended with). A line
 * longer than a buffer grows it, and from then on reads wait for the reader, in one buffer.
 */
export async function* lineBlocks(file: PositionalReader, length: number): AsyncGenerator<LineBlock> {
  // A range that fits one buffer is read into one of its own size: a Workspace is mostly small Logs,
  // and a megabyte or two of buffers for each would be most of what a pass over them allocates.
  const size = Math.max(1, Math.min(LINE_BLOCK, length));
  let buf: Buffer = Buffer.allocUnsafe(size);
  let spare: Buffer | null = length > size ? Buffer.allocUnsafe(size) : null;
  let have = 0;
  let position = 0;
  /** The read running while the reader handles a block: into `into`, after the `at` bytes of that block's partial line. */
  let ahead: { into: Buffer; at: number; read: Promise<{ bytesRead: number }> } | null = null;
  const readInto = (into: Buffer, at: number) => file.read(into, at, Math.min(into.length - at, length - position), position);
  try {
    while (position < length || have > 0 || ahead !== null) {
      let bytesRead = -1;
      if (ahead !== null) {
        const next = ahead;
        ahead = null;
        bytesRead = (await next.read).bytesRead;
        spare = buf;
        buf = next.into;
        have = next.at;
      } else if (position < length) bytesRead = (await readInto(buf, have)).bytesRead;
      if (bytesRead === 0) length = position; // the file shrank: what was read is all there is
      if (bytesRead > 0) {
        position += bytesRead;
        have += bytesRead;
      }
      const last = have === 0 ? -1 : buf.lastIndexOf(0x0a, have - 1);
      if (last < 0) {
        if (position < length && have < buf.length) continue;
        if (position < length && buf.length <= MAX_LINE_BYTES) {
          const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, MAX_LINE_BYTES + 1));
          buf.copy(bigger, 0, 0, have);
          buf = bigger;
          spare = null; // past one buffer's size, a second one would double the memory a long line takes
          continue;
        }
        if (have > 0) yield { bytes: buf, end: have, tail: true };
        return;
      }
      const end = last + 1;
      if (position < length && spare !== null) {
        buf.copy(spare, 0, end, have);
        const read = readInto(spare, have - end);
        read.catch(() => {}); // awaited when the reader asks for the next block; not a rejection nobody handles meanwhile
        ahead = { into: spare, at: have - end, read };
        spare = null;
        yield { bytes: buf, end, tail: false };
      } else {
        yield { bytes: buf, end, tail: false };
        buf.copy(buf, 0, end, have);
        have -= end;
      }
    }
  } finally {
    // A reader that stopped early closes its file next: let the read under way finish first.
    if (ahead !== null) await ahead.read.catch(() => {});
  }
}
