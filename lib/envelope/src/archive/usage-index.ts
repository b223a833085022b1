// archive.md §3: the model calls of every Log, kept in a derived file, .pixir/index/usage.json, keyed by
// the Log's size, mtime and agent. A Log whose key changed (or the whole file when missing, corrupt or of
// another version) is read again; the Logs stay the truth. A read-only Workspace still counts: the calls
// are then computed in memory.
import { closeSync, lstatSync, openSync, readFileSync, readSync } from "node:fs";
import { fsPromises } from "../event/lazy-builtins.js";
import { isJsonObject, type PixirEvent } from "../event/envelope.js";
import { STATE_DIR, StatePath, ensureStateDir, inspectStatePath, logPath, placeComplete, tempSibling } from "../store/paths.js";
import { lineBlocks } from "../store/log-read.js";
import type { LogListing } from "../store/ls.js";
import { ModelCallCounter, type AgentName, type ModelCall } from "./model-calls.js";
import { ScanBuffer } from "./log-facts.js";
import { CallTable, indexedCall, type LogRows } from "./usage-columns.js";

/** Bumped whenever ModelCall, a counting rule or the stored columns change: an older file is then rebuilt whole. */
export const USAGE_INDEX_VERSION = 2;
const PROGRESS_EVERY = 100;

const usageIndexPath = (ws: string) => new StatePath(ws, [STATE_DIR, "index"], "directory").child("usage.json", "file");

/** What the index needs to know of a Log: whose format its Events are. */
export interface UsageLog {
  session_id: string;
  agent: AgentName;
}

/**
 * The model calls of each Log, from the index where the Log is unchanged; `progress` hears of the Logs read
 * again. `listed`: the Logs' sizes and mtimes already read (readCatalogListed), instead of an lstat each.
 * The table names exactly `logs`, in their order.
 */
export async function readModelCalls(
  workspace: string,
  logs: readonly UsageLog[],
  progress?: (text: string) => void,
  listed?: Pick<LogListing, "sizes" | "mtimes">,
): Promise<CallTable> {
  const table = readIndex(workspace);
  const cachedLogs = table.logs.size;
  const named = new Map<string, LogRows | null>();
  const todo: Array<{ log: UsageLog; size: number; mtime_ms: number }> = [];
  for (const log of logs) {
    const st = listedKey(listed, log.session_id) ?? statOf(workspace, log.session_id);
    const hit = table.rowsOf(log.session_id);
    const fresh = hit !== undefined && st !== null && hit.size === st.size && hit.mtime_ms === st.mtime && hit.agent === log.agent;
    named.set(log.session_id, fresh ? hit : null);
    if (!fresh) todo.push({ log, size: st?.size ?? 0, mtime_ms: st?.mtime ?? 0 });
  }
  // One Log at a time, each read whole into one reused buffer (as the catalog's scan): buffers of up to
  // 2 MiB for each Log, four Logs at a time, were 28–34 MB of a first run's peak and grew with the archive.
  const scratch = new ScanBuffer();
  let done = 0;
  for (const { log, size, mtime_ms } of todo) {
    const calls = await callsOfLog(logPath(workspace, log.session_id).abs, size, log.agent, scratch);
    named.set(log.session_id, table.add(log.session_id, { size, mtime_ms, agent: log.agent }, calls.map((c) => indexedCall(log.session_id, c))));
    if (++done % PROGRESS_EVERY === 0 || done === todo.length) progress?.(`counted the model calls of ${done} of ${todo.length} changed Logs`);
  }
  table.logs = named as Map<string, LogRows>;
  if (todo.length > 0 || cachedLogs !== logs.length) writeIndex(workspace, table);
  return table;
}

/** Only lines that can hold a call are parsed: a provider_usage, or (Claude) a record with usage. */
const USAGE_EVENT = Buffer.from('"type":"provider_usage"');
const USAGE_KEY = Buffer.from('"usage"');
/** Logs up to this size are read whole into the reused buffer; a larger one a block at a time. */
const WHOLE_READ_MAX = 16 * 1024 * 1024;

