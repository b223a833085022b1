// claude-interop.md §4: `pixir import claude`. Every unit is read and checked before the first write;
// a file imported before is checked against its last checkpoint (size and SHA-256 of the imported
// prefix) and, when it grew, only its new records are appended (§4.3).
import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, unlinkSync, type Stats } from "node:fs";
import { isJsonObject, serializeEvent, isEncodable, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { lineTooLongToWrite, MAX_LINE_BYTES } from "../../lines/codec.js";
import { PixirError } from "../../event/errors.js";
import { afterEarlierWrites } from "../../event/os-fault.js";
import { acquireLease, type WriterLease } from "../../store/lease.js";
import { readFirstLine } from "../../store/log-read.js";
import { openHistory } from "../../store/loader.js";
import { appendJournaled, createLogAtomically, readTail } from "../../store/log-write.js";
import { listLogs } from "../../store/ls.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { isValidSessionId } from "../../event/session-id.js";
import { childLogId, claudeBaseId, defaultProjectsRoot, discoverUnits, forkedFromSession, subagentIdOf, type ImportUnit, type SourceFile } from "./discover.js";
import type { ForkSource } from "./fork-file.js";
import { planBatch, refusal, type BatchPlan, type ExistingLog, type LogPlan, type LogRole, type SubagentTarget } from "./plan.js";
import { knownEntry, readKnown, sameFile, statFile, stillKnown, writeKnown, type KnownFile } from "./known.js";
import { heldLine } from "./map.js";
import { readTranscriptBytes } from "./transcript.js";

export type ClaudeFileStatus = "created" | "appended" | "unchanged" | "empty" | "skipped" | "would_create" | "would_append";
export type ClaudeLogStatus = "created" | "appended" | "unchanged" | "would_create" | "would_append";

export interface ClaudeLogReport {
  session_id: string;
  role: LogRole;
  parent_session_id: string | null;
  forked_to_seq: number | null;
  event_count: number;
  status: ClaudeLogStatus;
  appended_events?: number;
}

export interface ClaudeFileReport {
  file: string;
  kind: "session" | "fork_session" | "subagent";
  session_id: string | null;
  agent_id: string | null;
  status: ClaudeFileStatus;
  records: number;
  new_records: number;
  blank_lines: number;
  malformed_lines: number;
  pending_tail_bytes: number;
  leaf_uuid: string | null;
  leaf_session_id: string | null;
  forked_from: unknown;
  logs: ClaudeLogReport[];
  error?: Record<string, unknown>;
}

export interface ClaudeImportResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  workspace: string;
  imports: ClaudeFileReport[];
}

export interface ClaudeImportOptions {
  /** Absolute paths; empty: the projects root of §1.1. */
  paths: string[];
  lenient?: boolean;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** §4.5 progress: source file `i` of `n` is being read; `percent` of its bytes read, for files of 1 MiB or more. */
  progress?: (i: number, n: number, file: string, percent: number | null) => void;
}

/** One Log's writes of a planned file. */
interface LogWrite {
  id: string;
  existed: boolean;
  lines: string;
  count: number;
}

interface FilePlan {
  report: ClaudeFileReport;
  writes: LogWrite[];
  /** The planned batch (a fork file's source needs its Logs, §3.7). */
  batch?: BatchPlan;
  /** The import index entry to write once the file's Logs are written (known.ts). */
  known?: { rootId: string; entry: KnownFile };
}

const PROGRESS_BYTES = 1024 * 1024;

/** The run's view of the Workspace's Logs (listed once). */
class WorkspaceLogs {
  private ids: string[] | null = null;
  constructor(private readonly ws: string) {}
  all(): string[] {
    this.ids ??= listLogs(this.ws).sessionIds;
    return this.ids;
  }
  exists(id: string): boolean {
    return inspectStatePath(logPath(this.ws, id)) === "present";
  }
  /** §4.3 step 1: the Logs whose first line names `source`. */
  async family(rootId: string, source: string): Promise<string[]> {
    return (await this.familyHeads(rootId, source)).map((h) => h.id);
  }
  async familyHeads(rootId: string, source: string): Promise<Array<{ id: string; first: PixirEvent }>> {
    const out: Array<{ id: string; first: PixirEvent }> = [];
    for (const id of this.all()) {
      if (id !== rootId && !id.startsWith(`${rootId}.`)) continue;
      const first = await readFirstLine(logPath(this.ws, id));
      if (first === null || "problem" in first) continue;
      const c = first.line.event.data.claude;
      if (isJsonObject(c) && c.source === source) out.push({ id, first: first.line.event });
    }
    return out;
  }
}

