// Test support: run a tool's command in this process, through the same parser and handlers as the built
// binary (runTool on the tool's own declarations), without a process start (~0.2 s of CPU each). For tests
// that read many views of the same data; exit codes, signals, EPIPE and start-up stay tested with real
// processes (cli.ts run()). What differs from a spawned run: the worker threads of the import and scan
// pools are not used (no bundle next to the source), so those run every task here.
import { Readable, Writable } from "node:stream";
import { runTool, type CliIo, type ToolSpec } from "@pixir/envelope/cli";
import { childEnv, runResult, type RunOptions, type RunResult, type Tool } from "./cli.js";

const specs: Record<Tool, () => Promise<ToolSpec>> = {
  pixir: async () => (await import("../../tools/pixir/src/main.js")).tool,
  "pixir-log": async () => (await import("pixir-log")).tool,
  "pixir-fork": async () => (await import("pixir-fork")).tool,
  "pixir-tree": async () => (await import("pixir-tree")).tool,
  "pixir-summarize": async () => (await import("pixir-summarize")).tool,
};

/** A finished in-process run: as run() gives it, and stdout's exact bytes. */
export interface InProcessResult extends RunResult {
  bytes: Buffer;
}

function sink(chunks: Buffer[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
}

/** Run `tool args` in this process; the options of run() (uid, gid and bin do not apply here). */
export async function runInProcess(tool: Tool, args: string[], options: RunOptions): Promise<InProcessResult> {
  if (options.bin !== undefined || options.uid !== undefined || options.gid !== undefined) throw new Error("runInProcess: bin, uid and gid need a real process (run())");
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const input = options.input === undefined || options.input === "" ? [] : [Buffer.from(options.input)];
  const io: CliIo = { stdin: Readable.from(input), stdout: sink(out), stderr: sink(err), env: childEnv(options.env), cwd: options.cwd, signal: new AbortController().signal };
  const code = await runTool(await specs[tool](), args, io);
  const bytes = Buffer.concat(out);
  return { ...runResult(code, bytes.toString("utf8"), Buffer.concat(err).toString("utf8")), bytes };
}
