// docs/gemini-opencode-interop.md §2–§3: plan the Logs of one Gemini session file. Lines are read in file
// order and each one's Events go to the current Log. When a line makes Gemini's message list something
// other than an extension of what the current Log shows (a `$rewindTo`, a `$set.messages` replacement, a
// message changed in place), the current Log is kept as it is and the session continues in a new
// share_v1 child forked just after the last message both agree on. Planning depends only on the lines, so
// a file imported in steps gives the same Logs as one import of the final file.
import { sha256Hex } from "../../event/ids.js";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { checkPlannedLines, plannedLogBytes } from "../../session/agent-files.js";
import { derivedUlid } from "../../event/ids.js";
import { isValidSessionId } from "../../event/session-id.js";
import { plannedShareHeader } from "../../fork/fork.js";
import type { DigestLadder } from "../../store/digest-ladder.js";
import { inheritedItem, isInherited } from "../../store/loader.js";
import type { GeminiLine, ParsedGeminiFile } from "./format.js";
import { adoptEqualParts, extensionDrafts, fullDrafts, showsSame, shownOf, type GeminiDraft, type ShownMessage } from "./message-map.js";

export type GeminiBranchKind = "rewind" | "replace" | "edit";

export interface PlannedGeminiLog {
  sessionId: string;
  role: "root" | "branch";
  branch: GeminiBranchKind | null;
  parent: PlannedGeminiLog | null;
  forkedToSeq: number | null;
  /** The Events stored in the Log, seq order (none kept when the plan is streamed). */
  stored: PixirEvent[];
  /** How many Events the Log stores (`stored.length`, also when they went to a sink). */
  eventCount: number;
  /** Its resolved History (a child: header, inherited Events, own Events). */
  resolved: PixirEvent[];
  /** The prefix digests of `resolved`, made when a child is first cut from this Log. */
  digests?: DigestLadder;
}

export interface PlannedGeminiFamily {
  file: string;
  sessionIdRaw: string;
  baseSessionId: string;
  parsed: ParsedGeminiFile;
  logs: PlannedGeminiLog[];
  /** The Log holding the last line: what Gemini resumes. */
  leaf: PlannedGeminiLog;
  /** How many messages Gemini holds after the last line (for the report). */
  messageCount: number;
}

interface Shown {
  shown: ShownMessage;
  /** Seq of the message's last Event in the current Log's resolved History. */
  lastSeq: number;
}

const MAX_BASE_BYTES = 200;
const EPOCH = "1970-01-01T00:00:00.000Z";

/** A Gemini session id as a Log id: itself when valid, else a hash (an invalid id is never echoed). */
export function geminiBaseSessionId(sessionId: string): string {
  return isValidSessionId(sessionId) && Buffer.byteLength(sessionId, "utf8") <= MAX_BASE_BYTES ? sessionId : `gemini-${sha256Hex(sessionId).slice(0, 32)}`;
}

/** Where the file sits in Gemini's tree: `<project>` of `tmp/<project>/chats/`, and a subagent's parent id. */
export function placeOf(file: string): { project: string | null; parentSessionId: string | null } {
  const parts = path.resolve(file).split(path.sep);
  const chats = parts.lastIndexOf("chats");
  if (chats < 1) return { project: null, parentSessionId: null };
  const project = parts[chats - 2] === "tmp" ? parts[chats - 1]! : null;
  const parentSessionId = parts.length - chats === 3 ? parts[chats + 1]! : null;
  return { project, parentSessionId };
}

/**
 * The running state of Gemini's replay: the message list, in order, last copy winning, each message as
 * what it shows. Its records are kept until `release` (a streamed plan releases them after each line: it
 * drafts only the messages of the line being planned, so its memory does not grow with the session's text).
 */
