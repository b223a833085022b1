// pixir: the wrapper for common jobs. It runs the same stages as the single tools, in-process, and
// holds the Writer Lease itself. This file only declares the commands: its own, and those of
// pixir-log and pixir-tree mounted under it (`pixir log …`, `pixir append`, `pixir tree`).
import { AGENT_NAMES, CONTEXT_FORMATS, MD_TOOL_MODES, SESSION_KINDS, processIo, runProcess, runTool, type CliIo, type CommandDecl, type ToolSpec } from "@pixir/envelope/cli";
import { FORK_OPTIONS } from "pixir-fork";
import { append, flag, session, tool as logTool } from "pixir-log";
import { MODEL_OPTIONS } from "pixir-summarize";
import { tree } from "pixir-tree";

declare const __PIXIR_VERSION__: string;


export const fork: CommandDecl = {
  command: "fork <id>",
  describe: "create a child Session from a prefix of <id>'s History",
  description: `Create a child Session whose History starts with the replayable prefix of <id>'s History through
--to-seq (default: all of it). The child Log starts with a session_fork header (lineage, counts,
prefix_digest) and is created atomically under the child's Writer Lease. With --summarize a
deterministic branch_summary of the inherited prefix is appended (or, with --model-cmd, one written by
an external command, falling back to the deterministic one). The same as
  pixir-fork --parent <id> | [pixir-summarize |] pixir-log write
in one process.`,
  writer: true,
  positionals: { id: { describe: "the parent Session", value: "session id" } },
  options: {
    ...FORK_OPTIONS,
    summarize: { type: "boolean", describe: "append a branch_summary of the inherited prefix" },
    ...MODEL_OPTIONS,
    "dry-run": flag("print the plan; create nothing, take no lease"),
  },
  examples: ["$0 P --to-seq 40 --summarize", "$0 P --dry-run --json | jq '{child_session_id, event_count, open_tool_calls}'", "$0 P --strategy share_v1 --child-id P-experiment && pixir tree P"],
  handler: async (args, ctx) => (await import("./commands/fork.js")).runForkCommand(args, ctx),
};

const log: CommandDecl = {
  command: "log",
  describe: "Log plumbing: the commands of pixir-log",
  description: `${logTool.description} The same as pixir-log.`,
  commands: logTool.commands,
};

const lock: CommandDecl = {
  command: "lock",
  describe: "inspect or break a Session's Writer Lease",
  description: "Inspect or break a Session's Writer Lease (.pixir/session_leases/<id>.json).",
  subcommandWord: "lock action",
  commands: [
    {
      command: "status <id>",
      describe: "the lease state: available, active, stale or ambiguous (exit 0 whatever it is)",
      positionals: { id: session },
      examples: ["$0 s1", "$0 s1 --json | jq .lease.holder_alive"],
      handler: async (args, ctx) => (await import("./commands/lock.js")).runLock(args, ctx, "status"),
    },
    {
      command: "release <id>",
      describe: "remove a stale or ambiguous lease, after writing a release record to .pixir/session_leases/releases/; an active lease is never released",
      positionals: { id: session },
      options: {
        force: { type: "boolean", describe: "required: release the lease" },
        reason: { type: "string", value: "text", describe: "recorded in the release record" },
      },
      examples: [`$0 s1 --force --reason "writer was OOM-killed"`],
      handler: async (args, ctx) => (await import("./commands/lock.js")).runLock(args, ctx, "release"),
    },
  ],
};

const repair: CommandDecl = {
  command: "repair <id>",
  describe: "close a crashed turn: repair the Log, then close tool calls left without a result",
  description: `Close a crashed turn. First does what pixir-log repair does (drop a torn final line, roll back a
leftover append journal); then, for every tool_call in <id>'s History with no later tool_result of
the same call_id, appends a fallback tool_result (ok: false, error kind "interrupted",
repaired: true), all in one append under the Writer Lease. A second run finds nothing to do.`,
  writer: true,
  positionals: { id: session },
  options: { "dry-run": flag("report what would be dropped and closed; change nothing, take no lease") },
  examples: ["$0 s1 --dry-run --json | jq .closed_tool_calls", "$0 s1 && pixir context s1 --format text | tail"],
  handler: async (args, ctx) => (await import("./commands/repair.js")).runRepair(args, ctx),
};

