// A writer killed with SIGKILL mid-stream leaves the Log as it was or complete, never a partial line.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { leaseGoesStale, logFile, rawLine, readLog, run, start, tempDir, user, workspace } from "../support/cli.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BODY = "x".repeat(2000);

/** Feed `lines` to a writer in bursts, then SIGKILL it after `killAfter` bursts. */
async function killMidStream(tool: "pixir-log", args: string[], ws: string, lines: string[], killAfter: number, probe: () => boolean) {
  const writer = start(tool, args, { cwd: ws });
  const burst = Math.ceil(lines.length / 10);
  for (let b = 0; b < killAfter; b++) {
    writer.child.stdin.write(lines.slice(b * burst, (b + 1) * burst).join(""));
    await sleep(40);
  }
  // Wait until the writer has visibly started writing (temp file or grown Log), then kill it.
  for (let i = 0; i < 100 && !probe(); i++) await sleep(20);
  writer.child.kill("SIGKILL");
  return writer.done;
}

const sessionFiles = (ws: string) => readdirSync(path.join(ws, ".pixir", "sessions"));

describe("SIGKILL during a write", () => {
  it("a new Log from pixir-log write is absent afterwards, not partial; check reports the temp file", async () => {
    for (const killAfter of [3, 6, 9]) {
      const ws = tempDir();
      const lines = Array.from({ length: 2000 }, (_, n) => `${rawLine("s", n, user(`${n} ${BODY}`))}\n`);
      const tempWritten = () => existsSync(path.join(ws, ".pixir/sessions")) && sessionFiles(ws).some((f) => f.includes(".tmp-") && statSync(path.join(ws, ".pixir/sessions", f)).size > 0);
      const r = await killMidStream("pixir-log", ["write"], ws, lines, killAfter, tempWritten);
      expect(r.code).not.toBe(0);
      expect(existsSync(logFile(ws, "s"))).toBe(false);
      const check = run("pixir-log", ["check", "--json"], { cwd: ws });
      expect(check.json.checked).toBe(0);
      // The orphaned temp file never counts as a Log. Once the dead writer's lease is stale, a later
      // write of the same id takes it over (writer-lease.md §9a) and works.
      await leaseGoesStale(ws, "s");
      const again = run("pixir-log", ["write"], { cwd: ws, input: lines.slice(0, 3).join(""), env: { PIXIR_TAKE_OVER_DEAD_WRITER: "1" } });
      expect(again.code).toBe(0);
      expect(run("pixir-log", ["check", "s", "--json"], { cwd: ws }).json.logs[0].warnings.map((w: { code: string }) => w.code)).toContain("stale_temp_file");
    }
  }, 120_000);

  it("an append to an existing Log reads as the original, and repair restores its exact bytes", async () => {
    for (const killAfter of [2, 5, 8]) {
      const ws = workspace({ s: [user("a"), user("b")] });
      const original = readLog(ws, "s");
      const size = Buffer.byteLength(original);
      const lines = Array.from({ length: 2000 }, (_, n) => `${JSON.stringify({ type: "user_message", data: { text: `${n} ${BODY}` } })}\n`);
      const grown = () => existsSync(logFile(ws, "s")) && statSync(logFile(ws, "s")).size > size;
      const r = await killMidStream("pixir-log", ["append", "s"], ws, lines, killAfter, grown);
      expect(r.code).not.toBe(0);
      const cat = run("pixir-log", ["cat", "s"], { cwd: ws });
      expect(cat.code).toBe(0);
      expect(cat.stdout).toBe(original);
      // The dead writer's lease blocks writers until it is stale and released by force.
      await leaseGoesStale(ws, "s");
      expect(run("pixir", ["lock", "release", "s", "--force"], { cwd: ws }).code).toBe(0);
      const repair = run("pixir-log", ["repair", "s", "--json"], { cwd: ws });
      expect(repair.json).toMatchObject({ ok: true, journal_rolled_back: true });
      expect(readFileSync(logFile(ws, "s"), "utf8")).toBe(original);
    }
  }, 120_000);
});
