// pixir import codex / pixir export codex (codex-interop.md §4–§5).
import path from "node:path";
import { nothingFound, pendingLine, symlinkNote } from "./claude.js";
import {
  abortable,
  assertOnePlace,
  assertSessionId,
  boolFlag,
  codexInstallRoot,
  defaultCodexSessionsDir,
  finishCodexExport,
  handBackFiles,
  handBackLine,
  handoffCwd,
  importCodexRollouts,
  installDir,
  nothingFoundNote,
  openCodexExport,
  resumeCommand,
  shownThreadId,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runCodexImport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const given = args.positionals;
  const paths = given.length > 0 ? given.map((p) => ({ path: path.resolve(ctx.io.cwd, p), display: p })) : [{ path: defaultCodexSessionsDir(ctx.io.env), display: defaultCodexSessionsDir(ctx.io.env) }];
  const say = ctx.progress("pixir import codex");
  const ws = ctx.workspace();
  const handed = await handBackFiles(ws, "codex", paths, { program: ctx.program, env: ctx.io.env, signal: ctx.signal, dryRun: boolFlag(args, "dry-run") });
  const imported = await importCodexRollouts(ws, {
    paths,
    skipFile: handed.skipFile,
    lenient: boolFlag(args, "lenient"),
    dryRun: boolFlag(args, "dry-run"),
    program: ctx.program,
    env: ctx.io.env,
    signal: ctx.signal,
    progress: say === undefined ? undefined : (i, n, file) => ctx.io.stderr.write(`\r[${i}/${n}] ${file}\x1b[K`),
  });
  if (say !== undefined) ctx.io.stderr.write("\r\x1b[K");
  const result = { ...imported, ...(handed.reports.length > 0 ? { handed_back: handed.reports } : {}) };
  if (result.imports.length === 0 && handed.reports.length === 0 && !ctx.json) ctx.io.stderr.write(`${nothingFoundNote("Codex", paths.map((p) => p.display), "pixir import codex ~/.codex/sessions")}\n`);
  for (const imp of result.imports) {
    if (imp.skipped_lines > 0) ctx.warn("malformed_line", `${imp.file}: skipped ${imp.skipped_lines} line(s) that are not valid records`);
  }
  const lines: string[] = handed.reports.map(handBackLine);
  for (const imp of result.imports) {
    for (const s of imp.sessions) {
      lines.push(
        s.status === "appended" || s.status === "would_append"
          ? `${s.status} ${s.session_id} (${s.role}, +${s.new_event_count} events, ${s.event_count} total)`
          : `${s.status} ${s.session_id} (${s.role}, ${s.event_count} events)`,
      );
    }
  }
  for (const imp of result.imports) if (imp.pending_tail) lines.push(pendingLine(imp.file));
  for (const l of result.links) lines.push(`${l.status === "created" ? "linked" : "would link"} ${l.parent_session_id} -> ${l.child_session_id}`);
  for (const s of result.skipped_files) lines.push(`skipped ${s.file} (${s.reason === "symlink" ? symlinkNote : s.reason})`);
  if (result.imports.length === 0 && result.skipped_files.length === 0) lines.push(nothingFound("Codex rollouts (*.jsonl)", paths.map((p) => p.display)));
  await ctx.report(result as unknown as Record<string, unknown>, lines);
  return 0;
}

export async function runCodexExport(args: ParsedArgs, ctx: CommandContext, version: string): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  const install = boolFlag(args, "install");
  const dryRun = boolFlag(args, "dry-run");
  assertOnePlace(stringFlag(args, "out"), install, ctx.synopsis);
  const ws = ctx.workspace();
  const plan = await openCodexExport(ws, id, version, { cwd: await handoffCwd(ws, id, "codex", stringFlag(args, "cwd"), ctx.io.cwd) });
  const resume = resumeCommand("codex", { cwd: plan.cwd ?? ws, id: shownThreadId(plan.threadId) ?? plan.threadId, file: null });
  if (plan.missingLines.length > 0) {
    ctx.warn("codex_lines_missing", `lines ${plan.missingLines.join(", ")} were skipped by a lenient import and are not in the export`, { missing_lines: plan.missingLines });
  }
  const out = install ? (installDir(codexInstallRoot(ctx.io.env), dryRun) ?? undefined) : stringFlag(args, "out");
  if (out === undefined && !dryRun && !install) {
    // Stream command: the rollout itself is the output.
    for await (const chunk of abortable(plan.make().chunks, ctx.signal)) await ctx.out.write(chunk);
    ctx.progress("resume")?.(resume);
    return 0;
  }
  const report = { ...(await finishCodexExport(plan, { out, cwd: ctx.io.cwd, dryRun, signal: ctx.signal })), resume_command: resume };
  const where = report.path ?? report.file;
  const text =
    report.status === "unchanged"
      ? `Unchanged ${where}.`
      : report.status === "created"
        ? `Wrote ${where} (${report.line_count} lines, ${report.export}).`
        : `Would write ${where} (${report.line_count} lines, ${report.export}).`;
  await ctx.report(report as unknown as Record<string, unknown>, [text, `resume: ${resume}`]);
  return 0;
}
