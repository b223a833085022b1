// codex-interop.md §4.5 for the commonest grown rollout: a family of one Log (no rollback, not a fork) whose
// file grew. The rollout is read one line at a time and its Events made by the planner's line rules, as a
// new family's would be (imports in steps give the Logs of one import); its links (§3.6) are put back at
// their seqs. Events up to the Log's end are compared with the Log's lines as they are made, and the rest
// are counted (the checking pass) or handed to the append (the writing pass). Nothing of the rollout or the
// Log is held: memory stays flat as the rollout grows. Anything else (a rollback line, a line that differs,
// a Log that ends inside a line's Events, more Logs) is left to the planner: replanGrown, then planGrown.
import { closeSync, constants as fsConstants, openSync } from "node:fs";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { FileLines } from "../../lines/line-bound.js";
import { logPath } from "../../store/paths.js";
import { readDiskLogs } from "./disk-prefix.js";
import { familyLogIds } from "./family.js";
import { codexBaseId, EPOCH, isBoundaryItem, scanRollout, validTimestamp, type RolloutScan } from "./format.js";
import { eventLine, forkedFromOf, lineEvents, parentThreadOf, rootHeader, rootLineage, taskOfRecords } from "./line-events.js";
import { mapLine, RunningState } from "./line-map.js";

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
  const onDisk = openLines(logPath(ws, base).abs);
  if (onDisk === null) return { kind: "plan" };
  const links = held.links;
  let seq = 0;
  let lastTs = EPOCH;
  let atBoundary = held.lines === 0;
  let newEvents = 0;
  let lineOne: JsonObject | null = null;
  let task: string | null = null;
  let state: RunningState | null = null;
  let parent: string | null = null;
  const put = (e: Omit<PixirEvent, "seq" | "session_id">): void => {
    const text = eventLine({ id: e.id, session_id: base, seq, ts: e.ts, type: e.type, data: e.data });
    if (seq < held.lines) {
      if (!onDisk.matches(text)) throw PLAN;
    } else if (!atBoundary) throw PLAN;
    else {
      newEvents++;
      emit?.(text);
    }
    seq++;
    lastTs = e.ts ?? lastTs;
  };
  const lineDone = (): void => {
    while (links[0]?.seq === seq) put(links.shift()!);
    if (seq === held.lines) atBoundary = true;
  };
  try {
    const read = scanRollout(file, named, lenient, (line) => {
      const r = line.record;
      if (line.n === 1) {
        const meta = r!.payload as JsonObject;
        if (meta.id !== threadId || forkedFromOf(meta) !== null) throw PLAN;
        lineOne = r;
        parent = parentThreadOf(meta);
        state = new RunningState(typeof meta.model_provider === "string" ? meta.model_provider : null);
        put(rootHeader(threadId, line, file.display, rootLineage(meta, null)));
      } else {
        if (r?.type === "event_msg" && isJsonObject(r.payload) && r.payload.type === "thread_rolled_back") throw PLAN;
        if (task === null && parent !== null && r?.type === "response_item" && isBoundaryItem(r.payload)) task = taskOfRecords([r]);
        for (const e of lineEvents(threadId, line, mapLine(threadId, line, state!), seq, validTimestamp(r?.timestamp) ?? lastTs)) put(e);
      }
      lineDone();
    });
    // Every line of the Log was compared (its count was read before): in the writing pass the file grows
    // with the lines appended here, so its end is not looked for.
    if (read.kind !== "rollout" || lineOne === null || !atBoundary) return { kind: "plan" };
    return { kind: "streamed", scan: read.scan, lineOne, task, eventCount: seq, newEvents };
  } catch (err) {
    if (err === PLAN) return { kind: "plan" };
    throw err;
  } finally {
    onDisk.close();
  }
}

/** A Log file's lines compared one at a time, without a copy of each. */
function openLines(abs: string): { matches(text: string): boolean; close(): void } | null {
  let fd: number;
  try {
    fd = openSync(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return null;
  }
  const lines = new FileLines(fd, () => PLAN);
  let scratch = Buffer.allocUnsafe(64 * 1024);
  return {
    matches(text: string): boolean {
      const bytes = lines.next();
      const size = Buffer.byteLength(text);
      if (bytes === null || bytes.length !== size - 1) return false;
      if (scratch.length < size) scratch = Buffer.allocUnsafe(size * 2);
      scratch.write(text, 0, "utf8");
      return bytes.equals(scratch.subarray(0, size - 1));
    },
    close: () => closeSync(fd),
  };
}
