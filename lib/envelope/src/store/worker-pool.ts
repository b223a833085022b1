// Tasks handed out to worker threads, for a job whose tasks depend on no other task (the Claude import
// prepares a new unit's Logs this way). A worker may hold more than one task at once, so that while one
// waits on the file system (a temp file's fsync) the next one runs. A task runs in this thread instead when
// there is no worker file (a library run from its sources) or only one thread may be used, and a task whose
// worker dies is run again here; so every task ends with an outcome, whatever happens to the threads.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parentPort, Worker, type ResourceLimits } from "node:worker_threads";

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

export interface PoolOptions {
  /** Tasks a worker holds at once (1 by default). */
  perWorker?: number;
  limits?: ResourceLimits;
}

export class WorkerPool<T, O> {
  private readonly workers: Worker[] = [];
  private readonly load = new Map<Worker, number>();
  private readonly queue: Array<Job<T, O>> = [];
  private readonly running = new Map<number, { worker: Worker; job: Job<T, O> }>();
  private closed = false;
  private started = false;
  private nextId = 0;

  /**
   * `url`: the worker's bundle (it calls serveTasks), or null to run every task here; `here` runs a task
   * in this thread; `cut` tidies after a task a worker did not finish (its worker died, or the pool closed).
   */
  private constructor(
    private readonly url: URL | null,
    private readonly threads: number,
    private readonly here: (task: T) => Promise<O>,
    private readonly cut: (task: T) => void,
    private readonly options: PoolOptions,
  ) {}

  /** A pool of `threads` workers of the bundle at `url`, started when the first task is run. */
  static open<T, O>(url: URL, threads: number, here: (task: T) => Promise<O>, cut: (task: T) => void, options: PoolOptions = {}): WorkerPool<T, O> {
    const usable = threads > 1 && url.protocol === "file:" && existsSync(fileURLToPath(url));
    return new WorkerPool(usable ? url : null, threads, here, cut, options);
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
      worker = new Worker(this.url!, { stdout: true, stderr: true, resourceLimits: this.options.limits });
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
        if (this.closed) continue;
        this.cut(held.job.task);
        void this.here(held.job.task).then(held.job.resolve);
      }
      this.next();
    };
    worker.on("error", lost);
    worker.once("exit", lost);
  }

  /** Run one task; resolves with its outcome (`here` must never reject). */
  run(task: T): Promise<O> {
    if (!this.parallel) return this.here(task);
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, task, resolve });
      this.next();
    });
  }

  private next(): void {
    const perWorker = Math.max(1, this.options.perWorker ?? 1);
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
      this.running.set(job.id, { worker, job });
      this.load.set(worker, this.load.get(worker)! + 1);
      worker.postMessage({ id: job.id, task: job.task } satisfies Sent<T>);
    }
  }

  /** Stop the workers. Tasks still queued or running are cut and resolve with `stopped`. */
  async close(stopped: O): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const cut = [...[...this.running.values()].map((r) => r.job), ...this.queue];
    this.running.clear();
    this.queue.length = 0;
    await Promise.all(this.workers.map((w) => w.terminate()));
    for (const job of cut) {
      this.cut(job.task);
      job.resolve(stopped);
    }
  }
}

/** The worker side: run each task this thread is sent with `handle` (several at once), and answer with its outcome. */
export function serveTasks<T, O>(handle: (task: T) => Promise<O>): void {
  const port = parentPort;
  if (port === null) return;
  port.on("message", ({ id, task }: Sent<T>) => {
    void handle(task).then((outcome) => port.postMessage({ id, outcome } satisfies Answer<O>));
  });
}
