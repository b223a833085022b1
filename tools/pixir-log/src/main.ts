// pixir-log: Log plumbing. This file only describes the commands; each implementation is loaded
// when its command runs, and all behaviour lives in @pixir/envelope.
import { COMMON_OPTIONS_HELP, processIo, runProcess, runTool, type CliIo, type CommandSpec, type ToolSpec } from "@pixir/envelope";

declare const __PIXIR_VERSION__: string;

const COMMON = COMMON_OPTIONS_HELP;

const catSynopsis = "pixir-log cat <id> [--raw] [--from-seq N] [--to-seq N] [--type T[,T...]]... [--lenient [--exit-zero]]";
const writeSynopsis = "pixir-log write [<id>] [--allow-empty] [--take-over-dead-writer] [--dry-run]";
const appendSynopsis = "pixir-log append <id> [--drop-ephemeral] [--wait SECONDS] [--take-over-dead-writer] [--dry-run]";
const lsSynopsis = "pixir-log ls";
const checkSynopsis = "pixir-log check [<id>...]";
const repairSynopsis = "pixir-log repair <id> [--dry-run]";
const materializeSynopsis = "pixir-log materialize <id> [--dry-run]";
const rmSynopsis = "pixir-log rm <id> [--materialize-children] [--dry-run]";

