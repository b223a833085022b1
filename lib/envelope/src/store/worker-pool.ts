// Tasks handed out to worker threads, for a job whose tasks depend on no other task (the Claude import
// prepares a new unit's Logs this way, the Codex import streams and commits new threads). A worker may hold
// more than one task at once, so that while one waits on the file system (a temp file's fsync) the next one
// runs. A task runs in this thread instead when there is no worker file (a library run from its sources) or
// only one thread may be used, and a task whose worker dies is run again here (or given the outcome its
// owner says); so every task ends with an outcome, whatever happens to the threads.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ResourceLimits, Worker } from "node:worker_threads";
import { workerThreads } from "../event/lazy-builtins.js";

interface Job<T, O> {
  id: number;
  task: T;
  resolve: (outcome: O) => void;
}

/** A task as it crosses to a worker, and its outcome as it comes back. */
interface Sent<T> {
  id: number;
  task: T;
}
interface Answer<O> {
  id: number;
  outcome: O;
}

export interface PoolOptions<T, O> {
  /** Tasks a worker holds at once (1 by default). */
  perWorker?: number;
  limits?: ResourceLimits;
  /** The outcome of a task whose worker died; null (and by default) cuts it and runs it again here. */
  lost?: (task: T) => O | null;
  /** A running task close() lets finish before it stops the workers (one that holds Writer Leases). */
  finishes?: (task: T) => boolean;
  /**
   * This thread is one of the `threads` lanes: one worker fewer starts, and this thread runs a queued task
   * whenever it runs none (for a job whose own thread would otherwise only wait for the workers).
   */
  laneHere?: boolean;
}

export class WorkerPool<T, O> {
  private readonly workers: Worker[] = [];
  private readonly load = new Map<Worker, number>();
  private readonly queue: Array<Job<T, O>> = [];
  private readonly running = new Map<number, { worker: Worker; job: Job<T, O>; done: Promise<void>; finish: () => void }>();
  private closed = false;
  private closing: Promise<void> | null = null;
  private stopped: { outcome: O } | null = null;
  private started = false;
  private nextId = 0;
  /** The laneHere task running in this thread, if any. */
  private hereBusy = false;

  /**
   * `url`: the worker's bundle (it calls serveTasks), or null to run every task here; `here` runs a task
   * in this thread; `cut` tidies after a task a worker did not finish (its worker died, or the pool closed).
   */
  private constructor(
    private readonly url: URL | null,
    private readonly threads: number,
    private readonly here: (task: T) => Promise<O>,
    private readonly cut: (task: T) => void,
    private readonly options: PoolOptions<T, O>,
  ) {}

  /** A pool of `threads` workers of the bundle at `url`, started when the first task is run. */
  static open<T, O>(url: URL, threads: number, here: (task: T) => Promise<O>, cut: (task: T) => void, options: PoolOptions<T, O> = {}): WorkerPool<T, O> {
    const usable = threads > 1 && url.protocol === "file:" && existsSync(fileURLToPath(url));
    return new WorkerPool(usable ? url : null, threads, here, cut, options);
  }

  private get parallel(): boolean {
    if (this.url === null || this.closed) return false;
    if (!this.started) {
      this.started = true;
      const workers = this.options.laneHere === true ? this.threads - 1 : this.threads;
      for (let i = 0; i < workers; i++) this.start();
    }
    return this.workers.length > 0;
  }

