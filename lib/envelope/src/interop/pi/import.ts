// pi-interop.md §2–§3: `pixir import pi`. A pi file's tree becomes a fork family of Logs: the branch pi
// would resume is the primary Log, every other leaf a share_v1 child holding only the entries its branch
// adds. Everything is planned and checked before anything is written.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { sha256Hex } from "../../event/ids.js";
import path from "node:path";
import { isJsonObject, serializeEvent, type CanonicalType, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { SHARE_LIMITATIONS } from "../../fork/fork.js";
import { IdSet } from "../../event/id-set.js";
import { OpenCalls } from "../../fork/fork-plan.js";
import { derivedUlid } from "../../event/ids.js";
import { acquireLease, type WriterLease } from "../../store/lease.js";
import { inheritedItem, isInherited, PrefixDigest } from "../../store/loader.js";
import { createLogAtomically } from "../../store/log-write.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { PayloadWrites, writePayload } from "../../store/resources.js";
import { isValidSessionId } from "../../event/session-id.js";
import { entryToDrafts, type EventDraft } from "./entry-map.js";
import { invalidPiSession, loadPiEntry, openPiFile, parsePiFile, PiTree, type ParsedPiSession, type PiFileEntry, type PiOrphan, type PiVersion } from "./format.js";
import { ResourceCollector } from "./images.js";
import { PiSourceLines } from "./source-lines.js";
import { forEachPlannedLine, REMOVE_ACTIONS, type AgentImportOptions, type SourcePath, type WriteReport } from "../../session/agent-files.js";

export type PiForkKind = "pi_tree_branch" | "pi_tree_root";
export type PiImportStatus = "created" | "unchanged" | "would_create";

/** Entry types that change nothing a model sees: a branch of only these is `trivial`. */
const TRIVIAL_TYPES = new Set(["model_change", "thinking_level_change", "label", "session_info", "custom"]);
const MAX_BASE_BYTES = 200;
const EPOCH = "1970-01-01T00:00:00.000Z";
/** Files at least this large report progress (when stderr is a terminal). */
export const PI_PROGRESS_BYTES = 1024 * 1024;


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

/**
 * An Event of the plan without its data. A header holds its Event; an entry's Event has its data made
 * again from the entry whenever its line is hashed, inherited or written, so that the plan holds each
 * parsed entry once instead of beside every Event's data (issue 38: a 64 MiB file in ≤ 256 MiB).
 */
interface PlannedEvent {
  id: string;
  seq: number;
  ts: string;
  type: CanonicalType;
  /** The header carrier or session_fork, with its data; null for an entry's Event. */
  header: PixirEvent | null;
  own: OwnEvent | null;
}

/** An Event an entry maps to, for the Log whose Resources hold its images. */
interface OwnEvent {
  fe: PiFileEntry;
  /** Its place among the entry's drafts (entryToDrafts). */
  part: number;
  owner: PlannedPiLog;
  id: string;
  type: CanonicalType;
  /** Pairs put before data.pi once the family is planned: a branch summary's branch point, a compaction's range. */
  late: Array<[string, unknown]> | null;
}

const entryIdOf = (p: PlannedEvent): string | null => p.own?.fe.id ?? null;

/** One Log of a planned family. */
export interface PlannedPiLog {
  sessionId: string;
  role: "primary" | "branch";
  /** Its own entries, in path order. */
  entries: PiFileEntry[];
  leafEntryId: string | null;
  parent: PlannedPiLog | null;
  forkKind: PiForkKind | null;
  forkPointEntryId: string | null;
  trivial: boolean;
  /** The Events stored in the Log file, seq order. */
  stored: PlannedEvent[];
  /** The resolved History (fork.md §6), with the entry of each Event. */
  resolved: PlannedEvent[];
  /** Entry id → position on this Log's pi path (§2.3). */
  pathIndex: Map<string, number>;
  /** Seq of the last own Event of each own entry. */
  lastSeqOfEntry: Map<string, number>;
  resources: ResourceCollector;
  own: OwnEvent[];
  /** Makes its Events' data again (shared by the family). */
  maker: EventMaker;
  /** What the Log's bytes are known by until they are made again for the write. */
  digest: LogDigest;
}

/** A planned Log's size and SHA-256: its bytes are made twice (to plan, to write) rather than held. */
export interface LogDigest {
  size: number;
  sha256: string;
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

/** Makes the data of planned Events again; an entry's Events come one after another, so its drafts are kept until the next entry. */
class EventMaker {
  private fe: PiFileEntry | null = null;
  private owner: PlannedPiLog | null = null;
  private drafts: EventDraft[] = [];

  constructor(
    private readonly headerId: string,
    /** The whole entry of a PiFileEntry (parsed again from the file's bytes when the parse kept only its place). */
    private readonly load: (fe: PiFileEntry) => JsonObject,
    /** The error when the file read again is not the one planned (the Log made again differs from its digest). */
    readonly changed: () => PixirError,
  ) {}

  /** §2: the drafts of an entry, with the Resources of the Log it belongs to. */
  draftsOf(fe: PiFileEntry, owner: PlannedPiLog): EventDraft[] {
    if (fe !== this.fe || owner !== this.owner) {
      this.drafts = entryToDrafts({ ...fe, entry: this.load(fe) }, { images: owner.resources, messageId: (entryId) => piEventId(this.headerId, entryId, "msg", fe.entry.timestamp) });
      this.fe = fe;
      this.owner = owner;
    }
    return this.drafts;
  }

  draftOf(o: OwnEvent): EventDraft {
    return this.draftsOf(o.fe, o.owner)[o.part]!;
  }

  /** The Event as it is stored in (or resolved for) the Log `sessionId`. */
  event(p: PlannedEvent, sessionId: string): PixirEvent {
    if (p.header !== null) return p.header.session_id === sessionId ? p.header : { ...p.header, id: p.id, session_id: sessionId, seq: p.seq };
    const o = p.own!;
    const data = this.draftOf(o).data;
    return { id: p.id, session_id: sessionId, seq: p.seq, ts: p.ts, type: p.type, data: o.late === null ? data : beforePi(data, o.late) };
  }

  /** Drop the drafts held (the write makes them again). */
  clear(): void {
    this.fe = null;
    this.owner = null;
    this.drafts = [];
  }
}

/** §2.2 steps 2–4: which Log each entry lands in. */
function assignLogs(ws: string, tree: PiTree, base: string, maker: EventMaker): PlannedPiLog[] {
  const owner = new Map<string, PlannedPiLog>();
  const make = (sessionId: string, role: PlannedPiLog["role"], entries: PiFileEntry[], leaf: PiFileEntry | null): PlannedPiLog => ({
    sessionId,
    role,
    entries,
    leafEntryId: leaf?.id ?? null,
    parent: null,
    forkKind: null,
    forkPointEntryId: null,
    trivial: false,
    stored: [],
    resolved: [],
    pathIndex: new Map(),
    lastSeqOfEntry: new Map(),
    resources: new ResourceCollector(ws, sessionId),
    own: [],
    maker,
    digest: { size: 0, sha256: "" },
  });
  const primary = make(base, "primary", tree.defaultLeaf ? tree.path(tree.defaultLeaf) : [], tree.defaultLeaf);
  for (const e of primary.entries) owner.set(e.id, primary);
  const logs = [primary];
  for (const leaf of tree.leaves) {
    if (leaf === tree.defaultLeaf) continue;
    const walked: PiFileEntry[] = [];
    let e: PiFileEntry | null = leaf;
    while (e !== null && !owner.has(e.id)) {
      walked.push(e);
      e = tree.parentOf(e);
    }
    walked.reverse();
    const log = make(piBranchSessionId(base, leaf.id), "branch", walked, leaf);
    log.parent = e === null ? primary : owner.get(e.id)!;
    log.forkKind = e === null ? "pi_tree_root" : "pi_tree_branch";
    log.forkPointEntryId = e?.id ?? null;
    log.trivial = walked.every((w) => TRIVIAL_TYPES.has(w.type));
    for (const w of walked) owner.set(w.id, log);
    logs.push(log);
  }
  return logs;
}

/** Plan the whole family of one parsed pi file: every Event, every byte. Writes nothing. */
export function planPiFamily(
  ws: string,
  parsed: ParsedPiSession,
  file: string,
  load: (fe: PiFileEntry) => JsonObject = (fe) => fe.entry,
  changed: () => PixirError = () => invalidPiSession("unreadable_file", null, file),
): PlannedPiFamily {
  const tree = new PiTree(parsed.entries, file);
  const header = parsed.header;
  const headerId = header.id as string;
  const base = piBaseSessionId(headerId);
  const headerTs = tsOf(header.timestamp, EPOCH);
  const maker = new EventMaker(headerId, load, changed);
  const logs = assignLogs(ws, tree, base, maker);
  addOwnDrafts(logs, tree, headerId, maker);

  const carrier: PixirEvent = {
    id: derivedUlid(`pi:${headerId}:header`, header.timestamp),
    session_id: base,
    seq: 0,
    ts: headerTs,
    type: "workflow_event",
    data: {
      event: "pi_session_header",
      pi: {
        header,
        source_version: parsed.sourceVersion,
        file: path.basename(file),
        default_leaf_entry_id: tree.defaultLeaf?.id ?? null,
        orphans: tree.orphans,
      },
    },
  };
  for (const log of logs) {
    if (log.parent === null) {
      const p: PlannedEvent = { id: carrier.id!, seq: 0, ts: headerTs, type: carrier.type, header: carrier, own: null };
      log.stored.push(p);
      log.resolved.push(p);
    } else {
      addForkHeader(ws, log, log.parent, base, headerId, headerTs);
    }
    addOwnEvents(log, headerTs);
    log.digest = digestOf(log, file, parsed.headerLine);
  }
  for (const log of logs) dropPlanningState(log);
  maker.clear();
  return { file, headerId, baseSessionId: base, sourceVersion: parsed.sourceVersion, skippedLines: parsed.skippedLines, orphans: tree.orphans, logs };
}

/**
 * The ids of every own Event (they depend only on the entry, so cross references can be filled before seqs
 * exist), and §2 branch_summary: the Log holding the branch point and the last Event of the fromId entry.
 */
function addOwnDrafts(logs: PlannedPiLog[], tree: PiTree, headerId: string, maker: EventMaker): void {
  const ownerOf = new Map<string, PlannedPiLog>();
  const lastIdOfEntry = new Map<string, string>();
  for (const log of logs) {
    for (const fe of log.entries) {
      ownerOf.set(fe.id, log);
      maker.draftsOf(fe, log).forEach((draft, part) => {
        const id = piEventId(headerId, fe.id, draft.part, fe.entry.timestamp);
        log.own.push({ fe, part, owner: log, id, type: draft.type, late: null });
        lastIdOfEntry.set(fe.id, id);
      });
    }
  }
  for (const log of logs) {
    for (const o of log.own) {
      if (o.type !== "branch_summary") continue;
      const fromId = o.fe.entry.fromId;
      const point = typeof fromId === "string" ? tree.byId.get(fromId) : undefined;
      o.late = [
        ["parent_session_id", point ? ownerOf.get(point.id)!.sessionId : null],
        ["branch_point_event_id", point ? lastIdOfEntry.get(point.id)! : null],
      ];
    }
  }
}

/**
 * What only planning needs: the entries, their drafts, the resolved History a child's header is made
 * from, the path. Held until the write, they would keep every parsed entry alive beside its Events.
 */
function dropPlanningState(log: PlannedPiLog): void {
  log.entries = [];
  log.own = [];
  log.resolved = [];
  log.pathIndex = new Map();
  log.lastSeqOfEntry = new Map();
}

/** A Log's Events, made one at a time. */
function* eventsOf(log: PlannedPiLog, at?: (p: PlannedEvent) => void): Generator<PixirEvent> {
  for (const p of log.stored) {
    at?.(p);
    yield log.maker.event(p, log.sessionId);
  }
}

/** The digest of the Log's bytes (each line checked as plannedLogBytes checks it, naming its line of the file). */
function digestOf(log: PlannedPiLog, file: string, headerLine: number): LogDigest {
  const digest = new LineDigest();
  let current: PlannedEvent | null = null;
  const events = eventsOf(log, (p) => (current = p));
  forEachPlannedLine(events, file, () => current?.own?.fe.lineNo ?? headerLine, (line) => digest.add(line));
  return digest.result();
}

/** The size and SHA-256 of lines as they go by. */
class LineDigest {
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

const sameDigest = (a: LogDigest, b: LogDigest): boolean => a.size === b.size && a.sha256 === b.sha256;

/** §3.2 step 1: no Log on disk, one with the planned bytes, or one with other content (read a block at a time). */
function diskMatch(ws: string, sessionId: string, digest: LogDigest): "absent" | "same" | "other" {
  const p = logPath(ws, sessionId);
  if (inspectStatePath(p) === "missing") return "absent";
  const fd = openSync(p.abs, "r");
  try {
    if (fstatSync(fd).size !== digest.size) return "other";
    const hash = createHash("sha256");
    const block = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, block, 0, block.length, null)) > 0; ) hash.update(block.subarray(0, n));
    return hash.digest("hex") === digest.sha256 ? "same" : "other";
  } finally {
    closeSync(fd);
  }
}

