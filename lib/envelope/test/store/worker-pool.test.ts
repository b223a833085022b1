// WorkerPool (store/worker-pool.ts) on real worker threads: every task ends with one outcome whatever
// happens to its worker; a lost task is cut and run here, or given its owner's outcome; close() lets the
// tasks `finishes` names end and stops the rest.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { threadId } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { WorkerPool } from "../../src/store/worker-pool.js";

interface Task {
  name: string;
  /** What the worker does: answer after `ms`, or exit its thread at once. */
  act: "answer" | "die";
  ms?: number;
}
interface Outcome {
  name: string;
  by: "worker" | "here" | "lost" | "stopped";
  thread: number;
  /** Tasks the answering worker held when this one started. */
  held?: number;
}

// The worker speaks the pool's protocol ({id, task} in, {id, outcome} out) as serveTasks does.
const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-pool-"));
const workerFile = path.join(dir, "worker.mjs");
writeFileSync(
  workerFile,
  `import { parentPort, threadId } from "node:worker_threads";
let held = 0;
parentPort.on("message", ({ id, task }) => {
  if (task.act === "die") process.exit(3);
  held++;
  const atStart = held;
  setTimeout(() => { held--; parentPort.postMessage({ id, outcome: { name: task.name, by: "worker", thread: threadId, held: atStart } }); }, task.ms ?? 0);
});
`,
);
const url = pathToFileURL(workerFile);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const here = async (task: Task): Promise<Outcome> => ({ name: task.name, by: "here", thread: threadId });
const stopped: Outcome = { name: "", by: "stopped", thread: -1 };

describe("WorkerPool", () => {
  it("runs tasks on its workers, at most perWorker at once on each", async () => {
    const pool = WorkerPool.open<Task, Outcome>(url, 2, here, () => {}, { perWorker: 2 });
    const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => pool.run({ name: `t${i}`, act: "answer", ms: 30 })));
    await pool.close(stopped);
    expect(outcomes.map((o) => o.name)).toEqual(Array.from({ length: 8 }, (_, i) => `t${i}`));
    expect(outcomes.every((o) => o.by === "worker" && o.thread !== threadId)).toBe(true);
    expect(new Set(outcomes.map((o) => o.thread)).size).toBe(2);
    expect(Math.max(...outcomes.map((o) => o.held!))).toBe(2);
  });

  it("with laneHere, this thread is a lane: one worker fewer, and both share the queue", async () => {
    const pool = WorkerPool.open<Task, Outcome>(url, 2, here, () => {}, { perWorker: 1, laneHere: true });
    const outcomes = await Promise.all(Array.from({ length: 12 }, (_, i) => pool.run({ name: `t${i}`, act: "answer", ms: 10 })));
    await pool.close(stopped);
    expect(outcomes.map((o) => o.name)).toEqual(Array.from({ length: 12 }, (_, i) => `t${i}`));
    const workers = new Set(outcomes.filter((o) => o.by === "worker").map((o) => o.thread));
    expect(workers.size).toBe(1);
    expect(workers.has(threadId)).toBe(false);
    expect(outcomes.some((o) => o.by === "here" && o.thread === threadId)).toBe(true);
    expect(outcomes.some((o) => o.by === "worker")).toBe(true);
  });

  it("runs every task here with one thread, or when the worker file is missing", async () => {
    const one = WorkerPool.open<Task, Outcome>(url, 1, here, () => {});
    expect(await one.run({ name: "a", act: "answer" })).toEqual({ name: "a", by: "here", thread: threadId });
    const missing = WorkerPool.open<Task, Outcome>(pathToFileURL(path.join(dir, "absent.mjs")), 2, here, () => {});
    expect((await missing.run({ name: "b", act: "answer" })).by).toBe("here");
  });

  it("cuts a task whose worker died and runs it here; the other tasks still end on the other worker", async () => {
    const cut: string[] = [];
    const pool = WorkerPool.open<Task, Outcome>(url, 2, here, (t) => cut.push(t.name));
    const outcomes = await Promise.all([pool.run({ name: "dies", act: "die" }), pool.run({ name: "lives", act: "answer", ms: 20 }), pool.run({ name: "later", act: "answer", ms: 5 })]);
    await pool.close(stopped);
    expect(outcomes.find((o) => o.name === "dies")!.by).toBe("here");
    expect(cut).toEqual(["dies"]);
    expect(outcomes.filter((o) => o.name !== "dies").every((o) => o.by === "worker" || o.by === "here")).toBe(true);
    expect(outcomes.map((o) => o.name).sort()).toEqual(["dies", "later", "lives"]);
  });

  it("gives a lost task its owner's outcome when `lost` names one, without cutting it", async () => {
    const cut: string[] = [];
    const pool = WorkerPool.open<Task, Outcome>(url, 2, here, (t) => cut.push(t.name), { lost: (t) => ({ name: t.name, by: "lost", thread: -1 }) });
    const outcome = await pool.run({ name: "dies", act: "die" });
    await pool.close(stopped);
    expect(outcome).toEqual({ name: "dies", by: "lost", thread: -1 });
    expect(cut).toEqual([]);
  });

  it("close() lets a task `finishes` names end; running, queued and later tasks get `stopped` and are cut", async () => {
    const cut: string[] = [];
    const pool = WorkerPool.open<Task, Outcome>(url, 2, here, (t) => cut.push(t.name), { finishes: (t) => t.name === "commit" });
    const commit = pool.run({ name: "commit", act: "answer", ms: 150 });
    const stream = pool.run({ name: "stream", act: "answer", ms: 5_000 });
    const queued = pool.run({ name: "queued", act: "answer", ms: 10 });
    await new Promise((r) => setTimeout(r, 50));
    await pool.close(stopped);
    expect((await commit).by).toBe("worker");
    expect(await stream).toEqual(stopped);
    expect(await queued).toEqual(stopped);
    expect(await pool.run({ name: "after", act: "answer" })).toEqual(stopped);
    expect(cut).toEqual(["stream"]);
    // Every call to close() waits for the same end.
    await expect(pool.close(stopped)).resolves.toBeUndefined();
  });
});
