// pixir export html / pixir export md (view.md §1–§2): a page of a fork family, or Markdown of one Log.
import path from "node:path";
import {
  abortable,
  exportSite,
  readCatalog,
  type PageFacts,
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
  if (boolFlag(args, "all")) return runSiteExport(args, ctx);
  const [id] = args.positionals;
  if (id === undefined) throw usageError(ctx.synopsis, "give a session id, or --all --out DIR for the whole Workspace");
  assertSessionId(id);
  if (boolFlag(args, "family") && boolFlag(args, "no-family")) throw usageError(ctx.synopsis, "--family and --no-family cannot be given together");
  const maxDepth = parseNonNegativeInt("max-depth", stringFlag(args, "max-depth"), ctx.synopsis);
  const plan = await planHtmlExport(ctx.workspace(), id, { family: !boolFlag(args, "no-family"), maxDepth }, { facts: await pageFacts(ctx.workspace()) });
  const chunks = htmlPageChunks(plan, (w) => ctx.warn(w.code, w.text, w.details));
  return deliver(args, ctx, chunks, viewSessions(plan), "the page", "the exported page");
}

export async function runMdExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  // --tools is one of MD_TOOL_MODES (its declared choices).
  const tools = stringFlag(args, "tools") ?? "full";
  const maxDepth = parseNonNegativeInt("max-depth", stringFlag(args, "max-depth"), ctx.synopsis);
  const plan = await planMdExport(ctx.workspace(), id, tools as MdToolMode, { family: boolFlag(args, "family"), maxDepth, titleOf: titleLookup(await pageFacts(ctx.workspace())) });
  return deliver(args, ctx, markdownChunks(plan), mdSessions(plan), "the Markdown", "the exported Markdown");
}

const titleLookup = (facts: PageFacts) => (id: string) => facts.get(id)?.title ?? null;

/** Titles and agents of the Workspace's sessions (archive.md §1), for the page's headings. */
async function pageFacts(ws: string): Promise<PageFacts> {
  return new Map((await readCatalog(ws)).map((f) => [f.session_id, { title: f.title, agent: f.agent }]));
}

/** `pixir export html --all --out DIR` (archive.md §4): the site of the whole Workspace. */
async function runSiteExport(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const out = stringFlag(args, "out");
  if (args.positionals.length > 0) throw usageError(ctx.synopsis, "--all takes no session id");
  if (out === undefined) throw usageError(ctx.synopsis, "--all needs --out DIR, the site's folder");
  for (const name of ["no-family", "dry-run"]) if (boolFlag(args, name)) throw usageError(ctx.synopsis, `--all cannot be given with --${name}`);
  const maxDepth = parseNonNegativeInt("max-depth", stringFlag(args, "max-depth"), ctx.synopsis);
  const progress = ctx.progress("export html");
  const report = await exportSite(ctx.workspace(), {
    display: out,
    dir: path.resolve(ctx.io.cwd, out),
    maxDepth,
    onWarning: (w) => ctx.warn(w.code, w.text, w.details),
    onPage: progress === undefined ? undefined : (done, total) => progress(`${done}/${total} pages`),
  });
  const text = `Wrote ${report.written} of ${report.pages} page${report.pages === 1 ? "" : "s"} (${report.unchanged} unchanged${report.removed > 0 ? `, ${report.removed} removed` : ""}) and the index to ${path.join(report.dir, "index.html")}.`;
  await ctx.report(report as unknown as Record<string, unknown>, text);
  return 0;
}

