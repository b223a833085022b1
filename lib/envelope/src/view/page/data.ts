// The page's Events: each Log's data block is parsed when that Log is first shown, and a fork child's
// History is its header, the inherited prefix read from its parent's History, then its own Events — the
// resolving loader's rule (fork.md §6), so the page shows what `pixir-log cat` would.
import { REPLAY_TYPES } from "../../event/vocabulary.js";
import { INDEX_BLOCK_ID, logBlockId, OPENING_BLOCK_ID, RESOURCES_BLOCK_ID, type PageIndex, type PageLog, type PageOpening } from "../page-index.js";

export interface LogEvent {
  id: string;
  session_id: string;
  seq: number | null;
  ts: string;
  type: string;
  data: Record<string, unknown>;
}

/** One Event as a Log's History shows it. */
export interface ShownEvent {
  event: LogEvent;
  /** Its seq in the shown History (an inherited Event is renumbered 1..N, as the loader does). */
  seq: number | null;
  /** The Log whose block holds it, and its seq there. */
  owner: number;
  ownerSeq: number | null;
  inherited: boolean;
}

const REPLAY = new Set<string>(REPLAY_TYPES);

function readBlock(id: string): unknown {
  const el = document.getElementById(id);
  return el === null ? null : JSON.parse(el.textContent ?? "null");
}

export class FamilyData {
  readonly index: PageIndex;
  /**
   * False while the browser is still reading the page: the script runs before the Log blocks, and until
   * then only the index and the opening (the named Log's first Events, on a large page) are there.
   */
  ready = document.readyState !== "loading";
  /** The opening, until the page is read. */
  opening: PageOpening | null;
  private readonly blocks = new Map<number, LogEvent[]>();
  private readonly histories = new Map<number, ShownEvent[]>();
  private resourceMap: Record<string, string> | null = null;

  constructor() {
    this.index = readBlock(INDEX_BLOCK_ID) as PageIndex;
    this.opening = this.ready ? null : (readBlock(OPENING_BLOCK_ID) as PageOpening | null);
  }

  /** The named Log's index, or -1. */
  get namedIndex(): number {
    return this.indexOf(this.index.named);
  }

  /** The page is read: what was built from the opening is forgotten. */
  complete(): void {
    this.ready = true;
    this.opening = null;
    this.blocks.clear();
    this.histories.clear();
    this.resourceMap = null;
  }

  get logs(): PageLog[] {
    return this.index.logs;
  }

  indexOf(id: string): number {
    return this.index.logs.findIndex((l) => l.id === id);
  }

  private own(i: number): LogEvent[] {
    if (!this.ready) return i === this.namedIndex ? ((this.opening?.events as LogEvent[] | undefined) ?? []) : [];
    let events = this.blocks.get(i);
    if (events === undefined) {
      events = ((this.index.logs[i]!.missing ? [] : readBlock(logBlockId(i))) as LogEvent[] | null) ?? [];
      this.blocks.set(i, events);
    }
    return events;
  }

  /**
   * The greatest seq that checkpoints beyond what is read of Log `i` replace: known, before the page is
   * read, from the opening; -1 when the whole History is read (its checkpoints are in it).
   */
  compactedBeyond(i: number): number {
    return !this.ready && i === this.namedIndex ? (this.opening?.compacted_through ?? -1) : -1;
  }

  /** The resolved History of Log `i`. */
  history(i: number): ShownEvent[] {
    const cached = this.histories.get(i);
    if (cached !== undefined) return cached;
    const log = this.index.logs[i]!;
    const own = this.own(i);
    const shown = (event: LogEvent): ShownEvent => ({ event, seq: event.seq, owner: i, ownerSeq: event.seq, inherited: false });
    let out: ShownEvent[];
    if (!log.inherits || log.parent === null) out = own.map(shown);
    else {
      out = own.filter((e) => e.seq === 0).map(shown);
      const cut = log.forked_to_seq ?? 0;
      let k = 0;
      for (const p of this.history(log.parent)) {
        if (k >= log.replay_event_count) break;
        if (!REPLAY.has(p.event.type) || p.seq === null || p.seq > cut) continue;
        k++;
        out.push({ event: p.event, seq: k, owner: p.owner, ownerSeq: p.ownerSeq, inherited: true });
      }
      for (const e of own) if (e.seq !== 0) out.push(shown(e));
    }
    this.histories.set(i, out);
    return out;
  }

  /** A Session Resource's `data:` URI, when the export could read its payload. */
  resource(key: string): string | undefined {
    if (!this.ready) return undefined;
    this.resourceMap ??= (readBlock(RESOURCES_BLOCK_ID) as Record<string, string> | null) ?? {};
    const uri = this.resourceMap[key];
    return typeof uri === "string" && uri.startsWith("data:image/") ? uri : undefined;
  }
}
