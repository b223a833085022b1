// claude-interop.md §4.1–§4.3: planning a unit (its subagent files, then its session file): each file read
// (source.ts), checked against what the Workspace holds (workspace-logs.ts), its batch planned (plan.ts) and
// its writes made ready: Log text, or (a fresh unit) temp files written by apply.ts. Nothing is put in place.
import { readFileSync } from "node:fs";
import type { PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { sentPrepared, type LineSink, type PreparedLog, type SentPrepared } from "../../store/log-write.js";
import { logPath } from "../../store/paths.js";
import { discardPreparing, prepareNewLog, PrepareFault, serializeAll, serializeEach, settlePrepared } from "./apply.js";
import { childLogId, subagentIdOf, type ImportUnit, type SourceFile } from "./discover.js";
import type { ForkSource } from "./fork-file.js";
import { eventFacts } from "./held-event.js";
import { knownEntry, statFile, stillKnown, type KnownFile } from "./known.js";
import { planBatch, type BatchPlan } from "./plan.js";
import { refusal, type LogPlan, type SubagentTarget } from "./plan-log.js";
import { emptyReport, forkedFromOfRoot, logReport, unchangedLog, type ClaudeFileReport, type ClaudeFileStatus, type ClaudeImportOptions, type ClaudeLogReport, type ClaudeLogStatus, type FilePlan, type LogWrite } from "./report.js";
import { FileBuffers, hasLineAfter, parentUuidsOf, readingSource, readTranscript, sha256Prefix } from "./source.js";
import { childrenNamedIn, heldRecordCount, lastCheckpoint, loadExisting, WorkspaceLogs } from "./workspace-logs.js";

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

const childrenNamedInPlan = (plan: BatchPlan): string[] =>
  plan.logs.flatMap((l) => l.events.flatMap((e) => (e.type === "subagent_event" ? (eventFacts(e).child ?? []) : [])));

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
  const { read, sha256 } = readTranscript(src, Boolean(options.lenient), say, unit.files);
  if (read.records.length === 0 && !rootExists) {
    return { report: { ...base, status: "empty", blank_lines: read.blankLines, pending_tail_bytes: read.pendingTailBytes }, writes: [], prepared: [] };
  }
  const existing = rootExists ? await loadExisting(ws, await wsLogs.family(src.rootId, src.sourceKey)) : [];
  // §3.6: children already named by a subagent_event of the unit's Logs (this file's, its subagents').
  const linked = new Set<string>();
  for (const l of existing) for (const e of l.events) if (e.type === "subagent_event" && eventFacts(e).child !== null) linked.add(eventFacts(e).child!);
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

  // Each Log's lines are made and checked here (a line too long is named before anything is written) and
  // made again as they are written, not kept; a dry run writes nothing.
  const write = (id: string, existed: boolean, events: PixirEvent[]): LogWrite => {
    let size = 0;
    serializeEach(events, src, plan, (part) => (size += part.length));
    const lines = dry ? () => {} : (emit: LineSink) => serializeEach(events, src, plan, emit);
    return { id, existed, lines, size: dry ? 0 : size, count: events.length };
  };
  const writes: LogWrite[] = [];
  const preparing: Array<Promise<PreparedLog>> = [];
  const logs: ClaudeLogReport[] = [];
  try {
    for (const log of plan.logs) {
      if (log.existed) {
        if (log.batch.length === 0) logs.push(logReport(log, "unchanged"));
        else {
          writes.push(write(log.id, true, log.batch));
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
      let status: ClaudeLogStatus = dry ? "would_create" : "created";
      if (wsLogs.exists(log.id)) {
        if (readFileSync(logPath(ws, log.id).abs).toString("utf8") !== serializeAll(log.batch, src, plan)) {
          throw refusal(ws, src, log.id, "log_differs");
        }
        status = "unchanged";
      } else writes.push(write(log.id, false, log.batch));
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
      forked_from: (carrierOf(plan.root)?.data.claude as Record<string, unknown> | undefined)?.forked_from ?? null,
      logs,
    },
    writes,
    prepared: [],
    preparing,
    batch: plan,
    known: dry ? undefined : { rootId: src.rootId, entry: knownEntry(src.sourceKey, st, read.completeBytes, sha256, src.forkedFrom) },
  };
}

/** The root Log's carrier (its first own `claude_transcript` Event), found without a copy of its Events. */
function carrierOf(root: LogPlan): PixirEvent | undefined {
  for (let i = root.ownStart; i < root.events.length; i++) if (eventFacts(root.events[i]!).event === "claude_transcript") return root.events[i];
  return undefined;
}

/** §3.7: a source session's Logs as planned in this run. */
export function forkSourceOfPlan(sessionId: string, plan: BatchPlan): ForkSource {
  const top = (l: LogPlan): string => (l.parent === null ? l.id : top(l.parent));
  const logs = new Map(plan.logs.map((l) => [l.id, { id: l.id, events: l.events, forkRoot: top(l) }]));
  const byUuid = new Map<string, { value: Record<string, unknown>; logId: string; line: number }>();
  for (const r of plan.records) {
    const log = plan.owner.get(r);
    if (r.chain && !r.dup && r.value !== null && log !== undefined && !byUuid.has(r.uuid!)) byUuid.set(r.uuid!, { value: r.value, logId: log.id, line: r.line });
  }
  return { sessionId, logs, byUuid };
}

export type Say = (percent: number | null) => void;

/** What planning a unit needs of its run. */
export interface PlanRun {
  ws: string;
  wsLogs: WorkspaceLogs;
  options: ClaudeImportOptions;
  /** §3.7: the Logs of a fork file's source session. */
  forkSource: (sessionId: string) => Promise<ForkSource | null>;
  /** Write the unit's new Logs to prepared temp files (a fresh unit, planFile `prepare`). */
  prepare: boolean;
}

export const unitFiles = (unit: ImportUnit): SourceFile[] => [...unit.subagents, ...(unit.session ? [unit.session] : [])];

/**
 * Plan the files of a unit: its subagent files, then its session file (§4.1), each a link target for the
 * others (nested subagents, §3.6). On a failure, the temp files of the unit's prepared Logs go.
 */
export async function planUnit(run: PlanRun, unit: ImportUnit, says?: Map<SourceFile, Say | undefined>): Promise<FilePlan[]> {
  const { ws, wsLogs, options } = run;
  const state: UnitState = { subagents: new Map(), createdSubagent: false, forkSource: run.forkSource, linkedBySubagents: [] };
  for (const sub of unit.subagents) state.subagents.set(sub.agentId!, { rootId: sub.rootId, parentUuids: parentUuidsOf(sub), compaction: sub.agentId!.startsWith("acompact-") });
  const plans: FilePlan[] = [];
  // Each file's buffer goes back to be used again once its Logs are in their temp files; at most
  // PREPARING_FILES files are being prepared at once, so a folder of many subagents keeps a flat memory.
  const released: Array<Promise<void>> = [];
  const planOne = async (src: SourceFile): Promise<FilePlan> => {
    state.files = run.prepare ? new FileBuffers() : undefined;
    const files = state.files;
    const p = await planFile(ws, src, state, wsLogs, options, says?.get(src), run.prepare).catch((err: unknown) => {
      files?.done();
      throw err;
    });
    released.push(Promise.allSettled(p.preparing ?? []).then(() => files?.done()));
    if (released.length > PREPARING_FILES) await released[released.length - PREPARING_FILES - 1];
    return p;
  };
  try {
    for (const sub of unit.subagents) {
      const p = await planOne(sub);
      if (p.report.status === "empty") state.subagents.get(sub.agentId!)!.rootId = null;
      // Only the child ids are kept of a subagent's plan, not the plan (it holds the file's records).
      const familyIds = p.report.logs.map((l) => l.session_id);
      const named = p.batch !== undefined ? childrenNamedInPlan(p.batch) : null;
      state.linkedBySubagents.push(named !== null ? () => named : () => childrenNamedIn(ws, familyIds));
      if (p.writes.some((w) => w.id === sub.rootId && !w.existed) || p.report.logs.some((l) => l.session_id === sub.rootId && l.status === "created")) state.createdSubagent = true;
      plans.push({ report: p.report, writes: p.writes, prepared: [], preparing: p.preparing, known: p.known });
    }
    if (unit.session) plans.push(await planOne(unit.session));
  } catch (err) {
    await discardPreparing(plans.map((p) => p.preparing ?? []));
    await Promise.all(released);
    throw err;
  }
  // The unit's Logs are written to their temp files together: one's fsync waits while the next is made.
  const prepared = await settlePrepared(plans.map((p) => p.preparing ?? [])).finally(() => Promise.all(released));
  plans.forEach((p, i) => {
    p.prepared = prepared[i]!;
    p.preparing = undefined;
  });
  return plans;
}

/** Files of a unit whose Logs are being written to temp files at once (planUnit). */
const PREPARING_FILES = 8;

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