class MessageList {
  ids: string[] = [];
  shownById = new Map<string, ShownMessage>();
  records = new Map<string, JsonObject>();
  /** Since the last reconcile: the ids upserted, and whether messages were dropped or replaced. */
  touched = new Set<string>();
  structural = false;
  upsert(msg: JsonObject): void {
    const id = msg.id as string;
    const previous = this.records.get(id);
    if (!this.shownById.has(id)) this.ids.push(id);
    else if (previous !== undefined) adoptEqualParts(previous, msg);
    this.records.set(id, msg);
    this.shownById.set(id, shownOf(msg));
    this.touched.add(id);
  }
  /** `$rewindTo`: drop that message and every later one; an unknown id drops all (as Gemini's loader does). */
  rewind(id: string): void {
    const at = this.ids.indexOf(id);
    for (const gone of this.ids.splice(at === -1 ? 0 : at)) {
      this.shownById.delete(gone);
      this.records.delete(gone);
    }
    this.structural = true;
  }
  replace(messages: unknown[]): void {
    this.ids = [];
    this.shownById.clear();
    this.records.clear();
    this.structural = true;
    for (const m of messages) if (isJsonObject(m) && typeof m.id === "string") this.upsert(m);
  }
  /** Let the records go (what each message shows stays) but the last one's, which Gemini re-appends as it grows. */
  release(): void {
    const last = this.ids.length === 0 ? undefined : this.records.get(this.ids[this.ids.length - 1]!);
    this.records.clear();
    if (last !== undefined) this.records.set(last.id as string, last);
  }
  get length(): number {
    return this.ids.length;
  }
  idAt(i: number): string {
    return this.ids[i]!;
  }
  shownAt(i: number): ShownMessage {
    return this.shownById.get(this.ids[i]!)!;
  }
  /** The record of message i; a released one is wanted only by a branch, which a streamed plan declines. */
  at(i: number): JsonObject {
    const record = this.records.get(this.ids[i]!);
    if (record === undefined) throw new StreamDeclined();
    return record;
  }
}

class FamilyPlanner {
  readonly logs: PlannedGeminiLog[] = [];
  current: PlannedGeminiLog;
  shown: Shown[] = [];
  /** Position of each shown message (ids are unique in Gemini's list). */
  shownIndex = new Map<string, number>();
  readonly list = new MessageList();
  lastTs: string;

  constructor(
    private readonly ws: string,
    private readonly parsed: ParsedGeminiFile,
    readonly sessionIdRaw: string,
    readonly base: string,
    private readonly sink: ((e: PixirEvent) => void) | null,
  ) {
    this.lastTs = typeof parsed.metadata.startTime === "string" ? parsed.metadata.startTime : EPOCH;
    this.current = this.newLog(base, "root", null, null, null);
  }

  private newLog(sessionId: string, role: PlannedGeminiLog["role"], branch: GeminiBranchKind | null, parent: PlannedGeminiLog | null, forkedToSeq: number | null): PlannedGeminiLog {
    const log: PlannedGeminiLog = { sessionId, role, branch, parent, forkedToSeq, stored: [], eventCount: 0, resolved: [] };
    this.logs.push(log);
    return log;
  }

  eventId(line: number, part: string, ts: string): string {
    return derivedUlid(`gemini:${this.sessionIdRaw}:${line}#${part}`, ts);
  }

  private push(type: PixirEvent["type"], data: JsonObject, id: string, ts: string): PixirEvent {
    const log = this.current;
    // Streamed, there is only the root Log (a branch declines), whose History is its stored Events.
    const seq = this.sink === null ? log.resolved.length : log.eventCount;
    const event: PixirEvent = { id, session_id: log.sessionId, seq, ts, type, data };
    log.eventCount++;
    if (this.sink !== null) this.sink(event);
    else {
      log.stored.push(event);
      log.resolved.push(event);
    }
    return event;
  }

  /** Append one line's drafts (or a carrier when it has none); the first Event keeps the line's text. */
  emitLine(l: GeminiLine, drafts: Array<GeminiDraft & { message?: string }>, carrier: JsonObject): void {
    const list = drafts.length > 0 ? drafts : [{ type: "workflow_event" as const, part: "record", data: carrier }];
    list.forEach((d, i) => {
      const ts = d.ts ?? this.lastTs;
      this.lastTs = ts;
      const gemini: JsonObject = { session: this.sessionIdRaw, line: l.line, part: d.part };
      if (i === 0 && !(this.parsed.legacy && l.line === 1 && this.current.eventCount > 0)) {
        gemini.raw = l.raw;
        if (l.rawBase64) gemini.raw_base64 = true;
      }
      const data = d.type === "subagent_event" ? { ...d.data, workspace: this.ws } : d.data;
      const event = this.push(d.type, { ...data, gemini }, this.eventId(l.line, d.part, ts), ts);
      const at = d.message === undefined ? undefined : this.shownIndex.get(d.message);
      const s = at === undefined ? undefined : this.shown[at];
      if (s !== undefined) s.lastSeq = event.seq!;
    });
  }

