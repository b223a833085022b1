// pixir: the wrapper for common jobs. It runs the same stages as the single tools, in-process, and
// holds the Writer Lease itself. This file only describes the commands.
import { processIo, runProcess, runTool, type CliIo, type CommandSpec, type ToolSpec } from "@pixir/envelope";
import { main as logMain } from "pixir-log";

declare const __PIXIR_VERSION__: string;

const COMMON = `
Options everywhere:
  --workspace DIR  the Workspace (default: $PIXIR_WORKSPACE, else the current directory)
  --json           machine output (one JSON document)
  -h, --help       this help
  --version        print the version`;

const forkSynopsis =
  "pixir fork <id> [--to-seq N] [--summarize] [--model-cmd CMD] [--model-timeout-ms N] [--strategy replay_v1|share_v1] [--child-id ID] [--strict-boundary] [--dry-run]";
const lockSynopsis = "pixir lock status <id> | pixir lock release <id> --force [--reason TEXT]";
const appendSynopsis = "pixir append <id> [--drop-ephemeral] [--wait SECONDS] [--take-over-dead-writer] [--dry-run]";

export const commands: CommandSpec[] = [
  {
    name: "fork",
    synopsis: `usage: ${forkSynopsis}`,
    help: `Usage: ${forkSynopsis}

Create a child Session whose History starts with the replayable prefix of <id>'s History through
--to-seq (default: all of it). The child Log starts with a session_fork header (lineage, counts,
prefix_digest) and is created atomically under the child's Writer Lease. With --summarize a
deterministic branch_summary of the inherited prefix is appended (or, with --model-cmd, one written by
an external command, falling back to the deterministic one). The same as
  pixir-fork --parent <id> | [pixir-summarize |] pixir-log write
in one process.

  --to-seq N           last parent seq to inherit (default: the last replayable seq)
  --summarize          append a branch_summary of the inherited prefix
  --model-cmd CMD      with --summarize: ask CMD (prompt on stdin, summary on stdout)
  --model-timeout-ms N with --model-cmd: how long to wait for it
  --strategy S         replay_v1 (copy the prefix, the default) or share_v1 (read it from the parent)
  --child-id ID        the child's session id (default: a fresh ULID)
  --strict-boundary    refuse a cut that leaves tool calls without results
  --dry-run            print the plan; create nothing, take no lease
${COMMON}

Examples:
  pixir fork P --to-seq 40 --summarize
  pixir fork P --dry-run --json | jq '{child_session_id, event_count, open_tool_calls}'
  pixir fork P --strategy share_v1 --child-id P-experiment && pixir tree P
`,
    kind: "report",
    positionals: { min: 1, max: 1 },
    options: {
      "to-seq": { type: "string", valueKind: "number" },
      summarize: { type: "boolean" },
      "model-cmd": { type: "string", valueKind: "command" },
      "model-timeout-ms": { type: "string", valueKind: "number" },
      strategy: { type: "string", valueKind: "strategy" },
      "child-id": { type: "string", valueKind: "session id" },
      "strict-boundary": { type: "boolean" },
      "dry-run": { type: "boolean" },
    },
    run: async (args, ctx) => (await import("./commands/fork.js")).runForkCommand(args, ctx, `usage: ${forkSynopsis}`),
  },
  {
    name: "log",
    synopsis: "usage: pixir log <cat|write|append|ls|check|repair|materialize|rm> [args]",
    help: "",
    kind: "report",
    positionals: { min: 0, max: 0 },
    options: {},
    delegate: (argv, io) => logMain(argv, io),
  },
  {
    name: "append",
    synopsis: `usage: ${appendSynopsis}`,
    help: "",
    kind: "report",
    positionals: { min: 0, max: 0 },
    options: {},
    delegate: (argv, io) => logMain(["append", ...argv], io),
  },
  {
    name: "lock",
    synopsis: `usage: ${lockSynopsis}`,
    help: `Usage: ${lockSynopsis}

Inspect or break a Session's Writer Lease (.pixir/session_leases/<id>.json).

  status <id>                  the lease state: available, active, stale or ambiguous (exit 0 whatever it is)
  release <id> --force         remove a stale or ambiguous lease, after writing a release record to
                               .pixir/session_leases/releases/; an active lease is never released
  --reason TEXT                with release: recorded in the release record
${COMMON}

Examples:
  pixir lock status s1
  pixir lock status s1 --json | jq .lease.holder_alive
  pixir lock release s1 --force --reason "writer was OOM-killed"
`,
    kind: "report",
    positionals: { min: 2, max: 2 },
    options: { force: { type: "boolean" }, reason: { type: "string", valueKind: "text" } },
    run: async (args, ctx) => (await import("./commands/lock.js")).runLock(args, ctx, `usage: ${lockSynopsis}`),
  },
];

export const tool: ToolSpec = {
  program: "pixir",
  version: __PIXIR_VERSION__,
  synopsis: "usage: pixir <fork|tree|log|append|lock|context|compact|repair|diff|merge|import|export> [args] [--workspace DIR] [--json]",
  help: `Usage: pixir <command> [args] [--workspace DIR] [--json]

Common jobs on pixir Session Logs, run in one process under the Writer Lease.

Commands:
  ${forkSynopsis}
  pixir log <cat|write|append|ls|check|repair|materialize|rm> ...   (the same as pixir-log)
  ${appendSynopsis}
  ${lockSynopsis}
${COMMON}

Run pixir <command> --help for one command.
`,
  commands,
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
