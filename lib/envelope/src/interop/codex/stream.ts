// codex-interop.md §4.8: a new root family streamed from its rollout. The rollout is read a block at a
// time; each line is mapped and serialised as it is read, with the rules the planner uses (line-events.ts),
// and written to a prepared temp file that the writing pass commits under the Writer Lease. Nothing of the
// rollout stays in memory. Many rollouts are streamed on worker threads at once (stream-worker.ts): the
// work of one rollout depends on no other, and the main thread only orders the results.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { discardPreparedLog, prepareLog, type PreparedLog } from "../../store/log-write.js";
import { logPath, sessionsDir } from "../../store/paths.js";
import { codexBaseId, EPOCH, isBoundaryItem, scanRollout, shownThreadId, validTimestamp, type RolloutScan } from "./format.js";
import type { ReadFacts } from "./import-index.js";
import type { CodexImportReport } from "./import.js";
import { eventLine, lineEvents, parentThreadOf, rootHeader, rootLineage, taskOfRecords } from "./line-events.js";
import { mapLine, RunningState } from "./line-map.js";

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
  bytes: number;
  createdDirs: string[];
}

export type StreamOutcome =
  /** `lineOne` (line 1's record) and `task` only for a subagent, whose link reads them (§3.6). */
  | { kind: "done"; report: CodexImportReport; facts: ReadFacts; lineOne: JsonObject | null; task: string | null; prepared: SentPrepared | null }
  /** A thread_rolled_back line: its child needs the Log's History, which only the planner keeps (§3.3). */
  | { kind: "needs_plan" }
  /** The file is no rollout of this thread any more (it changed since its first line was read). */
  | { kind: "gone" }
  | { kind: "error"; error: { kind: string; message: string; details: Record<string, unknown> } | { internal: string } };

/** Thrown inside a stream to stop it for the planner. */
const NEEDS_PLAN = new Error("the rollout needs its family planned in memory");

/** Stream one rollout in this thread. */
export async function streamRoot(task: StreamTask): Promise<StreamOutcome> {
  const t = task.threadId;
  const base = codexBaseId(t);
  let seq = 0;
  let lastTs = EPOCH;
  let lineOne: JsonObject | null = null;
  let subagentTask: string | null = null;
  let scan: RolloutScan | null = null;
  let parentThread: string | null = null;
  let state: RunningState | null = null;
  const produce = (emit: ((line: string) => void) | null): void => {
    const put = (e: Omit<PixirEvent, "seq" | "session_id">): void => {
      const event: PixirEvent = { id: e.id, session_id: base, seq, ts: e.ts, type: e.type, data: e.data };
      seq++;
      lastTs = e.ts ?? lastTs;
      emit?.(eventLine(event));
    };
    const read = scanRollout(task, task.named, task.lenient, (line) => {
      const r = line.record;
      if (line.n === 1) {
        const meta = r!.payload as JsonObject;
        if (meta.id !== t) throw GONE;
        lineOne = r;
        parentThread = parentThreadOf(meta);
        state = new RunningState(typeof meta.model_provider === "string" ? meta.model_provider : null);
        put(rootHeader(t, line, task.display, rootLineage(meta, null)));
        return;
      }
      if (r?.type === "event_msg" && isJsonObject(r.payload) && r.payload.type === "thread_rolled_back") throw NEEDS_PLAN;
      if (subagentTask === null && parentThread !== null && r?.type === "response_item" && isBoundaryItem(r.payload)) subagentTask = taskOfRecords([r]);
      for (const e of lineEvents(t, line, mapLine(t, line, state!), seq, validTimestamp(r?.timestamp) ?? lastTs)) put(e);
    });
    if (read.kind === "rollout") scan = read.scan;
  };
  let prepared: PreparedLog | null = null;
  try {
    if (task.write) prepared = await prepareLog(task.ws, base, async (emit) => produce(emit), { lease: null });
    else produce(null);
  } catch (err) {
    if (err === NEEDS_PLAN) return { kind: "needs_plan" };
    if (err === GONE) return { kind: "gone" };
    return { kind: "error", error: err instanceof PixirError ? { kind: err.kind, message: err.message, details: err.details } : { internal: String((err as Error)?.stack ?? err) } };
  }
  if (scan === null || lineOne === null) {
    if (prepared !== null) discardPreparedLog(prepared);
    return { kind: "gone" };
  }
  const sc: RolloutScan = scan;
  const report: CodexImportReport = {
    file: task.display,
    thread_id: shownThreadId(t),
    cli_version: typeof sc.meta.cli_version === "string" ? sc.meta.cli_version : null,
    line_count: sc.lineCount,
    pending_tail: sc.pendingTail,
    skipped_lines: sc.skippedLines,
    fork: null,
    sessions: [{ session_id: base, role: "root", parent_session_id: null, forked_to_seq: null, event_count: seq, new_event_count: seq, status: task.write ? "created" : "would_create" }],
    leaf_session_id: base,
  };
  const facts: ReadFacts = { size: sc.size, mtimeMs: sc.mtimeMs, edges: sc.edges };
  const sent = prepared === null ? null : { id: prepared.id, tmpName: prepared.tmp.components.at(-1)!, bytes: prepared.bytes, createdDirs: prepared.createdDirs };
  return { kind: "done", report, facts, lineOne: parentThread === null ? null : lineOne, task: subagentTask, prepared: sent };
}