/** §2.2 step 3 and fork.md §4.3: the share_v1 header, and the resolved prefix it stands for. */
function addForkHeader(ws: string, log: PlannedPiLog, parent: PlannedPiLog, base: string, headerId: string, headerTs: string): void {
  const toSeq = log.forkPointEntryId === null ? 0 : parent.lastSeqOfEntry.get(log.forkPointEntryId)!;
  const inherited = parent.resolved.filter((r) => isInherited(r, toSeq));
  const first = log.entries[0]!;
  const ts = tsOf(first.entry.timestamp, headerTs);
  const headerEventId = derivedUlid(`pi:${headerId}:fork:${log.leafEntryId}`, ts);
  const digest = new PrefixDigest();
  const open = new OpenCalls(new IdSet());
  const resolved: PlannedEvent[] = [];
  inherited.forEach((r, i) => {
    const event = parent.maker.event(r, parent.sessionId);
    digest.add(event);
    open.add(event);
    const child = inheritedItem({ event }, headerEventId, log.sessionId, i + 1).event;
    resolved.push({ ...r, id: child.id!, seq: child.seq! });
  });
  const header: PixirEvent = {
    id: headerEventId,
    session_id: log.sessionId,
    seq: 0,
    ts,
    type: "session_fork",
    data: {
      parent_session_id: parent.sessionId,
      fork_root_session_id: base,
      forked_to_seq: toSeq,
      parent_workspace: ws,
      child_workspace: ws,
      replay_event_count: inherited.length,
      from_seq: inherited[0]?.seq ?? null,
      strategy: "share_v1",
      limitations: SHARE_LIMITATIONS,
      prefix_digest: digest.digest(),
      open_tool_calls: open.list(),
      pi: {
        fork_kind: log.forkKind,
        fork_point_entry_id: log.forkPointEntryId,
        leaf_entry_id: log.leafEntryId,
        header_id: isValidSessionId(headerId) ? headerId : null,
        ...(log.trivial ? { trivial: true } : {}),
      },
    },
  };
  const p: PlannedEvent = { id: header.id!, seq: 0, ts, type: header.type, header, own: null };
  log.stored.push(p);
  log.resolved.push(p, ...resolved);
  // The pi path of a child: its parent's, cut just after the fork point, then its own entries.
  const cut = log.forkPointEntryId === null ? -1 : parent.pathIndex.get(log.forkPointEntryId)!;
  for (const [id, i] of parent.pathIndex) if (i <= cut) log.pathIndex.set(id, i);
}

