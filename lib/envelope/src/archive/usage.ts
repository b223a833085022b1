// archive.md §3: `pixir usage`, the model calls of a Workspace summed by day, week, month, session,
// family, model, project or agent, priced from the table. Each call is counted once: a Log's calls are
// its own Events' (model-calls.ts), and a call found in two Logs (a Claude response in a copy of a file
// imported as a root of its own or cut by a branch point, a pi entry copied by `/fork`) is counted once,
// at the Log that holds it first.
import { callTotal, type AgentName, type ModelCall, type TokenKey } from "./model-calls.js";
import { callCost, type CostMode, type PriceTable } from "./prices.js";

export type UsageGrouping = "day" | "week" | "month" | "session" | "family" | "model" | "project" | "agent";
export const USAGE_GROUPINGS: readonly UsageGrouping[] = ["day", "week", "month", "session", "family", "model", "project", "agent"];

/** The session facts usage reads (archive.md §1; the catalog's SessionFacts has them all). */
export interface UsageSession {
  session_id: string;
  agent: AgentName;
  kind: string;
  project: string | null;
  parent: string | null;
  started: string | null;
}

export interface UsageQuery {
  by: UsageGrouping;
  /** Local calendar dates `YYYY-MM-DD`, both ends included; null for open. */
  since: string | null;
  until: string | null;
  /** Only this session and its forks, branches and subagents, one row each. */
  session: string | null;
  agent: string | null;
  /** A substring of the project. */
  project: string | null;
  mode: CostMode;
  prices: PriceTable;
}

export type UsageTotals = { calls: number } & Record<TokenKey, number | null> & { total: number; cost_usd: number | null; unpriced_calls: number; models: string[] };

export interface UsageRow extends UsageTotals {
  key: string;
  /** `--session` and `--by session` rows: the member's kind, parent and depth below the named session. */
  kind?: string;
  parent?: string | null;
  depth?: number;
}

export interface UsageReport {
  rows: UsageRow[];
  total: UsageTotals;
}

/**
 * A call as the report counts it: its time a number (ms since the epoch; -Infinity when unknown or not a
 * time), so the usage index holds no time strings. Times are compared as instants, not as text.
 */
export interface CountedCall extends Omit<ModelCall, "ts"> {
  time: number;
}

