// codex-interop.md §4.5 for the commonest grown rollout: a family of one Log (no rollback, not a fork) whose
// file grew. The rollout is read one line at a time and its Events made by the planner's line rules, as a
// new family's would be (imports in steps give the Logs of one import); its links (§3.6) are put back at
// their seqs. Events up to the Log's end are compared with the Log's lines as they are made, and the rest
// are counted (the checking pass) or handed to the append (the writing pass). Nothing of the rollout or the
// Log is held: memory stays flat as the rollout grows. Anything else (a rollback line, a line that differs,
// a Log that ends inside a line's Events, more Logs) is left to the planner: replanGrown, then planGrown.
import type { JsonObject } from "../../event/envelope.js";
import { logPath } from "../../store/paths.js";
import { LineComparer, openLogLines, readDiskLogs } from "./disk-prefix.js";
import { familyLogIds } from "./family.js";
import { codexBaseId, scanRollout, type RolloutScan } from "./format.js";
import { forkedFromOf, RootLog } from "./line-events.js";

/** What streaming a grown rollout found: the planner's work, or the one Log's Events counted. */
export type GrownStream =
  | { kind: "plan" }
  | { kind: "streamed"; scan: RolloutScan; lineOne: JsonObject; task: string | null; eventCount: number; newEvents: number };

/** Thrown inside the scan when the planner must plan the rollout. */
const PLAN = new Error("plan in memory");

/**
 * Stream rollout `file` of thread `threadId` against its family's one Log; `emit` takes each new Event's
 * line (the writing pass), or is null (the checking pass). Errors of the file itself are thrown as the
 * planner's read throws them.
 */
export function streamGrown(ws: string, file: { path: string; display: string }, named: boolean, lenient: boolean, threadId: string, emit: ((line: string) => void) | null): GrownStream {
  const base = codexBaseId(threadId);
  const ids = familyLogIds(ws, base);
  const disk = ids.length === 1 && ids[0] === base ? readDiskLogs(ws, ids) : null;
  const held = disk?.get(base);
  if (held === undefined) return { kind: "plan" };
  const onDisk = openLogLines(logPath(ws, base).abs, () => PLAN);
  if (onDisk === null) return { kind: "plan" };
  const compare = new LineComparer();
  const links = held.links;
  let atBoundary = held.lines === 0;
  let newEvents = 0;
  const root = new RootLog(threadId, file.display, (text) => {
    if (root.seq < held.lines) {
      if (!compare.same(onDisk.lines.next(), text)) throw PLAN;
    } else if (!atBoundary) throw PLAN;
    else {
      newEvents++;
      emit?.(text);
    }
  });
  try {
    const read = scanRollout(file, named, lenient, (line) => {
      if (line.n === 1) {
        const meta = root.first(line);
        if (meta === null || forkedFromOf(meta) !== null) throw PLAN;
      } else if (!root.next(line)) throw PLAN;
      while (links[0]?.seq === root.seq) root.add(links.shift()!);
      if (root.seq === held.lines) atBoundary = true;
    });
    // Every line of the Log was compared (its count was read before): in the writing pass the file grows
    // with the lines appended here, so its end is not looked for.
    if (read.kind !== "rollout" || root.lineOne === null || !atBoundary) return { kind: "plan" };
    return { kind: "streamed", scan: read.scan, lineOne: root.lineOne, task: root.task, eventCount: root.seq, newEvents };
  } catch (err) {
    if (err === PLAN) return { kind: "plan" };
    throw err;
  } finally {
    onDisk.close();
  }
}