/** The calls of one Log's first `size` bytes (memory holds the calls, not the Log). */
async function callsOfLog(abs: string, size: number, agent: AgentName, scratch: ScanBuffer): Promise<ModelCall[]> {
  const counter = new ModelCallCounter(agent);
  const marker = agent === "claude" ? USAGE_KEY : USAGE_EVENT;
  try {
    if (size <= WHOLE_READ_MAX) {
      const end = readWhole(abs, size, scratch);
      pushLines(counter, marker, scratch.bytes, end);
      return counter.calls();
    }
    const file = await fsPromises().open(abs, "r");
    try {
      for await (const block of lineBlocks(file, size)) pushLines(counter, marker, block.bytes, block.end);
    } finally {
      await file.close();
    }
  } catch {
    // A Log that cannot be read, or is cut short while read, has the calls read so far; `pixir-log check`
    // names the problem.
  }
  return counter.calls();
}

/** Up to `size` bytes of the file into `scratch` (grown to fit); how many were read. Throws when it cannot be opened. */
function readWhole(abs: string, size: number, scratch: ScanBuffer): number {
  if (scratch.bytes.length < size) scratch.bytes = Buffer.allocUnsafe(size);
  const fd = openSync(abs, "r");
  let have = 0;
  try {
    for (let n = -1; have < size && n !== 0; have += n) n = readSync(fd, scratch.bytes, have, size - have, have);
  } catch {
    // Cut short while read: the lines read so far count.
  } finally {
    closeSync(fd);
  }
  return have;
}

/**
 * Each line of `bytes[0, end)` that holds `marker`, parsed and counted. The marker is searched for again
 * only once a line has passed the last one found: a search from every line to the end of a whole Log
 * with few calls would cost the square of its lines.
 */
function pushLines(counter: ModelCallCounter, marker: Buffer, bytes: Buffer, end: number): void {
  const b = bytes.subarray(0, end);
  let at = -2;
  for (let s = 0; s < end; ) {
    let e = b.indexOf(0x0a, s);
    if (e < 0) e = end;
    if (at !== -1 && at < s) at = b.indexOf(marker, s);
    if (at !== -1 && at < e) pushLine(counter, b.toString("utf8", s, e));
    s = e + 1;
  }
}

function pushLine(counter: ModelCallCounter, line: string): void {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return; // a corrupt line holds no call
  }
  if (!isJsonObject(v) || typeof v.type !== "string" || !isJsonObject(v.data)) return;
  counter.push({
    id: typeof v.id === "string" ? v.id : null,
    session_id: typeof v.session_id === "string" ? v.session_id : null,
    seq: typeof v.seq === "number" ? v.seq : null,
    ts: typeof v.ts === "string" ? v.ts : null,
    type: v.type as PixirEvent["type"],
    data: v.data,
  });
}

/** A Log's size and mtime as the catalog's listing saw them (one lstat per Log for both), when it was given. */
function listedKey(listed: Pick<LogListing, "sizes" | "mtimes"> | undefined, id: string): { size: number; mtime: number } | null {
  const size = listed?.sizes.get(id);
  const mtime = listed?.mtimes.get(id);
  return size === undefined || mtime === undefined ? null : { size, mtime };
}

function statOf(ws: string, id: string): { size: number; mtime: number } | null {
  try {
    const st = lstatSync(logPath(ws, id).abs);
    return { size: st.size, mtime: st.mtimeMs };
  } catch {
    return null;
  }
}

function readIndex(ws: string): CallTable {
  try {
    if (inspectStatePath(usageIndexPath(ws)) === "missing") return new CallTable();
    const v: unknown = JSON.parse(readFileSync(usageIndexPath(ws).abs, "utf8"));
    if (!isJsonObject(v) || v.version !== USAGE_INDEX_VERSION) return new CallTable();
    return CallTable.decode(v);
  } catch {
    return new CallTable(); // unsafe, unreadable or corrupt: rebuilt from the Logs
  }
}

function writeIndex(ws: string, table: CallTable): void {
  const target = usageIndexPath(ws);
  try {
    ensureStateDir(target.parent());
    placeComplete(tempSibling(target), target, table.encode(USAGE_INDEX_VERSION), "rename");
  } catch {
    // A read-only or full Workspace still counts: the calls were computed in memory.
  }
}
