// pixir repair (cli.md §12.12): torn tail and leftover journal first, then close tool calls left open.
import { assertSessionId, boolFlag, repairSession, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runRepair(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0];
  assertSessionId(id);
  const r = await repairSession(ctx.workspace(), id, { program: ctx.program, env: ctx.io.env, dryRun: boolFlag(args, "dry-run"), signal: ctx.signal });
  const n = r.closed_tool_calls.length;
  const lines: string[] = [];
  if (r.torn_tail_repaired) lines.push(`${r.dry_run ? "Would drop" : "Dropped"} a torn final line from ${id}.`);
  if (r.journal_rolled_back) lines.push(`${r.dry_run ? "Would roll back" : "Rolled back"} an interrupted append to ${id}.`);
  if (n > 0) lines.push(r.dry_run ? `Would close ${n} open tool calls in ${id}.` : `Closed ${n} open tool calls in ${id}.`);
  await ctx.report(r as unknown as Record<string, unknown>, lines.length > 0 ? lines : `Nothing to repair in ${id}.`);
  return 0;
}