export function timeOf(ts: string): number {
  const t = Date.parse(ts);
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

export function countedCall(c: ModelCall): CountedCall {
  const { ts, ...rest } = c;
  return { ...rest, time: timeOf(ts) };
}

/** The calls of many Logs by row (usage-columns.ts CallTable): a call is an object only while it is looked at. */
export interface CallRows {
  rowsOf(id: string): { start: number; count: number } | undefined;
  dedupeKey(row: number): string | null;
  call(row: number): CountedCall;
}

/** The report: the calls of the chosen sessions, each counted once, grouped and priced. */
export function usageReport(sessions: readonly UsageSession[], calls: CallRows, q: UsageQuery): UsageReport {
  const byId = new Map(sessions.map((s) => [s.session_id, s]));
  const members = q.session === null ? null : familyBelow(q.session, sessions);
  const groups = new Map<string, Sum>();
  const all = new Sum();
  const days = new Map<number, string>();
  if (members !== null) for (const m of members) groups.set(m.session.session_id, new Sum());
  countedOnce(sessions, calls, byId, (call) => {
    const s = byId.get(call.session_id)!;
    if (members !== null && !groups.has(s.session_id)) return;
    if (q.agent !== null && s.agent !== q.agent) return;
    if (q.project !== null && !(s.project ?? "").includes(q.project)) return;
    const minute = Math.floor(call.time / 60_000); // time zones shift by whole minutes: one date per minute
    const day = days.get(minute) ?? days.set(minute, localDay(call.time)).get(minute)!;
    if ((q.since !== null && day < q.since) || (q.until !== null && day > q.until)) return;
    const cost = callCost(call, q.prices, q.mode);
    const key = members !== null ? s.session_id : keyOf(q.by, call, s, day, byId);
    (groups.get(key) ?? groups.set(key, new Sum()).get(key)!).add(call, cost);
    all.add(call, cost);
  });
  const rows = [...groups].map(([key, sum]): UsageRow => ({ key, ...sum.totals() }));
  if (members !== null) {
    const place = new Map(members.map((m, i) => [m.session.session_id, i]));
    rows.sort((a, b) => place.get(a.key)! - place.get(b.key)!);
    for (const row of rows) {
      const m = members[place.get(row.key)!]!;
      Object.assign(row, { kind: m.session.kind, parent: m.session.parent, depth: m.depth });
    }
  } else {
    sortRows(rows, q.by);
    if (q.by === "session") for (const row of rows) Object.assign(row, { kind: byId.get(row.key)!.kind, parent: byId.get(row.key)!.parent });
  }
  return { rows, total: all.totals() };
}

/**
 * A running sum of calls; a count no call gave stays null. Written out field by field:
 * a loop over TOKEN_KEYS costs about ten times as much per call (measured), and usage sums every call twice.
 */
class Sum {
  calls = 0;
  total = 0;
  cost = 0;
  priced = 0;
  unpriced = 0;
  input: number | null = null;
  output: number | null = null;
  cache_read: number | null = null;
  cache_write: number | null = null;
  cache_write_5m: number | null = null;
  cache_write_1h: number | null = null;
  reasoning: number | null = null;
  readonly models = new Set<string>();

  add(c: CountedCall, cost: number | null): void {
    this.calls++;
    this.total += callTotal(c);
    if (c.input !== null) this.input = (this.input ?? 0) + c.input;
    if (c.output !== null) this.output = (this.output ?? 0) + c.output;
    if (c.cache_read !== null) this.cache_read = (this.cache_read ?? 0) + c.cache_read;
    if (c.cache_write !== null) this.cache_write = (this.cache_write ?? 0) + c.cache_write;
    if (c.cache_write_5m !== null) this.cache_write_5m = (this.cache_write_5m ?? 0) + c.cache_write_5m;
    if (c.cache_write_1h !== null) this.cache_write_1h = (this.cache_write_1h ?? 0) + c.cache_write_1h;
    if (c.reasoning !== null) this.reasoning = (this.reasoning ?? 0) + c.reasoning;
    if (cost === null) this.unpriced++;
    else {
      this.cost += cost;
      this.priced++;
    }
    if (c.model !== null) this.models.add(c.model);
  }

  totals(): UsageTotals {
    const n = (v: number | null) => (this.calls === 0 ? 0 : v);
    return {
      calls: this.calls,
      input: n(this.input),
      output: n(this.output),
      cache_read: n(this.cache_read),
      cache_write: n(this.cache_write),
      cache_write_5m: n(this.cache_write_5m),
      cache_write_1h: n(this.cache_write_1h),
      reasoning: n(this.reasoning),
      total: this.total,
      // Unknown only when every call is unpriced; a priced part is still a lower bound worth showing.
      cost_usd: this.calls > 0 && this.priced === 0 ? null : Math.round(this.cost * 1e6) / 1e6,
      unpriced_calls: this.unpriced,
      models: [...this.models].sort(),
    };
  }
}

/**
 * Every call once. A call (`dedupe_key`) held by several Logs is counted at the Log that holds it first:
 * the earliest `ts`; then the older family (its root's `started`, then its root's id); within a family
 * the Log nearer the root, then the earlier `started`, then the smaller id. Its usage is that of the copy
 * with the most output tokens, as within one Log. `count` hears the calls without a key first, then one per key.
 */
function countedOnce(sessions: readonly UsageSession[], calls: CallRows, byId: Map<string, UsageSession>, count: (call: CountedCall) => void): void {
  // A key's only row, or all its copies' rows once a second one turns up (rare: most keys are held once).
  const keyed = new Map<string, number | number[]>();
  for (const s of sessions) {
    const rows = calls.rowsOf(s.session_id);
    if (rows === undefined) continue;
    for (let row = rows.start; row < rows.start + rows.count; row++) {
      const key = calls.dedupeKey(row);
      if (key === null) {
        count(calls.call(row));
        continue;
      }
      const seen = keyed.get(key);
      if (seen === undefined) keyed.set(key, row);
      else if (Array.isArray(seen)) seen.push(row);
      else keyed.set(key, [seen, row]);
    }
  }
  for (const held of keyed.values()) {
    if (!Array.isArray(held)) {
      count(calls.call(held));
      continue;
    }
    const copies = held.map((row) => calls.call(row));
    const owner = copies.reduce((a, b) => (ownsBefore(b, a, byId) ? b : a));
    const most = copies.reduce((a, b) => ((b.output ?? 0) > (a.output ?? 0) ? b : a));
    count({ ...most, session_id: owner.session_id, seq: owner.seq, time: owner.time });
  }
}

function ownsBefore(a: CountedCall, b: CountedCall, byId: Map<string, UsageSession>): boolean {
  if (a.time !== b.time) return a.time < b.time;
  // A copy in another family (a file imported as a root of its own): the older family holds the call.
  const ra = byId.get(familyRoot(a.session_id, byId));
  const rb = byId.get(familyRoot(b.session_id, byId));
  if (ra !== rb) return (ra?.started ?? "") !== (rb?.started ?? "") ? (ra?.started ?? "") < (rb?.started ?? "") : (ra?.session_id ?? "") < (rb?.session_id ?? "");
  const da = depthOf(a.session_id, byId);
  const db = depthOf(b.session_id, byId);
  if (da !== db) return da < db;
  const sa = byId.get(a.session_id)?.started ?? "";
  const sb = byId.get(b.session_id)?.started ?? "";
  if (sa !== sb) return sa < sb;
  return a.session_id < b.session_id;
}

function depthOf(id: string, byId: Map<string, UsageSession>): number {
  let depth = 0;
  const seen = new Set<string>();
  for (let at = byId.get(id); at?.parent != null && !seen.has(at.session_id); at = byId.get(at.parent)) {
    seen.add(at.session_id);
    depth++;
  }
  return depth;
}

/** The root of a session's family: its parents followed up (a cycle stops where it closes). */
export function familyRoot(id: string, byId: ReadonlyMap<string, UsageSession>): string {
  const seen = new Set<string>([id]);
  let at = id;
  for (let p = byId.get(at)?.parent ?? null; p !== null && byId.has(p) && !seen.has(p); p = byId.get(at)?.parent ?? null) {
    seen.add(p);
    at = p;
  }
  return at;
}

/** `id` and every session below it, depth first, children by `started` then id. */
function familyBelow(id: string, sessions: readonly UsageSession[]): Array<{ session: UsageSession; depth: number }> {
  const children = new Map<string, UsageSession[]>();
  for (const s of sessions) if (s.parent !== null) (children.get(s.parent) ?? children.set(s.parent, []).get(s.parent)!).push(s);
  const start = sessions.find((s) => s.session_id === id);
  if (start === undefined) return [];
  const out: Array<{ session: UsageSession; depth: number }> = [];
  const seen = new Set<string>();
  const visit = (s: UsageSession, depth: number) => {
    if (seen.has(s.session_id)) return;
    seen.add(s.session_id);
    out.push({ session: s, depth });
    const kids = [...(children.get(s.session_id) ?? [])].sort((a, b) => ((a.started ?? "") < (b.started ?? "") ? -1 : (a.started ?? "") > (b.started ?? "") ? 1 : a.session_id < b.session_id ? -1 : 1));
    for (const k of kids) visit(k, depth + 1);
  };
  visit(start, 0);
  return out;
}

function keyOf(by: UsageGrouping, c: CountedCall, s: UsageSession, day: string, byId: ReadonlyMap<string, UsageSession>): string {
  switch (by) {
    case "day":
      return day;
    case "week":
      return isoWeek(day);
    case "month":
      return day.slice(0, 7);
    case "session":
      return s.session_id;
    case "family":
      return familyRoot(s.session_id, byId);
    case "model":
      return c.model ?? "unknown";
    case "project":
      return s.project ?? "unknown";
    case "agent":
      return s.agent;
  }
}

/** Time keys oldest first; the others by total tokens, most first, then by key. */
function sortRows(rows: UsageRow[], by: UsageGrouping): void {
  if (by === "day" || by === "week" || by === "month") rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  else rows.sort((a, b) => b.total - a.total || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The local calendar date of an ISO time or ms since the epoch (the process's time zone, as `date` shows it). */
export function localDay(ts: string | number): string {
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return "unknown";
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** ISO 8601 week of a `YYYY-MM-DD` date: `2026-W48` (weeks start on Monday). */
export function isoWeek(day: string): string {
  const [y, m, d] = day.split("-").map(Number);
  if (y === undefined || m === undefined || d === undefined || Number.isNaN(y + m + d)) return "unknown";
  const date = new Date(Date.UTC(y, m - 1, d));
  const weekday = (date.getUTCDay() + 6) % 7; // Monday 0
  date.setUTCDate(date.getUTCDate() - weekday + 3); // the week's Thursday decides its year
  const year = date.getUTCFullYear();
  const week = 1 + Math.floor((date.getTime() - Date.UTC(year, 0, 1)) / 86400000 / 7);
  return `${year}-W${pad(week)}`;
}

/** `--since`/`--until`: `YYYY-MM-DD` or `YYYYMMDD` (ccusage's spelling), as `YYYY-MM-DD`; null when neither. */
export function parseDay(text: string): string | null {
  const m = /^(\d{4})-?(\d{2})-?(\d{2})$/.exec(text);
  if (m === null) return null;
  const [, y, mo, d] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d)) return null;
  return `${y}-${mo}-${d}`;
}

/** The local date `days` before `now`'s. */
export function daysBefore(now: Date, days: number): string {
  const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() - days);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
