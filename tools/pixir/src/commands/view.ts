// pixir export html / pixir export md (view.md §1–§2): a page of a fork family, or Markdown of one Log.
import {
  abortable,
  assertSessionId,
  boolFlag,
  exportToFile,
  htmlPageChunks,
  LineBuffer,
  markdownChunks,
  type MdToolMode,
  parseNonNegativeInt,
  planHtmlExport,
  planMdExport,
  streamExport,
  stringFlag,
  usageError,
  viewSessions,
  mdSessions,
  type CommandContext,
  type ParsedArgs,
} from "@pixir/envelope";

/** The export itself, to stdout (a stream command), or the report of --out / --dry-run. */
async function deliver(
  args: ParsedArgs,
  ctx: CommandContext,
  chunks: AsyncIterable<Buffer | string>,
  sessions: ReturnType<typeof viewSessions>,
  what: string,
  /** The file in an error's message: "could not write the exported page". */
  fileName: string,
): Promise<number> {
  const out = stringFlag(args, "out");
  const dryRun = boolFlag(args, "dry-run");
  // Ctrl-C stops the export between two pieces; an --out file is then never placed.
  chunks = abortable(chunks, ctx.signal);
  if (out === undefined && !dryRun) {
    const buffer = new LineBuffer(ctx.out);
    await streamExport(chunks, async (chunk) => {
      if (!buffer.closed) await buffer.push(chunk);
    });
    await buffer.flush();
    return 0;
  }
  const report = await exportToFile(chunks, { out, cwd: ctx.io.cwd, dryRun, what: fileName, sessions });
  const events = sessions.reduce((n, s) => n + s.event_count, 0);
  const of = `${sessions.length} session${sessions.length === 1 ? "" : "s"}, ${events} events, ${report.bytes} bytes`;
  const text = report.dry_run ? `Would write ${what} (${of})${out === undefined ? "" : ` to ${out}`}.` : `Wrote ${what} (${of}) to ${report.file}.`;
  await ctx.report(report as unknown as Record<string, unknown>, text);
  return 0;
}

export async function runHtmlExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  if (boolFlag(args, "family") && boolFlag(args, "no-family")) throw usageError(ctx.synopsis, "--family and --no-family cannot be given together");
  const maxDepth = parseNonNegativeInt("max-depth", stringFlag(args, "max-depth"), ctx.synopsis);
  const plan = await planHtmlExport(ctx.workspace(), id, { family: !boolFlag(args, "no-family"), maxDepth });
  const chunks = htmlPageChunks(plan, (w) => ctx.warn(w.code, w.text, w.details));
  return deliver(args, ctx, chunks, viewSessions(plan), "the page", "the exported page");
}

export async function runMdExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  // --tools is one of MD_TOOL_MODES (its declared choices).
  const tools = stringFlag(args, "tools") ?? "full";
  const maxDepth = parseNonNegativeInt("max-depth", stringFlag(args, "max-depth"), ctx.synopsis);
  const plan = await planMdExport(ctx.workspace(), id, tools as MdToolMode, { family: boolFlag(args, "family"), maxDepth });
  return deliver(args, ctx, markdownChunks(plan), mdSessions(plan), "the Markdown", "the exported Markdown");
}
