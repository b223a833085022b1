// claude-interop.md §4: `pixir import claude`. Every unit is read and checked before the first write;
// a file imported before is checked against its last checkpoint (size and SHA-256 of the imported
// prefix) and, when it grew, only its new records are appended (§4.3).
import { createHash } from "node:crypto";
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync, rmdirSync, rmSync, statSync, unlinkSync, type Stats } from "node:fs";
import path from "node:path";
import { envelopeHead, isJsonObject, serializeEvent, isEncodable, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { lineTooLongToWrite, MAX_LINE_BYTES } from "../../lines/codec.js";
import { overlongLine } from "../../lines/line-bound.js";
import { PixirError } from "../../event/errors.js";
import { afterEarlierWrites } from "../../event/os-fault.js";
import { acquireLease, acquireLeases, WriterLease } from "../../store/lease.js";
import { readFirstLine } from "../../store/log-read.js";
import { sweepStaleTempFiles } from "../../store/repair.js";
import { openHistory, type History } from "../../store/loader.js";
import { storedPrefixCount } from "../../fork/fork.js";
import { appendJournaled, commitPreparedLog, createLogAtomically, discardPreparedLog, fsyncDir, prepareLog, readTail, receivedPrepared, sentPrepared, type PreparedLog, type SentPrepared } from "../../store/log-write.js";
import { listLogs } from "../../store/ls.js";
import { inspectStatePath, logPath, logTempOwner, sessionsDir } from "../../store/paths.js";
import { scanThreadCount } from "../../store/threads.js";
import { WorkerPool } from "../../store/worker-pool.js";
import { isValidSessionId } from "../../event/session-id.js";
import { childLogId, claudeBaseId, defaultProjectsRoot, discoverUnits, forkedFromSession, subagentIdOf, type ImportUnit, type SourceFile } from "./discover.js";
import type { ForkSource } from "./fork-file.js";
import { planBatch, type BatchPlan } from "./plan.js";
import { refusal, type ExistingLog, type LogPlan, type LogRole, type SubagentTarget } from "./plan-log.js";
import { ImportIndex, knownEntry, sameFile, statFile, stillKnown, type KnownFile } from "./known.js";
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
  /** §4.1: symbolic links met while listing, not read; the key is there only when one was met (§4.5's shape). */
  skipped_files?: Array<{ file: string; reason: "symlink" }>;
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
  /** archive.md §5: session files another stage takes (a file pixir exported from a Log of this Workspace). */
  skipFile?: (abs: string) => boolean;
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
  /** New Logs already written to temp files (a fresh unit, `prepare`), put in place by the writing pass. */
  prepared: PreparedLog[];
  /** The same, while they are being written (planUnit waits for them). */
  preparing?: Array<Promise<PreparedLog>>;
  /** The planned batch (a fork file's source needs its Logs, §3.7). */
  batch?: BatchPlan;
  /** The import index entry to write once the file's Logs are written (known.ts). */
  known?: { rootId: string; entry: KnownFile };
}

const PROGRESS_BYTES = 1024 * 1024;

/** The run's view of the Workspace's Logs (listed once), and of its import index (known.ts). */
class WorkspaceLogs {
  private ids: string[] | null = null;
  readonly index: ImportIndex;
  constructor(private readonly ws: string) {
    this.index = new ImportIndex(ws);
  }
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
    if (err instanceof PixirError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES" || code === "EPERM" || code === "EROFS") throw new PixirError("permission_denied", undefined, { path: src.file, operation: "read" });
    throw new PixirError("invalid_claude_session", undefined, { reason: "unreadable_file", file: src.file });
  }
}

/**
 * A source file, read whole once no line of it is longer than a Log line may be: a record that long
 * can never be stored (its Event holds it), so it is refused before the file is buffered, at the first
 * MAX_LINE_BYTES + 1 bytes of that line, `--lenient` or not (no Log line can keep it raw either).
 */
const readSource = (src: SourceFile, files?: FileBuffers): Buffer =>
  readingSource(src, () => {
    const line = overlongLine(src.abs);
    if (line !== null) throw overlongSourceLine(src, line);
    return files !== undefined ? files.read(src.abs) : readFileSync(src.abs);
  });

function overlongSourceLine(src: SourceFile, line: number): PixirError {
  return new PixirError("log_encode_failed", "a line of the transcript is longer than a Log line may be", {
    reason: "line_too_long",
    type: null,
    file: src.file,
    line,
    max_line_bytes: MAX_LINE_BYTES,
    next_actions: ["this transcript cannot be imported whole: the line is refused with --lenient too"],
  });
}