function sha256Prefix(abs: string, bytes: number): string {
  const h = createHash("sha256");
  const fd = openSync(abs, "r");
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let pos = 0; pos < bytes; ) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, bytes - pos), pos);
      if (n <= 0) break;
      h.update(buf.subarray(0, n));
      pos += n;
    }
  } finally {
    closeSync(fd);
  }
  return h.digest("hex");
}

/** Is there a `\n` in the file after `from`? (a complete line beyond the checkpoint). */
function hasLineAfter(abs: string, from: number): { size: number; more: boolean } {
  const fd = openSync(abs, "r");
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.allocUnsafe(1 << 16);
    for (let pos = from; pos < size; ) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) break;
      if (buf.subarray(0, n).includes(0x0a)) return { size, more: true };
      pos += n;
    }
    return { size, more: false };
  } finally {
    closeSync(fd);
  }
}

/** §4.2: a source file that cannot be read is `unreadable_file`, or `permission_denied` (exit 3). */
function readingSource<T>(src: SourceFile, read: () => T): T {
  try {
    return read();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new PixirError("permission_denied", undefined, { path: src.file, operation: "read" });
    throw new PixirError("invalid_claude_session", undefined, { reason: "unreadable_file", file: src.file });
  }
}

const readSource = (src: SourceFile): Buffer => readingSource(src, () => readFileSync(src.abs));

async function loadExisting(ws: string, ids: string[]): Promise<ExistingLog[]> {
  const logs: ExistingLog[] = [];
  for (const id of ids) {
    const history = await openHistory(ws, id);
    const events: PixirEvent[] = [];
    for await (const item of history.items()) events.push(item.event);
    logs.push({ id, first: events[0]!, events, replayCount: history.share?.replayEventCount ?? 0 });
  }
  // Parents before children.
  const byId = new Map(logs.map((l) => [l.id, l]));
  const depth = (l: ExistingLog): number => {
    let d = 0;
    for (let p = l; p.first.type === "session_fork" && d < 64; d++) {
      const next = byId.get(String(p.first.data.parent_session_id));
      if (next === undefined) break;
      p = next;
    }
    return d;
  };
  return logs.sort((a, b) => depth(a) - depth(b));
}

/** The last `claude_import` checkpoint of a root Log (the tail, else a scan). */
async function lastCheckpoint(ws: string, id: string): Promise<Record<string, unknown> | null> {
  const tail = readTail(ws, id);
  const isCheckpoint = (e: PixirEvent | null) => e !== null && e.type === "workflow_event" && e.data.event === "claude_import" && isJsonObject(e.data.claude);
  if (isCheckpoint(tail.last)) return tail.last!.data.claude as Record<string, unknown>;
  let found: Record<string, unknown> | null = null;
  for await (const item of (await openHistory(ws, id)).items()) if (isCheckpoint(item.event)) found = item.event.data.claude as Record<string, unknown>;
  return found;
}

interface UnitState {
  /** §3.7: the Logs of a fork file's source session (planned in this run, or in the Workspace). */
  forkSource?: (sessionId: string) => Promise<ForkSource | null>;
  /** Subagent targets of the unit by agentId. */
  subagents: Map<string, SubagentTarget>;
  /** A subagent Log of the unit is created by this run. */
  createdSubagent: boolean;
  /** §3.6: the child Logs that subagent_events of the unit's subagent files name (read when a session file is planned). */
  linkedBySubagents: Array<() => Iterable<string>>;
}

/**
 * The Events of these Logs' lines on disk that contain `needle` (a quick look for a few kinds of Event;
 * the loader names bad lines, so one that does not parse is passed over here).
 */