  /** Keep `shown[0..k)` and continue in a share_v1 child of the current Log forked after message k−1. */
  branch(k: number, kind: GeminiBranchKind, line: number, ts: string): void {
    // A child reads its parent's History (its prefix digest, its open calls): a streamed plan keeps none.
    if (this.sink !== null) throw new StreamDeclined();
    // Nothing kept (a compression, a rewind to the start): fork the root, so chains stay shallow.
    const parent = k === 0 ? this.logs[0]! : this.current;
    const toSeq = k === 0 ? 0 : this.shown[k - 1]!.lastSeq;
    const inherited = parent.resolved.filter((e) => isInherited(e, toSeq));
    const child = this.newLog(`${this.base}.${kind}-${line}`, "branch", kind, parent, toSeq);
    const header: PixirEvent = {
      id: derivedUlid(`gemini:${this.sessionIdRaw}:branch:${line}`, ts),
      session_id: child.sessionId,
      seq: 0,
      ts,
      type: "session_fork",
      data: { ...plannedShareHeader(this.ws, parent, child, this.base, toSeq, inherited), gemini: { synthetic: "branch_fork", session: this.sessionIdRaw, line, branch: kind } },
    };
    child.stored.push(header);
    child.eventCount++;
    child.resolved.push(header);
    const seqMap = new Map<number, number>();
    inherited.forEach((e, i) => {
      const { event } = inheritedItem({ event: e }, header.id!, child.sessionId, i + 1);
      seqMap.set(e.seq!, i + 1);
      child.resolved.push(event);
    });
    this.shown = this.shown.slice(0, k).map((s) => ({ shown: s.shown, lastSeq: seqMap.get(s.lastSeq) ?? 0 }));
    this.shownIndex = new Map(this.shown.map((s, i) => [s.shown.id, i]));
    this.current = child;
  }

  /** Bring the Log to Gemini's new message list: deltas, or a branch and the messages from there on. */
  reconcile(l: GeminiLine, kind: GeminiBranchKind, carrier: JsonObject): void {
    const next = this.list;
    let k = this.firstDifference(next);
    const drafts: Array<GeminiDraft & { message?: string }> = [];
    if (k === this.shown.length - 1 && k < next.length && next.idAt(k) === this.shown[k]!.shown.id) {
      const added = extensionDrafts(this.shown[k]!.shown, next.at(k), geminiBaseSessionId);
      if (added !== null) {
        for (const d of added) drafts.push({ ...d, part: `${k}:${d.part}`, message: next.idAt(k) });
        this.shown[k]!.shown = next.shownAt(k);
        k++;
      }
    }
    if (k < this.shown.length) this.branch(k, kind, l.line, this.tsOf(k < next.length ? next.at(k) : undefined) ?? this.lastTs);
    for (let i = k; i < next.length; i++) {
      const msg = next.at(i);
      const s = { shown: next.shownAt(i), lastSeq: 0 };
      this.shownIndex.set(s.shown.id, this.shown.length);
      this.shown.push(s);
      for (const d of fullDrafts(msg, geminiBaseSessionId)) drafts.push({ ...d, part: `${i}:${d.part}`, message: msg.id as string });
    }
    this.emitLine(l, drafts, carrier);
    if (this.sink !== null) next.release();
  }

  /**
   * The first message the Log does not show as it is now. Without a rewind or a replacement only the
   * messages upserted since the last line can differ, so only they are compared (a long session stays
   * linear); otherwise the whole list is.
   */
  private firstDifference(next: MessageList): number {
    const list = this.list;
    const touched = list.touched;
    const structural = list.structural;
    list.touched = new Set();
    list.structural = false;
    const same = (k: number): boolean => next.idAt(k) === this.shown[k]!.shown.id && showsSame(this.shown[k]!.shown, next.shownAt(k));
    const limit = Math.min(this.shown.length, next.length);
    if (structural) {
      let k = 0;
      while (k < limit && same(k)) k++;
      return k;
    }
    let first = limit;
    for (const id of touched) {
      const at = this.shownIndex.get(id);
      if (at !== undefined && at < first && !same(at)) first = at;
    }
    return first;
  }

  private tsOf(msg: JsonObject | undefined): string | undefined {
    return msg !== undefined && typeof msg.timestamp === "string" ? msg.timestamp : undefined;
  }
}

