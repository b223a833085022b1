// pixir import pi / pixir export pi (cli.md §12.9, pi-interop.md §3–§4).
import path from "node:path";
import {
  abortable,
  assertOnePlace,
  assertSessionId,
  boolFlag,
  finishPiExport,
  handBackFiles,
  handBackLine,
  handoffCwd,
  importPiFiles,
  installDir,
  piInstallDir,
  planPiExportStreamed,
  resumeCommand,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runImport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const given = args.positionals.map((f) => ({ path: path.resolve(ctx.io.cwd, f), display: f }));
  const ws = ctx.workspace();
  const handed = await handBackFiles(ws, "pi", given, { program: ctx.program, env: ctx.io.env, signal: ctx.signal, dryRun: boolFlag(args, "dry-run") });
  const files = given.filter((f) => !handed.skipFile(f.path));
  const imported = await importPiFiles(ws, {
    files,
    lenient: boolFlag(args, "lenient"),
    dryRun: boolFlag(args, "dry-run"),
    program: ctx.program,
    env: ctx.io.env,
    signal: ctx.signal,
    progress: ctx.progress("pixir import pi"),
  });
  const { skipped, ...rest } = imported;
  const report = { ...rest, ...(handed.reports.length > 0 ? { handed_back: handed.reports } : {}) };
  if (!ctx.json) {
    for (const s of skipped ?? []) for (const line of s.lines) ctx.warn("malformed_line", `${s.file}:${line}: skipped a line that is not valid JSON`);
    for (const imp of report.imports) {
      for (const o of imp.orphans) {
        ctx.warn("pi_orphan_entry", `${imp.file}: entry ${JSON.stringify(o.entry_id)} names a missing parent ${JSON.stringify(o.missing_parent_id)}; imported as a root`);
      }
    }
  }
  const lines = [...handed.reports.map(handBackLine), ...report.imports.flatMap((imp) => imp.sessions.map((s) => `${s.status} ${s.session_id} (${s.role}, ${s.event_count} events)`))];
  await ctx.report(report as unknown as Record<string, unknown>, lines);
  return 0;
}

export async function runExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  const install = boolFlag(args, "install");
  const dryRun = boolFlag(args, "dry-run");
  assertOnePlace(stringFlag(args, "out"), install, ctx.synopsis);
  const ws = ctx.workspace();
  const plan = await planPiExportStreamed(ws, id, { cwd: await handoffCwd(ws, id, "pi", stringFlag(args, "cwd"), ctx.io.cwd) });
  for (const w of plan.warnings) ctx.warn(w.code, w.text, w.details);
  const cwd = typeof plan.header.cwd === "string" ? plan.header.cwd : ws;
  const out = install ? (installDir(piInstallDir(ctx.io.env, cwd), dryRun) ?? undefined) : stringFlag(args, "out");
  if (out === undefined && !dryRun && !install) {
    // Stream command: the pi file itself is the output.
    for await (const batch of abortable(plan.chunks(), ctx.signal)) await ctx.out.write(batch);
    ctx.progress("resume")?.(resumeCommand("pi", { cwd, id, file: null }));
    return 0;
  }
  const finished = await finishPiExport(plan, { out: install && out !== undefined ? `${out}/` : out, cwd: ctx.io.cwd, dryRun, sameIsUnchanged: install, signal: ctx.signal });
  const report = { ...finished, resume_command: resumeCommand("pi", { cwd, id, file: finished.file }) };
  const where = report.file ?? "stdout";
  const sessions = report.sessions.length;
  const text =
    report.status === "unchanged"
      ? `Unchanged ${where}; pi resumes ${report.leaf_entry_id}.`
      : report.recorded
        ? `Exported ${report.entry_count} entries of ${sessions} sessions to ${where}; pi resumes ${report.leaf_entry_id}.`
        : `Would export ${report.entry_count} entries of ${sessions} sessions to ${where}.`;
  await ctx.report(report as unknown as Record<string, unknown>, [text, `resume: ${report.resume_command}`]);
  return 0;
}
