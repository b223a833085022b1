// codex-interop.md §4.5, the fast path of a grown rollout: a family on disk that is exactly what importing
// the rollout's first lines gave (with the links §3.6 added after them) needs no reading into memory. The
// whole rollout is planned as a new family (imports in steps give the Logs of one import), the links on disk
// put back where they stand, and the Logs on disk are checked, byte for byte and one line at a time, to be
// that plan as it stood after the last line they hold. Anything else (a native Event in a Log, a removed
// Log, a changed line) is left to the plain rule, planGrown.
import { closeSync, constants as fsConstants, openSync } from "node:fs";
import type { PixirEvent } from "../../event/envelope.js";
import { FileLines } from "../../lines/line-bound.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { familyLogIds, type EventList, type PlannedLog } from "./family.js";
import { eventLine } from "./line-events.js";
import { codexOf } from "./rebuild.js";

/** What the fast path reads of a family's Log on disk: its line count and its link Events (§3.6). */
export interface DiskLog {
  lines: number;
  links: PixirEvent[];
}

const LINK_MARK = Buffer.from('"subagent_link"');

/**
 * The Logs `ids` as the fast path sees them: each one's lines counted and its links read, in seq order;
 * null when one cannot be read, or ends in a line without its `\n` (the plain rule says what it is).
 */
export function readDiskLogs(ws: string, ids: readonly string[]): Map<string, DiskLog> | null {
  const out = new Map<string, DiskLog>();
  for (const id of ids) {
    const log: DiskLog = { lines: 0, links: [] };
    const ok = eachLine(logPath(ws, id).abs, (bytes) => {
      log.lines++;
      if (bytes.indexOf(LINK_MARK) === -1) return true;
      const e = JSON.parse(bytes.toString("utf8")) as PixirEvent;
      if (e.type === "subagent_event" && codexOf(e)?.synthetic === "subagent_link") log.links.push(e);
      return true;
    });
    if (!ok) return null;
    out.set(id, log);
  }
  return out;
}

/** The Logs on disk of the family whose root is `base` (readDiskLogs); "none" when there is no root Log. */
export function readDiskFamily(ws: string, base: string): Map<string, DiskLog> | "none" | null {
  if (inspectStatePath(logPath(ws, base)) === "missing") return "none";
  return readDiskLogs(ws, familyLogIds(ws, base));
}

/** True when the family planned so far holds as many Events in each Log as `disk`, and no other Log. */
export function countsMatch(logs: readonly PlannedLog[], disk: ReadonlyMap<string, DiskLog>): boolean {
  if (logs.length !== disk.size) return false;
  return logs.every((log) => disk.get(log.sessionId)?.lines === log.stored.length);
}

/** An Event's Log line, with its `\n` (a lean plan gives it from its spill). */
export type EventLineOf = (e: PixirEvent) => string | Buffer;

/** True when each Log file of `disk` is the serialized Events of its planned Log, as many as it has lines. */
export function diskHoldsPrefix(ws: string, logs: readonly PlannedLog[], disk: ReadonlyMap<string, DiskLog>, lineOf: EventLineOf = eventLine): boolean {
  return logs.every((log) => {
    const count = disk.get(log.sessionId)?.lines;
    return count === undefined || fileHolds(logPath(ws, log.sessionId).abs, log.stored, count, lineOf);
  });
}

/** The file at `abs` is the lines of `events[0..count)` and nothing more; false on any read error. */
export function fileHolds(abs: string, events: EventList, count: number, lineOf: EventLineOf = eventLine): boolean {
  let i = 0;
  const compare = new LineComparer();
  const ok = eachLine(abs, (bytes) => i < count && compare.same(bytes, lineOf(events.at(i++)!)));
  return ok && i === count;
}

/** A line of a Log file compared with the line an Event is written as, without a copy of either. */
export class LineComparer {
  private scratch = Buffer.allocUnsafe(64 * 1024);
  /** Whether `bytes` (a line without its `\n`, or null: none) is the line `want`. */
  same(bytes: Buffer | null, want: string | Buffer): boolean {
    if (bytes === null) return false;
    if (typeof want !== "string") return bytes.length === want.length - 1 && bytes.equals(want.subarray(0, want.length - 1));
    // Encoded into one reused buffer: a family's lines are compared without a copy of each.
    const size = Buffer.byteLength(want);
    if (bytes.length !== size - 1) return false;
    if (this.scratch.length < size) this.scratch = Buffer.allocUnsafe(size * 2);
    this.scratch.write(want, 0, "utf8");
    return bytes.equals(this.scratch.subarray(0, size - 1));
  }
}

/** A Log file's lines read one at a time (never through a symbolic link); null when it cannot be opened. */
export function openLogLines(abs: string, tooLong: (line: number) => Error): { lines: FileLines; close(): void } | null {
  let fd: number;
  try {
    fd = openSync(abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return null;
  }
  return { lines: new FileLines(fd, tooLong), close: () => closeSync(fd) };
}

/** `onLine` for each line of the file (false stops); false when it stops, cannot be read or ends unfinished. */
function eachLine(abs: string, onLine: (bytes: Buffer) => boolean): boolean {
  const file = openLogLines(abs, () => new Error("line too long"));
  if (file === null) return false;
  try {
    for (let bytes = file.lines.next(); bytes !== null; bytes = file.lines.next()) if (!onLine(bytes)) return false;
    return file.lines.tailBytes === 0;
  } catch {
    return false;
  } finally {
    file.close();
  }
}
