// pixir-log rm (cli.md §8.8, fork.md §9).
import { boolFlag, removeLog, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runRm(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0]!;
  const r = await removeLog(ctx.workspace(), id, {
    program: ctx.program,
    env: ctx.io.env,
    dryRun: boolFlag(args, "dry-run"),
    materializeChildren: boolFlag(args, "materialize-children"),
    signal: ctx.signal,
  });
  const lines = r.dry_run
    ? [...r.materialized_children.map((c) => `Would materialize ${c}.`), `Would remove ${(r.would_remove ?? []).join(" and ")}.`]
    : [...r.materialized_children.map((c) => `Materialized ${c}.`), `Removed ${id}.`];
  await ctx.report(r as unknown as Record<string, unknown>, lines);
  return 0;
}
