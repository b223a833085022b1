// cli.md §8.4: the Logs of a Workspace. Only regular files named <valid id>.ndjson count.
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { mapOsRefusal, PixirError } from "../event/errors.js";
import { readFirstLine } from "./log-read.js";
import { inspectStatePath, logPath, sessionsDir } from "./paths.js";
import { isValidSessionId } from "../event/session-id.js";

export interface LogListing {
  sessionIds: string[];
  /** Each Log's size in bytes when it was listed. */
  sizes: Map<string, number>;
  /** Each Log's mtime (ms) when it was listed: with the size, the key of derived data (one lstat per Log). */
  mtimes: Map<string, number>;
  /** Each Log's inode and ctime (ms): with size and mtime, what the search index keys a Log by. */
  inos: Map<string, number>;
  ctimes: Map<string, number>;
  ignoredEntries: number;
}

const LOG_SUFFIX = ".ndjson";

/** Session ids with a Log in the Workspace, sorted by byte order. */
export function listLogs(ws: string): LogListing {
  const dir = sessionsDir(ws);
  const sizes = new Map<string, number>();
  const mtimes = new Map<string, number>();
  const inos = new Map<string, number>();
  const ctimes = new Map<string, number>();
  if (inspectStatePath(dir) === "missing") return { sessionIds: [], sizes, mtimes, inos, ctimes, ignoredEntries: 0 };
  const ids: string[] = [];
  let ignored = 0;
  const dirAbs = dir.abs; // a getter that joins paths: once, not once per Log
  for (const name of readdirSync(dirAbs)) {
    const id = name.endsWith(LOG_SUFFIX) ? name.slice(0, -LOG_SUFFIX.length) : null;
    const st = id === null || !isValidSessionId(id) ? null : lstatSync(dirAbs + path.sep + name, { throwIfNoEntry: false });
    if (st === undefined) continue; // removed while the folder was read: not listed, not an error
    if (id === null || st === null || !st.isFile()) {
      ignored++;
      continue;
    }
    ids.push(id);
    sizes.set(id, st.size);
    mtimes.set(id, st.mtimeMs);
    inos.set(id, st.ino);
    ctimes.set(id, st.ctimeMs);
  }
  return { sessionIds: byteOrder(ids), sizes, mtimes, inos, ctimes, ignoredEntries: ignored };
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
