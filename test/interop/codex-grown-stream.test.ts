// codex/grown-stream.ts, the streamed twin of the planner for a grown rollout whose family is one Log: what
// it counts and the lines it appends must be the plan's (replanGrown and planGrown, held equal by
// codex-grown-replan.test.ts), on generated rollouts grown at every line, with links and unreadable lines,
// and on every real rollout; where the planner is needed (a rollback, more Logs, a native Event, another file
// name, a fork) it must decline; and a run through it writes what one import writes.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { streamGrown } from "../../lib/envelope/src/interop/codex/grown-stream.js";
import { readRollout } from "../../lib/envelope/src/interop/codex/format.js";
import { eventLine } from "../../lib/envelope/src/interop/codex/line-events.js";
import { PixirError } from "../../lib/envelope/src/event/errors.js";
import { logFile, run, tempDir } from "../support/cli.js";
import { planGrownBothWays, A, codexFixturePath, codexFixtures, completeLines, FC, FO, importRolloutFiles, meta, rec, rolledBack, rollout, threadOf, U, writeRolloutFile } from "../support/codex.js";

const THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726c3";
const NAME = `rollout-2026-03-01T10-00-00-${THREAD}.jsonl`;

/** The grown `file` streamed (its new lines gathered) and planned: the stream's answer and the plan's. */
async function bothWays(ws: string, file: string, lenient = false) {
  const t = threadOf(completeLines(readFileSync(file, "utf8")));
  const lines: string[] = [];
  const streamed = streamGrown(ws, { path: file, display: file }, true, lenient, t, (l) => lines.push(l));
  const read = readRollout({ path: file, display: file }, true, lenient);
  if (read.kind !== "rollout") throw new Error("not a rollout");
  const { fast, plain } = await planGrownBothWays(ws, read.rollout);
  return { streamed, lines, plan: fast ?? (plain instanceof PixirError ? null : plain) };
}

/** The stream taken, and its count and lines those of the plan. */
async function expectStreamedAsPlanned(ws: string, file: string, lenient = false): Promise<number> {
  const { streamed, lines, plan } = await bothWays(ws, file, lenient);
  expect(streamed.kind).toBe("streamed");
  if (streamed.kind !== "streamed" || plan === null) throw new Error("no plan");
  expect(plan.family.logs).toHaveLength(1);
  const root = plan.family.logs[0]!;
  expect(streamed.eventCount).toBe(root.stored.length);
  expect(streamed.newEvents).toBe(root.stored.length - root.diskCount);
  expect(lines.join("")).toBe(Array.from(root.stored).slice(root.diskCount).map(eventLine).join(""));
  return streamed.newEvents;
}

const turns = (n: number): string[] => Array.from({ length: n }, (_, i) => [U(`q${i}`), FC(`c${i}`), FO(`c${i}`), A(`a${i}`)]).flat();

describe("streamGrown counts and appends what the planner plans", () => {
  it("a rollout grown from every line on", async () => {
    const all = [meta(THREAD), ...turns(6)];
    for (let cut = 1; cut <= all.length; cut++) {
      const ws = tempDir();
      await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, cut), NAME)]);
      const added = await expectStreamedAsPlanned(ws, writeRolloutFile(all, NAME));
      expect(added > 0).toBe(cut < all.length);
    }
  });

  it("--lenient lines still unreadable, and links of subagents (§3.6) put back at their seqs", async () => {
    const first = [meta(THREAD), U("start"), "{not json", A("spawning")];
    const more = turns(3);
    const sub = (S: string) =>
      writeRolloutFile([meta(S, { source: { subagent: { thread_spawn: { parent_thread_id: THREAD, depth: 1, agent_nickname: "Ada", agent_role: "explorer" } } } }), U("inspect"), A("done")], `rollout-2026-03-01T10-00-01-${S}.jsonl`);
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(first, NAME), sub("019c8a59-e9dd-71f0-9ae3-4079fe9726c4")], true);
    await importRolloutFiles(ws, [writeRolloutFile([...first, ...more.slice(0, 4)], NAME), sub("019c8a59-e9dd-71f0-9ae3-4079fe9726c5")], true);
    expect(readFileSync(logFile(ws, THREAD), "utf8").split('"subagent_link"').length - 1).toBe(2);
    expect(await expectStreamedAsPlanned(ws, writeRolloutFile([...first, ...more], NAME), true)).toBeGreaterThan(0);
  });

  it("every real rollout without a rollback, cut in half", async () => {
    for (const rel of codexFixtures()) {
      const lines = completeLines(readFileSync(codexFixturePath(rel), "utf8"));
      if (lines.some((l) => l.includes('"thread_rolled_back"')) || JSON.parse(lines[0]!).payload.forked_from_id) continue;
      const ws = tempDir();
      await importRolloutFiles(ws, [writeRolloutFile(lines.slice(0, Math.ceil(lines.length / 2)), path.basename(rel))]);
      await expectStreamedAsPlanned(ws, writeRolloutFile(lines, path.basename(rel)));
    }
  });
});

