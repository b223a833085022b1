// pixir import codex and a line longer than a Log line may be (issue 33 item 5, for Codex as for Claude): a
// rollout line past the bound (MAX_LINE_BYTES) is refused, named by file and line, as soon as its carried
// bytes pass the bound, `--lenient` or not, nothing written: a 40 MiB line after line 1, and a sparse 4 GiB
// file of zeros (line 1 with no end, which the head reader used to gather whole).
import { closeSync, existsSync, mkdirSync, openSync, truncateSync, writeSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../../lib/envelope/src/lines/codec.js";
import { run, tempDir } from "../support/cli.js";

const THREAD = "019fc8be-3658-7ca3-9e29-000000000001";
const NAME = `rollout-2026-01-01T00-00-00-${THREAD}.jsonl`;
const meta = JSON.stringify({ timestamp: "2026-01-01T00:00:00.000Z", type: "session_meta", payload: { id: THREAD, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp/p", originator: "codex_cli_rs", cli_version: "0.1.0" } });
const userLine = (text: string) => JSON.stringify({ timestamp: "2026-01-01T00:00:01.000Z", type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text }] } });

/** A rollout: line 1, a short user line, then one user line of `pad` bytes of text, then a short line. */
function rolloutWithLongLine(pad: number): string {
  const dir = tempDir("pixir-codex-long-");
  const fd = openSync(path.join(dir, NAME), "w");
  try {
    writeSync(fd, `${meta}\n${userLine("hi")}\n`);
    const [open, close] = userLine("\u0000").split("\\u0000");
    writeSync(fd, open!);
    const block = Buffer.alloc(1 << 20, "x");
    for (let left = pad; left > 0; left -= block.length) writeSync(fd, block, 0, Math.min(left, block.length));
    writeSync(fd, `${close}\n${userLine("after")}\n`);
  } finally {
    closeSync(fd);
  }
  return dir;
}

function expectRefused(source: string, file: string, line: number, extra: string[] = []): void {
  const ws = tempDir();
  const r = run("pixir", ["import", "codex", source, "--json", ...extra], { cwd: ws });
  expect(r.code, r.stdout + r.stderr).toBe(1);
  expect(r.stderr).toBe("");
  expect(r.json.error).toMatchObject({ kind: "log_encode_failed", details: { reason: "line_too_long", type: null, file, line, max_line_bytes: MAX_LINE_BYTES } });
  expect(existsSync(path.join(ws, ".pixir", "sessions"))).toBe(false);
}

describe("a Codex rollout line longer than a Log line may be", () => {
  it("a 40 MiB line 3: refused at its line, given by name or found in a folder, with --lenient too", { timeout: 60_000 }, () => {
    const dir = rolloutWithLongLine(40 * 1024 * 1024);
    const file = path.join(dir, NAME);
    expectRefused(file, file, 3);
    expectRefused(file, file, 3, ["--lenient"]);
    expectRefused(dir, file, 3);
    const text = run("pixir", ["import", "codex", file], { cwd: tempDir() });
    expect(text.code).toBe(1);
    expect(text.stderr).toContain(`error: log_encode_failed: a line of the rollout is longer than a Log line may be (${file}:3: line_too_long;`);
  });

  it("a sparse 4 GiB file of zeros: refused at line 1 once the bound is passed", { timeout: 60_000 }, () => {
    const dir = tempDir("pixir-codex-sparse-");
    mkdirSync(path.join(dir, "sessions"));
    const file = path.join(dir, "sessions", NAME);
    closeSync(openSync(file, "w"));
    truncateSync(file, 4 * 1024 ** 3);
    expectRefused(file, file, 1);
    expectRefused(file, file, 1, ["--lenient"]);
  });

  it("a line just within the bound is not refused by it (the write-time rule names what it would become)", { timeout: 60_000 }, () => {
    const dir = rolloutWithLongLine(MAX_LINE_BYTES - 200);
    const file = path.join(dir, NAME);
    const r = run("pixir", ["import", "codex", file, "--json"], { cwd: tempDir() });
    expect(r.code).toBe(1);
    expect(r.json.error.details).toMatchObject({ reason: "line_too_long" });
    expect(r.json.error.details.observed_bytes).toBeGreaterThan(MAX_LINE_BYTES);
  });
});
