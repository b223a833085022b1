// claude-interop.md §3.7: a fork file (`/branch`, `forkSession`) shares its copied records with the
// Logs of its source session instead of storing them again. This module matches the copied records to
// their source records and describes each copy as the source record plus a patch, and back.
import { canonicalJson, isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { stampCopied } from "./export-fork.js";
import type { ClaudeRecord } from "./transcript.js";

/** Keys a fork may change in a copied record (§3.7 "equal as a JSON value once both drop …"). */
const FORK_KEYS = new Set([
  "uuid",
  "parentUuid",
  "logicalParentUuid",
  "sessionId",
  "isSidechain",
  "forkedFrom",
  "sessionKind",
  "neutralizedByFork",
  "teamName",
  "agentName",
  "slug",
  "sourceToolAssistantUUID",
  "timestamp",
  "cwd",
  "version",
  "gitBranch",
  "userType",
  "entrypoint",
]);

const comparable = (v: JsonObject): string => canonicalJson(Object.fromEntries(Object.entries(v).filter(([k]) => !FORK_KEYS.has(k))));

/** The Logs of a source session, as planned in this run or read from the Workspace. */
export interface ForkSource {
  sessionId: string;
  /** Each Log of the source session file: its id, resolved History, and its fork root. */
  logs: Map<string, { id: string; events: PixirEvent[]; forkRoot: string }>;
  /** Source records by uuid: the record, and the Log that holds it (copied records count for the root). */
  byUuid: Map<string, { value: JsonObject; logId: string; line: number }>;
}

export interface CopiedEntry {
  line: number;
  uuid: string;
  source_uuid: string;
  patch?: { set: JsonObject; unset: string[]; order?: string[] };
  raw_line?: string;
}

export interface SharedFork {
  source: string;
  /** The Log of the source the fork file hangs from, and the seq it is forked at. */
  parentId: string;
  forkRoot: string;
  parentEvents: PixirEvent[];
  forkedToSeq: number;
  messageUuid: string;
  copied: ClaudeRecord[];
  entries: CopiedEntry[];
}

/** Rebuild a copied record's line from its source record (§3.7, §5.2). */
export function rebuildCopied(entry: CopiedEntry, r: JsonObject, forkId: string, source: string, parent: string | null): string {
  if (typeof entry.raw_line === "string") return entry.raw_line;
  if (entry.patch === undefined) return JSON.stringify(stampCopied(r, forkId, source, parent));
  const out: JsonObject = { ...r };
  for (const k of entry.patch.unset) delete out[k];
  for (const [k, v] of Object.entries(entry.patch.set)) out[k] = v;
  if (entry.patch.order === undefined) return JSON.stringify(out);
  return JSON.stringify(Object.fromEntries(entry.patch.order.map((k) => [k, out[k]])));
}

/** The patch that turns r into c, checked by rebuilding (§3.7); raw_line when it cannot be expressed. */
function entryFor(c: ClaudeRecord, r: JsonObject, forkId: string, source: string, parent: string | null): CopiedEntry {
  const v = c.value!;
  const base: CopiedEntry = { line: c.line, uuid: c.uuid!, source_uuid: String(r.uuid) };
  if (!c.canonical) return { ...base, raw_line: c.text! };
  if (JSON.stringify(stampCopied(r, forkId, source, parent)) === c.text) return base;
  const set: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!(k in r) || JSON.stringify(r[k]) !== JSON.stringify(x)) set[k] = x;
  const unset = Object.keys(r).filter((k) => !(k in v));
  const entry: CopiedEntry = { ...base, patch: { set, unset } };
  if (rebuildCopied(entry, r, forkId, source, parent) !== c.text) entry.patch!.order = Object.keys(v);
  return rebuildCopied(entry, r, forkId, source, parent) === c.text ? entry : { ...base, raw_line: c.text! };
}

/** §3.7: the fork file shares its copied records with `source`, or null ("not shared"). */
export function matchForkFile(forkId: string, records: ClaudeRecord[], source: ForkSource): SharedFork | null {
  const s = source.sessionId;
  const copied = records.filter((r) => r.chain && isJsonObject(r.value?.forkedFrom) && r.value!.forkedFrom.sessionId === s);
  if (copied.length === 0) return null;
  const matched: Array<{ c: ClaudeRecord; r: { value: JsonObject; logId: string; line: number } }> = [];
  for (const c of copied) {
    const ff = c.value!.forkedFrom as JsonObject;
    const r = typeof ff.messageUuid === "string" ? source.byUuid.get(ff.messageUuid) : undefined;
    if (r === undefined || comparable(r.value) !== comparable(c.value!)) return null;
    matched.push({ c, r });
  }
  const last = matched.reduce((a, b) => (b.c.line > a.c.line ? b : a));
  const g = source.logs.get(last.r.logId);
  if (g === undefined) return null;
  // Every source record must be in G's resolved History; forked_to_seq is the last of their Events there.
  const lastSeq = new Map<string, number>();
  for (const e of g.events) {
    const c = e.data.claude;
    if (isJsonObject(c) && typeof c.uuid === "string" && e.seq !== null) lastSeq.set(c.uuid, e.seq);
  }
  let toSeq = 0;
  for (const { r } of matched) {
    const seq = lastSeq.get(String(r.value.uuid));
    if (seq === undefined) return null;
    toSeq = Math.max(toSeq, seq);
  }
  const entries: CopiedEntry[] = [];
  let parent: string | null = null;
  for (const { c, r } of matched.sort((a, b) => a.c.line - b.c.line)) {
    entries.push(entryFor(c, r.value, forkId, s, parent));
    if (c.type !== "progress") parent = c.uuid;
  }
  return {
    source: s,
    parentId: g.id,
    forkRoot: g.forkRoot,
    parentEvents: g.events,
    forkedToSeq: toSeq,
    messageUuid: String((last.c.value!.forkedFrom as JsonObject).messageUuid),
    copied: matched.map((m) => m.c),
    entries,
  };
}
