// pixir: the wrapper for common jobs. It runs the same stages as the single tools, in-process, and
// holds the Writer Lease itself. This file only describes the commands.
import { COMMON_OPTIONS_HELP, processIo, runProcess, runTool, type CliIo, type CommandSpec, type ToolSpec } from "@pixir/envelope";
import { main as logMain } from "pixir-log";
import { main as treeMain } from "pixir-tree";

declare const __PIXIR_VERSION__: string;

const COMMON = COMMON_OPTIONS_HELP;

const forkSynopsis =
  "pixir fork <id> [--to-seq N] [--summarize] [--model-cmd CMD] [--model-timeout-ms N] [--strategy replay_v1|share_v1] [--child-id ID] [--strict-boundary] [--dry-run]";
const lockSynopsis = "pixir lock status <id> | pixir lock release <id> --force [--reason TEXT]";
const appendSynopsis = "pixir append <id> [--drop-ephemeral] [--wait SECONDS] [--take-over-dead-writer] [--dry-run]";
const repairSynopsis = "pixir repair <id> [--dry-run]";
const diffSynopsis = "pixir diff <a> <b> [--exit-code]";
const contextSynopsis = "pixir context <id> [--format ndjson|text]";
const compactSynopsis = "pixir compact <id> [--tail-events N] [--dry-run]";
const mergeSynopsis = "pixir merge <child> --into <parent> [--model-cmd CMD] [--model-timeout-ms N] [--dry-run]";
const piImportSynopsis = "pixir import pi FILE... [--lenient] [--dry-run]";
const codexImportSynopsis = "pixir import codex [PATH...] [--lenient] [--dry-run]";
const claudeImportSynopsis = "pixir import claude [PATH...] [--lenient] [--dry-run]";
const importSynopsis = `${piImportSynopsis} | ${codexImportSynopsis} | ${claudeImportSynopsis}`;
const piExportSynopsis = "pixir export pi <id> [--out FILE|DIR] [--dry-run]";
const codexExportSynopsis = "pixir export codex <id> [--out DIR] [--dry-run]";
const claudeExportSynopsis = "pixir export claude <id> [--out DIR] [--dry-run]";
const htmlExportSynopsis = "pixir export html <id> [--out FILE] [--family|--no-family] [--max-depth N] [--dry-run]";
const mdExportSynopsis = "pixir export md <id> [--out FILE] [--tools full|summary|none] [--dry-run]";
const exportSynopsis = `${piExportSynopsis} | ${codexExportSynopsis} | ${claudeExportSynopsis} | ${htmlExportSynopsis} | ${mdExportSynopsis}`;

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

  --to-seq N            last parent seq to inherit (default: the last replayable seq)
  --summarize           append a branch_summary of the inherited prefix
  --model-cmd CMD       with --summarize: ask CMD (prompt on stdin, summary on stdout)
  --model-timeout-ms N  with --model-cmd: how long to wait for it
  --strategy S          replay_v1 (copy the prefix, the default) or share_v1 (read it from the parent)
  --child-id ID         the child's session id (default: a fresh ULID)
  --strict-boundary     refuse a cut that leaves tool calls without results
  --dry-run             print the plan; create nothing, take no lease
${COMMON}

Examples:
  pixir fork P --to-seq 40 --summarize
  pixir fork P --dry-run --json | jq '{child_session_id, event_count, open_tool_calls}'
  pixir fork P --strategy share_v1 --child-id P-experiment && pixir tree P
`,
    kind: "report",
    writer: true,
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
    delegate: (argv, io) => logMain(argv, { ...io, programAlias: ["pixir-log", "pixir log"] }),
  },
  {
    name: "tree",
    synopsis: "usage: pixir tree [<id>] [--max-depth N] [--format text|json|dot|mermaid]",
    help: "",
    kind: "report",
    positionals: { min: 0, max: 0 },
    options: {},
    delegate: (argv, io) => treeMain(argv, { ...io, programAlias: ["pixir-tree", "pixir tree"] }),
  },
  {
    name: "append",
    synopsis: `usage: ${appendSynopsis}`,
    help: "",
    kind: "report",
    positionals: { min: 0, max: 0 },
    options: {},
    delegate: (argv, io) => logMain(["append", ...argv], { ...io, programAlias: ["pixir-log append", "pixir append"] }),
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
  {
    name: "repair",
    synopsis: `usage: ${repairSynopsis}`,
    help: `Usage: ${repairSynopsis}

Close a crashed turn. First does what pixir-log repair does (drop a torn final line, roll back a
leftover append journal); then, for every tool_call in <id>'s History with no later tool_result of
the same call_id, appends a fallback tool_result (ok: false, error kind "interrupted",
repaired: true), all in one append under the Writer Lease. A second run finds nothing to do.

  --dry-run        report what would be dropped and closed; change nothing, take no lease
