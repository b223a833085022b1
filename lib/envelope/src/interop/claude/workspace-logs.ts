// claude-interop.md §4.3 steps 1–5, §3.7: what the Workspace holds of a source file: its family's Logs
// (listed once per run), their Events as the plan holds them (held-event.ts), the last checkpoint, the
// records and links they hold, and a fork file's source session as it is on disk.
import { closeSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { isJsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { storedPrefixCount } from "../../fork/fork.js";
import { inheritedItem, isInherited, OpenedHistories, openHistory, shareHops, type History } from "../../store/loader.js";
import { readFirstLine } from "../../store/log-read.js";
import { readTail } from "../../store/log-write.js";
import { listLogs } from "../../store/ls.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { claudeBaseId } from "./discover.js";
import type { ForkSource } from "./fork-file.js";
import { ImportIndex } from "./known.js";
import { eventFacts, HeldEvent } from "./held-event.js";
import { heldLine } from "./map.js";
import type { ExistingLog } from "./plan-log.js";
import { FileBytes } from "./source-bytes.js";

/** The run's view of the Workspace's Logs (listed once), and of its import index (known.ts). */
export class WorkspaceLogs {
  private ids: string[] | null = null;
  private sorted: number[] | null = null; // indexes of all(), in the order of their ids
  readonly index: ImportIndex;
  constructor(private readonly ws: string) {
    this.index = new ImportIndex(ws);
  }
  all(): string[] {
    this.ids ??= listLogs(this.ws).sessionIds;
    return this.ids;
  }
  /**
   * `rootId` and the ids below it (`rootId.…`), in the listing's order. Every id that starts with `rootId`
   * sits in one run of the sorted ids, so a unit looks at its own family, not at every Log of the Workspace.
   */
  private below(rootId: string): string[] {
    const all = this.all();
    const sorted = (this.sorted ??= all.map((_, i) => i).sort((a, b) => (all[a]! < all[b]! ? -1 : all[a]! > all[b]! ? 1 : 0)));
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (all[sorted[mid]!]! < rootId) lo = mid + 1;
      else hi = mid;
    }
    const found: number[] = [];
    const dotted = `${rootId}.`;
    for (let i = lo; i < sorted.length && all[sorted[i]!]!.startsWith(rootId); i++) {
      const id = all[sorted[i]!]!;
      if (id === rootId || id.startsWith(dotted)) found.push(sorted[i]!);
    }
    return found.sort((a, b) => a - b).map((i) => all[i]!);
  }
  exists(id: string): boolean {
    return inspectStatePath(logPath(this.ws, id)) === "present";
  }
  /** §4.3 step 1: the Logs whose first line names `source`. */
  async family(rootId: string, source: string): Promise<string[]> {
    return (await this.familyHeads(rootId, source)).map((h) => h.id);
  }
  async familyHeads(rootId: string, source: string): Promise<Array<{ id: string; first: PixirEvent }>> {
    const out: Array<{ id: string; first: PixirEvent }> = [];
    for (const id of this.below(rootId)) {
      const first = await readFirstLine(logPath(this.ws, id));
      if (first === null || "problem" in first) continue;
      const c = first.line.event.data.claude;
      if (isJsonObject(c) && c.source === source) out.push({ id, first: first.line.event });
    }
    return out;
  }
}

/**
 * The family's Logs as the plan holds them. Each is opened and checked once, a branch against its parent's
 * History already opened (loader.ts OpenedHistories); their items are not kept, heldLines reads the lines.
 */
export async function loadExisting(ws: string, ids: string[]): Promise<ExistingLog[]> {
  const logs: ExistingLog[] = [];
  const read = new Map<string, PixirEvent[]>();
  const histories = new OpenedHistories(ws);
  for (const id of ids) {
    const history = await histories.open(id);
    const events = await heldHistory(history, read);
    logs.push({ id, first: events[0]!, events, replayCount: history.share?.replayEventCount ?? storedPrefixCount(events[0]!), shareHops: shareHops(history) });
  }
  // Parents before children.
  const byId = new Map(logs.map((l) => [l.id, l]));
  const depth = (l: ExistingLog): number => {
    let d = 0;
    for (let p = l; p.first.type === "session_fork" && d < 64; d++) {
      const next = byId.get(String(p.first.data.parent_session_id));
      if (next === undefined) break;
      p = next;
    }
    return d;
  };
  return logs.sort((a, b) => depth(a) - depth(b));
}

/**
 * The resolved History of a Log as the plan holds it (held-event.ts): its first Event whole (a carrier or
 * a fork header), every other as a HeldEvent at its line, an inherited one at its parent's line. `read`
 * keeps each History read by this call, by Log id, so a parent shared by its branches is read once.
 */
async function heldHistory(history: History, read: Map<string, PixirEvent[]>): Promise<PixirEvent[]> {
  const done = read.get(history.sessionId);
  if (done !== undefined) return done;
  const share = history.share;
  const inherited = share === null ? [] : (await heldHistory(share.parent, read)).filter((e) => isInherited(e, share.forkedToSeq)).slice(0, share.replayEventCount);
  const events = heldLines(history, inherited) ?? (await heldItems(history, inherited));
  read.set(history.sessionId, events);
  return events;
}

/** An inherited Event (loader.ts inheritedItem): the child's envelope over the parent's line. */
function inheritedHeld(p: PixirEvent, header: PixirEvent, childId: string, k: number): PixirEvent {
  if (!(p instanceof HeldEvent)) return inheritedItem({ event: p }, header.id ?? "", childId, k).event;
  const e = inheritedItem({ event: { id: p.id, session_id: p.session_id, seq: p.seq, ts: p.ts, type: p.type, data: {} } }, header.id ?? "", childId, k).event;
  return p.inheritedAs(e);
}

/** heldHistory through the loader's items (a Log whose lines are out of seq order: the loader orders them). */
async function heldItems(history: History, inherited: PixirEvent[]): Promise<PixirEvent[]> {
  const bytes = logBytes(history);
  const events: PixirEvent[] = [];
  let k = 0;
  for await (const item of history.items()) {
    const e = item.event;
    if (events.length === 0) events.push(e);
    else if (item.line !== undefined) events.push(HeldEvent.of(e, { bytes, offset: item.line.offset, length: item.line.bytes.length }));
    else events.push(inheritedHeld(inherited[k++]!, events[0]!, history.sessionId, k));
  }
  return events;
}

const logBytes = (history: History): FileBytes => {
  const path = history.scan.path;
  const changed = () => new PixirError("log_read_failed", undefined, { session_id: history.sessionId, path: path.rel, changed_while_importing: true });
  const bytes = new FileBytes(path.abs, path.rel, history.scan.identity?.ino ?? statSync(path.abs).ino, changed);
  bytes.length = history.scan.byteLength;
  return bytes;
};

/** Bytes of a Log read at a time by heldLines. */
const HELD_BLOCK_BYTES = 1 << 20;

/**
 * heldHistory of a Log whose lines are in seq order (its History is its lines, an inherited prefix after
 * the header): the lines the loader checked (openHistory), each parsed once, here, and let go, not decoded
 * into the loader's items (a huge Log's items cost the heap several times what its Events hold). Null when
 * the lines are not what the loader counted (it reads them then).
 */
function heldLines(history: History, inherited: PixirEvent[]): PixirEvent[] | null {
  const { scan } = history;
  if (!scan.inOrder || scan.skipped.length > 0) return null;
  const bytes = logBytes(history);
  // Made at the length the loader counted, filled by place: an array grown by push leaves the arrays it
  // outgrew as V8 large objects, garbage until the next full GC (docs/performance.md, "Round 12").
  const events = new Array<PixirEvent>(scan.eventCount + inherited.length);
  let own = 0;
  let n = 0;
  const take = (buf: Buffer, start: number, end: number, offset: number) => {
    const last = end > start && buf[end - 1] === 0x0d ? end - 1 : end;
    if (last === start) return;
    const e = JSON.parse(buf.toString("utf8", start, last)) as PixirEvent;
    own++;
    if (n > 0) {
      events[n++] = HeldEvent.of(e, { bytes, offset, length: end - start });
      return;
    }
    events[n++] = e;
    inherited.forEach((p, i) => (events[n++] = inheritedHeld(p, e, history.sessionId, i + 1)));
  };
  const fd = openSync(scan.path.abs, "r");
  try {
    let block = Buffer.allocUnsafe(HELD_BLOCK_BYTES);
    let have = 0; // bytes in block, from file offset `base`
    let base = 0;
    for (let pos = 0; pos < scan.byteLength || have > 0; ) {
      const n = pos < scan.byteLength ? readSync(fd, block, have, Math.min(block.length - have, scan.byteLength - pos), pos) : 0;
      pos += n;
      have += n;
      let start = 0;
      for (let nl = block.indexOf(0x0a, 0); nl !== -1 && nl < have; nl = block.indexOf(0x0a, start)) {
        take(block, start, nl, base + start);
        start = nl + 1;
      }
      if (n === 0) {
        if (start < have) take(block, start, have, base + start); // a last line without its newline
        break;
      }
      // The part of a line the block ends in moves to its start; a line longer than the block grows it.
      if (start === 0 && have === block.length) block = Buffer.concat([block, Buffer.allocUnsafe(block.length)]);
      else block.copy(block, 0, start, have);
      have -= start;
      base += start;
    }
  } finally {
    closeSync(fd);
  }
  return own === scan.eventCount && n === events.length ? events : null;
}

/** The last `claude_import` checkpoint of a root Log (the tail, else a scan). */
export async function lastCheckpoint(ws: string, id: string): Promise<Record<string, unknown> | null> {
  const tail = readTail(ws, id);
  const isCheckpoint = (e: PixirEvent | null) => e !== null && e.type === "workflow_event" && e.data.event === "claude_import" && isJsonObject(e.data.claude);
  if (isCheckpoint(tail.last)) return tail.last!.data.claude as Record<string, unknown>;
  let found: Record<string, unknown> | null = null;
  for await (const item of (await openHistory(ws, id)).items()) if (isCheckpoint(item.event)) found = item.event.data.claude as Record<string, unknown>;
  return found;
}

/**
 * The Events of these Logs' lines on disk that contain `needle` (a quick look for a few kinds of Event;
 * the loader names bad lines, so one that does not parse is passed over here).
 */
function* eventsOnDisk(ws: string, ids: string[], needle: string): Iterable<PixirEvent> {
  for (const id of ids) {
    let text: string;
    try {
      text = readFileSync(logPath(ws, id).abs, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n")) {
      if (!line.includes(needle)) continue;
      try {
        yield JSON.parse(line) as PixirEvent;
      } catch {
        /* named by the loader when the Log is read */
      }
    }
  }
}

/** The child_session_ids that subagent_events of these Logs name (a subagent's Logs, read from disk). */
export function* childrenNamedIn(ws: string, ids: string[]): Iterable<string> {
  for (const e of eventsOnDisk(ws, ids, '"type":"subagent_event"')) if (typeof e.data?.child_session_id === "string") yield e.data.child_session_id;
}

/** The records the own Events of these Logs hold (§4.3 step 4), counted from their lines on disk. */
export function heldRecordCount(ws: string, ids: string[]): number {
  let n = 0;
  let copies = 0; // a replay_v1 branch's stored prefix: its parent's records, not its own
  for (const e of eventsOnDisk(ws, ids, '"claude":')) {
    if (e.seq === 0) copies = storedPrefixCount(e);
    if (typeof e.seq === "number" && e.seq > 0 && e.seq <= copies) continue;
    const c = e.data?.claude;
    if (heldLine(e) !== null) n++;
    else if (isJsonObject(c) && e.data.event === "claude_transcript" && Array.isArray(c.copied)) n += c.copied.length;
  }
  return n;
}

/** §3.7: a source session's Logs as they are in the Workspace. */
export async function forkSourceOfWorkspace(ws: string, wsLogs: WorkspaceLogs, sessionId: string): Promise<ForkSource | null> {
  const rootId = claudeBaseId(sessionId);
  if (!wsLogs.exists(rootId)) return null;
  const family = await loadExisting(ws, await wsLogs.family(rootId, sessionId));
  const logs = new Map<string, { id: string; events: PixirEvent[]; forkRoot: string }>();
  const byUuid = new Map<string, { value: Record<string, unknown>; logId: string; line: number }>();
  for (const l of family) {
    const root = l.first.type === "session_fork" && typeof l.first.data.fork_root_session_id === "string" ? l.first.data.fork_root_session_id : l.id;
    logs.set(l.id, { id: l.id, events: l.events, forkRoot: root });
    const own = l.first.type === "session_fork" ? l.events.slice(l.replayCount + 1) : l.events;
    for (const e of own) {
      const f = eventFacts(e);
      if (f.uuid === null || f.line === null || byUuid.has(f.uuid)) continue;
      const c = e.data.claude;
      if (!isJsonObject(c) || typeof c.uuid !== "string" || typeof c.line !== "number" || byUuid.has(c.uuid)) continue;
      // The record, or a non-canonical line parsed (§2.3 raw_line).
      const value = isJsonObject(c.record) ? c.record : typeof c.raw_line === "string" ? parsedObject(c.raw_line) : null;
      if (value !== null) byUuid.set(c.uuid, { value, logId: l.id, line: c.line });
    }
  }
  return { sessionId, logs, byUuid };
}

function parsedObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isJsonObject(v) ? v : null;
  } catch {
    return null;
  }
}
