// pixir-tree: the Session Tree projection. This file only declares the command (the wrapper mounts it
// as `pixir tree`); the implementation is loaded when it runs, and all behaviour lives in
// @pixir/envelope (tree.ts).
import { processIo, runProcess, runTool, TREE_FORMATS, type CliIo, type CommandDecl, type ToolSpec } from "@pixir/envelope/cli";

declare const __PIXIR_VERSION__: string;

/** cli.md §5: `--format json` is the same as `--json`, errors included (the envelope on stdout). */
export function formatJson(tokens: readonly string[]): boolean {
  return tokens.some((t, i) => t === "--format=json" || (t === "--format" && tokens[i + 1] === "json"));
}

export const tree: CommandDecl = {
  command: "tree [id]",
  describe: "the Session/Subagent tree of the Workspace, or of one Session",
  description: `Session/Subagent tree of a pixir Workspace, read-only: it takes no lease and creates nothing.
Subagent children come from a Session's subagent_event records (grouped by subagent_id); fork
children are the Logs whose first line is a session_fork naming the Session as parent. Each node
shows its event count over the resolved History (a share_v1 child counts its inherited prefix).
The text shows the Workspace once and each node as "id  title  (agent, kind, N events, last update)",
children in the order they started and each subagent once, under its parent; --verbose shows every
node's details instead. With <id>, the tree below that Session; without it, the forest of every root Log in the Workspace,
including orphans whose parent Log is missing (parent_missing). A Log that cannot be read is shown
with an error and does not stop the others. --json is the same as --format json:
{"ok":true,"tree":...} or {"ok":true,"forest":[...]}.`,
  positionals: { id: { describe: "the Session at the root (default: the forest of every root Log)", value: "session id" } },
  options: {
    "max-depth": { type: "string", value: "number", default: "32", describe: "truncate nodes deeper than N (the root has depth 0)" },
    format: { type: "string", value: "format", choices: TREE_FORMATS, describe: "text (the default), json, dot (Graphviz) or mermaid" },
    verbose: { type: "boolean", describe: "text: every node's details (workspace, subagent records, fork points), as tree.md §4 draws them" },
  },
  jsonWhen: formatJson,
  examples: ["$0 P", "$0 --json | jq -r '.forest[] | select(.parent_missing) | .session_id'", "$0 --format dot | dot -Tsvg > tree.svg"],
  handler: async (args, ctx) => (await import("./commands/tree.js")).runTree(args, ctx),
};

export const tool: ToolSpec = {
  program: "pixir-tree",
  version: __PIXIR_VERSION__,
  description: tree.describe,
  single: tree,
};

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, argv, io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo);
}