/**
 * Source files read into buffers that the next unit uses again once the unit that read them is prepared
 * (prepareFreshUnit), so that a thread preparing many units keeps a flat memory.
 */
class FileBuffers {
  private static readonly free: Buffer[] = [];
  /** Bytes the free buffers of this thread may keep: a tree of large transcripts keeps no more. */
  private static readonly FREE_BYTES = 16 * 1024 * 1024;
  private static freeBytes = 0;
  private readonly held: Buffer[] = [];
  read(abs: string): Buffer {
    const fd = openSync(abs, "r");
    try {
      const size = fstatSync(fd).size;
      const at = FileBuffers.free.findIndex((b) => b.length >= size);
      const reused = at >= 0 ? FileBuffers.free.splice(at, 1)[0]! : null;
      if (reused !== null) FileBuffers.freeBytes -= reused.length;
      const buf = reused ?? Buffer.allocUnsafeSlow(Math.max(size, 256 * 1024));
      this.held.push(buf);
      let n = 0;
      while (n < size) {
        const got = readSync(fd, buf, n, size - n, n);
        if (got <= 0) break;
        n += got;
      }
      return buf.subarray(0, n);
    } finally {
      closeSync(fd);
    }
  }
  /** The unit is prepared: nothing refers to its files any more. */
  done(): void {
    for (const b of this.held.splice(0)) {
      if (FileBuffers.freeBytes + b.length > FileBuffers.FREE_BYTES) continue;
      FileBuffers.free.push(b);
      FileBuffers.freeBytes += b.length;
    }
  }
}