/** §2.1 seqs in path order, and §2.3 compaction ranges over the resolved History. */
function addOwnEvents(log: PlannedPiLog, headerTs: string): void {
  let seq = log.resolved.length;
  let pos = log.pathIndex.size;
  for (const fe of log.entries) log.pathIndex.set(fe.id, pos++);
  for (const o of log.own) {
    if (o.type === "history_compaction") o.late = compactionRange(log, o, seq);
    const event: PlannedEvent = { id: o.id, seq, ts: tsOf(o.fe.entry.timestamp, headerTs), type: o.type, header: null, own: o };
    log.stored.push(event);
    log.resolved.push(event);
    log.lastSeqOfEntry.set(o.fe.id, seq);
    seq++;
  }
}

/** §2.3: the first Event kept by a pi compaction, and the range the context fold hides. */
function compactionRange(log: PlannedPiLog, o: OwnEvent, seq: number): Array<[string, unknown]> {
  const pi = log.maker.draftOf(o).data.pi as JsonObject;
  const own = log.pathIndex.get(o.fe.id)!;
  const keptId = pi.first_kept_entry_id;
  const keptAt = typeof keptId === "string" ? log.pathIndex.get(keptId) : undefined;
  let firstKept: PlannedEvent | undefined;
  if (keptAt !== undefined && keptAt < own) {
    firstKept = log.resolved.find((r) => entryIdOf(r) !== null && log.pathIndex.get(entryIdOf(r)!)! >= keptAt);
  }
  const toSeq = firstKept ? firstKept.seq - 1 : seq - 1;
  return [
    ["range", { from_seq: 0, to_seq: toSeq }],
    ["source_event_count", toSeq + 1],
    ["first_kept_event_id", firstKept?.id ?? null],
  ];
}

