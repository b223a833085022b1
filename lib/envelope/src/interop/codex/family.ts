// codex-interop.md §3: the Logs of a rollout (a family), planned in memory. A Log holds its stored
// Events and its resolved History; the Events a run adds are those after `diskCount`.
import { readdirSync } from "node:fs";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { plannedShareHeader, REPLAY_LIMITATIONS, type LadderedLog } from "../../fork/fork.js";
import type { DigestLadder } from "../../store/digest-ladder.js";
import { derivedUlid } from "../../event/ids.js";
import { inheritedItem, isInherited, MAX_FORK_DEPTH, OpenedHistories, type History } from "../../store/loader.js";
import { inspectStatePath, logPath, sessionsDir } from "../../store/paths.js";
import { codexBaseId, withTimestamp, restAfterTimestamp } from "./format.js";
import { sha256Hex } from "../../event/ids.js";
import { codexOf, eventsByLine, lineOf, rebuildLine } from "./rebuild.js";
import { carriesItem } from "./line-map.js";
import { checkpointToSeqOf } from "../../session/context.js";
import { LineSeqs } from "./columns.js";

export type CodexLogRole = "root" | "fork" | "rollback";

/** A Log's Events in seq order: an array, or a lean plan's columns read as Events (lean-events.ts). */
export interface EventList extends Iterable<PixirEvent> {
  readonly length: number;
  /** The Event at `i` (from the end when negative). */
  at(i: number): PixirEvent | undefined;
  push(e: PixirEvent): unknown;
}

export interface PlannedLog {
  sessionId: string;
  role: CodexLogRole;
  parentId: string | null;
  forkedToSeq: number | null;
  /** The Events of the Log file, in seq order. */
  stored: EventList;
  /** The resolved History (fork.md §6): Event i has seq i. */
  resolved: EventList;
  replayEventCount: number;
  /** How many of `stored` are already on disk. */
  diskCount: number;
  /** Own line n → the seq of its last Event here. */
  lineSeq: LineSeqs;
  forkRoot: string;
  /** The prefix digests of `resolved`, made when a child is first cut from this Log. */
  digests?: DigestLadder;
  /** A plan that holds each Event's facts only (lean-plan.ts): every Event of this Log goes through it. */
  keeper?: EventKeeper;
}

/**
 * What a plan that holds only each Event's facts does with the Events as they are made (lean-plan.ts): it
 * keeps what planning reads of an Event and puts its line elsewhere, and digests a prefix a rollback cuts
 * without the inherited Events' data.
 */
export interface EventKeeper {
  /** The Event to hold for `e`, just made at the end of `log`'s History. */
  keep(log: PlannedLog, e: PixirEvent): PixirEvent;
  /** plannedShareHeader's twin: the share header data of `child`, cut from `parent` at `toSeq` (`inherited`: the seqs it inherits). */
  shareHeader(ws: string, parent: PlannedLog, child: PlannedLog, toSeq: number, inherited: Int32Array): JsonObject;
  /** The empty lists of a new Log whose Events go through this keeper (a replay_v1 child stores its prefix). */
  lists(sessionId: string, replay: boolean): { stored: EventList; resolved: EventList };
  /** fork.md §3.1 step 8: `child`'s History (its header in) continues with `parent`'s Events at seqs `inherited`, renumbered. */
  inherit(parent: PlannedLog, child: PlannedLog, inherited: Int32Array, headerId: string): void;
}

export interface CodexFork {
  sourceThread: string;
  copied: number;
  timestamps: Array<[string, number]>;
  sha256: string;
}

export interface Family {
  threadId: string;
  baseId: string;
  /** Root first, then the rollback children in the order they were made. */
  logs: PlannedLog[];
  fork: CodexFork | null;
  /** Line 1's record. */
  lineOne: JsonObject;
  fromDisk: boolean;
}

export function newLog(sessionId: string, role: CodexLogRole, forkRoot: string): PlannedLog {
  return { sessionId, role, parentId: null, forkedToSeq: null, stored: [], resolved: [], replayEventCount: 0, diskCount: 0, lineSeq: new LineSeqs(), forkRoot };
}

