// pixir usage (archive.md §3): what the Workspace's model calls cost, each counted once.
import { stringFlag, usageNote, usageQueryOf, usageText, workspaceUsage, type CommandContext, type ParsedArgs } from "@pixir/envelope";

const FLAGS = ["by", "since", "until", "session", "agent", "project", "prices", "mode"] as const;

export async function runUsage(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const flags = Object.fromEntries(FLAGS.map((f) => [f, stringFlag(args, f)]));
  const q = usageQueryOf(flags, ctx.synopsis);
  const report = await workspaceUsage(ctx.workspace(), q, ctx.progress("pixir usage"));
  if (ctx.json) {
    const lines = [...report.rows.map((r) => JSON.stringify(r)), JSON.stringify({ total: report.total })];
    await ctx.out.write(`${lines.join("\n")}\n`);
    return 0;
  }
  if (report.rows.length > 0) await ctx.out.write(usageText(report, q.session === null ? q.by : "member"));
  const note = usageNote(q, report);
  if (note !== null) ctx.hint(note);
  return 0;
}
