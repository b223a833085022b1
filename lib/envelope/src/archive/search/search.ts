// archive.md §2: running a search on the index. A hit is one Event, at the Log that owns it; `inherited_by`
// counts the forks and branches whose History holds it (from lineage, not from copies), `in_context`
// says whether the owner's latest checkpoint left it in the model-visible context
// (context-and-compaction.md §1.1). Snippets are cut from the Event as the Log holds it now.
import type Database from "better-sqlite3";
import { closeSync, openSync, readSync, constants as fsConstants } from "node:fs";
import { PixirError } from "../../event/errors.js";
import { isReplayType, REPLAY_TYPES } from "../../event/vocabulary.js";
import type { TermObject } from "../../event/elixir.js";
import { givesContextItem } from "../../session/context.js";
import { logPath } from "../../store/paths.js";
import { fileCondition } from "./file-match.js";
import { ftsAll, ftsAny, isIndexable, piecesOf, type ParsedQuery, patternsOf, textMatches } from "./query.js";
import { searchableOf } from "./searchable.js";

export type SearchSort = "rank" | "time";

export interface SearchFilters {
  /** Only these sessions (from --agent/--project), or null for all. */
  sessions: ReadonlySet<string> | null;
  /** --session: the History of this session (its own Events and the prefixes it inherits). */
  session: string | null;
  types: readonly string[] | null;
  tool: string | null;
  file: string | null;
  since: string | null;
  until: string | null;
}

export interface SearchHit {
  session_id: string;
  seq: number;
  type: string;
  role: string;
  tool: string | null;
  ts: string;
  snippet: string;
  /** [start, end) of each match in `snippet`, in UTF-16 code units. */
  match_offsets: Array<[number, number]>;
  in_context: boolean;
  inherited_by: number;
}

interface DocRow {
  doc: number;
  session_id: string;
  seq: number;
  type: string;
  role: string;
  tool: string | null;
  ts: string;
  ordinal: number;
  offset: number;
  length: number;
  cp_seq: number | null;
  cp_to: number | null;
}

interface Lineage {
  parent: string | null;
  forked_to_seq: number | null;
}

const SNIPPET_CHARS = 160;
const SNIPPET_BEFORE = 50;
/** How far a lineage walk goes (fork.md: a share chain is at most 32 deep). */
const MAX_DEPTH = 64;

/** The SQL conditions of --session ID: its own docs, and each ancestor's docs within the prefix the session holds. */
function historyCondition(db: Database.Database, id: string, params: unknown[]): string {
  const lineage = new Map((db.prepare("SELECT session_id, parent, forked_to_seq FROM logs").all() as Array<Lineage & { session_id: string }>).map((r) => [r.session_id, r]));
  const parts = ["l.session_id = ?"];
  params.push(id);
  let ordinalCap = Number.MAX_SAFE_INTEGER;
  const replay = REPLAY_TYPES.map((t) => `'${t}'`).join(",");
  let child = lineage.get(id);
  for (let depth = 0; child?.parent && child.forked_to_seq !== null && depth < MAX_DEPTH; depth++) {
    parts.push(`(l.session_id = ? AND d.seq <= ? AND d.ordinal <= ? AND d.type IN (${replay}))`);
    params.push(child.parent, child.forked_to_seq, ordinalCap);
    ordinalCap = Math.min(ordinalCap, child.forked_to_seq);
    child = lineage.get(child.parent);
  }
  return `(${parts.join(" OR ")})`;
}