/** The data of the header carrier (line 1): the session facts Gemini records. */
function headerData(parsed: ParsedGeminiFile, file: string): JsonObject {
  const m = parsed.metadata;
  const place = placeOf(file);
  const dirs = Array.isArray(m.directories) ? m.directories.filter((d) => typeof d === "string") : [];
  const parentSessionId = m.kind === "subagent" || place.parentSessionId !== null ? place.parentSessionId : null;
  return {
    event: "gemini_session_meta",
    agent: "gemini",
    session_id: m.sessionId as string,
    project_hash: typeof m.projectHash === "string" ? m.projectHash : null,
    start_time: typeof m.startTime === "string" ? m.startTime : null,
    kind: typeof m.kind === "string" ? m.kind : "main",
    cwd: (dirs[0] as string | undefined) ?? null,
    title: typeof m.summary === "string" ? m.summary : null,
    parent_session_id: parentSessionId,
    file: path.basename(file),
    project: place.project,
    legacy: parsed.legacy,
  };
}

/** The carrier data of a line that gives no other Event. */
function carrierData(l: GeminiLine): JsonObject {
  const r = l.record;
  if (l.kind === "set" && r !== null && isJsonObject(r.$set)) {
    const set = r.$set;
    const facts: JsonObject = { event: "gemini_record", record: "set", keys: Object.keys(set) };
    if (typeof set.summary === "string") facts.title = set.summary;
    if (typeof set.lastUpdated === "string") facts.last_updated = set.lastUpdated;
    return facts;
  }
  if (l.kind === "rewind" && r !== null) return { event: "gemini_record", record: "rewind", rewind_to: r.$rewindTo as string };
  return { event: "gemini_record", record: l.kind };
}

/** The source line an Event came from (named when one of its strings cannot be stored). */
export const geminiSourceLine = (e: PixirEvent): unknown => (isJsonObject(e.data.gemini) ? (e.data.gemini.line ?? null) : null);

/** A planned Log's lines checked as they would be written, none kept (a dry run). */
export function checkGeminiLog(log: PlannedGeminiLog, file: string): void {
  checkPlannedLines(log.stored, file, geminiSourceLine);
}

/** A planned Log's bytes: what is compared with a Log on disk. */
export const geminiLogBytes = (log: PlannedGeminiLog, file: string): Buffer => plannedLogBytes(log.stored, file, geminiSourceLine);

/** A streamed plan met a branch: the file is to be planned whole (planGeminiFamily without a sink). */
export class StreamDeclined extends Error {}

/**
 * Plan every Log of one parsed file (its Events; their bytes are made as they are checked or written).
 * Writes nothing. With `sink`, each Event goes to it as it is made and none is kept (the root Log's
 * `stored` stays empty): the file must be JSONL, and a branch throws StreamDeclined.
 */
export function planGeminiFamily(ws: string, parsed: ParsedGeminiFile, file: string, sink: ((e: PixirEvent) => void) | null = null): PlannedGeminiFamily {
  const sessionIdRaw = parsed.metadata.sessionId as string;
  const base = geminiBaseSessionId(sessionIdRaw);
  const p = new FamilyPlanner(ws, parsed, sessionIdRaw, base, sink);
  let first = true;
  for (const l of parsed.lines) {
    const r = l.record;
    if (first) {
      first = false;
      p.emitLine(l, [{ type: "workflow_event", part: "header", ts: p.lastTs, data: headerData(parsed, file) }], {});
      if (parsed.legacy) {
        parsed.legacyMessages.forEach((msg) => {
          if (typeof msg.id === "string") p.list.upsert(msg);
        });
        p.reconcile(l, "replace", {});
      }
      continue;
    }
    if (r === null || l.kind === "other" || l.kind === "metadata") {
      p.emitLine(l, [], carrierData(l));
    } else if (l.kind === "message") {
      p.list.upsert(r);
      p.reconcile(l, "edit", carrierData(l));
    } else if (l.kind === "rewind") {
      p.list.rewind(r.$rewindTo as string);
      p.reconcile(l, "rewind", carrierData(l));
    } else {
      const set = r.$set as JsonObject;
      if (Array.isArray(set.messages)) p.list.replace(set.messages);
      p.reconcile(l, "replace", carrierData(l));
    }
  }
  return { file, sessionIdRaw, baseSessionId: base, parsed, logs: p.logs, leaf: p.current, messageCount: p.list.length };
}
