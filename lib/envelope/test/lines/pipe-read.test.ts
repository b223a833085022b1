// pipe-read.ts: stdin read from a pipe straight into line blocks must give exactly the lines the stream
// reader gives (streamLineBlocks, held to splitLines in codec.test.ts), whatever sizes the writer's
// writes have and however long it pauses between them; refuse a line past the limit with its number;
// and stop, closing the pipe, when asked to while it waits.
import { spawn, spawnSync } from "node:child_process";
import { constants, mkdtempSync, openSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PixirError, splitLines } from "../../src/index.js";
import { PipeReader } from "../../src/lines/pipe-read.js";

/** A FIFO open for reading, and a child process that writes `file` into it in the given pieces. */
function fifoFed(content: Buffer, pieces: number[], pauseMs: number): { fd: number; done: Promise<void> } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-fifo-"));
  const fifo = path.join(dir, "in");
  expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
  const file = path.join(dir, "content");
  writeFileSync(file, content);
  // Opened without blocking: no writer has opened it yet.
  const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = `
    const fs = require("fs");
    const data = fs.readFileSync(${JSON.stringify(file)});
    const pieces = ${JSON.stringify(pieces)};
    const out = fs.openSync(${JSON.stringify(fifo)}, "w");
    let at = 0, k = 0;
    const step = () => {
      if (at >= data.length) { fs.closeSync(out); return; }
      const n = Math.min(pieces[k++ % pieces.length], data.length - at);
      let w = 0; while (w < n) w += fs.writeSync(out, data, at + w, n - w);
      at += n;
      setTimeout(step, ${pauseMs});
    };
    step();`;
  const child = spawn(process.execPath, ["-e", writer], { stdio: "ignore" });
  return { fd, done: new Promise((resolve) => child.on("exit", () => resolve())) };
}

/** The lines of the blocks, as splitLines gives them (number, bytes, terminated). */
async function linesOf(blocks: AsyncIterable<{ bytes: Buffer; end: number; tail: boolean }>): Promise<Array<[number, string, boolean]>> {
  const out: Array<[number, string, boolean]> = [];
  let lineNo = 0;
  for await (const block of blocks) {
    if (block.tail) {
      out.push([++lineNo, block.bytes.toString("utf8", 0, block.end), false]);
      continue;
    }
    for (let s = 0; s < block.end; ) {
      const e = block.bytes.indexOf(0x0a, s);
      lineNo++;
      if (e > s) out.push([lineNo, block.bytes.toString("utf8", s, e), true]);
      s = e + 1;
    }
  }
  return out;
}

async function expectedLines(content: Buffer): Promise<Array<[number, string, boolean]>> {
  const out: Array<[number, string, boolean]> = [];
  async function* once() {
    yield content;
  }
  for await (const raw of splitLines(once(), { path: "-" })) out.push([raw.lineNo, raw.bytes.toString("utf8"), raw.terminated]);
  return out;
}

/** Lines of many lengths (one of 3.6 MB, longer than a block), blank ones and multi-byte characters among them. */
function sample(lines: number, unterminated = false): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < lines; i++) parts.push(i % 97 === 5 ? "" : `{"n":${i},"text":"${"é✓x".repeat(i === 1234 ? 600_000 : (i * 7919) % 300)}"}`);
  return Buffer.from(parts.join("\n") + (unterminated ? "" : "\n"));
}

describe("PipeReader", () => {
  for (const [name, pieces, pause, unterminated] of [
    ["one large write", [64 << 20], 0, false],
    ["small odd pieces, no pause", [1, 7, 4096, 13, 65537], 0, false],
    ["pieces with pauses, and a final line without its newline", [200_000, 3, 700_001], 2, true],
  ] as const) {
    it(`gives splitLines' lines: ${name}`, async () => {
      const content = sample(30_000, unterminated);
      const { fd, done } = fifoFed(content, [...pieces], pause);
      const got = await linesOf(new PipeReader(fd).blocks({ path: "-" }));
      await done;
      expect(got).toEqual(await expectedLines(content));
    }, 60_000);
  }

  // In pieces the reader takes one by one, and in one write that brings the long line whole, with its
  // newline, into one read (as a writer that runs ahead of a busy reader does).
  for (const [name, pieces] of [["in pieces", [1000]], ["in one write", [1 << 20]]] as const) {
    it(`refuses a line past the limit, naming its line number: ${name}`, async () => {
      const content = Buffer.from(`{"a":1}\n\n{"b":2}\n${"x".repeat(5000)}\n{"c":3}\n`);
      const { fd, done } = fifoFed(content, [...pieces], 1);
      const err = await linesOf(new PipeReader(fd).blocks({ path: "-", maxLineBytes: 4096 })).catch((e: unknown) => e);
      await done;
      expect(err).toBeInstanceOf(PixirError);
      expect((err as PixirError).details).toMatchObject({ reason: "line_too_long", line: 4 });
    });
  }

  it("close() ends a wait for input: the reader finishes and the pipe is closed", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-fifo-"));
    const fifo = path.join(dir, "in");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const fd = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    // A writer that opens the FIFO and then writes nothing.
    const writer = spawn(process.execPath, ["-e", `require("fs").openSync(${JSON.stringify(fifo)}, "w"); setTimeout(() => {}, 10000)`], { stdio: "ignore" });
    const reader = new PipeReader(fd);
    const it = reader.blocks({ path: "-" })[Symbol.asyncIterator]();
    const next = it.next();
    await new Promise((r) => setTimeout(r, 200));
    reader.close();
    expect(await next).toEqual({ done: true, value: undefined });
    writer.kill();
  });
});
