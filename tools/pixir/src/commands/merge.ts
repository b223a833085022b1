// pixir merge (cli.md §12.13): append one branch_summary of a fork child's own Events to its parent.
import { assertSessionId, boolFlag, mergeSession, parseNonNegativeInt, stringFlag, usageError, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runMerge(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const childId = args.positionals[0];
  assertSessionId(childId);
  const parentId = stringFlag(args, "into");
  if (parentId === undefined) throw usageError(ctx.synopsis, "merge requires --into <parent>");
  assertSessionId(parentId, "into");
  const modelTimeoutMs = parseNonNegativeInt("model-timeout-ms", stringFlag(args, "model-timeout-ms"), ctx.synopsis);
  const modelCmd = stringFlag(args, "model-cmd");
  if (modelTimeoutMs !== undefined && modelCmd === undefined) throw usageError(ctx.synopsis, "--model-timeout-ms requires --model-cmd");
  const r = await mergeSession(ctx.workspace(), {
    childId,
    parentId,
    dryRun: boolFlag(args, "dry-run"),
    modelCmd,
    modelTimeoutMs,
    program: ctx.program,
    env: ctx.io.env,
    stderr: ctx.io.stderr,
    warn: ctx.warn,
    signal: ctx.signal,
  });
  const text = r.nothing_to_merge
    ? `Nothing to merge: ${childId} has no events of its own.`
    : r.recorded
      ? `Merged ${childId} into ${parentId} as branch_summary at seq ${r.seq}.`
      : `Would merge ${childId} into ${parentId} as branch_summary at seq ${r.seq}.`;
  await ctx.report(r as unknown as Record<string, unknown>, text);
  return 0;
}
