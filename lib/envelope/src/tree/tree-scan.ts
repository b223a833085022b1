// tree.md §2.7: the fast scan of one Log for the Session Tree, and the scan of many Logs on every core.
// Our writers emit `{"id":…,"session_id":…,"seq":…,"ts":…,"type":…,"data":{…}}`; for such a line the
// scan reads type, seq and ts from the bytes and builds no object. Any other line, and every line whose
// data the tree needs (subagent_event, branch_summary, session_fork), is decoded by the same
// decodeLogLine as every reader, so reasons and line numbers agree with the loader. The interior of
// `data` is not checked here; `pixir-log check` does that.
import { closeSync, constants as fsConstants, existsSync, fstatSync, openSync, readSync } from "node:fs";
import { isUtf8 } from "node:buffer";
import { fileURLToPath } from "node:url";
import { isMainThread, MessageChannel, parentPort, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { CANONICAL_TYPES, isLineProblem, isSeq, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { decodeLogLine, LineDecoder } from "../fast/decode-line.js";
import { MAX_LINE_BYTES } from "../lines/codec.js";
import { IS_REPLAY, LineHead, readHead, T_BRANCH, T_FORK, T_SUBAGENT, TYPE_INDEX } from "../fast/line-head.js";
import { asPixirError, fsError, PixirError, type Details, type ErrorKind } from "../event/errors.js";
import { committedLength, corruptLineError } from "../store/log-read.js";
import { inspectStatePath, isPresent, logPath, type StatePath } from "../store/paths.js";
import { isValidSessionId } from "../event/session-id.js";

export const isBlank = (v: unknown): boolean => typeof v !== "string" || v.trim() === "";

export const NL = 0x0a;
const CLOSE = 0x7d;
const CHUNK_BYTES = 256 * 1024;
export const FIRST_LINE_READ = 4096;
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0);

export interface KeyedData {
  /** History-order key: seq, or +Infinity for a null seq; ties keep file order. */
  key: number;
  order: number;
  seq: number | null;
  data: JsonObject;
}

/** A replay-type Event with an integer seq: what a share child may inherit (fork.md §3.1 step 6). */
export interface ReplayItem {
  seq: number;
  type: number;
  ts: string | null;
  /** Only for subagent_event, whose records the child shows too. */
  data: JsonObject | null;
}

/** What one physical Log holds, as far as the tree needs it. */
export interface OwnScan {
  exists: boolean;
  eventCount: number;
  typeCounts: number[];
  firstKey: number;
  firstTs: string | null;
  lastKey: number;
  lastTs: string | null;
  /** subagent_events with a non-blank string subagent_id, in file order. */
  subagentEvents: KeyedData[];
  /** The first branch_summary in History order. */
  branchSummary: KeyedData | null;
  /** The first Event is a share_v1 session_fork at seq 0. */
  shareHeader: { event: PixirEvent; lineNo: number } | null;
  /** With a share header: the first own Event, in History order, whose seq is within the prefix. */
  conflict: { key: number; order: number; lineNo: number } | null;
  /** Kept only for Logs that share children inherit from: replay-type Events in History order. */
  replayItems: ReplayItem[] | null;
  /** The first problem met (corrupt line, unsafe path, unreadable file); the scan goes on past lines. */
  problem: PixirError | null;
}

function emptyScan(keepReplay: boolean): OwnScan {
  return {
    exists: false,
    eventCount: 0,
    typeCounts: new Array<number>(CANONICAL_TYPES.length).fill(0),
    firstKey: Number.NaN,
    firstTs: null,
    lastKey: Number.NaN,
    lastTs: null,
    subagentEvents: [],
    branchSummary: null,
    shareHeader: null,
    conflict: null,
    replayItems: keepReplay ? [] : null,
    problem: null,
  };
}

let sharedChunk: Buffer | null = null;

class LogScanner {
  readonly scan: OwnScan;
  private lineNo = 0;
  /** What readHead found in the line at hand. */
  private readonly head = new LineHead();
  /** For the lines the byte scan leaves to the full decode (decode-line.ts). */
  private decoder: LineDecoder | undefined;
  /** replay_event_count of a share header: own seqs at or below it conflict (fork.md §6 step 6). */
  private shareCount: number | null = null;
  private replaySorted = true;

  constructor(
    private readonly rel: string,
    keepReplay: boolean,
  ) {
    this.scan = emptyScan(keepReplay);
  }

  private fail(err: PixirError): void {
    this.scan.problem ??= err;
  }

  /** One physical line, without its `\n`; `tail` marks a final line that had none. */
  line(b: Buffer, s: number, e: number, lineNo: number, tail: boolean, checkUtf8: boolean): void {
    this.lineNo = lineNo;
    if (e === s) return;
    if (!tail && !(checkUtf8 && !isUtf8(b.subarray(s, e))) && this.fast(b, s, e)) return;
    this.slow(b.subarray(s, e), tail);
  }

  /** The writers' key order, read from bytes. Returns false to let the full decoder decide. */
  private fast(b: Buffer, s: number, e: number): boolean {
    const head = this.head;
    const type = readHead(b, s, e, head);
    if (type < 0) return false;
    // `data` opened at head.dataOpen and the envelope closes right after it: `…}}`.
    if (e - 2 < head.dataOpen || b[e - 1] !== CLOSE || b[e - 2] !== CLOSE) return false;
    const seq = head.seq;
    // These types carry data the tree reads: decode them in full.
    if (type === T_SUBAGENT || type === T_FORK) return false;
    if (type === T_BRANCH) {
      const bs = this.scan.branchSummary;
      if (bs === null || (seq ?? Infinity) < bs.key) return false;
    }
    this.count(type, seq, null, null, b, head.tsStart, head.tsEnd);
    return true;
  }

  /** Bounds of the last Event's ts in the current chunk, decoded once per chunk (see flushLast). */
  private pendingLast = -1;
  private pendingLastEnd = 0;

  /** The chunk is about to be reused: turn a pending last ts into a string. */
  flushLast(b: Buffer): void {
    if (this.pendingLast < 0) return;
    this.scan.lastTs = b.toString("utf8", this.pendingLast, this.pendingLastEnd);
    this.pendingLast = -1;
  }

  /**
   * Count one Event. `ts` is given for decoded lines; for byte-read lines it is decoded from
   * `b[tsStart, tsEnd)` only when needed: the first Event, a kept replay item, and the last Event
   * once per chunk.
   */
  private count(type: number, seq: number | null, ts: string | null, data: JsonObject | null, b: Buffer | null = null, tsStart = 0, tsEnd = 0): void {
    const scan = this.scan;
    const key = seq ?? Infinity;
    const order = scan.eventCount;
    scan.eventCount++;
    scan.typeCounts[type]!++;
    if (this.shareCount !== null && order > 0 && seq !== null && seq <= this.shareCount) {
      const c = scan.conflict;
      if (c === null || key < c.key) scan.conflict = { key, order, lineNo: this.lineNo };
    }
    const first = order === 0 || key < scan.firstKey;
    const last = order === 0 || key >= scan.lastKey;
    const keep = scan.replayItems !== null && seq !== null && IS_REPLAY[type]!;
    if (last) {
      scan.lastKey = key;
      if (b === null) {
        scan.lastTs = ts;
        this.pendingLast = -1;
      } else {
        this.pendingLast = tsStart;
        this.pendingLastEnd = tsEnd;
      }
    }
    if (!first && !keep) return;
    const text = b === null ? ts : b.toString("utf8", tsStart, tsEnd);
    if (first) {
      scan.firstKey = key;
      scan.firstTs = text;
    }
    if (keep) {
      const items = scan.replayItems!;
      if (items.length > 0 && items[items.length - 1]!.seq > seq!) this.replaySorted = false;
      items.push({ seq: seq!, type, ts: text, data: type === T_SUBAGENT ? data : null });
    }
  }

  private slow(bytes: Buffer, tail: boolean): void {
    const decoded = decodeLogLine(bytes, tail, (this.decoder ??= new LineDecoder()));
    if (isLineProblem(decoded)) {
      this.fail(corruptLineError(decoded, this.lineNo, this.rel));
      return;
    }
    const e = decoded.event;
    const scan = this.scan;
    const key = e.seq ?? Infinity;
    const order = scan.eventCount;
    if (e.type === "session_fork" && e.data.strategy === "share_v1") {
      // fork.md §6: a share header is valid only as the first line, at seq 0.
      if (order !== 0 || e.seq !== 0) {
        this.fail(corruptLineError({ reason: "misplaced_share_header" }, this.lineNo, this.rel));
        return;
      }
      scan.shareHeader = { event: e, lineNo: this.lineNo };
      const n = e.data.replay_event_count;
      this.shareCount = isSeq(n) ? n : null;
    }
    if (e.type === "subagent_event" && !isBlank(e.data.subagent_id)) {
      scan.subagentEvents.push({ key, order, seq: e.seq, data: e.data });
    }
    if (e.type === "branch_summary" && (scan.branchSummary === null || key < scan.branchSummary.key)) {
      scan.branchSummary = { key, order, seq: e.seq, data: e.data };
    }
    this.count(TYPE_INDEX.get(e.type)!, e.seq, e.ts, e.data);
  }

  /** Read `[0, limit)` of an open Log in chunks; lines are never all in memory. */
  read(fd: number, limit: number): void {
    let buf = sharedChunk ?? (sharedChunk = Buffer.allocUnsafe(CHUNK_BYTES));
    let carry = 0;
    let offset = 0;
    let lineNo = 0;
    let skipping = false; // inside a line longer than MAX_LINE_BYTES
    while (offset < limit) {
      if (carry === buf.length) {
        if (buf.length > MAX_LINE_BYTES) {
          this.lineNo = lineNo + 1;
          this.fail(lineTooLong(this.rel, lineNo + 1));
          skipping = true;
          carry = 0;
        } else {
          const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, MAX_LINE_BYTES + 1));
          buf.copy(bigger, 0, 0, carry);
          buf = bigger;
        }
      }
      const n = readSync(fd, buf, carry, Math.min(buf.length - carry, limit - offset), offset);
      if (n === 0) break;
      offset += n;
      const end = carry + n;
      const view = buf.subarray(0, end);
      let s = 0;
      if (skipping) {
        const nl = view.indexOf(NL, carry);
        if (nl === -1) {
          carry = 0;
          continue;
        }
        skipping = false;
        lineNo++;
        s = nl + 1;
      }
      const lastNl = view.lastIndexOf(NL);
      // One native UTF-8 check per chunk; only a failing chunk is checked line by line.
      const checkLines = lastNl > s && !isUtf8(view.subarray(s, lastNl));
      for (;;) {
        const nl = view.indexOf(NL, s);
        if (nl === -1) break;
        lineNo++;
        this.line(view, s, nl, lineNo, false, checkLines);
        s = nl + 1;
      }
      this.flushLast(buf);
      carry = end - s;
      if (carry > 0 && s > 0) buf.copy(buf, 0, s, end);
    }
    if (carry > 0 && !skipping) this.line(buf, 0, carry, lineNo + 1, true, true);
    this.flushLast(buf);
    // History order is a stable sort by seq (envelope-and-log.md §7).
    if (!this.replaySorted) this.scan.replayItems!.sort((a, b) => a.seq - b.seq);
  }
}

