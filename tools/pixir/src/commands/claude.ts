// pixir import claude / pixir export claude (claude-interop.md §4–§5).
import path from "node:path";
import {
  abortable,
  assertOnePlace,
  assertSessionId,
  boolFlag,
  claudeInstallRoot,
  handBackFiles,
  handBackLine,
  finishClaudeExport,
  handoffCwd,
  defaultProjectsRoot,
  nothingFoundNote,
  importClaude,
  installDir,
  planClaudeExportStreamed,
  resumeCommand,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

/** claude-interop.md §4.1: a symbolic link met while listing is not followed; naming it imports it. */
export const symlinkNote = "a symbolic link, not followed: name it on the command line to import it";

/** A last line without its newline is one the agent is still writing: said in the text report too. */
export const pendingLine = (file: string): string => `pending ${file}: 1 line pending (no newline yet; imported once it is complete)`;

/** An import that found nothing to read says so, rather than printing nothing. */
export const nothingFound = (what: string, where: string[]): string => `nothing imported: no ${what} found in ${where.join(", ")}`;

export async function runClaudeImport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const paths = args.positionals.map((p) => path.resolve(ctx.io.cwd, p));
  const progress = progressLines(ctx);
  const ws = ctx.workspace();
  const common = { program: ctx.program, env: ctx.io.env, signal: ctx.signal, dryRun: boolFlag(args, "dry-run") };
  const handed = await handBackFiles(ws, "claude", paths.map((p) => ({ path: p, display: p })), common);
  const imported = await importClaude(ws, {
    paths,
    skipFile: handed.skipFile,
    lenient: boolFlag(args, "lenient"),
    dryRun: boolFlag(args, "dry-run"),
    program: ctx.program,
    env: ctx.io.env,
    signal: ctx.signal,
    progress: progress.say,
  }).finally(progress.end);
  const result = { ...imported, ...(handed.reports.length > 0 ? { handed_back: handed.reports } : {}) };
  if (result.imports.length === 0 && handed.reports.length === 0 && !ctx.json) ctx.io.stderr.write(`${nothingFoundNote("Claude Code", paths.length > 0 ? paths : [defaultProjectsRoot(ctx.io.env)], "pixir import claude ~/.claude/projects")}\n`);
  const lines: string[] = handed.reports.map(handBackLine);
  for (const imp of result.imports) {
    if (imp.status === "skipped" || imp.status === "empty") {
      const reason = imp.error === undefined ? "" : imp.error.kind === "unit_skipped" ? ` (${String(imp.error.message)})` : ` (${String(imp.error.kind)}: ${String((imp.error.details as Record<string, unknown> | undefined)?.reason ?? "")})`;
      lines.push(`${imp.status} ${imp.file}${reason}`);
      continue;
    }
    for (const log of imp.logs) {
      const added = log.appended_events !== undefined ? `+${log.appended_events} events, ` : "";
      lines.push(`${log.status} ${log.session_id} (${log.role}, ${added}${log.event_count} events)`);
    }
  }
  for (const imp of result.imports) if (imp.pending_tail_bytes > 0) lines.push(pendingLine(imp.file));
  for (const s of result.skipped_files ?? []) lines.push(`skipped ${s.file} (${symlinkNote})`);
  if (result.imports.length === 0) lines.push(nothingFound("Claude Code session files (*.jsonl)", paths.length > 0 ? paths : ["the Claude Code projects directory"]));
  await ctx.report(result as unknown as Record<string, unknown>, lines);
  return 0;
}

/**
 * claude-interop.md §4.5: on a terminal (never with --json), a line per source file, `claude import [i/n] file`;
 * a file of 1 MiB or more shows its byte percentage on that line as it is read.
 */
function progressLines(ctx: CommandContext) {
  let open = false;
  const end = () => {
    if (open) ctx.io.stderr.write("\n");
    open = false;
  };
  if (ctx.progress("claude import") === undefined) return { say: undefined, end };
  const say = (i: number, n: number, file: string, percent: number | null) => {
    const line = `claude import [${i}/${n}] ${file}`;
    if (percent === null) end();
    ctx.io.stderr.write(percent === null ? line : `\r${line} ${percent}%`);
    open = true;
  };
  return { say, end };
}

export async function runClaudeExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  const install = boolFlag(args, "install");
  const dryRun = boolFlag(args, "dry-run");
  assertOnePlace(stringFlag(args, "out"), install, ctx.synopsis);
  const ws = ctx.workspace();
  const plan = await planClaudeExportStreamed(ws, id, { cwd: await handoffCwd(ws, id, "claude", stringFlag(args, "cwd"), ctx.io.cwd) });
  const resume = resumeCommand("claude", { cwd: plan.cwd, id: plan.claudeSessionId, file: null });
  for (const w of plan.fork?.warnings ?? []) ctx.warn(w, "the source session's Logs are not in the Workspace; copied the fork's own Claude prefix");
  const out = install ? (installDir(claudeInstallRoot(ctx.io.env), dryRun) ?? undefined) : stringFlag(args, "out");
  if (out === undefined && !dryRun && !install) {
    // Stream command (§5.4): the file holding <id>'s records is the output.
    if (plan.subagentFiles > 0) {
      const n = plan.subagentFiles;
      ctx.warn("claude_subagents_not_written", `${n} subagent file${n === 1 ? " was" : "s were"} not written: stdout holds the session file only (--out DIR writes them too)`, { count: n });
    }
    for await (const chunk of abortable(plan.main.chunks(), ctx.signal)) await ctx.out.write(chunk);
    ctx.progress("resume")?.(resume);
    return 0;
  }
  const report = { ...(await finishClaudeExport(plan, { out, cwd: ctx.io.cwd, dryRun, signal: ctx.signal })), resume_command: resume };
  const lines = report.files.map((f) => `${f.status} ${f.path} (${f.records} records)`);
  await ctx.report(report as unknown as Record<string, unknown>, [...lines, `resume: ${resume}`]);
  return 0;
}