const diff: CommandDecl = {
  command: "diff <a> <b>",
  describe: "where two resolved Histories diverge",
  description: `Where two resolved Histories diverge. Only replayable Events are compared (the types a fork
inherits), in seq order, by the canonical JSON of [type, ts, data], so a Session and its fork child
share a prefix although their ids and seqs differ. The relation (same, a_is_ancestor_of_b,
b_is_ancestor_of_a, same_fork_root, unrelated) comes from the session_fork lineage. Reads only.`,
  positionals: { a: session, b: session },
  options: { "exit-code": { type: "boolean", describe: "exit 1 when the Histories are not identical (like diff(1))" } },
  examples: ["$0 P P-experiment", "$0 P P-experiment --json | jq '{relation, common_prefix_events, diverged_at}'", `$0 a b --exit-code >/dev/null || echo "a and b differ"`],
  handler: async (args, ctx) => (await import("./commands/diff.js")).runDiff(args, ctx),
};

const context: CommandDecl = {
  command: "context <id>",
  describe: "print what a model would see of a Session",
  description: `Print what a model would see of Session <id>: the Responses API input items Pixir's provider fold
would send, one per line. The latest history_compaction checkpoint stands for everything through its
range.to_seq; a tool call left without its result gets Pixir's synthetic orphan output; a skill
activation follows its skill_view result; checkpoints, branch summaries, skills and finished subagents
are user text; usage, lineage, failures, workflow and partial answers give no item. A share_v1 child
is read resolved. Writes nothing.`,
  class: "stream",
  positionals: { id: session },
  options: {
    format: {
      type: "string",
      value: "format",
      choices: CONTEXT_FORMATS,
      default: "ndjson",
      describe: `ndjson: one {"seq","id","type","item"} object per item (seq, id and type name the Event the item comes from); text: a "[<seq>] <role or item type> <type>" line, the text or JSON body, an empty line`,
    },
  },
  examples: ["$0 s1 --format text | less", "$0 s1 | jq -s 'map(.item)' > input.json", "pixir compact s1 --tail-events 20 && $0 s1 | head -1 | jq -r '.item.content[0].text'"],
  handler: async (args, ctx) => (await import("./commands/context.js")).runContext(args, ctx),
};

const compact: CommandDecl = {
  command: "compact <id>",
  describe: "record a history_compaction checkpoint for a Session",
  description: `Record a deterministic history_compaction checkpoint for Session <id>, as Pixir computes it:
everything but the last N candidate Events is condensed (counts, tool calls, files touched, recent
conversational excerpts, compacted skill activations), and the previous checkpoint is carried forward.
The checkpoint is appended at the next seq under the Writer Lease; no line of the Log is rewritten, and pixir context then shows the checkpoint in place of
the Events it stands for. A History of N Events or fewer has nothing to compact (exit 0).`,
  writer: true,
  positionals: { id: session },
  options: {
    "tail-events": { type: "string", value: "positive integer", default: "40", describe: "how many of the latest Events stay visible after the checkpoint" },
    "dry-run": flag("print the checkpoint that would be recorded; create nothing, take no lease"),
  },
  examples: ["$0 s1 --dry-run --json | jq .event.summary -r", "$0 s1 --tail-events 20", "$0 s1 && pixir context s1 --format text | head -20"],
  handler: async (args, ctx) => (await import("./commands/compact.js")).runCompact(args, ctx),
};

const merge: CommandDecl = {
  command: "merge <child>",
  describe: "append a branch_summary of a fork child's own Events to its parent",
  description: `Merge a fork child back without rewriting anything: the child's own Events (those after its inherited
prefix) are condensed into one branch_summary (the deterministic summary rules, or with --model-cmd
an external command's text) carrying a "merge" record, and appended to the parent under the parent's
Writer Lease. The child must be a fork of the parent (its first line is a session_fork naming it).
Every earlier byte of the parent stays as it was; the child is only read.`,
  writer: true,
  positionals: { child: { describe: "the fork child", value: "session id" } },
  options: {
    into: { type: "string", value: "session id", placeholder: "<parent>", describe: "the parent Session (required)" },
    ...MODEL_OPTIONS,
    "dry-run": flag("print the branch_summary that would be appended; create nothing, take no lease"),
  },
  examples: ["$0 P-experiment --into P", "$0 P-experiment --into P --dry-run --json | jq .event.summary -r", "$0 P-experiment --into P --model-cmd 'llm -m small' && pixir context P --format text | tail"],
  handler: async (args, ctx) => (await import("./commands/merge.js")).runMerge(args, ctx),
};

