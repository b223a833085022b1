// BlockWriter's background mode writes blocks out of order at their offsets; the file must still be the
// bytes in the order they were added, and a failed write must surface from drain().
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BlockWriter } from "../src/log-write.js";

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("BlockWriter", () => {
  it("writes every byte in order when many blocks are in flight at once", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pixir-bw-"));
    const file = path.join(dir, "out");
    const fd = openSync(file, "wx");
    const w = new BlockWriter(fd, { background: true });
    const expected: Buffer[] = [];
    for (let i = 0; i < 20_000; i++) {
      // Text and bytes, small and larger than a block, so every path of add() is taken.
      const part = i % 997 === 0 ? Buffer.alloc(600_000, i % 251) : i % 2 === 0 ? `line ${i} é🙂\n` : Buffer.from(`bytes ${i}\n`);
      expected.push(typeof part === "string" ? Buffer.from(part) : part);
      w.add(part);
    }
    await w.drain();
    closeSync(fd);
    const want = Buffer.concat(expected);
    expect(w.bytesWritten).toBe(want.length);
    expect(readFileSync(file).equals(want)).toBe(true);
  });

  it("reports a failed background write from drain()", async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pixir-bw-"));
    const file = path.join(dir, "out");
    closeSync(openSync(file, "wx"));
    const fd = openSync(file, "r"); // writes to a read-only descriptor fail with EBADF
    const w = new BlockWriter(fd, { background: true });
    w.add(Buffer.alloc(300_000, 1));
    await expect(w.drain()).rejects.toMatchObject({ code: "EBADF" });
    await w.settle();
    closeSync(fd);
  });
});
