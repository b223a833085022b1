// lines/line-bound.ts: the first line of a file longer than the bound, found with a small buffer and
// stopping there (a file no longer than the bound is not read at all).
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { overlongLine } from "../../src/lines/line-bound.js";

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
