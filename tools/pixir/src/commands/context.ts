// pixir context (cli.md §12.5, context-and-compaction.md §1): the model-visible History, streamed.
import {
  abortable,
  assertSessionId,
  contextItems,
  formatContextItem,
  LineBuffer,
  openContextHistory,
  resourceLookupOf,
  stringFlag,
  type CommandContext,
  type ContextFormat,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runContext(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0];
  assertSessionId(id);
  const format = stringFlag(args, "format") ?? "ndjson";
  const ws = ctx.workspace();
  const history = await openContextHistory(ws, id);
  const out = new LineBuffer(ctx.out);
  for await (const item of abortable(contextItems(history, resourceLookupOf(ws, history), ctx.signal), ctx.signal)) {
    if (out.closed) break;
    await out.push(formatContextItem(item, format as ContextFormat));
  }
  await out.flush();
  return 0;
}
