// archive.md §2: every search first brings the index up to date with the Logs. A Log that grew is read
// from its old length on (Logs are append-only); a new Log is read whole; a removed one is dropped; a Log
// whose bytes before its old length changed (the digest of those bytes differs, or it got shorter) is
// read again from the start. Only a Log whose stat changed is read at all. Writes go in batches of a few
// MB, each one transaction that first re-reads where its Log stands, so two searches updating at once
// never index a line twice; readers (WAL) never wait, and no Writer Lease is taken: a Log is read only up
// to its committed length.
import type Database from "better-sqlite3";
import { createHash, type Hash } from "node:crypto";
import { closeSync, openSync, readSync, constants as fsConstants } from "node:fs";
import path from "node:path";
import { isReplayType } from "../../event/vocabulary.js";
import { committedLength } from "../../store/log-read.js";
import { listLogs, type LogListing } from "../../store/ls.js";
import { metaHolds, setMeta } from "./index-db.js";
import { sessionsDir } from "../../store/paths.js";
import { indexedText } from "./query.js";
import { searchableOf } from "./searchable.js";
import { fileRows } from "./file-match.js";

/** Log bytes per write transaction: bounds memory and how long another search waits for the lock. */
const BATCH_BYTES = 8 << 20;
const READ_BYTES = 1 << 20;
const NEWLINE = 0x0a;

export interface LogRow {
  log: number;
  session_id: string;
  bytes: number;
  stat_key: string | null;
  prefix_digest: string | null;
  parent: string | null;
  forked_to_seq: number | null;
  inherited_count: number;
  replay_count: number;
  cp_seq: number | null;
  cp_to: number | null;
  events: number;
}

export interface UpdateCounts {
  logs: number;
  added: number;
  grown: number;
  reindexed: number;
  removed: number;
  unchanged: number;
  indexed_bytes: number;
  indexed_events: number;
}

export type UpdateProgress = (doneBytes: number, totalBytes: number) => void;

interface LogFile {
  id: string;
  abs: string;
  statKey: string;
  size: number;
}

/** What tells a changed Log file from an unchanged one without reading it: inode, size, mtime, ctime. */
export const statKeyOf = (listing: LogListing, id: string): string => `${listing.inos.get(id)}:${listing.sizes.get(id)}:${listing.mtimes.get(id)}:${listing.ctimes.get(id)}`;

/**
 * Every listed Log's id and the numbers of its stat key as bytes (the count first, so that where the ids
 * end is known): equal listings, equal keys. The index keeps the key of the listing it last caught up with,
 * so a search of unchanged Logs compares one key instead of a stored stat key per Log. The key is compared
 * whole, not hashed: such a search then hashes nothing, and loading node:crypto was 2–4 ms of it.
 */
export function listingKey(listing: LogListing): Buffer {
  const { stats } = listing;
  const count = Buffer.alloc(4);
  count.writeUInt32LE(listing.sessionIds.length);
  return Buffer.concat([count, Buffer.from(listing.sessionIds.join("\n"), "utf8"), Buffer.from(stats.buffer, stats.byteOffset, stats.byteLength)]);
}

/** The Logs of a listing with their stat keys. */
function logFilesOf(ws: string, listing: LogListing): LogFile[] {
  const dir = sessionsDir(ws).abs;
  return listing.sessionIds.map((id) => ({ id, abs: `${dir}${path.sep}${id}.ndjson`, size: listing.sizes.get(id)!, statKey: statKeyOf(listing, id) }));
}

/**
 * The running digest of a Log's bytes [0, at): carried from batch to batch, so that each byte is hashed
 * once; `at` -1 when it must be read from the file first.
 */
interface PrefixHash {
  at: number;
  hash: Hash;
}

