// fork.md §4.2: the prefix digest of one History at many cuts. A planner that makes share children of one
// Log at many cuts (a Codex rollout's rollbacks, each a child of the Log it cuts) would hash the inherited
// prefix again for each; the ladder hashes each Event's digest line once, keeping the digest every
// LADDER_STEP replay Events, and a cut goes on from the nearest kept one below it. The History only grows:
// an Event once added is not changed (the planners make an Event whole, then push it).
import { isReplayType, type PixirEvent } from "../event/envelope.js";
import { PrefixDigest } from "./loader.js";

/** Replay Events between two kept digests: a cut hashes fewer than this many again. */
export const LADDER_STEP = 64;

export class DigestLadder {
  /** marks[j]: the digest of the first j × step replay Events, still open. */
  private readonly marks: PrefixDigest[] = [new PrefixDigest()];
  /** Where the replay Events of the History lie in it, as far as it has been read. */
  private readonly replayAt: number[] = [];
  private read = 0;

  /** `history`: the History in seq order, read again at each call (a planner appends to it). */
  constructor(
    private readonly history: () => readonly PixirEvent[],
    private readonly step = LADDER_STEP,
  ) {}

  /**
   * The prefix digest of `prefix`, the History's first replay Events (PrefixDigest over them); null when they
   * are not (the caller digests them itself).
   */
  digestOf(prefix: readonly PixirEvent[]): string | null {
    const count = prefix.length;
    const events = this.history();
    for (; this.read < events.length && this.replayAt.length < count; this.read++) if (isReplayType(events[this.read]!.type)) this.replayAt.push(this.read);
    if (count > 0 && (count > this.replayAt.length || events[this.replayAt[count - 1]!] !== prefix[count - 1])) return null;
    const at = Math.floor(count / this.step);
    while (this.marks.length <= at) {
      const j = this.marks.length;
      this.marks.push(this.extended(this.marks[j - 1]!, (j - 1) * this.step, j * this.step, events));
    }
    return this.extended(this.marks[at]!, at * this.step, count, events).digest();
  }

  /**
   * A ladder over another History whose first `count` replay Events digest as this one's (a share child's
   * inherited copies of them): it starts from the digests kept here for them.
   */
  sharedWith(history: () => readonly PixirEvent[], count: number): DigestLadder {
    const out = new DigestLadder(history, this.step);
    out.marks.splice(0, 1, ...this.marks.slice(0, Math.floor(count / this.step) + 1));
    return out;
  }

  /** A copy of `mark` (the digest of `from` replay Events) with replay Events `from`..`to` added. */
  private extended(mark: PrefixDigest, from: number, to: number, events: readonly PixirEvent[]): PrefixDigest {
    const out = mark.copy();
    for (let i = from; i < to; i++) out.add(events[this.replayAt[i]!]!);
    return out;
  }
}
