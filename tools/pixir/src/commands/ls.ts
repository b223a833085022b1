// pixir ls (archive.md §1): the sessions of the Workspace, newest first, to find one by.
import {
  emptyWorkspaceNote,
  listSessions,
  lsLines,
  parseDateFlag,
  parseKinds,
  parseNonNegativeInt,
  readCatalog,
  stringFlag,
  type CommandContext,
  type ListOptions,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runLs(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const ws = ctx.workspace();
  const options = listOptions(args, ctx.synopsis);
  const catalog = await readCatalog(ws);
  if (catalog.length === 0) {
    if (!ctx.json) ctx.io.stderr.write(`${emptyWorkspaceNote(ws)}\n`);
    return 0;
  }
  const rows = listSessions(catalog, options);
  const lines = ctx.json ? rows.map((r) => JSON.stringify(r.facts)) : lsLines(rows, { columns: ctx.io.stdoutColumns, allIds: catalog.map((f) => f.session_id) });
  if (rows.length > 0) await ctx.out.write(`${lines.join("\n")}\n`);
  return 0;
}

function listOptions(args: ParsedArgs, synopsis: string): ListOptions {
  const now = new Date();
  const since = stringFlag(args, "since");
  const until = stringFlag(args, "until");
  const kind = stringFlag(args, "kind");
  return {
    agent: stringFlag(args, "agent"),
    project: stringFlag(args, "project"),
    since: since === undefined ? undefined : parseDateFlag(since, "since", now, synopsis),
    until: until === undefined ? undefined : parseDateFlag(until, "until", now, synopsis),
    kinds: kind === undefined ? undefined : parseKinds(kind, synopsis),
    all: args.flags.all === true,
    limit: parseNonNegativeInt("limit", stringFlag(args, "limit"), synopsis, true),
  };
}