function* eventsOnDisk(ws: string, ids: string[], needle: string): Iterable<PixirEvent> {
  for (const id of ids) {
    let text: string;
    try {
      text = readFileSync(logPath(ws, id).abs, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (!line.includes(needle)) continue;
      try {
        yield JSON.parse(line) as PixirEvent;
      } catch {
        /* named by the loader when the Log is read */
      }
    }
  }
}

/** The child_session_ids that subagent_events of these Logs name (a subagent's Logs, read from disk). */
function* childrenNamedIn(ws: string, ids: string[]): Iterable<string> {
  for (const e of eventsOnDisk(ws, ids, '"type":"subagent_event"')) if (typeof e.data?.child_session_id === "string") yield e.data.child_session_id;
}

/** The records the own Events of these Logs hold (§4.3 step 4), counted from their lines on disk. */
function heldRecordCount(ws: string, ids: string[]): number {
  let n = 0;
  for (const e of eventsOnDisk(ws, ids, '"claude":')) {
    const c = e.data?.claude;
    if (heldLine(e) !== null) n++;
    else if (isJsonObject(c) && e.data.event === "claude_transcript" && Array.isArray(c.copied)) n += c.copied.length;
  }
  return n;
}

const childrenNamedInPlan = (plan: BatchPlan): string[] =>
  plan.logs.flatMap((l) => l.events.filter((e) => e.type === "subagent_event" && typeof e.data.child_session_id === "string").map((e) => e.data.child_session_id as string));

/**
 * The Log lines of `events`. An Event whose record is a canonical line takes that line as the text of
 * `data.claude.record` (its last key, in `claude`, the last key of `data`): the bytes JSON.stringify would
 * give, without serialising the record a second time.
 */
function serializeAll(events: PixirEvent[], src: SourceFile, recordText: Map<PixirEvent, string>): string {
  let out = "";
  for (const e of events) {
    const verbatim = recordText.get(e);
    let dataText: string | undefined;
    if (verbatim !== undefined) {
      const { record: _record, ...claude } = e.data.claude as JsonObject;
      const rest = JSON.stringify({ ...e.data, claude });
      dataText = `${rest.slice(0, -2)},"record":${verbatim}}}`;
    }
    const text = serializeEvent(e, dataText);
    const line = isJsonObject(e.data.claude) && typeof e.data.claude.line === "number" ? e.data.claude.line : null;
    if (!isEncodable(text, e.data)) throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type: e.type, file: src.file, line });
    // A record too large for one Log line is refused while planning, before anything is written.
    if (text.length * 3 > MAX_LINE_BYTES && Buffer.byteLength(text, "utf8") > MAX_LINE_BYTES) {
      const err = lineTooLongToWrite(Buffer.byteLength(text, "utf8"), e.type, null);
      throw new PixirError(err.kind, err.message, { ...err.details, file: src.file, line });
    }
    out += text;
  }
  return out;
}

const parentUuidsOf = (src: SourceFile) => {
  let cache: Set<string> | null = null;
  return () => {
    if (cache === null) {
      cache = new Set();
      try {
        for (const r of readTranscriptBytes(readFileSync(src.abs), src.file, true).records) if (r.parentUuid !== null) cache.add(r.parentUuid);
      } catch {
        /* unreadable: links nothing */
      }
    }
    return cache;
  };
};

function logReport(log: LogPlan, status: ClaudeLogStatus): ClaudeLogReport {
  return {
    session_id: log.id,
    role: log.role,
    parent_session_id: log.parent?.id ?? null,
    forked_to_seq: log.parent === null ? null : log.forkedToSeq,
    event_count: log.ownStart > 0 ? 1 + log.events.length - log.ownStart : log.events.length,
    status,
    ...(status === "appended" || status === "would_append" ? { appended_events: log.batch.length } : {}),
  };
}

/** §4.5 `forked_from` of a file whose Logs exist, from its root Log's first Event (§3.5, §3.7). */
function forkedFromOfRoot(first: PixirEvent | undefined): unknown {
  const c = first && isJsonObject(first.data.claude) ? first.data.claude : null;
  if (c === null) return null;
  if (first!.type === "session_fork") return c.fork_kind === "claude_fork_session" && isJsonObject(c.forked_from) ? { ...c.forked_from, shared: true } : null;
  return c.forked_from ?? null;
}

