// archive.md §3: `pixir usage` over a Workspace: its flags read into a UsageQuery, the catalog's session
// facts, every Log's model calls (usage-index.ts), then the report.
import { usageError } from "../event/errors.js";
import { AGENT_RULES } from "./agents.js";
import { readCatalogListed } from "./catalog.js";
import { COST_MODES, loadPrices, type CostMode } from "./prices.js";
import { resolveSessionId } from "./resolve.js";
import { readModelCalls } from "./usage-index.js";
import { daysBefore, parseDay, USAGE_GROUPINGS, usageReport, type UsageGrouping, type UsageQuery, type UsageReport } from "./usage.js";

/** The flags of `pixir usage` as typed (undefined when absent). */
export interface UsageFlags {
  by?: string;
  since?: string;
  until?: string;
  session?: string;
  agent?: string;
  project?: string;
  prices?: string;
  mode?: string;
}

/** The days of a `--by day` report given no range and no `--session`, today included. */
export const DEFAULT_DAYS = 30;

/** The query the flags ask for; a usage error names a bad value. `now` fixes "the last 30 days". */
export function usageQueryOf(flags: UsageFlags, synopsis: string, now: Date = new Date()): Omit<UsageQuery, "session"> & { session: string | null; defaultWindow: boolean } {
  const by = (flags.by ?? "day") as UsageGrouping;
  if (!USAGE_GROUPINGS.includes(by)) throw usageError(synopsis, `--by must be one of ${USAGE_GROUPINGS.join(", ")}`);
  const mode = (flags.mode ?? "auto") as CostMode;
  if (!COST_MODES.includes(mode)) throw usageError(synopsis, `--mode must be one of ${COST_MODES.join(", ")}`);
  const day = (flag: "since" | "until"): string | null => {
    const v = flags[flag];
    if (v === undefined) return null;
    const d = parseDay(v);
    if (d === null) throw usageError(synopsis, `--${flag} must be a date, YYYY-MM-DD or YYYYMMDD`);
    return d;
  };
  const agents = [...AGENT_RULES.map((r) => r.agent), "pixir"];
  if (flags.agent !== undefined && !agents.includes(flags.agent)) throw usageError(synopsis, `--agent must be one of ${agents.join(", ")}`);
  const since = day("since");
  const until = day("until");
  if (since !== null && until !== null && since > until) throw usageError(synopsis, "--since must not be after --until");
  const defaultWindow = by === "day" && since === null && until === null && flags.session === undefined;
  return {
    by,
    since: defaultWindow ? daysBefore(now, DEFAULT_DAYS - 1) : since,
    until,
    session: flags.session ?? null,
    agent: flags.agent ?? null,
    project: flags.project ?? null,
    mode,
    prices: loadPrices(flags.prices ?? null),
    defaultWindow,
  };
}

/** The note on stderr of a text report: the default window, or why there is no row. */
export function usageNote(q: ReturnType<typeof usageQueryOf>, report: UsageReport): string | null {
  const window = q.defaultWindow ? `the last ${DEFAULT_DAYS} days (since ${q.since})` : null;
  if (report.rows.length === 0) return `hint: no model calls${window === null ? "" : ` in ${window}`}; --since DATE, --by month or --by session for all of them`;
  return window === null ? null : `hint: ${window}, by day; --since DATE, --by month or --by session for more`;
}

/** The report of a Workspace for `q`; `--session` takes a unique prefix of an existing id. `progress`: a terminal's progress lines. */
export async function workspaceUsage(workspace: string, q: UsageQuery, progress?: (text: string) => void): Promise<UsageReport> {
  const session = q.session === null ? null : await resolveSessionId(workspace, q.session);
  const { facts: sessions, listing } = await readCatalogListed(workspace);
  const calls = await readModelCalls(workspace, sessions, progress, listing);
  return usageReport(sessions, calls, { ...q, session });
}
