// pixir import opencode / pixir export opencode (docs/gemini-opencode-interop.md §5–§7).
import path from "node:path";
import {
  assertSessionId,
  boolFlag,
  finishOpencodeExport,
  importOpencode,
  planOpencodeExport,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runOpencodeImport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const paths = args.positionals.map((p) => ({ path: path.resolve(ctx.io.cwd, p), display: p }));
  const result = await importOpencode(ctx.workspace(), {
    paths,
    lenient: boolFlag(args, "lenient"),
    dryRun: boolFlag(args, "dry-run"),
    program: ctx.program,
    env: ctx.io.env,
    signal: ctx.signal,
  });
  for (const r of result.skipped_records) ctx.warn("malformed_record", `${r}: skipped a record that is not valid JSON`);
  const lines: string[] = [];
  for (const imp of result.imports) {
    for (const s of imp.sessions) {
      lines.push(
        s.status === "appended" || s.status === "would_append"
          ? `${s.status} ${s.session_id} (${s.role}, +${s.new_event_count} events, ${s.event_count} total)`
          : `${s.status} ${s.session_id} (${s.role}, ${s.event_count} events)`,
      );
    }
  }
  await ctx.report(result as unknown as Record<string, unknown>, lines);
  return 0;
}

export async function runOpencodeExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  const out = stringFlag(args, "out");
  const install = boolFlag(args, "install");
  const dryRun = boolFlag(args, "dry-run");
  const plan = await planOpencodeExport(ctx.workspace(), id);
  if (out === undefined && !install && !dryRun) {
    await ctx.out.write(plan.text);
    return 0;
  }
  const report = finishOpencodeExport(plan, { out, install, dryRun, cwd: ctx.io.cwd, env: ctx.io.env });
  const where = report.file ?? "stdout";
  const lines = [report.recorded ? `Exported ${plan.kind === "original" ? "the original" : "a new"} opencode session ${report.opencode_session_id} (${report.message_count} messages) to ${where}.` : `Would export ${report.message_count} messages to ${where}.`];
  if (install && report.recorded) lines.push(`Run: opencode import ${report.file}`);
  await ctx.report(report as unknown as Record<string, unknown>, lines);
  return 0;
}
