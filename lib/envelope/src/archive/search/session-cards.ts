// archive.md §2: what a hit says of its session (agent, project, title) and what --agent and --project
// select, kept in the index beside the Events: a search whose Logs did not change reads the rows of its
// hits, not the whole catalog. They are the catalog's facts (archive.md §1: log-facts.ts scanned, facts.ts
// joined), copied whole whenever some Log changed, with the key of the listing they were joined from
// (update.ts's listingKey); a search whose own listing has another key reads the catalog again.
import type Database from "better-sqlite3";
import type { SessionFacts } from "../facts.js";
import { metaHolds, setMeta } from "./index-db.js";

/** A session's facts as a hit shows them and the filters select on. */
export type SessionCard = Pick<SessionFacts, "session_id" | "agent" | "project" | "title">;

/** Where a search reads the cards: the index's table, or the catalog's facts in memory. */
export interface SessionCards {
  /** The cards of these sessions (a removed session has none). */
  of(ids: readonly string[]): Map<string, SessionCard>;
  /** Every session's card (--agent, --project). */
  all(): SessionCard[];
}

const TABLE = `CREATE TABLE IF NOT EXISTS cards (
  session_id TEXT PRIMARY KEY,
  agent TEXT NOT NULL,
  project TEXT,
  title TEXT
) WITHOUT ROWID`;
/** The meta key of the listing the cards were joined from. */
const LISTING_KEY = "cards_listing";

/** The cards of the index when they were joined from a listing of this key, else null. */
export function storedCards(db: Database.Database, key: Uint8Array): SessionCards | null {
  if (!metaHolds(db, LISTING_KEY, key)) return null;
  return {
    of: (ids) => {
      const rows = db.prepare("SELECT session_id, agent, project, title FROM cards WHERE session_id IN (SELECT value FROM json_each(?))").all(JSON.stringify(ids)) as SessionCard[];
      return new Map(rows.map((r) => [r.session_id, r]));
    },
    all: () => db.prepare("SELECT session_id, agent, project, title FROM cards").all() as SessionCard[],
  };
}

/** Cards of the catalog's facts, in memory. */
export function cardsOfFacts(facts: readonly SessionFacts[]): SessionCards {
  const byId = new Map<string, SessionCard>(facts.map((f) => [f.session_id, f]));
  return {
    of: (ids) => new Map(ids.flatMap((id) => (byId.has(id) ? [[id, byId.get(id)!] as const] : []))),
    all: () => [...byId.values()],
  };
}

/**
 * Make the index's cards these facts, joined from a listing of this key, in one transaction: only the
 * rows that differ are written (after an append, one or two of thousands).
 */
export function saveCards(db: Database.Database, key: Uint8Array, facts: readonly SessionFacts[]): void {
  db.transaction(() => {
    db.exec(TABLE);
    const stored = new Map((db.prepare("SELECT session_id, agent, project, title FROM cards").all() as SessionCard[]).map((c) => [c.session_id, c]));
    const upsert = db.prepare("INSERT INTO cards (session_id, agent, project, title) VALUES (?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET agent = excluded.agent, project = excluded.project, title = excluded.title");
    for (const f of facts) {
      const old = stored.get(f.session_id);
      stored.delete(f.session_id);
      if (old === undefined || old.agent !== f.agent || old.project !== f.project || old.title !== f.title) upsert.run(f.session_id, f.agent, f.project, f.title);
    }
    const drop = db.prepare("DELETE FROM cards WHERE session_id = ?");
    for (const id of stored.keys()) drop.run(id);
    setMeta(db, LISTING_KEY, key);
  }).immediate();
}
