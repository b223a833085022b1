// pixir import claude and a line longer than a Log line may be (issue 33 item 5): refused, named by file and
// line, as soon as the line passes the bound (MAX_LINE_BYTES), before the file is buffered: a line one byte
// over, and a sparse 4 GiB file of zeros (one line with no end), which the import read whole before.
import { closeSync, existsSync, mkdirSync, openSync, truncateSync, writeSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../../lib/envelope/src/lines/codec.js";
import { run, tempDir } from "../support/cli.js";

const SID = "11111111-2222-4333-8444-555555555555";
const FILE = `-home-u-p/${SID}.jsonl`;
const record = (uuid: string, parent: string | null, text: string) =>
  JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd: "/home/u/p", sessionId: SID, version: "2.1.0", type: "user", message: { role: "user", content: text }, uuid, timestamp: "2026-01-01T00:00:00.000Z" });

/** A projects root whose one transcript is `head` lines, then `pad` bytes of text in one user record, then a short line. */
function transcriptWithLongLine(pad: number): string {
  const root = tempDir("pixir-claude-long-");
  mkdirSync(path.join(root, "-home-u-p"));
  const fd = openSync(path.join(root, FILE), "w");
  try {
    writeSync(fd, `${record("u1", null, "hi")}\n${record("u2", "u1", "again")}\n`);
    const [open, close] = record("big", "u2", "\u0000").split("\\u0000");
    writeSync(fd, open!);
    const block = Buffer.alloc(1 << 20, "x");
    for (let left = pad; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(left, block.length));
    writeSync(fd, `${close}\n${record("u3", "big", "after")}\n`);
  } finally {
    closeSync(fd);
  }
  return root;
}

function expectRefused(root: string, line: number, extra: string[] = []): void {
  const ws = tempDir();
  const r = run("pixir", ["import", "claude", root, "--json", ...extra], { cwd: ws });
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stderr).toBe("");
  expect(r.json.error).toMatchObject({ kind: "log_encode_failed", details: { reason: "line_too_long", file: FILE, line, max_line_bytes: MAX_LINE_BYTES } });
  expect(existsSync(path.join(ws, ".pixir", "sessions"))).toBe(false);
}

describe("a Claude line longer than a Log line may be", () => {
  it("just over the bound: refused at its line, with --lenient too, nothing written", { timeout: 60_000 }, () => {
    const root = transcriptWithLongLine(MAX_LINE_BYTES);
    expectRefused(root, 3);
    expectRefused(root, 3, ["--lenient"]);
    const text = run("pixir", ["import", "claude", root], { cwd: tempDir() });
    expect(text.stderr).toContain(`error: log_encode_failed: a line of the transcript is longer than a Log line may be (${FILE}:3: line_too_long;`);
  });

  it("a sparse 4 GiB file of zeros: refused at line 1 once the bound is passed", { timeout: 60_000 }, () => {
    const root = tempDir("pixir-claude-sparse-");
    mkdirSync(path.join(root, "-home-u-p"));
    closeSync(openSync(path.join(root, FILE), "w"));
    truncateSync(path.join(root, FILE), 4 * 1024 ** 3);
    expectRefused(root, 1);
  });
});
