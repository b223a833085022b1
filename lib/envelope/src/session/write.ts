// cli.md §8.2, envelope-and-log.md §11: `pixir-log write`. A plain stream must be stamped, one
// session_id, seqs contiguous from the Log's next seq; a fork stream goes through the fork rules.
// Nothing becomes visible unless the whole stream checks out.
import { checkInputSessionId, inputLine, InputStream, integrityError, requireStamped, stampedEvent, StreamIds } from "../lines/input.js";
import { stopOnLoss } from "../store/lease.js";
import { appendJournaled, createLogAtomically, type LineSink } from "../store/log-write.js";
import { nextSeqFromTail, writeReport, writeUnderLease, type WriteReport } from "../store/append.js";
import { logPath } from "../store/paths.js";
import { assertSessionId } from "../event/session-id.js";
import { writeForkStream, type ForkWriteResult } from "../fork/fork-write.js";

export interface WriteOptions {
  program: string;
  env: NodeJS.ProcessEnv;
  dryRun?: boolean;
  allowEmpty?: boolean;
  takeOverDeadWriter?: boolean;
  signal?: AbortSignal;
}

export type PlainWriteResult = WriteReport;

export type WriteResult = { fork: false; result: PlainWriteResult } | { fork: true; result: ForkWriteResult };

export async function writeStream(ws: string, targetArg: string | undefined, input: AsyncIterable<Buffer>, options: WriteOptions): Promise<WriteResult> {
  if (targetArg !== undefined) assertSessionId(targetArg);
  // Reading stdin also stops when the lease, once taken, is lost.
  const stop = stopOnLoss(options.signal);
  const stream = new InputStream(input, stop.signal);
  const first = await stream.peek();
  if (first === null && !options.allowEmpty) throw integrityError("empty_stream", "at least one event", 0, null);
  if (first !== null && first.value.type === "session_fork") {
    return { fork: true, result: await writeForkStream(ws, targetArg, stream, { ...options, onLease: stop.follow }) };
  }
  let target = targetArg;
  if (target === undefined) {
    if (first === null) throw integrityError("empty_stream", "at least one event", 0, null);
    checkInputSessionId(first.value.session_id ?? null, String(first.value.session_id ?? ""), first.lineNo);
    target = first.value.session_id as string;
  }
  const id = target;
  const log = logPath(ws, id);
  let count = 0;
  let startSeq = 0;

  /** `lastId`: the id of the Log's last Event, which the stream must not repeat. */
  const produce = (expectedFirst: number, lastId: string | null) => async (emit: LineSink) => {
    startSeq = expectedFirst;
    let expected = expectedFirst;
    const ids = new StreamIds(lastId);
    for (let e = await stream.next(); e !== null; e = await stream.next()) {
      if (e.value.type === "session_fork") {
        throw integrityError("fork_header_on_existing_log", "a plain event", "session_fork", e.lineNo);
      }
      checkInputSessionId(e.value.session_id, id, e.lineNo);
      requireStamped(e);
      const seq = e.value.seq as number;
      if (seq !== expected) {
        throw integrityError(count === 0 ? "seq_conflict" : "seq_gap", expected, seq, e.lineNo);
      }
      ids.admit(e.value.id as string, e.lineNo);
      emit(inputLine(e, stampedEvent(e)));
      expected++;
      count++;
    }
  };
  const result = (created: boolean): PlainWriteResult => writeReport(options.dryRun, id, log.abs, created, startSeq, count);

  if (options.dryRun) {
    const { next, tail } = await nextSeqFromTail(ws, id);
    await produce(next, tail.last?.id ?? null)(() => undefined);
    return { fork: false, result: result(!tail.exists) };
  }
  const acquire = { program: options.program, env: options.env, signal: options.signal, takeOverDeadWriter: options.takeOverDeadWriter };
  return writeUnderLease(ws, id, acquire, stop, async ({ next, tail, ctx }) => {
    if (tail.exists) {
      if (first === null) return { wrote: false, value: { fork: false, result: result(false) } }; // --allow-empty on an existing Log: a no-op
      await appendJournaled(ws, id, tail, produce(next, tail.last?.id ?? null), ctx);
    } else {
      await createLogAtomically(ws, id, produce(0, null), ctx);
    }
    return { wrote: true, value: { fork: false as const, result: result(!tail.exists) } };
  });
}
