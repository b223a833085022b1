// cli.md §12.10: where two resolved Histories diverge. Both Histories are streamed side by side, so
// memory stays flat whatever their size; only the replay-type Events are compared (fork.md §2), by the
// canonical JSON of [type, ts, data], so a parent and its fork child share a prefix.
import { canonicalJson, isReplayType, type PixirEvent } from "../event/envelope.js";
import { readFirstLine } from "../store/log-read.js";
import { MAX_FORK_DEPTH, notFoundError, openHistory, type History } from "../store/loader.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { isValidSessionId } from "../event/session-id.js";

export type DiffRelation = "same" | "a_is_ancestor_of_b" | "b_is_ancestor_of_a" | "same_fork_root" | "unrelated";

export interface DiffResult {
  ok: true;
  /** `event_count` counts the compared (replay-type) Events: common prefix + remaining. */
  a: { session_id: string; event_count: number };
  b: { session_id: string; event_count: number };
  relation: DiffRelation;
  identical: boolean;
  common_prefix_events: number;
  diverged_at: { a_seq: number | null; b_seq: number | null; a_type: string | null; b_type: string | null };
  /** Ours: the seqs of the last Events of the common prefix in each History (null when it is empty). */
  last_common: { a_seq: number | null; b_seq: number | null };
  a_remaining: number;
  b_remaining: number;
}

/**
 * The fork lineage of `id` from first lines only: `[id, parent, grandparent, …, root]`. The walk stops
 * at a Log that is missing, unreadable or not a fork, at an invalid parent id, and at a cycle; lineage
 * is evidence for `relation` only, and the Histories themselves are checked by the loader.
 */
export async function forkLineage(ws: string, id: string): Promise<string[]> {
  const chain = [id];
  for (let current = id; chain.length <= MAX_FORK_DEPTH + 1; ) {
    const p = logPath(ws, current);
    if (inspectStatePath(p) === "missing") break;
    const first = await readFirstLine(p);
    if (first === null || !("line" in first)) break;
    const e = first.line.event;
    const parent = e.type === "session_fork" ? e.data.parent_session_id : undefined;
    if (!isValidSessionId(parent) || chain.includes(parent)) break;
    chain.push(parent);
    current = parent;
  }
  return chain;
}

export function relationOf(a: string, b: string, lineageA: string[], lineageB: string[]): DiffRelation {
  if (a === b) return "same";
  if (lineageB.includes(a)) return "a_is_ancestor_of_b";
  if (lineageA.includes(b)) return "b_is_ancestor_of_a";
  return lineageA.at(-1) === lineageB.at(-1) ? "same_fork_root" : "unrelated";
}

/** The compared Events of a History, each with its canonical key. */
async function* compared(history: History): AsyncGenerator<{ event: PixirEvent; key: string }> {
  for await (const item of history.items()) {
    const e = item.event;
    if (isReplayType(e.type)) yield { event: e, key: canonicalJson([e.type, e.ts, e.data]) };
  }
}

async function count(it: AsyncIterator<unknown>): Promise<number> {
  let n = 0;
  while (!(await it.next()).done) n++;
  return n;
}

export async function diffSessions(ws: string, a: string, b: string): Promise<DiffResult> {
  const open = (id: string) => openHistory(ws, id, { notFound: () => notFoundError(id, ws, logPath(ws, id).rel, "pixir diff") });
  const [ha, hb] = [await open(a), await open(b)];
  const [lineageA, lineageB] = [await forkLineage(ws, a), await forkLineage(ws, b)];

  const ia = compared(ha)[Symbol.asyncIterator]();
  const ib = compared(hb)[Symbol.asyncIterator]();
  let common = 0;
  let lastA: number | null = null;
  let lastB: number | null = null;
  let na: IteratorResult<{ event: PixirEvent; key: string }>;
  let nb: IteratorResult<{ event: PixirEvent; key: string }>;
  for (;;) {
    [na, nb] = [await ia.next(), await ib.next()];
    if (na.done || nb.done || na.value.key !== nb.value.key) break;
    common++;
    lastA = na.value.event.seq;
    lastB = nb.value.event.seq;
  }
  // The Events that differ are the first remaining ones; count the rest of each tail.
  const aRemaining = na.done ? 0 : 1 + (await count(ia));
  const bRemaining = nb.done ? 0 : 1 + (await count(ib));
  return {
    ok: true,
    a: { session_id: a, event_count: common + aRemaining },
    b: { session_id: b, event_count: common + bRemaining },
    relation: relationOf(a, b, lineageA, lineageB),
    identical: aRemaining === 0 && bRemaining === 0,
    common_prefix_events: common,
    diverged_at: {
      a_seq: na.done ? null : na.value.event.seq,
      b_seq: nb.done ? null : nb.value.event.seq,
      a_type: na.done ? null : na.value.event.type,
      b_type: nb.done ? null : nb.value.event.type,
    },
    last_common: { a_seq: lastA, b_seq: lastB },
    a_remaining: aRemaining,
    b_remaining: bRemaining,
  };
}

/** cli.md §12.10 text form. */
export function diffText(r: DiffResult): string[] {
  if (r.identical) return [`identical: ${r.common_prefix_events} events`];
  const side = (id: string, seq: number | null, type: string | null, remaining: number) =>
    remaining === 0 ? `${id}: ends after the common prefix` : `${id}: diverges at seq ${seq} (${type}), ${remaining} events remain`;
  return [
    `common prefix: ${r.common_prefix_events} events`,
    side(r.a.session_id, r.diverged_at.a_seq, r.diverged_at.a_type, r.a_remaining),
    side(r.b.session_id, r.diverged_at.b_seq, r.diverged_at.b_type, r.b_remaining),
  ];
}
