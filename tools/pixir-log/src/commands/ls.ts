// pixir-log ls (cli.md §8.4).
import { describeLogs, emptyWorkspaceNote, listLogs, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runLs(_args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const ws = ctx.workspace();
  if (!ctx.json) {
    const { sessionIds } = listLogs(ws);
    if (sessionIds.length > 0) await ctx.out.write(`${sessionIds.join("\n")}\n`);
    // archive.md §1: a person at a terminal hears why there is nothing; a pipe gets nothing.
    else if (ctx.io.stdoutColumns !== undefined) ctx.io.stderr.write(`${emptyWorkspaceNote(ws)}\n`);
    return 0;
  }
  const { entries, ignoredEntries } = await describeLogs(ws);
  await ctx.report({ ok: true, workspace: ws, sessions: entries, ignored_entries: ignoredEntries }, []);
  return 0;
}