/** Hash bytes [0, end) of the Log into `carry`. */
function hashPrefix(fd: number, end: number, carry: PrefixHash): void {
  carry.hash = createHash("sha256");
  const buf = Buffer.allocUnsafe(Math.min(Math.max(end, 1), READ_BYTES));
  for (let pos = 0; pos < end; ) {
    const got = readSync(fd, buf, 0, Math.min(buf.length, end - pos), pos);
    if (got === 0) break;
    carry.hash.update(buf.subarray(0, got));
    pos += got;
  }
  carry.at = end;
}

/** Whether the bytes the index holds of this Log are still the Log's: every byte before its indexed length. */
function stillPrefix(fd: number, row: LogRow, committed: number, carry: PrefixHash): boolean {
  if (committed < row.bytes) return false;
  if (row.bytes === 0) return true;
  if (carry.at !== row.bytes) hashPrefix(fd, row.bytes, carry);
  return carry.hash.copy().digest("hex") === row.prefix_digest;
}

/** One complete line of a Log read in blocks, with its place. */
interface Line {
  bytes: Buffer;
  offset: number;
}

/**
 * The complete lines of `[start, end)`, in blocks of up to `BATCH_BYTES`, each block's bytes added to
 * `hash` before it is given; a torn tail is left for later.
 */
function* lineBatches(fd: number, start: number, end: number, hash: Hash): Generator<Line[]> {
  let buf = Buffer.allocUnsafe(READ_BYTES);
  let have = 0;
  // buf[0, hashed) is in `hash` already: the lines of a batch are hashed a block at a time, before it is given.
  let hashed = 0;
  let bufStart = start;
  let pos = start;
  let batch: Line[] = [];
  let batchBytes = 0;
  while (pos < end) {
    if (have === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, have);
      buf = bigger;
    }
    const got = readSync(fd, buf, have, Math.min(buf.length - have, end - pos), pos);
    if (got === 0) break;
    pos += got;
    have += got;
    let lineStart = 0;
    for (let nl = buf.indexOf(NEWLINE, 0); nl >= 0 && nl < have; nl = buf.indexOf(NEWLINE, lineStart)) {
      batch.push({ bytes: Buffer.from(buf.subarray(lineStart, nl)), offset: bufStart + lineStart });
      batchBytes += nl + 1 - lineStart;
      lineStart = nl + 1;
      if (batchBytes >= BATCH_BYTES) {
        hash.update(buf.subarray(hashed, lineStart));
        hashed = lineStart;
        yield batch;
        batch = [];
        batchBytes = 0;
      }
    }
    hash.update(buf.subarray(hashed, lineStart));
    buf.copy(buf, 0, lineStart, have);
    have -= lineStart;
    bufStart += lineStart;
    hashed = 0;
  }
  if (batch.length > 0) yield batch;
}

/** The prepared statements of one update run. */
class Statements {
  readonly row: Database.Statement;
  readonly newLog: Database.Statement;
  readonly saveLog: Database.Statement;
  readonly doc: Database.Statement;
  readonly fts: Database.Statement;
  readonly file: Database.Statement;
  readonly dropFts: Database.Statement;
  readonly dropFiles: Database.Statement;
  readonly dropDocs: Database.Statement;
  readonly dropLog: Database.Statement;

