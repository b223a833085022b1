// archive.md §3: the model calls of every Log, kept in a derived file, .pixir/index/usage.json, keyed by
// the Log's size, mtime and agent. A Log whose key changed (or the whole file when missing, corrupt or of
// another version) is read again; the Logs stay the truth. A read-only Workspace still counts: the calls
// are then computed in memory.
import { lstatSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { isJsonObject, type PixirEvent } from "../event/envelope.js";
import { STATE_DIR, StatePath, ensureStateDir, inspectStatePath, logPath, placeComplete, tempSibling } from "../store/paths.js";
import { lineBlocks } from "../store/log-read.js";
import type { LogListing } from "../store/ls.js";
import { ModelCallCounter, type AgentName, type ModelCall } from "./model-calls.js";
import { decodeUsageIndex, encodeUsageIndex, indexedCall, type IndexedLog } from "./usage-columns.js";
import type { CountedCall } from "./usage.js";

/** Bumped whenever ModelCall, a counting rule or the stored columns change: an older file is then rebuilt whole. */
export const USAGE_INDEX_VERSION = 2;
const READ_CONCURRENCY = 4;
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
 */
export async function readModelCalls(
  workspace: string,
  logs: readonly UsageLog[],
  progress?: (text: string) => void,
  listed?: Pick<LogListing, "sizes" | "mtimes">,
): Promise<Map<string, CountedCall[]>> {
  const cached = readIndex(workspace);
  const fresh = new Map<string, IndexedLog>();
  const todo: Array<{ log: UsageLog; size: number; mtime: number }> = [];
  for (const log of logs) {
    const st = listedKey(listed, log.session_id) ?? statOf(workspace, log.session_id);
    const hit = cached.get(log.session_id);
    if (hit !== undefined && st !== null && hit.size === st.size && hit.mtime_ms === st.mtime && hit.agent === log.agent) fresh.set(log.session_id, hit);
    else todo.push({ log, size: st?.size ?? 0, mtime: st?.mtime ?? 0 });
  }
  let done = 0;
  await inParallel(todo, READ_CONCURRENCY, async ({ log, size, mtime }) => {
    const calls = await callsOfLog(logPath(workspace, log.session_id).abs, size, log.agent);
    fresh.set(log.session_id, { size, mtime_ms: mtime, agent: log.agent, calls: calls.map((c) => indexedCall(log.session_id, c)) });
    if (++done % PROGRESS_EVERY === 0 || done === todo.length) progress?.(`counted the model calls of ${done} of ${todo.length} changed Logs`);
  });
  // In the order given (the Logs read again finish in any order), so the same Logs give the same file.
  const inOrder = new Map(logs.map((l) => [l.session_id, fresh.get(l.session_id)!]));
  if (todo.length > 0 || cached.size !== logs.length) writeIndex(workspace, inOrder);
  return new Map([...inOrder].map(([id, entry]) => [id, entry.calls]));
}

/** Only lines that can hold a call are parsed: a provider_usage, or (Claude) a record with usage. */
const USAGE_EVENT = Buffer.from('"type":"provider_usage"');
const USAGE_KEY = Buffer.from('"usage"');

/** The calls of one Log's first `size` bytes, one line at a time (memory holds the calls, not the Log). */
async function callsOfLog(abs: string, size: number, agent: AgentName): Promise<ModelCall[]> {
  const counter = new ModelCallCounter(agent);
  const marker = agent === "claude" ? USAGE_KEY : USAGE_EVENT;
  let file;
  try {
    file = await open(abs, "r");
  } catch {
    return []; // a Log that cannot be read has no countable calls; `pixir-log check` names the problem
  }
  try {
    for await (const block of lineBlocks(file, size)) {
      const b = block.bytes;
      for (let s = 0; s < block.end; ) {
        let e = b.indexOf(0x0a, s);
        if (e < 0 || e > block.end) e = block.end;
        const at = b.indexOf(marker, s);
        if (at >= 0 && at < e) pushLine(counter, b.toString("utf8", s, e));
        s = e + 1;
      }
    }
  } catch {
    // A Log cut short while read: its calls so far are counted.
  } finally {
    await file.close();
  }
  return counter.calls();
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

function readIndex(ws: string): Map<string, IndexedLog> {
  try {
    if (inspectStatePath(usageIndexPath(ws)) === "missing") return new Map();
    const v: unknown = JSON.parse(readFileSync(usageIndexPath(ws).abs, "utf8"));
    if (!isJsonObject(v) || v.version !== USAGE_INDEX_VERSION) return new Map();
    return decodeUsageIndex(v);
  } catch {
    return new Map(); // unsafe, unreadable or corrupt: rebuilt from the Logs
  }
}

function writeIndex(ws: string, logs: Map<string, IndexedLog>): void {
  const target = usageIndexPath(ws);
  try {
    ensureStateDir(target.parent());
    placeComplete(tempSibling(target), target, JSON.stringify(encodeUsageIndex(USAGE_INDEX_VERSION, logs)), "rename");
  } catch {
    // A read-only or full Workspace still counts: the calls were computed in memory.
  }
}

async function inParallel<T>(items: readonly T[], width: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await job(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
