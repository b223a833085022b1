// The temp file of a new Log written around the page cache (O_DIRECT): a twin of BlockWriter
// (log-write.ts), held to the same bytes by test/store/direct-writer.test.ts.
//
// Why: a buffered write puts every byte in a page-cache page first. On a VM whose free memory goes back to
// the host (a balloon that reports free pages), each new page-cache page is a page the host must fault in:
// writing 1.4 GiB costs some 3 s of CPU there, against 0.1 s written directly (docs/performance.md, "The
// Claude import"). A new Log is read by nobody before its rename, so its pages need not be cached.
//
// O_DIRECT wants the memory, the file offset and the length aligned. The blocks are carved from a
// WebAssembly memory (its pages are the OS's pages, so aligned), every write but the last is a whole
// number of 4 KiB units, and the last is padded with zeros and the file then cut to its length. A file
// system that refuses a direct write (EINVAL), or a short direct write (a full disk), turns the writer
// into a plain one: it goes on through a second descriptor of the same file without O_DIRECT.
import { closeSync, constants as fsConstants, ftruncateSync, openSync, write, writeSync } from "node:fs";

/** Node's WebAssembly.Memory (the library is built without the DOM's types, where it is declared). */
declare const WebAssembly: { Memory: new (size: { initial: number }) => { buffer: ArrayBuffer } };

/** O_DIRECT where the platform has it (Linux), else 0: no direct writes. */
export const O_DIRECT: number = fsConstants.O_DIRECT ?? 0;

/** The alignment of direct writes: the page size, which every block device's logical block divides. */
export const DIRECT_ALIGN = 4096;
const BLOCK_BYTES = 512 * 1024;
const FLUSH_BYTES = 256 * 1024;
/** Blocks of one writer being written on libuv's threads at once; past that, it writes in the foreground. */
const IN_FLIGHT = 3;
/** Aligned blocks a thread has (2 MiB): a writer that finds none free writes its block in the foreground. */
const POOL_BLOCKS = 4;

/** This thread's aligned blocks. */
class AlignedBlocks {
  private free: Buffer[] | null = null;
  take(): Buffer | null {
    if (this.free === null) {
      this.free = [];
      try {
        const memory = Buffer.from(new WebAssembly.Memory({ initial: (POOL_BLOCKS * BLOCK_BYTES) / 65536 }).buffer);
        for (let i = 0; i < POOL_BLOCKS; i++) this.free.push(memory.subarray(i * BLOCK_BYTES, (i + 1) * BLOCK_BYTES));
      } catch {
        // No WebAssembly (node --jitless): every Log is written the plain way.
      }
    }
    return this.free.pop() ?? null;
  }
  give(block: Buffer): void {
    this.free?.push(block);
  }
}

const POOL = new AlignedBlocks();

/** An aligned block for a new DirectBlockWriter, or null: none free (or no O_DIRECT here), write it the plain way. */
export const takeDirectBlock = (): Buffer | null => (O_DIRECT === 0 ? null : POOL.take());

/** A block takeDirectBlock() gave that no writer took (its file could not be opened). */
export const releaseDirectBlock = (block: Buffer): void => POOL.give(block);

const roundUp = (n: number): number => Math.ceil(n / DIRECT_ALIGN) * DIRECT_ALIGN;

/**
 * Collects text and bytes in aligned blocks and writes them to `fd`, a new file opened with O_DIRECT, in
 * aligned writes (the full ones on libuv's threads while the caller goes on). `drain()` writes the tail and
 * reports any failure; `release()` gives the blocks back. The same calls as BlockWriter's in background mode.
 */
export class DirectBlockWriter {
  private block: Buffer;
  private used = 0;
  /** The file offset of block[0]: bytes before it are written or being written. */
  private position = 0;
  private readonly spare: Buffer[] = [];
  private writes = 0;
  private failure: unknown = null;
  private waiters: Array<() => void> = [];
  /** The same file without O_DIRECT, once a direct write was refused. */
  private plainFd: number | null = null;

  /** `block`: from takeDirectBlock(); it and any other block this writer takes go back with release(). */
  constructor(
    private readonly fd: number,
    block: Buffer,
    private readonly options: { fault?: (err: unknown) => unknown } = {},
  ) {
    this.block = block;
  }

  get bytesWritten(): number {
    return this.position + this.used;
  }