${COMMON}

Examples:
  pixir repair s1 --dry-run --json | jq .closed_tool_calls
  pixir repair s1 && pixir context s1 --format text | tail
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: { "dry-run": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/repair.js")).runRepair(args, ctx),
  },
  {
    name: "diff",
    synopsis: `usage: ${diffSynopsis}`,
    help: `Usage: ${diffSynopsis}

Where two resolved Histories diverge. Only replayable Events are compared (the types a fork
inherits), in seq order, by the canonical JSON of [type, ts, data], so a Session and its fork child
share a prefix although their ids and seqs differ. The relation (same, a_is_ancestor_of_b,
b_is_ancestor_of_a, same_fork_root, unrelated) comes from the session_fork lineage. Reads only.

  --exit-code      exit 1 when the Histories are not identical (like diff(1))
${COMMON}

Examples:
  pixir diff P P-experiment
  pixir diff P P-experiment --json | jq '{relation, common_prefix_events, diverged_at}'
  pixir diff a b --exit-code >/dev/null || echo "a and b differ"
`,
    kind: "report",
    positionals: { min: 2, max: 2 },
    options: { "exit-code": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/diff.js")).runDiff(args, ctx),
  },
  {
    name: "context",
    synopsis: `usage: ${contextSynopsis}`,
    help: `Usage: ${contextSynopsis}

Print what a model would see of Session <id>: the Responses API input items Pixir's provider fold
would send, one per line. The latest history_compaction checkpoint stands for everything through its
range.to_seq; a tool call left without its result gets Pixir's synthetic orphan output; a skill
activation follows its skill_view result; checkpoints, branch summaries, skills and finished subagents
are user text; usage, lineage, failures, workflow and partial answers give no item. A share_v1 child
is read resolved. Writes nothing.

  --format ndjson  one {"seq","id","type","item"} object per item (the default); seq, id and type
                   name the Event the item comes from
  --format text    a "[<seq>] <role or item type> <type>" line, the text or JSON body, an empty line
${COMMON}

Examples:
  pixir context s1 --format text | less
  pixir context s1 | jq -s 'map(.item)' > input.json
  pixir compact s1 --tail-events 20 && pixir context s1 | head -1 | jq -r '.item.content[0].text'
`,
    kind: "stream",
    positionals: { min: 1, max: 1 },
    options: { format: { type: "string", valueKind: "format" } },
    run: async (args, ctx) => (await import("./commands/context.js")).runContext(args, ctx, `usage: ${contextSynopsis}`),
  },
  {
    name: "compact",
    synopsis: `usage: ${compactSynopsis}`,
    help: `Usage: ${compactSynopsis}

Record a deterministic history_compaction checkpoint for Session <id>, as Pixir computes it:
everything but the last N candidate Events is condensed (counts, tool calls, files touched, recent
conversational excerpts, compacted skill activations), and the previous checkpoint is carried forward. The checkpoint is appended at the next seq under the
Writer Lease; no line of the Log is rewritten, and pixir context then shows the checkpoint in place of
the Events it stands for. A History of N Events or fewer has nothing to compact (exit 0).

  --tail-events N  how many of the latest Events stay visible after the checkpoint (default 40;
                   a positive integer)
  --dry-run        print the checkpoint that would be recorded; create nothing, take no lease
${COMMON}

Examples:
  pixir compact s1 --dry-run --json | jq .event.summary -r
  pixir compact s1 --tail-events 20
  pixir compact s1 && pixir context s1 --format text | head -20
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: { "tail-events": { type: "string", valueKind: "positive integer" }, "dry-run": { type: "boolean" } },
    run: async (args, ctx) => (await import("./commands/compact.js")).runCompact(args, ctx, `usage: ${compactSynopsis}`),
  },
  {
    name: "merge",
    synopsis: `usage: ${mergeSynopsis}`,
    help: `Usage: ${mergeSynopsis}

Merge a fork child back without rewriting anything: the child's own Events (those after its inherited
prefix) are condensed into one branch_summary (the deterministic summary rules, or with --model-cmd
an external command's text) carrying a "merge" record, and appended to the parent under the parent's
Writer Lease. The child must be a fork of the parent (its first line is a session_fork naming it).
Every earlier byte of the parent stays as it was; the child is only read.

  --into <parent>       the parent Session (required)
  --model-cmd CMD       ask CMD (prompt on stdin, summary on stdout); falls back to the deterministic text
  --model-timeout-ms N  with --model-cmd: how long CMD may run (default 120000)
  --dry-run             print the branch_summary that would be appended; create nothing, take no lease
${COMMON}

Examples:
  pixir merge P-experiment --into P
  pixir merge P-experiment --into P --dry-run --json | jq .event.summary -r
  pixir merge P-experiment --into P --model-cmd 'llm -m small' && pixir context P --format text | tail
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: 1 },
    options: {
      into: { type: "string", valueKind: "session id" },
      "model-cmd": { type: "string", valueKind: "command" },
      "model-timeout-ms": { type: "string", valueKind: "number" },
      "dry-run": { type: "boolean" },
    },
    run: async (args, ctx) => (await import("./commands/merge.js")).runMerge(args, ctx, `usage: ${mergeSynopsis}`),
  },
  {
    name: "import",
    synopsis: `usage: ${importSynopsis}`,
    help: `Usage: ${importSynopsis}

Import session files of the pi coding agent (versions 1, 2 and 3; the files are only read) as fork
families of Logs. The branch pi would resume (the last line) becomes the Log named by the header id;
every other leaf becomes a share_v1 child <id>.<leaf entry id> holding only the entries its branch adds.
pi's metadata (model and thinking-level changes, labels, names, extension state) rides in data.pi of
workflow_event Events; images become Session Resources. Event ids are derived from the entry ids, so
importing the same file again changes nothing and reports "unchanged"; a Log of the family that differs
on disk is refused (already_exists) and nothing is written.

import codex reads Codex CLI rollouts (files, or directories walked for *.jsonl; default
$CODEX_HOME/sessions, else ~/.codex/sessions). Each thread becomes a root Log named by its thread id, a
backtrack a share_v1 child <id>.rollback-<line>, a codex fork a share_v1 child of its source; subagents
are linked from their parent. Every line keeps its record, so export codex gives the file back byte for
byte. Again: unchanged threads are skipped, resumed ones get only their new lines appended, a thread
whose earlier lines changed is refused (already_exists, reason rollout_changed) and nothing is written.

  --lenient   skip lines that are not valid JSON (reported as skipped_lines) instead of failing
  --dry-run   plan and check everything; create nothing, take no lease

pixir import claude reads Claude Code transcripts (default: $CLAUDE_CONFIG_DIR/projects, else
~/.claude/projects; a PATH is a transcript, a project directory or a projects root). The chain Claude
resumes becomes the Log named by the session id; every rewind or edited prompt a share_v1 child
<id>.<uuid> holding only its own records; subagent transcripts their own Logs <id>.agent-<agentId>,
linked by subagent_event; a compact summary a history_compaction checkpoint. Every line comes back
byte for byte from data.claude. Run again, it appends only what the transcripts gained (a changed
earlier line is refused, nothing written): a complete, append-only backup from cron.
  --lenient   keep malformed lines verbatim; skip (and report) a session that cannot be imported
${COMMON}

Examples:
  pixir import claude
  pixir import claude ~/.claude/projects/-home-user-demo --dry-run --json | jq '.imports[] | {file, status}'
  pixir import pi ~/.pi/agent/sessions/--home-user-demo--/2026-01-10T09-00-00-250Z_19460c51-*.jsonl
  pixir import pi ~/.pi/agent/sessions/*/*.jsonl --dry-run --json | jq '.imports[].sessions[] | {session_id, status}'
  pixir import pi old.jsonl --lenient --json | jq '.imports[0].skipped_lines'
  pixir import codex
  pixir import codex ~/.codex/sessions/2026/05 --dry-run --json | jq '.imports[].sessions[] | {session_id, status}'
`,
    kind: "report",
    writer: true,
    positionals: { min: 1, max: Number.MAX_SAFE_INTEGER },
    options: { lenient: { type: "boolean" }, "dry-run": { type: "boolean" } },
    run: async (args, ctx) =>
      args.positionals[0] === "claude"
        ? (await import("./commands/claude.js")).runClaudeImport(args, ctx)
        : args.positionals[0] === "codex"
          ? (await import("./commands/codex.js")).runCodexImport(args, ctx, `usage: ${importSynopsis}`)
          : (await import("./commands/pi.js")).runImport(args, ctx, `usage: ${importSynopsis}`),
  },
  {
    name: "export",
    synopsis: `usage: ${exportSynopsis}`,
    help: `Usage: ${exportSynopsis}

Write the fork family of <id> (its root and every fork descendant) as one pi v3 session file. Imported
entries come back verbatim (ids, parents, timestamps, content, labels); native Events become the
nearest pi entries. The Log <id> goes last, so its last entry is the leaf pi resumes. Without --out the
file is printed on stdout (a stream command); with --out it is written atomically, and an existing
file is refused. --out DIR writes DIR/<timestamp>_<header id>.jsonl, pi's own file name.

export codex writes an imported thread's rollout back byte for byte; a Log with Events added by pixir
(a pixir fork, Events appended) becomes a new rollout that codex resume continues as a fork
(forked_from_id). --out DIR writes DIR/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl, Codex's own layout.

  --out FILE|DIR  write the file there instead of stdout
  --dry-run       report what would be written; write nothing

pixir export claude writes a Log made by pixir import claude back as its Claude Code transcripts,
byte for byte: to stdout (the session file), or with --out DIR (an existing directory) every file of
the session under DIR/<escaped cwd>/, so --out ~/.claude/projects restores a session Claude deleted.
An existing file with other bytes is refused; one with the same bytes is left alone.

pixir export html writes one web page of <id> and its fork family (the root found by walking fork
parents up, every fork descendant, and the subagent children pixir tree shows, to --max-depth): a tree
of the Logs beside the chosen one's History as cards (Markdown rendered, code highlighted, reasoning
and long tool output collapsed, tool calls with their results), with search and filters. The page is
self-contained and safe to open whatever the Logs hold: it loads nothing and runs only its own script.
  --no-family       only the History of <id> (--family, the default: the whole family)
  --max-depth N     how deep the family goes below its root (default 32)

pixir export md writes the History of <id> as Markdown for a pull request or an issue: the messages
as written, tool calls as <details> blocks with their arguments and output fenced (a fence no Log can
close), summaries and checkpoints as quotes; reasoning is left out. The same Log gives the same bytes.
  --tools MODE      full (the default), summary (one line per call) or none
${COMMON}

Examples:
  pixir export claude 0d3a8e6f-290f-4105-a327-a2496e5e2a83 --out ~/.claude/projects
  pixir export pi 19460c51-3e55-4ee0-ba8f-b97bb5a88301 > session.jsonl
  pixir export pi 19460c51-3e55-4ee0-ba8f-b97bb5a88301.a9bcedc7 --out exported/
  pixir export pi s1 --dry-run --json | jq '{entry_count, leaf_entry_id}'
  pixir export codex 019e1625-789d-76c0-80ab-3724b5ddb799 > rollout.jsonl
  pixir export codex try-2 --out ~/.codex/sessions
  pixir export html s1 --out s1.html && xdg-open s1.html
  pixir export html s1 --no-family --dry-run --json | jq .bytes
  pixir export md s1 --tools summary > session.md
`,
    kind: (args) => (args.flags.out !== undefined || args.flags["dry-run"] === true ? "report" : "stream"),
    positionals: { min: 2, max: 2 },
    options: {
      out: { type: "string", valueKind: "path" },
      "dry-run": { type: "boolean" },
      family: { type: "boolean" },
      "no-family": { type: "boolean" },
      "max-depth": { type: "string", valueKind: "number" },
      tools: { type: "string", valueKind: "mode" },
    },
    run: async (args, ctx) => {
      const format = args.positionals[0];
      const view = await import("./commands/view.js");
      if (format === "html") return view.runHtmlExport(args, ctx, `usage: ${htmlExportSynopsis}`);
      if (format === "md") return view.runMdExport(args, ctx, `usage: ${mdExportSynopsis}`);
      view.refuseViewFlags(args, `usage: ${exportSynopsis}`);
      return format === "claude"
        ? (await import("./commands/claude.js")).runClaudeExport(args, ctx)
        : format === "codex"
          ? (await import("./commands/codex.js")).runCodexExport(args, ctx, `usage: ${exportSynopsis}`, __PIXIR_VERSION__)
          : (await import("./commands/pi.js")).runExport(args, ctx, `usage: ${exportSynopsis}`);
    },
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
  pixir tree [<id>] [--max-depth N] [--format text|json|dot|mermaid]   (the same as pixir-tree)
  pixir log <cat|write|append|ls|check|repair|materialize|rm> ...   (the same as pixir-log)
  ${appendSynopsis}
  ${lockSynopsis}
  ${repairSynopsis}
  ${diffSynopsis}
  ${contextSynopsis}
  ${compactSynopsis}
  ${mergeSynopsis}
  ${piImportSynopsis}
  ${codexImportSynopsis}
  ${claudeImportSynopsis}
  ${piExportSynopsis}
  ${codexExportSynopsis}
  ${claudeExportSynopsis}
  ${htmlExportSynopsis}
  ${mdExportSynopsis}
${COMMON}

Run pixir <command> --help for one command.
`,
  commands,
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo, (argv) => argv[0] !== "tree");
}
