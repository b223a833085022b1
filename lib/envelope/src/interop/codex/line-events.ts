// codex-interop.md §2–§3: the Events of a rollout's lines as Log lines, shared by the planner that keeps a
// family in memory (import.ts) and the stream that writes a new one as it reads it (stream.ts).
import path from "node:path";
import { isJsonObject, serializeEvent, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { derivedUlid } from "../../event/ids.js";
import { excerptOf } from "../../event/elixir.js";
import { codexBaseId, contentText, EPOCH, isBoundaryItem, validTimestamp, type RolloutLine } from "./format.js";
import { mapLine, RunningState, type LineDraft } from "./line-map.js";

/** §3.5 and §3.6: what line 1 says about lineage. */
export const forkedFromOf = (meta: JsonObject): string | null => (typeof meta.forked_from_id === "string" ? meta.forked_from_id : null);

export function parentThreadOf(meta: JsonObject): string | null {
  const source = meta.source;
  if (isJsonObject(source) && isJsonObject(source.subagent) && isJsonObject(source.subagent.thread_spawn)) {
    const p = source.subagent.thread_spawn.parent_thread_id;
    if (typeof p === "string") return p;
  }
  return typeof meta.parent_thread_id === "string" ? meta.parent_thread_id : null;
}

/**
 * §2.6: the Events of one line whose first Event gets seq `nextSeq` in its Log, all with the line's `ts`; a
 * checkpoint's range ends just before it (§2.4.6).
 */
export function lineEvents(thread: string, line: RolloutLine, drafts: LineDraft[], nextSeq: number, ts: string): Array<Omit<PixirEvent, "seq" | "session_id">> {
  return drafts.map((d, i) => {
    if (d.type === "history_compaction") {
      const s = nextSeq + i;
      d.data.range = { from_seq: 0, to_seq: s - 1 };
      d.data.source_event_count = s;
    }
    return { id: derivedUlid(`codex:${thread}:${line.n}${d.part === null ? "" : `#${d.part}`}`, ts), ts, type: d.type, data: d.data };
  });
}

/** §3.2, §3.5: the codex key of line 1 (a root header's or a fork's session_fork). */
export function lineOneCodex(thread: string, line: RolloutLine, display: string): JsonObject {
  const codex: JsonObject = { thread, line: 1, record: line.record };
  if (line.raw !== null) codex.raw = line.raw;
  codex.file = path.basename(display);
  return codex;
}

/** §3.2: the lineage of a root: a fork that is not shared, a subagent's parent; null when there is none. */
export function rootLineage(meta: JsonObject, forkStatus: string | null): JsonObject | null {
  const lineage: JsonObject = {};
  const p = forkedFromOf(meta);
  if (p !== null) {
    lineage.forked_from_id = p;
    lineage.fork_status = forkStatus;
  }
  const parent = parentThreadOf(meta);
  if (parent !== null) lineage.parent_thread_id = parent;
  return Object.keys(lineage).length > 0 ? lineage : null;
}

/** §3.2: the root header of line 1. */
export function rootHeader(thread: string, line: RolloutLine, display: string, lineage: JsonObject | null): Omit<PixirEvent, "seq" | "session_id"> {
  const m = line.record!.payload as JsonObject;
  const pick = (k: string): unknown => (Object.hasOwn(m, k) ? m[k] : null);
  const data: JsonObject = {
    event: "codex_session_meta",
    thread_id: m.id,
    cwd: pick("cwd"),
    cli_version: pick("cli_version"),
    originator: pick("originator"),
    source: pick("source"),
    model_provider: pick("model_provider"),
  };
  if (lineage !== null) data.lineage = lineage;
  data.codex = lineOneCodex(thread, line, display);
  const ts = validTimestamp(line.record!.timestamp) ?? EPOCH;
  return { id: derivedUlid(`codex:${thread}:1`, ts), ts, type: "workflow_event", data };
}

/** §3.6 `task`: x(T(content)) of the first boundary item among a subagent's response_item records. */
export function taskOfRecords(records: Iterable<JsonObject | null>): string | null {
  for (const r of records) if (r?.type === "response_item" && isBoundaryItem(r.payload)) return excerptOf(contentText((r.payload as JsonObject).content));
  return null;
}

/**
 * The Log line of an imported Event. Its strings come from records whose strings were checked when their
 * line was read (invalid_record), so the line is valid Unicode without a check of its own.
 */
export const eventLine = (e: PixirEvent): string => serializeEvent(e);


/** §2.4.9: a rollout's running state, from what line 1 says of its provider. */
export const stateOf = (meta: JsonObject): RunningState => new RunningState(typeof meta.model_provider === "string" ? meta.model_provider : null);

/** §3.3: a line that rolls the thread back. */
export const isRollback = (r: JsonObject | null): boolean => r?.type === "event_msg" && isJsonObject(r.payload) && r.payload.type === "thread_rolled_back";

/**
 * A rollout's lines made the Log lines of its one root Log as they are read (§2.6, §3.2), for the streams
 * that hold nothing of it (stream.ts, grown-stream.ts); `put` takes each line with its `\n`.
 */
export class RootLog {
  /** The next Event's seq, and the ts of the last one. */
  seq = 0;
  lastTs = EPOCH;
  lineOne: JsonObject | null = null;
  parentThread: string | null = null;
  /** §3.6: a subagent's task, from its first boundary item. */
  task: string | null = null;
  state: RunningState | null = null;
  private readonly base: string;
  constructor(
    private readonly thread: string,
    private readonly display: string,
    private readonly put: (text: string) => void,
  ) {
    this.base = codexBaseId(thread);
  }

  /** Line 1, its header made; null (nothing made) when it names another thread. */
  first(line: RolloutLine): JsonObject | null {
    const meta = line.record!.payload as JsonObject;
    if (meta.id !== this.thread) return null;
    this.lineOne = line.record;
    this.parentThread = parentThreadOf(meta);
    this.state = stateOf(meta);
    this.add(rootHeader(this.thread, line, this.display, rootLineage(meta, null)));
    return meta;
  }

  /** A line after line 1, its Events made; false (nothing made) for a rollback, which needs the planner (§3.3). */
  next(line: RolloutLine): boolean {
    const r = line.record;
    if (isRollback(r)) return false;
    if (this.task === null && this.parentThread !== null && r?.type === "response_item" && isBoundaryItem(r.payload)) this.task = taskOfRecords([r]);
    for (const e of lineEvents(this.thread, line, mapLine(this.thread, line, this.state!), this.seq, validTimestamp(r?.timestamp) ?? this.lastTs)) this.add(e);
    return true;
  }

  /** One Event of the Log, at the next seq. */
  add(e: Omit<PixirEvent, "seq" | "session_id">): void {
    this.put(eventLine({ id: e.id, session_id: this.base, seq: this.seq, ts: e.ts, type: e.type, data: e.data }));
    this.seq++;
    this.lastTs = e.ts ?? this.lastTs;
  }
}
