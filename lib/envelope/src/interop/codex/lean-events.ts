// A lean plan's Events (lean-plan.ts) held as columns, not objects: a rollout of many short lines plans
// hundreds of thousands of Events, and each rollback child inherits its parent's. A line Event is a row of
// the family's FactColumns (what planning reads of its data, its ts, where its line lies in the spill);
// a Log's History is a list of rows, a share child's prefix the rows of its parent's Events, renumbered as
// read. An Event is made as an object only when it is read, and dropped after.
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { derivedUlid } from "../../event/ids.js";
import type { EventSequence } from "../../fork/fork.js";
import type { SpillPlace } from "./event-spill.js";
import { Column, NearColumn } from "./columns.js";
import type { EventList } from "./family.js";

/** The greatest line a row holds (a Uint32 column); an Event of a later line is kept whole. */
export const MAX_ROW_LINE = 0xffffffff;

/** What planning reads of a line Event's data, less its line and call id: shared by many rows. */
interface Shape {
  type: PixirEvent["type"];
  /** The codex members other than `line`: part, skipped, the record's type. */
  codex: JsonObject;
  origin: unknown;
}

/**
 * The facts of a plan's line Events, one row each: its shape, line, call id, ts and spill place. The
 * Events planning reads whole (a checkpoint, a header, a link: few and small) are kept as they are.
 */
export class FactColumns {
  private readonly shape = new Column((n) => new Uint32Array(n));
  private readonly line = new Column((n) => new Uint32Array(n));
  private readonly callId = new Column((n) => new Uint32Array(n));
  /** Where each row's line begins in the spill: the rows' lines lie there one after another, so it ends where the next begins. */
  private readonly at = new NearColumn();
  /** Where the last row's line ends. */
  private end = 0;
  /** Each row's ts as epoch milliseconds; NaN for one that does not read back as the same text (then in `odd`). */
  private readonly ts = new NearColumn();
  private readonly oddTs = new Map<number, string | null>();
  /** The ts last read, as text and milliseconds: the Events of one line share it. */
  private lastTs: { text: string | null; ms: number } = { text: null, ms: NaN };
  private readonly shapes: Shape[] = [];
  private readonly shapeCodes = new Map<string, number>();
  /** Values by code (0: none), interned. */
  private readonly values: unknown[] = [undefined];
  private readonly valueCodes = new Map<unknown, number>([[undefined, 0]]);
  private readonly wholes: PixirEvent[] = [];
  private readonly wholeHandles = new Map<PixirEvent, number>();

  /** A row for line Event `e` (line n, its line at `place`): the Event as its Log holds it. */
  add(e: PixirEvent, line: number, place: SpillPlace): FactEvent {
    const c = e.data.codex as JsonObject;
    const codex: JsonObject = {};
    if (c.part !== undefined) codex.part = c.part;
    if (c.skipped !== undefined) codex.skipped = c.skipped;
    if (isJsonObject(c.record)) codex.record = { type: c.record.type };
    const codes = [e.type, c.part, c.skipped, isJsonObject(c.record) ? c.record.type : undefined, e.data.origin].map((v) => this.code(v));
    const key = `${codes.join(",")}${isJsonObject(c.record) ? "" : "-"}`;
    let shape = this.shapeCodes.get(key);
    if (shape === undefined) this.shapeCodes.set(key, (shape = this.shapes.push({ type: e.type, codex, origin: e.data.origin }) - 1));
    if (place.at !== this.end) throw new Error("a lean plan's rows must hold the spill's lines one after another");
    const row = this.line.length;
    this.shape.push(shape);
    this.line.push(line);
    this.callId.push(this.code(e.data.call_id));
    this.at.push(place.at);
    this.end = place.at + place.len;
    this.ts.push(this.msOf(row, e.ts));
    return new FactEvent(this, row, e.session_id, e.seq!, null);
  }

  /** The handle of an Event of the plan: a row (≥ 0), or a whole Event (< 0). */
  handleOf(e: PixirEvent): number {
    if (e instanceof FactEvent) return e.row;
    const whole = e instanceof InheritedCopy ? e.of : e;
    let h = this.wholeHandles.get(whole);
    if (h === undefined) this.wholeHandles.set(whole, (h = -1 - (this.wholes.push(whole) - 1)));
    return h;
  }

