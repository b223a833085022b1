// archive.md §1: the catalog, every Log's session facts. Each Log's own scan is kept in a derived file,
// .pixir/index/catalog.json, keyed by the Log's size and mtime; a Log whose key changed (or the whole
// file when missing, corrupt or of another version) is scanned again. The Logs stay the truth: a cache
// that cannot be read is rebuilt, one that cannot be written (a read-only Workspace) is skipped.
import { lstatSync, readFileSync } from "node:fs";
import { STATE_DIR, StatePath, ensureStateDir, inspectStatePath, logPath, placeComplete, tempSibling } from "../store/paths.js";
import { listLogs } from "../store/ls.js";
import { isJsonObject } from "../event/envelope.js";
import { joinFacts, type ScannedLog, type SessionFacts } from "./facts.js";
import { ScanBuffer, scanLogFacts, type LogScan } from "./log-facts.js";

/** Bumped whenever LogScan or a rule that fills it changes: an older cache is then rebuilt whole. */
export const CATALOG_VERSION = 2;
const SCAN_CONCURRENCY = 8;

export const indexDir = (ws: string) => new StatePath(ws, [STATE_DIR, "index"], "directory");
export const catalogPath = (ws: string) => indexDir(ws).child("catalog.json", "file");

interface CachedLog {
  size: number;
  mtime_ms: number;
  scan: LogScan;
}

/** Every Log of the Workspace, newest `updated` first, from the cache where each Log is unchanged. */
export async function readCatalog(workspace: string): Promise<SessionFacts[]> {
  const listing = listLogs(workspace);
  const cached = readCache(workspace);
  const fresh = new Map<string, CachedLog>();
  let changed = cached.size !== listing.sessionIds.length;
  const todo: Array<{ id: string; size: number; mtime: number }> = [];
  for (const id of listing.sessionIds) {
    const st = statOf(workspace, id);
    const hit = cached.get(id);
    if (hit !== undefined && st !== null && hit.size === st.size && hit.mtime_ms === st.mtime) fresh.set(id, hit);
    else todo.push({ id, size: st?.size ?? 0, mtime: st?.mtime ?? 0 });
  }
  if (todo.length > 0) changed = true;
  await inParallel(todo, SCAN_CONCURRENCY, async ({ id, size, mtime }, scratch) => {
    fresh.set(id, { size, mtime_ms: mtime, scan: await scanLogFacts(logPath(workspace, id).abs, size, scratch) });
  });
  if (changed && listing.sessionIds.length > 0) writeCache(workspace, listing.sessionIds, fresh);
  const logs: ScannedLog[] = listing.sessionIds.map((id) => ({ id, bytes: fresh.get(id)!.size, scan: fresh.get(id)!.scan }));
  return joinFacts(logs).sort(newestFirst);
}

/** Newest `updated` first; a Log without times last; ties by id, so the order is the same every run. */
export function newestFirst(a: SessionFacts, b: SessionFacts): number {
  const x = a.updated ?? "";
  const y = b.updated ?? "";
  if (x !== y) return x < y ? 1 : -1;
  return a.session_id < b.session_id ? -1 : a.session_id > b.session_id ? 1 : 0;
}

function statOf(ws: string, id: string): { size: number; mtime: number } | null {
  try {
    const st = lstatSync(logPath(ws, id).abs);
    return { size: st.size, mtime: st.mtimeMs };
  } catch {
    return null;
  }
}

function readCache(ws: string): Map<string, CachedLog> {
  const out = new Map<string, CachedLog>();
  try {
    if (inspectStatePath(catalogPath(ws)) === "missing") return out;
    const v: unknown = JSON.parse(readFileSync(catalogPath(ws).abs, "utf8"));
    if (!isJsonObject(v) || v.version !== CATALOG_VERSION || !isJsonObject(v.logs)) return out;
    for (const [id, entry] of Object.entries(v.logs)) if (isCachedLog(entry)) out.set(id, entry);
  } catch {
    out.clear(); // unsafe, unreadable or corrupt: rebuilt from the Logs
  }
  return out;
}

function isCachedLog(v: unknown): v is CachedLog {
  return isJsonObject(v) && typeof v.size === "number" && typeof v.mtime_ms === "number" && isJsonObject(v.scan) && Array.isArray(v.scan.message_seqs);
}

function writeCache(ws: string, ids: readonly string[], logs: Map<string, CachedLog>): void {
  const entries: Record<string, CachedLog> = {};
  for (const id of ids) entries[id] = logs.get(id)!;
  const target = catalogPath(ws);
  try {
    ensureStateDir(indexDir(ws));
    placeComplete(tempSibling(target), target, JSON.stringify({ version: CATALOG_VERSION, logs: entries }), "rename");
  } catch {
    // A read-only or full Workspace still lists: the facts were computed in memory.
  }
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
