// pixir-log: Log plumbing. This file declares the commands (the wrapper mounts the same declarations as
// `pixir log …` and `pixir append`); each implementation is loaded when its command runs, and all
// behaviour lives in @pixir/envelope.
import { processIo, runProcess, runTool, type CliIo, type CommandDecl, type OptionDecl, type ToolSpec } from "@pixir/envelope/cli";

declare const __PIXIR_VERSION__: string;

/** A positional that names a Session (completed with the Workspace's ids), and a switch. */
export const session = { describe: "the Session", value: "session id" } as const;
export const flag = (describe: string): OptionDecl => ({ type: "boolean", describe });

export const cat: CommandDecl = {
  command: "cat <id>",
  describe: "print the History of a Session as NDJSON",
  description: `Print the History of Session <id> as NDJSON, one Event per line in seq order. A share_v1 child is
printed resolved (its parent's verified prefix, then its own Events). Every line is validated; a
corrupt Log prints nothing and fails with corrupt_log_line and the line number.`,
  class: "stream",
  positionals: { id: session },
  options: {
    raw: { type: "boolean", describe: "the physical lines of the Log file, in file order (still validated)" },
    "from-seq": { type: "string", value: "number", describe: "keep Events with seq >= N" },
    "to-seq": { type: "string", value: "number", describe: "keep Events with seq <= N" },
    type: { type: "string", value: "type", repeatable: true, placeholder: "T[,T...]", describe: "keep only these types (a comma list; repeatable)" },
    lenient: { type: "boolean", describe: "skip corrupt lines, reporting each on stderr (exit 1 unless --exit-zero)" },
    "exit-zero": { type: "boolean", describe: "with --lenient: exit 0 even if lines were skipped" },
  },
  examples: [
    "$0 s1 | head -1",
    "$0 s1 --type user_message,assistant_message | jq -r .data.text",
    "$0 P | pixir-fork --to-seq 40 | pixir-summarize | pixir-log write",
  ],
  handler: async (args, ctx) => (await import("./commands/cat.js")).runCat(args, ctx),
};

export const write: CommandDecl = {
  command: "write [id]",
  describe: "write the Events on stdin to a Log, all or nothing",
  description: `Write the Events on stdin to a Log. A new Log is created atomically (temp file, fsync, rename) only if
the whole stream is complete and consistent: one session_id, seqs contiguous from 0. An existing Log
is appended to all or nothing. A stream that starts with a session_fork header is a fork stream: its
header's counts and prefix_digest are verified, referenced resources are copied, and the child Log is
created only if everything matches. Takes the Session's Writer Lease.`,
  writer: true,
  positionals: { id: { describe: "the Session (default: the stream's one session_id)", value: "session id", newSession: true } },
  options: {
    "allow-empty": { type: "boolean", describe: "create an empty Log from empty input (a no-op on an existing Log)" },
    "dry-run": flag("check the whole stream, write nothing"),
  },
  examples: ["pixir-log cat P | pixir-fork --to-seq 40 | pixir-summarize | $0", "pixir-log cat old --workspace A | $0 --workspace B"],
  handler: async (args, ctx) => (await import("./commands/write.js")).runWrite(args, ctx),
};

export const append: CommandDecl = {
  command: "append <id>",
  describe: "append JSON objects from stdin to a Session, stamping seq, id and ts",
  description: `Append JSON objects from stdin (one per line) to Session <id>, stamping seq, id and ts. Each object
needs a canonical "type"; data defaults to {}. Ephemeral types are refused (ephemeral_not_loggable)
unless --drop-ephemeral skips them. All or nothing; a missing Log is created. The Writer Lease is
taken before stdin is read; a held lease fails at once (exit 5) unless --wait is given.`,
  writer: true,
  // A missing Log is created: the id is taken literally, never completed from a prefix (archive.md §1).
  positionals: { id: { ...session, newSession: true } },
  options: {
    "drop-ephemeral": { type: "boolean", describe: "skip ephemeral Events (deltas, status) instead of failing" },
    wait: { type: "string", value: "number", placeholder: "SECONDS", describe: "retry a held lease every 100 ms for up to SECONDS" },
    "dry-run": flag("check and stamp, write nothing"),
  },
  examples: [`echo '{"type":"user_message","data":{"text":"hi"}}' | $0 s1`, "agent --stream | $0 s1 --drop-ephemeral --wait 10"],
  handler: async (args, ctx) => (await import("./commands/append.js")).runAppend(args, ctx),
};

