// pixir-log check (cli.md §8.5): every problem and warning of the named Logs, or of all of them.
import { assertSessionId, checkLogs, PixirError, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runCheck(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  for (const id of args.positionals) assertSessionId(id);
  const report = await checkLogs(ctx.workspace(), args.positionals.length > 0 ? args.positionals : null, ctx.progress("pixir-log check"));
  const lines: string[] = [];
  for (const log of report.logs) {
    for (const [severity, findings] of [["problem", log.problems], ["warning", log.warnings]] as const) {
      for (const f of findings) lines.push(`${log.session_id}${f.line !== undefined ? `:${f.line}` : ""}: ${severity} ${f.code}: ${f.message}`);
    }
  }
  lines.push(`checked ${report.checked} logs: ${report.problem_count} problems, ${report.warning_count} warnings`);
  if (report.problem_count > 0) {
    if (!ctx.json) await ctx.out.write(`${lines.join("\n")}\n`);
    throw new PixirError("log_check_failed", undefined, { ...report });
  }
  await ctx.report({ ok: true, checked: report.checked, warning_count: report.warning_count, logs: report.logs }, lines);
  return 0;
}