describe("streamGrown leaves to the planner", () => {
  const all = [meta(THREAD), ...turns(3)];

  async function declines(ws: string, lines: string[], name = NAME): Promise<void> {
    const file = writeRolloutFile(lines, name);
    const emitted: string[] = [];
    expect(streamGrown(ws, { path: file, display: file }, true, false, THREAD, (l) => emitted.push(l)).kind).toBe("plan");
    // Declined before a line is handed to the append, where that can be known then.
    if (!lines.some((l) => l.includes('"thread_rolled_back"'))) expect(emitted).toEqual([]);
  }

  it("a rollback line, before or after the Log's end", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all, NAME)]);
    await declines(ws, [...all, rolledBack(1), U("again")]);
    const rolled = tempDir();
    await importRolloutFiles(rolled, [writeRolloutFile([...all, rolledBack(1), U("again")], NAME)]);
    await declines(rolled, [...all, rolledBack(1), U("again"), A("more")]);
  });

  it("a native Event in the Log, another file name, a changed line, a fork", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(all, NAME)]);
    await declines(ws, [...all, U("more")], "renamed.jsonl");
    const changed = [...all];
    changed[3] = FO("c0-changed");
    await declines(ws, [...changed, U("more")]);
    const app = run("pixir", ["append", THREAD], { cwd: ws, input: '{"type":"user_message","data":{"text":"mine"}}\n' });
    expect(app.code, app.stderr).toBe(0);
    await declines(ws, [...all, U("more")]);
    const torn = tempDir();
    await importRolloutFiles(torn, [writeRolloutFile(all, NAME)]);
    appendFileSync(logFile(torn, THREAD), '{"id":"torn');
    await declines(torn, [...all, U("more")]);
    // A Log that ends inside a line's Events (a compacted record: its checkpoint, then its items) is not an
    // import of fewer lines, though every line it holds is the plan's.
    const compacted = [...all, rec("compacted", { message: "", replacement_history: [JSON.parse(U("q0")).payload, JSON.parse(U("sum")).payload] })];
    const cut = tempDir();
    await importRolloutFiles(cut, [writeRolloutFile(compacted, NAME)]);
    const held = readFileSync(logFile(cut, THREAD), "utf8").split("\n");
    writeFileSync(logFile(cut, THREAD), held.slice(0, -2).join("\n") + "\n");
    await declines(cut, [...compacted, U("more")]);
    const fork = tempDir();
    await importRolloutFiles(fork, [writeRolloutFile(all, NAME)]);
    await declines(fork, [meta(THREAD, { forked_from_id: "019c8a59-e9dd-71f0-9ae3-4079fe9726c9" }), ...all.slice(1), U("more")]);
  });
});

describe("a run through the stream", () => {
  it("writes, in steps, the Log of one import, and reports as the planner does", () => {
    const all = [meta(THREAD), ...turns(8)];
    const dir = tempDir();
    const file = path.join(dir, NAME);
    const one = tempDir();
    writeFileSync(file, rollout(all));
    const once = run("pixir", ["import", "codex", file, "--json"], { cwd: one });
    expect(once.code, once.stderr).toBe(0);
    const steps = tempDir();
    for (const cut of [2, 9, 10, 22, all.length]) {
      writeFileSync(file, rollout(all.slice(0, cut)));
      const r = run("pixir", ["import", "codex", file, "--json"], { cwd: steps });
      expect(r.code, r.stderr).toBe(0);
      if (cut > 2) expect(JSON.parse(r.stdout).imports[0].sessions[0]).toMatchObject({ status: "appended", role: "root", parent_session_id: null });
    }
    expect(readFileSync(logFile(steps, THREAD), "utf8").split(steps).join("<ws>")).toBe(readFileSync(logFile(one, THREAD), "utf8").split(one).join("<ws>"));
    const again = run("pixir", ["import", "codex", file, "--json"], { cwd: steps });
    expect(JSON.parse(again.stdout).imports[0]).toMatchObject({ line_count: all.length, sessions: [{ status: "unchanged", event_count: JSON.parse(once.stdout).imports[0].sessions[0].event_count }] });
  });
});
