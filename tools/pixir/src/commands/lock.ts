// pixir lock status|release (writer-lease.md §9–§10; cli.md §12.7–§12.8).
import { assertSessionId, boolFlag, forceRelease, leaseStatus, publicStatus, stringFlag, usageError, type CommandContext, type ParsedArgs } from "@pixir/envelope";

export async function runLock(args: ParsedArgs, ctx: CommandContext, action: "status" | "release"): Promise<number> {
  const [id] = args.positionals;
  assertSessionId(id);
  const force = boolFlag(args, "force");
  const reason = stringFlag(args, "reason");
  if (action === "status") {
    const status = leaseStatus(ctx.workspace(), id);
    const alive = status.holder_alive === true ? "true" : status.holder_alive === false ? "false" : "unknown";
    const h = status.holder ?? {};
    const text =
      status.state === "available"
        ? "available"
        : status.state === "ambiguous"
          ? `ambiguous reason=${status.details?.reason}`
          : `${status.state} holder=${h.holder_id} pid=${h.os_pid} host=${h.hostname} heartbeat_age_ms=${status.heartbeat_age_ms} holder_alive=${alive}`;
    await ctx.report({ ok: true, lease: publicStatus(status) }, text);
    return 0;
  }
  if (!force) throw usageError(ctx.synopsis, reason !== undefined ? "--reason requires --force" : "lock release requires --force");
  if (reason !== undefined && reason === "") throw usageError(ctx.synopsis, "--reason requires text");
  const r = forceRelease(ctx.workspace(), id, reason, ctx.program);
  const { record_rel, ...result } = r;
  const state = (r.state_before as { state?: string }).state;
  const text = r.released ? `Released ${state === "ambiguous" ? "ambiguous" : "stale"} writer lease of ${id}; record ${record_rel}.` : `No writer lease present for ${id}.`;
  await ctx.report(result as unknown as Record<string, unknown>, text);
  return 0;
}