/** The report of a Log an unchanged file leaves alone, from its first and last lines only. */
function unchangedLog(ws: string, id: string, first: PixirEvent): ClaudeLogReport {
  const c = (first.data.claude ?? {}) as Record<string, unknown>;
  const fork = first.type === "session_fork";
  const lastSeq = readTail(ws, id).last?.seq ?? 0;
  const replay = fork && typeof first.data.replay_event_count === "number" ? first.data.replay_event_count : 0;
  const role: LogRole = fork
    ? c.fork_kind === "claude_root"
      ? "root_branch"
      : c.fork_kind === "claude_fork_session"
        ? "fork_session"
        : "branch"
    : c.kind === "subagent"
      ? "subagent"
      : c.kind === "inline_subagent"
        ? "inline_subagent"
        : "primary";
  return {
    session_id: id,
    role,
    parent_session_id: fork && typeof first.data.parent_session_id === "string" ? first.data.parent_session_id : null,
    forked_to_seq: fork && typeof first.data.forked_to_seq === "number" ? first.data.forked_to_seq : null,
    event_count: fork ? 1 + lastSeq - replay : lastSeq + 1,
    status: "unchanged",
  };
}

/** Plan one source file: read, check against the Workspace, plan its batch. Writes nothing. */
async function planFile(ws: string, src: SourceFile, unit: UnitState, wsLogs: WorkspaceLogs, options: ClaudeImportOptions, say?: (percent: number | null) => void): Promise<FilePlan> {
  say?.(null);
  const dry = Boolean(options.dryRun);
  const base = emptyReport(src, "unchanged");
  let checkpoint: Record<string, unknown> | null = null;
  const rootExists = wsLogs.exists(src.rootId);
  // Taken before the file is read, so an entry made from it can only be older than what was read.
  const st = readingSource(src, () => statFile(src.abs));
  if (rootExists) {
    checkpoint = await lastCheckpoint(ws, src.rootId);
    if (checkpoint === null) {
      throw refusal(ws, src, src.rootId, "not_a_claude_import");
    }
    const imported = Number(checkpoint.bytes);
    // §4.3 step 3, unless the import index knows the file unchanged since that checkpoint (known.ts).
    const trusted = stillKnown(readKnown(ws, src.rootId), src.sourceKey, st, { bytes: imported, sha256: checkpoint.sha256 });
    const { size, more } = trusted ? { size: st.size, more: false } : readingSource(src, () => hasLineAfter(src.abs, imported));
    if (!trusted && (size < imported || readingSource(src, () => sha256Prefix(src.abs, imported)) !== checkpoint.sha256)) {
      throw refusal(ws, src, src.rootId, "transcript_changed", { imported_bytes: imported, file_bytes: size });
    }
    const known = trusted || dry ? undefined : { rootId: src.rootId, entry: knownEntry(src.sourceKey, st, imported, String(checkpoint.sha256), src.forkedFrom) };
    const forceBatch = src.kind !== "subagent" && unit.createdSubagent;
    const family = !more && !forceBatch ? await wsLogs.familyHeads(src.rootId, src.sourceKey) : [];
    // §4.3 step 5 and §4.4: an interrupted run may have appended the root Log's checkpoint and not yet
    // created a branch Log. The import index vouches for a run that finished; without it, the family must
    // hold every record the checkpoint counts, else the file is planned again (its unheld lines are new).
    const complete = trusted || heldRecordCount(ws, family.map((h) => h.id)) >= Number(checkpoint.records);
    if (!more && !forceBatch && complete) {
      // §4.3 step 5: nothing new; every Log of the file is unchanged (one read, one hash).
      return {
        report: {
          ...base,
          forked_from: forkedFromOfRoot(family.find((h) => h.id === src.rootId)?.first),
          records: Number(checkpoint.records),
          blank_lines: Number(checkpoint.lines) - Number(checkpoint.records),
          pending_tail_bytes: size - imported,
          leaf_uuid: (checkpoint.leaf_uuid as string | null) ?? null,
          leaf_session_id: (checkpoint.leaf_session_id as string | null) ?? null,
          logs: family.map((h) => unchangedLog(ws, h.id, h.first)),
        },
        writes: [],
        known,
      };
    }
  }
  const bytes = readSource(src);
  const read = readTranscriptBytes(bytes, src.file, Boolean(options.lenient), bytes.length >= PROGRESS_BYTES ? say : undefined);
  if (read.records.length === 0 && !rootExists) {
    return { report: { ...base, status: "empty", blank_lines: read.blankLines, pending_tail_bytes: read.pendingTailBytes }, writes: [] };
  }
  const sha256 = createHash("sha256").update(bytes.subarray(0, read.completeBytes)).digest("hex");
  const existing = rootExists ? await loadExisting(ws, await wsLogs.family(src.rootId, src.sourceKey)) : [];
  // §3.6: children already named by a subagent_event of the unit's Logs (this file's, its subagents').
  const linked = new Set<string>();
  for (const l of existing) for (const e of l.events) if (e.type === "subagent_event" && typeof e.data.child_session_id === "string") linked.add(e.data.child_session_id);
  if (src.kind !== "subagent") for (const named of unit.linkedBySubagents) for (const id of named()) linked.add(id);
  const unitChildren = new Map<string, string>();
  if (src.kind !== "subagent") for (const [agentId, t] of unit.subagents) if (t.rootId !== null) unitChildren.set(subagentIdOf(agentId), t.rootId);
  const plan = planBatch({
    ws,
    src,
    read,
    sha256,
    existing,
    subagents: unit.subagents,
    agentLogExists: (agentId) => wsLogs.exists(childLogId(src.base, `agent-${agentId}`)),
    linkedChildren: linked,
    unitChildren,
    verifiedLines: checkpoint === null ? 0 : Number(checkpoint.lines),
    forkSource: src.kind === "fork_session" && existing.length === 0 && unit.forkSource ? await unit.forkSource(String(src.forkedFrom)) : null,
  });

  const writes: LogWrite[] = [];
  const logs: ClaudeLogReport[] = [];
  for (const log of plan.logs) {
    if (log.existed) {
      if (log.batch.length === 0) logs.push(logReport(log, "unchanged"));
      else {
        writes.push({ id: log.id, existed: true, lines: serializeAll(log.batch, src, plan.recordText), count: log.batch.length });
        logs.push(logReport(log, dry ? "would_append" : "appended"));
      }
      continue;
    }
    if (log.batch.length === 0) continue;
    const text = serializeAll(log.batch, src, plan.recordText);
    let status: ClaudeLogStatus = dry ? "would_create" : "created";
    if (wsLogs.exists(log.id)) {
      if (readFileSync(logPath(ws, log.id).abs).toString("utf8") !== text) {
        throw refusal(ws, src, log.id, "log_differs");
      }
      status = "unchanged";
    } else writes.push({ id: log.id, existed: false, lines: text, count: log.batch.length });
    logs.push(logReport(log, status));
  }
  const rootStatus = logs.find((l) => l.session_id === src.rootId)?.status;
  const status: ClaudeFileStatus =
    writes.length === 0 ? "unchanged" : rootStatus === "created" || rootStatus === "would_create" ? (dry ? "would_create" : "created") : dry ? "would_append" : "appended";
  return {
    report: {
      ...base,
      kind: src.kind,
      status,
      records: read.records.length,
      new_records: plan.newRecords,
      blank_lines: read.blankLines,
      malformed_lines: plan.malformed,
      pending_tail_bytes: read.pendingTailBytes,
      leaf_uuid: plan.leaf?.uuid ?? null,
      leaf_session_id: plan.leafLog?.id ?? null,
      forked_from: (plan.root.events.slice(plan.root.ownStart).find((e) => e.data.event === "claude_transcript")?.data.claude as Record<string, unknown> | undefined)?.forked_from ?? null,
      logs,
    },
    writes,
    batch: plan,
    known: dry ? undefined : { rootId: src.rootId, entry: knownEntry(src.sourceKey, st, read.completeBytes, sha256, src.forkedFrom) },
  };
}

