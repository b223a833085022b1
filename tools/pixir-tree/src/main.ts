// pixir-tree: the Session Tree projection. This file only describes the command; the implementation
// is loaded when it runs, and all behaviour lives in @pixir/envelope (tree.ts).
import { processIo, runProcess, runTool, type CliIo, type ToolSpec } from "@pixir/envelope";

declare const __PIXIR_VERSION__: string;

const SYNOPSIS = "pixir-tree [<id>] [--max-depth N] [--format text|json|dot|mermaid] [--workspace DIR] [--json]";

const HELP = `Usage: ${SYNOPSIS}

Session/Subagent tree of a pixir Workspace, read-only: it takes no lease and creates nothing.
Subagent children come from a Session's subagent_event records (grouped by subagent_id); fork
children are the Logs whose first line is a session_fork naming the Session as parent. Each node
shows its event count over the resolved History (a share_v1 child counts its inherited prefix).
With <id>, the tree below that Session; without it, the forest of every root Log in the Workspace,
including orphans whose parent Log is missing (parent_missing). A Log that cannot be read is shown
with an error and does not stop the others.

  --max-depth N    truncate nodes deeper than N (the root has depth 0; default 32)
  --format F       text (default), json, dot (Graphviz) or mermaid
  --json           the same as --format json: {"ok":true,"tree":...} or {"ok":true,"forest":[...]}

Options everywhere:
  --workspace DIR  the Workspace (default: $PIXIR_WORKSPACE, else the current directory)
  -h, --help       this help
  --version        print the version

Examples:
  pixir-tree P
  pixir-tree --json | jq -r '.forest[] | select(.parent_missing) | .session_id'
  pixir-tree --format dot | dot -Tsvg > tree.svg
`;

export const tool: ToolSpec = {
  program: "pixir-tree",
  version: __PIXIR_VERSION__,
  synopsis: `usage: ${SYNOPSIS}`,
  help: HELP,
  commands: [
    {
      name: "",
      synopsis: `usage: ${SYNOPSIS}`,
      help: HELP,
      kind: "report",
      positionals: { min: 0, max: 1 },
      options: {
        "max-depth": { type: "string", valueKind: "number" },
        format: { type: "string", valueKind: "format" },
      },
      run: async (args, ctx) => (await import("./commands/tree.js")).runTree(args, ctx, `usage: ${SYNOPSIS}`),
    },
  ],
};

/**
 * cli.md §5: `--format json` is the same as `--json`, errors included (the envelope on stdout),
 * so it switches the runner's JSON mode on too.
 */
export function withJsonFormat(argv: string[]): string[] {
  const end = argv.indexOf("--");
  const options = end === -1 ? argv : argv.slice(0, end);
  const formatJson = options.some((t, i) => t === "--format=json" || (t === "--format" && options[i + 1] === "json"));
  return formatJson && !options.includes("--json") ? ["--json", ...argv] : argv;
}

export function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  return runTool(tool, withJsonFormat(argv), io);
}

export function run(): Promise<void> {
  return runProcess(main, processIo, () => false);
}
