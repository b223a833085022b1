// pixir fork (cli.md §12.1, §12.11): the fork job in one process under the child's lease.
import {
  assertSessionId,
  boolFlag,
  forkNextHint,
  forkPlanText,
  DETERMINISTIC_SUMMARY,
  finishSummary,
  MODEL_SUMMARY,
  parseForkStrategy,
  parseNonNegativeInt,
  runForkJob,
  stringFlag,
  summarizeStage,
  summaryBuilder,
  usageError,
  type CommandContext,
  type ForkJob,
  type ParsedArgs,
} from "@pixir/envelope";

export async function runForkCommand(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const parentId = args.positionals[0];
  assertSessionId(parentId);
  const childId = stringFlag(args, "child-id");
  if (childId !== undefined) assertSessionId(childId, "child_session_id");
  const toSeq = parseNonNegativeInt("to-seq", stringFlag(args, "to-seq"), ctx.synopsis);
  const strategy = parseForkStrategy(stringFlag(args, "strategy"), ctx.synopsis);
  if (stringFlag(args, "model-cmd") !== undefined && !boolFlag(args, "summarize")) throw usageError(ctx.synopsis, "--model-cmd requires --summarize");
  const modelCmd = stringFlag(args, "model-cmd");
  const timeoutMs = parseNonNegativeInt("model-timeout-ms", stringFlag(args, "model-timeout-ms"), ctx.synopsis);
  if (timeoutMs !== undefined && modelCmd === undefined) throw usageError(ctx.synopsis, "--model-timeout-ms requires --model-cmd");
  const ws = ctx.workspace();
  // The same stage pixir-summarize runs, fed the fork stream in-process.
  const options = (env: NodeJS.ProcessEnv) => ({ ws, modelCmd, timeoutMs, env, stderr: ctx.io.stderr, signal: ctx.signal, warn: ctx.warn });
  const summarize: ForkJob["summarize"] = boolFlag(args, "summarize")
    ? {
        strategy: modelCmd === undefined ? DETERMINISTIC_SUMMARY : MODEL_SUMMARY,
        stage: (lines, env) => summarizeStage(lines, options(env)),
        direct: { builder: () => summaryBuilder({ modelCmd }), finish: (builder, header, env) => finishSummary(builder, header, options(env)) },
      }
    : undefined;
  const plan = await runForkJob(ws, {
    parentId,
    childId,
    toSeq,
    strategy,
    strictBoundary: boolFlag(args, "strict-boundary"),
    summarize,
    dryRun: boolFlag(args, "dry-run"),
    program: ctx.program,
    env: ctx.io.env,
    signal: ctx.signal,
    progress: ctx.progress("pixir fork"),
  });
  await ctx.report(plan as unknown as Record<string, unknown>, forkPlanText(plan));
  if (plan.recorded) ctx.hint(forkNextHint(plan.child_session_id));
  return 0;
}