/** The SQL conditions of the filters. */
function whereClause(db: Database.Database, q: ParsedQuery, f: SearchFilters, params: unknown[]): string[] {
  const where: string[] = [];
  const excluded = ftsAny(q.exclude);
  if (excluded !== null) {
    where.push("d.doc NOT IN (SELECT rowid FROM fts WHERE fts MATCH ?)");
    params.push(excluded);
  }
  if (f.sessions !== null) {
    where.push("l.session_id IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify([...f.sessions]));
  }
  if (f.session !== null) where.push(historyCondition(db, f.session, params));
  if (f.types !== null) {
    where.push("d.type IN (SELECT value FROM json_each(?))");
    params.push(JSON.stringify(f.types));
  }
  if (f.tool !== null) {
    where.push("d.tool = ? COLLATE NOCASE");
    params.push(f.tool);
  }
  if (f.file !== null) where.push(fileCondition(f.file, params));
  if (f.since !== null) {
    where.push("d.ts >= ?");
    params.push(f.since);
  }
  if (f.until !== null) {
    where.push("d.ts < ?");
    params.push(f.until);
  }
  return where;
}

const COLUMNS = "d.doc, l.session_id, d.seq, d.type, d.role, d.tool, d.ts, d.ordinal, d.offset, d.length, l.cp_seq, l.cp_to";

/**
 * Whether the newest `limit` Events that match are found faster by walking the time index from the newest
 * Event and keeping those that match, than by fetching every matching Event and sorting them: when the
 * matches are many (a common word), the walk meets `limit` of them early; when they are few, it would
 * walk the whole index. The same rows in the same order either way. (A word found only long ago makes the
 * walk long: the choice assumes a common word is spread over time.)
 */
export function newestFirstWalk(db: Database.Database, q: ParsedQuery, match: string, limit: number): boolean {
  // A phrase (a word of several pieces too) costs the engine more to match than a word: matched twice, for
  // the count and for the walk, it would cost more than the walk saves.
  if (!q.include.every((t) => piecesOf(t).length <= 1)) return false;
  // The walk meets about events / matches × limit Events; fetching costs about one lookup per match: walk
  // when matches² ≥ 2 × events × limit. Doc ids are given in the order indexed, so the highest is the
  // Events indexed (more where Logs were removed: an estimate, read from the index's last page where
  // count(*) would read every page); the matches are counted only up to the least number that decides.
  const events = (db.prepare("SELECT max(doc) AS n FROM docs").get() as { n: number | null }).n ?? 0;
  const enough = Math.ceil(Math.sqrt(events * limit * 2));
  const matches = (db.prepare("SELECT count(*) AS n FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)").get(match, enough) as { n: number }).n;
  return matches >= enough;
}

interface RankedRow extends DocRow {
  rank: number;
}

/** Rows in rank order with each run of equal rank in the order indexed (doc ids are that order). */
function* tiesInOrderIndexed(rows: IterableIterator<RankedRow>): Generator<DocRow> {
  let tie: RankedRow[] = [];
  for (const r of rows) {
    if (tie.length > 0 && r.rank !== tie[0]!.rank) {
      yield* tie.sort((a, b) => a.doc - b.doc);
      tie = [];
    }
    tie.push(r);
  }
  yield* tie.sort((a, b) => a.doc - b.doc);
}

/** The candidate rows in the order asked for, lazily: short words are checked on each Event's text after. */
function candidates(db: Database.Database, q: ParsedQuery, f: SearchFilters, sort: SearchSort, limit: number | null): IterableIterator<DocRow> {
  const params: unknown[] = [];
  const match = ftsAll(q.include);
  const where = whereClause(db, q, f, params);
  const tail = limit === null ? "" : ` LIMIT ${limit}`;
  const conditions = where.map((w) => ` AND ${w}`).join("");
  if (match !== null && sort === "rank") {
    // The engine sorts by rank itself, and only the rows read are joined: no LIMIT, so that a tie is read whole.
    const sql = `SELECT ${COLUMNS}, fts.rank AS rank FROM fts JOIN docs d ON d.doc = fts.rowid JOIN logs l ON l.log = d.log WHERE fts MATCH ?${conditions} ORDER BY fts.rank`;
    return tiesInOrderIndexed(db.prepare(sql).iterate(match, ...params) as IterableIterator<RankedRow>);
  }
  if (match !== null) {
    where.unshift("d.doc IN (SELECT rowid FROM fts WHERE fts MATCH ?)");
    params.unshift(match);
  }
  const docs = match !== null && limit !== null && newestFirstWalk(db, q, match, limit) ? "docs d INDEXED BY docs_ts" : "docs d";
  const filter = where.length > 0 ? ` WHERE ${where.join(" AND ")}` : "";
  if (limit === null) return db.prepare(`SELECT ${COLUMNS} FROM ${docs} JOIN logs l ON l.log = d.log${filter}${NEWEST_FIRST}`).iterate(...params) as IterableIterator<DocRow>;
  // The newest `limit` are chosen by their sort keys alone, and only they are joined to their Logs and read
  // whole: a sort of every match's full row, with its Log's, was half of a search of a few hundred matches.
  const logs = f.sessions !== null || f.session !== null ? " JOIN logs l ON l.log = d.log" : "";
  const newest = `SELECT d.doc FROM ${docs}${logs}${filter}${NEWEST_FIRST}${tail}`;
  return db.prepare(`SELECT ${COLUMNS} FROM (${newest}) newest JOIN docs d ON d.doc = newest.doc JOIN logs l ON l.log = d.log${NEWEST_FIRST}`).iterate(...params) as IterableIterator<DocRow>;
}

const NEWEST_FIRST = " ORDER BY d.ts DESC, d.doc DESC";

/** Reads the Events of hits back from their Logs (one descriptor per Log). */
class EventReader {
  private readonly fds = new Map<string, number>();

  constructor(private readonly ws: string) {}

  /** The Event's data and searchable text at `offset`, or null when the Log no longer holds it there. */
  read(r: DocRow): { data: Record<string, unknown>; text: string } | null {
    let fd = this.fds.get(r.session_id);
    try {
      if (fd === undefined) {
        fd = openSync(logPath(this.ws, r.session_id).abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
        this.fds.set(r.session_id, fd);
      }
      const buf = Buffer.allocUnsafe(r.length);
      if (readSync(fd, buf, 0, r.length, r.offset) !== r.length) return null;
      const e = JSON.parse(buf.toString("utf8")) as { seq?: unknown; type?: unknown; data?: unknown };
      if (e.seq !== r.seq || e.type !== r.type || typeof e.data !== "object" || e.data === null) return null;
      const data = e.data as Record<string, unknown>;
      const text = searchableOf(r.type, data)?.text;
      return text === undefined ? null : { data, text };
    } catch {
      return null;
    }
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}

const collapse = (s: string): string => s.replace(/\s+/g, " ");

/** The part of the text, whitespace collapsed and trimmed, that a snippet shows: up to SNIPPET_CHARS. */
interface SnippetWindow {
  /** The collapsed text has more before the body. */
  cut: boolean;
  body: string;
  /** The collapsed text goes on after the body. */
  more: boolean;
}

/** The window of the whole text collapsed (a pattern with whitespace of its own matches only there). */
function windowOfFlat(text: string, pattern: RegExp | null): SnippetWindow {
  const flat = collapse(text).trim();
  if (pattern !== null) pattern.lastIndex = 0;
  const first = pattern === null ? null : pattern.exec(flat);
  const start = first === null ? 0 : Math.max(0, first.index - SNIPPET_BEFORE);
  const end = Math.min(flat.length, start + SNIPPET_CHARS);
  return { cut: start > 0, body: flat.slice(start, end), more: end < flat.length };
}

/**
 * The last `want` characters of text[0, at) collapsed and trimmed, and whether more come before them,
 * collapsing no more of it than that takes. A slice that starts inside a whitespace run collapses it to the
 * one space the whole text gives it; once the slice holds more than `want` after its own leading run,
 * something the trim keeps comes before them.
 */
function collapsedTail(text: string, at: number, want: number): { tail: string; cut: boolean } {
  for (let n = 2 * want + 64; n < at; n *= 2) {
    const tail = collapse(text.slice(at - n, at));
    if (tail.trimStart().length > want) return { tail: tail.slice(-want), cut: true };
  }
  const whole = collapse(text.slice(0, at)).trimStart();
  return whole.length > want ? { tail: whole.slice(-want), cut: true } : { tail: whole, cut: false };
}

/**
 * The same window without collapsing a long text whole (a tool's output can be megabytes): a match never
 * starts with whitespace and whitespace is among the runs that separate a word's pieces, so the first
 * match in the text is the first in the collapsed text; only about SNIPPET_BEFORE characters before it and
 * SNIPPET_CHARS after it are collapsed.
 */
function windowOf(text: string, pattern: RegExp | null): SnippetWindow {
  if (pattern !== null && /\s/.test(pattern.source)) return windowOfFlat(text, pattern);
  if (pattern !== null) pattern.lastIndex = 0;
  const first = pattern === null ? null : pattern.exec(text);
  const at = first?.index ?? 0;
  const { tail: before, cut } = collapsedTail(text, at, SNIPPET_BEFORE);
  // Collapsed characters wanted from the match on: to the window's end, and one more to tell whether the text goes on.
  const need = SNIPPET_CHARS + 1 - before.length;
  let after = "";
  for (let n = 2 * need + 64; ; n *= 2) {
    after = collapse(text.slice(at, at + n));
    if (before === "") after = after.trimStart();
    if (at + n >= text.length) {
      after = after.trimEnd();
      break;
    }
    // A whitespace run where the slice ends may be the text's trimmed end: only what comes before it counts.
    if (after.endsWith(" ")) after = after.slice(0, -1);
    if (after.length >= need) break;
  }
  const head = before + after;
  return { cut, body: head.slice(0, SNIPPET_CHARS), more: head.length > SNIPPET_CHARS };
}

/** The window without half a surrogate pair at either end (an emoji cut in two is not text: `\ud83c` in JSON, � on a terminal). */
const wholeCharacters = (body: string): string => body.replace(/^[\uDC00-\uDFFF]/, "").replace(/[\uD800-\uDBFF]$/, "");

/** About 160 characters around the first match, whitespace collapsed, with the matches' places. */
export function snippetOf(text: string, pattern: RegExp | null): { snippet: string; match_offsets: Array<[number, number]> } {
  const window = windowOf(text, pattern);
  const { cut, more } = window;
  const body = wholeCharacters(window.body);
  const lead = cut ? "…" : "";
  const snippet = `${lead}${body}${more ? "…" : ""}`;
  const offsets: Array<[number, number]> = [];
  if (pattern !== null) {
    pattern.lastIndex = 0;
    for (let m = pattern.exec(body); m !== null; m = pattern.exec(body)) {
      if (m[0].length === 0) {
        pattern.lastIndex++;
        continue;
      }
      offsets.push([m.index + lead.length, m.index + lead.length + m[0].length]);
    }
  }
  return { snippet, match_offsets: offsets };
}

/** How many forks and branches hold Event (owner, seq, ordinal) in their History, transitively. */
export class InheritanceCounter {
  /** Each Log's forks as first asked for (a search reads only its hits' lineages, by the `logs_forks` index). */
  private readonly children = new Map<string, Array<{ id: string; to: number }>>();
  private forksOf: Database.Statement | null = null;

  constructor(private readonly db: Database.Database) {}

  private lineage(parent: string): Array<{ id: string; to: number }> {
    let list = this.children.get(parent);
    if (list !== undefined) return list;
    this.forksOf ??= this.db.prepare("SELECT session_id, forked_to_seq FROM logs WHERE parent = ? AND forked_to_seq IS NOT NULL");
    list = (this.forksOf.all(parent) as Array<{ session_id: string; forked_to_seq: number }>).map((r) => ({ id: r.session_id, to: r.forked_to_seq }));
    this.children.set(parent, list);
    return list;
  }

  /** Forks see a replayed Event at its ordinal k; so does every fork of theirs that kept at least k Events. */
  count(owner: string, seq: number, ordinal: number, type: string): number {
    if (!isReplayType(type)) return 0;
    let n = 0;
    for (const c of this.lineage(owner)) if (c.to >= seq) n += 1 + this.below(c.id, ordinal, 1);
    return n;
  }

  private below(id: string, k: number, depth: number): number {
    if (depth > MAX_DEPTH) return 0;
    let n = 0;
    for (const c of this.lineage(id)) if (c.to >= k) n += 1 + this.below(c.id, k, depth + 1);
    return n;
  }
}

/** context-and-compaction.md §1.1: after the latest checkpoint only Events past its to_seq (and it) are seen. */
const pastCheckpoint = (r: DocRow): boolean => (r.cp_seq === null ? true : r.type === "history_compaction" ? r.seq === r.cp_seq : r.cp_to !== null && r.seq > r.cp_to);

/** In what `pixir context` shows of the session: past the latest checkpoint, and an Event the fold gives an item (never reasoning). */
const inContext = (r: DocRow, data: Record<string, unknown> | null): boolean => pastCheckpoint(r) && data !== null && givesContextItem(r.type, data as TermObject);

export interface SearchRequest {
  query: ParsedQuery;
  filters: SearchFilters;
  sort: SearchSort;
  limit: number;
}

function hasFilter(f: SearchFilters): boolean {
  return f.sessions !== null || f.session !== null || f.types !== null || f.tool !== null || f.file !== null || f.since !== null || f.until !== null;
}

/** Run a search on an up-to-date index. */
export function runSearch(db: Database.Database, ws: string, req: SearchRequest): SearchHit[] {
  const { query: q, filters: f } = req;
  if (q.include.length === 0 && !hasFilter(f)) {
    throw new PixirError("usage", "give words to search for, or a filter such as --file PATH", { field: "query", reason: "empty_query" });
  }
  if (q.include.length > 0 && !q.include.some(isIndexable) && !hasFilter(f)) {
    throw new PixirError("usage", "a search needs a word with a letter or a digit, or a filter such as --session ID or --type T", { field: "query", reason: "no_word" });
  }
  const needsText = [...q.include, ...q.exclude].some((t) => !isIndexable(t));
  const reader = new EventReader(ws);
  const patternFor = patternsOf(q.include);
  const inherited = new InheritanceCounter(db);
  const hits: SearchHit[] = [];
  try {
    for (const r of candidates(db, q, f, req.sort, needsText ? null : req.limit)) {
      const event = reader.read(r);
      if (needsText && (event === null || !textMatches(event.text, q))) continue;
      const { snippet, match_offsets } = snippetOf(event?.text ?? "", patternFor(event?.text ?? ""));
      hits.push({ session_id: r.session_id, seq: r.seq, type: r.type, role: r.role, tool: r.tool, ts: r.ts, snippet, match_offsets, in_context: inContext(r, event?.data ?? null), inherited_by: inherited.count(r.session_id, r.seq, r.ordinal, r.type) });
      if (hits.length >= req.limit) break;
    }
  } finally {
    reader.close();
  }
  return hits;
}