/** Thrown inside a stream whose line 1 names another thread than its head did. */
const GONE = new Error("the rollout changed");

/** A prepared Log from a stream, back in the form the store commits. */
export function receivedPrepared(ws: string, p: SentPrepared): PreparedLog {
  const final = logPath(ws, p.id);
  return { id: p.id, final, tmp: final.sibling(p.tmpName), bytes: p.bytes, createdDirs: p.createdDirs };
}

/** The error of a failed stream, as this thread throws it. */
export function streamError(e: Extract<StreamOutcome, { kind: "error" }>["error"]): Error {
  return "internal" in e ? new PixirError("internal_error", undefined, { reason: "codex_stream_failed", stack: e.internal }) : new PixirError(e.kind as never, e.message, e.details);
}

// ---------------------------------------------------------------------------------------------------
// Streams on worker threads.

const WORKER_FILE = "./codex-stream-worker.js";

/** Streams handed out to worker threads, a few at a time each; in this thread when there is no worker file. */
export class StreamPool {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: Array<{ task: StreamTask; resolve: (o: StreamOutcome) => void }> = [];
  private readonly running = new Map<Worker, { task: StreamTask; resolve: (o: StreamOutcome) => void }>();
  private closed = false;

  private started = false;

  private constructor(
    private readonly url: URL | null,
    private readonly threads: number,
  ) {}

  /**
   * A pool of `threads` workers, started when the first stream is asked for, or one that streams in this
   * thread (threads ≤ 1, or a library run from its sources).
   */
  static open(threads: number): StreamPool {
    const url = new URL(WORKER_FILE, import.meta.url);
    const usable = threads > 1 && url.protocol === "file:" && existsSync(fileURLToPath(url));
    return new StreamPool(usable ? url : null, threads);
  }

  private get parallel(): boolean {
    if (this.url === null || this.closed) return false;
    if (!this.started) {
      this.started = true;
      for (let i = 0; i < this.threads; i++) this.start();
    }
    return this.workers.length > 0;
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new Worker(this.url!, { stdout: true, stderr: true });
    } catch {
      return;
    }
    this.workers.push(worker);
    this.idle.push(worker);
    worker.on("message", (outcome: StreamOutcome) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      this.idle.push(worker);
      job?.resolve(outcome);
      this.next();
    });
    // A worker that dies takes its stream with it: it is streamed again here, and the worker is not used again.
    const lost = (): void => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      const known = this.workers.indexOf(worker);
      if (known >= 0) this.workers.splice(known, 1);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      if (job !== undefined && !this.closed) {
        removeTempFiles(job.task);
        void streamRoot(job.task).then(job.resolve);
      }
    };
    worker.on("error", lost);
    worker.once("exit", lost);
  }

  /** Stream one rollout; resolves with its outcome (never rejects). */
  run(task: StreamTask): Promise<StreamOutcome> {
    if (!this.parallel) return streamRoot(task);
    return new Promise((resolve) => {
      this.queue.push({ task, resolve });
      this.next();
    });
  }

  private next(): void {
    while (this.queue.length > 0) {
      if (this.workers.length === 0) {
        const job = this.queue.shift()!;
        void streamRoot(job.task).then(job.resolve);
        continue;
      }
      const worker = this.idle.pop();
      if (worker === undefined) return;
      const job = this.queue.shift()!;
      this.running.set(worker, job);
      worker.postMessage(job.task);
    }
  }

  /** Stop the workers. Streams still running leave temp files, which are removed. */
  async close(): Promise<void> {
    this.closed = true;
    const cut = [...this.running.values()];
    this.running.clear();
    this.queue.length = 0;
    await Promise.all(this.workers.map((w) => w.terminate()));
    for (const job of cut) {
      removeTempFiles(job.task);
      job.resolve({ kind: "error", error: { kind: "interrupted", message: "interrupted", details: {} } });
    }
  }
}

/** The temp files a stream cut short left beside its Log (`<id>.ndjson.tmp-*`). */
function removeTempFiles(task: StreamTask): void {
  const dir = sessionsDir(task.ws).abs;
  const prefix = `${codexBaseId(task.threadId)}.ndjson.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix)) rmSync(`${dir}/${name}`, { force: true });
}