/** §3.7: a source session's Logs as planned in this run. */
function forkSourceOfPlan(sessionId: string, plan: BatchPlan): ForkSource {
  const top = (l: LogPlan): string => (l.parent === null ? l.id : top(l.parent));
  const logs = new Map(plan.logs.map((l) => [l.id, { id: l.id, events: l.events, forkRoot: top(l) }]));
  const byUuid = new Map<string, { value: Record<string, unknown>; logId: string; line: number }>();
  for (const r of plan.records) {
    const log = plan.owner.get(r);
    if (r.chain && !r.dup && r.value !== null && log !== undefined && !byUuid.has(r.uuid!)) byUuid.set(r.uuid!, { value: r.value, logId: log.id, line: r.line });
  }
  return { sessionId, logs, byUuid };
}

/** §3.7: a source session's Logs as they are in the Workspace. */
async function forkSourceOfWorkspace(ws: string, wsLogs: WorkspaceLogs, sessionId: string): Promise<ForkSource | null> {
  const rootId = claudeBaseId(sessionId);
  if (!wsLogs.exists(rootId)) return null;
  const family = await loadExisting(ws, await wsLogs.family(rootId, sessionId));
  const logs = new Map<string, { id: string; events: PixirEvent[]; forkRoot: string }>();
  const byUuid = new Map<string, { value: Record<string, unknown>; logId: string; line: number }>();
  for (const l of family) {
    const root = l.first.type === "session_fork" && typeof l.first.data.fork_root_session_id === "string" ? l.first.data.fork_root_session_id : l.id;
    logs.set(l.id, { id: l.id, events: l.events, forkRoot: root });
    const own = l.first.type === "session_fork" ? l.events.slice(l.replayCount + 1) : l.events;
    for (const e of own) {
      const c = e.data.claude;
      if (!isJsonObject(c) || typeof c.uuid !== "string" || typeof c.line !== "number" || byUuid.has(c.uuid)) continue;
      // The record, or a non-canonical line parsed (§2.3 raw_line).
      const value = isJsonObject(c.record) ? c.record : typeof c.raw_line === "string" ? parsedObject(c.raw_line) : null;
      if (value !== null) byUuid.set(c.uuid, { value, logId: l.id, line: c.line });
    }
  }
  return { sessionId, logs, byUuid };
}

