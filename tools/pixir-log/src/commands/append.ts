// pixir-log append (cli.md §8.3): stamp and append Events from stdin under the Writer Lease.
import { appendEvents, assertSessionId, boolFlag, parseNonNegativeInt, stringFlag, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runAppend(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0];
  assertSessionId(id);
  const waitSeconds = parseNonNegativeInt("wait", stringFlag(args, "wait"), ctx.synopsis);
  const result = await appendEvents(ctx.workspace(), id, ctx.io.stdin, {
    program: ctx.program,
    env: ctx.io.env,
    dryRun: boolFlag(args, "dry-run"),
    dropEphemeral: boolFlag(args, "drop-ephemeral"),
    waitSeconds,
    takeOverDeadWriter: boolFlag(args, "take-over-dead-writer"),
    signal: ctx.signal,
  });
  const range = result.event_count > 0 ? ` (seq ${result.first_seq}..${result.last_seq})` : "";
  const verb = result.dry_run ? "Would append" : "Appended";
  await ctx.report(result as unknown as Record<string, unknown>, `${verb} ${result.event_count} events to ${id}${range}.`);
  return 0;
}
