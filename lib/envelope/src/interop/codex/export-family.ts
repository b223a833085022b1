// codex-interop.md §3.7 for `pixir export codex`: a family's rollout lines, streamed. Each Log of the family
// is read one Event at a time and the Logs' own lines are merged by line number, one iterator per Log, so
// the export holds a line's Events, never a Log's or the rollout's (docs/performance.md, "Round 9: export
// codex streamed"). The same lines and the same errors as `rolloutLines` in family.ts, which holds them all.
import { createHash } from "node:crypto";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { MAX_FORK_DEPTH, OpenedHistories, type History } from "../../store/loader.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { codexBaseId, restAfterTimestamp, withTimestamp } from "./format.js";
import { familyLogIds, isLineOneOf, type CodexFork } from "./family.js";
import { codexOf, lineOf, rebuildLine } from "./rebuild.js";

/** A Log of a family, opened: its History read up to the Events it had when opened. */
interface StreamLog {
  history: History;
  count: number;
  /** §3.7: own lines are those of seq 0 or seq > replay_event_count. */
  replayEventCount: number;
}

export interface StreamFamily {
  threadId: string;
  baseId: string;
  /** Root first, then the rollback children by the line they were cut at. */
  logs: StreamLog[];
  fork: CodexFork | null;
  /** Line 1's record (the codex `record` of the root's first Event), and the root's first Event's codex key. */
  lineOne: JsonObject;
  header: JsonObject;
}

/** Thread t's families and its sources', opened: what `Families.load` and `loadChain` read, without Events. */
export type FamilyChain = Map<string, StreamFamily>;

/** The Events of a History up to `count` (Events appended after it was opened are not read). */
export async function* eventsOf(history: History, count: number): AsyncGenerator<PixirEvent> {
  if (count === 0) return;
  let n = 0;
  for await (const item of history.items()) {
    yield item.event;
    if (++n >= count) return;
  }
}

async function firstEvent(history: History): Promise<PixirEvent | undefined> {
  for await (const e of eventsOf(history, 1)) return e;
  return undefined;
}

async function openLog(histories: OpenedHistories, id: string): Promise<{ log: StreamLog; first: PixirEvent | undefined }> {
  const history = await histories.open(id);
  const first = await firstEvent(history);
  const rec = first?.type === "session_fork" ? first.data.replay_event_count : undefined;
  const replayEventCount = typeof rec === "number" && Number.isInteger(rec) ? rec : 0;
  return { log: { history, count: history.eventCount, replayEventCount }, first };
}

/** family.ts `loadFamily`, keeping each Log's History rather than its Events: null when absent. */
async function openFamily(histories: OpenedHistories, ws: string, t: string): Promise<StreamFamily | null | "foreign"> {
  const base = codexBaseId(t);
  if (inspectStatePath(logPath(ws, base)) === "missing") return null;
  const root = await openLog(histories, base);
  if (!isLineOneOf(root.first, t)) return "foreign";
  const codex = codexOf(root.first!)!;
  const forkInfo = isJsonObject(codex.fork) ? codex.fork : null;
  const fork: CodexFork | null =
    forkInfo === null
      ? null
      : { sourceThread: String(forkInfo.source_thread), copied: Number(forkInfo.copied_lines), timestamps: forkInfo.copied_timestamps as Array<[string, number]>, sha256: String(forkInfo.copied_sha256) };
  const children: Array<{ n: number; log: StreamLog }> = [];
  for (const id of familyLogIds(ws, base)) {
    if (id === base) continue;
    const child = await openLog(histories, id);
    const c = child.first === undefined ? null : codexOf(child.first);
    if (c === null || c.synthetic !== "rollback_fork" || c.thread !== t) continue;
    children.push({ n: Number(c.line), log: child.log });
  }
  children.sort((a, b) => a.n - b.n);
  return { threadId: t, baseId: base, logs: [root.log, ...children.map((c) => c.log)], fork, lineOne: codex.record as JsonObject, header: codex };
}

/**
 * `Families.load(t)` then `loadChain(t)` (import.ts): thread t's family and its fork sources, in that order
 * and with the same stop; "foreign" when t's own root Log is not line 1 of t, null when it is absent.
 */
export async function openFamilyChain(ws: string, t: string): Promise<{ chain: FamilyChain; family: StreamFamily | null | "foreign" }> {
  const histories = new OpenedHistories(ws);
  const chain: FamilyChain = new Map();
  const family = await openFamily(histories, ws, t);
  if (family === null || family === "foreign") return { chain, family };
  chain.set(t, family);
  let f: StreamFamily | null | "foreign" = family;
  for (let depth = 0; f !== null && f !== "foreign" && f.fork !== null && depth < 40; depth++) {
    const source: string = f.fork.sourceThread;
    if (chain.has(source)) f = chain.get(source)!;
    else {
      f = await openFamily(histories, ws, source);
      if (f !== null && f !== "foreign") chain.set(source, f);
    }
  }
  return { chain, family };
}

interface LineGroup {
  n: number;
  events: PixirEvent[];
}

