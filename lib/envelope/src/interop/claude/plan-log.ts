// claude-interop.md §3.4: a Log of an import batch as it is planned (its records, path, History), the
// batch's input, and the refusals (§4.3) planning can meet. Shared by the planning steps (plan-*.ts).
import { isIsoUtc, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { logPath } from "../../store/paths.js";
import type { SourceFile } from "./discover.js";
import type { ForkSource } from "./fork-file.js";
import { eventFacts } from "./held-event.js";
import { RecordMap, RecordSet } from "./record-columns.js";
import type { ClaudeRecord, ReadFile } from "./transcript.js";

export type LogRole = "primary" | "branch" | "root_branch" | "fork_session" | "subagent" | "inline_subagent";
const EPOCH = "1970-01-01T00:00:00.000Z";
const CLAUDE_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A Log of a source file's family, as planned. */
export interface LogPlan {
  id: string;
  role: LogRole;
  parent: LogPlan | null;
  /** The transcript (0 main, k inline group) whose records it holds. */
  transcript: number;
  existed: boolean;
  /** Its resolved History, Events already on disk first. */
  events: PixirEvent[];
  /** Events on disk before this batch (a prefix of `events`). */
  diskEvents: number;
  /** Index in `events` of its first own Event (after a share header and the inherited prefix). */
  ownStart: number;
  /** §3.3: the Claude path (inherited and own path records). */
  path: ClaudeRecord[];
  /** Records placed on it by this batch. */
  placed: ClaudeRecord[];
  /** Those of them placed on its path (a bit per record, not an object per placed record). */
  placedOnPath: RecordSet;
  /** Seq of the last own Event of each record it holds. */
  lastSeq: RecordMap<number>;
  forkPoint: ClaudeRecord | null;
  forkedToSeq: number | null;
  /** share_v1 hops from this Log to a self-contained one (0: it holds its whole History). */
  shareHops: number;
  /** The Events of this batch, to write (for a new Log: every stored Event). */
  batch: PixirEvent[];
}

export interface SubagentTarget {
  rootId: string | null;
  /** parentUuids of its records (compaction transcripts, §3.6 case 3); read when first asked. */
  parentUuids(): Set<string>;
  compaction: boolean;
}

export interface BatchInput {
  ws: string;
  src: SourceFile;
  read: ReadFile;
  /** SHA-256 of the imported prefix. */
  sha256: string;
  /** The family's Logs on disk, parents before children; empty on a first import. */
  existing: ExistingLog[];
  /** Subagent transcripts of the unit by agentId (session files only). */
  subagents: Map<string, SubagentTarget>;
  /** A subagent Log `<base>.agent-<agentId>` exists in the Workspace. */
  agentLogExists(agentId: string): boolean;
  /** §3.7: the Logs of the source session of a fork file, when they are in the run or the Workspace. */
  forkSource?: ForkSource | null;
  /** Lines covered by the last checkpoint's digest (K). */
  verifiedLines: number;
  /** child_session_ids named by subagent_events already in the unit's Logs. */
  linkedChildren: Set<string>;
  /** Subagent root Logs of the unit (session files only), by subagent_id. */
  unitChildren: Map<string, string>;
}

export interface ExistingLog {
  id: string;
  first: PixirEvent;
  events: PixirEvent[];
  replayCount: number;
  /** share_v1 hops from it to a self-contained Log (the loader's count). */
  shareHops: number;
}

export const newLog = (id: string, role: LogRole, parent: LogPlan | null, transcript: number): LogPlan => ({
  id,
  role,
  parent,
  transcript,
  existed: false,
  events: [],
  diskEvents: 0,
  ownStart: 0,
  path: [],
  placed: [],
  placedOnPath: new RecordSet(),
  lastSeq: new RecordMap(),
  forkPoint: null,
  forkedToSeq: null,
  shareHops: 0,
  batch: [],
});

export function push(log: LogPlan, e: PixirEvent): void {
  log.events.push(e);
  if (log.batch !== log.events) log.batch.push(e);
}

/**
 * A new Log that inherits no prefix (a carrier's): every Event of its History is one of this batch, so its
 * `batch` is its `events`, one array (on a 400 MB session two arrays of 305,263 Events and their growth
 * were some 7 MB, docs/performance.md "Round 6"). Called before its first Event.
 */
export function storesEveryEvent(log: LogPlan): void {
  log.batch = log.events;
}

export const isConversation = (r: ClaudeRecord) => r.type === "user" || r.type === "assistant";

const tsOk = (v: unknown): v is string => typeof v === "string" && CLAUDE_TS.test(v) && isIsoUtc(v);

const OWN_TS = 1;
const SNAPSHOT_TS = 2;

/** §2.4: which of the record's own times is its ts (`timestamp`, else `snapshot.timestamp`), or 0. */
function ownTimeKind(r: ClaudeRecord): number {
  if (r.facts === null) return 0;
  if (r.timestampIsIso || tsOk(r.timestamp)) return OWN_TS;
  if (tsOk(r.snapshotTimestamp)) return SNAPSHOT_TS;
  return 0;
}

/** §2.4: the record's own ts, or null. */
function ownTime(r: ClaudeRecord): string | null {
  const kind = ownTimeKind(r);
  return kind === OWN_TS ? r.timestamp : kind === SNAPSHOT_TS ? r.snapshotTimestamp : null;
}

/**
 * §2.4: the ts of each record (its own, else the one before it, else `fallback`), as the place of the
 * record whose own ts it is (and which of its times), made again from that record when asked for: a
 * column of the strings held a time per record beside the record's own (docs/performance.md, "Round 11").
 * A record not at its place in `records` (one made alone, as tests do) keeps its ts in a Map.
 */
export class RecordTimes {
  private readonly from: Int32Array;
  private readonly kinds: Uint8Array;
  private readonly alone = new Map<ClaudeRecord, string>();
  private lastPlace = -1;
  private lastTs = "";

  constructor(
    private readonly records: ClaudeRecord[],
    private readonly fallback: string,
  ) {
    this.from = new Int32Array(records.length);
    this.kinds = new Uint8Array(records.length);
    let prev = -1;
    records.forEach((r, i) => {
      const kind = ownTimeKind(r);
      if (kind !== 0) prev = i;
      this.kinds[i] = kind;
      this.from[i] = prev;
    });
    // A record made alone: its ts as a string (no string is made for the others).
    records.forEach((r, i) => {
      if (r.index === i) return;
      const k = this.from[i]!;
      this.alone.set(r, k < 0 ? fallback : this.kinds[k] === OWN_TS ? records[k]!.timestamp! : records[k]!.snapshotTimestamp!);
    });
  }

  get(r: ClaudeRecord): string {
    if (this.records[r.index] !== r) return this.alone.get(r) ?? this.fallback;
    const k = this.from[r.index]!;
    if (k < 0) return this.fallback;
    // The string asked for last is kept: an Event's id, ts and line ask for it in a row.
    if (k === this.lastPlace) return this.lastTs;
    const source = this.records[k]!;
    this.lastTs = this.kinds[k] === OWN_TS ? source.timestamp! : source.snapshotTimestamp!;
    this.lastPlace = k;
    return this.lastTs;
  }
}

export function firstTime(records: ClaudeRecord[]): string {
  for (const r of records) {
    const ts = ownTime(r);
    if (ts !== null) return ts;
  }
  return EPOCH;
}

/** The seq of the last inherited Event of each source record (by uuid) in a fork-session child's History. */
export function sourceRecordSeqs(log: LogPlan): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 1; i < log.ownStart && i < log.events.length; i++) {
    const e = log.events[i]!;
    const { uuid } = eventFacts(e);
    if (uuid !== null && typeof e.seq === "number") out.set(uuid, e.seq);
  }
  return out;
}

