// The world a CLI runs in, passed as an argument so tests and the wrapper can supply their own.
import type { Readable, Writable } from "node:stream";

export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM: writers roll back and exit 130. */
  signal?: AbortSignal;
  /** stderr is a terminal (progress is shown only then). */
  stderrIsTty?: boolean;
}

export function processIo(signal?: AbortSignal): CliIo {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    signal,
    stderrIsTty: Boolean(process.stderr.isTTY),
  };
}

/**
 * Writes to stdout with backpressure; an EPIPE (the reader went away, e.g. `| head`) closes the
 * output quietly and later writes become no-ops.
 */
export class Output {
  closed = false;
  private failure: Error | undefined;

  constructor(private readonly stream: Writable) {
    stream.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") this.closed = true;
      else this.failure = err;
    });
  }

  /** Resolves when the chunk is accepted; waits for `drain` when the stream asks us to. */
  async write(chunk: string | Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.closed || chunk.length === 0) return;
    if (this.stream.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("error", done);
        this.stream.off("close", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("error", done);
      this.stream.on("close", done);
    });
    if (this.failure) throw this.failure;
  }
}

/** Batches many small lines into larger writes; a pipe write per Event would dominate the cost. */
export class LineBuffer {
  private parts: Array<string | Buffer> = [];
  private size = 0;

  constructor(
    private readonly out: Output,
    private readonly limit = 128 * 1024,
  ) {}

  get closed(): boolean {
    return this.out.closed;
  }

  async push(chunk: string | Buffer): Promise<void> {
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.size >= this.limit) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    // A single part (e.g. a file chunk passed through) goes out as it is, without a copy.
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));
    await this.out.write(buf);
  }
}

/**
 * Iterate `source`, stopping with the signal's reason as soon as it aborts (even mid-wait). Each wait
 * gets its own abort listener, removed when the item arrives, so nothing accumulates per item.
 */
export async function* abortable<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  if (signal === undefined) {
    yield* source;
    return;
  }
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      signal.throwIfAborted();
      const next = await new Promise<IteratorResult<T>>((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        it.next().then(
          (r) => {
            signal.removeEventListener("abort", onAbort);
            resolve(r);
          },
          (e) => {
            signal.removeEventListener("abort", onAbort);
            reject(e);
          },
        );
      });
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void it.return?.();
  }
}
