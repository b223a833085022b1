// codex/family.ts loadFamily reads a family's Logs once each, a child against its parent's History already
// read (loader.ts OpenedHistories). What it fills must be what opening every Log on its own with
// openHistory gives: the families of generated rollouts with many rollbacks (nested, so that children of
// children and replay_v1 children appear, and flat), of the real rollouts, of real rollouts rolled back and
// of a Codex fork of one; and a tampered parent line is refused the same way.
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadFamily, type DiskFamily, type Family } from "../../lib/envelope/src/interop/codex/family.js";
import { openHistory } from "../../lib/envelope/src/store/loader.js";
import { logFile, tempDir } from "../support/cli.js";
import { A, codexFixturePath, codexFixtures, codexFork, completeLines, importRolloutFiles, meta, plannedLogView, rolledBackLines, threadOf, U, userTurnLines, writeRolloutFile } from "../support/codex.js";

const THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9";

/** Every field loadFamily fills, as plain values. */
function view(d: DiskFamily): unknown {
  if (d.kind !== "family") return d;
  const f: Family = d.family;
  return {
    threadId: f.threadId,
    baseId: f.baseId,
    fork: f.fork,
    lineOne: f.lineOne,
    fromDisk: f.fromDisk,
    logs: f.logs.map(plannedLogView),
  };
}

/** The family of thread `t` read by loadFamily, and by openHistory one Log at a time; or the error of each. */
async function bothWays(ws: string, t: string): Promise<{ linear: unknown; perLog: unknown }> {
  const read = async (f: () => Promise<DiskFamily>) => {
    try {
      return view(await f());
    } catch (err) {
      const e = err as { kind?: string; details?: unknown };
      return { error: e.kind, details: e.details };
    }
  };
  return { linear: await read(() => loadFamily(ws, t)), perLog: await read(() => loadFamily(ws, t, (id) => openHistory(ws, id))) };
}

/** Deep equality; equal JSON texts (plain values) settle it at once, a family holds thousands of Events. */
function expectSame(a: unknown, b: unknown): void {
  if (JSON.stringify(a) !== JSON.stringify(b)) expect(a).toEqual(b);
}

async function expectSameFamily(ws: string, t: string): Promise<any> {
  const { linear, perLog } = await bothWays(ws, t);
  expectSame(linear, perLog);
  return linear;
}

describe("loadFamily gives what openHistory gives Log by Log", () => {
  it("a rollout with 30 nested rollbacks, grown in steps: children of children, replay_v1 children", async () => {
    const ws = tempDir();
    const head = [meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")];
    const all = rolledBackLines(head, 30, true);
    for (const n of [3, 15, 30]) {
      await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, head.length + 5 * n))]);
      const f = await expectSameFamily(ws, THREAD);
      expect(f.logs).toHaveLength(n + 1);
    }
    const f = await expectSameFamily(ws, THREAD);
    const first = (id: string) => JSON.parse(readFileSync(logFile(ws, id), "utf8").split("\n")[0]!);
    const strategies = new Set(f.logs.slice(1).map((l: any) => first(l.sessionId).data.strategy));
    expect([...strategies].sort()).toEqual(["replay_v1", "share_v1"]);
    expect(f.logs.some((l: any) => l.parentId !== null && l.parentId !== f.baseId)).toBe(true);
  });

  it("a rollout with 40 flat rollbacks, every child on the root", async () => {
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(rolledBackLines([meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")], 40, false))]);
    const f = await expectSameFamily(ws, THREAD);
    expect(f.logs).toHaveLength(41);
    expect(f.logs.slice(1).every((l: any) => l.parentId === f.baseId)).toBe(true);
  });

  it("the real rollouts, as they are and rolled back", async () => {
    const files = codexFixtures().map(codexFixturePath);
    const ws = tempDir();
    await importRolloutFiles(ws, files);
    for (const file of files) await expectSameFamily(ws, threadOf(completeLines(readFileSync(file, "utf8"))));
    // Each real rollout grown by rollbacks of its own real turns, nested: its Logs hold the real lines.
    for (const file of files) {
      const lines = completeLines(readFileSync(file, "utf8"));
      if (userTurnLines(lines).length === 0) continue;
      const grown = tempDir();
      await importRolloutFiles(grown, [file]);
      await importRolloutFiles(grown, [writeRolloutFile(rolledBackLines(lines, 3, true))]);
      const f = await expectSameFamily(grown, threadOf(lines));
      expect(f.logs.length).toBeGreaterThan(1);
    }
  });

  it("a Codex fork of a real rollout, rolled back: its root is a share child of the source's family", async () => {
    const rel = codexFixtures().find((r) => r.startsWith("codemie-code/"))!;
    const source = completeLines(readFileSync(codexFixturePath(rel), "utf8"));
    const k = userTurnLines(source).at(-1)! - 1;
    const C = "019fffff-0000-7000-8000-00000000000c";
    const fork = codexFork(source, k, C, "2026-09-09T09:09:09.999Z", [U("fork question"), A("fork answer")]);
    const ws = tempDir();
    await importRolloutFiles(ws, [writeRolloutFile(rolledBackLines(fork, 8, true), `rollout-2026-09-09T12-09-09-${C}.jsonl`), codexFixturePath(rel)]);
    const f = await expectSameFamily(ws, C);
    expect(f.fork).not.toBeNull();
    expect(f.logs[0].parentId).toBe(threadOf(source));
    expect(f.logs.length).toBeGreaterThan(1);
  });
});

describe("a tampered parent line", () => {
  it("is refused as openHistory refuses it: fork_prefix_mismatch, and the grown rollout is not imported", async () => {
    const ws = tempDir();
    const all = rolledBackLines([meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")], 12, true);
    await importRolloutFiles(ws, [writeRolloutFile(all.slice(0, -10))]);
    const root = logFile(ws, THREAD);
    writeFileSync(root, readFileSync(root, "utf8").replace("first answer", "FIRST ANSWER"));
    const { linear, perLog } = await bothWays(ws, THREAD);
    expectSame(linear, perLog);
    expect(linear).toMatchObject({ error: "fork_prefix_mismatch" });
    await expect(importRolloutFiles(ws, [writeRolloutFile(all)])).rejects.toMatchObject({ kind: "fork_prefix_mismatch" });
  });

  it("in a child of the root, the Logs below it are refused the same way", async () => {
    const ws = tempDir();
    const head = [meta(THREAD), U("first"), A("first answer"), U("second"), A("second answer")];
    await importRolloutFiles(ws, [writeRolloutFile(rolledBackLines(head, 10, true))]);
    const f = (await loadFamily(ws, THREAD)) as { kind: "family"; family: Family };
    // A child that is itself a parent: its own answer changed, its children's prefix digests no longer hold.
    const parent = f.family.logs.find((l) => f.family.logs.some((c) => c.parentId === l.sessionId && l.role === "rollback"))!;
    const file = logFile(ws, parent.sessionId);
    const text = readFileSync(file, "utf8");
    const answer = /"text":"(answer \d+)"/.exec(text)![1]!;
    writeFileSync(file, text.replace(`"text":"${answer}"`, `"text":"${answer.toUpperCase()}"`));
    const { linear, perLog } = await bothWays(ws, THREAD);
    expectSame(linear, perLog);
    expect(linear).toMatchObject({ error: "fork_prefix_mismatch" });
  });
});
