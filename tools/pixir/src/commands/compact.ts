// pixir compact (cli.md §12.6, context-and-compaction.md §3): record a deterministic checkpoint.
import { assertSessionId, boolFlag, compactJson, compactSession, compactText, parseNonNegativeInt, stringFlag, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runCompact(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0];
  assertSessionId(id);
  const tailEvents = parseNonNegativeInt("tail-events", stringFlag(args, "tail-events"), ctx.synopsis, true);
  const r = await compactSession(ctx.workspace(), id, { tailEvents, dryRun: boolFlag(args, "dry-run"), program: ctx.program, env: ctx.io.env, signal: ctx.signal });
  await ctx.report(r as unknown as Record<string, unknown>, compactText(r), compactJson(r));
  return 0;
}
