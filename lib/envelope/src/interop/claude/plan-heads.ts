// claude-interop.md §3.5, §3.7, §3.8 and fork.md §4.3: the first Events of a new Log of an import batch:
// a transcript root's carrier, a branch's share_v1 header with its inherited prefix and carried checkpoint,
// a shared fork file's header. EventTexts holds the `data` text of the Events mapped from record bytes.
import { envelopeHead, isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { derivedUlid } from "../../event/ids.js";
import { isValidSessionId } from "../../event/session-id.js";
import { MAX_IMPORT_SHARE_HOPS, REPLAY_LIMITATIONS, shareHeaderData } from "../../fork/fork.js";
import { inheritedItem, isInherited } from "../../store/loader.js";
import type { SourceFile } from "./discover.js";
import type { SharedFork } from "./fork-file.js";
import { HeldEvent } from "./held-event.js";
import { Spliced } from "./map-bytes.js";
import { firstTime, push, sourceRecordSeqs, type LogPlan } from "./plan-log.js";
import type { ClaudeRecord } from "./transcript.js";

/** §3.5: the carrier of a transcript root Log. */
export function addCarrier(log: LogPlan, src: SourceFile, groupStart: ClaudeRecord | null, fileTs: string, records: ClaudeRecord[], shared: SharedFork | null = null): void {
  const ts = groupStart === null ? fileTs : firstTime(records.filter((r) => r.transcript === groupStart.transcript));
  const kind = groupStart !== null ? "inline_subagent" : src.kind;
  const forkedFrom = shared !== null ? { session_id: shared.source, message_uuid: shared.messageUuid, shared: true } : forkedFromOf(src, records);
  push(log, {
    id: derivedUlid(`claude:${src.sourceKey}:${groupStart === null ? "transcript" : `sidechain:${groupStart.uuid}`}`, ts),
    session_id: log.id,
    seq: log.events.length,
    ts,
    type: "workflow_event",
    data: {
      event: "claude_transcript",
      claude: {
        source: src.sourceKey,
        kind,
        session_id: isValidSessionId(src.claudeSessionId) ? src.claudeSessionId : null,
        agent_id: src.agentId,
        file: src.file,
        project_dir: src.projectDir,
        layout: groupStart !== null ? "inline" : src.layout,
        forked_from: forkedFrom,
        ...(shared !== null ? { copied: shared.entries } : {}),
      },
    },
  });
}

/** §3.7 (not shared): the carrier's `forked_from` of a fork file, else null. */
function forkedFromOf(src: SourceFile, records: ClaudeRecord[]): JsonObject | null {
  if (src.kind !== "fork_session") return null;
  let uuid: unknown = null;
  let s: unknown = null;
  for (const r of records) {
    const ff = r.value?.forkedFrom;
    if (r.chain && isJsonObject(ff) && typeof ff.sessionId === "string" && ff.sessionId !== src.claudeSessionId) {
      s = ff.sessionId;
      uuid = ff.messageUuid ?? null;
    }
  }
  return s === null ? null : { session_id: s, message_uuid: uuid, shared: false };
}

/** §3.4 "branch of G at F" and fork.md §4.3: the share_v1 header, the inherited prefix, a carried checkpoint. */
export function addBranchHeader(ws: string, log: LogPlan, src: SourceFile, tsOf: (r: ClaudeRecord) => string, texts: EventTexts): void {
  const g = log.parent!;
  const f = log.forkPoint;
  const toSeq = f === null ? 0 : (g.lastSeq.get(f) ?? 0);
  log.forkedToSeq = toSeq;
  const head = log.placed.reduce((a, b) => (b.line < a.line ? b : a));
  const ts = tsOf(head);
  let familyRoot: LogPlan = g;
  while (familyRoot.parent !== null) familyRoot = familyRoot.parent;
  const key = `claude:${src.sourceKey}:fork:${head.uuid}`;
  const claude = { source: src.sourceKey, fork_kind: f === null ? "claude_root" : "claude_branch", fork_point_uuid: f?.uuid ?? null, head_uuid: head.uuid };
  const replay = g.shareHops + 1 > MAX_IMPORT_SHARE_HOPS;
  const inherited = addShareHeader(ws, log, { id: g.id, forkRoot: familyRoot.id, events: g.events }, toSeq, key, ts, claude, texts, replay);
  log.shareHops = replay ? 0 : g.shareHops + 1;
  carryCheckpoint(log, g.events, inherited, toSeq, `${key}#checkpoint`, ts);
}

/**
 * fork.md §4.3: a share_v1 header of `log` at `toSeq` of `parent`, and the prefix it stands for; returns
 * that prefix. `replay`: the header says replay_v1 and the prefix is stored in the Log (as pixir-log
 * materialize writes a share child), the same History either way.
 */
function addShareHeader(ws: string, log: LogPlan, parent: { id: string; forkRoot: string; events: PixirEvent[] }, toSeq: number, key: string, ts: string, claude: JsonObject, texts: EventTexts, replay = false): PixirEvent[] {
  const inherited = parent.events.filter((e) => isInherited(e, toSeq));
  const shared = texts.shareData(ws, parent, toSeq, inherited);
  const header: PixirEvent = {
    id: derivedUlid(key, ts),
    session_id: log.id,
    seq: 0,
    ts,
    type: "session_fork",
    data: replay ? { ...shared, strategy: "replay_v1", limitations: REPLAY_LIMITATIONS, claude } : { ...shared, claude },
  };
  push(log, header);
  for (let i = 0; i < inherited.length; i++) {
    const copy = texts.inheritedCopy(inherited[i]!, header.id!, log.id, i + 1);
    if (replay) push(log, copy);
    else log.events.push(copy);
  }
  log.ownStart = log.events.length;
  return inherited;
}

/**
 * An Event whose `data` is a text (map-bytes.ts): parsed only when something reads it (a share header's
 * digest of an inherited prefix, a fork file's match), so a planned Log holds no parsed record. The text is
 * held (HeldTextEvent: a file read whole), or made again from the record when written (plan-emit.ts
 * RemadeEvent: a file read in blocks), so a large unit's plan holds a small object per Event, not its text.
 */
export abstract class TextEvent implements PixirEvent {
  abstract readonly id: string;
  abstract readonly session_id: string;
  abstract readonly seq: number;
  abstract readonly ts: string;
  abstract readonly type: PixirEvent["type"];
  abstract get text(): Spliced;
  /** Its text is held, not made again when asked for. */
  abstract get holdsText(): boolean;
  /** Parsed each time it is read (a caller that reads it often keeps it). */
  get data(): JsonObject {
    return JSON.parse(this.text.toString()) as JsonObject;
  }
}

/** A TextEvent of a file read whole: its text held, its data kept once parsed. */
export class HeldTextEvent extends TextEvent {
  private parsed: JsonObject | undefined = undefined;
  constructor(
    readonly id: string,
    readonly session_id: string,
    readonly seq: number,
    readonly ts: string,
    readonly type: PixirEvent["type"],
    readonly text: Spliced,
  ) {
    super();
  }
  get holdsText(): boolean {
    return true;
  }
  override get data(): JsonObject {
    return (this.parsed ??= JSON.parse(this.text.toString()) as JsonObject);
  }
}

/**
 * The `data` text of the Events mapped from their records' bytes (map-bytes.ts), by Event: the writer
 * writes them from it, and a share header digests their lines from it (a prefix read from bytes, as the
 * loader reads it), so their data is never parsed.
 */
export class EventTexts extends Map<PixirEvent, Spliced> {
  private readonly shared = new Map<string, JsonObject>();
  override get(e: PixirEvent): Spliced | undefined {
    return e instanceof TextEvent ? e.text : super.get(e);
  }
  /**
   * fork.md §4.3: the share_v1 header data of `parent`'s prefix up to `toSeq` (`inherited`), digested once
   * for every Log that branches at that Event (a record with two or more children).
   */
  shareData(ws: string, parent: { id: string; forkRoot: string }, toSeq: number, inherited: readonly PixirEvent[]): JsonObject {
    const key = `${parent.id}\u0000${parent.forkRoot}\u0000${toSeq}`;
    let data = this.shared.get(key);
    if (data === undefined) this.shared.set(key, (data = shareHeaderData(ws, parent.id, parent.forkRoot, toSeq, inherited, (e) => this.lineOf(e))));
    return { ...data, open_tool_calls: [...(data.open_tool_calls as string[])] };
  }
  /** `e`'s Log line without its `\n`, when its data is a text. */
  lineOf(e: PixirEvent): Buffer | null {
    const data = this.get(e);
    if (data === undefined) return null;
    const head = envelopeHead(e);
    const out = Buffer.allocUnsafe(head.length * 3 + data.maxBytes + 1);
    let at = out.write(head, 0, "utf8");
    at = data.writeInto(out, at);
    out[at++] = 0x7d; // "}"
    return out.subarray(0, at);
  }
  /** The child's copy of an inherited Event (loader.ts inheritedItem), its data the parent's, read when asked for. */
  inheritedCopy(e: PixirEvent, headerId: string, childId: string, k: number): PixirEvent {
    const data = this.get(e);
    if (data === undefined && !(e instanceof HeldEvent)) return inheritedItem({ event: e }, headerId, childId, k).event;
    // Built field by field: a spread of `e` would read (and parse) its data.
    const copy = inheritedItem({ event: { id: e.id, session_id: e.session_id, seq: e.seq, ts: e.ts, type: e.type, data: {} } }, headerId, childId, k).event;
    // An Event of a Log on disk: the copy reads its data from the parent's line too, when asked.
    if (data === undefined) return (e as HeldEvent).inheritedAs(copy);
    Object.defineProperty(copy, "data", { get: () => e.data, enumerable: true, configurable: true });
    this.set(copy, data);
    return copy;
  }
}

/** §3.8 carried checkpoint: the latest checkpoint of the parent at or before the fork point. */
function carryCheckpoint(log: LogPlan, parentEvents: PixirEvent[], inherited: PixirEvent[], toSeq: number, key: string, ts: string): void {
  const c = parentEvents.filter((e) => e.type === "history_compaction" && e.seq! <= toSeq).at(-1);
  if (c === undefined || !isJsonObject(c.data.range) || typeof c.data.range.to_seq !== "number") return;
  const upTo = c.data.range.to_seq;
  const n = inherited.filter((e) => e.seq! <= upTo).length;
  const cClaude = isJsonObject(c.data.claude) ? c.data.claude : {};
  push(log, {
    id: derivedUlid(key, ts),
    session_id: log.id,
    seq: log.events.length,
    ts,
    type: "history_compaction",
    data: { ...c.data, range: { ...c.data.range, from_seq: 0, to_seq: n }, source_event_count: n + 1, claude: { carried_from: c.id, uuid: cClaude.uuid ?? null } },
  });
}

/** §3.7 shared: the fork file's root Log is a share_v1 child of the source's Log G; then its carrier. */
export function addForkFileHeader(ws: string, log: LogPlan, src: SourceFile, shared: SharedFork, ts: string, records: ClaudeRecord[], texts: EventTexts): void {
  const key = `claude:${src.sourceKey}:forked_from`;
  const claude = { source: src.sourceKey, fork_kind: "claude_fork_session", forked_from: { session_id: shared.source, message_uuid: shared.messageUuid } };
  const parent = { id: shared.parentId, forkRoot: shared.forkRoot, events: shared.parentEvents };
  const inherited = addShareHeader(ws, log, parent, shared.forkedToSeq, key, ts, claude, texts);
  // A copied record stands for its source record: a branch at it forks at that record's last inherited Event.
  const inheritedSeq = sourceRecordSeqs(log);
  shared.entries.forEach((entry, i) => {
    const seq = inheritedSeq.get(entry.source_uuid);
    if (seq !== undefined) log.lastSeq.set(shared.copied[i]!, seq);
  });
  addCarrier(log, src, null, ts, records, shared);
  carryCheckpoint(log, shared.parentEvents, inherited, shared.forkedToSeq, `${key}#checkpoint`, ts);
}