const importDryRun = flag("plan and check everything; create nothing, take no lease");

const importCommand: CommandDecl = {
  command: "import",
  describe: "import the sessions of pi, Codex, Claude Code, Gemini CLI or opencode as Logs",
  description: "Import the session files of another agent as fork families of Logs. Importing again changes nothing that is unchanged.",
  subcommandWord: "import format",
  commands: [
    {
      command: "pi <files..>",
      describe: "import pi session files",
      description: `Import session files of the pi coding agent (versions 1, 2 and 3; the files are only read) as fork
families of Logs. The branch pi would resume (the last line) becomes the Log named by the header id;
every other leaf becomes a share_v1 child <id>.<leaf entry id> holding only the entries its branch adds.
pi's metadata (model and thinking-level changes, labels, names, extension state) rides in data.pi of
workflow_event Events; images become Session Resources. Event ids are derived from the entry ids, so
importing the same file again changes nothing and reports "unchanged"; a Log of the family that differs
on disk is refused (already_exists) and nothing is written.`,
      writer: true,
      positionals: { files: { describe: "pi session files (.jsonl)" } },
      options: { lenient: flag("skip lines that are not valid JSON (reported as skipped_lines) instead of failing"), "dry-run": importDryRun },
      examples: [
        "$0 ~/.pi/agent/sessions/--home-user-demo--/2026-01-10T09-00-00-250Z_19460c51-*.jsonl",
        "$0 ~/.pi/agent/sessions/*/*.jsonl --dry-run --json | jq '.imports[].sessions[] | {session_id, status}'",
        "$0 old.jsonl --lenient --json | jq '.imports[0].skipped_lines'",
      ],
      handler: async (args, ctx) => (await import("./commands/pi.js")).runImport(args, ctx),
    },
    {
      command: "codex [paths..]",
      describe: "import Codex CLI rollouts",
      description: `Import Codex CLI rollouts (files, or directories walked for *.jsonl; default $CODEX_HOME/sessions,
else ~/.codex/sessions). Each thread becomes a root Log named by its thread id, a backtrack a share_v1
child <id>.rollback-<line>, a codex fork a share_v1 child of its source; subagents are linked from
their parent. Every line keeps its record, so export codex gives the file back byte for byte. Again:
unchanged threads are skipped, resumed ones get only their new lines appended, a thread whose earlier
lines changed is refused (already_exists, reason rollout_changed) and nothing is written.`,
      writer: true,
      positionals: { paths: { describe: "rollout files or directories (default: Codex's sessions directory)" } },
      options: { lenient: flag("skip lines that are not valid JSON (reported as skipped_lines) instead of failing"), "dry-run": importDryRun },
      examples: ["$0", "$0 ~/.codex/sessions/2026/05 --dry-run --json | jq '.imports[].sessions[] | {session_id, status}'"],
      handler: async (args, ctx) => (await import("./commands/codex.js")).runCodexImport(args, ctx),
    },
    {
      command: "claude [paths..]",
      describe: "import Claude Code transcripts",
      description: `Import Claude Code transcripts (default: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects; a PATH
is a transcript, a project directory or a projects root). The chain Claude resumes becomes the Log
named by the session id; every rewind or edited prompt a share_v1 child <id>.<uuid> holding only its
own records; subagent transcripts their own Logs <id>.agent-<agentId>, linked by subagent_event; a
compact summary a history_compaction checkpoint. Every line comes back byte for byte from
data.claude. Run again, it appends only what the transcripts gained (a changed earlier line is
refused, nothing written): a complete, append-only backup from cron.`,
      writer: true,
      positionals: { paths: { describe: "transcripts, project directories or projects roots (default: Claude's projects directory)" } },
      options: { lenient: flag("keep malformed lines verbatim; skip (and report) a session that cannot be imported"), "dry-run": importDryRun },
      examples: ["$0", "$0 ~/.claude/projects/-home-user-demo --dry-run --json | jq '.imports[] | {file, status}'"],
      handler: async (args, ctx) => (await import("./commands/claude.js")).runClaudeImport(args, ctx),
    },
    {
      command: "gemini [paths..]",
      describe: "import Gemini CLI sessions",
      description: `Import Gemini CLI sessions (files, or directories walked for *.jsonl and legacy session-*.json;
default $GEMINI_CLI_HOME/.gemini/tmp, else ~/.gemini/tmp). Each session becomes a Log named by its
session id; a /rewind, a $set.messages replacement (compression) or a message changed in place continues
in a share_v1 child <id>.rewind-<line> (replace-, edit-) forked after the last message both share, so
rewound work stays readable. Subagents are Logs of their own, linked from the tool call that ran them.
Every line is kept, so export gemini gives the file back byte for byte. Again: unchanged sessions are
skipped, grown ones get only their new lines appended, a changed earlier line is refused.`,
      writer: true,
      positionals: { paths: { describe: "session files or directories (default: Gemini's tmp directory)" } },
      options: { lenient: flag("keep lines that are not valid JSON verbatim (reported as skipped_lines) instead of failing"), "dry-run": importDryRun },
      examples: ["$0", "$0 ~/.gemini/tmp/*/chats --dry-run --json | jq '.imports[].sessions[] | {session_id, status}'"],
      handler: async (args, ctx) => (await import("./commands/gemini.js")).runGeminiImport(args, ctx),
    },
    {
      command: "opencode [paths..]",
      describe: "import opencode sessions",
      description: `Import opencode sessions from its SQLite database (opencode.db, opened read-only) or its legacy
storage/ JSON tree (default $XDG_DATA_HOME/opencode, else ~/.local/share/opencode). Each session
becomes a Log named by its id; a child session (subagent) is linked from the task tool call that ran
it; a compaction's summary becomes a checkpoint; a pending revert leaves the reverted messages in a
share_v1 child <id>.reverted. Every message and part is kept, so export opencode gives them back.
Again: unchanged sessions are skipped, grown ones appended, a changed earlier message refused.`,
      writer: true,
      positionals: { paths: { describe: "opencode.db, the data directory or a storage/ tree (default: opencode's data directory)" } },
      options: { lenient: flag("skip records that are not valid JSON (listed in skipped_records) instead of failing"), "dry-run": importDryRun },
      examples: ["$0", "$0 ~/.local/share/opencode/opencode.db --dry-run --json | jq '.imports[] | {session_id, title}'"],
      handler: async (args, ctx) => (await import("./commands/opencode.js")).runOpencodeImport(args, ctx),
    },
  ],
};