/** `log`'s Events go through `keeper` (its lists are the keeper's), when one is given. */
export function keepWith(log: PlannedLog, keeper: EventKeeper | undefined, replay = false): void {
  log.keeper = keeper;
  if (keeper !== undefined) Object.assign(log, keeper.lists(log.sessionId, replay));
}

/** Put an Event at the end of a Log (its seq is the next one of the resolved History). */
export function pushEvent(log: PlannedLog, e: Omit<PixirEvent, "seq" | "session_id">): PixirEvent {
  const made: PixirEvent = { id: e.id, session_id: log.sessionId, seq: log.resolved.length, ts: e.ts, type: e.type, data: e.data };
  const event = log.keeper === undefined ? made : log.keeper.keep(log, made);
  log.resolved.push(event);
  log.stored.push(event);
  const n = lineOf(event);
  if (n !== null) log.lineSeq.set(n, event.seq!);
  return event;
}

/** A Log's header and own Events (§3.7): not the copies a materialized child holds of its parent's. */
export const ownEvents = (log: PlannedLog): PixirEvent[] => Array.from(log.stored).filter((e) => log.replayEventCount === 0 || e.seq === 0 || e.seq! > log.replayEventCount);

/** The greatest line a family holds: own lines, and a fork's copied lines (§4.5). */
export function familyMaxLine(f: Family): number {
  let max = f.fork === null ? 1 : f.fork.copied + 1;
  for (const log of f.logs) for (const n of log.lineSeq.keys()) if (n > max) max = n;
  return max;
}

/** §3.7: the leaf, the Log that owns the family's greatest line. */
export function familyLeaf(f: Family): PlannedLog {
  let best = f.logs[0]!;
  let max = -1;
  for (const log of f.logs) for (const n of log.lineSeq.keys()) if (n > max) [max, best] = [n, log];
  return best;
}

/** The last Event ts of a Log, for a line whose timestamp is not usable (§2.6). */
export const lastTs = (log: PlannedLog, fallback: string): string => log.stored.at(-1)?.ts ?? fallback;

/**
 * §3.3 "Codex history of a Log": the seqs of the Events of its resolved History that carry an item, after
 * its latest checkpoint chosen as the fold chooses it (context-and-compaction.md §1.1 steps 2–3: the
 * greatest seq, the first on a tie, well formed or not; without an integer `range.to_seq` no Event with a
 * seq follows it). Seqs, not Events: a lean plan makes an Event as it is read (lean-events.ts).
 */
export function codexHistory(resolved: EventList): Int32Array {
  let latest: PixirEvent | null = null;
  for (const e of resolved) if (e.type === "history_compaction" && (latest === null || (e.seq ?? -1) > (latest.seq ?? -1))) latest = e;
  const to = latest === null ? null : checkpointToSeqOf(latest);
  return seqsOf(resolved, (e) => carriesItem(e.data) && (latest === null || (to !== null && e.seq !== null && e.seq > to)));
}

/** fork.md §3.1 step 6: the seqs of the Events of `resolved` a fork through `toSeq` inherits. */
const inheritedOf = (resolved: EventList, toSeq: number): Int32Array => seqsOf(resolved, (e) => isInherited(e, toSeq));

/** The seqs of the Events of `resolved` that `keep` keeps, in one typed array: a History may hold 10⁵ Events. */
function seqsOf(resolved: EventList, keep: (e: PixirEvent) => boolean): Int32Array {
  const out = new Int32Array(resolved.length);
  let n = 0;
  for (const e of resolved) if (keep(e)) out[n++] = e.seq!;
  return out.subarray(0, n);
}

/** The Events of `log` at `seqs`. */
const eventsAt = (log: PlannedLog, seqs: Int32Array): PixirEvent[] => Array.from(seqs, (s) => log.resolved.at(s)!);

/**
 * §3.4: the checkpoint a share child of `parent` at `toSeq` carries: the one with the greatest seq (the first
 * on a tie) among those at or before the cut. A checkpoint this importer carried into `parent` sits after
 * the whole inherited prefix but stands for the range it covers, so it rides along when the cut falls after
 * that range: a second rollback inside the inherited turns then keeps the compaction, as Codex's history
 * does (§3.4: "the child's fold then hides what L's fold hid").
 */
