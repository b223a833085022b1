// archive.md §1 `pixir ls`: which sessions are rows, in what order, and what a row counts of the family
// below it. Rendering is view/ls-text.ts.
import { usageError } from "../event/errors.js";
import { SESSION_KINDS, type SessionFacts, type SessionKind } from "./facts.js";

export interface ListOptions {
  agent?: string;
  /** A case-insensitive substring of the project (the cwd's last segment). */
  project?: string;
  /** ISO instants: sessions updated at or after `since`, and started before `until`. */
  since?: string;
  until?: string;
  /** Exactly these kinds are rows. */
  kinds?: readonly SessionKind[];
  /** Every Log is a row. */
  all?: boolean;
  limit?: number;
}

/** What a row stands for besides itself: its forks, and the branches and subagents that are not rows of their own. */
export interface FamilyCounts {
  forks: number;
  branches: number;
  subagents: number;
}

export interface SessionRow {
  facts: SessionFacts;
  family: FamilyCounts;
}

/** Without --all or --kind, branches and subagents are counted on their parent's row, not listed. */
const ROLLED_UP: ReadonlySet<SessionKind> = new Set(["branch", "subagent"]);

/** The rows of `catalog` (newest first, as readCatalog gives it) that the options select. */
export function listSessions(catalog: readonly SessionFacts[], options: ListOptions = {}): SessionRow[] {
  const byId = new Map(catalog.map((f) => [f.session_id, f]));
  const isRow = (f: SessionFacts) => (options.kinds !== undefined ? options.kinds.includes(f.kind) : options.all === true || !ROLLED_UP.has(f.kind));
  const rows: SessionRow[] = [];
  for (const f of catalog) {
    if (!isRow(f) || !matches(f, options)) continue;
    rows.push({ facts: f, family: familyOf(f, byId, isRow) });
    if (options.limit !== undefined && rows.length >= options.limit) break;
  }
  return rows;
}

function matches(f: SessionFacts, o: ListOptions): boolean {
  if (o.agent !== undefined && f.agent !== o.agent) return false;
  if (o.project !== undefined && !(f.project ?? "").toLowerCase().includes(o.project.toLowerCase())) return false;
  if (o.since !== undefined && (f.updated === null || Date.parse(f.updated) < Date.parse(o.since))) return false;
  if (o.until !== undefined && (f.started === null || Date.parse(f.started) >= Date.parse(o.until))) return false;
  return true;
}

/** The forks below a row, and the branches and subagents below it that are not rows (through those, too). */
function familyOf(f: SessionFacts, byId: Map<string, SessionFacts>, isRow: (f: SessionFacts) => boolean): FamilyCounts {
  const counts: FamilyCounts = { forks: 0, branches: 0, subagents: 0 };
  if (f.children.length === 0) return counts; // most rows: no walk, no set
  const seen = new Set<string>([f.session_id]);
  const walk = (children: readonly string[]) => {
    for (const id of children) {
      const child = byId.get(id);
      if (child === undefined || seen.has(id)) continue;
      seen.add(id);
      if (child.kind === "fork") counts.forks++;
      else if (child.kind === "branch") counts.branches++;
      else if (child.kind === "subagent") counts.subagents++;
      if (!isRow(child)) walk(child.children);
    }
  };
  walk(f.children);
  return counts;
}

/** `+3 forks, 6 subagents`, or "" when the row stands for itself alone. */
export function familyText(c: FamilyCounts): string {
  const parts: string[] = [];
  const add = (n: number, one: string, many: string) => n > 0 && parts.push(`${n} ${n === 1 ? one : many}`);
  add(c.forks, "fork", "forks");
  add(c.branches, "branch", "branches");
  add(c.subagents, "subagent", "subagents");
  return parts.length === 0 ? "" : `+${parts.join(", ")}`;
}

/** `--kind root,fork`: each a session kind. */
export function parseKinds(value: string, synopsis: string): SessionKind[] {
  const kinds = value.split(",").map((k) => k.trim()).filter((k) => k !== "");
  const bad = kinds.find((k) => !(SESSION_KINDS as readonly string[]).includes(k));
  if (bad !== undefined || kinds.length === 0) {
    throw usageError(synopsis, `--kind takes ${SESSION_KINDS.join(", ")} (comma-separated)`);
  }
  return kinds as SessionKind[];
}

/**
 * A --since/--until value as an ISO instant: a date (`2026-05-01`, local midnight; for --until the day
 * is included), a date and time (`2026-05-01T14:00`, local unless it names a zone), or an age before `now`
 * (`30m`, `12h`, `7d`, `2w`).
 */
export function parseDateFlag(value: string, flag: "since" | "until", now: Date, synopsis: string): string {
  const v = value.trim();
  const age = /^(\d+)([mhdw])$/.exec(v);
  if (age !== null) {
    const unit = { m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 }[age[2] as "m" | "h" | "d" | "w"];
    return new Date(now.getTime() - Number(age[1]) * unit).toISOString();
  }
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (day !== null) {
    const [y, m, d] = [Number(day[1]), Number(day[2]) - 1, Number(day[3])];
    const at = new Date(y, m, d);
    if (at.getFullYear() === y && at.getMonth() === m && at.getDate() === d) {
      if (flag === "until") at.setDate(d + 1);
      return at.toISOString();
    }
  }
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(v)) {
    const t = Date.parse(v.replace(" ", "T"));
    if (!Number.isNaN(t)) return new Date(t).toISOString();
  }
  throw usageError(synopsis, `--${flag} takes a date (2026-05-01), a date and time (2026-05-01T14:00) or an age (12h, 7d, 2w)`);
}

/** archive.md §1: what an empty Workspace says on stderr, with where the archive may be instead. */
export function emptyWorkspaceNote(workspace: string): string {
  return [
    `no Logs in ${workspace}`,
    "hint: pass --workspace DIR (or set PIXIR_WORKSPACE), cd to the archive, or import sessions: pixir import claude, pixir import codex, pixir import pi FILE",
  ].join("\n");
}

/** archive.md §1: an import that found no session files says so on stderr (exit 0), naming where it looked. */
export function nothingFoundNote(agent: "Claude Code" | "Codex", places: readonly string[], example: string): string {
  return [`no ${agent} sessions found in ${places.join(", ")}`, `hint: pass the files or directories that hold them, e.g. ${example}`].join("\n");
}
