// Test support: run a tool's command in this process, through the same parser and handlers as the built
// binary (the tool's main(argv, io): runTool on its own declarations), without a process start (about
// 0.2 s of CPU each). For tests that read many views of the same data, and for the hardening suites' many
// runs; exit codes, signals, EPIPE and start-up stay tested with real processes (cli.ts run()). What
// differs from a spawned run: the worker threads of the import and scan pools are not used (there is no
// bundle next to the sources), so every task runs in this thread.
import { Readable, Writable } from "node:stream";
import type { CliIo } from "@pixir/envelope/cli";
import { childEnv, runResult, type RunOptions, type RunResult, type Tool } from "./cli.js";

type Main = (argv: string[], io: CliIo) => Promise<number>;

const LOADERS: Record<Tool, () => Promise<{ main: Main }>> = {
  "pixir-log": () => import("../../tools/pixir-log/src/main.js"),
  "pixir-fork": () => import("../../tools/pixir-fork/src/main.js"),
  "pixir-tree": () => import("../../tools/pixir-tree/src/main.js"),
  "pixir-summarize": () => import("../../tools/pixir-summarize/src/main.js"),
  pixir: () => import("../../tools/pixir/src/main.js"),
};
const mains = new Map<Tool, Main>();

export async function loadMain(tool: Tool): Promise<Main> {
  let main = mains.get(tool);
  if (main === undefined) {
    main = (await LOADERS[tool]()).main;
    mains.set(tool, main);
  }
  return main;
}

class Collector extends Writable {
  chunks: Buffer[] = [];
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    cb();
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** A finished in-process run: as run() gives it, stdout's exact bytes, and whether it hung. */
export interface InProcessResult extends RunResult {
  bytes: Buffer;
  /** The run did not finish within the time limit (a hang). */
  hung: boolean;
}

export interface InProcessOptions extends Omit<RunOptions, "bin" | "uid" | "gid"> {
  /** A run that does not finish within this time is reported as hung (code -1), never awaited forever. */
  timeoutMs?: number;
}

/** Run `tool argv` in this process, with its own stdin (`input`), collected stdout and stderr, env and cwd. */
export async function runInProcess(tool: Tool, argv: string[], options: InProcessOptions): Promise<InProcessResult> {
  const main = await loadMain(tool);
  const stdout = new Collector();
  const stderr = new Collector();
  const input = options.input === undefined ? Buffer.alloc(0) : Buffer.from(options.input);
  const stdin = Readable.from(input.length === 0 ? [] : [input]);
  const io: CliIo = { stdin, stdout, stderr, env: childEnv(options.env), cwd: options.cwd };
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), options.timeoutMs ?? 30_000);
  });
  const outcome = await Promise.race([main(argv, io), limit]);
  clearTimeout(timer);
  const bytes = stdout.bytes();
  return { ...runResult(outcome === "hung" ? -1 : outcome, bytes.toString("utf8"), stderr.bytes().toString("utf8")), bytes, hung: outcome === "hung" };
}
