// Test support: run() without a process start. The built tool's main(argv, io) runs on a worker thread
// (tool-thread.mjs, the same bundle as the bin) while this thread waits on it, so a call is synchronous
// like run() and costs no Node start-up (about 0.2 s of CPU a run). For files that check what commands
// do with data, run after run; what only a process shows (exit by signal, EPIPE, a TTY, start-up, another
// user, a kill) stays with run(), start() and sh(), and the golden cases (test/cases) run every tool as
// a process. A run this runner cannot give as a process would (another uid, another bin, TZ) is spawned.
import { MessageChannel, receiveMessageOnPort, Worker } from "node:worker_threads";
import { afterAll } from "vitest";
import { childEnv, run, runResult, type RunOptions, type RunResult, type Tool } from "./cli.js";

const TIMEOUT_MS = 120_000;
let worker: Worker | null = null;

function thread(): Worker {
  if (worker === null) {
    worker = new Worker(new URL("./tool-thread.mjs", import.meta.url));
    worker.unref();
  }
  return worker;
}

afterAll(async () => {
  await worker?.terminate();
  worker = null;
});

/** A finished run on the tool thread: as run() gives it, and stdout's exact bytes. */
export interface ThreadResult extends RunResult {
  bytes: Buffer;
}

/** run() on the tool thread: the same result, without a process start. */
export function runInThread(tool: Tool, args: string[], options: RunOptions): ThreadResult {
  const env = childEnv(options.env);
  // The time zone is the process's own: a run that sets one needs a process of its own.
  if (options.bin !== undefined || options.uid !== undefined || options.gid !== undefined || options.env?.TZ !== undefined) {
    const spawned = run(tool, args, options);
    return { ...spawned, bytes: Buffer.from(spawned.stdout, "utf8") };
  }
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const input = Buffer.from(options.input ?? "");
  thread().postMessage({ tool, argv: args, cwd: options.cwd, input, env, port: port2, flag }, [port2]);
  if (Atomics.wait(flag, 0, 0, TIMEOUT_MS) === "timed-out") {
    void worker?.terminate();
    worker = null;
    throw new Error(`${tool} ${args.join(" ")}: no answer in ${TIMEOUT_MS} ms on the tool thread`);
  }
  const answer = receiveMessageOnPort(port1)?.message as { code: number; stdout: Uint8Array; stderr: Uint8Array };
  port1.close();
  const bytes = Buffer.from(answer.stdout);
  return { ...runResult(answer.code, bytes.toString("utf8"), Buffer.from(answer.stderr).toString("utf8")), bytes };
}
