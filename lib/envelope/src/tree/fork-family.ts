// pi-interop.md §4.1 step 1 (and view.md §1 `--family`): a fork family is found from first lines only.
// Each Log's first line says whether it is a fork child and of whom; walking those links up from a Log
// reaches the family's root. `pixir export pi` and `pixir export html` share this walk.
import { PixirError } from "../event/errors.js";
import { isValidSessionId } from "../event/session-id.js";
import { readFirstLine } from "../store/log-read.js";
import { listLogs } from "../store/ls.js";
import { inspectStatePath, logPath } from "../store/paths.js";

/** What a fork child's first-line `session_fork` says about its parent. */
export interface ForkLink {
  parent: string;
  strategy: unknown;
  forkedToSeq: number;
  replayEventCount: number;
}

async function forkLinkOf(ws: string, id: string): Promise<ForkLink | null> {
  const p = logPath(ws, id);
  if (inspectStatePath(p) === "missing") return null;
  const first = await readFirstLine(p);
  if (first === null || "problem" in first) return null;
  const e = first.line.event;
  if (e.type !== "session_fork" || e.seq !== 0 || !isValidSessionId(e.data.parent_session_id)) return null;
  const n = e.data.replay_event_count;
  const to = e.data.forked_to_seq;
  return {
    parent: e.data.parent_session_id,
    strategy: e.data.strategy,
    forkedToSeq: typeof to === "number" ? to : 0,
    replayEventCount: typeof n === "number" ? n : 0,
  };
}

/** The fork link of every Log of the Workspace (null for a Log that is not a fork child). */
export async function readForkLinks(ws: string): Promise<Map<string, ForkLink | null>> {
  const links = new Map<string, ForkLink | null>();
  for (const sid of listLogs(ws).sessionIds) links.set(sid, await forkLinkOf(ws, sid));
  return links;
}

/**
 * Walk up first-line session_fork parents from `id` to the root of its fork family. A parent that has no
 * Log ends the walk there; a parent met twice is a cycle (`fork_cycle`).
 */
export function forkRootOf(links: ReadonlyMap<string, ForkLink | null>, id: string): string {
  let rootId = id;
  const walked = [id];
  for (;;) {
    const link = links.get(rootId);
    if (!link || !links.has(link.parent)) return rootId;
    if (walked.includes(link.parent)) throw new PixirError("fork_cycle", undefined, { session_id: id, lineage: [...walked, link.parent] });
    walked.push(link.parent);
    rootId = link.parent;
  }
}