  /** The Event of handle `h` at `seq` of Log `sessionId`; a copy (its id derived from `forkEventId`) when given. */
  eventAt(h: number, sessionId: string, seq: number, forkEventId: string | null): PixirEvent {
    if (h >= 0) return new FactEvent(this, h, sessionId, seq, forkEventId);
    const whole = this.wholes[-1 - h]!;
    return forkEventId === null ? whole : new InheritedCopy(whole, sessionId, seq, forkEventId);
  }

  typeOf(row: number): PixirEvent["type"] {
    return this.shapes[this.shape.get(row)]!.type;
  }
  tsOf(row: number): string | null {
    const ms = this.ts.get(row);
    return Number.isNaN(ms) ? this.oddTs.get(row)! : new Date(ms).toISOString();
  }

  /** `ts` as the milliseconds that give it back (toISOString), or NaN with `ts` kept for `row`. */
  private msOf(row: number, ts: string | null): number {
    if (ts !== null && ts !== this.lastTs.text) {
      const ms = Date.parse(ts);
      this.lastTs = { text: ts, ms: Number.isFinite(ms) && new Date(ms).toISOString() === ts ? ms : NaN };
    }
    if (ts !== null && !Number.isNaN(this.lastTs.ms)) return this.lastTs.ms;
    this.oddTs.set(row, ts);
    return NaN;
  }
  placeOf(row: number): SpillPlace {
    const at = this.at.get(row);
    return { at, len: (row + 1 < this.at.length ? this.at.get(row + 1) : this.end) - at };
  }

  /** A row's data as planning reads it (lean-plan.ts factsOf had it): carriesItem, lineOf, origin, call id. */
  factsOf(row: number): JsonObject {
    const shape = this.shapes[this.shape.get(row)]!;
    const out: JsonObject = { codex: { line: this.line.get(row), ...shape.codex } };
    if (shape.origin !== undefined) out.origin = shape.origin;
    const callId = this.values[this.callId.get(row)];
    if (callId !== undefined) out.call_id = callId;
    return out;
  }

  private code(v: unknown): number {
    let c = this.valueCodes.get(v);
    if (c === undefined) this.valueCodes.set(v, (c = this.values.push(v) - 1));
    return c;
  }
}

/** A row read as an Event of one Log at one seq: its own, or a copy of an inherited one. */
export class FactEvent implements PixirEvent {
  private facts: JsonObject | null = null;
  constructor(
    readonly table: FactColumns,
    readonly row: number,
    readonly session_id: string | null,
    readonly seq: number,
    /** The header id of the share child this is a copy in; null for the Event itself. */
    readonly forkEventId: string | null,
  ) {}
  get type(): PixirEvent["type"] {
    return this.table.typeOf(this.row);
  }
  get ts(): string | null {
    return this.table.tsOf(this.row);
  }
  get data(): JsonObject {
    return (this.facts ??= this.table.factsOf(this.row));
  }
  /** A copy's id (fork.md §3.1 step 8, as inheritedItem makes it); an own Event's id lies in its line. */
  get id(): string {
    if (this.forkEventId === null) throw new Error("a lean plan reads an Event's id from its line");
    return derivedUlid(`fork:${this.forkEventId}:${this.seq}`, this.ts);
  }
}

/** A copy of an Event kept whole, in a share child's History (as inheritedItem makes it). */
export class InheritedCopy implements PixirEvent {
  readonly of: PixirEvent;
  constructor(
    of: PixirEvent,
    readonly session_id: string,
    readonly seq: number,
    private readonly forkEventId: string,
  ) {
    this.of = of instanceof InheritedCopy ? of.of : of;
  }
  get id(): string {
    return derivedUlid(`fork:${this.forkEventId}:${this.seq}`, this.of.ts);
  }
  get ts(): string | null {
    return this.of.ts;
  }
  get type(): PixirEvent["type"] {
    return this.of.type;
  }
  get data(): JsonObject {
    return this.of.data;
  }
}