/** An export writes to stdout (a stream command) unless --out or --dry-run makes it a report. */
const exportClass = (args: { flags: Record<string, unknown> }) => (args.flags.out !== undefined || args.flags["dry-run"] === true ? "report" : "stream");
const exportDryRun = flag("report what would be written; write nothing");
/** archive.md §5: an export to an agent also writes into the agent's own store (--install), a report. */
const agentExportClass = (args: { flags: Record<string, unknown> }) => (args.flags.install === true ? "report" : exportClass(args));
const handoffOptions = {
  cwd: { type: "string", value: "path", placeholder: "DIR", describe: "the project directory the agent resumes the session in (default: the cwd the session recorded)" },
  install: flag("write into the agent's own session store (its home, or $CLAUDE_CONFIG_DIR, $CODEX_HOME, $PI_CODING_AGENT_DIR)"),
} as const;
const HANDOFF_HELP = `A session from another agent is written for the project directory it recorded (or --cwd DIR); without
either the export stops (exit 2). --install writes into the agent's own store, never over a different
file. The report names the command that resumes the export (resume_command with --json).`;

const exportCommand: CommandDecl = {
  command: "export",
  describe: "write a Session as the sessions of pi, Codex, Claude Code, Gemini CLI or opencode, a web page or Markdown",
  description: "Write a Session (with its fork family) as another agent's session files, a web page or Markdown: to stdout, or with --out to a file or directory.",
  subcommandWord: "export format",
  commands: [
    {
      command: "pi <id>",
      describe: "write a fork family as one pi session file",
      description: `Write the fork family of <id> (its root and every fork descendant) as one pi v3 session file. Imported
entries come back verbatim (ids, parents, timestamps, content, labels); native Events become the
nearest pi entries. The Log <id> goes last, so its last entry is the leaf pi resumes. Without --out the
file is printed on stdout (a stream command); with --out it is written atomically, and an existing
file is refused. --out DIR writes DIR/<timestamp>_<header id>.jsonl, pi's own file name.
${HANDOFF_HELP}`,
      class: agentExportClass,
      positionals: { id: session },
      options: { out: { type: "string", value: "path", placeholder: "FILE|DIR", describe: "write the file there instead of stdout" }, ...handoffOptions, "dry-run": exportDryRun },
      examples: [
        "$0 19460c51-3e55-4ee0-ba8f-b97bb5a88301 > session.jsonl",
        "$0 19460c51-3e55-4ee0-ba8f-b97bb5a88301.a9bcedc7 --out exported/",
        "$0 s1 --dry-run --json | jq '{entry_count, leaf_entry_id}'",
      ],
      handler: async (args, ctx) => (await import("./commands/pi.js")).runExport(args, ctx),
    },
    {
      command: "codex <id>",
      describe: "write an imported thread's rollout back, or a new rollout Codex resumes as a fork",
      description: `Write an imported thread's rollout back byte for byte; a Log with Events added by pixir (a pixir fork,
Events appended) becomes a new rollout that codex resume continues as a fork (forked_from_id).
--out DIR writes DIR/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl, Codex's own layout.
${HANDOFF_HELP}`,
      class: agentExportClass,
      positionals: { id: session },
      options: { out: { type: "string", value: "path", placeholder: "DIR", describe: "write the rollout under this directory instead of stdout" }, ...handoffOptions, "dry-run": exportDryRun },
      examples: ["$0 019e1625-789d-76c0-80ab-3724b5ddb799 > rollout.jsonl", "$0 try-2 --install"],
      handler: async (args, ctx) => (await import("./commands/codex.js")).runCodexExport(args, ctx, __PIXIR_VERSION__),
    },
    {
      command: "gemini <id>",
      describe: "write an imported Gemini CLI session back, or a new session Gemini resumes",
      description: `Write an imported Gemini CLI session file back byte for byte (rewinds and replacements included);
a Log with Events added by pixir (a pixir fork, Events appended) becomes a new session holding what
pixir context shows, which gemini --resume continues. --out DIR writes DIR/session-<time>-<id8>.jsonl;
--install writes it into ~/.gemini/tmp/<project>/chats/ (an existing file is refused, never replaced).`,
      class: (args) => (args.flags.out !== undefined || args.flags.install === true || args.flags["dry-run"] === true ? "report" : "stream"),
      positionals: { id: session },
      options: {
        out: { type: "string", value: "path", placeholder: "FILE|DIR", describe: "write the session file there instead of stdout" },
        install: flag("write the session into Gemini's own chats directory of its project"),
        "dry-run": exportDryRun,
      },
      examples: ["$0 8a1b2c3d-0000-4000-8000-000000000001 > session.jsonl", "$0 try-2 --install"],
      handler: async (args, ctx) => (await import("./commands/gemini.js")).runGeminiExport(args, ctx),
    },
    {
      command: "opencode <id>",
      describe: "write a session as opencode export JSON, or install it for opencode import",
      description: `Write a session in the shape opencode export prints and opencode import reads ({info, messages:
[{info, parts}]}): an imported session gives back its info, messages and parts as opencode stored
them; a pixir fork becomes a new session holding what pixir context shows. --out DIR writes
DIR/<session id>.json. --install writes that file under opencode's data directory (pixir-exports/)
and names the opencode import command to run: pixir never writes opencode's live database.`,
      class: (args) => (args.flags.out !== undefined || args.flags.install === true || args.flags["dry-run"] === true ? "report" : "stream"),
      positionals: { id: session },
      options: {
        out: { type: "string", value: "path", placeholder: "FILE|DIR", describe: "write the JSON there instead of stdout" },
        install: flag("write the file under opencode's data directory, ready for opencode import"),
        "dry-run": exportDryRun,
      },
      examples: ["$0 ses_abc > ses_abc.json && opencode import ses_abc.json", "$0 try-2 --install"],
      handler: async (args, ctx) => (await import("./commands/opencode.js")).runOpencodeExport(args, ctx),
    },
    {
      command: "claude <id>",
      describe: "write a Log made by pixir import claude back as its Claude Code transcripts",
      description: `Write a Log made by pixir import claude back as its Claude Code transcripts, byte for byte: to stdout
(the session file), or with --out DIR (an existing directory) every file of the session under
DIR/<escaped cwd>/, so --out ~/.claude/projects restores a session Claude deleted. An existing file
with other bytes is refused; one with the same bytes is left alone.
${HANDOFF_HELP}`,
      class: agentExportClass,
      positionals: { id: session },
      options: { out: { type: "string", value: "path", placeholder: "DIR", describe: "write every file of the session under this directory instead of stdout" }, ...handoffOptions, "dry-run": exportDryRun },
      examples: ["$0 0d3a8e6f-290f-4105-a327-a2496e5e2a83 --out ~/.claude/projects", "$0 019e1625-789d-76c0-80ab-3724b5ddb799 --install --cwd ~/src/project"],
      handler: async (args, ctx) => (await import("./commands/claude.js")).runClaudeExport(args, ctx),
    },
    {
      command: "html [id]",
      describe: "write one safe, self-contained web page of a Session and its family, or with --all a site of the Workspace",
      description: `Write one web page of <id> and its fork family (the root found by walking fork parents up, every
fork descendant, and the subagent children pixir tree shows, to --max-depth): a tree of the Logs beside
the chosen one's History as cards (Markdown rendered, code highlighted, reasoning and long tool output
collapsed, tool calls with their results), with search and filters. The page is self-contained and
safe to open whatever the Logs hold: it loads nothing and runs only its own script.
With --all --out DIR: a static site of the whole Workspace, an index.html of the sessions grouped by
project (with a filter box) and one page per root family, linked relatively so it works from file://.
Run again, it rewrites only the pages whose Logs changed, and the index.`,
      class: (args) => (args.flags.all === true ? "report" : exportClass(args)),
      positionals: { id: { ...session, describe: "the Session (not with --all)" } },
      options: {
        out: { type: "string", value: "path", placeholder: "FILE|DIR", describe: "write the page there instead of stdout (with --all: the site's folder)" },
        all: flag("every session of the Workspace as a static site in --out DIR"),
        family: flag("the whole family (the default)"),
        "no-family": flag("only the History of <id>"),
        "max-depth": { type: "string", value: "number", describe: "how deep the family goes below its root (default 32)" },
        "dry-run": exportDryRun,
      },
      examples: ["$0 s1 --out s1.html && xdg-open s1.html", "$0 s1 --no-family --dry-run --json | jq .bytes", "$0 --all --out site/ && xdg-open site/index.html"],
      handler: async (args, ctx) => (await import("./commands/view.js")).runHtmlExport(args, ctx),
    },
    {
      command: "md <id>",
      describe: "write the History of a Session as Markdown",
      description: `Write the History of <id> as Markdown for a pull request or an issue: the messages as written, tool
calls as <details> blocks with their arguments and output fenced (a fence no Log can close), summaries
and checkpoints as quotes; reasoning is left out. The same Log gives the same bytes.`,
      class: exportClass,
      positionals: { id: session },
      options: {
        out: { type: "string", value: "path", placeholder: "FILE", describe: "write the Markdown there instead of stdout" },
        tools: { type: "string", value: "mode", choices: MD_TOOL_MODES, default: "full", describe: "full: every tool call by its job (edits as diffs, commands and their output); summary: one line per call; none: no tool calls" },
        family: flag("the whole family: forks and subagents as sections"),
        "max-depth": { type: "string", value: "number", describe: "with --family: how deep the family goes below its root (default 32)" },
        "dry-run": exportDryRun,
      },
      examples: ["$0 s1 --tools summary > session.md", "$0 s1 --family --out family.md"],
      handler: async (args, ctx) => (await import("./commands/view.js")).runMdExport(args, ctx),
    },
  ],
};