// ---------------------------------------------------------------------------------------------------
// §3: the command.

export interface PiImportOptions extends Omit<AgentImportOptions, "paths"> {
  files: SourcePath[];
  /** Progress lines for large files; the caller passes it only when stderr is a terminal. */
  progress?: (text: string) => void;
}

export interface PiImportSessionReport {
  session_id: string;
  role: "primary" | "branch";
  leaf_entry_id: string | null;
  parent_session_id: string | null;
  event_count: number;
  status: PiImportStatus;
  trivial: boolean;
}

export interface PiImportFileReport {
  file: string;
  header_id: string | null;
  source_version: number;
  sessions: PiImportSessionReport[];
  orphans: PiOrphan[];
  skipped_lines: number;
}

export interface PiImportResult extends WriteReport {
  imports: PiImportFileReport[];
  /** Not printed: line numbers skipped per file, for warnings. */
  skipped?: Array<{ file: string; lines: number[] }>;
}

/**
 * Read and parse one file a block at a time, keeping of each entry only its place and the keys the plan
 * reads; each entry is read and parsed again from the file when its Events are made.
 */
function readAndParse(f: SourcePath, options: PiImportOptions): { parsed: ParsedPiSession; source: PiSourceLines; big: PiImportOptions["progress"] } {
  const { fd, size, ino } = openPiFile(f.path, f.display);
  try {
    const big = size >= PI_PROGRESS_BYTES ? options.progress : undefined;
    big?.(`${path.basename(f.display)}: read ${size} bytes`);
    const parsed = parsePiFile(fd, { file: f.display, lenient: options.lenient, placesOnly: true });
    big?.(`${path.basename(f.display)}: parsed ${parsed.entries.length} entries`);
    const changed = () => invalidPiSession("unreadable_file", null, f.display, { changed_while_importing: true });
    return { parsed, source: new PiSourceLines(f.path, ino, size, changed), big };
  } finally {
    closeSync(fd);
  }
}

