// pixir-fork: stream filter from a parent History to a fork-child stream. Declares the command only;
// the implementation is loaded when it runs, and the rules live in @pixir/envelope.
import { FORK_STRATEGIES, processIo, runProcess, runTool, type CliIo, type CommandDecl, type OptionDecl, type ToolSpec } from "@pixir/envelope/cli";

declare const __PIXIR_VERSION__: string;

/** The flags of a fork, shared with `pixir fork`. */
export const FORK_OPTIONS: Readonly<Record<string, OptionDecl>> = {
  "to-seq": { type: "string", value: "number", describe: "last parent seq to inherit (default: the last replayable seq)" },
  strategy: { type: "string", value: "strategy", choices: FORK_STRATEGIES, default: "replay_v1", describe: "replay_v1 copies the prefix into the child; share_v1 reads it from the parent" },
  "child-id": { type: "string", value: "session id", newSession: true, describe: "the child's session id (default: a fresh ULID)" },
  "strict-boundary": { type: "boolean", describe: "refuse a cut that leaves tool calls without results" },
};

export const fork: CommandDecl = {
  command: "pixir-fork",
  describe: "print the fork stream of a new child Session",
  description: `Read a parent Session's History (stdin, as printed by pixir-log cat, or the Log of --parent <id>) and
print the stream of a new child Session: a session_fork header at seq 0 that states how many Events
follow (replay_event_count) and the prefix_digest of the inherited prefix, then (replay_v1) the
inherited Events renumbered 1..N with new ids and their ts and data unchanged. share_v1 prints only
the header; readers resolve the prefix from the parent. pixir-log write creates the child from it.

Inherited are the replayable Events (user/assistant messages, reasoning, skill activations, subagent
and workflow events, tool calls and results, permission decisions) with seq <= --to-seq.`,
  class: (args) => (args.flags["dry-run"] === true ? "report" : "stream"),
  options: {
    parent: { type: "string", value: "session id", describe: "read the parent Log from the Workspace (stdin is ignored)" },
    ...FORK_OPTIONS,
    "dry-run": { type: "boolean", describe: "print the fork plan instead of the stream (with --json: the plan)" },
  },
  examples: [
    "pixir-log cat P | $0 --to-seq 40 | pixir-summarize | pixir-log write",
    "$0 --parent P --strategy share_v1 --child-id P-try2 | pixir-log write",
    "$0 --parent P --to-seq 12 --dry-run --json | jq .open_tool_calls",
  ],
  handler: async (args, ctx) => (await import("./commands/fork.js")).runFork(args, ctx),
};

export const tool: ToolSpec = {
  program: "pixir-fork",
  version: __PIXIR_VERSION__,
  description: fork.describe,
  single: fork,
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
