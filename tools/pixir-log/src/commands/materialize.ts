// pixir-log materialize (cli.md §8.7, fork.md §8).
import { boolFlag, materializeLog, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runMaterialize(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0]!;
  const r = await materializeLog(ctx.workspace(), id, { program: ctx.program, env: ctx.io.env, dryRun: boolFlag(args, "dry-run"), signal: ctx.signal });
  const text = !r.materialized
    ? `Nothing to materialize: ${id} is not a share_v1 child.`
    : `${r.dry_run ? "Would materialize" : "Materialized"} ${id}: ${r.inherited_event_count} inherited events copied from ${r.parent_session_id}.`;
  await ctx.report(r as unknown as Record<string, unknown>, text);
  return 0;
}