  constructor(db: Database.Database) {
    this.row = db.prepare("SELECT * FROM logs WHERE session_id = ?");
    this.newLog = db.prepare("INSERT INTO logs (session_id, bytes) VALUES (?, 0)");
    this.saveLog = db.prepare(
      `UPDATE logs SET bytes = @bytes, stat_key = @stat_key, prefix_digest = @prefix_digest,
       parent = @parent, forked_to_seq = @forked_to_seq, inherited_count = @inherited_count, replay_count = @replay_count,
       cp_seq = @cp_seq, cp_to = @cp_to, events = @events WHERE log = @log`,
    );
    this.doc = db.prepare("INSERT INTO docs (log, seq, type, role, tool, ts, ordinal, offset, length) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    this.fts = db.prepare("INSERT INTO fts (rowid, body) VALUES (?, ?)");
    this.file = db.prepare("INSERT INTO files (doc, suffix, whole) VALUES (?, ?, ?)");
    this.dropFts = db.prepare("DELETE FROM fts WHERE rowid IN (SELECT doc FROM docs WHERE log = ?)");
    this.dropFiles = db.prepare("DELETE FROM files WHERE doc IN (SELECT doc FROM docs WHERE log = ?)");
    this.dropDocs = db.prepare("DELETE FROM docs WHERE log = ?");
    this.dropLog = db.prepare("DELETE FROM logs WHERE log = ?");
  }

  dropContent(log: number): void {
    this.dropFts.run(log);
    this.dropFiles.run(log);
    this.dropDocs.run(log);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const intOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isSafeInteger(v) ? v : null);

/** Index one line into `row` (its running state). A line that is not an Event is skipped: the index is not the checker. */
function indexLine(st: Statements, row: LogRow, line: Line): boolean {
  let e: unknown;
  try {
    e = JSON.parse(line.bytes.toString("utf8"));
  } catch {
    return false;
  }
  if (!isObject(e) || typeof e.type !== "string" || !isObject(e.data)) return false;
  const seq = intOrNull(e.seq);
  if (seq === null) return false;
  const data = e.data;
  row.events++;
  if (line.offset === 0 && e.type === "session_fork") {
    row.parent = typeof data.parent_session_id === "string" ? data.parent_session_id : null;
    row.forked_to_seq = intOrNull(data.forked_to_seq);
    const n = intOrNull(data.replay_event_count) ?? 0;
    // A replay_v1 child's seqs 1..N copy its parent's Events: they are indexed once, at the parent.
    if (data.strategy === "replay_v1") row.inherited_count = n;
    else row.replay_count = n;
    return true;
  }
  if (isReplayType(e.type)) row.replay_count++;
  if (e.type === "history_compaction" && (row.cp_seq === null || seq > row.cp_seq)) {
    row.cp_seq = seq;
    row.cp_to = isObject(data.range) ? intOrNull(data.range.to_seq) : null;
  }
  if (seq >= 1 && seq <= row.inherited_count) return true;
  const doc = searchableOf(e.type, data);
  if (doc === null) return true;
  const ts = typeof e.ts === "string" ? e.ts : "";
  const id = Number(st.doc.run(row.log, seq, e.type, doc.role, doc.tool, ts, row.replay_count, line.offset, line.bytes.length).lastInsertRowid);
  st.fts.run(id, indexedText(doc.text));
  for (const p of doc.paths) for (const r of fileRows(p)) st.file.run(id, r.suffix, r.whole);
  return true;
}

/** Bring one Log up to date. Returns what happened to it. */
function updateLog(db: Database.Database, st: Statements, ws: string, file: LogFile, counts: UpdateCounts, progress: () => void): void {
  let fd: number;
  try {
    fd = openSync(file.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return; // removed since it was listed: the next search drops it
  }
  try {
    const committed = committedLength(ws, file.id, fd).byteLength;
    const carry: PrefixHash = { at: -1, hash: createHash("sha256") };
    let first = true;
    for (;;) {
      const begin = db.transaction(() => planBatch(st, fd, file, committed, counts, first, carry));
      const work = begin.immediate();
      first = false;
      if (work === null) return;
      progress();
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * One write transaction: where the Log stands in the index now (another search may have moved it), then up
 * to one batch of its new lines. Null when the Log is up to date.
 */
function planBatch(st: Statements, fd: number, file: LogFile, committed: number, counts: UpdateCounts, first: boolean, carry: PrefixHash): number | null {
  let row = st.row.get(file.id) as LogRow | undefined;
  if (row !== undefined && row.stat_key === file.statKey && row.bytes === committed) {
    if (first) counts.unchanged++;
    return null;
  }
  if (row === undefined) {
    st.newLog.run(file.id);
    row = st.row.get(file.id) as LogRow;
    if (first) counts.added++;
  } else if (!stillPrefix(fd, row, committed, carry)) {
    st.dropContent(row.log);
    row = { ...row, bytes: 0, prefix_digest: null, parent: null, forked_to_seq: null, inherited_count: 0, replay_count: 0, cp_seq: null, cp_to: null, events: 0 };
    if (first) counts.reindexed++;
  } else if (first && row.bytes < committed) counts.grown++;
  else if (first) counts.unchanged++;
  const start = row.bytes;
  if (carry.at !== start) hashPrefix(fd, start, carry);
  let last: Line | null = null;
  // The batch's lines are in carry.hash once it is given (lineBatches hashes them as it reads them).
  const batch = start < committed ? lineBatches(fd, start, committed, carry.hash).next() : null;
  if (batch !== null && batch.done !== true) {
    for (const line of batch.value) {
      if (indexLine(st, row, line)) counts.indexed_events++;
      last = line;
    }
  }
  if (last !== null) {
    row.bytes = last.offset + last.bytes.length + 1;
    carry.at = row.bytes;
    row.prefix_digest = carry.hash.copy().digest("hex");
    counts.indexed_bytes += row.bytes - start;
  }
  // Caught up (nothing new, or only a torn tail): remember the file as it is, so an unchanged one is not opened.
  const done = last === null;
  row.stat_key = done && row.bytes === committed ? file.statKey : null;
  st.saveLog.run(row);
  return done ? null : row.bytes;
}

/** The meta key of the listing the index last caught up with. */
const CAUGHT_UP_KEY = "caught_up_listing";

/** Whether the index holds every listed byte of this Log (not a torn tail, not an unreadable file). */
function caughtUp(st: Statements, f: LogFile): boolean {
  const row = st.row.get(f.id) as LogRow | undefined;
  return row !== undefined && row.bytes === f.size && row.stat_key === f.statKey;
}

/**
 * Bring the whole index up to date with the Logs of `ws` as `listing` lists them. When the index last caught
 * up with a listing of the same key, nothing changed: no Log's stored state is looked at.
 */
export function updateSearchIndex(db: Database.Database, ws: string, onProgress?: UpdateProgress, listing: LogListing = listLogs(ws), key: Uint8Array = listingKey(listing)): UpdateCounts {
  const counts: UpdateCounts = { logs: listing.sessionIds.length, added: 0, grown: 0, reindexed: 0, removed: 0, unchanged: 0, indexed_bytes: 0, indexed_events: 0 };
  if (metaHolds(db, CAUGHT_UP_KEY, key)) {
    counts.unchanged = counts.logs;
    return counts;
  }
  const st = new Statements(db);
  const files = logFilesOf(ws, listing);
  const stored = db.prepare("SELECT log, session_id, stat_key, bytes FROM logs").all() as Array<{ log: number; session_id: string; stat_key: string | null; bytes: number }>;
  const present = new Set(listing.sessionIds);
  const gone = stored.filter((r) => !present.has(r.session_id));
  if (gone.length > 0) {
    db.transaction(() => {
      for (const r of gone) {
        st.dropContent(r.log);
        st.dropLog.run(r.log);
      }
    }).immediate();
    counts.removed = gone.length;
  }
  const known = new Map(stored.map((r) => [r.session_id, r]));
  const total = files.reduce((n, f) => n + f.size, 0);
  let done = 0;
  let all = true;
  for (const f of files) {
    const k = known.get(f.id);
    if (k !== undefined && k.stat_key === f.statKey && k.bytes === f.size) {
      counts.unchanged++;
      done += f.size;
      continue;
    }
    const before = counts.indexed_bytes;
    updateLog(db, st, ws, f, counts, () => onProgress?.(done + counts.indexed_bytes - before, total));
    all &&= caughtUp(st, f);
    done += f.size;
  }
  if (all) setMeta(db, CAUGHT_UP_KEY, key);
  return counts;
}