export function lineTooLong(rel: string, lineNo: number): PixirError {
  return new PixirError("corrupt_log_line", "a line is longer than the line-length limit", {
    reason: "line_too_long",
    line: lineNo,
    path: rel,
    max_line_bytes: MAX_LINE_BYTES,
  });
}

/**
 * Open a Log for reading. `listed` says the Workspace listing already found it as a regular file
 * below checked `.pixir/sessions` components (envelope-and-log.md §6), so only the final component
 * is checked again, by O_NOFOLLOW and fstat; otherwise every component is lstat-ed first.
 * Returns null for a missing Log.
 */
export function openLog(p: StatePath, listed: boolean): number | null {
  if (!listed && inspectStatePath(p) === "missing") return null;
  let fd: number;
  try {
    fd = openSync(p.abs, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    // ELOOP: the Log was replaced by a symlink since it was listed.
    if (code === "ELOOP") inspectStatePath(p);
    throw err;
  }
  if (!fstatSync(fd).isFile()) {
    closeSync(fd);
    inspectStatePath(p);
    throw new PixirError("unsafe_state_path", undefined, { reason: "unexpected_file_type", component: p.rel, component_index: p.components.length - 1 });
  }
  return fd;
}

/** Scan one physical Log (honouring an append journal). Problems are recorded, never thrown. */
export function scanOwnLog(ws: string, id: string, keepReplay: boolean, listed: boolean): OwnScan {
  const p = logPath(ws, id);
  const scanner = new LogScanner(p.rel, keepReplay);
  const scan = scanner.scan;
  let fd: number | null = null;
  try {
    fd = openLog(p, listed);
    if (fd === null) return scan;
    scan.exists = true;
    scanner.read(fd, committedLength(ws, id, fd).byteLength);
  } catch (err) {
    scan.problem ??= readFailure(err, p.rel);
    // tree.md §2: log_exists is whether the Log is a regular file, also one this user may not open.
    if (!scan.exists) scan.exists = isPresent(p);
  } finally {
    if (fd !== null) closeSync(fd);
  }
  return scan;
}

export function readFailure(err: unknown, rel: string): PixirError {
  return fsError(err, rel, "read", () => {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    return code ? new PixirError("log_read_failed", undefined, { reason: code, path: rel }) : asPixirError(err);
  });
}


/** What discovery (tree.md §2.5) needs of a Log: its first line. */
export type FirstLine =
  | { kind: "plain" }
  | { kind: "fork"; parent: string | null; data: JsonObject }
  | { kind: "unreadable"; error: PixirError };

/**
 * The first line of a Log, read with a few small synchronous reads. A line in our writers' key order
 * whose type is not session_fork is classified from its head alone, however long it is.
 */
export function readFirstLineOf(ws: string, id: string): FirstLine {
  const p = logPath(ws, id);
  let fd: number | null = null;
  try {
    fd = openLog(p, true);
    if (fd === null) return { kind: "plain" };
    let buf = Buffer.allocUnsafe(FIRST_LINE_READ);
    let have = 0;
    let start = 0;
    let lineNo = 1;
    for (;;) {
      const nl = buf.subarray(0, have).indexOf(NL, start);
      if (nl === start) {
        start++; // empty lines are skipped wherever they occur
        lineNo++;
        continue;
      }
      if (nl !== -1) return classifyFirstLine(buf.subarray(start, nl), lineNo, false, p.rel);
      const type = readHead(buf, start, have, new LineHead());
      if (type >= 0 && type !== T_FORK) return { kind: "plain" };
      if (have - start > MAX_LINE_BYTES) throw lineTooLong(p.rel, lineNo);
      if (have === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 4, MAX_LINE_BYTES + start + 1));
        buf.copy(bigger, 0, 0, have);
        buf = bigger;
      }
      const n = readSync(fd, buf, have, buf.length - have, have);
      if (n === 0) return have > start ? classifyFirstLine(buf.subarray(start, have), lineNo, true, p.rel) : { kind: "plain" };
      have += n;
    }
  } catch (err) {
    return { kind: "unreadable", error: readFailure(err, p.rel) };
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function classifyFirstLine(bytes: Buffer, lineNo: number, tail: boolean, rel: string): FirstLine {
  const type = tail ? -1 : readHead(bytes, 0, bytes.length, new LineHead());
  if (type >= 0 && type !== T_FORK) return { kind: "plain" };
  const decoded = decodeLogLine(bytes, tail);
  if (isLineProblem(decoded)) return { kind: "unreadable", error: corruptLineError(decoded, lineNo, rel) };
  const e = decoded.event;
  if (e.type !== "session_fork" || e.seq !== 0) return { kind: "plain" };
  const parent = e.data.parent_session_id;
  return { kind: "fork", parent: isValidSessionId(parent) ? parent : null, data: e.data };
}

// ---------------------------------------------------------------------------------------------
// Many Logs on every core. A forest reads the first line of every Log, then scans every Log, and each
// Log is independent. Worker threads read first lines with this thread (a shared counter), then scan
// Logs from the far end of the forest while this thread builds from its start and scans what has not
// arrived (ScanStream). A worker runs the very same readFirstLineOf and scanOwnLog; only results cross.

/** One Log of a Workspace to scan. */
export interface ScanJob {
  id: string;
  /** share_v1 children inherit from this Log: keep its replay items. */
  keepReplay: boolean;
  /** The Workspace listing found it (see openLog). */
  listed: boolean;
}

type SentError = { kind: ErrorKind; message: string; details: Details };
/** What crosses from a worker: the results, with each PixirError as a plain record. */
type SentScan = Omit<OwnScan, "problem"> & { problem: SentError | null };
type SentFirst = Exclude<FirstLine, { kind: "unreadable" }> | { kind: "unreadable"; error: SentError };

/** A task for the pool: read first lines (all at once), or scan Logs (streamed: see ScanStream). */
type Task =
  | { task: "first"; ws: string; ids: string[]; next: SharedArrayBuffer }
  | { task: "stream"; ws: string; jobs: ScanJob[]; state: SharedArrayBuffer; port: MessagePort };

/** The worker entry point, bundled next to the module that holds this code (scripts/build.mjs). */
const WORKER_FILE = "./tree-scan-worker.js";
const sentError = (e: PixirError): SentError => ({ kind: e.kind, message: e.message, details: e.details });
const receivedError = (e: SentError): PixirError => new PixirError(e.kind, e.message, e.details);

function sendScan(scan: OwnScan): SentScan {
  return { ...scan, problem: scan.problem === null ? null : sentError(scan.problem) };
}

function receiveScan(sent: SentScan): OwnScan {
  return { ...sent, problem: sent.problem === null ? null : receivedError(sent.problem) };
}

function sendFirst(first: FirstLine): SentFirst {
  return first.kind === "unreadable" ? { kind: "unreadable", error: sentError(first.error) } : first;
}

function receiveFirst(sent: SentFirst): FirstLine {
  return sent.kind === "unreadable" ? { kind: "unreadable", error: receivedError(sent.error) } : sent;
}

/** Take items from the shared counter until none is left; results are [index, value] pairs. */
function take<T>(count: number, next: Int32Array, work: (index: number) => T, done: (index: number, value: T) => void): void {
  for (let i = Atomics.add(next, 0, 1); i < count; i = Atomics.add(next, 0, 1)) done(i, work(i));
}

/** Read first lines in this thread, taking Logs from the task's counter; every result goes to `done`. */
function readFirstLines(t: Extract<Task, { task: "first" }>, done: (index: number, value: SentFirst | FirstLine) => void, send: boolean): void {
  take(t.ids.length, new Int32Array(t.next), (i) => readFirstLineOf(t.ws, t.ids[i]!), (i, f) => done(i, send ? sendFirst(f) : f));
}

interface PoolWorker {
  worker: Worker;
  alive: boolean;
  /** Resolves the task in progress with the worker's results (none if it died). */
  pending: ((results: Array<[number, unknown]>) => void) | null;
}

/**
 * Worker threads that help this thread read Logs. Started early (their start-up overlaps the
 * listing), they wait for tasks; every task is also worked on by this thread, and whatever a worker
 * does not deliver (it could not start, or failed) is done here, so the results never depend on them.
 */
/**
 * A worker's young generation: it only reads Logs and sends back small results, so V8's default (sized
 * for a whole program) is room it never needs, and the tree of 10,000 Logs ran at the 256 MiB bound.
 */
const WORKER_YOUNG_MB = 8;

export class ScanPool {
  private readonly workers: PoolWorker[] = [];
  /** This thread's ends of the stream channels. */
  private readonly ports: MessagePort[] = [];
  /** Items the workers delivered, over all tasks (PIXIR_DEBUG reports it). */
  deliveredByWorkers = 0;

  /** This thread and the workers that started. */
  get threads(): number {
    return 1 + this.workers.length;
  }

  constructor(threads: number) {
    if (threads <= 1) return;
    const url = new URL(WORKER_FILE, import.meta.url);
    // Run from sources (tests of the library) there is no bundled worker: this thread works alone.
    if (url.protocol !== "file:" || !existsSync(fileURLToPath(url))) return;
    for (let k = 1; k < threads; k++) {
      let worker: Worker;
      try {
        worker = new Worker(url, { stdout: true, stderr: true, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB } });
      } catch {
        return;
      }
      const w: PoolWorker = { worker, alive: true, pending: null };
      worker.on("message", (results: Array<[number, unknown]>) => {
        const resolve = w.pending;
        w.pending = null;
        resolve?.(results);
      });
      // A failed worker's share is done again in this thread, so its error is not news.
      worker.on("error", () => {});
      worker.on("exit", () => {
        w.alive = false;
        const resolve = w.pending;
        w.pending = null;
        resolve?.([]);
      });
      this.workers.push(w);
    }
  }

  /** Run a task on every thread; results by item index, each item done exactly once here or there. */
  private async run(t: Extract<Task, { task: "first" }>, count: number): Promise<Array<unknown>> {
    const results = new Array<unknown>(count);
    const replies = this.workers
      .filter((w) => w.alive)
      .map(
        (w) =>
          new Promise<Array<[number, unknown]>>((resolve) => {
            w.pending = resolve;
            w.worker.postMessage(t);
          }),
      );
    readFirstLines(t, (i, v) => (results[i] = v), false);
    for (const reply of await Promise.all(replies)) {
      for (const [i, v] of reply) results[i] = receiveFirst(v as SentFirst);
      this.deliveredByWorkers += reply.length;
    }
    return results;
  }

  /** The first lines of these Logs (readFirstLineOf), in the order given. */
  async firstLines(ws: string, ids: string[]): Promise<FirstLine[]> {
    const results = (await this.run({ task: "first", ws, ids, next: new SharedArrayBuffer(4) }, ids.length)) as Array<FirstLine | undefined>;
    return results.map((f, i) => f ?? readFirstLineOf(ws, ids[i]!));
  }

  /**
   * Scan these Logs while this thread goes on with other work: the workers take them from the end of
   * the list, and ScanStream.take, asked in about the list's order, scans here whatever they have not
   * delivered. Put the Logs in the order they will be asked for.
   */
  stream(ws: string, jobs: ScanJob[]): ScanStream {
    const state = new SharedArrayBuffer(4 * (jobs.length + 1));
    const ports: MessagePort[] = [];
    for (const w of this.workers) {
      if (!w.alive) continue;
      // Scans come back on a channel of their own, read synchronously (receiveMessageOnPort).
      const channel = new MessageChannel();
      ports.push(channel.port1);
      this.ports.push(channel.port1);
      const task: Task = { task: "stream", ws, jobs, state, port: channel.port2 };
      w.worker.postMessage(task, [channel.port2]);
    }
    return new ScanStream(ws, jobs, state, ports, this);
  }

  /** Stop the workers. They hold the process open while they wait for tasks, so call this in a finally. */
  close(): void {
    for (const port of this.ports) port.close();
    for (const w of this.workers) if (w.alive) void w.worker.terminate();
  }
}