export type RefusalReason = "log_differs" | "not_a_claude_import" | "transcript_changed" | "record_in_two_logs" | "log_diverged";

const REMOVE_AND_IMPORT = "remove the file's Logs with pixir-log rm and import again";
const REFUSALS: Record<RefusalReason, { message: string; next_actions: string[] }> = {
  log_differs: { message: "session log already exists", next_actions: ["remove the existing logs with pixir-log rm, then import again"] },
  not_a_claude_import: { message: "the log was not made by pixir import claude", next_actions: ["remove the existing logs with pixir-log rm, then import again"] },
  transcript_changed: {
    message: "the Claude transcript changed after it was imported",
    next_actions: [
      "the Logs keep every record imported so far; nothing was written",
      "to import the changed file from scratch, remove the file's Logs with pixir-log rm, its branch Logs before the root (use --materialize-children only for fork children of other sessions), and import again",
    ],
  },
  record_in_two_logs: { message: "a Claude record is held by two logs", next_actions: [REMOVE_AND_IMPORT] },
  log_diverged: { message: "the log has Events written by something else", next_actions: ["an import never appends Claude records after Events written by something else", REMOVE_AND_IMPORT] },
};

/** §4.3: `already_exists` of the import, details `{session_id, log_path, reason, file, line?, next_actions}` plus `extra`. */
export function refusal(ws: string, src: SourceFile, id: string, reason: RefusalReason, extra: JsonObject = {}): PixirError {
  const { message, next_actions } = REFUSALS[reason];
  return new PixirError("already_exists", message, { session_id: id, log_path: logPath(ws, id).rel, reason, file: src.file, ...extra, next_actions });
}
