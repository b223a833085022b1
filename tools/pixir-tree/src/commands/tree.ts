// pixir-tree (cli.md §11, tree.md): a report command. Its result (JSON, text, dot or Mermaid) goes to
// stdout in chunks; errors take the runner's report path (the envelope on stdout with --json).
import {
  emptyWorkspaceNote,
  readCatalog,
  renderReadableTree,
  assertSessionId,
  buildSessionForest,
  buildSessionTree,
  DEFAULT_TREE_MAX_DEPTH,
  parseNonNegativeInt,
  treeOutputChunks,
  stringFlag,
  usageError,
  type CommandContext,
  type ParsedArgs,
  type TreeFormat,
} from "@pixir/envelope";

export async function runTree(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  // cli.md §1: a positional id is checked before anything else, and never echoed.
  const id = args.positionals[0];
  if (id !== undefined) assertSessionId(id);
  const requested = stringFlag(args, "format");
  if (ctx.json && requested !== undefined && requested !== "json") {
    throw usageError(ctx.synopsis, "--json cannot be combined with --format text, dot or mermaid");
  }
  const maxDepth = parseNonNegativeInt("max-depth", stringFlag(args, "max-depth"), ctx.synopsis) ?? DEFAULT_TREE_MAX_DEPTH;
  const format = ctx.json ? "json" : ((requested as TreeFormat | undefined) ?? "text");
  const ws = ctx.workspace();
  const debug = ctx.io.env.PIXIR_DEBUG === "1";

  const roots = id !== undefined ? [buildSessionTree(ws, id, { maxDepth })] : await buildSessionForest(ws, { maxDepth, env: ctx.io.env, onScanned: debug ? (s) => ctx.io.stderr.write(`${ctx.program}: read ${s.logs} Logs on ${s.threads} threads; workers delivered ${s.byWorkers} of ${2 * s.logs} results\n`) : undefined });
  if (id === undefined && roots.length === 0 && format === "text" && ctx.io.stdoutColumns !== undefined) ctx.io.stderr.write(`${emptyWorkspaceNote(ws)}\n`);
  if (format === "text" && args.flags.verbose !== true) {
    await ctx.out.write(renderReadableTree(roots, { workspace: ws, facts: await readCatalog(ws), forest: id === undefined, columns: ctx.io.stdoutColumns }));
    return 0;
  }
  // One document, as ctx.report would print it, but written in chunks: a large forest is tens of
  // MB of JSON and must not be held as one string.
  for (const chunk of treeOutputChunks(roots, format, id !== undefined)) {
    if (ctx.out.closed) break;
    await ctx.out.write(chunk);
  }
  return 0;
}