function carriedCheckpoint(parent: PlannedLog, toSeq: number): PixirEvent | null {
  let cp: PixirEvent | null = null;
  for (const e of parent.resolved) {
    if (e.type !== "history_compaction" || e.seq === null) continue;
    const to = checkpointToSeqOf(e);
    const eligible = e.seq <= toSeq || (codexOf(e)?.synthetic === "carried_checkpoint" && to !== null && to < toSeq);
    if (eligible && (cp === null || e.seq > cp.seq!)) cp = e;
  }
  return cp;
}

/**
 * fork.md §3.1 steps 6–8 and §4.3 on `parent` at `toSeq`, plus the carried checkpoint of §3.4: the child's
 * header (built by `header`) and resolved prefix.
 */
export function shareChild(ws: string, parent: PlannedLog, child: PlannedLog, toSeq: number, header: (data: JsonObject) => Omit<PixirEvent, "seq" | "session_id">, replay = false): void {
  const inherited = inheritedOf(parent.resolved, toSeq);
  const copied = parent.keeper === undefined ? eventsAt(parent, inherited) : null;
  const shared = copied !== null ? plannedShareHeader(ws, laddered(parent), laddered(child), parent.forkRoot, toSeq, copied) : parent.keeper!.shareHeader(ws, parent, child, toSeq, inherited);
  keepWith(child, parent.keeper, replay);
  // replay_v1 (MAX_IMPORT_SHARE_HOPS): the same header and History, the prefix stored as materialize stores it.
  const h = header(replay ? { ...shared, strategy: "replay_v1", limitations: REPLAY_LIMITATIONS } : shared);
  const event: PixirEvent = { ...h, session_id: child.sessionId, seq: 0 };
  child.parentId = parent.sessionId;
  child.forkedToSeq = toSeq;
  child.replayEventCount = inherited.length;
  child.resolved.push(event);
  child.stored.push(event);
  if (lineOf(event) === 1) child.lineSeq.set(1, 0);
  if (copied === null) child.keeper!.inherit(parent, child, inherited, event.id!);
  else
    copied.forEach((e, i) => {
      const copy = inheritedItem({ event: e }, event.id!, child.sessionId, i + 1).event;
      child.resolved.push(copy);
      if (replay) child.stored.push(copy);
    });
  // §3.4: the parent's latest checkpoint at or before the cut rides along, renumbered.
  const cp = carriedCheckpoint(parent, toSeq);
  if (cp === null) return;
  const data2: JsonObject = { ...cp.data };
  const range = isJsonObject(cp.data.range) ? cp.data.range : null;
  if (range !== null && typeof range.to_seq === "number" && Number.isInteger(range.to_seq)) {
    const to = range.to_seq;
    const count = inherited.filter((seq) => seq <= to).length;
    data2.range = { ...range, from_seq: 0, to_seq: count };
    data2.source_event_count = count + 1;
  }
  data2.codex = { synthetic: "carried_checkpoint", from_session_id: parent.sessionId, from_event_id: cp.id };
  const codexThread = codexOf(event)?.thread;
  pushEvent(child, {
    id: derivedUlid(`codex:${String(codexThread)}:carried:${child.sessionId}`, event.ts),
    ts: event.ts,
    type: "history_compaction",
    data: data2,
  });
}

/** A Log the plain planner plans holds its History as an array, which plannedShareHeader's ladder reads. */
function laddered(log: PlannedLog): LadderedLog {
  if (!Array.isArray(log.resolved)) throw new Error("a Log of a lean plan has no History array");
  return log as unknown as LadderedLog;
}

const isShareChild = (log: PlannedLog): boolean => log.stored.at(0)?.type === "session_fork" && log.stored.at(0)!.data.strategy === "share_v1";

/**
 * The Log of the family that owns seq `toSeq` of `log`'s History, and that seq there: a seq in a share
 * child's inherited prefix is its parent's (the same Events, so a child forked there has the same History).
 */
export function prefixOwner(logs: readonly PlannedLog[], log: PlannedLog, toSeq: number): { log: PlannedLog; toSeq: number } {
  let at = { log, toSeq };
  for (;;) {
    const l = at.log;
    const parent = isShareChild(l) && at.toSeq <= l.replayEventCount ? logs.find((p) => p.sessionId === l.parentId) : undefined;
    if (parent === undefined) return at;
    const inherited = at.toSeq === 0 ? new Int32Array(0) : inheritedOf(parent.resolved, l.forkedToSeq ?? 0);
    at = { log: parent, toSeq: at.toSeq === 0 ? 0 : inherited[at.toSeq - 1]! };
  }
}

