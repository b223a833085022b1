// `pixir search` and `pixir index` as jobs: open the index, bring it up to date (or say why it could not
// be), then search. Every SQLite fault becomes a PixirError in pixir's words: a full disk is
// `log_write_failed` naming the index, a corrupt file is rebuilt with a note, a query the engine cannot
// run is a usage error.
import type Database from "better-sqlite3";
import { statSync } from "node:fs";
import { PixirError } from "../../event/errors.js";
import { closeSearchIndex, isBusy, isCorruption, indexWriteFault, memorySearchIndex, openSearchIndex, searchIndexPath, sqliteCode, type OpenIndex, type IndexMode } from "./index-db.js";
import { runSearch, type SearchHit, type SearchRequest } from "./search.js";
import { listingKey, updateSearchIndex, type UpdateCounts, type UpdateProgress } from "./update.js";
import { listLogs, type LogListing } from "../../store/ls.js";
import { readCatalogListed } from "../catalog.js";
import { cardsOfFacts, saveCards, storedCards, type SessionCard, type SessionCards } from "./session-cards.js";

export interface IndexNote {
  code: string;
  text: string;
}

export interface IndexState {
  mode: IndexMode;
  counts: UpdateCounts | null;
  notes: IndexNote[];
}

const readOnlyCode = (err: unknown): boolean => (sqliteCode(err) ?? "").startsWith("SQLITE_READONLY");

/** Bring the index up to date; a corrupt file is replaced once, a busy or read-only one is used as it is. */
function freshIndex(ws: string, rebuild: boolean | "memory", progress: UpdateProgress | undefined, listing: LogListing, key: Uint8Array): { index: OpenIndex; state: IndexState } {
  let index = rebuild === "memory" ? memorySearchIndex(ws, `${searchIndexPath(ws).rel} is corrupt and cannot be rewritten here`) : openSearchIndex(ws, rebuild);
  const notes: IndexNote[] = [...index.notes];
  for (let attempt = 0; ; attempt++) {
    if (index.mode === "as_is") return { index, state: { mode: index.mode, counts: null, notes } };
    try {
      const counts = updateSearchIndex(index.db, ws, progress, listing, key);
      return { index, state: { mode: index.mode, counts, notes } };
    } catch (err) {
      if (isBusy(err)) {
        notes.push({ code: "index_may_be_stale", text: "another pixir process is updating the search index: searching it as it is, which may miss recent changes" });
        return { index, state: { mode: "as_is", counts: null, notes } };
      }
      if (readOnlyCode(err)) {
        notes.push({ code: "index_may_be_stale", text: `${index.path.rel} cannot be written: searching it as it is, which may miss recent changes to the Logs` });
        return { index, state: { mode: "as_is", counts: null, notes } };
      }
      index.db.close();
      if (!isCorruption(err) || attempt > 0) throw indexWriteFault(err, index.path);
      index = openSearchIndex(ws, true);
      notes.push({ code: "index_rebuilt", text: `${index.path.rel} was unreadable (corrupt); rebuilding it from the Logs` });
    }
  }
}

export interface SearchResult {
  hits: SearchHit[];
  index: IndexState;
  /** The cards of the hits' sessions. */
  cards: Map<string, SessionCard>;
}

/**
 * The session cards of this listing: the index's when they were joined from it, else the catalog's facts
 * (archive.md §1), copied into the index when it may be written so that the next search reads them there.
 */
async function cardsFor(ws: string, index: OpenIndex, state: IndexState, listing: LogListing, key: Uint8Array): Promise<SessionCards> {
  const stored = storedCards(index.db, key);
  if (stored !== null) return stored;
  const { facts } = await readCatalogListed(ws, listing);
  if (state.mode !== "update") return cardsOfFacts(facts);
  try {
    saveCards(index.db, key, facts);
  } catch (err) {
    // Another process writes the index, or it cannot be written: these facts serve this search alone.
    if (isBusy(err) || readOnlyCode(err)) return cardsOfFacts(facts);
    throw isCorruption(err) ? err : indexWriteFault(err, index.path);
  }
  return cardsOfFacts(facts);
}

/**
 * A fault while reading the index, in pixir's words: a corrupt index (when it could not be rebuilt), a
 * query the engine could not run (`searching`), else a fault of the index file.
 */
function readFault(err: unknown, index: OpenIndex, searching: boolean): unknown {
  if (err instanceof PixirError) return err;
  if (isCorruption(err)) {
    return new PixirError("log_read_failed", `the search index ${index.path.rel} is corrupt`, { path: index.path.rel, reason: "corrupt_index", next_actions: [`remove ${index.path.rel} where it can be written: the next search rebuilds it from the Logs`] });
  }
  if (sqliteCode(err) === null) return err;
  if (searching) return new PixirError("usage", "pixir could not run this query: quote words that hold punctuation, e.g. \"a-b\"", { field: "query", reason: "unrunnable_query" });
  return indexWriteFault(err, index.path);
}

