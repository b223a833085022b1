// The world a CLI runs in, passed as an argument so tests and the wrapper can supply their own.
import { fstatSync } from "node:fs";
import type { Writable } from "node:stream";
import { PixirError } from "../event/errors.js";
import { streamLineBlocks, type LineBlock, type SplitOptions } from "../lines/codec.js";
import { isPipeOrSocket, LINE_BLOCKS, PipeReader, type LineBlockSource } from "../lines/pipe-read.js";
import type { DirectStdout } from "./direct-stdout.js";

export interface CliIo {
  /** Read it through lineBlocksOf (pipe-read.ts): a process's own stdin reads a pipe without a stream. */
  stdin: AsyncIterable<Buffer>;
  stdout: Writable;
  /** The descriptor behind stdout when it is the process's own: Output writes a pipe or a file by it (direct-stdout.ts). */
  stdoutFd?: number;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Aborted on SIGINT/SIGTERM/SIGHUP: writers roll back and exit 130. */
  signal?: AbortSignal;
  /** stderr is a terminal (progress is shown only then). */
  stderrIsTty?: boolean;
  /** stdout is a terminal this many columns wide; undefined when it is not a terminal (`pixir ls` cuts rows to it). */
  stdoutColumns?: number;
}

let stderrGuarded = false;

/**
 * The process's stderr, made when first used (a `--version` writes nothing there and does not pay for
 * it). It carries diagnostics only: one that has gone away (a closed pipe) must not fail the command or
 * cost its output. A model command's stderr is forwarded there; warnings and hints go there.
 */
function processStderr(): NodeJS.WriteStream {
  if (!stderrGuarded) process.stderr.on("error", () => undefined);
  stderrGuarded = true;
  return process.stderr;
}

/**
 * Whether a descriptor is a terminal, without making process.stdout or process.stderr (which loads
 * node:net for a pipe): only a character device can be one, and node:tty is asked only then.
 */
function isTerminal(fd: number): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return process.getBuiltinModule("node:tty").isatty(fd);
}

export function processIo(signal?: AbortSignal): CliIo {
  return {
    stdin: new ProcessStdin(),
    get stdout() {
      return process.stdout;
    },
    stdoutFd: 1,
    get stderr() {
      return processStderr();
    },
    env: process.env,
    cwd: process.cwd(),
    signal,
    get stderrIsTty() {
      return isTerminal(2);
    },
    get stdoutColumns() {
      return isTerminal(1) ? process.stdout.columns || 80 : undefined;
    },
  };
}

/**
 * The process's stdin, opened only when read: a pipe or a socket is read as line blocks straight from
 * descriptor 0 (PipeReader), anything else (a terminal, a file) through process.stdin.
 */
export class ProcessStdin implements AsyncIterable<Buffer>, LineBlockSource {
  private direct: PipeReader | null = null;
  private stream: NodeJS.ReadStream | null = null;
  /** The descriptor (fork.ts reads a regular file in place by it). */
  readonly fd = 0;

  [LINE_BLOCKS](options: SplitOptions): AsyncIterable<LineBlock> {
    if (this.stream === null && this.direct === null && isPipeOrSocket(0)) {
      this.direct = new PipeReader(0);
      return this.direct.blocks(options);
    }
    return streamLineBlocks(this.readable(), options);
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return this.readable()[Symbol.asyncIterator]();
  }

  /**
   * At the end of a run: a stdin we stopped reading early must not keep the process alive (a pipe's,
   * or a terminal's that a signal interrupted while we waited for a line; a terminal untouched is left
   * alone).
   */
  close(interrupted: boolean): void {
    this.direct?.close();
    if (this.stream !== null && (!this.stream.isTTY || interrupted)) this.stream.destroy();
  }

  private readable(): NodeJS.ReadStream {
    if (this.direct !== null) throw new Error("ProcessStdin: stdin is already being read as a pipe");
    return (this.stream ??= process.stdin);
  }
}

/**
 * Writes to stdout with backpressure; an EPIPE (the reader went away, e.g. `| head`) closes the
 * output quietly and later writes become no-ops.
 */
export class Output {
  closed = false;
  private failure: PixirError | undefined;
  private made: Writable | undefined;