  private start(): void {
    let worker: Worker;
    try {
      worker = new (workerThreads().Worker)(this.url!, { stdout: true, stderr: true, resourceLimits: this.options.limits });
    } catch {
      return;
    }
    this.workers.push(worker);
    this.load.set(worker, 0);
    worker.on("message", ({ id, outcome }: Answer<O>) => {
      const held = this.running.get(id);
      if (held === undefined) return;
      this.running.delete(id);
      this.load.set(worker, (this.load.get(worker) ?? 1) - 1);
      held.job.resolve(outcome);
      held.finish();
      this.next();
    });
    // A worker that dies takes its tasks with it: they run again here, and the worker is not used again.
    const lost = (): void => {
      const at = this.workers.indexOf(worker);
      if (at >= 0) this.workers.splice(at, 1);
      this.load.delete(worker);
      for (const [id, held] of [...this.running]) {
        if (held.worker !== worker) continue;
        this.running.delete(id);
        held.finish();
        const outcome = this.options.lost?.(held.job.task) ?? null;
        if (outcome !== null) held.job.resolve(outcome);
        else {
          this.cut(held.job.task);
          if (this.stopped !== null) held.job.resolve(this.stopped.outcome);
          else void this.here(held.job.task).then(held.job.resolve);
        }
      }
      this.next();
    };
    worker.on("error", lost);
    worker.once("exit", lost);
  }

  /** Run one task; resolves with its outcome (`here` must never reject); once closed, with `stopped`. */
  run(task: T): Promise<O> {
    if (this.stopped !== null) return Promise.resolve(this.stopped.outcome);
    if (!this.parallel) return this.here(task);
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, task, resolve });
      this.next();
    });
  }

  private next(): void {
    const perWorker = Math.max(1, this.options.perWorker ?? 1);
    if (this.options.laneHere === true && !this.hereBusy && this.workers.length > 0 && this.queue.length > 0) this.runHere(this.queue.shift()!);
    while (this.queue.length > 0) {
      if (this.workers.length === 0) {
        const job = this.queue.shift()!;
        void this.here(job.task).then(job.resolve);
        continue;
      }
      // The least loaded worker with room.
      let worker: Worker | undefined;
      for (const w of this.workers) if ((this.load.get(w) ?? 0) < perWorker && (worker === undefined || this.load.get(w)! < this.load.get(worker)!)) worker = w;
      if (worker === undefined) return;
      const job = this.queue.shift()!;
      let finish = (): void => {};
      const done = new Promise<void>((resolve) => (finish = resolve));
      this.running.set(job.id, { worker, job, done, finish });
      this.load.set(worker, this.load.get(worker)! + 1);
      worker.postMessage({ id: job.id, task: job.task } satisfies Sent<T>);
    }
  }

  /** A task in this thread's lane, started on the next turn so that the caller's loop of run() calls finishes first. */
  private runHere(job: Job<T, O>): void {
    this.hereBusy = true;
    setImmediate(() => {
      void this.here(job.task).then((outcome) => {
        this.hereBusy = false;
        job.resolve(outcome);
        if (!this.closed) this.next();
      });
    });
  }

  /**
   * Stop the workers, once the running tasks that `finishes` names are done. Tasks still running then are
   * cut; they, the queued ones and any run later resolve with `stopped`. Every call waits for the same end.
   */
  close(stopped: O): Promise<void> {
    this.closing ??= this.stop(stopped);
    return this.closing;
  }
  private async stop(stopped: O): Promise<void> {
    this.closed = true;
    this.stopped = { outcome: stopped };
    const queued = this.queue.splice(0);
    const finishing = [...this.running.values()].filter((r) => this.options.finishes?.(r.job.task)).map((r) => r.done);
    await Promise.all(finishing);
    for (const job of queued) job.resolve(stopped);
    const cut = [...this.running.values()].map((r) => r.job);
    this.running.clear();
    await Promise.all(this.workers.map((w) => w.terminate()));
    for (const job of cut) {
      this.cut(job.task);
      job.resolve(stopped);
    }
  }
}

/** The worker side: run each task this thread is sent with `handle` (several at once), and answer with its outcome. */
export function serveTasks<T, O>(handle: (task: T) => Promise<O>): void {
  const port = workerThreads().parentPort;
  if (port === null) return;
  port.on("message", ({ id, task }: Sent<T>) => {
    void handle(task).then((outcome) => port.postMessage({ id, outcome } satisfies Answer<O>));
  });
}
