// stdin as blocks of whole lines when it is a pipe or a socket: read on the event loop without the
// stream machinery. process.stdin hands over each read as a new 64 KiB Buffer through a Readable and
// an async iterator, which costs pixir-summarize and pixir-log write a third of a second of CPU per
// GiB on top of their own work; here libuv reads into one reused buffer (net.Socket `onread`) and the
// bytes are copied once, into the block the reader checks (docs/performance.md).
import type net from "node:net";
import { fstatSync } from "node:fs";
import { nodeNet } from "../event/lazy-builtins.js";
import { lineTooLong, LINE_BLOCK, MAX_LINE_BYTES, newlinesBefore, streamLineBlocks, type LineBlock, type SplitOptions } from "./codec.js";

/**
 * The most one read takes. Larger reads make larger blocks, which a stage then holds on to longer: at
 * 1 MiB, pixir-summarize in the pipeline took 10 MiB more memory, for no gain in time.
 */
const READ_BYTES = 256 * 1024;
const NEWLINE = 0x0a;

/**
 * A stdin that can give its bytes as line blocks itself (see ProcessStdin in cli/io.ts); every reader
 * of stdin asks through lineBlocksOf, so a plain stream or an async iterable works everywhere too.
 */
export const LINE_BLOCKS: unique symbol = Symbol.for("pixir.lineBlocks");
export interface LineBlockSource {
  [LINE_BLOCKS](options: SplitOptions): AsyncIterable<LineBlock>;
}

/** `input` as blocks of whole lines: by its own reader when it has one, else by streamLineBlocks. */
export function lineBlocksOf(input: AsyncIterable<Buffer | string>, options: SplitOptions): AsyncIterable<LineBlock> {
  const own = (input as Partial<LineBlockSource>)[LINE_BLOCKS];
  return typeof own === "function" ? own.call(input, options) : streamLineBlocks(input, options);
}

/** Whether descriptor `fd` is a pipe or a socket (what PipeReader reads). */
export function isPipeOrSocket(fd: number): boolean {
  try {
    const st = fstatSync(fd);
    return st.isFIFO() || st.isSocket();
  } catch {
    return false;
  }
}

/**
 * The bytes of the pipe or socket `fd` as streamLineBlocks gives a stream's: blocks of whole lines in one
 * buffer, each valid until the next is asked for, blank lines kept, a line longer than the limit
 * refused, a final line without `\n` last as a `tail` block. Whole lines go on as soon as a read
 * completes them. Reading stops, and the descriptor is closed (libuv leaves 0, 1 and 2 open), when the
 * blocks end, the reader stops early, or close() is called (which also ends a wait for input: an async
 * generator cannot be returned from while it waits).
 */
export class PipeReader {
  private socket: net.Socket | null = null;
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(private readonly fd: number) {}

  close(): void {
    this.closed = true;
    this.socket?.destroy();
    this.socket = null;
    this.woken();
  }

  private woken(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  async *blocks(options: SplitOptions): AsyncGenerator<LineBlock> {
    const max = options.maxLineBytes ?? MAX_LINE_BYTES;
    let buf: Buffer = Buffer.allocUnsafe(Math.min(LINE_BLOCK, max + 1) + READ_BYTES);
    let have = 0;
    /** Lines in the blocks handed out so far: the number of a line too long to take. */
    let linesBefore = 0;
    let ended = false;
    let failure: Error | null = null;
    let paused = false;
    const landing = Buffer.allocUnsafe(READ_BYTES);
    if (this.closed) return;
    // `onread` is a documented option of net.Socket (Node ≥ 12) that @types/node lists only for connect().
    const socket = new (nodeNet().Socket)({
      fd: this.fd,
      readable: true,
      writable: false,
      onread: {
        // Every read lands at the start of `landing`; it is copied behind what the block holds.
        buffer: landing,
        callback: (n: number) => {
          if (have + n > buf.length) buf = grown(buf, have, have + n);
          landing.copy(buf, have, 0, n);
          have += n;
          this.woken();
          // Stop reading once another read might not fit; the reader resumes when it has made room.
          if (have > buf.length - READ_BYTES) {
            paused = true;
            return false;
          }
          return true;
        },
      },
    } as net.SocketConstructorOpts);
    this.socket = socket;
    socket.on("end", () => {
      ended = true;
      this.woken();
    });
    socket.on("error", (err) => {
      failure = err;
      this.woken();
    });
    /** Bytes at the front already searched for a `\n` without finding one. */
    let searched = 0;
    try {
      for (;;) {
        if (this.closed) return;
        const complete = have > searched && buf.subarray(searched, have).indexOf(NEWLINE) >= 0;
        if (complete) {
          const last = buf.lastIndexOf(NEWLINE, have - 1);
          // The buffer may hold more than the limit (a read lands behind what it holds), so a line past
          // the limit can come whole, with its newline, in one read: refused here as splitLines refuses it.
          if (last > max) {
            const long = firstLineLongerThan(buf, last + 1, max);
            if (long > 0) throw lineTooLong(options.path, linesBefore + long, max);
          }
          yield { bytes: buf, end: last + 1, tail: false };
          linesBefore += newlinesBefore(buf, last + 1);
          buf.copy(buf, 0, last + 1, have);
          have -= last + 1;
          searched = 0;
        } else {
          searched = have;
          if (failure !== null) throw failure;
          if (ended) break;
          // No whole line in the buffer: it must grow to take the rest of this one, up to the limit.
          if (have > max) throw lineTooLong(options.path, linesBefore + 1, max);
          if (have > buf.length - READ_BYTES) buf = grown(buf, have, Math.min(buf.length * 2, max + 1 + READ_BYTES));
          if (!paused) await new Promise<void>((resolve) => (this.wake = resolve));
        }
        if (paused && have <= buf.length - READ_BYTES && !this.closed) {
          paused = false;
          socket.resume();
        }
      }
      if (have > max) throw lineTooLong(options.path, linesBefore + 1, max);
      if (have > 0) yield { bytes: buf, end: have, tail: true };
    } finally {
      this.close();
    }
  }
}

/** The number (from 1) of the first line of `buf[0, end)` longer than `max` bytes, or 0 if none is. */
function firstLineLongerThan(buf: Buffer, end: number, max: number): number {
  let n = 1;
  for (let s = 0; s < end; n++) {
    const e = buf.indexOf(NEWLINE, s);
    if (e - s > max) return n;
    s = e + 1;
  }
  return 0;
}

function grown(buf: Buffer, have: number, size: number): Buffer {
  const bigger = Buffer.allocUnsafe(Math.max(size, have));
  buf.copy(bigger, 0, 0, have);
  return bigger;
}
