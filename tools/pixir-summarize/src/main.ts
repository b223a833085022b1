// pixir-summarize: stream filter that passes a fork stream through and appends a branch_summary.
// Declares the command only; the implementation is loaded when it runs, and the rules live in
// @pixir/envelope (summary.ts).
import { processIo, runProcess, runTool, SUMMARY_FORMATS, type CliIo, type CommandDecl, type OptionDecl, type ToolSpec } from "@pixir/envelope/cli";

declare const __PIXIR_VERSION__: string;

/** The flags of a model-assisted summary, shared with `pixir fork --summarize` and `pixir merge`. */
export const MODEL_OPTIONS: Readonly<Record<string, OptionDecl>> = {
  "model-cmd": { type: "string", value: "command", describe: "ask CMD (run with sh -c in the Workspace, prompt on stdin) for the summary text; on failure fall back to the deterministic summary with a warning" },
  "model-timeout-ms": { type: "string", value: "number", describe: "with --model-cmd: how long CMD may run (default 120000), then SIGTERM and SIGKILL" },
};

export const summarize: CommandDecl = {
  command: "pixir-summarize",
  describe: "pass a fork stream through and append a branch_summary",
  description: `Read a fork stream (a session_fork header at seq 0, as printed by pixir-fork) on stdin, pass every line
through unchanged and append a branch_summary Event that condenses the inherited prefix
(deterministic_operational_summary_v1: event counts, tool calls, files touched, the latest
conversational excerpts). The last input line is held back and written only together with the summary,
so if anything fails the stream downstream is short and pixir-log write refuses it. The header's count
and prefix_digest are checked; a compact share_v1 stream has its prefix resolved from the parent Log in
the Workspace. Nothing is written to disk and no lease is taken. With --json, errors and warnings go to
stderr as JSON lines.`,
  class: "stream",
  options: {
    format: { type: "string", value: "format", choices: SUMMARY_FORMATS, default: "ndjson", describe: "ndjson: the stream plus the branch_summary; text: only the summary as a model would see it" },
    ...MODEL_OPTIONS,
  },
  examples: [
    "pixir-log cat P | pixir-fork --to-seq 40 | $0 | pixir-log write",
    "pixir-fork --parent P --strategy share_v1 | $0 --format text",
    "pixir-fork --parent P | $0 --model-cmd 'llm -m small' | pixir-log write",
  ],
  handler: async (args, ctx) => (await import("./commands/summarize.js")).runSummarize(args, ctx),
};

export const tool: ToolSpec = {
  program: "pixir-summarize",
  version: __PIXIR_VERSION__,
  description: summarize.describe,
  single: summarize,
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