const search: CommandDecl = {
  command: "search [query..]",
  describe: "search every Session of the Workspace",
  description: `Find Events in every Log of the Workspace: the words of QUERY must all match (case-insensitive,
punctuation between a word's letters and digits does not matter, the last piece of each word matches as a
prefix); "a phrase" matches in order; -word excludes (quote the query or put it after --, so the shell and
the flag parser leave -word alone). Searched: user and assistant messages, reasoning, tool names, arguments
and outputs, branch summaries and checkpoints; never import provenance or raw source records. An Event of
a shared fork prefix is one hit at the Log that owns it (inherited_by counts the forks that hold it);
in_context is whether pixir context shows it (false when a checkpoint replaced it, and for reasoning).
The index .pixir/index/search.sqlite is brought up to date first (no Writer Lease is taken). Text output
groups hits by session and ends each group with the commands that open it; --json prints one hit per line.`,
  class: "stream",
  positionals: { query: { describe: "the words to find" } },
  options: {
    agent: { type: "string", value: "text", placeholder: "AGENT", describe: "only sessions of this agent (claude, codex, pi, pixir, ...)" },
    project: { type: "string", value: "text", placeholder: "SUBSTR", describe: "only sessions whose project contains SUBSTR" },
    session: { type: "string", value: "session id", describe: "only the History of this session (its own Events and the prefix it inherits)" },
    type: { type: "string", value: "type", placeholder: "T[,T...]", describe: "only these Event types (user_message, assistant_message, reasoning, tool_call, tool_result, branch_summary, history_compaction)" },
    tool: { type: "string", value: "text", placeholder: "NAME", describe: "only calls and outputs of this tool (Bash, Edit, exec_command, ...)" },
    file: { type: "string", value: "path", placeholder: "PATH", describe: "only tool calls whose file argument names PATH (the path, a path ending in /PATH, or a file below it)" },
    since: { type: "string", value: "text", placeholder: "DATE", describe: "only Events at or after DATE (YYYY-MM-DD, local time, or an ISO time)" },
    until: { type: "string", value: "text", placeholder: "DATE", describe: "only Events before the end of DATE (a day) or before the ISO time" },
    sort: { type: "string", value: "mode", choices: ["time", "rank"], default: "time", describe: "time: newest first; rank: most relevant first" },
    limit: { type: "string", value: "positive integer", placeholder: "N", default: "50", describe: "at most N hits" },
  },
  examples: [
    "$0 parse_line",
    "$0 '\"connection refused\" -docker' --agent claude",
    "$0 --file src/lib/parser.ts",
    "$0 migration --project api --since 2026-01-01 --sort rank",
    "$0 useState --json | jq -r '[.session_id, .seq] | @tsv'",
  ],
  handler: async (args, ctx) => (await import("./commands/search.js")).runSearchCommand(args, ctx),
};