function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isJsonObject(v) ? v : null;
  } catch {
    return null;
  }
}

/**
 * §4.4: take the leases, write parents before children, release. A write that fails (a full disk) takes
 * back the Logs this file created before it, under their leases: the root Log's checkpoint says the
 * whole file is imported, so a rerun would find it unchanged and never write the missing children.
 */
async function writeFile(ws: string, writes: LogWrite[], options: ClaudeImportOptions): Promise<void> {
  const leases: WriterLease[] = [];
  const created: string[] = [];
  let appended = false;
  try {
    for (const w of writes) leases.push(await acquireLease(ws, w.id, { program: options.program, env: options.env, signal: options.signal }));
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i]!;
      const ctx = { lease: leases[i]!, signal: options.signal };
      if (w.existed) {
        await appendJournaled(ws, w.id, readTail(ws, w.id), async (emit) => emit(w.lines), ctx);
        appended = true;
      } else {
        await createLogAtomically(ws, w.id, async (emit) => emit(w.lines), ctx);
        created.push(w.id);
      }
    }
  } catch (err) {
    for (const id of created.reverse()) unlinkSync(logPath(ws, id).abs);
    created.length = 0;
    // An append already made stays (all or nothing per Log): the error must not say "nothing was changed".
    throw appended ? afterEarlierWrites(err, ws) : err;
  } finally {
    // A file that wrote nothing (a full disk) takes back the state directories its leases made.
    // Last taken, first released: the first lease made the state directories the others sit in.
    for (const lease of leases.reverse()) lease.release(!appended && created.length === 0);
  }
}

const identityOf = (s: SourceFile) => (s.kind === "subagent" ? `a\u0000${s.claudeSessionId}\u0000${s.agentId}` : `s\u0000${s.claudeSessionId}`);

/** Keep at most this many planned bytes between the checking pass and the writes; beyond, plan again. */
const HELD_PLAN_BYTES = 8 * 1024 * 1024;

