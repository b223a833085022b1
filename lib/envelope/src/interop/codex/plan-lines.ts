// codex-interop.md §2–§3.3: a rollout's lines mapped into its family one at a time, shared by the planner
// that holds the rollout (import.ts) and the one that holds only each Event's facts (lean-plan.ts).
import type { JsonObject } from "../../event/envelope.js";
import { derivedUlid } from "../../event/ids.js";
import { MAX_IMPORT_SHARE_HOPS } from "../../fork/fork.js";
import { countsMatch, diskHoldsPrefix, type DiskLog, type EventLineOf } from "./disk-prefix.js";
import { codexHistory, familyLeaf, familyShareHops, keepWith, lastTs, newLog, prefixOwner, pushEvent, shareChild, type EventKeeper, type Family, type PlannedLog } from "./family.js";
import { codexBaseId, dropTurnsCut, EPOCH, validTimestamp, type Rollout, type RolloutLine } from "./format.js";
import { isRollback, lineEvents, rootHeader, rootLineage, stateOf } from "./line-events.js";
import { mapLine, RunningState } from "./line-map.js";

/** Maps the lines of one rollout into a family, one line at a time (§2, §3.3). */
export class Mapper {
  current: PlannedLog;
  constructor(
    private readonly ws: string,
    private readonly family: Family,
    readonly state: RunningState,
  ) {
    this.current = familyLeaf(family);
  }

  /** §2.6: the ts of a line Event in the current Log. */
  private tsOf(line: RolloutLine, log: PlannedLog): string {
    return validTimestamp(line.record?.timestamp) ?? lastTs(log, EPOCH);
  }

  place(line: RolloutLine): void {
    const drafts = mapLine(this.family.threadId, line, this.state);
    if (isRollback(line.record)) this.rollback(line, (line.record!.payload as JsonObject).num_turns);
    const log = this.current;
    for (const e of lineEvents(this.family.threadId, line, drafts, log.resolved.length, this.tsOf(line, log))) pushEvent(log, e);
  }

  /** §3.3: a rollback that drops turns continues the thread in a share_v1 child of the current Log. */
  private rollback(line: RolloutLine, k: unknown): void {
    const L = this.current;
    const history = codexHistory(L.resolved);
    const boundaries: number[] = [];
    history.forEach((seq, i) => {
      const e = L.resolved.at(seq)!;
      if (e.type === "user_message" && e.data.origin !== "context") boundaries.push(i);
    });
    const cut = dropTurnsCut(boundaries, k);
    if (cut === null) return;
    // The child hangs off the Log that owns the cut, so that rollbacks to one turn stay one hop deep.
    const at = prefixOwner(this.family.logs, L, cut === 0 ? 0 : history[cut - 1]!);
    const replay = familyShareHops(this.family.logs, at.log) + 1 > MAX_IMPORT_SHARE_HOPS;
    const child = newLog(`${this.family.baseId}.rollback-${line.n}`, "rollback", at.log.forkRoot);
    const ts = this.tsOf(line, L);
    shareChild(this.ws, at.log, child, at.toSeq, (data) => ({
      id: derivedUlid(`codex:${this.family.threadId}:rollback:${line.n}`, ts),
      ts,
      type: "session_fork",
      data: { ...data, codex: { synthetic: "rollback_fork", thread: this.family.threadId, line: line.n, num_turns: k } },
    }), replay);
    this.family.logs.push(child);
    this.current = child;
  }
}

/** What a new root family needs of its rollout: line 1 and what it says. */
export type RolloutHead = Pick<Rollout, "threadId" | "display" | "meta">;

/** A family of one root Log holding line 1 of a rollout (§3.1); its Events go through `keeper` when given. */
export function newRootFamily(r: RolloutHead, first: RolloutLine, forkStatus: string | null, keeper?: EventKeeper): Family {
  const t = r.threadId;
  const base = codexBaseId(t);
  const root = newLog(base, "root", base);
  keepWith(root, keeper);
  pushEvent(root, rootHeader(t, first, r.display, rootLineage(r.meta, forkStatus)));
  return { threadId: t, baseId: base, logs: [root], fork: null, lineOne: first.record!, fromDisk: false };
}

/** Feeds the lines after line 1 of a rollout into a new family, in order (§3.5 step 5: copied lines feed the running state only). */
export class LineFeeder {
  private readonly mapper: Mapper;
  constructor(
    ws: string,
    private readonly family: Family,
    private readonly state: RunningState,
  ) {
    this.mapper = new Mapper(ws, family, state);
  }
  feed(line: RolloutLine): void {
    if (line.n <= (this.family.fork?.copied ?? 0) + 1) mapLine(this.family.threadId, line, this.state);
    else this.mapper.place(line);
  }
}

/**
 * §4.5's fast path while a family is planned anew (disk-prefix.ts): after each line, the links on disk put
 * back at their seqs, and the counts of each Log taken once the plan holds as many Events as the disk.
 */
export class DiskFollower {
  /** Each Log's Event count when the plan first held the disk's counts; empty while it has not. */
  readonly held = new Map<string, number>();
  constructor(readonly disk: ReadonlyMap<string, DiskLog>) {}
  /** Called once line 1 is in, then after each line. */
  after(family: Family): void {
    for (const log of family.logs) {
      const links = this.disk.get(log.sessionId)?.links;
      while (links !== undefined && links[0]?.seq === log.resolved.length) pushEvent(log, links.shift()!);
    }
    // Every line adds Events: the plan holds the disk's counts after one line at most.
    if (this.held.size === 0 && countsMatch(family.logs, this.disk)) for (const log of family.logs) this.held.set(log.sessionId, log.stored.length);
  }
  /** Whether the plan held the disk's counts after some line. */
  get reached(): boolean {
    return this.held.size > 0;
  }
  /** The family marked as read from disk, each Log's disk count set. */
  settle(family: Family): void {
    for (const log of family.logs) log.diskCount = this.held.get(log.sessionId) ?? 0;
    family.fromDisk = true;
  }
}

/**
 * A rollout planned as a new root family, one line at a time from line 1 (§3.1–§3.3). With `disk` (its
 * family's Logs on disk, readDiskFamily) it follows them (DiskFollower): §4.5's fast path, shared by the
 * planner that holds the rollout (import.ts replanGrown) and the lean one (lean-plan.ts).
 */
export class FreshFamily {
  readonly family: Family;
  private readonly feeder: LineFeeder;
  private readonly follower: DiskFollower | null;
  constructor(ws: string, head: RolloutHead, first: RolloutLine, disk: ReadonlyMap<string, DiskLog> | null, keeper?: EventKeeper) {
    this.family = newRootFamily(head, first, null, keeper);
    this.feeder = new LineFeeder(ws, this.family, stateOf(head.meta));
    this.follower = disk === null ? null : new DiskFollower(disk);
    this.follower?.after(this.family);
  }

  /** A line after line 1. */
  feed(line: RolloutLine): void {
    this.feeder.feed(line);
    this.follower?.after(this.family);
  }

  /** The family, each Log's disk count set; null when the Logs on disk are not the plan as it stood after some line. */
  finish(ws: string, lineOf?: EventLineOf): Family | null {
    const f = this.follower;
    if (f !== null && (!f.reached || !diskHoldsPrefix(ws, this.family.logs, f.disk, lineOf))) return null;
    f?.settle(this.family);
    return this.family;
  }
}