/** Claim states of streamed jobs; the slot after the last job counts deliveries (to wait on). */
const FREE = 0;
const BY_WORKER = 1;
const BY_THIS_THREAD = 2;
/** How long this thread waits for a Log a worker has in hand before it scans the Log itself. */
const HAND_OVER_WAIT_MS = 50;

/** Scans that workers stream while this thread builds; see ScanPool.stream. */
export class ScanStream {
  private readonly position = new Map<string, number>();
  private readonly state: Int32Array;
  private readonly scans: Array<OwnScan | undefined>;

  constructor(
    private readonly ws: string,
    private readonly jobs: ScanJob[],
    state: SharedArrayBuffer,
    private readonly ports: MessagePort[],
    private readonly pool: ScanPool,
  ) {
    this.state = new Int32Array(state);
    this.scans = new Array<OwnScan | undefined>(jobs.length);
    jobs.forEach((job, i) => this.position.set(job.id, i));
  }

  /** Take in what the workers have sent so far. */
  private drain(): void {
    for (const port of this.ports) {
      for (let m = receiveMessageOnPort(port); m !== undefined; m = receiveMessageOnPort(port)) {
        for (const [i, sent] of m.message as Array<[number, SentScan]>) {
          if (this.scans[i] !== undefined) continue;
          this.scans[i] = receiveScan(sent);
          this.pool.deliveredByWorkers++;
        }
      }
    }
  }