/** One file planned; what it parsed is garbage when this returns (no frame of the caller holds it). */
function planFile(ws: string, f: SourcePath, options: PiImportOptions): PlannedPiFamily {
  const { parsed, source, big } = readAndParse(f, options);
  const load = (fe: PiFileEntry): JsonObject => {
    let entry: JsonObject;
    try {
      entry = loadPiEntry((offset, length) => source.line(offset, length), fe, parsed.sourceVersion);
    } catch (err) {
      throw err instanceof PixirError ? err : source.changed();
    }
    // The line read again is the entry parsed, or the file changed in place.
    if (!isJsonObject(entry) || entry.type !== fe.type || entry.id !== fe.id || entry.parentId !== fe.entry.parentId) throw source.changed();
    return entry;
  };
  const family = planPiFamily(ws, parsed, f.display, load, source.changed);
  big?.(`${path.basename(f.display)}: planned ${family.logs.length} logs`);
  return family;
}

export async function importPiFiles(ws: string, options: PiImportOptions): Promise<PiImportResult> {
  const families: PlannedPiFamily[] = [];
  for (const f of options.files) {
    families.push(planFile(ws, f, options));
  }

  // The same Log planned twice (one file given twice) is written once, and reported as created once:
  // the later mentions are `unchanged`, which is what they find. Two different plans conflict.
  const planned = new Map<string, PlannedPiLog>();
  const status = new Map<string, PiImportStatus>();
  const conflicts: Array<{ session_id: string; log_path: string; file: string }> = [];
  for (const family of families) {
    for (const log of family.logs) {
      const seen = planned.get(log.sessionId);
      if (seen !== undefined) {
        if (!sameDigest(seen.digest, log.digest)) conflicts.push({ session_id: log.sessionId, log_path: logPath(ws, log.sessionId).rel, file: family.file });
        continue;
      }
      planned.set(log.sessionId, log);
      // §3.2 step 1: a Log on disk is the same as planned, or a conflict.
      const disk = diskMatch(ws, log.sessionId, log.digest);
      if (disk === "other") conflicts.push({ session_id: log.sessionId, log_path: logPath(ws, log.sessionId).rel, file: family.file });
      else status.set(log.sessionId, disk === "same" ? "unchanged" : options.dryRun ? "would_create" : "created");
    }
  }
  if (conflicts.length > 0) {
    // The refusal names the pi file whose Log differs, not only the Log.
    throw new PixirError("already_exists", "a Log this pi session gives exists already, with other content", {
      session_id: conflicts[0]!.session_id,
      log_path: conflicts[0]!.log_path,
      file: conflicts[0]!.file,
      conflicts,
      next_actions: REMOVE_ACTIONS,
    });
  }

  const toCreate = [...planned.values()].filter((l) => status.get(l.sessionId) === "created");
  if (!options.dryRun && toCreate.length > 0) await writeFamilies(ws, toCreate, options);

  return {
    ok: true,
    recorded: !options.dryRun && toCreate.length > 0,
    dry_run: Boolean(options.dryRun),
    imports: families.map((family) => ({
      file: family.file,
      header_id: isValidSessionId(family.headerId) ? family.headerId : null,
      source_version: family.sourceVersion,
      sessions: family.logs.map((log) => ({
        session_id: log.sessionId,
        role: log.role,
        leaf_entry_id: log.leafEntryId,
        parent_session_id: log.parent?.sessionId ?? null,
        event_count: log.stored.length,
        status: planned.get(log.sessionId) === log ? status.get(log.sessionId)! : "unchanged",
        trivial: log.trivial,
      })),
      orphans: family.orphans,
      skipped_lines: family.skippedLines.length,
    })),
    skipped: families.filter((f) => f.skippedLines.length > 0).map((f) => ({ file: f.file, lines: f.skippedLines })),
  };
}

