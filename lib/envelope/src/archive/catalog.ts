// archive.md §1: the catalog, every Log's session facts. Two derived files under .pixir/index/, both keyed
// by each Log's size and mtime (one lstat per Log, from the listing): catalog.json holds the joined facts,
// in order, so that when no Log changed they are the answer as read; catalog-scans.json holds each Log's own
// scan, read only when some Log changed, so that only the changed Logs are scanned again before the join.
// The Logs stay the truth: a file that is missing, corrupt or of another version is rebuilt, one that
// cannot be written (a read-only Workspace) is skipped.
import { existsSync, readFileSync, rmdirSync } from "node:fs";
import { STATE_DIR, StatePath, ensureStateDir, inspectStatePath, logPath, placeComplete, removeQuietly, tempSibling } from "../store/paths.js";
import { listLogs, type LogListing } from "../store/ls.js";
import { isJsonObject } from "../event/envelope.js";
import { joinFacts, sharesParentMessages, type ScannedLog, type SessionFacts } from "./facts.js";
import { factsToRow, rowToFacts } from "./catalog-rows.js";
import { emptyScan, scanBatch, ScanBuffer, scanLogFacts, type LogScan, type ScanTask } from "./log-facts.js";
import { scanThreadCount } from "../store/threads.js";
import { WorkerPool } from "../store/worker-pool.js";

/** Bumped whenever LogScan or a rule that fills it changes: an older catalog-scans.json is then rebuilt whole. */
export const SCANS_VERSION = 3;
/** Bumped whenever SessionFacts, their rows (catalog-rows.ts) or the join changes; also when SCANS_VERSION is. */
export const CATALOG_VERSION = 4;
const SCAN_CONCURRENCY = 8;

export const indexDir = (ws: string) => new StatePath(ws, [STATE_DIR, "index"], "directory");
export const catalogPath = (ws: string) => indexDir(ws).child("catalog.json", "file");
export const catalogScansPath = (ws: string) => indexDir(ws).child("catalog-scans.json", "file");

interface CachedLog {
  size: number;
  mtime_ms: number;
  scan: LogScan;
}

/** Every Log of the Workspace, newest `updated` first, from the cache where each Log is unchanged. */
export async function readCatalog(workspace: string): Promise<SessionFacts[]> {
  return (await readCatalogListed(workspace)).facts;
}

/**
 * readCatalog with the listing it was keyed by (each Log's size and mtime), for other derived data keyed the
 * same way; `listing`: the Logs as the caller already listed them.
 */
export async function readCatalogListed(workspace: string, listing: LogListing = listLogs(workspace)): Promise<{ facts: SessionFacts[]; listing: LogListing }> {
  const keys = keysOf(listing);
  const answer = readJoined(workspace, keys);
  if (answer !== null) return { facts: answer, listing };
  const cached = readScans(workspace);
  const fresh = new Map<string, CachedLog>();
  const todo: Array<{ id: string; size: number; mtime: number }> = [];
  for (const id of listing.sessionIds) {
    const size = listing.sizes.get(id)!;
    const mtime = listing.mtimes.get(id)!;
    const hit = cached.get(id);
    if (hit !== undefined && hit.size === size && hit.mtime_ms === mtime) fresh.set(id, hit);
    else todo.push({ id, size, mtime });
  }
  await scanChanged(workspace, todo, fresh);
  // A Log whose message seqs the cache did not keep, and that a share child now counts: scanned again.
  const needed = seqsNeeded(fresh.values());
  const again = [...needed].filter((id) => fresh.get(id)?.scan.message_seqs === null).map((id) => ({ id, size: fresh.get(id)!.size, mtime: fresh.get(id)!.mtime_ms }));
  if (again.length > 0) await scanChanged(workspace, again, fresh);
  const logs: ScannedLog[] = listing.sessionIds.map((id) => ({ id, bytes: fresh.get(id)!.size, scan: fresh.get(id)!.scan }));
  const facts = joinFacts(logs).sort(newestFirst);
  if (listing.sessionIds.length > 0) {
    if (todo.length > 0 || again.length > 0 || cached.size !== listing.sessionIds.length) writeScans(workspace, listing.sessionIds, fresh, needed);
    writeIndexFile(workspace, catalogPath(workspace), { version: CATALOG_VERSION, keys, rows: facts.map(factsToRow) });
  }
  return { facts, listing };
}

/** The listing as one flat array, id, size, mtime, ...: compared whole against the one the facts were joined from. */
function keysOf(listing: LogListing): Array<string | number> {
  const keys: Array<string | number> = [];
  for (const id of listing.sessionIds) keys.push(id, listing.sizes.get(id)!, listing.mtimes.get(id)!);
  return keys;
}

/** The joined facts of catalog.json when they were joined from exactly these Logs, else null. */
function readJoined(ws: string, keys: ReadonlyArray<string | number>): SessionFacts[] | null {
  const v = readIndexFile(catalogPath(ws));
  if (!isJsonObject(v) || v.version !== CATALOG_VERSION || !Array.isArray(v.keys) || !Array.isArray(v.rows)) return null;
  if (v.keys.length !== keys.length || v.rows.length * 3 !== keys.length) return null;
  for (let i = 0; i < keys.length; i++) if (v.keys[i] !== keys[i]) return null;
  return factsOfRows(v.rows);
}

/** The facts of catalog.json's rows, or null when one is not a row (the file is then rebuilt). */
export function factsOfRows(rows: readonly unknown[]): SessionFacts[] | null {
  const facts: SessionFacts[] = [];
  for (const r of rows) {
    const f = rowToFacts(r);
    if (f === null) return null;
    facts.push(f);
  }
  return facts;
}

