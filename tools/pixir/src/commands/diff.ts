// pixir diff (cli.md §12.10): where two resolved Histories diverge.
import { assertSessionId, boolFlag, diffSessions, diffText, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runDiff(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [a, b] = args.positionals;
  assertSessionId(a);
  assertSessionId(b);
  const r = await diffSessions(ctx.workspace(), a, b);
  await ctx.report(r as unknown as Record<string, unknown>, diffText(r));
  return boolFlag(args, "exit-code") && !r.identical ? 1 : 0;
}
