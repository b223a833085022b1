// codex-interop.md §3–§4.5 for a rollout the planner must see whole (a rollback cuts a share child from
// the History planned so far): the rollout is read once, one line at a time, and planned as a new family
// whose Logs hold only each Event's facts, as a row of columns (lean-events.ts: what planning reads of its
// data, the line, part, item kind, origin, call id, and its ts; a checkpoint, header or link whole), a share
// child's prefix a view of its parent's; each Event's Log line goes to an EventSpill as it is made, and the
// Logs are written from there. The prefix digest a rollback needs is kept
// as the Events are made (a ladder per Log, as store/digest-ladder.ts keeps it). Memory holds the facts, not
// the rollout.
// The rule it follows is import.ts's plain one (the same Mapper, feeder and share children); the property
// test test/interop/codex-lean-plan.test.ts holds the two to the same Logs.
import { isReplayType, rawDataText, serializeEvent, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { shareHeaderWithDigest } from "../../fork/fork.js";
import { PrefixDigest } from "../../store/loader.js";
import { readDiskFamily } from "./disk-prefix.js";
import { EventSpill } from "./event-spill.js";
import { type EventKeeper, type EventList, type Family, type PlannedLog } from "./family.js";
import { codexBaseId, scanRollout, type RolloutLine, type RolloutScan } from "./format.js";
import { eventLine, taskOfRecords } from "./line-events.js";
import { EventsAt, FactColumns, FactEvent, LeanHistory, LeanStored, MAX_ROW_LINE } from "./lean-events.js";
import { FreshFamily } from "./plan-lines.js";
import { lineOf } from "./rebuild.js";

/**
 * Replay Events between two kept digests: a cut hashes fewer than this many again, read back from the spill.
 * Wider than store/digest-ladder.ts's step: a kept digest is a hash state (about 800 bytes outside the heap),
 * and a lean plan's Log may hold millions of Events while it is cut only at its rollbacks.
 */
const STEP = 256;

/** The prefix digests of one Log's History, fed each replay Event as it is made. */
class LeanLadder {
  constructor(
    /** marks[j]: the digest of the first j × STEP replay Events. */
    private readonly marks: PrefixDigest[],
    /** starts[j]: a seq at or before that of replay Event j × STEP, after those of the Events before it. */
    private readonly starts: number[],
    /** The digest of every replay Event so far. */
    private readonly running: PrefixDigest,
  ) {}

  static empty(): LeanLadder {
    return new LeanLadder([new PrefixDigest()], [0], new PrefixDigest());
  }

  add(e: PixirEvent): void {
    if (!isReplayType(e.type)) return;
    this.running.add(e);
    if (this.running.count % STEP !== 0) return;
    this.marks.push(this.running.copy());
    this.starts.push(e.seq! + 1);
  }

  /**
   * The digest of the first `count` replay Events, still open; `full` gives back an Event's data. The
   * Events after the mark are found in `resolved` by their type: every replay Event of a History went
   * through add(), but a share child's copies (seqs 1..its inherited count, all replay Events).
   */
  cut(count: number, resolved: EventList, full: (e: PixirEvent) => PixirEvent): PrefixDigest {
    if (count === this.running.count) return this.running.copy();
    const j = Math.floor(count / STEP);
    const out = this.marks[j]!.copy();
    for (let seq = this.starts[j]!; out.count < count; seq++) {
      const e = resolved.at(seq)!;
      if (isReplayType(e.type)) out.add(full(e));
    }
    return out;
  }

  /** The ladder of a share child whose History begins with copies of the first `count` replay Events. */
  child(count: number, state: PrefixDigest): LeanLadder {
    const marks = this.marks.slice(0, Math.floor(count / STEP) + 1);
    // The child's replay Event i < count is its copy at seq i + 1.
    return new LeanLadder(marks, marks.map((_, j) => j * STEP + 1), state);
  }
}

/** The keeper of a lean plan: each line Event held as a row of facts (lean-events.ts), its line spilled. */
export class LeanKeeper implements EventKeeper {
  private readonly table = new FactColumns();
  private readonly ladders = new WeakMap<PlannedLog, LeanLadder>();
  private readonly spill = EventSpill.open();

  keep(log: PlannedLog, e: PixirEvent): PixirEvent {
    let ladder = this.ladders.get(log);
    if (ladder === undefined) this.ladders.set(log, (ladder = LeanLadder.empty()));
    ladder.add(e);
    // A checkpoint, a header or a link stays whole: planning reads them, and they are few and small.
    const n = lineOf(e);
    if (n === null || n > MAX_ROW_LINE || e.type === "history_compaction") return e;
    return this.table.add(e, n, this.spill.put(eventLine(e)));
  }

  lists(sessionId: string, replay: boolean): { stored: EventList; resolved: EventList } {
    const resolved = new LeanHistory(this.table, sessionId);
    return { resolved, stored: new LeanStored(resolved, replay) };
  }

  inherit(parent: PlannedLog, child: PlannedLog, inherited: Int32Array, headerId: string): void {
    (child.resolved as LeanHistory).inherit(parent.resolved as LeanHistory, inherited, headerId);
  }

  shareHeader(ws: string, parent: PlannedLog, child: PlannedLog, toSeq: number, inherited: Int32Array): JsonObject {
    const ladder = this.ladders.get(parent) ?? LeanLadder.empty();
    const state = ladder.cut(inherited.length, parent.resolved, (e) => this.whole(e));
    this.ladders.set(child, ladder.child(inherited.length, state));
    return shareHeaderWithDigest(ws, parent.sessionId, parent.forkRoot, toSeq, new EventsAt(parent.resolved, inherited), state.copy().digest());
  }

  /** The Log line of an Event of the plan (with its `\n`); bytes are a view valid until the next line is asked for. */
  line(e: PixirEvent): string | Buffer {
    if (!(e instanceof FactEvent)) return eventLine(e);
    const bytes = this.spill.read(this.table.placeOf(e.row));
    if (e.forkEventId === null) return bytes;
    // A copy of it (a replay_v1 child's prefix): the same data under the copy's envelope.
    const data = rawDataText(bytes.toString("utf8", 0, bytes.length - 1));
    return data !== undefined ? serializeEvent(e, data) : eventLine(this.whole(e));
  }

  close(): void {
    this.spill.close();
  }

  /** An Event with its whole data again. */
  private whole(e: PixirEvent): PixirEvent {
    if (!(e instanceof FactEvent)) return e;
    const own = JSON.parse(this.spill.read(this.table.placeOf(e.row)).toString("utf8")) as PixirEvent;
    return e.forkEventId === null ? own : { id: e.id, session_id: e.session_id, seq: e.seq, ts: e.ts, type: e.type, data: own.data };
  }
}

export interface LeanPlan {
  family: Family;
  scan: RolloutScan;
  /** §3.6 `task` of the rollout (its first boundary item), for a subagent's link. */
  task: string | null;
  /** Holds the spilled lines until the plan is written; close it after. */
  keeper: LeanKeeper;
}

/**
 * Plan rollout `file` of thread `threadId` as a new family, holding only each Event's facts. When its family
 * has Logs in the Workspace, the plan is taken only when they are the plan as it stood after the last line
 * they hold (import.ts replanGrown's rule); null when it is not, or line 1 now names another thread: the
 * plain planner decides. "skipped" when the file is no longer a rollout.
 */
export function planLean(ws: string, file: { path: string; display: string }, named: boolean, lenient: boolean, threadId: string): LeanPlan | "skipped" | null {
  const disk = readDiskFamily(ws, codexBaseId(threadId));
  if (disk === null) return null;
  const keeper = new LeanKeeper();
  let taken = false;
  try {
    const at: { plan: FreshFamily | null; task: string | null; other: boolean } = { plan: null, task: null, other: false };
    const onLine = (line: RolloutLine): void => {
      if (at.other) return;
      if (at.task === null && line.record !== null) at.task = taskOfRecords([line.record]);
      if (at.plan !== null) return at.plan.feed(line);
      const meta = line.record!.payload as JsonObject;
      if (meta.id !== threadId) at.other = true;
      else at.plan = new FreshFamily(ws, { threadId, display: file.display, meta }, line, disk === "none" ? null : disk, keeper);
    };
    const read = scanRollout(file, named, lenient, onLine);
    if (read.kind === "skipped") return "skipped";
    const family = at.other ? null : (at.plan?.finish(ws, (e) => keeper.line(e)) ?? null);
    if (family === null) return null;
    taken = true;
    return { family, scan: read.scan, task: at.task, keeper };
  } finally {
    if (!taken) keeper.close();
  }
}
