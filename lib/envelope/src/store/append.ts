// cli.md §8.3, envelope-and-log.md §9: the Pixir `record` path. Events from stdin get seq, id and ts
// stamped and are appended all or nothing, under the Writer Lease taken before stdin is read.
import { splitLines } from "../lines/codec.js";
import { lineDataText, serializeEvent, type PixirEvent } from "../event/envelope.js";
import { newUlid } from "../event/ids.js";
import { checkInputSessionId, decodeInputLine, integrityError, requireIsoTs, STDIN_PATH, StreamIds } from "../lines/input.js";
import { acquireLease, stopOnLoss, type AcquireOptions, type WriterLease, type WriterOptions, type WriterReport } from "./lease.js";
import { openHistory } from "./loader.js";
import { appendJournaled, createLogAtomically, readTail, recoverJournal, type LineSink } from "./log-write.js";
import { logPath } from "./paths.js";
import { abortable } from "../lines/abortable.js";

export interface AppendOptions extends WriterOptions {
  dropEphemeral?: boolean;
  waitSeconds?: number;
  takeOverDeadWriter?: boolean;
}

/** What a plain write or an append reports: the same fields for both (cli.md §8.2, §8.3). */
export interface WriteReport extends WriterReport {
  created: boolean;
  event_count: number;
  first_seq: number | null;
  last_seq: number | null;
}

export function writeReport(dryRun: boolean | undefined, id: string, logAbs: string, created: boolean, first: number, count: number): WriteReport {
  return {
    ok: true,
    recorded: !dryRun,
    dry_run: Boolean(dryRun),
    session_id: id,
    log_path: logAbs,
    created,
    event_count: count,
    first_seq: count > 0 ? first : null,
    last_seq: count > 0 ? first + count - 1 : null,
  };
}

export interface AppendResult extends WriteReport {
  dropped_ephemeral: number;
}

/** §9: the next seq from the last physical line; only a null seq there needs the full History. */
export async function nextSeqFromTail(ws: string, id: string): Promise<{ next: number; tail: ReturnType<typeof readTail> }> {
  const tail = readTail(ws, id);
  const last = tail.last;
  if (last === null) return { next: 0, tail };
  if (last.type === "session_fork" && last.seq === 0 && last.data.strategy === "share_v1" && typeof last.data.replay_event_count === "number") {
    return { next: last.data.replay_event_count + 1, tail };
  }
  if (last.seq !== null) return { next: last.seq + 1, tail };
  const history = await openHistory(ws, id);
  let lastEvent: PixirEvent | null = null;
  let count = 0;
  for await (const item of history.items()) {
    lastEvent = item.event;
    count++;
  }
  return { next: lastEvent === null ? 0 : lastEvent.seq === null ? count : lastEvent.seq + 1, tail };
}

/**
 * Stamp and emit each input Event; returns the count. Used for real and dry runs alike. `lastId`: the id
 * of the Log's last Event, which a given id must not repeat (an append sent twice).
 */
async function stampEvents(id: string, input: AsyncIterable<Buffer>, firstSeq: number, lastId: string | null, options: AppendOptions, emit: LineSink): Promise<{ count: number; dropped: number; lines: number }> {
  const ids = new StreamIds(lastId);
  let seq = firstSeq;
  let count = 0;
  let dropped = 0;
  let lines = 0;
  for await (const raw of splitLines(abortable(input, options.signal), { path: STDIN_PATH })) {
    lines++;
    const input = decodeInputLine(raw, { dropEphemeral: options.dropEphemeral });
    if (input === null) {
      dropped++;
      continue;
    }
    const v = input.value;
    // A fork header is only ever the first line of a new Log, written by pixir-log write with the fork rules.
    if (v.type === "session_fork") throw integrityError("fork_header_on_existing_log", "a plain event", "session_fork", raw.lineNo);
    checkInputSessionId(v.session_id, id, raw.lineNo);
    if (v.seq !== undefined && v.seq !== null && v.seq !== seq) throw integrityError("seq_conflict", seq, v.seq, raw.lineNo);
    requireIsoTs(v.ts, raw.lineNo);
    // A new ULID is unique by construction; a given id is checked.
    if (v.id !== undefined) ids.admit(v.id as string, raw.lineNo);
    const event: PixirEvent = {
      id: (v.id as string | undefined) ?? newUlid(),
      session_id: id,
      seq,
      ts: (v.ts as string | undefined) ?? new Date().toISOString(),
      type: v.type as PixirEvent["type"],
      data: (v.data as PixirEvent["data"] | undefined) ?? {},
    };
    // The data bytes are kept as given (a six-key line by its head, any other by the scanner).
    const exact = Object.keys(v).length === 6 && v.data !== undefined;
    emit(serializeEvent(event, lineDataText(input.text, event, exact)));
    seq++;
    count++;
  }
  if (lines === 0) throw integrityError("empty_stream", "at least one event", 0, null);
  return { count, dropped, lines };
}

