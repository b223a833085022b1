// codex-interop.md §4.5, the fast path of a grown rollout: a family on disk that is exactly what importing
// the rollout's first lines gave needs no reading into memory. The whole rollout is planned as a new family
// (imports in steps give the Logs of one import) and the Logs on disk are checked, byte for byte and one
// line at a time, to be that plan as it stood after the last line they hold. Anything else (a link or a
// native Event in a Log, a removed Log, a changed line) is left to the plain rule, planGrown.
import { closeSync, constants as fsConstants, openSync } from "node:fs";
import type { PixirEvent } from "../../event/envelope.js";
import { FileLines } from "../../lines/line-bound.js";
import { readTail } from "../../store/log-write.js";
import { logPath } from "../../store/paths.js";
import type { PlannedLog } from "./family.js";
import { eventLine } from "./line-events.js";
import { codexOf } from "./rebuild.js";

/**
 * The last rollout line the Logs `ids` hold, read from their last Events (a rollback child's name is its
 * line); null when a Log's end cannot be read (the plain rule says why). Only a guess: the Logs are checked
 * against the plan at this line before anything is trusted.
 */
export function heldLineGuess(ws: string, ids: readonly string[]): number | null {
  let held = 1;
  for (const id of ids) {
    const named = Number(id.slice(id.lastIndexOf(".rollback-") + ".rollback-".length));
    if (id.includes(".rollback-") && Number.isInteger(named)) held = Math.max(held, named);
    let last: PixirEvent | null;
    try {
      last = readTail(ws, id).last;
    } catch {
      return null;
    }
    const line = last === null ? null : codexOf(last)?.line;
    if (typeof line === "number" && Number.isInteger(line)) held = Math.max(held, line);
  }
  return held;
}

/**
 * True when the Log files of the family are exactly `counts` (session id → Event count) of `logs`: the same
 * set of Logs, and each file the serialized first Events of its Log, with nothing after them.
 */
export function diskHoldsPrefix(ws: string, logs: readonly PlannedLog[], counts: ReadonlyMap<string, number>, ids: readonly string[]): boolean {
  if (ids.length !== counts.size || ids.some((id) => !counts.has(id))) return false;
  for (const log of logs) {
    const count = counts.get(log.sessionId);
    if (count !== undefined && !fileHolds(logPath(ws, log.sessionId).abs, log.stored, count)) return false;
  }
  return true;
}

/** The file at `abs` is the lines of `events[0..count)` and nothing more; false on any read error. */
function fileHolds(abs: string, events: readonly PixirEvent[], count: number): boolean {
  let fd: number;
  try {
    fd = openSync(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return false;
  }
  try {
    const lines = new FileLines(fd, () => new Error("line too long"));
    let scratch = Buffer.allocUnsafe(64 * 1024);
    for (let i = 0; i < count; i++) {
      const bytes = lines.next();
      const want = eventLine(events[i]!);
      // Encoded into one reused buffer: a family's lines are compared without a copy of each.
      const size = Buffer.byteLength(want);
      if (bytes === null || bytes.length !== size - 1) return false;
      if (scratch.length < size) scratch = Buffer.allocUnsafe(size * 2);
      scratch.write(want, 0, "utf8");
      if (!bytes.equals(scratch.subarray(0, size - 1))) return false;
    }
    return lines.next() === null && lines.tailBytes === 0;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
