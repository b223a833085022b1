// store/stream-file.ts: an export's bytes as a stream of chunks, batched, compared with the file already at
// its target (stopping at the first difference, never reading it whole), and written whole or not at all.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { batchedBytes, compareWithFile, sameAsFile, writeChunksAtomically } from "../../src/store/stream-file.js";

const dir = (): string => mkdtempSync(path.join(os.tmpdir(), "pixir-stream-file-"));
const collect = async (chunks: AsyncIterable<Buffer>): Promise<Buffer[]> => {
  const out: Buffer[] = [];
  for await (const c of chunks) out.push(c);
  return out;
};

/** Chunks that record how many were taken, so a test sees where a reader stopped. */
function counted(pieces: string[]): { chunks: AsyncGenerator<string>; taken: () => number } {
  let taken = 0;
  async function* gen(): AsyncGenerator<string> {
    for (const p of pieces) {
      taken++;
      yield p;
    }
  }
  return { chunks: gen(), taken: () => taken };
}

const LINES = Array.from({ length: 300 }, (_, i) => `${"é".repeat(i % 13)}line ${i}\n`);
const TEXT = LINES.join("");

describe("batchedBytes", () => {
  it("joins the pieces in order, in buffers of at least the size asked but the last", async () => {
    for (const size of [1, 7, 100, 1 << 20]) {
      const batches = await collect(batchedBytes(LINES, size));
      expect(Buffer.concat(batches).toString("utf8")).toBe(TEXT);
      for (const b of batches.slice(0, -1)) expect(b.length).toBeGreaterThanOrEqual(size);
    }
    expect(await collect(batchedBytes([]))).toEqual([]);
    expect(await collect(batchedBytes([Buffer.alloc(0), ""]))).toEqual([]);
  });
});

describe("sameAsFile", () => {
  it("is true only for the same bytes: not for a prefix, a longer stream, one byte changed, a missing file or a directory", async () => {
    const d = dir();
    const file = path.join(d, "f.jsonl");
    writeFileSync(file, TEXT);
    expect(await sameAsFile(file, LINES)).toBe(true);
    expect(await sameAsFile(file, batchedBytes(LINES, 64))).toBe(true);
    expect(await sameAsFile(file, LINES.slice(0, -1))).toBe(false);
    expect(await sameAsFile(file, [...LINES, "x"])).toBe(false);
    expect(await sameAsFile(file, [...LINES.slice(0, -1), LINES.at(-1)!.replace("line", "lime")])).toBe(false);
    expect(await sameAsFile(path.join(d, "missing"), LINES)).toBe(false);
    mkdirSync(path.join(d, "sub"));
    expect(await sameAsFile(path.join(d, "sub"), LINES)).toBe(false);
    writeFileSync(path.join(d, "empty"), "");
    expect(await sameAsFile(path.join(d, "empty"), [])).toBe(true);
  });

  it("stops taking chunks at the first difference", async () => {
    const d = dir();
    const file = path.join(d, "f.jsonl");
    writeFileSync(file, TEXT.replace("line 10\n", "line X\n"));
    const c = counted(LINES);
    expect(await sameAsFile(file, c.chunks)).toBe(false);
    expect(c.taken()).toBe(11);
  });

  it("lets an error of the chunks through (it is not a difference)", async () => {
    const d = dir();
    writeFileSync(path.join(d, "f"), TEXT);
    async function* failing(): AsyncGenerator<string> {
      yield LINES[0]!;
      throw new Error("the Log changed");
    }
    await expect(sameAsFile(path.join(d, "f"), failing())).rejects.toThrow("the Log changed");
  });
});

