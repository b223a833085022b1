// pixir import pi keeps of each entry only its place in the file (offset, length) and parses its line again
// when its Events are made, and keeps each planned Log as a digest, making its lines again to write it
// (issue 38: memory). Lines of odd lengths, a line of 2.5 MiB, a malformed and a blank line just after it, no
// final newline, non-ASCII text: every entry must come back whole from its place; a Log of more than 1 MiB is
// compared with the disk by its digest.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { logFile, tempDir } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";
import { importedEvents } from "../support/pi.js";

const importPi = (ws: string, ...args: string[]) => run("pixir", ["import", "pi", ...args, "--json"], { cwd: ws });

const HEADER_ID = "blocks-0001";
const MiB = 1024 * 1024;

/** A v3 file of user messages whose lines fall across 1 MiB blocks; returns the file and its entries' texts in order. */
function blockFile(): { file: string; texts: Map<string, string>; brokenLine: number } {
  const lines = [JSON.stringify({ type: "session", version: 3, id: HEADER_ID, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" })];
  const texts = new Map<string, string>();
  let parent: string | null = null;
  let brokenLine = 0;
  const add = (text: string) => {
    const id = `e${texts.size}`;
    const ts = `2026-01-01T00:00:${String(texts.size % 60).padStart(2, "0")}.000Z`;
    lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: ts, message: { role: "user", content: text, timestamp: 1 } }));
    texts.set(id, text);
    parent = id;
  };
  // Lines of odd lengths until past 1 MiB, so that one of them straddles the first block's end.
  for (let i = 0; i < 900; i++) add(`line ${i} ${"x".repeat(1000 + (i % 97))} é`);
  // A line larger than a block, then a malformed line and a blank one right after it.
  add(`big ${"y".repeat(Math.round(2.5 * MiB))} end`);
  lines.push('{"type":"message","id":"broken"');
  brokenLine = lines.length;
  lines.push("   ");
  for (let i = 0; i < 300; i++) add(`tail ${i} ${"z".repeat(2000 + (i % 13))}`);
  const file = path.join(tempDir(), "blocks.jsonl");
  writeFileSync(file, lines.join("\n")); // no final newline
  return { file, texts, brokenLine };
}

describe("import pi of entries kept by their place in the file", () => {
  it("gives every entry its text, numbers lines across blocks, and finds the same Log unchanged", () => {
    const { file, texts, brokenLine } = blockFile();
    const ws = tempDir();
    const strict = importPi(ws, file);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_pi_session", details: { reason: "malformed_line", line: brokenLine } });

    const r = importPi(ws, file, "--lenient");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].skipped_lines).toBe(1);
    expect(r.json.imports[0].sessions).toMatchObject([{ session_id: HEADER_ID, status: "created", event_count: texts.size + 1 }]);
    const events = importedEvents(ws, [HEADER_ID]);
    expect(events.map((e) => e.data.pi.entry_id)).toEqual([...texts.keys()]);
    for (const e of events) expect(e.data.text).toBe(texts.get(e.data.pi.entry_id));
    expect(readFileSync(logFile(ws, HEADER_ID)).length).toBeGreaterThan(2 * MiB);

    const warned = run("pixir", ["import", "pi", file, "--lenient"], { cwd: tempDir() });
    expect(warned.stderr).toContain(`warning: malformed_line: ${file}:${brokenLine}:`);

    const again = importPi(ws, file, "--lenient");
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.imports[0].sessions[0].status).toBe("unchanged");
  });

  it("a Log of the same size with one byte changed past the first block is already_exists", () => {
    const { file } = blockFile();
    const ws = tempDir();
    expect(importPi(ws, file, "--lenient").code).toBe(0);
    const log = logFile(ws, HEADER_ID);
    const bytes = readFileSync(log);
    const at = bytes.indexOf("tail 250 ");
    expect(at).toBeGreaterThan(MiB);
    bytes[at] = "T".charCodeAt(0);
    writeFileSync(log, bytes);
    const r = importPi(ws, file, "--lenient");
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists", details: { session_id: HEADER_ID } });
    expect(readFileSync(log).equals(bytes)).toBe(true);
  });
});
