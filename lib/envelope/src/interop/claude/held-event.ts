// claude-interop.md §4.3 steps 4–6: an Event of a Log on disk, as an import plan holds it. A grown session
// is planned against its family's Logs; what the plan reads of their Events is a few facts (the line a
// record Event holds, its uuid, the kind of workflow Event, the child a subagent_event names), kept here,
// and the rest of an Event's `data` is read again from its Log line when something asks for it (a branch's
// inherited prefix, a line past the checkpoint), so planning holds a small object per Event, not the Log.
import { CANONICAL_TYPES, isJsonObject, type CanonicalType, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { heldLine } from "./map.js";
import { LineHead, readHead } from "../../fast/line-head.js";
import { interned } from "./record-facts.js";
import type { SourceBytes } from "./source-bytes.js";

/** What planning reads of an Event's `data`. */
export interface EventFacts {
  /** `data.claude` is an object (an Event of the import, §4.3 step 6). */
  readonly claude: boolean;
  /** `data.claude.line`, when a number. */
  readonly line: number | null;
  /** It holds its record (map.ts heldLine). */
  readonly held: boolean;
  /** `data.claude.path` is true. */
  readonly path: boolean;
  readonly uuid: string | null;
  /** `data.event`, when a string. */
  readonly event: string | null;
  /** `data.child_session_id`, when a string. */
  readonly child: string | null;
}

const NO_FACTS: EventFacts = { claude: false, line: null, held: false, path: false, uuid: null, event: null, child: null };

/** The facts of an Event (kept on one read from disk, else read from its `data`). */
export function eventFacts(e: PixirEvent): EventFacts {
  if (e instanceof HeldEvent) return e.facts;
  const { data } = e;
  const c = data.claude;
  const event = typeof data.event === "string" ? data.event : null;
  const child = typeof data.child_session_id === "string" ? data.child_session_id : null;
  if (!isJsonObject(c)) return event === null && child === null ? NO_FACTS : { ...NO_FACTS, event, child };
  return {
    claude: true,
    line: typeof c.line === "number" ? c.line : null,
    held: heldLine(e) !== null,
    path: c.path === true,
    uuid: typeof c.uuid === "string" ? c.uuid : null,
    event,
    child,
  };
}

/** Where an Event's line lies: its Log's bytes, and the line's offset and length in them. */
export interface LinePlace {
  readonly bytes: SourceBytes;
  readonly offset: number;
  readonly length: number;
}

// A HeldEvent's facts flags and its type, in one small integer.
const CLAUDE = 1;
const HELD = 2;
const PATH = 4;
/** `data.claude.uuid` is a string: read from the line when asked for (a fork file's inherited prefix). */
const UUID = 8;
const TYPE_SHIFT = 4;

/** What the Events of one Log on disk share: their Log id and where their lines are read from. */
interface HeldLog {
  readonly session_id: PixirEvent["session_id"];
  readonly bytes: SourceBytes;
}

/** The HeldLog of the Event before, kept while the next Event has the same Log id and bytes (a Log's Events do). */
let lastLog: HeldLog = { session_id: "", bytes: null as unknown as SourceBytes };
function heldLog(session_id: PixirEvent["session_id"], bytes: SourceBytes): HeldLog {
  if (lastLog.session_id !== session_id || lastLog.bytes !== bytes) lastLog = { session_id, bytes };
  return lastLog;
}

const HEAD = new LineHead();

/**
 * An Event read from a Log on disk, holding its envelope, its facts and its line's place. Its `data` is
 * parsed from the line each time it is read (nothing is kept), so a caller that needs it often keeps it.
 * A grown session's plan holds one per Event of its Logs, so it holds little else: its facts, type and
 * place are its own fields (not two objects more), its id, ts and record uuid are read again from its
 * line when asked for, its Log id and bytes are its Log's, and the rare facts (`data.event`, the child
 * a subagent_event names, a type outside the vocabulary) are kept by a subclass (docs/performance.md,
 * "Round 5", "Round 12").
 */
export class HeldEvent implements PixirEvent, EventFacts {
  protected constructor(
    private readonly log: HeldLog,
    readonly seq: number | null,
    /** The facts' flags, and the type's place in CANONICAL_TYPES from TYPE_SHIFT. */
    private readonly bits: number,
    /** `data.claude.line`, or -1. */
    private readonly lineNo: number,
    private readonly offset: number,
    private readonly length: number,
  ) {}

  /**
   * `e` (its line at `place`), held as its facts: eventFacts's rule, read into the fields without a facts
   * object made per Event (docs/performance.md, "Round 11").
   */
  static of(e: PixirEvent, place: LinePlace): HeldEvent {
    const { data } = e;
    const c = data.claude;
    let bits = 0;
    let line = -1;
    if (isJsonObject(c)) {
      if (typeof c.line === "number") line = c.line;
      bits = CLAUDE | (heldLine(e) !== null ? HELD : 0) | (c.path === true ? PATH : 0) | (typeof c.uuid === "string" ? UUID : 0);
    }
    const event = typeof data.event === "string" ? interned(data.event) : null;
    const child = typeof data.child_session_id === "string" ? data.child_session_id : null;
    const log = heldLog(e.session_id, place.bytes);
    const type = CANONICAL_TYPES.indexOf(e.type as CanonicalType);
    if (event === null && child === null && type >= 0) return new HeldEvent(log, e.seq, bits | (type << TYPE_SHIFT), line, place.offset, place.length);
    return new NamedHeldEvent(log, e.seq, bits, line, place.offset, place.length, interned(e.type) as PixirEvent["type"], event, child);
  }

  /** This Event inherited by a child Log (loader.ts inheritedItem): `e`'s envelope over this line. */
  inheritedAs(e: PixirEvent): HeldEvent {
    return new InheritedHeldEvent(e, this.bits, this.lineNo, this.event, this.child, this.log.bytes, this.offset, this.length);
  }

  get session_id(): PixirEvent["session_id"] {
    return this.log.session_id;
  }

  get type(): PixirEvent["type"] {
    return CANONICAL_TYPES[this.bits >> TYPE_SHIFT]!;
  }

  get event(): string | null {
    return null;
  }

  get child(): string | null {
    return null;
  }

  /** The line, a view valid until its Log's bytes are next read. */
  private get lineBytes(): Buffer {
    const { offset, length } = this;
    const { bytes } = this.log;
    return bytes.hold(offset, offset + length).subarray(offset - bytes.base, offset - bytes.base + length);
  }

  /** The id or ts string of the line: read from its head in our writers' layout, else from the parsed line. */
  private headString(key: "id" | "ts"): string {
    const b = this.lineBytes;
    if (readHead(b, 0, b.length, HEAD) >= 0) return key === "id" ? b.toString("latin1", HEAD.idStart, HEAD.idEnd) : b.toString("utf8", HEAD.tsStart, HEAD.tsEnd);
    return (JSON.parse(b.toString("utf8")) as Record<string, string>)[key]!;
  }

  get id(): PixirEvent["id"] {
    return this.headString("id");
  }

  get ts(): PixirEvent["ts"] {
    return this.headString("ts");
  }

  /**
   * Its facts are its own fields, read through the getters below: the plan asks them of every Event of a
   * grown session's Logs, and an object made per ask (one with a getter and a closure when the Event holds
   * a uuid) was some 28 MB of promoted garbage on a 256 MiB session (docs/performance.md, "Round 11").
   */
  get facts(): EventFacts {
    return this;
  }

  get claude(): boolean {
    return (this.bits & CLAUDE) !== 0;
  }

  get held(): boolean {
    return (this.bits & HELD) !== 0;
  }

  get path(): boolean {
    return (this.bits & PATH) !== 0;
  }

  get line(): number | null {
    return this.lineNo < 0 ? null : this.lineNo;
  }

  /** Read from its line only when asked for (the plan reads it of an inherited prefix alone). */
  get uuid(): string | null {
    return (this.bits & UUID) === 0 ? null : ((this.data.claude as JsonObject).uuid as string);
  }

  get place(): LinePlace {
    return { bytes: this.log.bytes, offset: this.offset, length: this.length };
  }

  get data(): JsonObject {
    const line = JSON.parse(this.lineBytes.toString("utf8")) as { data: JsonObject };
    return line.data;
  }
}

/** A HeldEvent with a rare fact: a `data.event`, a child Log it names, or a type outside the vocabulary. */
class NamedHeldEvent extends HeldEvent {
  constructor(
    log: HeldLog,
    seq: number | null,
    bits: number,
    lineNo: number,
    offset: number,
    length: number,
    private readonly ownType: PixirEvent["type"],
    private readonly ownEvent: string | null,
    private readonly ownChild: string | null,
  ) {
    super(log, seq, bits, lineNo, offset, length);
  }
  override get type(): PixirEvent["type"] {
    return this.ownType;
  }
  override get event(): string | null {
    return this.ownEvent;
  }
  override get child(): string | null {
    return this.ownChild;
  }
}

/** A HeldEvent of a child Log's inherited prefix: the child's id and ts, the parent's line. */
class InheritedHeldEvent extends NamedHeldEvent {
  private readonly ownId: PixirEvent["id"];
  private readonly ownTs: PixirEvent["ts"];
  constructor(e: PixirEvent, bits: number, lineNo: number, event: string | null, child: string | null, bytes: SourceBytes, offset: number, length: number) {
    super(heldLog(e.session_id, bytes), e.seq, bits, lineNo, offset, length, e.type, event, child);
    this.ownId = e.id;
    this.ownTs = e.ts;
  }
  override get id(): PixirEvent["id"] {
    return this.ownId;
  }
  override get ts(): PixirEvent["ts"] {
    return this.ownTs;
  }
}
