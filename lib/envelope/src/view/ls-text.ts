// archive.md §1 `pixir ls` text: on a terminal, aligned columns under a header, ids as their shortest
// unique prefix, each row cut to the terminal's width; off a terminal, the same columns separated by
// tabs, full ids, nothing cut (a script's input, like `ls` in a pipe).
import { familyText, type SessionRow } from "../archive/session-list.js";
import { shortestUniquePrefixes } from "../archive/resolve.js";
import { localMinute as hitMinute } from "../archive/search/render.js";

export interface LsTextOptions {
  /** stdout is a terminal of this many columns; undefined: not a terminal. */
  columns?: number;
  /** Every session id of the Workspace, for the shortest unique prefixes. */
  allIds: readonly string[];
}

const HEADER = ["ID", "AGENT", "PROJECT", "UPDATED", "MSGS", "TOKENS", "TITLE", ""];
const PROJECT_WIDTH = 24;

/** The lines of `pixir ls`. */
export function lsLines(rows: readonly SessionRow[], o: LsTextOptions): string[] {
  if (o.columns === undefined) return rows.map((r) => cells(r, r.facts.session_id).join("\t"));
  const prefixes = shortestUniquePrefixes(o.allIds);
  const table = rows.map((r) => cells(r, prefixes.get(r.facts.session_id) ?? r.facts.session_id));
  const widths = HEADER.slice(0, 6).map((h, i) => Math.max(displayWidth(h), ...table.map((c) => displayWidth(c[i]!))));
  widths[2] = Math.min(widths[2]!, PROJECT_WIDTH);
  const line = (c: readonly string[]) => {
    const fixed = c.slice(0, 6).map((v, i) => (i === 4 || i === 5 ? padStart(v, widths[i]!) : padEnd(cutToWidth(v, widths[i]!), widths[i]!)));
    const head = fixed.join("  ");
    return cutToWidth(`${head}  ${titleCell(c[6]!, c[7]!, o.columns! - displayWidth(head) - 2)}`, o.columns!).trimEnd();
  };
  return [line(HEADER), ...table.map(line)];
}

/** The title cut to `room`, keeping the family counts after it in view. */
function titleCell(title: string, family: string, room: number): string {
  if (family === "") return title;
  const tail = `  (${family})`;
  return `${room - displayWidth(tail) >= 2 ? cutToWidth(title, room - displayWidth(tail)) : title}${tail}`;
}

/** id, agent, project, updated, msgs, tokens, title, and the family the row stands for (tab-separated: the title's column). */
function cells(r: SessionRow, id: string): string[] {
  const f = r.facts;
  return [id, f.agent, f.project ?? "-", localMinute(f.updated), String(f.messages), tokensText(f.tokens), f.title ?? "(no prompt)", familyText(r.family)];
}

/** `YYYY-MM-DD HH:MM` in the reader's time zone (search's rule); `-` when there is no time. */
export function localMinute(iso: string | null): string {
  return iso === null || Number.isNaN(Date.parse(iso)) ? "-" : hitMinute(iso);
}

/** `950`, `12.3k`, `1.2M`; `-` when not counted. */
export function tokensText(n: number | null): string {
  if (n === null) return "-";
  if (n < 1000) return String(n);
  if (n < 999_950) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Display width: code points, a wide (East Asian) character counting two. */
export function displayWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += isWide(ch.codePointAt(0)!) ? 2 : 1;
  return w;
}

function isWide(cp: number): boolean {
  return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd);
}

/** `s` cut to `max` display columns, ending in `…` when cut. */
export function cutToWidth(s: string, max: number): string {
  if (displayWidth(s) <= max) return s;
  let out = "";
  let w = 0;
  for (const ch of s) {
    const cw = isWide(ch.codePointAt(0)!) ? 2 : 1;
    if (w + cw > max - 1) break;
    out += ch;
    w += cw;
  }
  return `${out}…`;
}

const padEnd = (s: string, n: number) => s + " ".repeat(Math.max(0, n - displayWidth(s)));
const padStart = (s: string, n: number) => " ".repeat(Math.max(0, n - displayWidth(s))) + s;