function readScans(ws: string): Map<string, CachedLog> {
  const out = new Map<string, CachedLog>();
  const v = readIndexFile(catalogScansPath(ws));
  if (!isJsonObject(v) || v.version !== SCANS_VERSION || !isJsonObject(v.logs)) return out;
  for (const [id, entry] of Object.entries(v.logs)) if (isCachedLog(entry)) out.set(id, entry);
  return out;
}

/** A derived file's JSON, or undefined when it is missing, unsafe, unreadable or corrupt (it is then rebuilt). */
function readIndexFile(target: StatePath): unknown {
  try {
    if (inspectStatePath(target) === "missing") return undefined;
    return JSON.parse(readFileSync(target.abs, "utf8"));
  } catch {
    return undefined;
  }
}

function isCachedLog(v: unknown): v is CachedLog {
  return isJsonObject(v) && typeof v.size === "number" && typeof v.mtime_ms === "number" && isJsonObject(v.scan) && (Array.isArray(v.scan.message_seqs) || v.scan.message_seqs === null);
}

/** The Logs whose message seqs a share child counts (facts.ts), of all the Logs' scans. */
function seqsNeeded(logs: Iterable<CachedLog>): Set<string> {
  const out = new Set<string>();
  for (const { scan } of logs) if (scan.fork !== null && sharesParentMessages(scan.fork)) out.add(scan.fork.parent);
  return out;
}

/** Each Log's scan, its message seqs kept only where a share child needs them (they were most of the file). */
function writeScans(ws: string, ids: readonly string[], logs: Map<string, CachedLog>, needed: ReadonlySet<string>): void {
  const entries: Record<string, CachedLog> = {};
  for (const id of ids) {
    const log = logs.get(id)!;
    entries[id] = needed.has(id) ? log : { ...log, scan: { ...log.scan, message_seqs: null } };
  }
  writeIndexFile(ws, catalogScansPath(ws), { version: SCANS_VERSION, logs: entries });
}

function writeIndexFile(ws: string, target: StatePath, value: unknown): void {
  const dir = indexDir(ws);
  const made = !existsSync(dir.abs);
  const temp = tempSibling(target);
  try {
    ensureStateDir(dir);
    placeComplete(temp, target, JSON.stringify(value), "rename");
  } catch {
    // A read-only or full Workspace still lists: the facts were computed in memory. What this run began
    // to write goes again, so a failed cache leaves the Workspace as it was.
    removeQuietly(temp.abs);
    if (made) removeIfEmpty(dir.abs);
  }
}


/** rmdir, which refuses a folder another process has written into meanwhile. */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty, or gone: either way nothing of this run's is left.
  }
}

/** Newest `updated` first; a Log without times last; ties by id, so the order is the same every run. */
function newestFirst(a: SessionFacts, b: SessionFacts): number {
  const x = a.updated ?? "";
  const y = b.updated ?? "";
  if (x !== y) return x < y ? 1 : -1;
  return a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0;
}

const WORKER_FILE = "./catalog-scan-worker.js";
/** Batches a worker holds at once, so that it never waits on this thread for its next one. */
const BATCHES_PER_WORKER = 2;
/**
 * A worker's task is a batch of Logs up to this many bytes (or BATCH_LOGS Logs): a message per Log cost
 * the two sides more than scanning a small Log, and batches this size still share the work out evenly.
 */
const BATCH_BYTES = 4 * 1024 * 1024;
const BATCH_LOGS = 128;

/**
 * Scan the changed Logs into `fresh`: on worker threads when there are bytes enough to pay for starting
 * them (threads.ts, PIXIR_SCAN_THREADS), else in this thread, SCAN_CONCURRENCY at a time.
 */
async function scanChanged(ws: string, todo: ReadonlyArray<{ id: string; size: number; mtime: number }>, fresh: Map<string, CachedLog>): Promise<void> {
  const threads = scanThreadCount(process.env, todo.reduce((n, t) => n + t.size, 0));
  if (threads <= 1) {
    await inParallel(todo, SCAN_CONCURRENCY, async ({ id, size, mtime }, lane) => {
      fresh.set(id, { size, mtime_ms: mtime, scan: await scanLogFacts(logPath(ws, id).abs, size, lane) });
    });
    return;
  }
  const scratch = new ScanBuffer();
  const here = (batch: ScanTask[]) => scanBatch(batch, scratch);
  const pool = WorkerPool.open<ScanTask[], LogScan[]>(new URL(WORKER_FILE, import.meta.url), threads, here, () => {}, { perWorker: BATCHES_PER_WORKER, laneHere: true });
  try {
    await Promise.all(
      batchesOf(todo).map(async (batch) => {
        const scans = await pool.run(batch.map(({ id, size }) => ({ abs: logPath(ws, id).abs, size })));
        batch.forEach(({ id, size, mtime }, i) => fresh.set(id, { size, mtime_ms: mtime, scan: scans[i] ?? emptyScan() }));
      }),
    );
  } finally {
    await pool.close([]);
  }
}

/** The Logs of `todo` in batches of at most BATCH_BYTES (a larger Log alone) or BATCH_LOGS Logs. */
function batchesOf<T extends { size: number }>(todo: readonly T[]): T[][] {
  const out: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const log of todo) {
    if (batch.length > 0 && (bytes + log.size > BATCH_BYTES || batch.length === BATCH_LOGS)) {
      out.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(log);
    bytes += log.size;
  }
  if (batch.length > 0) out.push(batch);
  return out;
}

/** `job` over `items`, `width` at a time; each lane has its own ScanBuffer. */
async function inParallel<T>(items: readonly T[], width: number, job: (item: T, scratch: ScanBuffer) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    const scratch = new ScanBuffer();
    while (next < items.length) await job(items[next++]!, scratch);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
