// lines/line-bound.ts: the first line of a file longer than the bound, found with a small buffer and
// stopping there (a file no longer than the bound is not read at all).
import { closeSync, mkdtempSync, openSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileLines, overlongLine } from "../../src/lines/line-bound.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-line-bound-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const file = (content: string | Buffer): string => {
  const p = path.join(dir, `f${n++}`);
  writeFileSync(p, content);
  return p;
};

describe("overlongLine", () => {
  it("a line of exactly the bound passes; one byte more is named by its number", () => {
    expect(overlongLine(file("ab\n0123456789\ncd\n"), 10)).toBeNull();
    expect(overlongLine(file("ab\n0123456789X\ncd\n"), 10)).toBe(2);
    expect(overlongLine(file("ab\n\n\ncd\n0123456789X"), 10)).toBe(5);
    // The newline is not part of the line; a final line without one is measured too.
    expect(overlongLine(file("0123456789\n0123456789"), 10)).toBeNull();
  });

  it("finds a line that spans the blocks it is read in (1 MiB) and lines after many short ones", () => {
    const max = 1536 * 1024;
    const short = "x".repeat(99) + "\n";
    const fits = `${short.repeat(20_000)}${"y".repeat(max)}\n${short}`;
    expect(overlongLine(file(fits), max)).toBeNull();
    const over = `${short.repeat(20_000)}${"y".repeat(max + 1)}\n${short}`;
    expect(overlongLine(file(over), max)).toBe(20_001);
  });

  it("remembers a file it passed until its size or time changes", () => {
    const p = file(`${"a".repeat(20)}\n`);
    expect(overlongLine(p, 30)).toBeNull();
    writeFileSync(p, `${"a".repeat(40)}\n`);
    utimesSync(p, new Date(), new Date(Date.now() + 5000));
    expect(overlongLine(p, 30)).toBe(1);
  });
});

/** Every line FileLines gives for `content` with bound `max`, its number, and the pending tail's length; or the line it refused. */
function readAll(content: string, max: number, block?: number): { lines: Array<[number, string]>; tail: number } | { refused: number } {
  const fd = openSync(file(content), "r");
  try {
    const r = new FileLines(fd, (line) => Object.assign(new Error("too long"), { line }), max, block);
    const lines: Array<[number, string]> = [];
    for (let b = r.next(); b !== null; b = r.next()) lines.push([r.line, b.toString("utf8")]);
    return { lines, tail: r.tailBytes };
  } catch (err) {
    return { refused: (err as { line: number }).line };
  } finally {
    closeSync(fd);
  }
}

describe("FileLines", () => {
  it("gives each complete line with its number, blank ones too, and the length of a pending tail", () => {
    expect(readAll("a\n\nbc\ntorn", 10)).toEqual({ lines: [[1, "a"], [2, ""], [3, "bc"]], tail: 4 });
    expect(readAll("a\n", 10)).toEqual({ lines: [[1, "a"]], tail: 0 });
    expect(readAll("", 10)).toEqual({ lines: [], tail: 0 });
    expect(readAll("ab\n0123456789\n", 10)).toEqual({ lines: [[1, "ab"], [2, "0123456789"]], tail: 0 });
    expect(readAll("ab\n0123456789X\n", 10)).toEqual({ refused: 2 });
    // The same with a block of 3 bytes: lines gathered across many blocks.
    expect(readAll("a\n\nbcdefg\ntorn", 10, 3)).toEqual({ lines: [[1, "a"], [2, ""], [3, "bcdefg"]], tail: 4 });
    expect(readAll("ab\n0123456789X\n", 10, 3)).toEqual({ refused: 2 });
  });

  it("gathers lines across its 1 MiB blocks, and refuses one past the bound by its number as it passes", () => {
    const max = 1536 * 1024;
    const long = "y".repeat(max);
    const r = readAll(`s\n${long}\n${"z".repeat(3 << 20)}`, 4 << 20);
    expect("lines" in r && r.lines.map(([n, t]) => [n, t.length])).toEqual([[1, 1], [2, max]]);
    expect("tail" in r && r.tail).toBe(3 << 20);
    expect(readAll(`s\n${long}\n`, max)).toMatchObject({ lines: [[1, "s"], [2, long]] });
    expect(readAll(`s\n${long}y\nnext\n`, max)).toEqual({ refused: 2 });
    // A line with no end past the bound: refused without reading it to its end.
    expect(readAll(`s\n${"q".repeat(3 << 20)}`, max)).toEqual({ refused: 2 });
  });
});
