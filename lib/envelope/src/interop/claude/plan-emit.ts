// claude-interop.md §2–§3.6: the Events of an import batch, once every record is placed: each Log's first
// Events (plan-heads.ts), then its records mapped in line order (from their bytes when the line is
// canonical, map-bytes.ts; else parsed once, map.ts), each followed by the subagent_event it links.
import { CANONICAL_TYPES, isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { derivedUlid } from "../../event/ids.js";
import { readJsonLine, type JsonTape } from "../../fast/json-tape.js";
import type { SourceFile } from "./discover.js";
import { recordDrafts, reproduction, usageDraft, usageKeyOf, type ClaudeEventDraft } from "./map.js";
import { draftTexts, Spliced } from "./map-bytes.js";
import { addBranchHeader, addCarrier, addForkFileHeader, EventTexts, HeldTextEvent, TextEvent } from "./plan-heads.js";
import type { Link } from "./plan-links.js";
import { push, storesEveryEvent, type LogPlan } from "./plan-log.js";
import type { Placement } from "./plan-place.js";
import { denseSpan, PlaceIndex, RecordMap, type ByUuid } from "./record-columns.js";
import { recordTape, type Facts } from "./record-facts.js";
import { BufferBytes } from "./source-bytes.js";
import { inLineOrder, type ClaudeRecord } from "./transcript.js";

/** What emission reads of the batch. */
export interface EmitInput {
  ws: string;
  src: SourceFile;
  records: ClaudeRecord[];
  placement: Placement;
  carrierTs: string;
  tsOf: (r: ClaudeRecord) => string;
  links: Map<ClaudeRecord, Link>;
}

type ToolNames = { toolName: (id: string) => string | null };

export class Emission {
  /** The line of each Event whose `data.claude.record` is a canonical line (so JSON.stringify(record) is that line). */
  readonly recordText = new Map<PixirEvent, string>();
  /** The whole `data` text of each Event mapped from its record's bytes. */
  readonly eventText = new EventTexts();
  private readonly tape = recordTape();
  /** Tool names by transcript, then tool_use id (the first line naming it): no key text made per tool call. */
  private readonly toolNames: Array<Map<string, { line: number; name: string }>> = [];
  /** The first line of each usage key (§2.4: usage is counted once per message). */
  private firstUsage: FirstUsage;
  private readonly partTexts = new Map<string, string>();
  /** Texts made again when written (RemadeTexts): the tape they are read with, and the last record's. */
  private readonly remakeTape = recordTape();
  private remadeOf: ClaudeRecord | null = null;
  private remadeTexts: Array<{ part: string; text: Spliced }> = [];
  /** What the RemadeEvents of each Log share (by Log id). */
  private readonly remadeLogs = new Map<string, RemadeLog>();

  constructor(private readonly input: EmitInput) {
    this.firstUsage = new FirstUsage(input.records);
    for (const r of input.records) {
      const f = r.facts;
      if (f === null || r.type !== "assistant" || !r.message) continue;
      for (const b of f.toolUses) {
        if (b.name === null) continue;
        const names = (this.toolNames[r.transcript] ??= new Map());
        if (!names.has(b.id)) names.set(b.id, { line: r.line, name: b.name });
      }
      this.firstUsage.add(r, f);
    }
  }

  /** `,"part":"<part>"`, one string per part name. */
  private partText(part: string): string {
    let text = this.partTexts.get(part);
    if (text === undefined) this.partTexts.set(part, (text = `,"part":${JSON.stringify(part)}`));
    return text;
  }

  private eventId(key: string, part: string, ts: string): string {
    return derivedUlid(`claude:${this.input.src.sourceKey}:${key}#${part}`, ts);
  }

  /** The id of `rec`'s Event `part` (its key: its uuid, or its line). */
  recordEventId(rec: ClaudeRecord, part: string): string {
    return this.eventId(recordKey(rec), part, this.input.tsOf(rec));
  }

  tsOf(rec: ClaudeRecord): string {
    return this.input.tsOf(rec);
  }

  /** Every Log's Events, parents before children (creation order does that); true when a Log gained records. */
  emitLogs(): boolean {
    const { placement } = this.input;
    const root = placement.transcriptRoot(0);
    let changedAny = false;
    for (const log of placement.logs) {
      const wasEmpty = log.events.length === 0;
      if (wasEmpty && log.placed.length === 0 && log !== root) continue;
      if (!log.existed && wasEmpty) this.opening(log);
      // §2.4: the Events of a batch follow line order, whichever step placed the record.
      inLineOrder(log.placed);
      // A new Log's last seqs: a column at its length when its records are most of the file's up to its last.
      if (!log.existed && log.lastSeq.size === 0) log.lastSeq = new RecordMap(denseSpan(log.placed));
      // A Log on disk gains its Events in its History alone and its batch is cut from it after: the two
      // arrays grown side by side left the arrays they outgrew as V8 large objects, garbage until the next
      // full GC (docs/performance.md, "Round 12").
      const onDisk = log.existed && log.batch.length === 0;
      if (onDisk) log.batch = log.events;
      for (const rec of log.placed) this.emitRecord(log, rec, log.placedOnPath.has(rec));
      if (onDisk) log.batch = log.events.slice(log.diskEvents);
      if (log.batch.length > 0 && log.placed.length > 0) changedAny = true;
    }
    // Its Events know whether they carry usage: what remains is what making them again reads.
    this.firstUsage = new FirstUsage([]);
    return changedAny;
  }

  /** A new Log's first Events: a carrier, a shared fork file's header, or a branch header. */
  private opening(log: LogPlan): void {
    const { ws, src, records, placement, carrierTs, tsOf } = this.input;
    if (log === placement.sharedRoot) addForkFileHeader(ws, log, src, placement.shared!, carrierTs, records, this.eventText);
    else if (log.parent === null) {
      storesEveryEvent(log);
      addCarrier(log, src, log.transcript === 0 ? null : placement.groupStarts[log.transcript - 1]!, carrierTs, records);
    } else addBranchHeader(ws, log, src, tsOf, this.eventText);
  }

  /** Tool names as the record at `rec` may name them: from a tool_use on an earlier line of its transcript. */
  private toolNamesOf(rec: ClaudeRecord): ToolNames {
    return {
      toolName: (id: string) => {
        const t = this.toolNames[rec.transcript]?.get(id);
        return t !== undefined && t.line < rec.line ? t.name : null;
      },
    };
  }

  private emitRecord(log: LogPlan, rec: ClaudeRecord, path: boolean): void {
    const key = recordKey(rec);
    const withUsage = rec.message && rec.type === "assistant" && rec.facts !== null && this.firstUsage.isFirst(rec, rec.facts);
    // A canonical line is mapped from its bytes (map-bytes.ts), its Events' data written as text. The ts is
    // asked for where it is used: a RemadeEvent makes it again when written (a record's time may be kept
    // as a number, transcript.ts, and its string made on each ask).
    if (!(rec.canonical && this.fromBytes(log, rec, path, key, withUsage))) this.fromParsed(log, rec, path, key, this.input.tsOf(rec), this.toolNamesOf(rec), withUsage);
    const link = this.input.links.get(rec);
    if (link !== undefined) this.linkEvent(log, rec, link, key, this.input.tsOf(rec));
    log.lastSeq.set(rec, log.events.length - 1);
  }

  /** The record's Events with their `data` spliced from its bytes; false when the line is not read that way. */
  private fromBytes(log: LogPlan, rec: ClaudeRecord, path: boolean, key: string, withUsage: boolean): boolean {
    const texts = this.recordTexts(rec, path, withUsage, this.tape);
    if (texts === null) return false;
    // A file not held whole: each Event's text (and id) is made again from the file when written.
    if (!(rec.bytes instanceof BufferBytes)) {
      this.remadeOf = rec;
      this.remadeTexts = texts.map((t) => ({ part: t.part, text: t.text }));
      const shared = this.remadeLog(log.id);
      texts.forEach((t, i) => push(log, new RemadeEvent(shared, rec, log.events.length, remadeBits(i, path, withUsage, t.type))));
    } else {
      const ts = this.input.tsOf(rec);
      texts.forEach((t) => push(log, new HeldTextEvent(this.eventId(key, t.part, ts), log.id, log.events.length, ts, t.type, t.text)));
    }
    return true;
  }

  /** The `data` texts of a canonical record's Events (draftTexts), in order; null when its bytes are not read that way. */
  private recordTexts(rec: ClaudeRecord, path: boolean, withUsage: boolean, tape: JsonTape): Array<{ type: PixirEvent["type"]; part: string; text: Spliced }> | null {
    // The line's bytes where they are now (the file's buffer, or a window of the file): read here, once.
    const src = rec.bytes;
    const b = src.hold(rec.start, rec.end);
    const base = src.base;
    if (!readJsonLine(b, rec.start - base, rec.end - base, tape, true)) return null;
    const drafts = draftTexts(tape, b, rec.type!, rec.facts!.subtype, path && rec.message, this.toolNamesOf(rec), withUsage, src, base);
    if (drafts === null) return null;
    // One text of the record's `claude` head for all its Events, and one of each part name for the run.
    const claude = `,"claude":{"line":${rec.line}${rec.chain ? `,"uuid":${JSON.stringify(rec.uuid)}` : ""}`;
    return drafts.map((d, i) => {
      const data = new Spliced(src).lit("{").append(d.fields).lit(claude).lit(this.partText(d.part));
      if (i === 0) {
        if (rec.message) data.lit(path ? ',"path":true' : ',"path":false');
        data.lit(',"record":').range(rec.start, rec.end);
      }
      return { type: d.type, part: d.part, text: data.lit("}}").seal() };
    });
  }

  private remadeLog(id: string): RemadeLog {
    let shared = this.remadeLogs.get(id);
    if (shared === undefined) this.remadeLogs.set(id, (shared = { emission: this, session_id: id }));
    return shared;
  }

  /** The text and part of `rec`'s Event made again (the last record's are kept: its Events are written one after the other). */
  remade(rec: ClaudeRecord, bits: number): { part: string; text: Spliced } {
    if (this.remadeOf !== rec) {
      this.remadeTexts = this.recordTexts(rec, (bits & REMADE_PATH) !== 0, (bits & REMADE_USAGE) !== 0, this.remakeTape)!.map((t) => ({ part: t.part, text: t.text }));
      this.remadeOf = rec;
    }
    return this.remadeTexts[bits & REMADE_INDEX]!;
  }

  /** The record parsed here, once, and let go with its Events. */
  private fromParsed(log: LogPlan, rec: ClaudeRecord, path: boolean, key: string, ts: string, ctx: ToolNames, withUsage: boolean): void {
    const { value: v, text } = rec.read();
    const drafts: ClaudeEventDraft[] = recordDrafts(rec, v, path && rec.message, ctx);
    if (withUsage && v !== null) {
      const u = usageDraft(v);
      if (u !== null) drafts.push(u);
    }
    drafts.forEach((d, i) => {
      const seq = log.events.length;
      const data = d.compaction ? compactionData(d.data, seq, rec, this.input.placement.firstByUuid) : d.data;
      const claude: JsonObject = { line: rec.line, ...(rec.chain ? { uuid: rec.uuid } : {}), part: d.part };
      if (i === 0) {
        if (rec.message) claude.path = path;
        Object.assign(claude, reproduction(rec, v, text));
      }
      const event: PixirEvent = { id: this.eventId(key, d.part, ts), session_id: log.id, seq, ts, type: d.type, data: { ...data, claude } };
      // A canonical line is its record's JSON text (§2.3): the writer puts the line itself in the Event.
      if ("record" in claude && text !== null) this.recordText.set(event, text);
      push(log, event);
    });
  }

  /** §3.6: the `returned` subagent_event of a record that links a subagent transcript. */
  private linkEvent(log: LogPlan, rec: ClaudeRecord, link: Link, key: string, ts: string): void {
    const { ws, src } = this.input;
    push(log, {
      id: this.eventId(key, "agent", ts),
      session_id: log.id,
      seq: log.events.length,
      ts,
      type: "subagent_event",
      data: {
        subagent_id: link.subagentId,
        ...(link.childId !== null ? { child_session_id: link.childId } : {}),
        event: "returned",
        status: link.status,
        agent: link.agent,
        task: link.task,
        depth: src.kind === "subagent" ? 2 : 1,
        ...(link.childId !== null ? { workspace: ws } : {}),
        ...(link.elapsed !== null ? { elapsed_ms: link.elapsed } : {}),
        claude: { line: rec.line, ...(rec.chain ? { uuid: rec.uuid } : {}), part: "agent" },
      },
    });
  }
}

/**
 * §2.4: the first line of each usage key (message id, request id; map.ts usageKeyOf): usage is counted once
 * per message. The first record of each message id is a table of places (record-columns.ts PlaceIndex: a
 * Map of 94,000 message ids was 4 MB and as much garbage), so no key text is made per record either; a
 * message id met again with another request id keeps that pair's first line by its key.
 */
class FirstUsage {
  private readonly byMessage: PlaceIndex<ClaudeRecord>;
  private readonly byPair = new Map<string, number>();

  constructor(records: readonly ClaudeRecord[]) {
    this.byMessage = new PlaceIndex(records, messageIdOf);
  }

  add(r: ClaudeRecord, f: Facts): void {
    if (f.messageId === null) return;
    const first = this.byMessage.get(f.messageId);
    if (first === undefined) this.byMessage.add(r);
    else if (first.facts!.requestId !== f.requestId) {
      const k = usageKeyOf(f)!;
      if (!this.byPair.has(k)) this.byPair.set(k, r.line);
    }
  }

  /** Whether `r` carries its message's usage: it has no usage key, or it is that key's first record. */
  isFirst(r: ClaudeRecord, f: Facts): boolean {
    if (f.messageId === null) return true;
    const first = this.byMessage.get(f.messageId);
    if (first === undefined) return false;
    if (first.facts!.requestId === f.requestId) return first.line === r.line;
    return this.byPair.get(usageKeyOf(f)!) === r.line;
  }
}

const messageIdOf = (r: ClaudeRecord): string | null => r.facts?.messageId ?? null;

/** An Event's key in its id: its record's uuid, or its line (a duplicate, a record off the chain). */
const recordKey = (rec: ClaudeRecord): string => (rec.chain && !rec.dup ? rec.uuid! : `L${rec.line}`);

// A RemadeEvent's place among its record's Events, how the record was mapped and the Event's type, in one
// small integer (30 bits: a V8 small integer, kept in the object itself). A record has an Event per content
// block at most, and a source line is at most 32 MiB: far fewer than 2^24.
const REMADE_INDEX = 0xffffff;
const REMADE_PATH = 1 << 24;
const REMADE_USAGE = 1 << 25;
const REMADE_TYPE_SHIFT = 26;
const remadeBits = (index: number, path: boolean, withUsage: boolean, type: PixirEvent["type"]): number =>
  index | (path ? REMADE_PATH : 0) | (withUsage ? REMADE_USAGE : 0) | (CANONICAL_TYPES.indexOf(type) << REMADE_TYPE_SHIFT);

/** What the RemadeEvents of one Log share, held once rather than by each of them. */
interface RemadeLog {
  readonly emission: Emission;
  readonly session_id: string;
}

/**
 * An Event of a record of a file not held whole (source-bytes.ts FileBytes): its text made again from the
 * file when it is written or read (the same draftTexts over the same bytes, so the same text), its id and
 * ts from its record when asked for. It holds its record, not its text: a large unit's plan holds one small
 * object per Event (docs/performance.md, "Round 5").
 */
class RemadeEvent extends TextEvent {
  constructor(
    private readonly log: RemadeLog,
    private readonly rec: ClaudeRecord,
    readonly seq: number,
    private readonly bits: number,
  ) {
    super();
  }
  get session_id(): string {
    return this.log.session_id;
  }
  get type(): PixirEvent["type"] {
    return CANONICAL_TYPES[this.bits >>> REMADE_TYPE_SHIFT]!;
  }
  /** Its part name is its text's (made again, as the id is asked for when its line is written). */
  get id(): string {
    return this.log.emission.recordEventId(this.rec, this.log.emission.remade(this.rec, this.bits).part);
  }
  get ts(): string {
    return this.log.emission.tsOf(this.rec);
  }
  get text(): Spliced {
    return this.log.emission.remade(this.rec, this.bits).text;
  }
  get holdsText(): boolean {
    return false;
  }
}

/** §3.8: the range of a compact summary at `seq`. */
function compactionData(data: JsonObject, seq: number, rec: ClaudeRecord, byUuid: ByUuid<ClaudeRecord>): JsonObject {
  const out: JsonObject = { ...data, range: { from_seq: 0, to_seq: seq - 1 }, source_event_count: seq };
  const p = rec.parentUuid === null ? undefined : byUuid.get(rec.parentUuid);
  const v = p !== undefined && p.type === "system" && p.facts?.compactBoundary === true ? p.value : null;
  if (v) {
    const meta = isJsonObject(v.compactMetadata) ? v.compactMetadata : {};
    if (meta.trigger !== undefined) out.trigger = meta.trigger;
    if (meta.preTokens !== undefined) out.pre_tokens = meta.preTokens;
  }
  return out;
}
