// PiSourceLines: `pixir import pi` reads each entry's line again where the parse found it; a file that is no
// longer the one parsed (replaced, or cut shorter) stops the import instead of mixing two versions of it.
import { existsSync, mkdtempSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from "node:fs";
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

describe("importPiFiles of a file changed after it was parsed", () => {
  /** A v3 session over 1 MiB (so that progress reports the parse, where the test changes the file). */
  function session(dir: string, word: string): string {
    const lines = [JSON.stringify({ type: "session", version: 3, id: "changed-0001", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" })];
    for (let i = 0; i < 300; i++) {
      lines.push(JSON.stringify({ type: "message", id: `e${i}`, parentId: i === 0 ? null : `e${i - 1}`, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: `${word} ${"x".repeat(4000)}`, timestamp: 1 } }));
    }
    const file = path.join(dir, "s.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    return file;
  }

  for (const how of ["replaced", "changed in place"] as const) {
    it(`stops with invalid_pi_session changed_while_importing when it is ${how}, and writes no Log`, async () => {
      const { importPiFiles } = await import("../../src/interop/pi/import.js");
      const dir = mkdtempSync(path.join(os.tmpdir(), "pi-changed-"));
      const ws = mkdtempSync(path.join(os.tmpdir(), "pi-changed-ws-"));
      const file = session(dir, "first");
      const change = () => {
        if (how === "replaced") {
          const other = session(mkdtempSync(path.join(os.tmpdir(), "pi-changed-")), "first");
          renameSync(other, file);
        } else {
          // Same inode and size, another parent for one entry: the plan's tree no longer matches the line.
          const text = readFileSync(file, "utf8").replace('"id":"e7","parentId":"e6"', '"id":"e7","parentId":"e5"');
          writeFileSync(file, text);
        }
      };
      const run = importPiFiles(ws, {
        files: [{ path: file, display: file }],
        program: "test",
        env: {},
        progress: (text) => {
          if (text.includes("parsed")) change();
        },
      });
      await expect(run).rejects.toMatchObject({ kind: "invalid_pi_session", details: { reason: "unreadable_file", file, changed_while_importing: true } });
      expect(existsSync(path.join(ws, ".pixir", "sessions", "changed-0001.ndjson"))).toBe(false);
    });
  }
});
