// PiSourceLines: `pixir import pi` reads each entry's line again where the parse found it; a file that is no
// longer the one parsed (replaced, or cut shorter) stops the import instead of mixing two versions of it.
import { mkdtempSync, renameSync, statSync, truncateSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PixirError } from "../../src/event/errors.js";
import { PiSourceLines } from "../../src/interop/pi/source-lines.js";

const changed = () => new PixirError("invalid_pi_session", undefined, { reason: "unreadable_file", changed_while_importing: true });

function fileOf(text: string): { file: string; lines: PiSourceLines } {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "pi-source-")), "s.jsonl");
  writeFileSync(file, text);
  return { file, lines: new PiSourceLines(file, statSync(file).ino, Buffer.byteLength(text), changed) };
}

describe("PiSourceLines", () => {
  it("gives a line by its place, near and far, short and longer than a window", () => {
    const long = "é".repeat(70 * 1024);
    const text = `{"a":1}\n${long}\n{"b":2}`;
    const { lines } = fileOf(text);
    const longAt = Buffer.byteLength('{"a":1}\n');
    const lastAt = longAt + Buffer.byteLength(long) + 1;
    expect(lines.line(lastAt, 7)).toBe('{"b":2}');
    expect(lines.line(0, 7)).toBe('{"a":1}');
    expect(lines.line(longAt, Buffer.byteLength(long))).toBe(long);
    expect(lines.line(lastAt, 7)).toBe('{"b":2}');
  });

  it("refuses a file replaced or cut shorter since it was parsed", () => {
    const { file, lines } = fileOf('{"a":1}\n{"b":2}\n');
    const other = `${file}.new`;
    writeFileSync(other, '{"a":1}\n{"b":2}\n');
    renameSync(other, file);
    expect(() => lines.line(8, 7)).toThrow(PixirError);
    const cut = fileOf('{"a":1}\n{"b":2}\n');
    truncateSync(cut.file, 10);
    expect(() => cut.lines.line(8, 7)).toThrow(/invalid_pi_session|pi session/);
  });
});