/** Share hops from `log` up its family (a fork root's hops into its source thread are not counted). */
export function familyShareHops(logs: readonly PlannedLog[], log: PlannedLog): number {
  let hops = 0;
  for (let l: PlannedLog | undefined = log; l !== undefined && isShareChild(l) && hops <= MAX_FORK_DEPTH; l = logs.find((p) => p.sessionId === l!.parentId)) hops++;
  return hops;
}

// ---------------------------------------------------------------------------------------------------
// Reading families from the Workspace (§3.7).

/** The root Log's first Event is line 1 of thread `t`. */
export function isLineOneOf(e: PixirEvent | undefined, t: string): boolean {
  const c = e === undefined ? null : codexOf(e);
  return c !== null && c.synthetic === undefined && c.line === 1 && c.thread === t;
}

/** Opens the resolved History of a Log of the family (loader.ts). */
export type OpenLog = (id: string) => Promise<History>;

async function loadLog(openLog: OpenLog, id: string, role: CodexLogRole): Promise<PlannedLog> {
  const history = await openLog(id);
  const resolved: PixirEvent[] = [];
  for await (const item of history.items()) resolved.push(item.event);
  const header = resolved[0];
  const share = history.share;
  const log = newLog(id, role, id);
  log.resolved = resolved;
  // §3.7: a family Log's own lines are those with seq > replay_event_count, for a share_v1 child and for
  // one that pixir-log materialize turned into replay_v1 (its copies of the parent's lines are not its own).
  const rec = header?.type === "session_fork" ? header.data.replay_event_count : undefined;
  if (header !== undefined && typeof rec === "number" && Number.isInteger(rec)) {
    log.parentId = typeof header.data.parent_session_id === "string" ? header.data.parent_session_id : null;
    log.forkedToSeq = typeof header.data.forked_to_seq === "number" ? header.data.forked_to_seq : (share?.forkedToSeq ?? null);
    log.replayEventCount = rec;
    log.stored = share !== null ? resolved.filter((e) => e.seq === 0 || e.seq! > rec) : [...resolved];
    const root = header.data.fork_root_session_id;
    log.forkRoot = typeof root === "string" && root !== "" ? root : (log.parentId ?? id);
  } else log.stored = [...resolved];
  log.diskCount = log.stored.length;
  for (const e of log.stored) {
    const n = lineOf(e);
    if (n !== null && (e.seq === 0 || e.seq! > log.replayEventCount)) log.lineSeq.set(n, e.seq!);
  }
  return log;
}

/** The session ids of a family's Log files: its root and the `<root>.rollback-<n>` Logs beside it. */
export function familyLogIds(ws: string, baseId: string): string[] {
  const prefix = `${baseId}.rollback-`;
  let names: string[];
  try {
    names = readdirSync(sessionsDir(ws).abs);
  } catch {
    return [];
  }
  const ids = names.filter((n) => n.endsWith(".ndjson")).map((n) => n.slice(0, -".ndjson".length));
  return ids.filter((id) => id === baseId || id.startsWith(prefix));
}

export type DiskFamily = { kind: "family"; family: Family } | { kind: "absent" } | { kind: "foreign" };

/**
 * Read thread `t`'s family from the Workspace: its root and its rollback children. Each Log is opened and
 * checked once, a child against its parent's History already read (loader.ts OpenedHistories): the
 * family's Events are all held here anyway, so they are kept for the children. `openLog` opens
 * one Log (a test passes openHistory, each Log on its own, to compare).
 */