  add(part: string | Buffer): void {
    if (typeof part !== "string") this.addBytes(part);
    // A UTF-16 unit takes at most 3 bytes in UTF-8; after a flush less than DIRECT_ALIGN bytes are left.
    else if (part.length * 3 <= this.block.length - this.used) this.used += this.block.write(part, this.used, "utf8");
    else if (part.length * 3 <= this.block.length - DIRECT_ALIGN) {
      this.flush();
      this.used += this.block.write(part, this.used, "utf8");
    } else this.addBytes(Buffer.from(part, "utf8"));
    if (this.used >= FLUSH_BYTES) this.flush();
  }

  /** A handed-over block is copied (its memory is not aligned) and given back at once. */
  addOwned(block: Buffer, written?: (block: Buffer) => void): void {
    this.add(block);
    written?.(block);
  }

  async room(): Promise<void> {}

  /** Write the tail, wait for every write, and rethrow the first failure. */
  async drain(): Promise<void> {
    this.flush();
    await this.settle();
    if (this.failure === null && this.used > 0) {
      try {
        this.writeTail();
      } catch (err) {
        this.failure = err;
      }
    }
    if (this.failure !== null) throw this.options.fault ? this.options.fault(this.failure) : this.failure;
  }

  async settle(): Promise<void> {
    while (this.writes > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Give the blocks back and close the plain descriptor; call it once settled, and use the writer no more. */
  release(): void {
    if (this.writes > 0) return;
    for (const b of [this.block, ...this.spare]) POOL.give(b);
    this.spare.length = 0;
    this.used = 0;
    if (this.plainFd !== null) closeSync(this.plainFd);
    this.plainFd = null;
  }

  private addBytes(bytes: Buffer): void {
    for (let at = 0; at < bytes.length; ) {
      if (this.used === this.block.length) this.flush();
      const n = bytes.copy(this.block, this.used, at);
      this.used += n;
      at += n;
    }
  }

  /** Write the block's whole 4 KiB units; the rest moves to the start of the next block. */
  private flush(): void {
    const whole = this.used - (this.used % DIRECT_ALIGN);
    if (whole === 0) return;
    const block = this.block;
    const at = this.position;
    const next = this.writes < IN_FLIGHT && this.failure === null ? (this.spare.pop() ?? POOL.take()) : null;
    if (next === null) {
      this.writeNow(block, whole, at);
      block.copy(block, 0, whole, this.used);
    } else {
      block.copy(next, 0, whole, this.used);
      this.block = next;
      this.writeBehind(block, whole, at);
    }
    this.position += whole;
    this.used -= whole;
  }

  /** The last bytes: padded to a whole unit for a direct write, then the file is cut to its length. */
  private writeTail(): void {
    const length = this.plainFd === null ? roundUp(this.used) : this.used;
    this.block.fill(0, this.used, length);
    this.writeNow(this.block, length, this.position);
    if (length !== this.used) ftruncateSync(this.fd, this.position + this.used);
    this.position += this.used;
    this.used = 0;
  }

  private writeNow(block: Buffer, length: number, position: number): void {
    try {
      for (let off = 0; off < length; ) {
        const fd = this.plainFd ?? this.fd;
        try {
          off += writeSync(fd, block, off, length - off, position + off);
        } catch (err) {
          if (!this.fallBack(err, fd)) throw err;
        }
      }
    } catch (err) {
      throw this.options.fault ? this.options.fault(err) : err;
    }
  }

  private writeBehind(block: Buffer, length: number, position: number): void {
    this.writes++;
    const done = (err: unknown): void => {
      if (err && this.failure === null) this.failure = err;
      this.spare.push(block);
      this.writes--;
      const waiters = this.waiters;
      this.waiters = [];
      for (const w of waiters) w();
    };
    const from = (off: number): void => {
      const fd = this.plainFd ?? this.fd;
      write(fd, block, off, length - off, position + off, (err, n) => {
        if (err && this.fallBack(err, fd)) from(off);
        else if (err) done(err);
        else if (off + n < length) from(off + n);
        else done(null);
      });
    };
    from(0);
  }

  /**
   * A direct write the file system refused (EINVAL: it takes no direct writes, or wants another alignment,
   * or the offset is no longer aligned after a short write) goes again through a plain descriptor.
   */
  private fallBack(err: unknown, fd: number): boolean {
    if (fd !== this.fd || (err as NodeJS.ErrnoException).code !== "EINVAL") return false;
    if (this.plainFd === null) {
      try {
        this.plainFd = openSync(`/proc/self/fd/${this.fd}`, fsConstants.O_WRONLY);
      } catch {
        return false;
      }
    }
    return true;
  }
}