describe("compareWithFile", () => {
  it("tells nothing there (before taking a chunk) from the same bytes and from anything else", async () => {
    const d = dir();
    const file = path.join(d, "f.jsonl");
    const c = counted(LINES);
    expect(await compareWithFile(file, c.chunks)).toBe("absent");
    expect(c.taken()).toBe(0);
    writeFileSync(file, TEXT);
    expect(await compareWithFile(file, LINES)).toBe("same");
    expect(await compareWithFile(file, LINES.slice(1))).toBe("different");
    expect(await compareWithFile(file, [...LINES, "x"])).toBe("different");
    // A directory is something there, not nothing: an export never writes over it.
    mkdirSync(path.join(d, "sub"));
    expect(await compareWithFile(path.join(d, "sub"), LINES)).toBe("different");
    expect(await compareWithFile(path.join(d, "no-dir", "f"), LINES)).toBe("absent");
  });
});

describe("writeChunksAtomically", () => {
  const fault = (err: unknown, operation: string) => new Error(`${operation}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);

  it("writes the chunks, replacing the target, with the mode asked and no temp file left", async () => {
    const d = dir();
    const target = path.join(d, "out.jsonl");
    writeFileSync(target, "old\n");
    expect(await writeChunksAtomically(target, batchedBytes(LINES, 100), { mode: 0o600, fault })).toBe(Buffer.byteLength(TEXT));
    expect(readFileSync(target, "utf8")).toBe(TEXT);
    expect(readdirSync(d)).toEqual(["out.jsonl"]);
  });

  it("a failure of the chunks midway leaves the old file as it was and no temp file", async () => {
    const d = dir();
    const target = path.join(d, "out.jsonl");
    writeFileSync(target, "old\n");
    async function* failing(): AsyncGenerator<string> {
      yield* LINES.slice(0, 100);
      throw new Error("killed midway");
    }
    await expect(writeChunksAtomically(target, failing(), { mode: 0o600, fault })).rejects.toThrow("killed midway");
    expect(readFileSync(target, "utf8")).toBe("old\n");
    expect(readdirSync(d)).toEqual(["out.jsonl"]);
  });

  it("a target it cannot open a temp file beside is the fault of the open, and the chunks are not taken", async () => {
    const d = dir();
    const c = counted(LINES);
    await expect(writeChunksAtomically(path.join(d, "missing", "out.jsonl"), c.chunks, { mode: 0o600, fault })).rejects.toThrow(/^open: ENOENT/);
    expect(c.taken()).toBe(0);
    expect(readdirSync(d)).toEqual([]);
  });

  it("with parents, makes the missing directories 0700, and takes them back when the write fails", async () => {
    const d = dir();
    const target = path.join(d, "2026", "03", "01", "out.jsonl");
    expect(await writeChunksAtomically(target, LINES, { mode: 0o644, parents: true, fault })).toBe(Buffer.byteLength(TEXT));
    expect(readFileSync(target, "utf8")).toBe(TEXT);
    for (const sub of ["2026", "2026/03", "2026/03/01"]) expect(statSync(path.join(d, sub)).mode & 0o777).toBe(0o700);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    async function* failing(): AsyncGenerator<string> {
      yield LINES[0]!;
      throw new Error("killed midway");
    }
    const other = path.join(d, "2026", "04", "02", "out.jsonl");
    await expect(writeChunksAtomically(other, failing(), { mode: 0o644, parents: true, fault })).rejects.toThrow("killed midway");
    // Only what this write made is taken back: 2026/ held a file before it.
    expect(readdirSync(path.join(d, "2026"))).toEqual(["03"]);
  });

  it("with parents, a directory it cannot make is the fault of the mkdir, the chunks not taken, and nothing is left", async () => {
    const d = dir();
    writeFileSync(path.join(d, "file"), "x");
    const c = counted(LINES);
    await expect(writeChunksAtomically(path.join(d, "file", "a", "out"), c.chunks, { mode: 0o644, parents: true, fault })).rejects.toThrow(/^mkdir: ENOTDIR/);
    expect(c.taken()).toBe(0);
    expect(readdirSync(d)).toEqual(["file"]);
  });
});