/**
 * Bring the index up to date and do `work` with it. Corruption found only while reading (a damaged page
 * that opening and updating never touched) rebuilds the index from the Logs and does the work again, with
 * a note; where it cannot be rewritten, the work is done on an index built in memory. Corruption of the
 * index just rebuilt is a structured error.
 */
async function withIndex<T>(ws: string, job: { rebuild: boolean; searching: boolean; progress?: UpdateProgress }, listing: LogListing, key: Uint8Array, work: (index: OpenIndex, state: IndexState) => Promise<T>): Promise<T> {
  let earlier: IndexNote[] = [];
  let again: boolean | "memory" = job.rebuild;
  for (;;) {
    const { index, state } = freshIndex(ws, again, job.progress, listing, key);
    state.notes.unshift(...earlier);
    try {
      return await work(index, state);
    } catch (err) {
      // Writable: rebuilt in place. Read-only (a read-only disk opens as writable until a write), or written
      // by another process right now: built in memory. Each remedy is tried once.
      const next = state.mode === "update" ? true : "memory";
      if (state.mode === "memory" || next === again || !isCorruption(err)) throw readFault(err, index, job.searching);
      again = next;
      earlier = next === "memory" ? [] : [...state.notes, { code: "index_rebuilt", text: `${index.path.rel} was found corrupt while reading it; rebuilding it from the Logs` }];
    } finally {
      closeSearchIndex(index);
    }
  }
}

/**
 * archive.md §2: bring the index up to date with the Logs, then search it. `request` makes the search of
 * the session cards (--agent and --project select on them). `listing`: the Logs as the caller listed them.
 */
export async function searchWorkspace(ws: string, request: (cards: SessionCards) => SearchRequest, progress?: UpdateProgress, listing: LogListing = listLogs(ws)): Promise<SearchResult> {
  const key = listingKey(listing);
  return withIndex(ws, { rebuild: false, searching: true, progress }, listing, key, async (index, state) => {
    const cards = await cardsFor(ws, index, state, listing, key);
    const hits = runSearch(index.db, ws, request(cards));
    return { hits, index: state, cards: cards.of([...new Set(hits.map((h) => h.session_id))]) };
  });
}

export interface IndexReport extends UpdateCounts {
  index_path: string;
  mode: IndexMode;
  rebuilt: boolean;
  documents: number;
  log_bytes: number;
  index_bytes: number;
  notes: IndexNote[];
}

function fileBytes(abs: string): number {
  let n = 0;
  for (const suffix of ["", "-wal"]) {
    try {
      n += statSync(abs + suffix).size;
    } catch {
      // absent: nothing to count
    }
  }
  return n;
}

function sizes(db: Database.Database): { documents: number; log_bytes: number } {
  const docs = db.prepare("SELECT count(*) AS n FROM docs").get() as { n: number };
  const bytes = db.prepare("SELECT coalesce(sum(bytes), 0) AS n FROM logs").get() as { n: number };
  return { documents: docs.n, log_bytes: bytes.n };
}

/** `pixir index [--rebuild]`: the same update a search makes (the Events and the session cards), alone, with counts and sizes. */
export async function indexWorkspace(ws: string, rebuild: boolean, progress?: UpdateProgress): Promise<IndexReport> {
  const listing = listLogs(ws);
  const key = listingKey(listing);
  return withIndex(ws, { rebuild, searching: false, progress }, listing, key, async (index, state) => {
    await cardsFor(ws, index, state, listing, key);
    const c = state.counts;
    const counted = sizes(index.db);
    if (state.mode === "update") index.db.pragma("wal_checkpoint(TRUNCATE)");
    return {
      index_path: index.path.rel,
      mode: state.mode,
      rebuilt: rebuild || state.notes.some((n) => n.code === "index_rebuilt"),
      logs: c?.logs ?? 0,
      added: c?.added ?? 0,
      grown: c?.grown ?? 0,
      reindexed: c?.reindexed ?? 0,
      removed: c?.removed ?? 0,
      unchanged: c?.unchanged ?? 0,
      indexed_bytes: c?.indexed_bytes ?? 0,
      indexed_events: c?.indexed_events ?? 0,
      ...counted,
      index_bytes: state.mode === "memory" ? 0 : fileBytes(index.path.abs),
      notes: state.notes,
    };
  });
}