export async function importClaude(ws: string, options: ClaudeImportOptions): Promise<ClaudeImportResult> {
  const paths = options.paths.length > 0 ? options.paths : [defaultProjectsRoot(options.env)];
  for (const p of paths) if (!existsSync(p)) throw new PixirError("not_found", "path was not found", { path: p, next_actions: ["pass the path of a Claude Code projects directory", "set CLAUDE_CONFIG_DIR"] });
  const units = discoverUnits(paths);
  const wsLogs = new WorkspaceLogs(ws);

  // §4.2 duplicate_session: the later file (path order) of one identity.
  const seen = new Set<string>();
  const duplicates = new Map<ImportUnit, string>();
  for (const u of [...units].sort((a, b) => Buffer.compare(Buffer.from(a.sortKey), Buffer.from(b.sortKey)))) {
    for (const s of [...u.subagents, ...(u.session ? [u.session] : [])]) {
      const id = identityOf(s);
      if (seen.has(id) && !duplicates.has(u)) duplicates.set(u, s.file);
      seen.add(id);
    }
  }

  // §4.1, §3.7: every fork file's unit after its source's unit when both are in the run.
  const forkOf = new Map<ImportUnit, string>();
  for (const u of units) {
    if (u.session === null) continue;
    // A file the import index knows unchanged is not opened to find out (known.ts).
    const known = readKnown(ws, u.session.rootId);
    let st: Stats | null = null;
    try {
      st = statFile(u.session.abs);
    } catch {
      /* planFile names the problem */
    }
    const s = st !== null && sameFile(known, u.session.sourceKey, st) ? known.fork_source : forkedFromSession(u.session.abs, u.session.claudeSessionId);
    if (s === null) continue;
    forkOf.set(u, s);
    // §3.7, §4.5: a fork file's kind, known before it is read (an unchanged one is not).
    u.session.kind = "fork_session";
    u.session.forkedFrom = s;
  }
  if (forkOf.size > 0) {
    const byClaudeId = new Map(units.filter((u) => u.session).map((u) => [u.session!.claudeSessionId, u]));
    const ordered: ImportUnit[] = [];
    const placed = new Set<ImportUnit>();
    const visit = (u: ImportUnit, stack: Set<ImportUnit>) => {
      if (placed.has(u)) return;
      const src = byClaudeId.get(forkOf.get(u) ?? "");
      if (src !== undefined && src !== u && !stack.has(src)) visit(src, new Set([...stack, u]));
      placed.add(u);
      ordered.push(u);
    };
    for (const u of units) visit(u, new Set());
    units.splice(0, units.length, ...ordered);
  }
  const neededSources = new Set(forkOf.values());
  const sourcePlans = new Map<string, ForkSource>();
  const forkSource = async (sessionId: string) => sourcePlans.get(sessionId) ?? (await forkSourceOfWorkspace(ws, wsLogs, sessionId));

  // §4.5: progress names each source file as the checking pass reads it.
  const fileCount = units.reduce((n, u) => n + u.subagents.length + (u.session ? 1 : 0), 0);
  let fileIndex = 0;
  const sayFor = (src: SourceFile) => {
    if (options.progress === undefined) return undefined;
    const i = ++fileIndex;
    return (percent: number | null) => options.progress!(i, fileCount, src.file, percent);
  };
  type Say = (percent: number | null) => void;
  const planUnit = async (unit: ImportUnit, says?: Map<SourceFile, Say | undefined>): Promise<FilePlan[]> => {
    const state: UnitState = { subagents: new Map(), createdSubagent: false, forkSource, linkedBySubagents: [] };
    // Every subagent file of the unit is a link target, for the session and for each other (nested, §3.6).
    for (const sub of unit.subagents) state.subagents.set(sub.agentId!, { rootId: sub.rootId, parentUuids: parentUuidsOf(sub), compaction: sub.agentId!.startsWith("acompact-") });
    const plans: FilePlan[] = [];
    for (const sub of unit.subagents) {
      const p = await planFile(ws, sub, state, wsLogs, options, says?.get(sub));
      if (p.report.status === "empty") state.subagents.get(sub.agentId!)!.rootId = null;
      const batch = p.batch;
      const familyIds = p.report.logs.map((l) => l.session_id);
      state.linkedBySubagents.push(batch !== undefined ? () => childrenNamedInPlan(batch) : () => childrenNamedIn(ws, familyIds));
      if (p.writes.some((w) => w.id === sub.rootId && !w.existed)) state.createdSubagent = true;
      plans.push({ report: p.report, writes: p.writes, known: p.known });
    }
    if (unit.session) {
      const p = await planFile(ws, unit.session, state, wsLogs, options, says?.get(unit.session));
      if (p.batch && neededSources.has(unit.session.claudeSessionId)) sourcePlans.set(unit.session.claudeSessionId, forkSourceOfPlan(unit.session.claudeSessionId, p.batch));
      plans.push({ report: p.report, writes: p.writes, known: p.known });
    }
    return plans;
  };

  // A unit none of whose Logs can exist yet (no Log id is its base id or starts with it, §3.1), and that no
  // fork file needs planned, is only read and checked by the checking pass; the writing pass plans it.
  const basesPresent = new Set(wsLogs.all().map((id) => id.split(".")[0]!));
  const fresh = (unit: ImportUnit, files: SourceFile[]) =>
    !options.dryRun && !forkOf.has(unit) && !(unit.session !== null && neededSources.has(unit.session.claudeSessionId)) && files.every((f) => !basesPresent.has(f.base));

  const total = units.length;
  const reports: Array<ClaudeFileReport[] | null> = new Array(total).fill(null);
  const held: Array<FilePlan[] | null> = [];
  let heldBytes = 0;
  const unitError = (err: unknown, files: SourceFile[]): ClaudeFileReport[] => {
    const isUnitError = err instanceof PixirError && (err.kind === "invalid_claude_session" || err.kind === "already_exists");
    if (!options.lenient || !isUnitError) throw err;
    const error = { kind: err.kind, message: err.message, details: err.details };
    return files.map((f) => skippedReport(f, error));
  };
  for (let i = 0; i < total; i++) {
    const unit = units[i]!;
    options.signal?.throwIfAborted?.();
    const dup = duplicates.get(unit);
    const files = [...unit.subagents, ...(unit.session ? [unit.session] : [])];
    try {
      if (dup !== undefined) throw new PixirError("invalid_claude_session", undefined, { reason: "duplicate_session", file: dup });
      const says = new Map(files.map((f) => [f, sayFor(f)]));
      if (fresh(unit, files) && files.every((f) => linesFitLog(f, options, says.get(f)))) {
        held.push(null);
        continue;
      }
      const plans = await planUnit(unit, says);
      reports[i] = plans.map((p) => p.report);
      const size = plans.reduce((n, p) => n + p.writes.reduce((m, w) => m + w.lines.length, 0), 0);
      const keep = heldBytes + size <= HELD_PLAN_BYTES;
      if (keep) heldBytes += size;
      held.push(keep ? plans : null);
    } catch (err) {
      reports[i] = unitError(err, files);
      held.push([]);
    }
  }

  let recorded = false;
  if (!options.dryRun) {
    for (let i = 0; i < units.length; i++) {
      let plans = held[i];
      if (plans === null) {
        try {
          plans = await planUnit(units[i]!);
        } catch (err) {
          reports[i] = unitError(err, [...units[i]!.subagents, ...(units[i]!.session ? [units[i]!.session!] : [])]);
          continue;
        }
        reports[i] ??= plans.map((p) => p.report);
      }
      for (const p of plans) {
        if (p.writes.length > 0) {
          try {
            await writeFile(ws, p.writes, options);
          } catch (err) {
            // §4.4: units already written stay written; the error says so rather than "nothing was changed".
            throw recorded ? afterEarlierWrites(err, ws) : err;
          }
          recorded = true;
        }
        if (p.known !== undefined) writeKnown(ws, p.known.rootId, p.known.entry);
      }
    }
  }
  return { ok: true, recorded, dry_run: Boolean(options.dryRun), workspace: ws, imports: reports.flatMap((r) => r ?? []) };
}

