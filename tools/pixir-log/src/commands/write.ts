// pixir-log write (cli.md §8.2): a plain or fork stream from stdin becomes (part of) a Log.
import { boolFlag, forkNextHint, forkPlanText, writeStream, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runWrite(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const written = await writeStream(ctx.workspace(), args.positionals[0], ctx.io.stdin, {
    program: ctx.program,
    env: ctx.io.env,
    dryRun: boolFlag(args, "dry-run"),
    allowEmpty: boolFlag(args, "allow-empty"),
    takeOverDeadWriter: boolFlag(args, "take-over-dead-writer"),
    signal: ctx.signal,
  });
  if (written.fork) {
    const plan = written.result;
    await ctx.report(plan as unknown as Record<string, unknown>, forkPlanText(plan));
    if (plan.recorded) ctx.hint(forkNextHint(plan.child_session_id));
    return 0;
  }
  const r = written.result;
  const range = r.event_count > 0 ? ` (seq ${r.first_seq}..${r.last_seq})` : "";
  const text = r.dry_run
    ? `Would write ${r.event_count} events to ${r.session_id}${range}.`
    : r.created
      ? `Created ${r.session_id} with ${r.event_count} events${range}.`
      : `Wrote ${r.event_count} events to ${r.session_id}${range}.`;
  await ctx.report(r as unknown as Record<string, unknown>, text);
  return 0;
}
