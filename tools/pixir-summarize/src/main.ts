// pixir-summarize: stream filter that passes a fork stream through and appends a branch_summary.
// Describes the command only; the implementation is loaded when it runs, and the rules live in
// @pixir/envelope (summary.ts).
import { processIo, runProcess, runTool, type CliIo, type ToolSpec } from "@pixir/envelope";

declare const __PIXIR_VERSION__: string;

export const SYNOPSIS = "pixir-summarize [--format ndjson|text] [--model-cmd CMD] [--model-timeout-ms N] [--workspace DIR] [--json]";

const HELP = `Usage: ${SYNOPSIS}

Read a fork stream (a session_fork header at seq 0, as printed by pixir-fork) on stdin, pass every line
through unchanged and append a branch_summary Event that condenses the inherited prefix
(deterministic_operational_summary_v1: event counts, tool calls, files touched, the latest
conversational excerpts). The last input line is held back and written only together with the summary,
so if anything fails the stream downstream is short and pixir-log write refuses it. The header's count
and prefix_digest are checked; a compact share_v1 stream has its prefix resolved from the parent Log in
the Workspace. Nothing is written to disk and no lease is taken.

  --format F             ndjson (default): the stream plus the branch_summary;
                         text: only the summary as a model would see it
  --model-cmd CMD        ask CMD (run with sh -c in the Workspace, prompt on stdin) for the summary text;
                         on failure fall back to the deterministic summary with a warning
  --model-timeout-ms N   how long CMD may run (default 120000), then SIGTERM and SIGKILL
  --workspace DIR        the Workspace (default: $PIXIR_WORKSPACE, else the current directory)
  --json                 errors and warnings on stderr as JSON lines
  -h, --help             this help
  --version              print the version

Examples:
  pixir-log cat P | pixir-fork --to-seq 40 | pixir-summarize | pixir-log write
  pixir-fork --parent P --strategy share_v1 | pixir-summarize --format text
  pixir-fork --parent P | pixir-summarize --model-cmd 'llm -m small' | pixir-log write
`;

export const tool: ToolSpec = {
  program: "pixir-summarize",
  version: __PIXIR_VERSION__,
  synopsis: `usage: ${SYNOPSIS}`,
  help: HELP,
  commands: [
    {
      name: "",
      synopsis: `usage: ${SYNOPSIS}`,
      help: HELP,
      kind: "stream",
      positionals: { min: 0, max: 0 },
      options: {
        format: { type: "string", valueKind: "format" },
        "model-cmd": { type: "string", valueKind: "command" },
        "model-timeout-ms": { type: "string", valueKind: "number" },
      },
      run: async (args, ctx) => (await import("./commands/summarize.js")).runSummarize(args, ctx, `usage: ${SYNOPSIS}`),
    },
  ],
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