export async function loadFamily(ws: string, t: string, openLog?: OpenLog): Promise<DiskFamily> {
  const base = codexBaseId(t);
  if (inspectStatePath(logPath(ws, base)) === "missing") return { kind: "absent" };
  if (openLog === undefined) {
    const histories = new OpenedHistories(ws, { keepEvents: true });
    openLog = (id) => histories.open(id);
  }
  const root = await loadLog(openLog, base, "root");
  const first = root.stored.at(0);
  if (!isLineOneOf(first, t)) return { kind: "foreign" };
  const codex = codexOf(first!)!;
  const forkInfo = isJsonObject(codex.fork) ? codex.fork : null;
  if (root.replayEventCount > 0 || first!.type === "session_fork") root.role = "fork";
  const family: Family = {
    threadId: t,
    baseId: base,
    logs: [root],
    fork:
      forkInfo === null
        ? null
        : {
            sourceThread: String(forkInfo.source_thread),
            copied: Number(forkInfo.copied_lines),
            timestamps: forkInfo.copied_timestamps as Array<[string, number]>,
            sha256: String(forkInfo.copied_sha256),
          },
    lineOne: codex.record as JsonObject,
    fromDisk: true,
  };
  // Rollback children are named <root>.rollback-<n>; their headers say whose they are.
  const children: Array<{ n: number; log: PlannedLog }> = [];
  for (const id of familyLogIds(ws, base)) {
    if (id === base) continue;
    const log = await loadLog(openLog, id, "rollback");
    const first = log.stored.at(0);
    const c = first ? codexOf(first) : null;
    if (c === null || c.synthetic !== "rollback_fork" || c.thread !== t) continue;
    children.push({ n: Number(c.line), log });
  }
  children.sort((a, b) => a.n - b.n);
  for (const c of children) family.logs.push(c.log);
  return { kind: "family", family };
}

/** §3.7 `owner(t, j)`: the Log holding line j of thread t and the seq of its last Event there. */
export function ownerOf(families: (t: string) => Family | undefined, t: string, j: number, depth = 0): { log: PlannedLog; seq: number } {
  const f = families(t);
  if (f === undefined) throw new PixirError("fork_parent_missing", undefined, { session_id: codexBaseId(t), depth });
  if (depth > MAX_FORK_DEPTH) throw new PixirError("fork_depth_exceeded", undefined, { session_id: f.baseId, max_depth: MAX_FORK_DEPTH });
  if (f.fork !== null && j >= 2 && j <= f.fork.copied + 1) return ownerOf(families, f.fork.sourceThread, j - 1, depth + 1);
  for (const log of f.logs) {
    const seq = log.lineSeq.get(j);
    if (seq !== undefined) return { log, seq };
  }
  throw new PixirError("fork_parent_missing", undefined, { session_id: f.baseId, line: j });
}

/**
 * §3.7 `rolloutLines(t)`: the rollout of thread t, line by line (index 0 is line 1); null marks a line
 * skipped by --lenient, undefined a line no family Log holds (a removed Log). The copied lines of a fork
 * come from its source, checked against copied_sha256.
 */
export function rolloutLines(families: (t: string) => Family | undefined, t: string, depth = 0): Array<string | null | undefined> {
  const f = families(t);
  if (f === undefined) throw new PixirError("fork_parent_missing", undefined, { session_id: codexBaseId(t), depth });
  if (depth > MAX_FORK_DEPTH) throw new PixirError("fork_depth_exceeded", undefined, { session_id: f.baseId, max_depth: MAX_FORK_DEPTH });
  const byLine = new Map<number, PixirEvent[]>();
  for (const log of f.logs) eventsByLine(ownEvents(log), byLine);
  const max = familyMaxLine(f);
  const out: Array<string | null | undefined> = [];
  for (let n = 1; n <= max; n++) out.push(byLine.has(n) ? rebuildLine(byLine.get(n)!) : undefined);
  if (f.fork !== null) {
    const source = rolloutLines(families, f.fork.sourceThread, depth + 1);
    const hash: string[] = [];
    let j = 0;
    for (const [ts, count] of f.fork.timestamps) {
      for (let i = 0; i < count; i++, j++) {
        const s = source[j];
        const rest = s === null || s === undefined ? null : restAfterTimestamp(s);
        if (rest === null) throw new PixirError("fork_prefix_mismatch", undefined, { session_id: f.baseId, parent_session_id: codexBaseId(f.fork.sourceThread) });
        out[j + 1] = withTimestamp(ts, rest.rest);
        hash.push(`${rest.rest}\n`);
      }
    }
    if (j !== f.fork.copied || sha256Hex(hash.join("")) !== f.fork.sha256) {
      throw new PixirError("fork_prefix_mismatch", undefined, { session_id: f.baseId, parent_session_id: codexBaseId(f.fork.sourceThread) });
    }
  }
  return out;
}