export async function appendEvents(ws: string, id: string, input: AsyncIterable<Buffer>, options: AppendOptions): Promise<AppendResult> {
  const log = logPath(ws, id);
  const result = (created: boolean, first: number, count: number, dropped: number): AppendResult => ({
    ...writeReport(options.dryRun, id, log.abs, created, first, count),
    dropped_ephemeral: dropped,
  });

  if (options.dryRun) {
    const { next, tail } = await nextSeqFromTail(ws, id);
    const stamped = await stampEvents(id, input, next, tail.last?.id ?? null, options, () => undefined);
    return result(!tail.exists, next, stamped.count, stamped.dropped);
  }

  const stop = stopOnLoss(options.signal);
  const acquire = { program: options.program, env: options.env, waitSeconds: options.waitSeconds, takeOverDeadWriter: options.takeOverDeadWriter, signal: options.signal };
  return writeUnderLease(ws, id, acquire, stop, async ({ next, tail, ctx }) => {
    let stamped = { count: 0, dropped: 0, lines: 0 };
    const produce = async (emit: LineSink) => {
      stamped = await stampEvents(id, input, next, tail.last?.id ?? null, { ...options, signal: stop.signal }, emit);
      if (stamped.count === 0) throw new NothingToAppend();
    };
    let wrote = false;
    try {
      if (tail.exists) await appendJournaled(ws, id, tail, produce, ctx);
      else await createLogAtomically(ws, id, produce, ctx);
      wrote = true;
    } catch (err) {
      if (!(err instanceof NothingToAppend)) throw err;
    }
    return { wrote, value: result(!tail.exists && wrote, next, stamped.count, stamped.dropped) };
  });
}

/** Where a write under the lease starts: the Log's tail, the next seq, and what the writes check against. */
export interface LeasedTail {
  next: number;
  tail: ReturnType<typeof readTail>;
  ctx: { lease: WriterLease; signal?: AbortSignal };
}

/**
 * envelope-and-log.md §8–§9: a plain write to `id`'s Log under its Writer Lease (`stop` follows it): a
 * leftover append journal is rolled back, the tail read for the next seq, then `write` runs; the lease
 * goes, with the state directories made for it when nothing was written.
 */
export async function writeUnderLease<T>(
  ws: string,
  id: string,
  acquire: AcquireOptions,
  stop: ReturnType<typeof stopOnLoss>,
  write: (at: LeasedTail) => Promise<{ wrote: boolean; value: T }>,
): Promise<T> {
  const lease = await acquireLease(ws, id, acquire);
  stop.follow(lease);
  let wrote = false;
  try {
    recoverJournal(ws, id);
    const { next, tail } = await nextSeqFromTail(ws, id);
    const done = await write({ next, tail, ctx: { lease, signal: acquire.signal } });
    wrote = done.wrote;
    return done.value;
  } finally {
    lease.release(!wrote);
  }
}

/** Every input Event was a dropped ephemeral one: nothing to write, and not an error. */
class NothingToAppend extends Error {}