const indexCommand: CommandDecl = {
  command: "index",
  describe: "bring the search index up to date with the Logs",
  description: `Bring .pixir/index/search.sqlite up to date with the Logs, as every pixir search does first:
Logs that grew are read from their old length, new Logs added, removed ones dropped, a Log changed before
its old length read again. --rebuild starts from an empty index. Reports counts and sizes. The index is a
derived cache: deleting it loses nothing.`,
  class: "report",
  options: { rebuild: flag("build the index again from all the Logs") },
  examples: ["$0", "$0 --rebuild --json | jq '{documents, index_bytes, log_bytes}'"],
  handler: async (args, ctx) => (await import("./commands/search.js")).runIndexCommand(args, ctx),
};

const ls: CommandDecl = {
  command: "ls",
  describe: "list the sessions of the Workspace: id, agent, project, date, messages, tokens, title",
  description: `List the sessions of the Workspace, newest first: id, agent, project (the last part of the
directory the agent ran in), last update (local time), messages, tokens and title (the title the agent
gave the session, else its first prompt). Forks are rows of their own; branches (rewinds, edited
prompts) and subagents are counted on their parent's row ("+2 branches, 6 subagents") unless --all or
--kind lists them. On a terminal ids are cut to their shortest unique prefix (at least 8 characters;
every command takes a unique prefix of 4 or more) and rows to the terminal's width; in a pipe the same
columns are separated by tabs, with full ids and nothing cut. --json prints one object per line with
every fact: session_id, agent, kind, cwd, project, title, first_prompt, started, updated, messages,
tokens, parent, children, events, log_bytes.`,
  // --json prints one object per line (archive.md §1): rows, so an error goes to stderr (cli.md §2).
  class: "stream",
  options: {
    agent: { type: "string", value: "type", choices: AGENT_NAMES, describe: "only sessions of this agent" },
    project: { type: "string", value: "text", placeholder: "SUBSTR", describe: "only projects whose name contains SUBSTR (any case)" },
    since: { type: "string", value: "text", placeholder: "DATE", describe: "only sessions updated since DATE (2026-05-01, 2026-05-01T14:00, or an age: 12h, 7d, 2w)" },
    until: { type: "string", value: "text", placeholder: "DATE", describe: "only sessions started before the end of DATE" },
    kind: { type: "string", value: "type", placeholder: `${SESSION_KINDS.join("|")}[,…]`, describe: "exactly the sessions of these kinds, each a row" },
    all: { type: "boolean", describe: "every session a row, branches and subagents too" },
    limit: { type: "string", value: "positive integer", placeholder: "N", describe: "the N newest rows" },
  },
  examples: ["$0", "$0 --agent claude --project api --since 7d", "$0 --all --json | jq -r 'select(.kind == \"subagent\") | .title'", "pixir context $(pixir ls --limit 1 | cut -f1)"],
  handler: async (args, ctx) => (await import("./commands/ls.js")).runLs(args, ctx),
};

