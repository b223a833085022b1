// The process's own stdout written by its descriptor, without process.stdout, while it is a pipe, a socket
// or a file, for its first DIRECT_BYTES; process.stdout takes over after that, or at once where the
// descriptor was set non-blocking and a write would wait (EAGAIN). Making process.stdout for a pipe loads
// node:net and the stream modules: about 4 ms of a search, whose answer is a few KB (docs/performance.md,
// "Round 12"). The bound keeps the stream's ways where they matter: 32 KiB fit in an empty pipe (64 KiB) or
// socket, so a reader that stops reading finds the process waiting in the stream, whose wait a signal ends
// (docs/cli-contract.md, "A signal while stdout waits for its reader"), not in a write no signal ends.
import { fstatSync, writeSync } from "node:fs";

const DIRECT_BYTES = 32 * 1024;

export class DirectStdout {
  private sent = 0;

  private constructor(private readonly fd: number) {}

  /** For a pipe, a socket or a file; null for a terminal or a device, which process.stdout writes. */
  static open(fd: number): DirectStdout | null {
    try {
      const st = fstatSync(fd);
      return st.isFIFO() || st.isSocket() || st.isFile() ? new DirectStdout(fd) : null;
    } catch {
      return null;
    }
  }

  /**
   * Writes `bytes` whole and returns null, or returns what is left for the stream to write (past
   * DIRECT_BYTES, or at EAGAIN). Throws the write's error (EPIPE included).
   */
  write(bytes: Buffer): Buffer | null {
    let at = 0;
    while (at < bytes.length) {
      const room = DIRECT_BYTES - this.sent;
      if (room <= 0) return bytes.subarray(at);
      let n: number;
      try {
        n = writeSync(this.fd, bytes, at, Math.min(room, bytes.length - at));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") return bytes.subarray(at);
        throw err;
      }
      at += n;
      this.sent += n;
    }
    return null;
  }
}
