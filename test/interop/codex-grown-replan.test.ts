// codex/import.ts replanGrown, the fast path of a grown rollout (disk-prefix.ts): the rollout planned as a
// new family and checked against the Logs on disk. Wherever it is taken, its plan must be the plain rule's
// (planGrown over the family read from disk), field by field; where the Logs are not an import of the
// rollout's first lines (a native Event, a link, a removed Log, a changed line) it must decline.
import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PlannedRollout } from "../../lib/envelope/src/interop/codex/import.js";
import { readRollout, type Rollout } from "../../lib/envelope/src/interop/codex/format.js";
import { PixirError } from "../../lib/envelope/src/event/errors.js";
import { logFile, run, tempDir } from "../support/cli.js";
import { planGrownBothWays, A, codexFixturePath, codexFixtures, completeLines, importRolloutFiles, meta, plannedLogView, rolledBackLines, rollout, U, userTurnLines, writeRolloutFile } from "../support/codex.js";

const THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726b7";

function read(file: string, lenient = false): Rollout {
  const r = readRollout({ path: file, display: file }, true, lenient);
  if (r.kind !== "rollout") throw new Error(`not a rollout: ${file}`);
  return r.rollout;
}

/** Every field of a plan that the writing pass and later steps of a run read, as plain values. */
function view(p: PlannedRollout): unknown {
  const f = p.family;
  return {
    forkReport: p.forkReport,
    threadId: f.threadId,
    baseId: f.baseId,
    fork: f.fork,
    lineOne: f.lineOne,
    logs: f.logs.map(plannedLogView),
  };
}

/** The grown rollout `file` over the Workspace: the fast path taken, and equal to the plain rule. */
async function expectFastEqualsPlain(ws: string, file: string, lenient = false): Promise<PlannedRollout> {
  const { fast, plain: slow } = await planGrownBothWays(ws, read(file, lenient));
  if (slow instanceof PixirError) throw slow;
  expect(fast).not.toBeNull();
  const [a, b] = [view(fast!), view(slow)];
  if (JSON.stringify(a) !== JSON.stringify(b)) expect(a).toEqual(b);
  return fast!;
}

const appended = (p: PlannedRollout) => p.family.logs.reduce((n, l) => n + l.stored.length - l.diskCount, 0);

describe("replanGrown plans a grown rollout as planGrown does", () => {
  it("30 nested rollbacks grown in steps: children of children and replay_v1 children, the cut anywhere", async () => {
    const head = [meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")];
    const all = rolledBackLines(head, 30, true);
    for (const [from, to] of [[1, 7], [6, 16], [16, 17], [40, 96], [95, all.length], [all.length, all.length]] as const) {
      const ws = tempDir();
      await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, from))]);
      const p = await expectFastEqualsPlain(ws, writeRolloutFile(all.slice(0, to)));
      if (to > from) expect(appended(p)).toBeGreaterThan(0);
      else expect(appended(p)).toBe(0);
    }
  });

  it("--lenient: a malformed line and an invalid record, still unreadable when the rollout grew", async () => {
    const head = [meta(THREAD), U("first"), "{not json", A("first answer"), '{"type":7}', U("second"), A("second answer")];
    const all = rolledBackLines(head, 3, true);
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, 12))], true);
    const p = await expectFastEqualsPlain(ws, writeRolloutFile(all), true);
    expect(appended(p)).toBeGreaterThan(0);
  });

  it("40 flat rollbacks, every child on the root", async () => {
    const head = [meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")];
    const all = rolledBackLines(head, 40, false);
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, 50))]);
    const p = await expectFastEqualsPlain(ws, writeRolloutFile(all));
    expect(p.family.logs).toHaveLength(41);
  });

  it("subagent links (§3.6) put back where they stand: in the leaf, then in a Log a rollback left behind", async () => {
    const P = "019c8a59-e9dd-71f0-9ae3-4079fe972601";
    const name = `rollout-2026-03-01T10-00-00-${P}.jsonl`;
    const sub = (S: string, task: string) =>
      writeRolloutFile([meta(S, { source: { subagent: { thread_spawn: { parent_thread_id: P, depth: 1, agent_nickname: "Ada", agent_role: "explorer" } } } }), U(task), A("done")], `rollout-2026-03-01T10-00-01-${S}.jsonl`);
    const first = [meta(P), U("start"), A("spawning")];
    const second = [...first, U("later"), A("spawning again")];
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(first, name), sub("019c8a59-e9dd-71f0-9ae3-4079fe972602", "inspect")]);
    await importRolloutFiles(ws, [writeRolloutFile(second, name), sub("019c8a59-e9dd-71f0-9ae3-4079fe972603", "inspect again")]);
    expect(readFileSync(logFile(ws, P), "utf8").split('"subagent_link"').length - 1).toBe(2);
    const p = await expectFastEqualsPlain(ws, writeRolloutFile(rolledBackLines(second, 3, true), name));
    expect(Array.from(p.family.logs[0]!.stored).filter((e) => e.type === "subagent_event")).toHaveLength(2);
    expect(appended(p)).toBeGreaterThan(0);
  });

  it("the real rollouts: cut in half, grown by turns, and rolled back", async () => {
    for (const rel of codexFixtures()) {
      // The root's header names the file (its base name): a grown rollout keeps its name.
      const name = path.basename(rel);
      const lines = completeLines(readFileSync(codexFixturePath(rel), "utf8"));
      const half = tempDir();
      await importRolloutFiles(half, [writeRolloutFile(lines.slice(0, Math.max(1, Math.floor(lines.length / 2))), name)]);
      await expectFastEqualsPlain(half, writeRolloutFile(lines, name));
      if (userTurnLines(lines).length === 0) continue;
      const grown = tempDir();
      await importRolloutFiles(grown, [codexFixturePath(rel)]);
      await expectFastEqualsPlain(grown, writeRolloutFile(rolledBackLines(lines, 3, true), name));
    }
  });
});