const usage: CommandDecl = {
  command: "usage",
  describe: "what the model calls cost: tokens and USD by day, week, month, session, family, model, project or agent",
  description: `Count the model calls of the Workspace's Logs and price them, each call exactly once: a Claude
response written over several records is one call, a fork's copied prefix is counted at the Log that
owns it, subagents in their own Logs, Codex calls from token_count, pi and Pixir from provider_usage.
Without flags: by day over the last 30 days. --session ID gives that session, its forks, branches and
subagents one row each, and the family total: what each branch cost, the abandoned ones too. Prices are
USD per million tokens from the table in the repository (its date and source are in its header); a
model without a price is counted with cost "unknown" (null), never 0. Derived data is kept in
.pixir/index/usage.json and rebuilt from the Logs when they change.`,
  // --json prints one object per row (archive.md §3): rows, so an error goes to stderr (cli.md §2).
  class: "stream",
  options: {
    by: { type: "string", value: "mode", choices: ["day", "week", "month", "session", "family", "model", "project", "agent"], describe: "the rows (default: day)" },
    since: { type: "string", value: "text", placeholder: "DATE", describe: "calls on or after this local date (YYYY-MM-DD or YYYYMMDD)" },
    until: { type: "string", value: "text", placeholder: "DATE", describe: "calls on or before this local date" },
    session: { type: "string", value: "session id", describe: "one row per member of this session's family below it (forks, branches, subagents), and their total" },
    agent: { type: "string", value: "text", placeholder: "AGENT", describe: "only sessions of this agent (claude, codex, pi, gemini, opencode, pixir)" },
    project: { type: "string", value: "text", placeholder: "SUBSTR", describe: "only sessions whose project contains this text" },
    prices: { type: "string", value: "path", placeholder: "FILE", describe: 'a JSON object {"<model>": {input, output, cache_read, cache_write_5m, cache_write_1h}} in USD per million tokens, over the built-in table' },
    mode: { type: "string", value: "mode", choices: ["auto", "calculate", "recorded"], default: "auto", describe: "recorded: the cost the source wrote (pi, old Claude costUSD); calculate: the price table; auto: recorded, else calculated" },
  },
  examples: ["$0", "$0 --by month --since 2026-01-01", "$0 --session 0d3a8e6f-290f-4105-a327-a2496e5e2a83", "$0 --by model --json | jq -c 'select(.key) | {key, total, cost_usd}'", "$0 --prices my-prices.json --by model"],
  handler: async (args, ctx) => (await import("./commands/usage.js")).runUsage(args, ctx),
};

export const tool: ToolSpec = {
  program: "pixir",
  version: __PIXIR_VERSION__,
  description: "Common jobs on pixir Session Logs, run in one process under the Writer Lease.",
  commands: [ls, fork, tree, log, append, lock, context, compact, repair, diff, merge, importCommand, exportCommand, usage, search, indexCommand],
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
