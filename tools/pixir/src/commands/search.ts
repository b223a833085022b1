// pixir search and pixir index (archive.md §2): flags in, the library's search and index jobs, hits out.
import {
  boolFlag,
  indexText,
  indexWorkspace,
  LineBuffer,
  parseNonNegativeInt,
  searchSessions,
  searchText,
  stringFlag,
  type CommandContext,
  type ParsedArgs,
  type SearchSort,
} from "@pixir/envelope";

/** Bold matches on a terminal unless NO_COLOR is set (no-color.org); «» everywhere else. */
function boldMatches(ctx: CommandContext): boolean {
  return ctx.io.stdoutColumns !== undefined && (ctx.io.env.NO_COLOR ?? "") === "";
}

function progressOf(ctx: CommandContext): ((done: number, total: number) => void) | undefined {
  const say = ctx.progress("index");
  if (say === undefined) return undefined;
  let shown = 0;
  return (done, total) => {
    const now = Date.now();
    if (now - shown < 1000) return;
    shown = now;
    say(`${(done / 1048576).toFixed(0)} of ${(total / 1048576).toFixed(0)} MiB of Logs`);
  };
}

/** `--type a,b` (spaces around the commas allowed). */
const typesOf = (v: string | undefined): string[] | undefined => v?.split(",").map((t) => t.trim()).filter((t) => t !== "");

export async function runSearchCommand(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const run = await searchSessions(
    ctx.workspace(),
    {
      query: args.positionals,
      agent: stringFlag(args, "agent"),
      project: stringFlag(args, "project"),
      session: stringFlag(args, "session"),
      types: typesOf(stringFlag(args, "type")),
      tool: stringFlag(args, "tool"),
      file: stringFlag(args, "file"),
      since: stringFlag(args, "since"),
      until: stringFlag(args, "until"),
      sort: (stringFlag(args, "sort") ?? "time") as SearchSort,
      limit: parseNonNegativeInt("limit", stringFlag(args, "limit") ?? "50", ctx.synopsis, true) ?? 50,
    },
    progressOf(ctx),
  );
  for (const n of run.index.notes) ctx.warn(n.code, n.text, { message: n.text });
  const out = new LineBuffer(ctx.out);
  const lines = ctx.json ? run.hits.map((h) => JSON.stringify(h)) : searchText(run.hits, { bold: boldMatches(ctx) });
  for (const line of lines) {
    if (out.closed) break;
    await out.push(`${line}\n`);
  }
  await out.flush();
  if (!ctx.json && run.hits.length === 0) ctx.hint("no hits");
  return 0;
}

export async function runIndexCommand(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const report = await indexWorkspace(ctx.workspace(), boolFlag(args, "rebuild"), progressOf(ctx));
  if (!ctx.json) for (const n of report.notes) ctx.warn(n.code, n.text, { message: n.text });
  await ctx.report(report as unknown as Record<string, unknown>, indexText(report));
  return 0;
}
