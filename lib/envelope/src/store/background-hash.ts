// SHA-256 on a worker thread, for a digest whose input is made faster than this thread could also hash
// it: pixir-fork reading a piped parent checks, stages and spools every line, and hashing the staged
// digest lines here would add about half a second per GiB to the time before its header can go out
// (docs/performance.md). Blocks are handed over (their memory moves to the worker) and come back
// for reuse once hashed, so nothing is copied and at most MAX_IN_FLIGHT blocks are out at once.
import { Worker } from "node:worker_threads";

/** Blocks out at once; a producer that has handed over this many waits in room(). */
const MAX_IN_FLIGHT = 4;

// Plain CommonJS run by the worker: update with each block, send it back, answer "end" with the digest.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const hash = require("node:crypto").createHash("sha256");
parentPort.on("message", (m) => {
  if (m === "end") {
    parentPort.postMessage({ digest: hash.digest("hex") });
    parentPort.close();
    return;
  }
  hash.update(new Uint8Array(m.buffer, 0, m.length));
  parentPort.postMessage({ buffer: m.buffer }, [m.buffer]);
});
`;

export class BackgroundSha256 {
  private readonly worker: Worker;
  private inFlight = 0;
  private readonly spare: ArrayBuffer[] = [];
  private waiters: Array<() => void> = [];
  private failure: Error | null = null;
  private answer: ((hex: string) => void) | null = null;

  /** A hasher on a new worker thread, or null where one cannot be started. */
  static start(): BackgroundSha256 | null {
    try {
      return new BackgroundSha256(new Worker(WORKER_SOURCE, { eval: true, stdout: true, stderr: true }));
    } catch {
      return null;
    }
  }

  private constructor(worker: Worker) {
    this.worker = worker;
    // The process never waits for it: every path ends it (digest, or stop).
    worker.unref();
    worker.on("message", (m: { buffer?: ArrayBuffer; digest?: string }) => {
      if (m.buffer !== undefined) {
        this.inFlight--;
        this.spare.push(m.buffer);
        this.wake();
      } else if (m.digest !== undefined) this.answer?.(m.digest);
    });
    const failed = (err: Error) => {
      this.failure ??= err;
      this.wake();
      this.answer?.("");
    };
    worker.on("error", failed);
    worker.on("exit", () => failed(new Error("the hashing thread ended before its digest")));
  }

  /**
   * Hash `block[0, length)` after everything handed over before it. The block's memory goes to the
   * worker (it must be its own ArrayBuffer, not a slice of a pool); use the returned buffer, of the same
   * size, in its place.
   */
  handOver(block: Buffer, length: number): Buffer {
    const memory = block.buffer as ArrayBuffer;
    if (block.byteOffset !== 0 || block.length !== memory.byteLength) throw new Error("BackgroundSha256: a block must own its memory");
    const size = memory.byteLength;
    this.send(memory, length);
    const next = this.spare.pop();
    return next !== undefined && next.byteLength === size ? Buffer.from(next) : Buffer.allocUnsafeSlow(size);
  }

  /** Hash a copy of `bytes` after everything handed over before it. */
  update(bytes: Buffer): void {
    const memory = new ArrayBuffer(bytes.length);
    bytes.copy(Buffer.from(memory));
    this.send(memory, bytes.length);
  }

  private send(memory: ArrayBuffer, length: number): void {
    if (this.failure !== null) throw this.failure;
    this.inFlight++;
    this.worker.postMessage({ buffer: memory, length }, [memory]);
  }

  /** Resolves when fewer than MAX_IN_FLIGHT blocks are out. */
  async room(): Promise<void> {
    while (this.inFlight >= MAX_IN_FLIGHT && this.failure === null) await new Promise<void>((resolve) => this.waiters.push(resolve));
    if (this.failure !== null) throw this.failure;
  }

  /** The hex digest of everything handed over; the worker ends. */
  async digest(): Promise<string> {
    if (this.failure !== null) throw this.failure;
    const hex = await new Promise<string>((resolve) => {
      this.answer = resolve;
      this.worker.postMessage("end");
    });
    if (this.failure !== null && hex === "") throw this.failure;
    return hex;
  }

  /** End the worker without a digest (the read failed). */
  stop(): void {
    void this.worker.terminate();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