  /** The scan of `id` (scanOwnLog of its job), or undefined when `id` is not one of the jobs. */
  take(id: string): OwnScan | undefined {
    const i = this.position.get(id);
    if (i === undefined) return undefined;
    if (this.scans[i] === undefined) this.drain();
    if (this.scans[i] !== undefined) return this.scans[i];
    if (Atomics.compareExchange(this.state, i, FREE, BY_THIS_THREAD) === BY_WORKER) {
      // A worker has it in hand: wait a little for it (a worker that died never delivers).
      const deliveries = this.jobs.length;
      const deadline = performance.now() + HAND_OVER_WAIT_MS;
      for (let left = HAND_OVER_WAIT_MS; left > 0 && this.scans[i] === undefined; left = deadline - performance.now()) {
        const seen = Atomics.load(this.state, deliveries);
        this.drain();
        if (this.scans[i] === undefined) Atomics.wait(this.state, deliveries, seen, left);
      }
      if (this.scans[i] !== undefined) return this.scans[i];
    }
    const job = this.jobs[i]!;
    return (this.scans[i] = scanOwnLog(this.ws, job.id, job.keepReplay, job.listed));
  }
}

/** A worker's part of a stream: claim Logs from the end of the list, scan, send each at once. */
function streamScans(t: Extract<Task, { task: "stream" }>): void {
  const state = new Int32Array(t.state);
  const deliveries = t.jobs.length;
  for (let i = t.jobs.length - 1; i >= 0; i--) {
    if (Atomics.compareExchange(state, i, FREE, BY_WORKER) !== FREE) continue;
    const job = t.jobs[i]!;
    t.port.postMessage([[i, sendScan(scanOwnLog(t.ws, job.id, job.keepReplay, job.listed))]]);
    Atomics.add(state, deliveries, 1);
    Atomics.notify(state, deliveries);
  }
  t.port.close();
}

/** The body of tree-scan-worker.js: run each task this thread is given, and send the results back. */
export function serveScanWorker(): void {
  if (isMainThread || parentPort === null) return;
  const port = parentPort;
  port.on("message", (t: Task) => {
    if (t.task === "stream") {
      streamScans(t);
      return;
    }
    const results: Array<[number, SentFirst]> = [];
    readFirstLines(t, (i, v) => results.push([i, v as SentFirst]), true);
    port.postMessage(results);
  });
}
