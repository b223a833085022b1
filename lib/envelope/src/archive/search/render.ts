// archive.md §2, text output of pixir search: hits grouped by session (title, agent, project, date), the
// groups in the order of their best hit (newest, or most relevant with --sort rank), each ending with the
// commands that open it. Matches are bold on a terminal (unless NO_COLOR) and between «» elsewhere.
import type { IndexReport } from "./job.js";
import type { SearchHit } from "./search.js";
import type { SessionCard } from "./session-cards.js";

/** A hit as printed: the Event's place and text, and its session's facts (archive.md §1). */
export type Hit = SearchHit & { agent: string | null } & Omit<SessionCard, "session_id" | "agent">;

export interface HitStyle {
  /** Bold matches (a terminal without NO_COLOR); else «». */
  bold: boolean;
}

const pad2 = (n: number) => String(n).padStart(2, "0");

/** `YYYY-MM-DD HH:MM` in local time, or the text as it is when it is not a time. */
export function localMinute(ts: string): string {
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/** The snippet with its matches marked. */
export function markedSnippet(hit: Pick<SearchHit, "snippet" | "match_offsets">, style: HitStyle): string {
  const [open, close] = style.bold ? ["\x1b[1m", "\x1b[22m"] : ["«", "»"];
  let out = "";
  let at = 0;
  for (const [s, e] of hit.match_offsets) {
    out += hit.snippet.slice(at, s) + open + hit.snippet.slice(s, e) + close;
    at = e;
  }
  return out + hit.snippet.slice(at);
}

/** What a hit is, in a few words: `user`, `assistant`, `reasoning`, `Bash call`, `Bash output`, `checkpoint`. */
function kindOf(h: SearchHit): string {
  switch (h.type) {
    case "tool_call":
      return `${h.tool ?? "tool"} call`;
    case "tool_result":
      return `${h.tool ?? "tool"} output`;
    case "reasoning":
      return "reasoning";
    case "history_compaction":
      return "checkpoint";
    case "branch_summary":
      return "branch summary";
    default:
      return h.role;
  }
}

function marks(h: SearchHit): string {
  const m: string[] = [];
  if (!h.in_context) m.push("compacted away");
  if (h.inherited_by > 0) m.push(`shared with ${h.inherited_by} fork${h.inherited_by === 1 ? "" : "s"}`);
  return m.length === 0 ? "" : `  (${m.join(", ")})`;
}

/** Hits grouped by session, in the order their first hit comes. */
export function groupHits(hits: readonly Hit[]): Hit[][] {
  const groups = new Map<string, Hit[]>();
  for (const h of hits) {
    const g = groups.get(h.session_id);
    if (g === undefined) groups.set(h.session_id, [h]);
    else g.push(h);
  }
  return [...groups.values()];
}

/** Shell-quote a word when it needs it. */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`);

/** The text lines of a search's hits. */
export function searchText(hits: readonly Hit[], style: HitStyle): string[] {
  const lines: string[] = [];
  for (const group of groupHits(hits)) {
    const first = group[0];
    const about = [first.agent, first.project, localMinute(group.reduce((a, h) => (h.ts > a ? h.ts : a), first.ts))].filter((x) => x !== null && x !== "");
    if (lines.length > 0) lines.push("");
    lines.push(`${first.title ?? "(untitled)"}  (${about.join(", ")})  ${first.session_id}`);
    for (const h of [...group].sort((a, b) => a.seq - b.seq)) lines.push(`  [${h.seq}] ${kindOf(h)}: ${markedSnippet(h, style)}${marks(h)}`);
    const id = shellWord(first.session_id);
    lines.push(`  open: pixir context ${id} --format text | less`);
    lines.push(`        pixir export html ${id} --out ${shellWord(`${first.session_id}.html`)}`);
    lines.push(`        pixir fork ${id} --to-seq ${first.seq}`);
  }
  return lines;
}

const mib = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;

/** The text report of `pixir index`. */
export function indexText(r: IndexReport): string[] {
  if (r.mode === "as_is") return [`${r.index_path}: not brought up to date (see the warning), ${r.documents} Events searchable`, `index ${mib(r.index_bytes)} for ${mib(r.log_bytes)} of Logs`];
  const changed = [`${r.added} added`, `${r.grown} grown`, `${r.reindexed} read again`, `${r.removed} removed`, `${r.unchanged} unchanged`];
  return [
    `${r.index_path}: ${r.logs} Logs (${changed.join(", ")}), ${r.documents} Events searchable`,
    `indexed ${mib(r.indexed_bytes)} of Logs now; index ${mib(r.index_bytes)} for ${mib(r.log_bytes)} of Logs`,
  ];
}
