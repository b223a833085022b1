// pixir-fork (cli.md §9, fork.md §3–§4): plan, then stream the child.
import {
  abortable,
  assertSessionId,
  assertShareChildDepth,
  boolFlag,
  checkBoundary,
  forkPlan,
  forkStreamChunks,
  LineBuffer,
  newUlid,
  parentFromLog,
  parentFromStdin,
  parseForkStrategy,
  parseNonNegativeInt,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runFork(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  // fork.md §3.1: parent id, child id, then --to-seq, all before the parent is read.
  const parentId = stringFlag(args, "parent");
  if (parentId !== undefined) assertSessionId(parentId);
  const childArg = stringFlag(args, "child-id");
  if (childArg !== undefined) assertSessionId(childArg, "child_session_id");
  const toSeq = parseNonNegativeInt("to-seq", stringFlag(args, "to-seq"), ctx.synopsis);
  const strategy = parseForkStrategy(stringFlag(args, "strategy"), ctx.synopsis);
  const dryRun = boolFlag(args, "dry-run");
  const ws = ctx.workspace();

  const parent = parentId !== undefined ? await parentFromLog(ws, parentId, toSeq, "pixir-fork") : await parentFromStdin(ctx.io.stdin, toSeq, ctx.signal);
  try {
    if (boolFlag(args, "strict-boundary")) checkBoundary(parent.facts, toSeq);
    const childId = childArg ?? newUlid();
    // A parent read from stdin is a resolved view: its depth is checked where the child is written.
    if (strategy === "share_v1") assertShareChildDepth(parent.history ?? null, parent.parentId, childId);
    if (dryRun) {
      const plan = forkPlan(ws, parent.parentId, childId, parent.facts, strategy, { recorded: false, dryRun: true, summaryStrategy: null });
      await ctx.report(
        plan as unknown as Record<string, unknown>,
        `Fork plan for ${plan.parent_session_id}: would create child ${childId} with ${plan.event_count} replayed events through seq ${plan.to_seq}.`,
      );
      return 0;
    }
    const out = new LineBuffer(ctx.out);
    for await (const line of abortable(forkStreamChunks(ws, parent, childId, strategy), ctx.signal)) {
      if (out.closed) break;
      await out.push(line);
    }
    await out.flush();
    return 0;
  } finally {
    parent.dispose();
  }
}