export const ls: CommandDecl = {
  command: "ls",
  describe: "list the Sessions that have a Log in the Workspace",
  description: `List the Sessions that have a Log in the Workspace, one id per line in byte order. With --json, each
entry has its size, modification time, and lineage from a first-line session_fork.`,
  examples: ["$0", "$0 --json | jq -r '.sessions[] | select(.parent_session_id) | .session_id'"],
  handler: async (args, ctx) => (await import("./commands/ls.js")).runLs(args, ctx),
};

export const check: CommandDecl = {
  command: "check [ids..]",
  describe: "check Logs and report every problem and warning",
  description: `Check the named Logs (default: every Log) and report every problem (what readers reject: corrupt
lines, broken fork lineage) and every warning (what readers tolerate: seq gaps, missing fields, stale
temp files, an append journal). Exit 1 with log_check_failed if there is any problem.`,
  positionals: { ids: { describe: "the Sessions (default: every Log)", value: "session id" } },
  examples: ["$0", "$0 s1 --json | jq '.logs[0].warnings'"],
  handler: async (args, ctx) => (await import("./commands/check.js")).runCheck(args, ctx),
};

export const repair: CommandDecl = {
  command: "repair <id>",
  describe: "drop a torn final line and roll back a leftover append journal",
  description: `Drop a torn final line (an unterminated last line that does not parse, left by a crash) and roll back
a leftover append journal. Any other corruption is reported with corrupt_log_line and left alone.`,
  writer: true,
  positionals: { id: session },
  options: { "dry-run": flag("report what would be dropped, change nothing") },
  examples: ["$0 s1 --dry-run --json", "$0 s1 && pixir-log cat s1 | tail -1"],
  handler: async (args, ctx) => (await import("./commands/repair.js")).runRepair(args, ctx),
};

export const materialize: CommandDecl = {
  command: "materialize <id>",
  describe: "rewrite a share_v1 child as a self-contained replay_v1 Log",
  description: `Rewrite a share_v1 child as a self-contained replay_v1 Log: the parent's verified prefix is copied in,
referenced resources are copied, and the Log is replaced atomically under its Writer Lease. The
History reads the same afterwards, except that the header says strategy replay_v1 and
materialized_from share_v1. A root or replay_v1 Log is left alone (materialized: false).`,
  writer: true,
  positionals: { id: session },
  options: { "dry-run": flag("resolve and verify, write nothing") },
  examples: ["$0 child-1", `pixir-log ls --json | jq -r '.sessions[] | select(.strategy=="share_v1") | .session_id' | xargs -n1 $0`],
  handler: async (args, ctx) => (await import("./commands/materialize.js")).runMaterialize(args, ctx),
};

export const rm: CommandDecl = {
  command: "rm <id>",
  describe: "delete a Session's Log and its resources",
  description: `Delete a Session's Log and its resources folder under its Writer Lease. Refused with
share_children_exist while share_v1 children read their prefix from this Log, unless
--materialize-children first makes each of them self-contained. replay_v1 children never block.`,
  writer: true,
  positionals: { id: session },
  options: {
    "materialize-children": { type: "boolean", describe: "materialize every share_v1 child first" },
    "dry-run": flag("list what would be materialized and removed"),
  },
  examples: ["$0 old-session --dry-run --json", "$0 parent --materialize-children"],
  handler: async (args, ctx) => (await import("./commands/rm.js")).runRm(args, ctx),
};

export const tool: ToolSpec = {
  program: "pixir-log",
  version: __PIXIR_VERSION__,
  description: "Log plumbing for pixir Session Logs (.pixir/sessions/<id>.ndjson).",
  commands: [cat, write, append, ls, check, repair, materialize, rm],
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
