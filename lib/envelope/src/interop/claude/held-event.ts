// claude-interop.md §4.3 steps 4–6: an Event of a Log on disk, as an import plan holds it. A grown session
// is planned against its family's Logs; what the plan reads of their Events is a few facts (the line a
// record Event holds, its uuid, the kind of workflow Event, the child a subagent_event names), kept here,
// and the rest of an Event's `data` is read again from its Log line when something asks for it (a branch's
// inherited prefix, a line past the checkpoint), so planning holds a small object per Event, not the Log.
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { heldLine } from "./map.js";
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

/**
 * An Event read from a Log on disk, holding its envelope, its facts and its line's place. Its `data` is
 * parsed from the line each time it is read (nothing is kept), so a caller that needs it often keeps it.
 */
export class HeldEvent implements PixirEvent {
  constructor(
    readonly id: PixirEvent["id"],
    readonly session_id: PixirEvent["session_id"],
    readonly seq: number | null,
    readonly ts: PixirEvent["ts"],
    readonly type: PixirEvent["type"],
    readonly facts: EventFacts,
    readonly place: LinePlace,
  ) {}

  /** `e` (its line at `place`), held as its facts. */
  static of(e: PixirEvent, place: LinePlace): HeldEvent {
    return new HeldEvent(e.id, e.session_id, e.seq, e.ts, e.type, shared(eventFacts(e)), place);
  }

  get data(): JsonObject {
    const { bytes, offset, length } = this.place;
    const buf = bytes.hold(offset, offset + length);
    const line = JSON.parse(buf.toString("utf8", offset - bytes.base, offset - bytes.base + length)) as { data: JsonObject };
    return line.data;
  }
}

/** Most Events have facts like many others: one object for each shape seen, not one per Event. */
const FACT_SHAPES = new Map<string, EventFacts>();

function shared(f: EventFacts): EventFacts {
  if (f.uuid !== null || f.line !== null || f.child !== null) return f;
  const key = `${f.claude}|${f.held}|${f.path}|${f.event}`;
  let out = FACT_SHAPES.get(key);
  if (out === undefined && FACT_SHAPES.size < 256) FACT_SHAPES.set(key, (out = f));
  return out ?? f;
}
