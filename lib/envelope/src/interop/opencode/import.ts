// docs/gemini-opencode-interop.md §6: `pixir import opencode [PATH…]`. Every session is read and planned and
// every Log compared with the disk before anything is written; a Log on disk that is a prefix of its plan
// gets the rest appended, one that differs otherwise is refused. Sessions are read one at a time (§8).
import { sha256Hex } from "../../event/ids.js";
import path from "node:path";
import { PixirError } from "../../event/errors.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { discardPreparedLog, prepareLog, type PreparedLog } from "../../store/log-write.js";
import { withPlannedWrites, type DiskState } from "../../store/planned-logs.js";
import { needsWrite, plannedOnDisk, plannedStatus, preparePlannedLog, type AgentImportOptions, type ImportedLog, type ImportResult } from "../../session/agent-files.js";
import { checkOpencodeLog, opencodeLogBytes, PlannedSessions, planOpencodeSession, type PlannedOpencodeLog } from "./plan.js";
import { opencodeHome, openOpencodePath, type OpencodeSessionRef, type OpencodeSource } from "./source.js";

export interface OpencodeImportOptions extends AgentImportOptions {
  /** Planned bytes kept between the check and the write (default KEPT_BYTES_BUDGET); past it a session is planned again. */
  keptBytes?: number;
}

export interface OpencodeImportResult extends ImportResult<{ source: string; session_id: string; parent_session_id: string | null; title: string | null; message_count: number; sessions: ImportedLog[] }> {
  skipped_records: string[];
}

/** A planned Log as the run keeps it once its session is let go: its disk state, and a new Log's temp file or an append's bytes while the budget allows. */
interface LogWork {
  sessionId: string;
  role: string;
  parentId: string | null;
  eventCount: number;
  disk: DiskState;
  before: number;
  /** An append's planned bytes, kept for the write when they fit the budget; else null and `digest` checks the plan made again. */
  bytes: Buffer | null;
  digest: string;
  /** A new Log: its temp file, made during the check and renamed into place by the write. */
  prepared: PreparedLog | null;
}

interface SessionWork {
  index: number;
  ref: OpencodeSessionRef;
  parentId: string | null;
  title: string | null;
  messageCount: number;
  logs: LogWork[];
}

/**
 * Planned bytes a run keeps between the check and the write for Logs to append to (new Logs go to temp files
 * at once); past it a session is read and planned again to be written.
 */
export const KEPT_BYTES_BUDGET = 8 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);
const toWrite = (w: LogWork): boolean => needsWrite(w.disk);

/**
 * Sessions are read, planned and compared with the disk one at a time (a changed Log refuses the run before
 * any Log is written); only what the output and the write need is kept: a new Log's temp file (its lines
 * written as they are made), an append's bytes within the budget. Then the Logs to write are leased and put in
 * place a session at a time (a temp file renamed, kept bytes written, or, for an append past the budget, the
 * session planned again: the database is read in one transaction, so again means the same).
 */
export async function importOpencode(ws: string, options: OpencodeImportOptions): Promise<OpencodeImportResult> {
  const skipped: string[] = [];
  const home = opencodeHome(options.env);
  const roots = options.paths.length > 0 ? options.paths : [{ path: home, display: home }];
  const sources: OpencodeSource[] = [];
  const work: SessionWork[] = [];
  try {
    for (const r of roots) sources.push(...openOpencodePath(r.path, r.display, Boolean(options.lenient), skipped));
    const planned = new PlannedSessions();
    await checkSessions(ws, sources, planned, work, { ...options, budget: options.keptBytes ?? KEPT_BYTES_BUDGET }, skipped);
    const writing = work.flatMap((s) => s.logs.filter(toWrite).map((l) => l.sessionId));
    if (!options.dryRun && writing.length > 0) await writeSessions(ws, work, planned, options);
    return result(ws, work, Boolean(options.dryRun), writing.length > 0, skipped);
  } finally {
    // A refusal or a failure: the temp files of the new Logs not yet in place go (the last made first, as it
    // made no directory the others need).
    for (const l of work.flatMap((s) => s.logs).reverse()) if (l.prepared !== null) discardPreparedLog(l.prepared);
    for (const s of sources) s.close();
  }
}

/** Read, plan and compare every session with the disk, in order; a Log that differs otherwise refuses the run. */
async function checkSessions(ws: string, sources: OpencodeSource[], planned: PlannedSessions, out: SessionWork[], options: OpencodeImportOptions & { budget: number }, skipped: string[]): Promise<void> {
  const seen = new Set<string>();
  const budget = { left: options.budget };
  for (const source of sources) {
    for (const ref of source.sessions) {
      // A session both in the database and in a leftover storage/ tree: the database (read first) wins.
      if (seen.has(ref.id)) continue;
      seen.add(ref.id);
      await checkSession(ws, ref, planned, out, options, budget, skipped);
    }
  }
}

/**
 * One session of checkSessions, pushed to `out`. Its records and plan live only in this call, so they are
 * garbage before the next session is read (kept in the loop's frame, two sessions' plans overlapped).
 */
