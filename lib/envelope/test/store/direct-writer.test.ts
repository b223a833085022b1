// DirectBlockWriter (store/direct-writer.ts) is a twin of BlockWriter: whatever is added, the file is the
// same bytes, in order and of the same length; and a file system that refuses direct writes, a file that
// fills up, or a failed write are met as BlockWriter meets them.
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { DirectBlockWriter, O_DIRECT, takeDirectBlock } from "../../src/store/direct-writer.js";
import { BlockWriter } from "../../src/store/log-write.js";

let dir = "";
afterEach(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
  dir = "";
});
let files = 0;
const newFile = (direct: boolean): { file: string; fd: number } => {
  dir ||= mkdtempSync(path.join(os.tmpdir(), "pixir-direct-"));
  const file = path.join(dir, `out-${files++}`);
  return { file, fd: openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (direct ? O_DIRECT : 0), 0o644) };
};

/** Parts of every kind add() takes: short and long text (multi-byte too), bytes small and larger than a block. */
const part = fc.oneof(
  fc.string({ maxLength: 300 }).map((s) => `${s}\n`),
  fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => `${s.repeat(7)}é🙂\n`),
  fc.integer({ min: 0, max: 5000 }).map((n) => Buffer.alloc(n, n % 251)),
  fc.integer({ min: 100_000, max: 1_300_000 }).map((n) => (n % 2 === 0 ? Buffer.alloc(n, 65 + (n % 26)) : "x".repeat(n / 3) + "\n")),
);

/** The last direct writer went on through a plain descriptor. */
let fellBack = false;

async function written(writer: "plain" | "direct", parts: Array<string | Buffer>, block?: Buffer): Promise<Buffer> {
  const { file, fd } = newFile(writer === "direct");
  const w = writer === "direct" ? new DirectBlockWriter(fd, block ?? takeDirectBlock()!) : new BlockWriter(fd, { background: true });
  for (const p of parts) w.add(p);
  await w.drain();
  await w.settle();
  fellBack = ((w as unknown as { plainFd?: number | null }).plainFd ?? null) !== null;
  w.release();
  expect(w.bytesWritten).toBe(Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p) : p))).length);
  closeSync(fd);
  return readFileSync(file);
}

describe.runIf(O_DIRECT !== 0)("DirectBlockWriter, BlockWriter's twin", () => {
  it("writes the bytes BlockWriter writes, for any parts", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(part, { maxLength: 40 }), async (parts) => {
        const direct = await written("direct", parts);
        expect(fellBack).toBe(false);
        expect(direct.equals(await written("plain", parts))).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it("goes on without O_DIRECT when a direct write is refused (memory that is not aligned), with the same bytes", async () => {
    const parts = ["a line\n", Buffer.alloc(700_000, 7), "é🙂".repeat(100_000), "\n", Buffer.alloc(12_345, 9)];
    // A plain Buffer is not 4 KiB-aligned: the kernel refuses it with EINVAL, as a file system without O_DIRECT would.
    const unaligned = Buffer.allocUnsafeSlow(512 * 1024 + 16).subarray(16);
    const direct = await written("direct", parts, unaligned);
    expect(fellBack).toBe(true);
    expect(direct.equals(await written("plain", parts))).toBe(true);
  });

  it("reports a failed write from drain(), named by the fault it is given", async () => {
    const { file, fd } = newFile(false);
    closeSync(fd);
    const ro = openSync(file, "r"); // writes to a read-only descriptor fail with EBADF
    const w = new DirectBlockWriter(ro, takeDirectBlock()!, { fault: (err) => new Error(`named: ${(err as NodeJS.ErrnoException).code}`) });
    w.add(Buffer.alloc(300_000, 1));
    await expect(w.drain()).rejects.toThrow("named: EBADF");
    await w.settle();
    w.release();
    closeSync(ro);
  });
});
