// pixir-log repair (cli.md §8.6): drop a torn final line; roll back a leftover append journal.
import { assertSessionId, boolFlag, repairLog, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runRepair(args: ParsedArgs, ctx: CommandContext): Promise<number> {
  const id = args.positionals[0];
  assertSessionId(id);
  const r = await repairLog(ctx.workspace(), id, { program: ctx.program, env: ctx.io.env, dryRun: boolFlag(args, "dry-run"), signal: ctx.signal });
  const verb = r.dry_run ? "Would repair" : "Repaired";
  const temps = r.removed_temp_files.length;
  const tempText = `${r.dry_run ? "would remove" : "removed"} ${temps} temp file${temps === 1 ? "" : "s"} of an interrupted write`;
  const lines = r.repaired
    ? [`${verb} ${id}: dropped ${r.dropped_bytes} bytes of a torn final line (line ${r.dropped_line}).`]
    : r.journal_rolled_back
      ? [`${verb} ${id}: rolled back an interrupted append.`]
      : temps > 0
        ? [`${verb} ${id}: ${tempText}.`]
        : [`Nothing to repair in ${id}.`];
  if (temps > 0 && (r.repaired || r.journal_rolled_back)) lines.push(`${verb} ${id}: ${tempText}.`);
  const text = lines.join("\n");
  await ctx.report(r as unknown as Record<string, unknown>, text);
  return 0;
}
