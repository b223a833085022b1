// cli.md §12.12: `pixir repair` closes a crashed turn. It first does what `pixir-log repair` does (torn
// tail, leftover journal), then appends one fallback tool_result for every tool call left without a
// result, all or nothing, under the Session's Writer Lease. A second run finds nothing open.
import { serializeEvent, type PixirEvent } from "../event/envelope.js";
import { OpenCalls } from "../fork/fork-plan.js";
import { newUlid } from "../event/ids.js";
import { acquireLease, type WriterOptions } from "../store/lease.js";
import { notFoundError, openHistory } from "../store/loader.js";
import { appendJournaled } from "../store/log-write.js";
import { nextSeqFromTail } from "../store/append.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { repairLog } from "../store/repair.js";
import { abortable } from "../lines/abortable.js";

export const INTERRUPTED_TOOL_MESSAGE = "tool call had no result; recorded by pixir repair";

export interface SessionRepairResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  session_id: string;
  /** The call ids that got (or, in a dry run, would get) a fallback tool_result, in History order. */
  closed_tool_calls: string[];
  torn_tail_repaired: boolean;
  /** Ours, as in pixir-log repair: a leftover append journal was (or would be) rolled back. */
  journal_rolled_back: boolean;
}

/** The data of the fallback Event for one open call (cli.md §12.12, verbatim). */
export function interruptedToolResult(callId: string): PixirEvent["data"] {
  return { call_id: callId, ok: false, error: { kind: "interrupted", message: INTERRUPTED_TOOL_MESSAGE }, repaired: true };
}

/**
 * The call ids of `tool_call`s with no later `tool_result` of the same call_id, in History order, each
 * once. A torn final line may be skipped: a dry run reads the Log as the torn-tail repair would leave it.
 */
export async function openToolCalls(ws: string, id: string, options: { skipTornTail?: boolean; signal?: AbortSignal } = {}): Promise<string[]> {
  const history = await openHistory(ws, id, {
    notFound: () => notFoundError(id, ws, logPath(ws, id).rel, "pixir repair"),
    onProblem: options.skipTornTail ? (problem) => (problem.reason === "torn_tail" ? "skip" : "throw") : undefined,
  });
  const calls = new OpenCalls();
  // A fallback this command wrote closes its call wherever it sorts: a call with a null seq sorts after
  // every Event with one, so no fallback could ever be "later" than it, and each run would add another.
  const fallbacks = new Set<string>();
  for await (const { event } of abortable(history.items(), options.signal)) {
    calls.add(event);
    if (event.type === "tool_result" && event.data.repaired === true && typeof event.data.call_id === "string") fallbacks.add(event.data.call_id);
  }
  return calls.list().filter((callId) => !fallbacks.has(callId));
}

export async function repairSession(ws: string, id: string, options: WriterOptions): Promise<SessionRepairResult> {
  const log = logPath(ws, id);
  if (inspectStatePath(log) === "missing") throw notFoundError(id, ws, log.rel, "pixir repair");
  const result = (closed: string[], torn: boolean, journal: boolean): SessionRepairResult => ({
    ok: true,
    recorded: !options.dryRun && (closed.length > 0 || torn || journal),
    dry_run: Boolean(options.dryRun),
    session_id: id,
    closed_tool_calls: closed,
    torn_tail_repaired: torn,
    journal_rolled_back: journal,
  });

  if (options.dryRun) {
    const logRepair = await repairLog(ws, id, { program: options.program, env: options.env, dryRun: true, signal: options.signal });
    const open = await openToolCalls(ws, id, { skipTornTail: true, signal: options.signal });
    return result(open, logRepair.repaired, logRepair.journal_rolled_back);
  }

  const lease = await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  let recorded = false;
  try {
    // The torn-tail repair borrows our lease (writer-lease.md §7) rather than competing for it.
    const logRepair = await repairLog(ws, id, {
      program: options.program,
      env: { ...options.env, PIXIR_WRITER_LEASE: lease.holderId },
      signal: options.signal,
    });
    const open = await openToolCalls(ws, id, { signal: options.signal });
    if (open.length > 0) {
      const { next, tail } = await nextSeqFromTail(ws, id);
      await appendJournaled(
        ws,
        id,
        tail,
        async (emit) => {
          let seq = next;
          for (const callId of open) {
            emit(serializeEvent({ id: newUlid(), session_id: id, seq: seq++, ts: new Date().toISOString(), type: "tool_result", data: interruptedToolResult(callId) }));
          }
        },
        { lease, signal: options.signal },
      );
    }
    const r = result(open, logRepair.repaired, logRepair.journal_rolled_back);
    recorded = r.recorded;
    return r;
  } finally {
    // A run that changed nothing also leaves no lease directory behind.
    lease.release(!recorded);
  }
}
