// kill -9 during an import (issue 33 item 5): the import of a generated Claude archive is SIGKILLed once a
// temp file of a Log being written is seen; the temp files it leaves are reported by pixir-log check as
// stale; the next import removes them, finishes, and check is clean, with the Logs a clean run makes.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run, start, tempDir } from "../support/cli.js";

const SESSIONS = 8;

/** A projects root of SESSIONS transcripts of 800 records each (about 0.5 MiB each). */
function archive(): string {
  const root = tempDir("pixir-kill-archive-");
  const dir = path.join(root, "-home-u-p");
  mkdirSync(dir);
  for (let s = 0; s < SESSIONS; s++) {
    const sid = `11111111-2222-4333-8444-${String(s).padStart(12, "0")}`;
    const lines: string[] = [];
    let parent: string | null = null;
    for (let i = 0; i < 800; i++) {
      const uuid = `${sid}-${i}`;
      const message = i % 2 === 1 ? { id: `msg_${uuid}`, type: "message", role: "assistant", model: "m", content: [{ type: "text", text: `answer ${i} `.repeat(40) }], usage: { input_tokens: 1, output_tokens: 2 } } : { role: "user", content: `question ${i} `.repeat(40) };
      lines.push(JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd: "/home/u/p", sessionId: sid, version: "2.1.0", type: i % 2 === 1 ? "assistant" : "user", message, uuid, timestamp: "2026-01-01T00:00:00.000Z" }));
      parent = uuid;
    }
    writeFileSync(path.join(dir, `${sid}.jsonl`), `${lines.join("\n")}\n`);
  }
  return root;
}

const sessionsDir = (ws: string) => path.join(ws, ".pixir", "sessions");
const temps = (ws: string): string[] => {
  try {
    return readdirSync(sessionsDir(ws)).filter((n) => n.includes(".tmp-"));
  } catch {
    return [];
  }
};

/** Start the import and SIGKILL it as soon as a temp file appears; true when one was left behind. */
async function killMidImport(ws: string, root: string): Promise<boolean> {
  const { child, done } = start("pixir", ["import", "claude", root], { cwd: ws });
  let killed = false;
  const poll = setInterval(() => {
    if (!killed && temps(ws).length > 0) {
      killed = child.kill("SIGKILL");
    }
  }, 1);
  await done;
  clearInterval(poll);
  return killed && temps(ws).length > 0;
}

describe("kill -9 during pixir import claude", () => {
  it("leaves temp files check reports; the next import removes them and check is clean", { timeout: 120_000 }, async () => {
    const root = archive();
    // The kill lands after a temp file exists; on a fast run it may land after the rename: try again.
    let ws = "";
    let left = false;
    for (let attempt = 0; attempt < 5 && !left; attempt++) {
      ws = tempDir("pixir-kill-ws-");
      left = await killMidImport(ws, root);
    }
    expect(left, "a kill landed while a temp file existed").toBe(true);
    const before = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(JSON.stringify(before.json)).toContain("stale_temp_file");

    const again = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(temps(ws)).toEqual([]);
    const after = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(after.code, after.stdout).toBe(0);
    expect(after.json).toMatchObject({ ok: true, checked: SESSIONS, warning_count: 0 });
    for (const log of after.json.logs) expect([log.problems, log.warnings]).toEqual([[], []]);

    // The same Logs as an import that was never killed.
    const clean = tempDir("pixir-kill-clean-");
    expect(run("pixir", ["import", "claude", root], { cwd: clean }).code).toBe(0);
    const logs = (w: string) => readdirSync(sessionsDir(w)).sort();
    expect(logs(ws)).toEqual(logs(clean));
    for (const name of logs(clean)) expect(readFileSync(path.join(sessionsDir(ws), name)).equals(readFileSync(path.join(sessionsDir(clean), name))), name).toBe(true);
  });
});