/**
 * The History of a Log of a lean plan: a handle per seq, seqs 1..inherited copies of its parent's Events.
 * Such a prefix that is a run of seqs of the parent is a view (`base`, `from`): the Log that holds those
 * handles and where the run starts there; any other is copied.
 */
export class LeanHistory implements EventList {
  /** The header, then (without a view) the prefix, then the Log's own Events. */
  private readonly handles = new Column((n) => new Int32Array(n));
  private inherited = 0;
  private forkEventId: string | null = null;
  private base: LeanHistory | null = null;
  private from = 0;
  constructor(
    private readonly table: FactColumns,
    private readonly sessionId: string,
  ) {}

  get length(): number {
    return this.handles.length + (this.base === null ? 0 : this.inherited);
  }
  /** How many Events after the header are copies (a share child's prefix). */
  get copies(): number {
    return this.inherited;
  }
  at(i: number): PixirEvent | undefined {
    const seq = i < 0 ? this.length + i : i;
    if (seq < 0 || seq >= this.length) return undefined;
    const copy = seq >= 1 && seq <= this.inherited;
    return this.table.eventAt(this.handleAt(seq), this.sessionId, seq, copy ? this.forkEventId : null);
  }
  private handleAt(seq: number): number {
    if (this.base === null || seq === 0) return this.handles.get(seq);
    return seq <= this.inherited ? this.base.handleAt(this.from + seq - 1) : this.handles.get(seq - this.inherited);
  }
  push(e: PixirEvent): void {
    this.handles.push(this.table.handleOf(e));
  }
  /** The prefix of a share child, after its header: `parent`'s Events at seqs `inherited`, read as copies. */
  inherit(parent: LeanHistory, inherited: Int32Array, forkEventId: string): void {
    this.forkEventId = forkEventId;
    const n = (this.inherited = inherited.length);
    if (n === 0 || inherited[n - 1]! - inherited[0]! !== n - 1) {
      for (const seq of inherited) this.handles.push(parent.handleAt(seq));
      return;
    }
    // A run: viewed where its handles are held (through the parent's own view when the run lies in it).
    let base = parent;
    let from = inherited[0]!;
    while (base.base !== null && from >= 1 && from + n - 1 <= base.inherited) [base, from] = [base.base, base.from + from - 1];
    [this.base, this.from] = [base, from];
  }
  *[Symbol.iterator](): Iterator<PixirEvent> {
    for (let i = 0; i < this.length; i++) yield this.at(i)!;
  }
}

/**
 * The Events of a Log file of a lean plan: its History less a share_v1 child's inherited prefix. A view:
 * pushEvent pushes each Event to the History, which this shows.
 */
export class LeanStored implements EventList {
  constructor(
    private readonly history: LeanHistory,
    /** A replay_v1 child stores its copies. */
    private readonly replay: boolean,
  ) {}
  private get skip(): number {
    return this.replay ? 0 : this.history.copies;
  }
  get length(): number {
    return this.history.length - this.skip;
  }
  at(i: number): PixirEvent | undefined {
    const j = i < 0 ? this.length + i : i;
    if (j < 0 || j >= this.length) return undefined;
    return this.history.at(j === 0 ? 0 : j + this.skip);
  }
  push(): void {}
  *[Symbol.iterator](): Iterator<PixirEvent> {
    for (let i = 0; i < this.length; i++) yield this.at(i)!;
  }
}

/** The Events of a History at some seqs, each made as it is read: a share child's prefix before it is cut. */
export class EventsAt implements EventSequence {
  constructor(
    private readonly history: EventList,
    private readonly seqs: Int32Array,
  ) {}
  get length(): number {
    return this.seqs.length;
  }
  at(i: number): PixirEvent | undefined {
    const seq = this.seqs.at(i);
    return seq === undefined ? undefined : this.history.at(seq);
  }
  *[Symbol.iterator](): Iterator<PixirEvent> {
    for (const seq of this.seqs) yield this.history.at(seq)!;
  }
}
