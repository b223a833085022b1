// codex/lean-plan.ts, the planner of a rollout with rollbacks that holds each Event's facts only (its lines in
// a spill): wherever it plans, the Logs it would write must be the plain rule's (import.ts planRollout over
// the rollout read whole), line for line, with the same place in the family; where a grown family on disk
// is not the plan of its first lines both must decline the fast path. Random rollouts (seeded) mix turns,
// tool calls, token counts, context messages, compactions, malformed lines and rollbacks of 1–4 turns (and of
// all of them), nested and flat, with enough Events between two cuts to pass the digest ladder's marks.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PixirError } from "../../lib/envelope/src/event/errors.js";
import { logFile, run, tempDir } from "../support/cli.js";
import { planLeanAndPlain, type PlannedLines, A, codexFixturePath, codexFixtures, completeLines, FC, FO, importRolloutFiles, meta, rec, rolledBack, rolledBackLines, TC, U, userTurnLines, writeRolloutFile } from "../support/codex.js";
import { Rng } from "../hardening/support.js";

const THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726c1";

/** The hardening tests' seeded generator (mulberry32), as a function: the same inputs on every run. */
const random = (seed: number): (() => number) => {
  const g = new Rng(seed);
  return () => g.next();
};

const CONTEXT = (): string => U("<environment_context>\n  <cwd>/w</cwd>\n</environment_context>");
const COMPACTED = (k: number): string => rec("compacted", { message: `summary ${k}`, replacement_history: [JSON.parse(U(`kept ${k}`)).payload, JSON.parse(A(`kept answer ${k}`)).payload] });

/** A rollout of about `turns` turns with `rollbacks` rollbacks among them; `lenient` adds unreadable lines. */
function randomRollout(seed: number, turns: number, rollbacks: number, lenient = false): string[] {
  const r = random(seed);
  const lines = [meta(THREAD), CONTEXT()];
  let call = 0;
  const rollbackAt = new Set(Array.from({ length: rollbacks }, () => 2 + Math.floor(r() * (turns - 2))));
  for (let t = 0; t < turns; t++) {
    if (r() < 0.15) lines.push(CONTEXT()); // not a turn: a rollback counts past it
    lines.push(U(`q${t} ${"x".repeat(Math.floor(r() * 300))}`));
    const steps = Math.floor(r() * 4);
    for (let s = 0; s < steps; s++) {
      const c = `call_${seed}_${call++}`;
      lines.push(FC(c));
      if (r() < 0.85) lines.push(FO(c)); // an open call now and then: the header names it
    }
    if (r() < 0.5) lines.push(TC(100 + t * 10));
    lines.push(A(`a${t}`));
    if (r() < 0.05) lines.push(COMPACTED(t));
    if (lenient && r() < 0.05) lines.push(r() < 0.5 ? "{not json" : '{"type":7}');
    if (rollbackAt.has(t)) lines.push(rolledBack(1 + Math.floor(r() * 4)));
  }
  if (seed % 4 === 0) lines.push(rolledBack(turns * 2), U("from the start"), A("again")); // every turn dropped
  return lines;
}

/** The lean plan of `lines` over `ws`, taken, and equal to the plain rule's. */
async function expectLeanEqualsPlain(ws: string, lines: string[], lenient = false): Promise<PlannedLines[]> {
  const { lean, plain } = await planLeanAndPlain(ws, writeRolloutFile(lines), lenient);
  if (plain instanceof PixirError) throw plain;
  expect(lean).not.toBeNull();
  if (JSON.stringify(lean) !== JSON.stringify(plain)) expect(lean).toEqual(plain);
  return lean!;
}

const newLines = (logs: PlannedLines[]): number => logs.reduce((n, l) => n + l.lines.length - l.diskCount, 0);

describe("the lean planner plans a rollout with rollbacks as the plain rule does", () => {
  it("random rollouts, fresh: nested and flat rollbacks, replay_v1 children, open calls, compactions", async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const logs = await expectLeanEqualsPlain(tempDir(), randomRollout(seed, 40 + seed * 10, seed));
      if (seed >= 6) expect(logs.length).toBeGreaterThan(2);
    }
  });

  it("nested rollbacks past the share-hop bound store their prefix, and cuts pass the ladder's marks", async () => {
    const head = [meta(THREAD), ...Array.from({ length: 200 }, (_, i) => [U(`q${i}`), FC(`c${i}`), FO(`c${i}`), A(`a${i}`)]).flat()];
    const logs = await expectLeanEqualsPlain(tempDir(), rolledBackLines(head, 14, true));
    expect(logs.some((l) => l.lines[0]!.includes('"strategy":"replay_v1"'))).toBe(true);
    const flat = await expectLeanEqualsPlain(tempDir(), rolledBackLines(head, 20, false));
    expect(flat.filter((l) => l.parentId === flat[0]!.sessionId)).toHaveLength(20);
  });

  it("--lenient: unreadable lines among the turns", async () => {
    for (let seed = 21; seed <= 24; seed++) await expectLeanEqualsPlain(tempDir(), randomRollout(seed, 60, 5, true), true);
  });

  it("grown in steps: each step planned over the Logs the earlier ones wrote", async () => {
    for (const seed of [31, 32, 33]) {
      const all = randomRollout(seed, 80, 8);
      const ws = tempDir();
      let from = 0;
      for (const to of [Math.floor(all.length / 3), Math.floor(all.length / 2), all.length - 3, all.length]) {
        const logs = await expectLeanEqualsPlain(ws, all.slice(0, to));
        if (from > 0) expect(newLines(logs)).toBeGreaterThan(0);
        await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, to))]);
        from = to;
      }
      expect(newLines(await expectLeanEqualsPlain(ws, all))).toBe(0);
    }
  });

  it("the real rollouts, rolled back after their last turn, fresh and grown from half", async () => {
    for (const rel of codexFixtures()) {
      const lines = completeLines(readFileSync(codexFixturePath(rel), "utf8"));
      if (userTurnLines(lines).length === 0) continue;
      const rolled = rolledBackLines(lines, 3, true);
      await expectLeanEqualsPlain(tempDir(), rolled);
      const ws = tempDir();
      await importRolloutFiles(ws, [writeRolloutFile(lines.slice(0, Math.floor(lines.length / 2)))]);
      await expectLeanEqualsPlain(ws, rolled);
    }
  });
});