async function checkSession(ws: string, ref: OpencodeSessionRef, planned: PlannedSessions, out: SessionWork[], options: OpencodeImportOptions, budget: { left: number }, skipped: string[]): Promise<void> {
  const session = ref.read(Boolean(options.lenient), skipped);
  const logs = planOpencodeSession(ws, session, planned);
  const index = planned.size;
  planned.add(ref, session);
  const entry: SessionWork = {
    index,
    ref,
    parentId: typeof session.info.parentID === "string" ? session.info.parentID : null,
    title: typeof session.info.title === "string" ? session.info.title : null,
    messageCount: session.messages.length,
    logs: [],
  };
  out.push(entry);
  const checked = checkLogs(ws, logs, session.source, Boolean(options.dryRun));
  for (const [j, log] of logs.entries()) {
    const w = checked.work[j]!;
    entry.logs.push(w);
    if (!toWrite(w) || options.dryRun) continue;
    const bytes = checked.bytes?.[j] ?? null;
    if (w.disk.state === "absent") {
      // A new Log goes to its temp file now: it is planned once, and its bytes are not kept.
      w.prepared = bytes === null ? await preparePlannedLog(ws, log.sessionId, log.stored, session.source, undefined, options.signal) : await prepareLog(ws, log.sessionId, async (emit) => emit(bytes), { lease: null, signal: options.signal });
    } else if (bytes!.length <= budget.left) {
      budget.left -= bytes!.length;
      w.bytes = bytes;
    } else w.digest = sha256Hex(bytes!);
  }
}

/** True when no Log of the session is on disk (a path that cannot be inspected is left to diskState to report). */
function allAbsent(ws: string, logs: PlannedOpencodeLog[]): boolean {
  try {
    return logs.every((log) => inspectStatePath(logPath(ws, log.sessionId)) === "missing");
  } catch {
    return false;
  }
}

/**
 * A session's Logs compared with the disk (a Log that differs otherwise refuses the run). Their bytes are made
 * only to compare them with Logs on disk; when every Log is new their lines are checked (`log_encode_failed`)
 * as they are written to their temp files, or now in a dry run.
 */
function checkLogs(ws: string, logs: PlannedOpencodeLog[], source: string, dryRun: boolean): { work: LogWork[]; bytes: Buffer[] | null } {
  const work = (log: PlannedOpencodeLog, disk: { disk: DiskState; before: number }): LogWork => ({ sessionId: log.sessionId, role: log.role, parentId: log.parent?.sessionId ?? null, eventCount: log.stored.length, ...disk, bytes: null, digest: "", prepared: null });
  if (allAbsent(ws, logs)) {
    if (dryRun) for (const log of logs) checkOpencodeLog(log, source);
    return { work: logs.map((log) => work(log, { disk: { state: "absent" }, before: 0 })), bytes: null };
  }
  // Every Log's lines are checked before any is compared with the disk.
  const bytes = logs.map((log) => opencodeLogBytes(log, source));
  return { work: logs.map((log, j) => work(log, plannedOnDisk(ws, { sessionId: log.sessionId, bytes: bytes[j]!, stored: log.stored }, source))), bytes };
}

/** Lease every Log to write, then write them a session at a time, parents first (plan order). */
async function writeSessions(ws: string, work: SessionWork[], planned: PlannedSessions, options: OpencodeImportOptions): Promise<void> {
  const ids = work.flatMap((s) => s.logs.filter(toWrite).map((l) => l.sessionId));
  await withPlannedWrites(ws, ids, options, async (write) => {
    for (const s of work) {
      const logs = s.logs.filter(toWrite);
      if (logs.length === 0) continue;
      const again = logs.some((l) => l.bytes === null && l.prepared === null) ? planOpencodeSession(ws, s.ref.read(true, []), planned, s.index) : [];
      const source = s.ref.source;
      for (const l of logs) {
        if (l.prepared !== null) {
          const prepared = l.prepared;
          l.prepared = null; // committed, or taken back by the commit that failed
          await write({ log: { sessionId: l.sessionId, bytes: EMPTY }, disk: l.disk, prepared });
          continue;
        }
        const log = l.bytes === null ? again.find((p) => p.sessionId === l.sessionId) : undefined;
        const bytes = l.bytes ?? (log === undefined ? null : opencodeLogBytes(log, source));
        if (bytes === null || (l.bytes === null && sha256Hex(bytes) !== l.digest)) {
          throw new PixirError("log_write_failed", undefined, { reason: "source_changed_during_import", path: logPath(ws, l.sessionId).rel, file: s.ref.source });
        }
        await write({ log: { sessionId: l.sessionId, bytes }, disk: l.disk });
        l.bytes = null;
      }
    }
  });
}

function result(ws: string, work: SessionWork[], dry: boolean, writes: boolean, skipped: string[]): OpencodeImportResult {
  return {
    ok: true,
    recorded: !dry && writes,
    dry_run: dry,
    workspace: path.resolve(ws),
    imports: work.map((s) => ({
      source: s.ref.source,
      session_id: s.logs[0]!.sessionId,
      parent_session_id: s.parentId,
      title: s.title,
      message_count: s.messageCount,
      sessions: s.logs.map((w) => ({ session_id: w.sessionId, role: w.role, parent_session_id: w.parentId, event_count: w.eventCount, new_event_count: w.eventCount - w.before, status: plannedStatus(w.disk, dry) })),
    })),
    skipped_records: skipped,
  };
}
