// pixir-summarize (cli.md §10, summarize.md §1): the summarize stage between stdin and stdout.
import {
  LineBuffer,
  parseNonNegativeInt,
  stringFlag,
  summarizeStage,
  usageError,
  type CommandContext,
  type ParsedArgs,
  type SummaryFormat,
} from "@pixir/envelope";

export async function runSummarize(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const format = stringFlag(args, "format") ?? "ndjson";
  const modelCmd = stringFlag(args, "model-cmd");
  const timeoutMs = parseNonNegativeInt("model-timeout-ms", stringFlag(args, "model-timeout-ms"), ctx.synopsis);
  if (timeoutMs !== undefined && modelCmd === undefined) throw usageError(ctx.synopsis, "--model-timeout-ms requires --model-cmd");
  const ws = ctx.workspace();

  const out = new LineBuffer(ctx.out);
  try {
    const lines = summarizeStage(ctx.io.stdin, {
      ws,
      format: format as SummaryFormat,
      modelCmd,
      timeoutMs,
      env: ctx.io.env,
      stderr: ctx.io.stderr,
      signal: ctx.signal,
      warn: ctx.warn,
    });
    for await (const line of lines) {
      if (out.closed) break;
      await out.push(line);
    }
  } finally {
    // Lines passed through before a failure still go out: downstream then sees a short stream.
    await out.flush();
  }
  return 0;
}
