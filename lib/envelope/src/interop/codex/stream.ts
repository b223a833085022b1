// codex-interop.md §4.8: a new root family streamed from its rollout. The rollout is read a block at a
// time; each line is mapped and serialised as it is read, with the rules the planner uses (line-events.ts),
// and written to a prepared temp file that the writing pass commits under the Writer Lease. Nothing of the
// rollout stays in memory. Many rollouts are streamed on worker threads at once (stream-worker.ts): the
// work of one rollout depends on no other, and the main thread only orders the results.
import { readdirSync, rmSync } from "node:fs";
import type { JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { acquireLease } from "../../store/lease.js";
import { commitPreparedLog, discardPreparedLog, prepareLog, type PreparedLog } from "../../store/log-write.js";
import { logPath, sessionsDir } from "../../store/paths.js";
import { WorkerPool } from "../../store/worker-pool.js";
import { codexBaseId, scanRollout, type RolloutScan } from "./format.js";
import { indexDir, placeIndexEntry, prepareImportRecord, recordImport, type ReadFacts } from "./import-index.js";
import { rootLogReport, type CodexImportReport } from "./report.js";
import { RootLog } from "./line-events.js";
import { CodexLineBytes, OutBytes } from "./line-bytes.js";

/** One rollout to stream: a new root family whose Log does not exist (import.ts `streamable`). */
export interface StreamTask {
  ws: string;
  path: string;
  display: string;
  named: boolean;
  lenient: boolean;
  threadId: string;
  /** Write the Log to a prepared temp file; false for a dry run, which only counts. */
  write: boolean;
}

/** A prepared Log as it crosses from a worker: its temp file's name beside the Log. */
export interface SentPrepared {
  id: string;
  tmpName: string;
  /** The import index's entry, prepared beside its place (import-index.ts prepareImportRecord), or null. */
  indexTmp: string | null;
  bytes: number;
  createdDirs: string[];
}

/** An error as it crosses from a worker (streamError makes it an error again). */
export type SentError = { kind: string; message: string; details: Record<string, unknown> } | { internal: string };

const sentError = (err: unknown): SentError =>
  err instanceof PixirError ? { kind: err.kind, message: err.message, details: err.details } : { internal: String((err as Error)?.stack ?? err) };

export type StreamOutcome =
  /** `lineOne` (line 1's record) and `task` only for a subagent, whose link reads them (§3.6). */
  | { kind: "done"; report: CodexImportReport; facts: ReadFacts; lineOne: JsonObject | null; task: string | null; prepared: SentPrepared | null }
  /** A thread_rolled_back line: its child needs the Log's History, which only the planner keeps (§3.3). */
  | { kind: "needs_plan" }
  /** The file is no rollout of this thread any more (it changed since its first line was read). */
  | { kind: "gone" }
  | { kind: "error"; error: SentError };

/** Lines written from their bytes are handed to the Log's writer in runs of about this size. */
const OUT_FLUSH_BYTES = 192 * 1024;

/**
 * Where those runs gather: one for the thread, since a stream's lines are made in one synchronous pass
 * (scanRollout) and handed on before it returns, so no two streams use it at once.
 */
const lineOut = new OutBytes();

/** Thrown inside a stream to stop it for the planner. */
const NEEDS_PLAN = new Error("the rollout needs its family planned in memory");

/** Stream one rollout in this thread. */
export async function streamRoot(task: StreamTask, onWorker = false): Promise<StreamOutcome> {
  const t = task.threadId;
  const base = codexBaseId(t);
  let put = (_text: string): void => undefined;
  const log = new RootLog(t, task.display, (text) => put(text));
  let scan: RolloutScan | null = null;
  const produce = (emit: ((line: string | Buffer) => void) | null): void => {
    // Lines the twin writes from their bytes (line-bytes.ts) gather here, and go out before any other line.
    const twin = new CodexLineBytes(t, base);
    const out = lineOut;
    out.used = 0;
    const flush = (): void => {
      if (out.used > 0) emit?.(out.buf.subarray(0, out.used));
      out.used = 0;
    };
    put = (text) => {
      flush();
      emit?.(text);
    };
    const fromBytes = (bytes: Buffer, n: number): boolean => {
      // A subagent's task is read from its first boundary item (§3.6), which the plain rule parses.
      if (log.state === null || (log.parentThread !== null && log.task === null)) return false;
      const ts = twin.write(bytes, 0, bytes.length, n, log.seq, log.lastTs, log.state, out);
      if (ts === null) return false;
      log.seq++;
      log.lastTs = ts;
      if (out.used >= OUT_FLUSH_BYTES) flush();
      return true;
    };
    const read = scanRollout(task, task.named, task.lenient, (line) => {
      if (line.n === 1) {
        if (log.first(line) === null) throw GONE;
      } else if (!log.next(line)) throw NEEDS_PLAN;
    }, fromBytes);
    flush();
    if (read.kind === "rollout") scan = read.scan;
  };
  let prepared: PreparedLog | null = null;
  try {
    if (task.write) prepared = await prepareLog(task.ws, base, async (emit) => produce(emit), { lease: null }, false, onWorker ? "worker" : "here");
    else produce(null);
  } catch (err) {
    if (err === NEEDS_PLAN) return { kind: "needs_plan" };
    if (err === GONE) return { kind: "gone" };
    return { kind: "error", error: sentError(err) };
  }
  const lineOne = log.lineOne;
  if (scan === null || lineOne === null) {
    if (prepared !== null) discardPreparedLog(prepared);
    return { kind: "gone" };
  }
  const sc: RolloutScan = scan;
  const report = rootLogReport({ ...sc, display: task.display }, log.seq, log.seq, task.write ? "created" : "would_create");
  const facts: ReadFacts = { size: sc.size, mtimeMs: sc.mtimeMs, edges: sc.edges };
  const linkLineOne = log.parentThread === null ? null : lineOne;
  const indexTmp = prepared === null ? null : prepareImportRecord(task.ws, t, facts, linkLineOne, report, log.task);
  const sent = prepared === null ? null : sentPrepared(prepared, indexTmp);
  return { kind: "done", report, facts, lineOne: linkLineOne, task: log.task, prepared: sent };
}

/** Thrown inside a stream whose line 1 names another thread than its head did. */
const GONE = new Error("the rollout changed");

/** A prepared Log from a stream, back in the form the store commits. */
export function receivedPrepared(ws: string, p: SentPrepared): PreparedLog {
  const final = logPath(ws, p.id);
  return { id: p.id, final, tmp: final.sibling(p.tmpName), bytes: p.bytes, createdDirs: p.createdDirs };
}

/** The error of a failed stream, as this thread throws it. */
export function streamError(e: SentError): Error {
  return "internal" in e ? new PixirError("internal_error", undefined, { reason: "codex_stream_failed", stack: e.internal }) : new PixirError(e.kind as never, e.message, e.details);
}

/** What the writing pass commits of a streamed family (§4.6 step 3): its prepared Log, and what the import index keeps. */
export interface CommitTask {
  ws: string;
  program: string;
  env: NodeJS.ProcessEnv;
  threadId: string;
  prepared: SentPrepared;
  facts: ReadFacts;
  lineOne: JsonObject | null;
  report: CodexImportReport;
  task: string | null;
}

export type CommitOutcome = { kind: "done" } | { kind: "error"; error: SentError };

/**
 * A streamed family's prepared Log put in place under its Writer Lease (the sessions directory's fsync is
 * the caller's, once for the run), then the import index told. A failed commit has removed the temp file;
 * a lease not taken leaves it to the caller.
 */
export async function commitStreamed(c: CommitTask, signal?: AbortSignal): Promise<CommitOutcome> {
  try {
    const lease = await acquireLease(c.ws, codexBaseId(c.threadId), { program: c.program, env: c.env, signal });
    let ok = false;
    try {
      commitPreparedLog(c.ws, receivedPrepared(c.ws, c.prepared), { lease, signal }, { syncDir: false });
      ok = true;
    } finally {
      lease.release(!ok);
    }
    if (c.prepared.indexTmp !== null) placeIndexEntry(c.ws, codexBaseId(c.threadId), c.prepared.indexTmp);
    else recordImport(c.ws, c.threadId, c.facts, c.lineOne, c.report, c.task);
    return { kind: "done" };
  } catch (err) {
    return { kind: "error", error: sentError(err) };
  }
}

/** A prepared Log (and its index entry) in the form that crosses to a worker. */
export const sentPrepared = (p: PreparedLog, indexTmp: string | null): SentPrepared => ({ id: p.id, tmpName: p.tmp.components.at(-1)!, indexTmp, bytes: p.bytes, createdDirs: p.createdDirs });

// ---------------------------------------------------------------------------------------------------
// Streams and commits on worker threads.

const WORKER_FILE = "./codex-stream-worker.js";

/** Jobs a worker is given at once: while some wait for their fsync, the next is made. */
const JOBS_PER_WORKER = 3;

/** A job for a worker: a stream of the checking pass, or a commit of the writing pass. */
export type PoolJob = { kind: "stream"; task: StreamTask } | { kind: "commit"; task: CommitTask };

const interrupted = { kind: "error" as const, error: { kind: "interrupted", message: "interrupted", details: {} } };

/** Streams and commits handed out to worker threads (store/worker-pool.ts), a few at a time each; in this thread when there is no worker file. */
export class StreamPool {
  private constructor(private readonly pool: WorkerPool<PoolJob, StreamOutcome | CommitOutcome>) {}

  /**
   * A pool of `threads` workers, started when the first job is asked for, or one that works in this
   * thread (threads ≤ 1, or a library run from its sources), where a commit heeds `signal`. A stream whose
   * worker dies is made again here (its temp files removed first); a commit whose worker dies is reported
   * failed (its lease may be left, which the next writer classifies).
   */
  static open(threads: number, signal?: AbortSignal): StreamPool {
    const here = (job: PoolJob): Promise<StreamOutcome | CommitOutcome> => (job.kind === "stream" ? streamRoot(job.task) : commitStreamed(job.task, signal));
    const cut = (job: PoolJob): void => {
      if (job.kind === "stream") removeTempFiles(job.task);
    };
    return new StreamPool(
      WorkerPool.open(new URL(WORKER_FILE, import.meta.url), threads, here, cut, {
        perWorker: JOBS_PER_WORKER,
        lost: (job) => (job.kind === "commit" ? { kind: "error", error: { internal: "the worker making the commit stopped" } } : null),
        // A commit cut short would leave its lease behind.
        finishes: (job) => job.kind === "commit",
      }),
    );
  }

  /** Stream one rollout; resolves with its outcome (never rejects). */
  run(task: StreamTask): Promise<StreamOutcome> {
    return this.pool.run({ kind: "stream", task }) as Promise<StreamOutcome>;
  }

  /** Commit one streamed family; resolves with its outcome (never rejects). */
  commit(task: CommitTask): Promise<CommitOutcome> {
    return this.pool.run({ kind: "commit", task }) as Promise<CommitOutcome>;
  }

  /**
   * Stop the workers, once the commits they are making are made. Streams still running leave temp files,
   * which are removed; jobs not yet handed out are interrupted.
   */
  close(): Promise<void> {
    return this.pool.close(interrupted);
  }
}

/** The temp files a stream cut short left beside its Log (`<id>.ndjson.tmp-*`) and its index entry. */
function removeTempFiles(task: StreamTask): void {
  const base = codexBaseId(task.threadId);
  for (const [dir, prefix] of [
    [sessionsDir(task.ws).abs, `${base}.ndjson.tmp-`],
    [indexDir(task.ws), `${base}.json.tmp-`],
  ] as const) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) if (name.startsWith(prefix)) rmSync(`${dir}/${name}`, { force: true });
  }
}
