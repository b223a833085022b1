// archive.md §2, `--sort time`: hits newest first, Events of the same time in the order they were indexed.
// The index keeps its doc ids in that order: a new doc gets an id between the last doc at or before its
// time and the first doc after it, so ordering by id is ordering by (ts, order indexed), and the newest
// hits come from the full-text index in rowid order, stopping at the limit, instead of every match being
// fetched and sorted. Ids leave room for later Events of any time (4,096 per millisecond of a timestamp,
// the hint); where none is left between two neighbours the index is marked unordered, takes the next id
// past all, and searches sort by time as before until the index is rebuilt.
import type Database from "better-sqlite3";
import { setMeta, TIME_ORDERED_KEY } from "./index-db.js";

/** The ids a doc may take: strictly between these, and exact in a JavaScript number. */
const ID_FLOOR = -(2 ** 52);
const ID_CEIL = 2 ** 52;
/** Ids per millisecond of a timestamp, counted from 2020: a hint within the ids for ±34 years of it. */
const IDS_PER_MS = 4096;
const HINT_EPOCH_MS = Date.UTC(2020, 0, 1);
/** How far after the last doc one behind its hint goes: 512 Events of one millisecond in a row keep the order. */
const BEHIND_STEP = 8;

/** Where a doc of time `ts` would sit with nothing around it; null for a time Date cannot read. */
export function timeHint(ts: string): number | null {
  const ms = Date.parse(ts);
  if (!Number.isFinite(ms)) return null;
  return Math.min(ID_CEIL - 1, Math.max(ID_FLOOR + 1, (ms - HINT_EPOCH_MS) * IDS_PER_MS));
}

/**
 * An id strictly between `low` and `high` (null: no neighbour on that side), or null when none is left:
 * the hint when it lies between. A doc behind its hint (the same millisecond as the last one, or a time
 * written in another way that sorts after it) goes a few ids after `low`, so that each later Event of that
 * time still finds room after it; one ahead of its hint goes halfway; one without a hint halfway, or a
 * second of ids after the last doc.
 */
export function idBetween(low: number | null, high: number | null, hint: number | null): number | null {
  const lo = low ?? ID_FLOOR;
  const hi = high ?? ID_CEIL;
  const gap = hi - lo;
  if (gap < 2) return null;
  if (hint !== null && hint > lo && hint < hi) return hint;
  if (hint !== null && hint <= lo) return lo + Math.min(BEHIND_STEP, Math.floor(gap / 2));
  if (hint === null && high === null) return lo + Math.min(IDS_PER_MS * 1000, Math.floor(gap / 2));
  return lo + Math.floor(gap / 2);
}

/** Whether the index's doc ids are in time order (set when the index is made; cleared when no id is left). */
export function isTimeOrdered(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM meta WHERE key = ? AND value = '1'").get(TIME_ORDERED_KEY) !== undefined;
}

/** The id of the first doc of time `ts` or later, or null when there is none: where ids are in time order, `ts >= X` is `id >= firstIdFrom(X)`. */
export function firstIdFrom(db: Database.Database, ts: string): number | null {
  return (db.prepare("SELECT doc FROM docs WHERE ts >= ? ORDER BY ts, doc LIMIT 1").pluck().get(ts) as number | undefined) ?? null;
}

/** The meta key of the count of docs ever indexed: each doc's `ins`, the order indexed. */
const INDEXED_KEY = "docs_indexed";

/**
 * Gives each new doc its id and its place in the order indexed (`ins`: `--sort rank` orders its ties so, as
 * the engine did when the ids were that order); inside the update's write transaction.
 */
export class DocIds {
  private readonly last: Database.Statement;
  private readonly next: Database.Statement;
  private readonly top: Database.Statement;
  private readonly indexed: Database.Statement;
  private ordered: boolean | null = null;
  private ins = 0;
  private insAtBegin = 0;

  constructor(private readonly db: Database.Database) {
    this.last = db.prepare("SELECT doc FROM docs WHERE ts <= ? ORDER BY ts DESC, doc DESC LIMIT 1").pluck();
    this.next = db.prepare("SELECT doc FROM docs WHERE ts > ? ORDER BY ts, doc LIMIT 1").pluck();
    this.top = db.prepare("SELECT max(doc) FROM docs").pluck();
    this.indexed = db.prepare("SELECT value FROM meta WHERE key = ?").pluck();
  }

  /** Read again at each write transaction: another process may have changed them since. */
  begin(): void {
    this.ordered = isTimeOrdered(this.db);
    this.ins = this.insAtBegin = Number(this.indexed.get(INDEXED_KEY) ?? 0);
  }

  /** The next doc's place in the order indexed. */
  nextIns(): number {
    return ++this.ins;
  }

  /** At the end of a write transaction that indexed docs: the count kept for the next. */
  end(): void {
    if (this.ins !== this.insAtBegin) setMeta(this.db, INDEXED_KEY, String(this.ins));
    this.insAtBegin = this.ins;
  }

  /** The id of a new doc of time `ts`. */
  idFor(ts: string): number {
    if (this.ordered === null) this.begin();
    if (this.ordered) {
      const id = idBetween((this.last.get(ts) as number | undefined) ?? null, (this.next.get(ts) as number | undefined) ?? null, timeHint(ts));
      if (id !== null) return id;
      setMeta(this.db, TIME_ORDERED_KEY, "0");
      this.ordered = false;
    }
    return Math.max(ID_FLOOR, (this.top.get() as number | null) ?? ID_FLOOR) + 1;
  }
}