describe("the lean planner on Logs changed after their import declines, as replanGrown does", () => {
  const all = randomRollout(41, 30, 4);

  it("a native Event appended to the leaf, a torn last line", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all)]);
    const leaf = (await planLeanAndPlain(ws, writeRolloutFile(all))).lean!.at(-1)!.sessionId;
    const app = run("pixir", ["append", leaf], { cwd: ws, input: '{"type":"user_message","data":{"text":"mine"}}\n' });
    expect(app.code, app.stderr).toBe(0);
    const diverged = await planLeanAndPlain(ws, writeRolloutFile([...all, U("more")]));
    expect(diverged.lean).toBeNull();
    expect((diverged.plain as PixirError).details.reason).toBe("log_diverged");
    const torn = tempDir();
    await importRolloutFiles(torn, [writeRolloutFile(all)]);
    appendFileSync(logFile(torn, leaf), '{"id":"torn');
    expect((await planLeanAndPlain(torn, writeRolloutFile([...all, U("more")]))).lean).toBeNull();
  });
});

describe("pixir import codex with the lean planner", () => {
  const all = randomRollout(51, 30, 4);

  it("writes the plan's Logs, and a temp directory it cannot use is a named error with nothing written", () => {
    const file = writeRolloutFile(all);
    const broken = tempDir();
    const bad = run("pixir", ["import", "codex", file, "--json"], { cwd: broken, env: { TMPDIR: path.join(broken, "no-such-dir") } });
    expect(bad.code, bad.stderr).toBe(1);
    const err = JSON.parse(bad.stdout).error;
    expect(err.kind).toBe("log_write_failed");
    expect(err.message).toContain("the import's plan file in the temp directory");
    expect(err.details.reason).toBe("enoent");
    expect(existsSync(path.join(broken, ".pixir", "sessions"))).toBe(false);
    const ws = tempDir();
    const ok = run("pixir", ["import", "codex", file, "--json"], { cwd: ws });
    expect(ok.code, ok.stderr).toBe(0);
    const sessions = JSON.parse(ok.stdout).imports[0].sessions;
    expect(sessions.length).toBeGreaterThan(2);
    expect(readdirSync(path.join(ws, ".pixir", "sessions")).filter((n) => n.endsWith(".ndjson"))).toHaveLength(sessions.length);
    // The plan file was unlinked as soon as it was made: nothing of it is left in the temp directory.
    expect(readdirSync(os.tmpdir()).filter((n) => n.startsWith("pixir-codex-plan-"))).toEqual([]);
  });

  // A full temp directory: a tmpfs of 64 KiB as TMPDIR (mounting needs root; skipped otherwise, saying why).
  it("a full temp directory is log_write_failed (enospc) with nothing written", (ctx) => {
    const tmpfs = process.getuid?.() === 0 ? mountTmpfs(64) : { skip: "mounting a tmpfs needs root" };
    if (typeof tmpfs !== "string") {
      console.warn(`codex-lean-plan: skipped: ${tmpfs.skip}`);
      return ctx.skip();
    }
    const dir = tmpfs;
    try {
      const ws = tempDir();
      const big = [meta(THREAD), ...Array.from({ length: 40 }, (_, i) => [U(`q${i} ${"x".repeat(4000)}`), A(`a${i}`)]).flat(), rolledBack(1), U("again"), A("done")];
      const r = run("pixir", ["import", "codex", writeRolloutFile(big), "--json"], { cwd: ws, env: { TMPDIR: dir } });
      expect(r.code, r.stderr).toBe(1);
      const err = JSON.parse(r.stdout).error;
      expect([err.kind, err.details.reason]).toEqual(["log_write_failed", "enospc"]);
      expect(existsSync(path.join(ws, ".pixir", "sessions")) ? readdirSync(path.join(ws, ".pixir", "sessions")) : []).toEqual([]);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      spawnSync("umount", [dir]);
      rmdirSync(dir);
    }
  });
});

/** A fresh tmpfs of `kib` KiB, or why none can be mounted here. */
function mountTmpfs(kib: number): string | { skip: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-lean-tmpfs-"));
  const r = spawnSync("mount", ["-t", "tmpfs", "-o", `size=${kib}k,mode=0755`, "tmpfs", dir], { encoding: "utf8" });
  if (r.status === 0) return dir;
  rmdirSync(dir);
  return { skip: `cannot mount a tmpfs here (${(r.stderr ?? r.error?.message ?? "").trim() || "mount failed"})` };
}
