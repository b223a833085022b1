// Tasks handed out to worker threads, one at a time each, for a job whose tasks depend on no other task
// (the Claude import prepares a new unit's Logs this way). A task runs in this thread instead when there
// is no worker file (a library run from its sources) or only one thread may be used, and a task whose
// worker dies is run again here; so every task ends with an outcome, whatever happens to the threads.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parentPort, Worker, type ResourceLimits } from "node:worker_threads";

interface Job<T, O> {
  task: T;
  resolve: (outcome: O) => void;
}

export class WorkerPool<T, O> {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: Array<Job<T, O>> = [];
  private readonly running = new Map<Worker, Job<T, O>>();
  private closed = false;
  private started = false;

  /**
   * `url`: the worker's bundle (it calls serveTasks), or null to run every task here; `here` runs a task
   * in this thread; `cut` tidies after a task a worker did not finish (its worker died, or the pool closed).
   */
  private constructor(
    private readonly url: URL | null,
    private readonly threads: number,
    private readonly here: (task: T) => Promise<O>,
    private readonly cut: (task: T) => void,
    private readonly limits: ResourceLimits | undefined,
  ) {}

  /** A pool of `threads` workers of the bundle at `url`, started when the first task is run. */
  static open<T, O>(url: URL, threads: number, here: (task: T) => Promise<O>, cut: (task: T) => void, limits?: ResourceLimits): WorkerPool<T, O> {
    const usable = threads > 1 && url.protocol === "file:" && existsSync(fileURLToPath(url));
    return new WorkerPool(usable ? url : null, threads, here, cut, limits);
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
      worker = new Worker(this.url!, { stdout: true, stderr: true, resourceLimits: this.limits });
    } catch {
      return;
    }
    this.workers.push(worker);
    this.idle.push(worker);
    worker.on("message", (outcome: O) => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      this.idle.push(worker);
      job?.resolve(outcome);
      this.next();
    });
    // A worker that dies takes its task with it: the task runs again here, and the worker is not used again.
    const lost = (): void => {
      const job = this.running.get(worker);
      this.running.delete(worker);
      const known = this.workers.indexOf(worker);
      if (known >= 0) this.workers.splice(known, 1);
      const at = this.idle.indexOf(worker);
      if (at >= 0) this.idle.splice(at, 1);
      if (job !== undefined && !this.closed) {
        this.cut(job.task);
        void this.here(job.task).then(job.resolve);
      }
    };
    worker.on("error", lost);
    worker.once("exit", lost);
  }

  /** Run one task; resolves with its outcome (`here` must never reject). */
  run(task: T): Promise<O> {
    if (!this.parallel) return this.here(task);
    return new Promise((resolve) => {
      this.queue.push({ task, resolve });
      this.next();
    });
  }

  private next(): void {
    while (this.queue.length > 0) {
      if (this.workers.length === 0) {
        const job = this.queue.shift()!;
        void this.here(job.task).then(job.resolve);
        continue;
      }
      const worker = this.idle.pop();
      if (worker === undefined) return;
      const job = this.queue.shift()!;
      this.running.set(worker, job);
      worker.postMessage(job.task);
    }
  }

  /** Stop the workers. Tasks still queued or running are cut and resolve with `stopped`. */
  async close(stopped: O): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const cut = [...this.running.values(), ...this.queue];
    this.running.clear();
    this.queue.length = 0;
    await Promise.all(this.workers.map((w) => w.terminate()));
    for (const job of cut) {
      this.cut(job.task);
      job.resolve(stopped);
    }
  }
}

/** The worker side: run each task this thread is sent with `handle`, and answer with its outcome. */
export function serveTasks<T, O>(handle: (task: T) => Promise<O>): void {
  const port = parentPort;
  if (port === null) return;
  port.on("message", (task: T) => {
    void handle(task).then((outcome) => port.postMessage(outcome));
  });
}