/** One Log's own lines in its order: the Events of each line, grouped (the parts of a line are adjacent). */
async function* ownLines(log: StreamLog): AsyncGenerator<LineGroup> {
  let group: LineGroup | null = null;
  for await (const e of eventsOf(log.history, log.count)) {
    const n = lineOf(e);
    if (n === null || (e.seq !== 0 && log.replayEventCount > 0 && !(e.seq! > log.replayEventCount))) continue;
    if (group !== null && group.n === n) group.events.push(e);
    else {
      if (group !== null) yield group;
      group = { n, events: [e] };
    }
  }
  if (group !== null) yield group;
}

/**
 * The family's own lines by line number, merged over its Logs (the import writes each Log's lines in rising
 * order). A line held by two Logs takes their Events in Log order, as `eventsByLine` groups them.
 */
async function* mergedLines(f: StreamFamily): AsyncGenerator<LineGroup> {
  const its = f.logs.map((log) => ownLines(log));
  try {
    const heads: Array<IteratorResult<LineGroup>> = [];
    for (const it of its) heads.push(await it.next());
    for (;;) {
      let n = Infinity;
      for (const h of heads) if (!h.done && h.value.n < n) n = h.value.n;
      if (n === Infinity) return;
      const events: PixirEvent[] = [];
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i]!;
        if (h.done || h.value.n !== n) continue;
        events.push(...h.value.events);
        heads[i] = await its[i]!.next();
      }
      yield { n, events };
    }
  } finally {
    for (const it of its) await it.return(undefined);
  }
}

/** A rollout line as `rolloutLines` gives it: its text, null (skipped by --lenient), undefined (no Log holds it). */
export type RolloutLine = string | null | undefined;

/** Drain a stream: its errors are those of reading it to the end. */
async function drain(lines: AsyncIterable<RolloutLine>): Promise<void> {
  for await (const _ of lines) continue;
}

/**
 * A fork's copied lines (§3.7), lines 2 … k+1: the source's lines with the stored timestamps, their rests
 * checked against copied_sha256 once all are read. With `check`, the source's whole rollout is read first, so
 * its own errors come before this fork's, as `rolloutLines` computes the source before copying.
 */
async function* copiedLines(chain: FamilyChain, f: StreamFamily, fork: CodexFork, depth: number, check: boolean): AsyncGenerator<string> {
  if (check) await drain(streamRolloutLines(chain, fork.sourceThread, depth + 1, true));
  const mismatch = () => new PixirError("fork_prefix_mismatch", undefined, { session_id: f.baseId, parent_session_id: codexBaseId(fork.sourceThread) });
  const source = streamRolloutLines(chain, fork.sourceThread, depth + 1, false)[Symbol.asyncIterator]();
  const hash = createHash("sha256");
  let j = 0;
  try {
    for (const [ts, count] of fork.timestamps) {
      for (let i = 0; i < count; i++, j++) {
        const next = await source.next();
        const s = next.done ? undefined : next.value;
        const rest = s === null || s === undefined ? null : restAfterTimestamp(s);
        if (rest === null) throw mismatch();
        hash.update(`${rest.rest}\n`);
        yield withTimestamp(ts, rest.rest);
      }
    }
  } finally {
    await source.return?.(undefined);
  }
  if (j !== fork.copied || hash.digest("hex") !== fork.sha256) throw mismatch();
}

/**
 * §3.7 `rolloutLines(t)`, streamed: lines 1 … max in order (max: the family's greatest line). Without
 * `check`, a fork's source is read only as far as its copied lines (the caller checked it before).
 */
export async function* streamRolloutLines(chain: FamilyChain, t: string, depth = 0, check = true): AsyncGenerator<RolloutLine> {
  const f = chain.get(t);
  if (f === undefined) throw new PixirError("fork_parent_missing", undefined, { session_id: codexBaseId(t), depth });
  if (depth > MAX_FORK_DEPTH) throw new PixirError("fork_depth_exceeded", undefined, { session_id: f.baseId, max_depth: MAX_FORK_DEPTH });
  const own = mergedLines(f);
  const copies = f.fork === null ? null : copiedLines(chain, f, f.fork, depth, check);
  const floor = f.fork === null ? 1 : f.fork.copied + 1;
  try {
    let head = await own.next();
    let copying = copies !== null;
    for (let n = 1; ; n++) {
      let line: RolloutLine;
      // A line below n (a line number below 1) is not a line of the rollout, as in `rolloutLines`.
      while (!head.done && head.value.n < n) head = await own.next();
      if (!head.done && head.value.n === n) {
        line = rebuildLine(head.value.events);
        head = await own.next();
      }
      if (copying && n >= 2) {
        const c = await copies!.next();
        if (c.done) copying = false;
        else line = c.value;
      }
      if (head.done && !copying && n > floor && line === undefined) {
        // Past the family's greatest line; a fork's copies end with their check.
        if (copies !== null) await drain(copies);
        return;
      }
      yield line;
    }
  } finally {
    await own.return(undefined);
    await copies?.return(undefined);
  }
}