/**
 * The checking pass of a file whose Logs cannot exist yet: §4.2's reading rules (a malformed line is an
 * error unless lenient), and whether its longest line leaves room for its Events in one Log line (an
 * Event holds the record and at most the record's text again). False sends the unit to a full plan, which
 * names a line that does not fit before anything is written.
 */
function linesFitLog(src: SourceFile, options: ClaudeImportOptions, say?: (percent: number | null) => void): boolean {
  say?.(null);
  const bytes = readSource(src);
  const read = readTranscriptBytes(bytes, src.file, Boolean(options.lenient), bytes.length >= PROGRESS_BYTES ? say : undefined, false);
  // The record's bytes (a raw_base64 line: a third more), its mapped text at most as long again, the rest.
  return (read.longestLine * 4) / 3 + read.longestLine + 1024 * 1024 <= MAX_LINE_BYTES;
}

function skippedReport(src: SourceFile, error: Record<string, unknown>): ClaudeFileReport {
  return { ...emptyReport(src, "skipped"), error };
}

/** A file's report before anything is known of it. */
function emptyReport(src: SourceFile, status: ClaudeFileStatus): ClaudeFileReport {
  return {
    file: src.file,
    kind: src.kind,
    session_id: isValidSessionId(src.claudeSessionId) ? src.claudeSessionId : null,
    agent_id: src.agentId,
    status,
    records: 0,
    new_records: 0,
    blank_lines: 0,
    malformed_lines: 0,
    pending_tail_bytes: 0,
    leaf_uuid: null,
    leaf_session_id: null,
    forked_from: null,
    logs: [],
  };
}
