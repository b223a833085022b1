// cli.md §8.4: the Logs of a Workspace. Only regular files named <valid id>.ndjson count.
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { mapOsRefusal, PixirError } from "../event/errors.js";
import { readFirstLine } from "./log-read.js";
import { inspectStatePath, logPath, sessionsDir } from "./paths.js";
import { isValidSessionId } from "../event/session-id.js";

export interface LogListing {
  sessionIds: string[];
  /**
   * Each Log's inode, size, mtime (ms) and ctime (ms) when it was listed, four numbers per Log in the order
   * of sessionIds: what derived data keys a Log by (one lstat per Log). The maps below are views of it.
   */
  stats: Float64Array;
  /** Each Log's size in bytes when it was listed. */
  sizes: Map<string, number>;
  /** Each Log's mtime (ms) when it was listed: with the size, the key of derived data. */
  mtimes: Map<string, number>;
  /** Each Log's inode and ctime (ms): with size and mtime, what the search index keys a Log by. */
  inos: Map<string, number>;
  ctimes: Map<string, number>;
  ignoredEntries: number;
}

/** The place of each number in a Log's four of LogListing.stats. */
export const STAT_INO = 0;
export const STAT_SIZE = 1;
export const STAT_MTIME = 2;
export const STAT_CTIME = 3;

/**
 * A listing whose maps are made when first asked for: a search of unchanged Logs reads only the ids and the
 * stats array, and making four maps of thousands of entries was a tenth of its listing's time.
 */
class Listing implements LogListing {
  readonly #maps: Array<Map<string, number> | undefined> = [];
  constructor(
    readonly sessionIds: string[],
    readonly stats: Float64Array,
    readonly ignoredEntries: number,
  ) {}

  #map(field: number): Map<string, number> {
    let m = this.#maps[field];
    if (m === undefined) {
      m = new Map(this.sessionIds.map((id, i) => [id, this.stats[i * 4 + field]!]));
      this.#maps[field] = m;
    }
    return m;
  }

  get sizes(): Map<string, number> {
    return this.#map(STAT_SIZE);
  }
  get mtimes(): Map<string, number> {
    return this.#map(STAT_MTIME);
  }
  get inos(): Map<string, number> {
    return this.#map(STAT_INO);
  }
  get ctimes(): Map<string, number> {
    return this.#map(STAT_CTIME);
  }
}

const LOG_SUFFIX = ".ndjson";
/** One options object for every lstat of a listing, not one per Log. */
const MAY_BE_GONE = { throwIfNoEntry: false } as const;

/** Session ids with a Log in the Workspace, sorted by byte order. */
export function listLogs(ws: string): LogListing {
  const dir = sessionsDir(ws);
  if (inspectStatePath(dir) === "missing") return new Listing([], new Float64Array(0), 0);
  const named: string[] = [];
  let ignored = 0;
  const dirAbs = dir.abs; // a getter that joins paths: once, not once per Log
  for (const name of readdirSync(dirAbs)) {
    const id = name.endsWith(LOG_SUFFIX) ? name.slice(0, -LOG_SUFFIX.length) : null;
    if (id !== null && isValidSessionId(id)) named.push(id);
    else ignored++;
  }
  // Sorted first, then each stat written in its place: no map from id to stat, no second sort.
  const ids: string[] = [];
  const stats = new Float64Array(named.length * 4);
  for (const id of byteOrder(named)) {
    const st = lstatSync(dirAbs + path.sep + id + LOG_SUFFIX, MAY_BE_GONE);
    if (st === undefined) continue; // removed while the folder was read: not listed, not an error
    if (!st.isFile()) {
      ignored++;
      continue;
    }
    const at = ids.length * 4;
    stats[at + STAT_INO] = st.ino;
    stats[at + STAT_SIZE] = st.size;
    stats[at + STAT_MTIME] = st.mtimeMs;
    stats[at + STAT_CTIME] = st.ctimeMs;
    ids.push(id);
  }
  return new Listing(ids, stats.subarray(0, ids.length * 4), ignored);
}

/** A surrogate: the one place where UTF-16 order (JS's `<`) and UTF-8 byte order disagree. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** Sorted by UTF-8 byte order; each id encoded once, not once per comparison. */
function byteOrder(ids: string[]): string[] {
  // Without surrogates, code-unit order is byte order: the plain sort, no Buffer per id.
  if (!ids.some((id) => SURROGATE.test(id))) return ids.sort();
  const keyed = ids.map((id) => ({ id, bytes: Buffer.from(id, "utf8") }));
  keyed.sort((a, b) => Buffer.compare(a.bytes, b.bytes));
  return keyed.map((k) => k.id);
}

export interface LogEntry {
  session_id: string;
  log_path: string;
  size_bytes: number;
  modified_at: string;
  parent_session_id: string | null;
  strategy: string | null;
  first_line_error?: string;
}

/** ls --json: one entry per Log, lineage from its first line only. */
export async function describeLogs(ws: string): Promise<{ entries: LogEntry[]; ignoredEntries: number }> {
  const listing = listLogs(ws);
  const entries: LogEntry[] = [];
  for (const id of listing.sessionIds) {
    const p = logPath(ws, id);
    const st = lstatSync(p.abs);
    const entry: LogEntry = {
      session_id: id,
      log_path: p.abs,
      size_bytes: st.size,
      modified_at: st.mtime.toISOString(),
      parent_session_id: null,
      strategy: null,
    };
    let first: Awaited<ReturnType<typeof readFirstLine>>;
    try {
      first = await readFirstLine(p);
    } catch (thrown) {
      // A Log this user may not read is listed with the reason (cli.md §8.4: an unreadable first line).
      const err = mapOsRefusal(thrown);
      if (!(err instanceof PixirError)) throw err;
      entry.first_line_error = err.kind;
      entries.push(entry);
      continue;
    }
    if (first !== null && "problem" in first) entry.first_line_error = first.problem.reason;
    else if (first !== null && first.line.event.type === "session_fork") {
      const d = first.line.event.data;
      entry.parent_session_id = typeof d.parent_session_id === "string" ? d.parent_session_id : null;
      entry.strategy = typeof d.strategy === "string" ? d.strategy : null;
    }
    entries.push(entry);
  }
  return { entries, ignoredEntries: listing.ignoredEntries };
}