describe("replanGrown on Logs changed after their import: it declines unless they are an import of fewer lines", () => {
  const head = [meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")];
  const all = rolledBackLines(head, 4, true);

  async function declined(ws: string, lines: string[]): Promise<PixirError | PlannedRollout> {
    const { fast, plain: slow } = await planGrownBothWays(ws, read(writeRolloutFile(lines)));
    expect(fast).toBeNull();
    return slow;
  }

  it("a native Event appended to the leaf: the plain rule refuses it (log_diverged)", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all)]);
    const app = run("pixir", ["append", `${THREAD}.rollback-21`], { cwd: ws, input: '{"type":"user_message","data":{"text":"mine"}}\n' });
    expect(app.code, app.stderr).toBe(0);
    expect(((await declined(ws, [...all, U("more")])) as PixirError).details.reason).toBe("log_diverged");
  });

  it("a removed middle rollback Log (fork_parent_missing), and a changed earlier line (rollout_changed)", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all)]);
    rmSync(logFile(ws, `${THREAD}.rollback-11`));
    expect(((await declined(ws, [...all, U("more")])) as PixirError).kind).toBe("fork_parent_missing");
    const other = tempDir();
    await importRolloutFiles(other, [writeRolloutFile(all)]);
    const changed = [...all];
    changed[2] = U("first, edited");
    expect(((await declined(other, [...changed, U("more")])) as PixirError).details.reason).toBe("rollout_changed");
  });

  it("a torn last line in a Log: declined, and the plain rule says what it finds", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all)]);
    appendFileSync(logFile(ws, `${THREAD}.rollback-21`), '{"id":"torn');
    const slow = await declined(ws, [...all, U("more")]);
    expect(slow).toBeInstanceOf(PixirError);
  });

  it("the last rollback Log removed is an import of the lines before it: both ways plan it again", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all)]);
    rmSync(logFile(ws, `${THREAD}.rollback-21`));
    const p = await expectFastEqualsPlain(ws, writeRolloutFile([...all, U("more")]));
    expect(p.family.logs.find((l) => l.sessionId === `${THREAD}.rollback-21`)?.diskCount).toBe(0);
  });

});

describe("a grown import on the fast path writes what one import writes", () => {
  it("the family of a rollout imported in three steps is byte for byte that of one import", async () => {
    const head = [meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")];
    const all = rolledBackLines(head, 12, true);
    const one = tempDir();
    await importRolloutFiles(one, [writeRolloutFile(all)]);
    const steps = tempDir();
    const file = writeRolloutFile(all.slice(0, 20));
    await importRolloutFiles(steps, [file]);
    writeFileSync(file, rollout(all.slice(0, 41)));
    await importRolloutFiles(steps, [file]);
    writeFileSync(file, rollout(all));
    const last = await importRolloutFiles(steps, [file]);
    expect(last.imports[0]!.sessions.some((s) => s.status === "appended" || s.status === "created")).toBe(true);
    const logs = (ws: string) => last.imports[0]!.sessions.map((s) => readFileSync(logFile(ws, s.session_id), "utf8").split(ws).join("<ws>"));
    expect(logs(steps)).toEqual(logs(one));
  });
});