  /**
   * `target` is the stream, or what makes it when it is first written to: `direct` (the process's own
   * stdout by its descriptor) writes first, and a run that never outgrows it never makes the stream.
   * `signal` ends a wait for a reader to drain the pipe: an interrupted run must not wait on it.
   */
  constructor(
    private readonly target: Writable | (() => Writable),
    private readonly signal?: AbortSignal,
    private direct: DirectStdout | null = null,
  ) {}

  private get stream(): Writable {
    if (this.made === undefined) {
      const stream = typeof this.target === "function" ? this.target() : this.target;
      stream.on("error", (err: NodeJS.ErrnoException) => this.fail(err));
      this.made = stream;
    }
    return this.made;
  }

  private fail(err: NodeJS.ErrnoException): void {
    if (err.code === "EPIPE" || err.code === "ERR_STREAM_DESTROYED") this.closed = true;
    else this.failure ??= outputFailed(err);
  }

  /** A write failed for another reason than a reader gone (a full disk, `>/dev/full`): nothing more goes out. */
  get failed(): boolean {
    return this.failure !== undefined;
  }

  /**
   * Wait until what was written has reached the stream's target (a file or device is written in the
   * background of the call that accepted it) and throw if it failed: the last step of a command.
   */
  async finish(): Promise<void> {
    if (this.direct !== null && this.made === undefined) {
      if (this.failure) throw this.failure;
      return;
    }
    if (!this.closed && !this.failure && !this.stream.destroyed) await new Promise<void>((resolve) => this.stream.write("", () => resolve()));
    // The error event of a failed write comes on a later tick than its callback.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.failure) throw this.failure;
  }

  /** Resolves when the chunk is accepted; waits for `drain` when the stream asks us to. */
  async write(chunk: string | Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.closed || chunk.length === 0) return;
    if (this.direct !== null) {
      const rest = this.writeDirect(this.direct, typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);
      if (rest === null) return;
      this.direct = null; // the stream from here on, after every byte written directly
      chunk = rest;
    }
    if (this.stream.write(chunk)) return;
    const signal = this.signal;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("error", done);
        this.stream.off("close", done);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("error", done);
      this.stream.on("close", done);
      signal?.addEventListener("abort", done);
    });
    if (this.failure) throw this.failure;
    signal?.throwIfAborted();
  }

  /** What `direct` left for the stream; null when all of it went out, or when the reader has gone (EPIPE). */
  private writeDirect(direct: DirectStdout, bytes: Buffer): Buffer | null {
    try {
      return direct.write(bytes);
    } catch (err) {
      this.fail(err as NodeJS.ErrnoException);
      if (this.failure) throw this.failure;
      return null;
    }
  }
}

function outputFailed(err: NodeJS.ErrnoException): PixirError {
  return new PixirError("log_write_failed", "could not write to stdout", {
    reason: err.code ? err.code.toLowerCase() : "io_error",
    path: "-",
    next_actions: ["check where stdout goes: a full disk, a file-size limit, a closed terminal"],
  });
}

/** Batches many small lines into larger writes; a pipe write per Event would dominate the cost. */
export class LineBuffer {
  private staging: Buffer;
  private size = 0;

  constructor(
    private readonly out: Output,
    private readonly limit = 128 * 1024,
  ) {
    this.staging = Buffer.allocUnsafeSlow(limit);
  }

  get closed(): boolean {
    return this.out.closed;
  }

  /** Small pieces are copied into a staging buffer (so no subarray pins its parent chunk); big ones go straight through. */
  async push(chunk: string | Buffer): Promise<void> {
    const n = typeof chunk === "string" ? Buffer.byteLength(chunk, "utf8") : chunk.length;
    if (n >= this.limit / 2) {
      await this.flush();
      await this.out.write(chunk);
      return;
    }
    if (this.size + n > this.limit) await this.flush();
    if (typeof chunk === "string") this.staging.write(chunk, this.size, "utf8");
    else chunk.copy(this.staging, this.size);
    this.size += n;
  }

  async flush(): Promise<void> {
    if (this.size === 0) return;
    const full = this.staging.subarray(0, this.size);
    this.staging = Buffer.allocUnsafeSlow(this.limit);
    this.size = 0;
    await this.out.write(full);
  }
}