/**
 * §3.2 step 2: take every new Log's lease, write the resources and all temp files, then rename the Logs,
 * parents before children. Each createLogAtomically runs the next one just before its own rename, so
 * the chain is built from the last child inwards and the primary (innermost) is renamed first.
 */
async function writeFamilies(ws: string, logs: PlannedPiLog[], options: PiImportOptions): Promise<void> {
  const leases: WriterLease[] = [];
  let wrote = false;
  const payloads = new PayloadWrites();
  let committed = 0;
  try {
    for (const log of logs) leases.push(await acquireLease(ws, log.sessionId, { program: options.program, env: options.env, signal: options.signal }));
    for (const log of logs) {
      for (const [, payload] of log.resources.payloads) {
        writePayload(payload.path, payload.bytes, payload.ref.sha256, payloads);
      }
    }
    const reversed = logs.map((log, i) => ({ log, lease: leases[i]! })).reverse();
    const create = async (i: number): Promise<void> => {
      const item = reversed[i];
      if (item === undefined) return;
      await createLogAtomically(
        ws,
        item.log.sessionId,
        async (emit) => {
          // The lines are made again from the file: they must be the ones planned (and compared with the disk).
          const digest = new LineDigest();
          for (const event of eventsOf(item.log)) {
            const line = serializeEvent(event);
            digest.add(line);
            emit(line);
          }
          if (!sameDigest(digest.result(), item.log.digest)) throw item.log.maker.changed();
        },
        { lease: item.lease, signal: options.signal },
        () => create(i + 1),
      );
      committed++;
    };
    await create(0);
    wrote = true;
  } finally {
    if (committed === 0) payloads.undo(); // no Log appeared: neither do their resources
    // Last taken, first released: the first lease made the state directories the others sit in.
    for (const lease of leases.reverse()) lease.release(!wrote);
  }
}

