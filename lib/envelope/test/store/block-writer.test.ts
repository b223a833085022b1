// BlockWriter's background mode writes blocks out of order at their offsets; the file must still be the
// bytes in the order they were added, and a failed write must surface from drain().
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BlockWriter } from "../../src/store/log-write.js";

let dir = "";
afterEach(() => {
  if (dir !== "") rmSync(dir, { recursive: true, force: true });
  dir = "";
});

/** A new file in a fresh temp dir (removed after the test), opened for writing: its path and descriptor. */
function newFile(name = "out"): { file: string; fd: number } {
  dir ||= mkdtempSync(path.join(os.tmpdir(), "pixir-bw-"));
  const file = path.join(dir, name);
  return { file, fd: openSync(file, "wx") };
}

/** Drain `w`, close its file, and expect the file to be exactly `parts`, in order. */
async function expectWritten(w: BlockWriter, fd: number, file: string, parts: Buffer[]): Promise<void> {
  await w.drain();
  closeSync(fd);
  const want = Buffer.concat(parts);
  expect(w.bytesWritten).toBe(want.length);
  expect(readFileSync(file).equals(want)).toBe(true);
}

describe("BlockWriter", () => {
  it("writes every byte in order when many blocks are in flight at once", async () => {
    const { file, fd } = newFile();
    const w = new BlockWriter(fd, { background: true });
    const expected: Buffer[] = [];
    for (let i = 0; i < 20_000; i++) {
      // Text and bytes, small and larger than a block, so every path of add() is taken.
      const part = i % 997 === 0 ? Buffer.alloc(600_000, i % 251) : i % 2 === 0 ? `line ${i} é🙂\n` : Buffer.from(`bytes ${i}\n`);
      expected.push(typeof part === "string" ? Buffer.from(part) : part);
      w.add(part);
    }
    await expectWritten(w, fd, file, expected);
  });

  it("writes handed-over blocks as they are, in order with what was added around them, and waits for room", async () => {
    const { file, fd } = newFile();
    const w = new BlockWriter(fd, { background: true });
    const expected: Buffer[] = [];
    let waited = 0;
    const given = new Set<Buffer>();
    const back: Buffer[] = [];
    for (let i = 0; i < 400; i++) {
      // Owned blocks large and small (a small one is copied), between lines added the usual way.
      const owned = Buffer.alloc(i % 7 === 0 ? 1000 : 100_000 + ((i * 7919) % 300_000), i % 251);
      const inFlight = () => (w as unknown as { writes: number }).writes;
      const before = inFlight();
      await w.room();
      // Writes complete only in I/O callbacks: fewer in flight now means room() waited for some.
      if (inFlight() < before) waited++;
      expect(inFlight()).toBeLessThan(8);
      given.add(owned);
      const at = expected.reduce((n, b) => n + b.length, 0);
      w.addOwned(owned, (b) => {
        // Given back once the caller may fill it again: a small block at once (it was copied), a large
        // one only when its bytes are in the file.
        const onDisk = Buffer.alloc(b.length);
        const rd = openSync(file, "r");
        readSync(rd, onDisk, 0, b.length, at);
        closeSync(rd);
        if (b.length < 64 * 1024 || onDisk.equals(b)) back.push(b);
      });
      expected.push(owned);
      const line = Buffer.from(`line ${i}\n`);
      w.add(line);
      expected.push(line);
    }
    await expectWritten(w, fd, file, expected);
    expect(waited).toBeGreaterThan(0); // the limit was reached, and room() waited for it
    // Every block handed over came back once, and only after it was written.
    expect(back).toHaveLength(400);
    expect(new Set(back)).toEqual(given);
  });

  it("reports a failed background write from drain()", async () => {
    const created = newFile();
    closeSync(created.fd);
    const fd = openSync(created.file, "r"); // writes to a read-only descriptor fail with EBADF
    const w = new BlockWriter(fd, { background: true });
    w.add(Buffer.alloc(300_000, 1));
    await expect(w.drain()).rejects.toMatchObject({ code: "EBADF" });
    await w.settle();
    closeSync(fd);
  });

  it("ready() keeps a paced producer's thread off the disk: every block is written in the background", async () => {
    const { file, fd } = newFile();
    const w = new BlockWriter(fd, { background: true, paced: true });
    let foreground = 0;
    const internals = w as unknown as { writeAll: (b: Buffer) => void };
    const writeAll = internals.writeAll.bind(w);
    internals.writeAll = (b: Buffer) => {
      foreground++;
      writeAll(b);
    };
    const expected: Buffer[] = [];
    for (let i = 0; i < 3000; i++) {
      await w.ready();
      // Parts of a few lines, and runs as large as a block of a piped stdin (streamLineBlocks, ~1 MiB).
      const part = Buffer.alloc(i % 50 === 7 ? 1_300_000 : 50_000 + (i % 13) * 1000, i % 251);
      expected.push(part);
      w.add(part);
    }
    await expectWritten(w, fd, file, expected);
    expect(foreground).toBe(0);
  });

  it("asks for write-back of a large file unless writeBack is false (a temp spool)", async () => {
    const most = async (writeBack: boolean | undefined) => {
      const { fd } = newFile(`out-${String(writeBack)}`);
      const w = new BlockWriter(fd, { background: true, writeBack });
      const syncs = () => (w as unknown as { syncs: number }).syncs;
      let seen = 0;
      // Parts smaller than a block, so that they are written in the background (a larger one goes straight out).
      const part = Buffer.alloc(200 * 1024, 7);
      for (let i = 0; i < 360; i++) {
        await w.ready();
        w.add(part);
        seen = Math.max(seen, syncs());
      }
      await w.drain();
      closeSync(fd);
      return seen;
    };
    expect(await most(false)).toBe(0);
    expect(await most(undefined)).toBeGreaterThan(0);
  });
});
