// pixir import gemini / pixir export gemini (docs/gemini-opencode-interop.md §3–§4).
import path from "node:path";
import {
  assertSessionId,
  boolFlag,
  finishGeminiExport,
  importGeminiFiles,
  planGeminiExport,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runGeminiImport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const paths = args.positionals.map((p) => ({ path: path.resolve(ctx.io.cwd, p), display: p }));
  const say = ctx.progress("pixir import gemini");
  const result = await importGeminiFiles(ctx.workspace(), {
    paths,
    lenient: boolFlag(args, "lenient"),
    dryRun: boolFlag(args, "dry-run"),
    program: ctx.program,
    env: ctx.io.env,
    signal: ctx.signal,
    progress: say === undefined ? undefined : (text) => ctx.io.stderr.write(`\r${text}\x1b[K`),
  });
  if (say !== undefined) ctx.io.stderr.write("\r\x1b[K");
  for (const imp of result.imports) {
    if (imp.skipped_lines > 0) ctx.warn("malformed_line", `${imp.file}: kept ${imp.skipped_lines} line(s) that are not valid records verbatim`);
  }
  const lines: string[] = [];
  for (const imp of result.imports) {
    for (const s of imp.sessions) {
      const role = s.branch === null ? s.role : `${s.role}, ${s.branch}`;
      lines.push(
        s.status === "appended" || s.status === "would_append"
          ? `${s.status} ${s.session_id} (${role}, +${s.new_event_count} events, ${s.event_count} total)`
          : `${s.status} ${s.session_id} (${role}, ${s.event_count} events)`,
      );
    }
  }
  for (const s of result.skipped_files) lines.push(`skipped ${s.file} (${s.reason})`);
  await ctx.report(result as unknown as Record<string, unknown>, lines);
  return 0;
}

export async function runGeminiExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  const out = stringFlag(args, "out");
  const install = boolFlag(args, "install");
  const dryRun = boolFlag(args, "dry-run");
  const plan = await planGeminiExport(ctx.workspace(), id);
  if (out === undefined && !install && !dryRun) {
    await ctx.out.write(plan.bytes);
    return 0;
  }
  const report = finishGeminiExport(plan, { out, install, dryRun, cwd: ctx.io.cwd, env: ctx.io.env });
  const where = report.file ?? "stdout";
  const text = report.recorded
    ? `Exported ${plan.kind === "original" ? "the original" : "a new"} Gemini CLI session ${report.gemini_session_id} (${report.line_count} lines) to ${where}.`
    : `Would export ${report.line_count} lines to ${where}.`;
  await ctx.report(report as unknown as Record<string, unknown>, text);
  return 0;
}
