// pi-interop.md §2–§3.2 step 1: the plan of one pi file's fork family, every Log of it made (as its size and
// SHA-256) before anything is written. The plan is small beside the file: an entry is a place in its
// PiEntryTable, a Log its own entries' places, and an Event is made again from its entry's line whenever it
// is hashed, inherited or written (docs/performance.md "Round 10: import pi within the bound").
import { createHash } from "node:crypto";
import path from "node:path";
import { sha256Hex, derivedUlid } from "../../event/ids.js";
import { isReplayType, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import type { PixirError } from "../../event/errors.js";
import { SHARE_LIMITATIONS } from "../../fork/fork.js";
import { IdSet } from "../../event/id-set.js";
import { OpenCalls } from "../../fork/fork-plan.js";
import { inheritedItem, PrefixDigest } from "../../store/loader.js";
import { isValidSessionId } from "../../event/session-id.js";
import { forEachPlannedLine } from "../../session/agent-files.js";
import { entryToDrafts, type EventDraft } from "./entry-map.js";
import type { PiOrphan, PiVersion } from "./format.js";
import { PiEntryTree, type PiEntryTable } from "./entry-table.js";
import { ResourceCollector } from "./images.js";

export type PiForkKind = "pi_tree_branch" | "pi_tree_root";

/** Entry types that change nothing a model sees: a branch of only these is `trivial`. */
const TRIVIAL_TYPES = new Set(["model_change", "thinking_level_change", "label", "session_info", "custom"]);
const MAX_BASE_BYTES = 200;
const EPOCH = "1970-01-01T00:00:00.000Z";
/** In a resolved History: the header carrier (seq 0 of the primary, inherited by every child), a child's own session_fork. */
const CARRIER = -1;
const FORK_HEADER = -2;

/** §2.2 step 1: the header id, or a hash of it when it cannot name a Log. */
export function piBaseSessionId(headerId: string): string {
  return isValidSessionId(headerId) && Buffer.byteLength(headerId, "utf8") <= MAX_BASE_BYTES ? headerId : `pi-${sha256Hex(headerId).slice(0, 32)}`;
}

/** §2.2 step 3: `<base>.<leaf id>`, or a hash of the leaf id when that is not a valid session id. */
export function piBranchSessionId(base: string, leafId: string): string {
  const plain = `${base}.${leafId}`;
  return isValidSessionId(plain) ? plain : `${base}.${sha256Hex(leafId).slice(0, 16)}`;
}

/** §2.1: the derived id of an imported Event. */
export function piEventId(headerId: string, entryId: string, part: string | null, ts: unknown): string {
  return derivedUlid(`pi:${headerId}:${entryId}${part === null ? "" : `#${part}`}`, ts);
}

/** A planned Log's size and SHA-256: its bytes are made twice (to plan, to write) rather than held. */
export interface LogDigest {
  size: number;
  sha256: string;
}

/** One Log of a planned family. */
export interface PlannedPiLog {
  sessionId: string;
  role: "primary" | "branch";
  leafEntryId: string | null;
  parent: PlannedPiLog | null;
  forkKind: PiForkKind | null;
  /** The entry it forks after (its place in the table), or -1. */
  forkPoint: number;
  trivial: boolean;
  /** Its own entries (places in the table), in path order. */
  own: Int32Array;
  /** Its Event of seq 0: the header carrier, or its share_v1 session_fork. */
  header: PixirEvent;
  /** The seq of its first own Event: what its header stands for comes before. */
  firstOwnSeq: number;
  /** The Events stored in the Log file. */
  eventCount: number;
  /** Pairs put before data.pi of an own Event, by its seq: a branch summary's branch point, a compaction's range. */
  late: Map<number, Array<[string, unknown]>>;
  resources: ResourceCollector;
  /** Makes its Events again (shared by the family). */
  maker: EventMaker;
  digest: LogDigest;
}

export interface PlannedPiFamily {
  file: string;
  headerId: string;
  baseSessionId: string;
  sourceVersion: PiVersion;
  /** Line numbers skipped by --lenient. */
  skippedLines: number[];
  orphans: PiOrphan[];
  logs: PlannedPiLog[];
}

const tsOf = (value: unknown, fallback: string): string => (typeof value === "string" ? value : fallback);

/** Put `pairs` into `data` just before its `pi` key (which stays last). */
function beforePi(data: JsonObject, pairs: Array<[string, unknown]>): JsonObject {
  const { pi, ...rest } = data;
  return { ...rest, ...Object.fromEntries(pairs), pi };
}

/** An entry read again, with its drafts. */
interface MadeEntry {
  at: number;
  /** Its id (made once: the table makes it again on each ask). */
  id: string;
  entry: JsonObject;
  drafts: EventDraft[];
}

/** Makes an entry's Events again from its line; the entries come one after another, so the last one is kept. */
export class EventMaker {
  private last: MadeEntry | null = null;
  /** Each entry's Log (its place in `logs`), for the Resources that hold its images. */
  readonly owner: Int32Array;
  logs: PlannedPiLog[] = [];

  constructor(
    readonly table: PiEntryTable,
    readonly headerId: string,
    readonly headerTs: string,
    /** The entry read again from the file (and checked to be the one parsed). */
    private readonly load: (at: number) => JsonObject,
    /** The error when the file read again is not the one planned (the Log made again differs from its digest). */
    readonly changed: () => PixirError,
  ) {
    this.owner = new Int32Array(table.size).fill(-1);
  }

  /** §2: the entry at `at` and its drafts, with the Resources of the Log it belongs to. */
  made(at: number): MadeEntry {
    if (this.last?.at === at) return this.last;
    const t = this.table;
    const entry = this.load(at);
    const id = t.id(at);
    const fe = { entry, lineNo: t.lineNo(at), id, type: t.type(at), index: at, originalRole: t.originalRole(at) };
    const messageId = (entryId: string) => piEventId(this.headerId, entryId, "msg", entry.timestamp);
    const drafts = entryToDrafts(fe, { images: this.logs[this.owner[at]!]!.resources, messageId });
    this.last = { at, id, entry, drafts };
    return this.last;
  }

  /** The id an own Event of the entry has. */
  ownId(m: MadeEntry, part: number): string {
    return piEventId(this.headerId, m.id, m.drafts[part]!.part, m.entry.timestamp);
  }

  /** An own Event of `log`, as it is stored. */
  ownEvent(log: PlannedPiLog, m: MadeEntry, part: number, seq: number): PixirEvent {
    const draft = m.drafts[part]!;
    const late = log.late.get(seq);
    const data = late === undefined ? draft.data : beforePi(draft.data, late);
    return { id: this.ownId(m, part), session_id: log.sessionId, seq, ts: tsOf(m.entry.timestamp, this.headerTs), type: draft.type, data };
  }

  /** Drop the entry held. */
  clear(): void {
    this.last = null;
  }
}

/** (entry, draft) places of Events: what a child inherits of its parent's resolved History. */
interface Places {
  entry: number[];
  part: number[];
}

/**
 * What only planning needs: what each child inherits (fork.md §6), as places, and each entry's last seq in
 * its Log. A Log's resolved History is its header, what it inherits, then its own entries' Events, whose
 * seqs are known from the last seqs (they rise along its own entries): nothing per own Event is kept.
 */
interface Planning {
  inherited: Map<PlannedPiLog, Places>;
  lastSeq: Int32Array;
  tree: PiEntryTree;
  file: string;
  base: string;
  ws: string;
  carrier: PixirEvent;
}

/** §2.2 steps 2–4: which Log each entry lands in (parents before children). */
function assignLogs(ws: string, t: PiEntryTable, tree: PiEntryTree, base: string, maker: EventMaker, carrier: PixirEvent): PlannedPiLog[] {
  const owner = maker.owner;
  const logs: PlannedPiLog[] = [];
  const make = (sessionId: string, role: PlannedPiLog["role"], own: Int32Array, leaf: number): PlannedPiLog => {
    const log: PlannedPiLog = {
      sessionId,
      role,
      leafEntryId: leaf === -1 ? null : t.id(leaf),
      parent: null,
      forkKind: null,
      forkPoint: -1,
      trivial: false,
      own,
      // A child's session_fork replaces it once its parent is planned.
      header: carrier,
      firstOwnSeq: 1,
      eventCount: 0,
      late: new Map(),
      resources: new ResourceCollector(ws, sessionId),
      maker,
      digest: { size: 0, sha256: "" },
    };
    for (const e of own) owner[e] = logs.length;
    logs.push(log);
    return log;
  };
  const primary = make(base, "primary", tree.defaultLeaf === -1 ? new Int32Array(0) : tree.path(tree.defaultLeaf), tree.defaultLeaf);
  for (const leaf of tree.leaves) {
    if (leaf === tree.defaultLeaf) continue;
    const walked: number[] = [];
    let e = leaf;
    while (e !== -1 && owner[e] === -1) {
      walked.push(e);
      e = tree.parent(e);
    }
    const log = make(piBranchSessionId(base, t.id(leaf)), "branch", Int32Array.from(walked.reverse()), leaf);
    log.parent = e === -1 ? primary : logs[owner[e]!]!;
    log.forkKind = e === -1 ? "pi_tree_root" : "pi_tree_branch";
    log.forkPoint = e;
    log.trivial = walked.every((w) => TRIVIAL_TYPES.has(t.type(w)));
  }
  return logs;
}

/** The header carrier: the pi header as the primary Log's Event of seq 0 (§2.2). */
function carrierOf(t: PiEntryTable, tree: PiEntryTree, base: string, file: string, headerTs: string): PixirEvent {
  const header = t.header;
  return {
    id: derivedUlid(`pi:${header.id as string}:header`, header.timestamp),
    session_id: base,
    seq: 0,
    ts: headerTs,
    type: "workflow_event",
    data: {
      event: "pi_session_header",
      pi: {
        header,
        source_version: t.sourceVersion,
        file: path.basename(file),
        default_leaf_entry_id: tree.defaultLeaf === -1 ? null : t.id(tree.defaultLeaf),
        orphans: tree.orphans,
      },
    },
  };
}

/** Plan the whole family of one pi file: every Event, every byte (as a digest). Writes nothing. */
export function planPiFamily(ws: string, t: PiEntryTable, file: string, load: (at: number) => JsonObject, changed: () => PixirError): PlannedPiFamily {
  const tree = new PiEntryTree(t, file);
  const headerId = t.header.id as string;
  const base = piBaseSessionId(headerId);
  const headerTs = tsOf(t.header.timestamp, EPOCH);
  const maker = new EventMaker(t, headerId, headerTs, load, changed);
  const carrier = carrierOf(t, tree, base, file, headerTs);
  const logs = assignLogs(ws, t, tree, base, maker, carrier);
  maker.logs = logs;
  const planning: Planning = { inherited: new Map(), lastSeq: new Int32Array(t.size), tree, file, base, ws, carrier };
  for (const log of logs) {
    const inherited: Places = { entry: [], part: [] };
    planning.inherited.set(log, inherited);
    if (log.parent !== null) addForkHeader(log, log.parent, planning, inherited);
    log.firstOwnSeq = inherited.entry.length + 1;
    log.digest = digestOf(log, t, planning);
  }
  maker.clear();
  return { file, headerId, baseSessionId: base, sourceVersion: t.sourceVersion, skippedLines: t.skippedLines, orphans: tree.orphans, logs };
}

/**
 * A Log's stored Events, made one at a time: its header, then its own entries' Events. While planning,
 * each own Event's seq is noted as its entry's last, and it is given its late pairs.
 */
function* eventsOf(log: PlannedPiLog, at?: (line: number) => void, planning?: Planning): Generator<PixirEvent> {
  const maker = log.maker;
  at?.(maker.table.headerLine);
  yield log.header;
  let seq = log.firstOwnSeq;
  for (let j = 0; j < log.own.length; j++) {
    const e = log.own[j]!;
    at?.(maker.table.lineNo(e));
    const count = maker.made(e).drafts.length;
    for (let part = 0; part < count; part++, seq++) {
      if (planning !== undefined) planOwnEvent(log, j, part, seq, planning);
      yield maker.ownEvent(log, maker.made(e), part, seq);
    }
  }
  log.eventCount = seq - log.firstOwnSeq + 1;
}

/** An own Event while planning (of its `j`th own entry): the pairs it gets once the family is known, its entry's last seq. */
function planOwnEvent(log: PlannedPiLog, j: number, part: number, seq: number, planning: Planning): void {
  const e = log.own[j]!;
  const type = log.maker.made(e).drafts[part]!.type;
  if (type === "history_compaction") log.late.set(seq, compactionRange(log, j, part, seq, planning));
  else if (type === "branch_summary") log.late.set(seq, branchPoint(log, e));
  planning.lastSeq[e] = seq;
}

/** The digest of the Log's bytes (each line checked as plannedLogBytes checks it, naming its line of the file). */
function digestOf(log: PlannedPiLog, t: PiEntryTable, planning: Planning): LogDigest {
  const digest = new LineDigest();
  let line = t.headerLine;
  forEachPlannedLine(eventsOf(log, (l) => (line = l), planning), planning.file, () => line, (text) => digest.add(text));
  return digest.result();
}

/** The lines of a planned Log made again for its write. */
export function* plannedEvents(log: PlannedPiLog): Generator<PixirEvent> {
  yield* eventsOf(log);
}

/** The size and SHA-256 of lines as they go by. */
export class LineDigest {
  private readonly hash = createHash("sha256");
  private size = 0;
  add(line: string): void {
    this.hash.update(line, "utf8");
    this.size += Buffer.byteLength(line, "utf8");
  }
  result(): LogDigest {
    return { size: this.size, sha256: this.hash.digest("hex") };
  }
}

export const sameDigest = (a: LogDigest, b: LogDigest): boolean => a.size === b.size && a.sha256 === b.sha256;

/** §2 branch_summary: the Log holding the branch point and the last Event of its fromId entry. */
function branchPoint(log: PlannedPiLog, e: number): Array<[string, unknown]> {
  const maker = log.maker;
  const fromId = maker.made(e).entry.fromId;
  const point = typeof fromId === "string" ? maker.table.rowOf(fromId) : undefined;
  if (point === undefined) return [["parent_session_id", null], ["branch_point_event_id", null]];
  const m = maker.made(point);
  return [
    ["parent_session_id", maker.logs[maker.owner[point]!]!.sessionId],
    ["branch_point_event_id", maker.ownId(m, m.drafts.length - 1)],
  ];
}

/** The Event at `r` of a Log's resolved History, with its data (as its parent made it: no late pairs, which only uninherited types get). */
function resolvedEvent(log: PlannedPiLog, r: number, planning: Planning): Pick<PixirEvent, "type" | "ts" | "data"> {
  const [e, part] = resolvedAt(log, r, planning);
  if (e === CARRIER) return planning.carrier;
  if (e === FORK_HEADER) return log.header;
  const m = log.maker.made(e);
  const draft = m.drafts[part]!;
  return { type: draft.type, ts: tsOf(m.entry.timestamp, log.maker.headerTs), data: draft.data };
}

/** §2.2 step 3 and fork.md §4.3: the share_v1 header, and the resolved prefix it stands for. */
function addForkHeader(log: PlannedPiLog, parent: PlannedPiLog, planning: Planning, inherited: Places): void {
  const maker = log.maker;
  const headerId = maker.headerId;
  const toSeq = log.forkPoint === -1 ? 0 : planning.lastSeq[log.forkPoint]!;
  const ts = tsOf(maker.made(log.own[0]!).entry.timestamp, maker.headerTs);
  const headerEventId = derivedUlid(`pi:${headerId}:fork:${log.leafEntryId}`, ts);
  const digest = new PrefixDigest();
  const open = new OpenCalls(new IdSet());
  let firstSeq: number | null = null;
  for (let r = 0; r <= toSeq; r++) {
    const event = resolvedEvent(parent, r, planning);
    if (!isReplayType(event.type)) continue;
    firstSeq ??= r;
    digest.add(event as PixirEvent);
    open.add(event as PixirEvent);
    const [e, part] = resolvedAt(parent, r, planning);
    inherited.entry.push(e);
    inherited.part.push(part);
  }
  log.header = {
    id: headerEventId,
    session_id: log.sessionId,
    seq: 0,
    ts,
    type: "session_fork",
    data: {
      parent_session_id: parent.sessionId,
      fork_root_session_id: planning.base,
      forked_to_seq: toSeq,
      parent_workspace: planning.ws,
      child_workspace: planning.ws,
      replay_event_count: inherited.entry.length,
      from_seq: firstSeq,
      strategy: "share_v1",
      limitations: SHARE_LIMITATIONS,
      prefix_digest: digest.digest(),
      open_tool_calls: open.list(),
      pi: {
        fork_kind: log.forkKind,
        fork_point_entry_id: log.forkPoint === -1 ? null : maker.table.id(log.forkPoint),
        leaf_entry_id: log.leafEntryId,
        header_id: isValidSessionId(headerId) ? headerId : null,
        ...(log.trivial ? { trivial: true } : {}),
      },
    },
  };
}

/** §2.3: the first Event kept by a pi compaction (of the `j`th own entry), and the range the context fold hides. */
function compactionRange(log: PlannedPiLog, j: number, part: number, seq: number, planning: Planning): Array<[string, unknown]> {
  const maker = log.maker;
  const e = log.own[j]!;
  const pi = maker.made(e).drafts[part]!.data.pi as JsonObject;
  const keptId = pi.first_kept_entry_id;
  const kept = typeof keptId === "string" ? maker.table.rowOf(keptId) : undefined;
  let firstKept: number | null = null;
  if (kept !== undefined && planning.tree.isAncestor(kept, e)) firstKept = firstAtDepth(log, j, planning.tree.depth[kept]!, planning);
  const toSeq = firstKept !== null ? firstKept - 1 : seq - 1;
  return [
    ["range", { from_seq: 0, to_seq: toSeq }],
    ["source_event_count", toSeq + 1],
    ["first_kept_event_id", firstKept === null ? null : resolvedId(log, firstKept, planning, j)],
  ];
}

/** The seq of the first Event of the resolved History, before the `j`th own entry, whose entry lies at `depth` or deeper on the path. */
function firstAtDepth(log: PlannedPiLog, j: number, depth: number, planning: Planning): number | null {
  const deep = (e: number) => e >= 0 && planning.tree.depth[e]! >= depth;
  const inherited = planning.inherited.get(log)!.entry;
  for (let k = 0; k < inherited.length; k++) if (deep(inherited[k]!)) return k + 1;
  for (let i = 0; i < j; i++) if (deep(log.own[i]!)) return firstSeqOf(log, i, planning);
  return null;
}

/** The seq of the first Event of the `j`th own entry of a Log. */
const firstSeqOf = (log: PlannedPiLog, j: number, planning: Planning): number => (j === 0 ? log.firstOwnSeq : planning.lastSeq[log.own[j - 1]!]! + 1);

/** The (entry, draft) place of the Event of seq `r` in a Log's resolved History, among its first `planned` own entries. */
function resolvedAt(log: PlannedPiLog, r: number, planning: Planning, planned = log.own.length): [number, number] {
  if (r === 0) return [log.parent === null ? CARRIER : FORK_HEADER, 0];
  if (r < log.firstOwnSeq) {
    const inherited = planning.inherited.get(log)!;
    return [inherited.entry[r - 1]!, inherited.part[r - 1]!];
  }
  // The own entry whose Events hold seq r: the first whose last seq reaches it.
  let lo = 0;
  let hi = planned - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (planning.lastSeq[log.own[mid]!]! >= r) hi = mid;
    else lo = mid + 1;
  }
  return [log.own[lo]!, r - firstSeqOf(log, lo, planning)];
}

/** The id of the Event of seq `r` of a Log's resolved History (before its `planned`th own entry): inherited, or its own. */
function resolvedId(log: PlannedPiLog, r: number, planning: Planning, planned: number): string {
  const [e, part] = resolvedAt(log, r, planning, planned);
  if (r >= log.firstOwnSeq) return log.maker.ownId(log.maker.made(e), part);
  const event = { ...(resolvedEvent(log, r, planning) as PixirEvent), seq: r };
  return inheritedItem({ event }, log.header.id!, log.sessionId, r).event.id!;
}