export const commands: CommandSpec[] = [
  {
    name: "cat",
    synopsis: `usage: ${catSynopsis}`,
    help: `Usage: ${catSynopsis}

Print the History of Session <id> as NDJSON, one Event per line in seq order. A share_v1 child is
printed resolved (its parent's verified prefix, then its own Events). Every line is validated; a
corrupt Log prints nothing and fails with corrupt_log_line and the line number.

  --raw            the physical lines of the Log file, in file order (still validated)
  --from-seq N     keep Events with seq >= N
  --to-seq N       keep Events with seq <= N
  --type T[,T...]  keep only these types (repeatable)
  --lenient        skip corrupt lines, reporting each on stderr (exit 1 unless --exit-zero)
  --exit-zero      with --lenient: exit 0 even if lines were skipped
${COMMON}

Examples:
  pixir-log cat s1 | head -1
  pixir-log cat s1 --type user_message,assistant_message | jq -r .data.text
  pixir-log cat P | pixir-fork --to-seq 40 | pixir-summarize | pixir-log write
`,
    kind: "stream",
    positionals: { min: 1, max: 1 },
    options: {
      raw: { type: "boolean" },
      "from-seq": { type: "string", valueKind: "number" },
      "to-seq": { type: "string", valueKind: "number" },
      type: { type: "string", repeatable: true, valueKind: "type" },
      lenient: { type: "boolean" },
      "exit-zero": { type: "boolean" },
    },
    run: async (args, ctx) => (await import("./commands/cat.js")).runCat(args, ctx, `usage: ${catSynopsis}`),
  },
  {
    name: "write",
    synopsis: `usage: ${writeSynopsis}`,
    help: `Usage: ${writeSynopsis}

Write the Events on stdin to a Log. A new Log is created atomically (temp file, fsync, rename) only if
the whole stream is complete and consistent: one session_id, seqs contiguous from 0. An existing Log
is appended to all or nothing. A stream that starts with a session_fork header is a fork stream: its
header's counts and prefix_digest are verified, referenced resources are copied, and the child Log is
created only if everything matches. Takes the Session's Writer Lease.

  --allow-empty             create an empty Log from empty input (a no-op on an existing Log)
  --take-over-dead-writer   take over a stale lease whose holder provably died on this host
  --dry-run                 check the whole stream, write nothing
${COMMON}

Examples:
  pixir-log cat P | pixir-fork --to-seq 40 | pixir-summarize | pixir-log write
  pixir-log cat old --workspace A | pixir-log write --workspace B
`,
    kind: "report",
    writer: true,
    positionals: { min: 0, max: 1 },
    options: { "allow-empty": { type: "boolean" }, "take-over-dead-writer": { type: "boolean" }, "dry-run": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/write.js")).runWrite(args, ctx),
  },
  {
    name: "append",
    synopsis: `usage: ${appendSynopsis}`,
    help: `Usage: ${appendSynopsis}

Append JSON objects from stdin (one per line) to Session <id>, stamping seq, id and ts. Each object
needs a canonical "type"; data defaults to {}. Ephemeral types are refused (ephemeral_not_loggable)
unless --drop-ephemeral skips them. All or nothing; a missing Log is created. The Writer Lease is
taken before stdin is read; a held lease fails at once (exit 5) unless --wait is given.

  --drop-ephemeral          skip ephemeral Events (deltas, status) instead of failing
  --wait SECONDS            retry a held lease every 100 ms for up to SECONDS
  --take-over-dead-writer   take over a stale lease whose holder provably died on this host
  --dry-run                 check and stamp, write nothing
${COMMON}

Examples:
  echo '{"type":"user_message","data":{"text":"hi"}}' | pixir-log append s1
  agent --stream | pixir-log append s1 --drop-ephemeral --wait 10
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: {
      "drop-ephemeral": { type: "boolean" },
      wait: { type: "string", valueKind: "number" },
      "take-over-dead-writer": { type: "boolean" },
      "dry-run": { type: "boolean" },
    },
    run: async (args, ctx) => (await import("./commands/append.js")).runAppend(args, ctx, `usage: ${appendSynopsis}`),
  },
  {
    name: "ls",
    synopsis: `usage: ${lsSynopsis}`,
    help: `Usage: ${lsSynopsis}

List the Sessions that have a Log in the Workspace, one id per line in byte order. With --json, each
entry has its size, modification time, and lineage from a first-line session_fork.
${COMMON}

Examples:
  pixir-log ls
  pixir-log ls --json | jq -r '.sessions[] | select(.parent_session_id) | .session_id'
`,
    kind: "report",
    positionals: { min: 0, max: 0 },
    options: {},
    run: async (args, ctx) => (await import("./commands/ls.js")).runLs(args, ctx),
  },
  {
    name: "check",
    synopsis: `usage: ${checkSynopsis}`,
    help: `Usage: ${checkSynopsis}

Check the named Logs (default: every Log) and report every problem (what readers reject: corrupt
lines, broken fork lineage) and every warning (what readers tolerate: seq gaps, missing fields, stale
temp files, an append journal). Exit 1 with log_check_failed if there is any problem.
${COMMON}

Examples:
  pixir-log check
  pixir-log check s1 --json | jq '.logs[0].warnings'
`,
    kind: "report",
    positionals: { min: 0, max: Number.MAX_SAFE_INTEGER },
    options: {},
    run: async (args, ctx) => (await import("./commands/check.js")).runCheck(args, ctx),
  },
  {
    name: "repair",
    synopsis: `usage: ${repairSynopsis}`,
    help: `Usage: ${repairSynopsis}

Drop a torn final line (an unterminated last line that does not parse, left by a crash) and roll back
a leftover append journal. Any other corruption is reported with corrupt_log_line and left alone.

  --dry-run        report what would be dropped, change nothing
${COMMON}

Examples:
  pixir-log repair s1 --dry-run --json
  pixir-log repair s1 && pixir-log cat s1 | tail -1
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: { "dry-run": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/repair.js")).runRepair(args, ctx),
  },
  {
    name: "materialize",
    synopsis: `usage: ${materializeSynopsis}`,
    help: `Usage: ${materializeSynopsis}

Rewrite a share_v1 child as a self-contained replay_v1 Log: the parent's verified prefix is copied in,
referenced resources are copied, and the Log is replaced atomically under its Writer Lease. The
History reads the same afterwards, except that the header says strategy replay_v1 and
materialized_from share_v1. A root or replay_v1 Log is left alone (materialized: false).

  --dry-run        resolve and verify, write nothing
${COMMON}

Examples:
  pixir-log materialize child-1
  pixir-log ls --json | jq -r '.sessions[] | select(.strategy=="share_v1") | .session_id' | xargs -n1 pixir-log materialize
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: { "dry-run": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/materialize.js")).runMaterialize(args, ctx),
  },
  {
    name: "rm",
    synopsis: `usage: ${rmSynopsis}`,
    help: `Usage: ${rmSynopsis}

Delete a Session's Log and its resources folder under its Writer Lease. Refused with
share_children_exist while share_v1 children read their prefix from this Log, unless
--materialize-children first makes each of them self-contained. replay_v1 children never block.

  --materialize-children   materialize every share_v1 child first
  --dry-run                list what would be materialized and removed
${COMMON}

Examples:
  pixir-log rm old-session --dry-run --json
  pixir-log rm parent --materialize-children
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: { "materialize-children": { type: "boolean" }, "dry-run": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/rm.js")).runRm(args, ctx),
  },
];

export const tool: ToolSpec = {
  program: "pixir-log",
  version: __PIXIR_VERSION__,
  synopsis: "usage: pixir-log <cat|write|append|ls|check|repair|materialize|rm> [args] [--workspace DIR] [--json]",
  help: `Usage: pixir-log <command> [args] [--workspace DIR] [--json]

Log plumbing for pixir Session Logs (.pixir/sessions/<id>.ndjson).

Commands:
  ${catSynopsis}
  ${writeSynopsis}
  ${appendSynopsis}
  ${lsSynopsis}
  ${checkSynopsis}
  ${repairSynopsis}
  ${materializeSynopsis}
  ${rmSynopsis}
${COMMON}

Run pixir-log <command> --help for one command.
`,
  commands,
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