async function loadExisting(ws: string, ids: string[]): Promise<ExistingLog[]> {
  const logs: ExistingLog[] = [];
  for (const id of ids) {
    const history = await openHistory(ws, id);
    const events: PixirEvent[] = [];
    for await (const item of history.items()) events.push(item.event);
    let shareHops = 0;
    for (let h: History | null = history; h?.share; h = h.share.parent) shareHops++;
    logs.push({ id, first: events[0]!, events, replayCount: history.share?.replayEventCount ?? storedPrefixCount(events[0]!), shareHops });
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
  /** Where the unit's files are read into (a fresh unit's; else each is read into a buffer of its own). */
  files?: FileBuffers;
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
  let copies = 0; // a replay_v1 branch's stored prefix: its parent's records, not its own
  for (const e of eventsOnDisk(ws, ids, '"claude":')) {
    if (e.seq === 0) copies = storedPrefixCount(e);
    if (typeof e.seq === "number" && e.seq > 0 && e.seq <= copies) continue;
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
function serializeAll(events: PixirEvent[], src: SourceFile, plan: Pick<BatchPlan, "recordText" | "eventText">): string {
  let out = "";
  serializeEach(events, src, plan, (part) => (out += typeof part === "string" ? part : part.toString("utf8")));
  return out;
}

/**
 * The Log lines of `events`, handed to `emit` as they are made (serializeAll): a line as one string, or
 * (Events mapped from their records' bytes) whole lines as bytes, put together from the records' bytes
 * in a block that `emit` must copy or use before it returns.
 */
function serializeEach(events: PixirEvent[], src: SourceFile, plan: Pick<BatchPlan, "recordText" | "eventText">, emit: (part: string | Buffer) => void): void {
  const lineOf = (e: PixirEvent) => (isJsonObject(e.data.claude) && typeof e.data.claude.line === "number" ? e.data.claude.line : null);
  const tooLong = (e: PixirEvent, bytes: number) => {
    const err = lineTooLongToWrite(bytes, e.type, null);
    return new PixirError(err.kind, err.message, { ...err.details, file: src.file, line: lineOf(e) });
  };
  let block = LINE_BLOCK;
  let used = 0;
  const handOn = () => {
    if (used > 0) emit(block.subarray(0, used));
    used = 0;
  };
  for (const e of events) {
    const spliced = plan.eventText.get(e);
    if (spliced !== undefined) {
      // Written from a canonical line, which holds no lone surrogate: it is always encodable (§3).
      const head = envelopeHead(e);
      const most = head.length * 3 + spliced.maxBytes + 2;
      if (most > MAX_LINE_BYTES) {
        const bytes = Buffer.byteLength(head, "utf8") + spliced.byteLength + 2;
        if (bytes > MAX_LINE_BYTES) throw tooLong(e, bytes);
      }
      if (used + most > block.length) {
        handOn();
        // A line larger than the block gets one of its own.
        block = most > LINE_BLOCK.length ? Buffer.allocUnsafe(most) : LINE_BLOCK;
      }
      used += block.write(head, used, "utf8");
      used = spliced.writeInto(block, used);
      block[used++] = 0x7d; // "}"
      block[used++] = 0x0a; // "\n"
      if (used >= LINE_BLOCK_BYTES) handOn();
      continue;
    }
    handOn();
    const verbatim = plan.recordText.get(e);
    let dataText: string | undefined;
    if (verbatim !== undefined) {
      const { record: _record, ...claude } = e.data.claude as JsonObject;
      const rest = JSON.stringify({ ...e.data, claude });
      dataText = `${rest.slice(0, -2)},"record":${verbatim}}}`;
    }
    const text = serializeEvent(e, dataText);
    if (!isEncodable(text, e.data)) throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type: e.type, file: src.file, line: lineOf(e) });
    // A record too large for one Log line is refused while planning, before anything is written.
    if (text.length * 3 > MAX_LINE_BYTES && Buffer.byteLength(text, "utf8") > MAX_LINE_BYTES) throw tooLong(e, Buffer.byteLength(text, "utf8"));
    emit(text);
  }
  handOn();
}

/**
 * serializeEach's block of lines made from bytes, handed on once it holds this many bytes: one copy into
 * the writer's block for many lines, where each part of each line was one call. Its own thread's, and used
 * only while serializeEach runs (it awaits nothing).
 */
const LINE_BLOCK_BYTES = 64 * 1024;
const LINE_BLOCK = Buffer.allocUnsafe(4 * LINE_BLOCK_BYTES);

const parentUuidsOf = (src: SourceFile) => {
  let cache: Set<string> | null = null;
  return () => {
    if (cache === null) {
      cache = new Set();
      try {
        for (const r of readTranscriptBytes(readSource(src), src.file, true, undefined, true, true).records) if (r.parentUuid !== null) cache.add(r.parentUuid);
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

/**
 * A new Log's temp file could not be written (a full disk, a read-only file system): the unit is
 * checked and written the plain way instead, in the writing pass, where the failure is named (§4.4).
 */
class PrepareFault extends Error {}

/**
 * A new Log of a fresh unit, its lines written to a temp file as they are made (prepareLog). A failure
 * of the lines (a line too long, one not encodable) is the file's own and is thrown as it is; a failure
 * of the file is a PrepareFault.
 */
async function prepareNewLog(ws: string, id: string, lines: (emit: (part: string | Buffer) => void) => void): Promise<PreparedLog> {
  let own: unknown = null;
  try {
    return await prepareLog(
      ws,
      id,
      async (emit) => {
        let writing = false;
        try {
          lines((part) => {
            writing = true;
            emit(part);
            writing = false;
          });
        } catch (err) {
          if (!writing) own = err;
          throw err;
        }
      },
      { lease: null },
      false,
      "overlapped",
    );
  } catch (err) {
    if (err === own) throw err;
    throw new PrepareFault(String(err));
  }
}

/**
 * Wait for Logs being prepared. Throws the first failure (in plan order, as writing them one after the
 * other would meet it) after the others are discarded; returns them all when none failed.
 */
async function settlePrepared(groups: Array<Array<Promise<PreparedLog>>>): Promise<PreparedLog[][]> {
  const settled = await Promise.all(groups.map((g) => Promise.allSettled(g)));
  const failed = settled.flat().find((r) => r.status === "rejected");
  if (failed === undefined) return settled.map((g) => g.map((r) => (r as PromiseFulfilledResult<PreparedLog>).value));
  for (const r of settled.flat()) if (r.status === "fulfilled") discardPreparedLog(r.value);
  throw failed.reason;
}

/** Wait for Logs being prepared and discard them all (the plan they belong to failed). */
async function discardPreparing(groups: Array<Array<Promise<PreparedLog>>>): Promise<void> {
  for (const r of (await Promise.all(groups.map((g) => Promise.allSettled(g)))).flat()) if (r.status === "fulfilled") discardPreparedLog(r.value);
}

/** Plan one source file: read, check against the Workspace, plan its batch. Writes nothing (but temp files, with `prepare`). */
async function planFile(ws: string, src: SourceFile, unit: UnitState, wsLogs: WorkspaceLogs, options: ClaudeImportOptions, say?: (percent: number | null) => void, prepare = false): Promise<FilePlan> {
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
    const trusted = stillKnown(wsLogs.index.get(src.rootId), src.sourceKey, st, { bytes: imported, sha256: checkpoint.sha256 });
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
        prepared: [],
        known,
      };
    }
  }
  const bytes = readSource(src, unit.files);
  const read = readTranscriptBytes(bytes, src.file, Boolean(options.lenient), bytes.length >= PROGRESS_BYTES ? say : undefined, true, true);
  if (read.records.length === 0 && !rootExists) {
    return { report: { ...base, status: "empty", blank_lines: read.blankLines, pending_tail_bytes: read.pendingTailBytes }, writes: [], prepared: [] };
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
  const preparing: Array<Promise<PreparedLog>> = [];
  const logs: ClaudeLogReport[] = [];
  try {
    for (const log of plan.logs) {
      if (log.existed) {
        if (log.batch.length === 0) logs.push(logReport(log, "unchanged"));
        else {
          writes.push({ id: log.id, existed: true, lines: serializeAll(log.batch, src, plan), count: log.batch.length });
          logs.push(logReport(log, dry ? "would_append" : "appended"));
        }
        continue;
      }
      if (log.batch.length === 0) continue;
      // A fresh unit's Log cannot exist (a Log that appeared since fails prepareLog, and the unit is then
      // planned the plain way, which compares it).
      if (prepare) {
        preparing.push(prepareNewLog(ws, log.id, (emit) => serializeEach(log.batch, src, plan, emit)));
        logs.push(logReport(log, "created"));
        continue;
      }
      const text = serializeAll(log.batch, src, plan);
      let status: ClaudeLogStatus = dry ? "would_create" : "created";
      if (wsLogs.exists(log.id)) {
        if (readFileSync(logPath(ws, log.id).abs).toString("utf8") !== text) {
          throw refusal(ws, src, log.id, "log_differs");
        }
        status = "unchanged";
      } else writes.push({ id: log.id, existed: false, lines: text, count: log.batch.length });
      logs.push(logReport(log, status));
    }
  } catch (err) {
    await discardPreparing([preparing]);
    throw err;
  }
  const rootStatus = logs.find((l) => l.session_id === src.rootId)?.status;
  const status: ClaudeFileStatus =
    writes.length + preparing.length === 0 ? "unchanged" : rootStatus === "created" || rootStatus === "would_create" ? (dry ? "would_create" : "created") : dry ? "would_append" : "appended";
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
    prepared: [],
    preparing,
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

type Say = (percent: number | null) => void;

/** What planning a unit needs of its run. */
interface PlanRun {
  ws: string;
  wsLogs: WorkspaceLogs;
  options: ClaudeImportOptions;
  /** §3.7: the Logs of a fork file's source session. */
  forkSource: (sessionId: string) => Promise<ForkSource | null>;
  /** Write the unit's new Logs to prepared temp files (a fresh unit, planFile `prepare`). */
  prepare: boolean;
}

const unitFiles = (unit: ImportUnit): SourceFile[] => [...unit.subagents, ...(unit.session ? [unit.session] : [])];

/**
 * Plan the files of a unit: its subagent files, then its session file (§4.1), each a link target for the
 * others (nested subagents, §3.6). On a failure, the temp files of the unit's prepared Logs go.
 */
async function planUnit(run: PlanRun, unit: ImportUnit, says?: Map<SourceFile, Say | undefined>): Promise<FilePlan[]> {
  const { ws, wsLogs, options } = run;
  const state: UnitState = { subagents: new Map(), createdSubagent: false, forkSource: run.forkSource, linkedBySubagents: [], files: run.prepare ? new FileBuffers() : undefined };
  for (const sub of unit.subagents) state.subagents.set(sub.agentId!, { rootId: sub.rootId, parentUuids: parentUuidsOf(sub), compaction: sub.agentId!.startsWith("acompact-") });
  const plans: FilePlan[] = [];
  try {
    for (const sub of unit.subagents) {
      const p = await planFile(ws, sub, state, wsLogs, options, says?.get(sub), run.prepare);
      if (p.report.status === "empty") state.subagents.get(sub.agentId!)!.rootId = null;
      const batch = p.batch;
      const familyIds = p.report.logs.map((l) => l.session_id);
      state.linkedBySubagents.push(batch !== undefined ? () => childrenNamedInPlan(batch) : () => childrenNamedIn(ws, familyIds));
      if (p.writes.some((w) => w.id === sub.rootId && !w.existed) || p.report.logs.some((l) => l.session_id === sub.rootId && l.status === "created")) state.createdSubagent = true;
      plans.push({ report: p.report, writes: p.writes, prepared: [], preparing: p.preparing, known: p.known });
    }
    if (unit.session) plans.push(await planFile(ws, unit.session, state, wsLogs, options, says?.get(unit.session), run.prepare));
  } catch (err) {
    await discardPreparing(plans.map((p) => p.preparing ?? []));
    state.files?.done();
    throw err;
  }
  // The unit's Logs are written to their temp files together: one's fsync waits while the next is made.
  const prepared = await settlePrepared(plans.map((p) => p.preparing ?? [])).finally(() => state.files?.done());
  plans.forEach((p, i) => {
    p.prepared = prepared[i]!;
    p.preparing = undefined;
  });
  return plans;
}

/** A fresh unit to prepare (on a worker thread, or in this one). */
export interface UnitTask {
  ws: string;
  unit: ImportUnit;
  lenient: boolean;
  program: string;
}

/** A file of a prepared unit, as it crosses from a worker thread. */
interface SentFile {
  report: ClaudeFileReport;
  prepared: SentPrepared[];
  known?: { rootId: string; entry: KnownFile };
}

export type UnitOutcome =
  | { kind: "done"; files: SentFile[] }
  /** A temp file could not be written: the unit is checked again and written the plain way. */
  | { kind: "write_failed" }
  | { kind: "error"; error: { kind: string; message: string; details: Record<string, unknown> } | { internal: string } }
  /** The run stopped before the unit was prepared. */
  | { kind: "stopped" };

/**
 * claude-interop.md §4.2, §4.4: a unit none of whose Logs can exist yet, checked and planned, its new
 * Logs written to temp files that the writing pass puts in place under their leases. One read and one
 * parse of each line; the Logs are never held in memory as text.
 */
export async function prepareFreshUnit(task: UnitTask, says?: Map<SourceFile, Say | undefined>): Promise<UnitOutcome> {
  const options: ClaudeImportOptions = { paths: [], lenient: task.lenient, program: task.program, env: {} };
  const run: PlanRun = { ws: task.ws, wsLogs: new WorkspaceLogs(task.ws), options, forkSource: async () => null, prepare: true };
  try {
    const plans = await planUnit(run, task.unit, says);
    return { kind: "done", files: plans.map((p) => ({ report: p.report, prepared: p.prepared.map(sentPrepared), known: p.known })) };
  } catch (err) {
    if (err instanceof PrepareFault) return { kind: "write_failed" };
    return { kind: "error", error: err instanceof PixirError ? { kind: err.kind, message: err.message, details: err.details } : { internal: String((err as Error)?.stack ?? err) } };
  }
}

/** The error of a unit that failed on another thread, as this thread throws it. */
function unitOutcomeError(e: Extract<UnitOutcome, { kind: "error" }>["error"]): Error {
  return "internal" in e ? new PixirError("internal_error", undefined, { reason: "claude_unit_failed", stack: e.internal }) : new PixirError(e.kind as never, e.message, e.details);
}

const UNIT_WORKER_FILE = "./claude-unit-worker.js";
/** Each worker holds a unit's records: two at most unless PIXIR_SCAN_THREADS asks for more (the 256 MiB bound). */
const MAX_UNIT_THREADS = 2;
/** Below this many bytes of fresh units, starting workers costs more than it saves. */
const PARALLEL_UNIT_BYTES = 8 * 1024 * 1024;
/** Units in flight per thread, queued or being prepared. */
const UNITS_AT_ONCE = 4;
/**
 * Units a worker holds at once. One: a unit's Logs are already written and synced together (overlapped),
 * and a second unit per worker took 1 GiB's import from 247 to 274 MiB at the same speed.
 */
const UNITS_PER_WORKER = 1;
/**
 * A worker's young generation, at most (MiB): V8's default lets each worker's heap grow past what the
 * 256 MiB bound of docs/performance.md allows for two; the work is the same with less.
 */
const WORKER_YOUNG_MB = 8;

/** The temp files a unit cut short left beside its Logs (`<base>*.ndjson.tmp-*`). */
function removeUnitTempFiles(task: UnitTask): void {
  const dir = sessionsDir(task.ws).abs;
  const bases = new Set(unitFiles(task.unit).map((f) => f.base));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = logTempOwner(name);
    if (owner !== null && bases.has(owner.split(".")[0]!)) rmSync(path.join(dir, name), { force: true });
  }
}

function freshBytes(units: ImportUnit[]): number {
  let total = 0;
  for (const u of units) {
    for (const f of unitFiles(u)) {
      try {
        total += statSync(f.abs).size;
      } catch {
        /* named when the file is read */
      }
    }
  }
  return total;
}

/** Logs whose leases are taken together at most (§4.4: a batch of prepared files committed in run order). */
const COMMIT_BATCH_LOGS = 128;

/**
 * The writing pass of prepared files (§4.4), in run order: the leases of a batch of files are taken
 * together, each file's Logs are renamed into place (parents before children) under them, the renames
 * are made durable by one fsync of the sessions directory (envelope-and-log.md §8.2), the import index
 * entries follow, and the leases are released. A lease refused, or a rename that fails, ends the run
 * there: the files before it stay written, that file's Logs are taken back.
 */
class PreparedCommits {
  private files: FilePlan[] = [];
  private logs = 0;
  /** A file of the run has been written (by this or the plain writer). */
  recorded = false;

  constructor(
    private readonly ws: string,
    private readonly options: ClaudeImportOptions,
    private readonly index: ImportIndex,
  ) {}

  async add(plan: FilePlan): Promise<void> {
    this.files.push(plan);
    this.logs += plan.prepared.length;
    if (this.logs >= COMMIT_BATCH_LOGS) await this.flush();
  }

  async flush(): Promise<void> {
    const files = this.files;
    this.files = [];
    this.logs = 0;
    if (files.length === 0) return;
    const { ws, options } = this;
    const leases = await acquireLeases(
      ws,
      files.flatMap((f) => f.prepared.map((p) => p.id)),
      { program: options.program, env: options.env, signal: options.signal },
    );
    const written: FilePlan[] = [];
    let failure: unknown = null;
    let renamed = false;
    try {
      let at = 0;
      for (const f of files) {
        const held = leases.slice(at, (at += f.prepared.length));
        const refused = held.find((l) => !(l instanceof WriterLease));
        if (refused !== undefined) {
          failure = refused;
          break;
        }
        const created: PreparedLog[] = [];
        try {
          for (let i = 0; i < f.prepared.length; i++) {
            const p = f.prepared[i]!;
            commitPreparedLog(ws, p, { lease: held[i] as WriterLease, signal: options.signal }, { syncDir: false });
            created.push(p);
            renamed = true;
          }
        } catch (err) {
          // As writeFile: the root Log's checkpoint says the whole file is imported, so none of it may stay.
          for (const p of created.reverse()) unlinkSync(p.final.abs);
          for (const p of f.prepared) if (!created.includes(p)) discardPreparedLog({ ...p, createdDirs: [] });
          f.prepared = [];
          failure = err;
          break;
        }
        f.prepared = [];
        written.push(f);
      }
      if (renamed) fsyncDir(sessionsDir(ws));
      this.index.add(written.flatMap((f) => (f.known !== undefined ? [f.known] : [])));
    } finally {
      const tidy = !this.recorded && written.length === 0;
      const own = leases.filter((l): l is WriterLease => l instanceof WriterLease);
      // The first lease made the state directories the others sit in: it goes last.
      await Promise.all(own.slice(1).map((l) => l.releaseAsync(tidy)));
      await own[0]?.releaseAsync(tidy);
    }
    const before = this.recorded;
    if (written.length > 0) this.recorded = true;
    // §4.4: units already written stay written; the error says so rather than "nothing was changed".
    if (failure !== null) throw before || written.length > 0 ? afterEarlierWrites(failure, ws) : failure;
  }
}

export async function importClaude(ws: string, options: ClaudeImportOptions): Promise<ClaudeImportResult> {
  const paths = options.paths.length > 0 ? options.paths : [defaultProjectsRoot(options.env)];
  for (const p of paths) if (!existsSync(p)) throw new PixirError("not_found", "path was not found", { path: p, next_actions: ["pass the path of a Claude Code projects directory", "set CLAUDE_CONFIG_DIR"] });
  // A killed earlier import's temp files go first (under each Log's lease), so check finds none after this run.
  if (!options.dryRun) await sweepStaleTempFiles(ws, { program: options.program, env: options.env, signal: options.signal });
  const links: string[] = [];
  const units = discoverUnits(paths, links).filter((u) => u.session === null || options.skipFile?.(u.session.abs) !== true);
  const skippedFiles = links.map((file) => ({ file, reason: "symlink" as const }));
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
    const known = wsLogs.index.get(u.session.rootId);
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
  const planRun: PlanRun = { ws, wsLogs, options, forkSource, prepare: false };
  const planHere = async (unit: ImportUnit, says?: Map<SourceFile, Say | undefined>): Promise<FilePlan[]> => {
    const plans = await planUnit(planRun, unit, says);
    const session = plans.at(-1)?.batch;
    if (unit.session !== null && session !== undefined && neededSources.has(unit.session.claudeSessionId)) sourcePlans.set(unit.session.claudeSessionId, forkSourceOfPlan(unit.session.claudeSessionId, session));
    return plans.map((p) => ({ report: p.report, writes: p.writes, prepared: p.prepared, known: p.known }));
  };

  // A unit none of whose Logs can exist yet (no Log id is its base id or starts with it, §3.1), and that no
  // fork file needs planned, is prepared by the checking pass: planned once, its Logs written to temp files.
  const basesPresent = new Set(wsLogs.all().map((id) => id.split(".")[0]!));
  const fresh = (unit: ImportUnit, files: SourceFile[]) =>
    !options.dryRun && !forkOf.has(unit) && !(unit.session !== null && neededSources.has(unit.session.claudeSessionId)) && files.every((f) => !basesPresent.has(f.base));

  const total = units.length;
  const reports: Array<ClaudeFileReport[] | null> = new Array(total).fill(null);
  const held: Array<FilePlan[] | null> = new Array(total).fill(null);
  let heldBytes = 0;
  const unitError = (err: unknown, files: SourceFile[]): ClaudeFileReport[] => {
    const isUnitError = err instanceof PixirError && (err.kind === "invalid_claude_session" || err.kind === "already_exists");
    if (!options.lenient || !isUnitError) throw err;
    const error = { kind: err.kind, message: err.message, details: err.details };
    // Only the file the error names has that problem; the unit's other files are skipped with it, not changed.
    const culprit = typeof err.details.file === "string" ? err.details.file : null;
    const withIt = { kind: "unit_skipped", message: `not imported: ${culprit ?? "a file"} of the same session was skipped`, details: { reason: "unit_skipped", file: culprit } };
    return files.map((f) => skippedReport(f, culprit === null || f.file === culprit ? error : withIt));
  };

  const freshUnits = units.filter((u) => !duplicates.has(u) && fresh(u, unitFiles(u)));
  const asked = options.env.PIXIR_SCAN_THREADS !== undefined && options.env.PIXIR_SCAN_THREADS !== "";
  const threads = freshUnits.length === 0 ? 1 : Math.min(scanThreadCount(options.env, freshBytes(freshUnits), PARALLEL_UNIT_BYTES), asked ? Infinity : MAX_UNIT_THREADS);
  const pool = WorkerPool.open<UnitTask, UnitOutcome>(new URL(UNIT_WORKER_FILE, import.meta.url), threads, (task) => prepareFreshUnit(task), removeUnitTempFiles, { perWorker: UNITS_PER_WORKER, limits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB } });
  const stop = (): void => void pool.close({ kind: "stopped" });
  options.signal?.addEventListener("abort", stop, { once: true });
  const stateBefore: Array<[string, boolean]> = [sessionsDir(ws).abs, path.join(ws, ".pixir")].map((d) => [d, existsSync(d)]);
  let preparing = true;
  const inFlight: Array<{ i: number; unit: ImportUnit; files: SourceFile[]; says: Map<SourceFile, Say | undefined>; done: Promise<UnitOutcome> }> = [];
  const commits = new PreparedCommits(ws, options, wsLogs.index);

  /** §4.2 for a unit planned here: plan now and hold the plans, or (fresh) only check it and plan it when writing. */
  const checkHere = async (i: number, unit: ImportUnit, files: SourceFile[], says: Map<SourceFile, Say | undefined>): Promise<void> => {
    try {
      if (fresh(unit, files) && files.every((f) => linesFitLog(f, options, says.get(f)))) return;
      const plans = await planHere(unit, says);
      reports[i] = plans.map((p) => p.report);
      const size = plans.reduce((n, p) => n + p.writes.reduce((m, w) => m + w.lines.length, 0), 0);
      const keep = heldBytes + size <= HELD_PLAN_BYTES;
      if (keep) heldBytes += size;
      held[i] = keep ? plans : null;
    } catch (err) {
      reports[i] = unitError(err, files);
      held[i] = [];
    }
  };
  /** The outcome of a unit prepared in the pool, taken in run order. */
  const settle = async (job: (typeof inFlight)[number]): Promise<void> => {
    const outcome = await job.done;
    if (outcome.kind === "done" && preparing) {
      const plans: FilePlan[] = outcome.files.map((f) => ({ report: f.report, writes: [], prepared: f.prepared.map((p) => receivedPrepared(ws, p)), known: f.known }));
      held[job.i] = plans;
      reports[job.i] = plans.map((p) => p.report);
      // A worker's progress is shown as its unit is taken.
      for (const f of job.files) {
        const say = job.says.get(f);
        say?.(null);
        if (say !== undefined && statSync(f.abs).size >= PROGRESS_BYTES) say(100);
      }
      return;
    }
    if (outcome.kind === "stopped") {
      options.signal?.throwIfAborted?.();
      throw new PixirError("interrupted", undefined, { signal: "SIGINT" });
    }
    if (outcome.kind === "done") for (const f of outcome.files) for (const p of f.prepared) discardPreparedLog({ ...receivedPrepared(ws, p), createdDirs: [] });
    if (outcome.kind === "error" && preparing) {
      for (const f of job.files) job.says.get(f)?.(null);
      reports[job.i] = unitError(unitOutcomeError(outcome.error), job.files);
      held[job.i] = [];
      return;
    }
    // A temp file that could not be written (a full disk): from this unit on, the run checks here and
    // writes the plain way, which names the failure where it happens (§4.4). Prepared units after it go
    // too, as their temp files may hold the room this one needed.
    if (outcome.kind === "write_failed") preparing = false;
    await checkHere(job.i, job.unit, job.files, job.says);
  };

  let recorded = false;
  try {
    for (let i = 0; i < total; i++) {
      const unit = units[i]!;
      options.signal?.throwIfAborted?.();
      const dup = duplicates.get(unit);
      const files = unitFiles(unit);
      const says = new Map(files.map((f) => [f, sayFor(f)]));
      if (dup !== undefined) {
        reports[i] = unitError(new PixirError("invalid_claude_session", undefined, { reason: "duplicate_session", file: dup }), files);
        held[i] = [];
        continue;
      }
      if (preparing && fresh(unit, files)) {
        const task: UnitTask = { ws, unit, lenient: Boolean(options.lenient), program: options.program };
        const here = threads <= 1;
        inFlight.push({ i, unit, files, says: here ? new Map() : says, done: here ? prepareFreshUnit(task, says) : pool.run(task) });
        // In this thread a unit's plan stays in memory until its temp files are synced: one more at most.
        while (inFlight.length > (here ? 1 : UNITS_AT_ONCE * threads)) await settle(inFlight.shift()!);
        continue;
      }
      // Errors are met in run order: the units before this one are settled first.
      while (inFlight.length > 0) await settle(inFlight.shift()!);
      await checkHere(i, unit, files, says);
    }
    while (inFlight.length > 0) await settle(inFlight.shift()!);
    await pool.close({ kind: "stopped" });

    if (!options.dryRun) {
      for (let i = 0; i < units.length; i++) {
        let plans = held[i];
        if (plans === null) {
          try {
            plans = await planHere(units[i]!);
          } catch (err) {
            reports[i] = unitError(err, unitFiles(units[i]!));
            continue;
          }
          reports[i] ??= plans.map((p) => p.report);
        }
        for (const p of plans) {
          if (p.prepared.length > 0) {
            await commits.add(p);
            continue;
          }
          if (p.writes.length > 0) {
            await commits.flush();
            try {
              await writeFile(ws, p.writes, options);
            } catch (err) {
              // §4.4: units already written stay written; the error says so rather than "nothing was changed".
              throw commits.recorded ? afterEarlierWrites(err, ws) : err;
            }
            commits.recorded = true;
          }
          if (p.known !== undefined) wsLogs.index.add([p.known]);
        }
      }
      await commits.flush();
      recorded = commits.recorded;
    }
  } finally {
    options.signal?.removeEventListener("abort", stop);
    wsLogs.index.close();
    await pool.close({ kind: "stopped" });
    // Whatever was prepared and not put in place goes, with the state directories made for it if empty.
    for (const job of inFlight.splice(0)) {
      const outcome = await job.done;
      if (outcome.kind === "done") for (const f of outcome.files) for (const p of f.prepared) discardPreparedLog({ ...receivedPrepared(ws, p), createdDirs: [] });
    }
    for (const plans of held) for (const p of plans ?? []) for (const l of p.prepared) discardPreparedLog({ ...l, createdDirs: [] });
    for (const [dir, was] of stateBefore) {
      if (was) continue;
      try {
        rmdirSync(dir);
      } catch {
        /* not empty, or gone */
      }
    }
  }
  return { ok: true, recorded, dry_run: Boolean(options.dryRun), workspace: ws, imports: reports.flatMap((r) => r ?? []), ...(skippedFiles.length > 0 ? { skipped_files: skippedFiles } : {}) };
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
