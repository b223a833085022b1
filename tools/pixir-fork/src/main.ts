// pixir-fork: stream filter from a parent History to a fork-child stream. Describes the command only;
// the implementation is loaded when it runs, and the rules live in @pixir/envelope.
import { processIo, runProcess, runTool, type CliIo, type ToolSpec } from "@pixir/envelope";

declare const __PIXIR_VERSION__: string;

export const SYNOPSIS =
  "pixir-fork [--parent <id>] [--to-seq N] [--strategy replay_v1|share_v1] [--child-id ID] [--strict-boundary] [--dry-run] [--workspace DIR] [--json]";

const HELP = `Usage: ${SYNOPSIS}

Read a parent Session's History (stdin, as printed by pixir-log cat, or the Log of --parent <id>) and
print the stream of a new child Session: a session_fork header at seq 0 that states how many Events
follow (replay_event_count) and the prefix_digest of the inherited prefix, then (replay_v1) the
inherited Events renumbered 1..N with new ids and their ts and data unchanged. share_v1 prints only
the header; readers resolve the prefix from the parent. pixir-log write creates the child from it.

Inherited are the replayable Events (user/assistant messages, reasoning, skill activations, subagent
and workflow events, tool calls and results, permission decisions) with seq <= --to-seq.

  --parent <id>        read the parent Log from the Workspace (stdin is ignored)
  --to-seq N           last parent seq to inherit (default: the last replayable seq)
  --strategy S         replay_v1 (default) or share_v1
  --child-id ID        the child's session id (default: a fresh ULID)
  --strict-boundary    refuse a cut that leaves tool calls without results
  --dry-run            print the fork plan instead of the stream
  --workspace DIR      the Workspace (default: $PIXIR_WORKSPACE, else the current directory)
  --json               machine output (the plan with --dry-run; errors as JSON)
  -h, --help           this help
  --version            print the version

Examples:
  pixir-log cat P | pixir-fork --to-seq 40 | pixir-summarize | pixir-log write
  pixir-fork --parent P --strategy share_v1 --child-id P-try2 | pixir-log write
  pixir-fork --parent P --to-seq 12 --dry-run --json | jq .open_tool_calls
`;

export const tool: ToolSpec = {
  program: "pixir-fork",
  version: __PIXIR_VERSION__,
  synopsis: `usage: ${SYNOPSIS}`,
  help: HELP,
  commands: [
    {
      name: "",
      synopsis: `usage: ${SYNOPSIS}`,
      help: HELP,
      kind: (args) => (args.flags["dry-run"] === true ? "report" : "stream"),
      positionals: { min: 0, max: 0 },
      options: {
        parent: { type: "string", valueKind: "session id" },
        "to-seq": { type: "string", valueKind: "number" },
        strategy: { type: "string", valueKind: "strategy" },
        "child-id": { type: "string", valueKind: "session id" },
        "strict-boundary": { type: "boolean" },
        "dry-run": { type: "boolean" },
      },
      run: async (args, ctx) => (await import("./commands/fork.js")).runFork(args, ctx, `usage: ${SYNOPSIS}`),
    },
  ],
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
