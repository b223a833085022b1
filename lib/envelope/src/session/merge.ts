// cli.md §12.13: merge-back without rewriting. The child's own Events (seq > replay_event_count) are
// condensed by the branch-summary rules (summarize.md) into one branch_summary, appended to the parent
// under the parent's Writer Lease. Every earlier byte of the parent stays as it was.
import type { Writable } from "node:stream";
import { nextSeqFromTail } from "../store/append.js";
import { abortable } from "../lines/abortable.js";
import { isSeq, serializeEvent, type PixirEvent } from "../event/envelope.js";
import { PixirError } from "../event/errors.js";
import { newUlid } from "../event/ids.js";
import { acquireLease } from "../store/lease.js";
import { corruptLineError, readFirstLine } from "../store/log-read.js";
import { notFoundError, openHistory } from "../store/loader.js";
import { appendJournaled, recoverJournal } from "../store/log-write.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { assertSessionId } from "../event/session-id.js";
import { modelAssistedData, summaryBuilder, type BranchSummaryData, type SummaryWarn } from "../summary/summary.js";

export interface MergeOptions {
  childId: string;
  parentId: string;
  dryRun?: boolean;
  /** summarize.md §7: an external command writes the summary text. */
  modelCmd?: string;
  modelTimeoutMs?: number;
  program: string;
  env: NodeJS.ProcessEnv;
  stderr?: Writable;
  warn?: SummaryWarn;
  signal?: AbortSignal;
}

/** The `merge` key of the appended branch_summary. */
export interface MergeFacts {
  child_session_id: string;
  child_from_seq: number | null;
  child_to_seq: number | null;
  child_event_count: number;
  fork_point_seq: unknown;
}

export interface MergeResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  parent_session_id: string;
  child_session_id: string;
  /** The seq of the appended branch_summary (in a dry run, the seq it would get); null when there is nothing to merge. */
  seq: number | null;
  event: (BranchSummaryData & { merge: MergeFacts }) | null;
  /** The child has no own Events: nothing was (or would be) appended. */
  nothing_to_merge?: true;
}

/** The child's first line must be a session_fork naming the parent (otherwise invalid_args, field "into"). */
async function forkHeaderNaming(ws: string, childId: string, parentId: string): Promise<PixirEvent> {
  const p = logPath(ws, childId);
  if (inspectStatePath(p) === "missing") throw notFoundError(childId, ws, p.rel, "pixir merge");
  const first = await readFirstLine(p);
  if (first !== null && "problem" in first) throw corruptLineError(first.problem, first.lineNo, p.rel);
  const header = first?.line.event;
  if (header?.type !== "session_fork" || header.data.parent_session_id !== parentId) {
    throw new PixirError("invalid_args", "the child session is not a fork of the --into session", {
      field: "into",
      reason: "not_a_fork_of_parent",
      next_actions: ["pass the child's parent_session_id (its first-line session_fork) as --into", "inspect the lineage with pixir tree"],
    });
  }
  if (!isSeq(header.data.replay_event_count)) {
    throw corruptLineError({ reason: "unexpected_shape", extra: { field: "session_fork.data" } }, first!.line.lineNo, p.rel);
  }
  return header;
}

/**
 * The branch_summary data of the child's own Events, with `range` over their child seqs and `merge`;
 * null when it has none (a summary of nothing would tell the parent nothing, and no model is asked).
 */
export async function mergeSummaryData(ws: string, options: MergeOptions): Promise<MergeResult["event"]> {
  const header = await forkHeaderNaming(ws, options.childId, options.parentId);
  const parentLog = logPath(ws, options.parentId);
  if (inspectStatePath(parentLog) === "missing") throw notFoundError(options.parentId, ws, parentLog.rel, "pixir merge");
  const n = header.data.replay_event_count as number;
  const history = await openHistory(ws, options.childId);
  const builder = summaryBuilder(options);
  let from: number | null = null;
  let to: number | null = null;
  for await (const { event } of abortable(history.items(), options.signal)) {
    if (event.seq === null || event.seq <= n) continue;
    builder.add(event);
    from ??= event.seq;
    to = event.seq;
  }
  if (builder.count === 0) return null;
  const merge: MergeFacts = {
    child_session_id: options.childId,
    child_from_seq: from,
    child_to_seq: to,
    child_event_count: builder.count,
    fork_point_seq: header.data.forked_to_seq ?? null,
  };
  let data: BranchSummaryData = { ...builder.finish(header), range: { from_seq: from, to_seq: to }, merge };
  if (options.modelCmd !== undefined) {
    data = await modelAssistedData(data, builder.excerpts(), {
      cmd: options.modelCmd,
      cwd: ws,
      env: options.env,
      childSessionId: options.childId,
      timeoutMs: options.modelTimeoutMs,
      stderr: options.stderr,
      signal: options.signal,
      warn: options.warn,
    });
  }
  return data as MergeResult["event"];
}

export async function mergeSession(ws: string, options: MergeOptions): Promise<MergeResult> {
  assertSessionId(options.childId);
  assertSessionId(options.parentId, "into");
  const data = await mergeSummaryData(ws, options);
  if (data === null) {
    // Like compact with nothing to compact: exit 0, no lease, the parent untouched.
    const { parentId, childId, dryRun } = options;
    return { ok: true, recorded: false, dry_run: Boolean(dryRun), parent_session_id: parentId, child_session_id: childId, seq: null, event: null, nothing_to_merge: true };
  }
  const result = (recorded: boolean, seq: number): MergeResult => ({
    ok: true,
    recorded,
    dry_run: Boolean(options.dryRun),
    parent_session_id: options.parentId,
    child_session_id: options.childId,
    seq,
    event: data,
  });
  if (options.dryRun) return result(false, (await nextSeqFromTail(ws, options.parentId)).next);

  const lease = await acquireLease(ws, options.parentId, { program: options.program, env: options.env, signal: options.signal });
  let recorded = false;
  try {
    recoverJournal(ws, options.parentId);
    const { next, tail } = await nextSeqFromTail(ws, options.parentId);
    const event: PixirEvent = { id: newUlid(), session_id: options.parentId, seq: next, ts: new Date().toISOString(), type: "branch_summary", data };
    await appendJournaled(ws, options.parentId, tail, async (emit) => emit(serializeEvent(event)), { lease, signal: options.signal });
    recorded = true;
    return result(true, next);
  } finally {
    lease.release(!recorded);
  }
}
