// pi-interop.md §4: `pixir export pi`. A fork family of Logs back to one pi v3 file: imported Events
// become their entries again (verbatim), native Events become the nearest pi entries, and the Log named
// on the command line goes last so that pi resumes its leaf.
import { sha256Hex } from "../../event/ids.js";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { notFoundError, openHistory } from "../../store/loader.js";
import { isReplayType } from "../../event/vocabulary.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { ExportFile, exportExists, pathExists } from "../../store/export-file.js";
import { batchedBytes, sameAsFile } from "../../store/stream-file.js";
import { abortable } from "../../lines/abortable.js";
import { exportTarget, type WriteReport } from "../../session/agent-files.js";
import { assertSessionId, compareBytes, isValidSessionId } from "../../event/session-id.js";
import { forkRootOf, readForkLinks, type ForkLink } from "../../tree/fork-family.js";
import { entryIdOf, isImportedEvent, rebuildEntry } from "./entry-map.js";
import { workspaceImageLoader, type ImageLoader } from "./images.js";

interface FamilyLog {
  sessionId: string;
  link: ForkLink | null;
  parent: FamilyLog | null;
  children: FamilyLog[];
  /**
   * The seqs of its resolved History's replayable Events, in order: what a fork child inherits through a
   * seq (fork.md §6). The Events themselves are read again, one at a time, when its entries are made.
   */
  replayable: number[];
  /** The first Event of the resolved History, and how many there are (reading it again stops there). */
  first: PixirEvent | undefined;
  count: number;
  /**
   * Entry id of each resolved seq that went into an entry (own or inherited): kept only when something asks
   * for it, a fork child (its inherited entries, its attachment) or a compaction (its first kept entry).
   */
  entryBySeq: Map<number, string>;
  /** It holds a history_compaction Event. */
  compacts: boolean;
  /** The entry this Log hangs from: its first own entry's parentId. */
  attach: string | null;
  /** How many entries it gives. */
  entries: number;
  /** The ids NativeIds gave its native entries, in order: the same again when its lines are written. */
  nativeIds: string[];
  lastEntryId: string | null;
}

/** What a Log's entries are asked for later: the tool calls on a path, walking parentIds up. */
interface EntryCalls {
  parentId: unknown;
  calls: Array<{ id: string; name: unknown }>;
}

export interface PiExportWarning {
  code: "orphan_tool_result";
  text: string;
  details: JsonObject;
}

export interface PiExportSession {
  session_id: string;
  parent_session_id: string | null;
  strategy: string | null;
  entry_count: number;
}

export interface PiExportPlan {
  header: JsonObject;
  /** The file's bytes (header line, then one line per entry) in batches, its entries made again as they are written. */
  chunks(): AsyncIterable<Buffer>;
  entryCount: number;
  sessions: PiExportSession[];
  leafEntryId: string | null;
  warnings: PiExportWarning[];
}

const ASSISTANT_TYPES = new Set(["reasoning", "assistant_message", "tool_call", "provider_usage"]);

/** §4 step 1: walk up first-line session_fork parents to the root, then find every fork descendant. */
async function discoverFamily(ws: string, id: string): Promise<{ root: FamilyLog; all: FamilyLog[]; named: FamilyLog }> {
  const links = await readForkLinks(ws);
  const rootId = forkRootOf(links, id);
  const make = (sid: string, link: ForkLink | null, parent: FamilyLog | null): FamilyLog => ({
    sessionId: sid,
    link,
    parent,
    children: [],
    replayable: [],
    first: undefined,
    count: 0,
    entryBySeq: new Map(),
    compacts: false,
    attach: null,
    entries: 0,
    nativeIds: [],
    lastEntryId: null,
  });
  const root = make(rootId, links.get(rootId) ?? null, null);
  const all = [root];
  const queue = [root];
  const inFamily = new Set([rootId]);
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const [sid, link] of links) {
      if (link?.parent !== node.sessionId || inFamily.has(sid)) continue;
      inFamily.add(sid);
      const child = make(sid, link, node);
      node.children.push(child);
      all.push(child);
      queue.push(child);
    }
    node.children.sort((a, b) => a.link!.forkedToSeq - b.link!.forkedToSeq || compareBytes(a.sessionId, b.sessionId));
  }
  return { root, all, named: all.find((l) => l.sessionId === id)! };
}

/** §4 step 2: the header id of a family pi did not write, from its root Log (archive.md §5 recognises a re-import by it). */
export function piExportHeaderId(rootId: string): string {
  const hex = sha256Hex(`pixir:${rootId}`);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** §4 step 2: the header carrier's header with version 3, or a header made for a native family. */
function fileHeader(ws: string, root: FamilyLog, cwd: string | undefined): JsonObject {
  const first = root.first;
  if (first !== undefined && isCarrier(first)) return { ...((first.data.pi as JsonObject).header as JsonObject), version: 3 };
  return { type: "session", version: 3, id: piExportHeaderId(root.sessionId), timestamp: first?.ts ?? new Date(0).toISOString(), cwd: cwd ?? ws };
}

function isCarrier(e: PixirEvent): boolean {
  return e.type === "workflow_event" && e.data.event === "pi_session_header" && isJsonObject(e.data.pi) && isJsonObject(e.data.pi.header);
}

/**
 * The entry that holds the Event at `seq` of a Log, or the nearest one before it; null when no entry holds
 * an Event at or before it (the header carrier, or a fork child's own session_fork: a child forked there
 * inherits nothing, so its path must not run through the parent's parent).
 */
function entryAtOrBefore(log: FamilyLog, seq: number): string | null {
  let best: number | null = null;
  for (const s of log.entryBySeq.keys()) if (s <= seq && (best === null || s > best)) best = s;
  return best === null ? null : log.entryBySeq.get(best)!;
}

/**
 * Where each Log's assistant runs must end. A child hangs from the entry that holds its parent's Event at
 * forked_to_seq (§4 step 4), so that entry must not also hold the parent's later Events, or pi would
 * resume the child with Events it never inherited. A fork point inside a parent's inherited prefix is a
 * point of the Log that prefix was copied from, found by walking up.
 */
function forkCuts(all: FamilyLog[]): Map<FamilyLog, Set<number>> {
  const parentOf = new Map<FamilyLog, FamilyLog>();
  for (const log of all) for (const child of log.children) parentOf.set(child, log);
  const cuts = new Map<FamilyLog, Set<number>>(all.map((log) => [log, new Set<number>()]));
  for (const child of all) {
    let log = parentOf.get(child);
    if (log === undefined) continue;
    let seq: number | undefined = child.link!.forkedToSeq;
    for (let up = parentOf.get(log); up !== undefined && seq >= 1 && seq <= log.link!.replayEventCount; up = parentOf.get(log)) {
      const toSeq = log.link!.forkedToSeq;
      seq = inheritedSeqs(up, toSeq)[seq - 1];
      if (seq === undefined) break;
      log = up;
    }
    if (seq !== undefined) cuts.get(log)!.add(seq);
  }
  return cuts;
}

/** Converts one Log's own Events to entries, in order. */
class LogWriter {
  private prev: string | null;
  /** Tool calls on this Log's pi path so far: call id → tool name. */
  private readonly callsOnPath = new Map<string, unknown>();
  /** Entries made and not yet taken (run() yields them after each Event). */
  private made: JsonObject[] = [];

  constructor(
    private readonly log: FamilyLog,
    private readonly ids: IdSource,
    private readonly byId: Map<string, EntryCalls>,
    private readonly load: ImageLoader,
    private readonly warnings: PiExportWarning[],
    /** A run of assistant Events ends after each of these seqs (`forkCuts`). */
    private readonly cuts: ReadonlySet<number>,
  ) {
    this.prev = log.attach;
    // Tool calls of the entries this Log inherits, walking the parentId chain up from its attachment.
    const seen = new Set<string>();
    for (let id = log.attach; id !== null && !seen.has(id); ) {
      seen.add(id);
      const entry = this.byId.get(id);
      if (entry === undefined) break;
      for (const c of entry.calls) if (!this.callsOnPath.has(c.id)) this.callsOnPath.set(c.id, c.name);
      id = typeof entry.parentId === "string" ? entry.parentId : null;
    }
  }

  private emit(entry: JsonObject, events: PixirEvent[]): void {
    const id = entry.id as string;
    const calls = toolCallBlocks(entry).map((b) => ({ id: b.id as string, name: b.name }));
    this.made.push(entry);
    this.log.lastEntryId = id;
    // A fork child walks up its parent's entries and seqs, a compaction looks up the entry of a seq: a Log
    // with neither keeps no fact per entry.
    const forked = this.log.children.length > 0;
    if (forked) this.byId.set(id, { parentId: entry.parentId, calls });
    if (forked || this.log.compacts) for (const e of events) if (e.seq !== null) this.log.entryBySeq.set(e.seq, id);
    for (const c of calls) this.callsOnPath.set(c.id, c.name);
    this.prev = id;
  }

  /**
   * The own Events, in order, one at a time: an imported entry's Events become that entry again, a run of
   * native assistant Events one assistant message, any other Event its nearest entry. The entries are
   * yielded as they are made, so none outlives its line.
   */
  async *run(own: AsyncIterable<PixirEvent> | Iterable<PixirEvent>): AsyncGenerator<JsonObject> {
    let group: PixirEvent[] = [];
    let kind: "entry" | "assistant" | null = null;
    const flush = (): void => {
      if (kind === "entry") this.emit(rebuildEntry(group, this.load), group);
      else if (kind === "assistant" && group.every((r) => r.type === "provider_usage")) for (const r of group) this.emit(this.customEntry(r), [r]);
      else if (kind === "assistant") this.emit(this.assistantEntry(group), group);
      group = [];
      kind = null;
    };
    for await (const e of own) {
      if (kind !== null && this.continues(kind, group, e)) {
        group.push(e);
        continue;
      }
      flush();
      yield* this.take();
      if (e.type === "session_fork" || isCarrier(e)) continue;
      if (isImportedEvent(e)) kind = "entry";
      else if (ASSISTANT_TYPES.has(e.type)) kind = "assistant";
      else {
        this.emit(this.nativeEntry(e), [e]);
        yield* this.take();
        continue;
      }
      group = [e];
    }
    flush();
    yield* this.take();
  }

  private take(): JsonObject[] {
    const made = this.made;
    this.made = [];
    return made;
  }

  /** Whether `e` belongs to the group before it: the same imported entry, or the same assistant run. */
  private continues(kind: "entry" | "assistant", group: PixirEvent[], e: PixirEvent): boolean {
    if (kind === "entry") return entryIdOf(e) === entryIdOf(group[0]!);
    if (!ASSISTANT_TYPES.has(e.type) || isImportedEvent(e)) return false;
    const mid = group[0]!.data.message_id;
    const next = e.data.message_id;
    if (mid !== undefined && next !== undefined && next !== mid) return false;
    return !this.cutBetween(group[group.length - 1]!.seq, e.seq);
  }

  private cutBetween(a: number | null, b: number | null): boolean {
    if (a === null || b === null) return false;
    for (const c of this.cuts) if (a <= c && c < b) return true;
    return false;
  }

  resumePoint(fork: PixirEvent): JsonObject[] {
    this.emit(this.customEntry(fork), []);
    return this.take();
  }

  private base(type: string, first: PixirEvent): JsonObject {
    return { type, id: this.ids.next(first.id ?? `${this.log.sessionId}:${first.seq}`), parentId: this.prev, timestamp: first.ts };
  }

  private customEntry(e: PixirEvent): JsonObject {
    const b = this.base("custom", e);
    return { type: "custom", customType: "pixir", data: { event: e }, id: b.id, parentId: b.parentId, timestamp: b.timestamp };
  }

  private nativeEntry(e: PixirEvent): JsonObject {
    const d = e.data;
    switch (e.type) {
      case "user_message": {
        const content = Object.hasOwn(d, "content") ? d.content : [{ type: "text", text: typeof d.text === "string" ? d.text : "" }];
        if (d.origin === "extension") {
          const b = this.base("custom_message", e);
          const entry: JsonObject = { type: "custom_message", customType: typeof d.custom_type === "string" ? d.custom_type : "pixir", content, display: d.display !== false };
          if (Object.hasOwn(d, "details")) entry.details = d.details;
          return { ...entry, id: b.id, parentId: b.parentId, timestamp: b.timestamp };
        }
        return { ...this.base("message", e), message: { role: "user", content, timestamp: messageTs(e) } };
      }
      case "tool_result": {
        const callId = d.call_id;
        if (typeof callId !== "string" || !this.callsOnPath.has(callId)) {
          this.warnings.push({
            code: "orphan_tool_result",
            text: `${this.log.sessionId} seq ${e.seq}: tool_result has no tool call on its path; exported as a custom entry`,
            details: { session_id: this.log.sessionId, seq: e.seq, call_id: typeof callId === "string" ? callId : null },
          });
          return this.customEntry(e);
        }
        const output = typeof d.output === "string" ? d.output : d.output !== undefined ? JSON.stringify(d.output) : d.error !== undefined ? JSON.stringify(d.error) : "";
        const message: JsonObject = {
          role: "toolResult",
          toolCallId: callId,
          toolName: typeof d.tool_name === "string" ? d.tool_name : nameOr(this.callsOnPath.get(callId), "unknown"),
          content: Array.isArray(d.content) ? d.content : [{ type: "text", text: output }],
        };
        if (Object.hasOwn(d, "details")) message.details = d.details;
        message.isError = d.ok === false;
        message.timestamp = messageTs(e);
        return { ...this.base("message", e), message };
      }
      case "branch_summary": {
        const b = this.base("branch_summary", e);
        const files = Array.isArray(d.files_touched) ? d.files_touched : [];
        return { ...b, fromId: b.parentId ?? "root", summary: typeof d.summary === "string" ? d.summary : "", details: { readFiles: [], modifiedFiles: files } };
      }
      case "history_compaction": {
        const b = this.base("compaction", e);
        return { ...b, summary: typeof d.summary === "string" ? d.summary : "", firstKeptEntryId: this.firstKept(e, b.id as string), tokensBefore: typeof d.tokens_before === "number" ? d.tokens_before : 0 };
      }
      default:
        return this.customEntry(e);
    }
  }

  /** §4 step 4: the entry of the first exported Event after the checkpoint's range. */
  private firstKept(e: PixirEvent, ownId: string): string {
    const range = e.data.range;
    const to = isJsonObject(range) && typeof range.to_seq === "number" ? range.to_seq : null;
    if (to === null || e.seq === null) return ownId;
    let best: number | null = null;
    for (const s of this.log.entryBySeq.keys()) if (s > to && s < e.seq && (best === null || s < best)) best = s;
    return best === null ? ownId : this.log.entryBySeq.get(best)!;
  }

  private assistantEntry(run: PixirEvent[]): JsonObject {
    const first = run[0]!;
    const content: unknown[] = [];
    let msg: JsonObject | undefined;
    let usage: JsonObject | undefined;
    let reasoningModel: unknown;
    for (const e of run) {
      const d = e.data;
      if (e.type === "reasoning") {
        reasoningModel ??= d.model;
        const item = d.item;
        if (isJsonObject(item) && item.type === "thinking") content.push(item);
        else {
          const text = isJsonObject(item) && typeof item.thinking === "string" ? item.thinking : isJsonObject(item) && typeof item.text === "string" ? item.text : typeof item === "string" ? item : typeof d.text === "string" ? d.text : JSON.stringify(item ?? null);
          content.push({ type: "thinking", thinking: text });
        }
      } else if (e.type === "assistant_message") {
        msg ??= d;
        if (Array.isArray(d.content)) content.push(...d.content);
        else if (typeof d.text === "string" && d.text !== "") content.push({ type: "text", text: d.text });
      } else if (e.type === "tool_call") {
        content.push({ type: "toolCall", id: d.call_id, name: d.name, arguments: isJsonObject(d.args) ? d.args : {} });
      } else usage ??= d;
    }
    const pick = (key: string, ...sources: Array<JsonObject | undefined>): unknown => {
      for (const s of sources) if (s !== undefined && typeof s[key] === "string") return s[key];
      return "unknown";
    };
    const model = typeof msg?.model === "string" ? msg.model : typeof usage?.model === "string" ? usage.model : typeof reasoningModel === "string" ? reasoningModel : "unknown";
    const n = (v: unknown) => (typeof v === "number" ? v : 0);
    const cost = isJsonObject(usage?.cost) ? usage!.cost : {};
    const u = usage ?? {};
    const partial = isJsonObject(msg?.metadata) && msg!.metadata.partial === true;
    const hasCalls = run.some((e) => e.type === "tool_call");
    const message: JsonObject = {
      role: "assistant",
      content,
      api: pick("api", msg, usage),
      provider: pick("provider", msg, usage),
      model,
      usage: {
        input: n(u.input),
        output: n(u.output),
        cacheRead: n(u.cache_read),
        cacheWrite: n(u.cache_write),
        totalTokens: typeof u.total_tokens === "number" ? u.total_tokens : n(u.input) + n(u.output) + n(u.cache_read) + n(u.cache_write),
        cost: { input: n(cost.input), output: n(cost.output), cacheRead: n(cost.cache_read), cacheWrite: n(cost.cache_write), total: n(cost.total) },
      },
      stopReason: typeof msg?.stop_reason === "string" ? msg.stop_reason : partial ? "aborted" : hasCalls ? "toolUse" : "stop",
    };
    if (typeof msg?.error_message === "string") message.errorMessage = msg.error_message;
    message.timestamp = messageTs(first);
    return { ...this.base("message", first), message };
  }
}

const nameOr = (v: unknown, fallback: string): string => (typeof v === "string" ? v : fallback);

function messageTs(e: PixirEvent): number {
  if (typeof e.data.message_ts === "number") return e.data.message_ts;
  const t = typeof e.ts === "string" ? Date.parse(e.ts) : NaN;
  return Number.isNaN(t) ? 0 : t;
}

function toolCallBlocks(entry: JsonObject): JsonObject[] {
  const m = entry.message;
  if (entry.type !== "message" || !isJsonObject(m) || m.role !== "assistant" || !Array.isArray(m.content)) return [];
  return m.content.filter((b): b is JsonObject => isJsonObject(b) && b.type === "toolCall" && typeof b.id === "string");
}

/** Where a native entry's id comes from. */
interface IdSource {
  next(eventId: string): string;
}

/** §4 step 4 ids: the first 8 hex of sha256("pixir:" + first Event id), the next 8 on a collision. */
class NativeIds implements IdSource {
  constructor(private readonly used: Set<string>) {}
  next(eventId: string): string {
    const hex = sha256Hex(`pixir:${eventId}`);
    for (let i = 0; i + 8 <= hex.length; i += 8) {
      const id = hex.slice(i, i + 8);
      if (!this.used.has(id)) {
        this.used.add(id);
        return id;
      }
    }
    for (let k = 1; ; k++) {
      const id = `${hex.slice(0, 8)}-${k}`;
      if (!this.used.has(id)) {
        this.used.add(id);
        return id;
      }
    }
  }
}

/** The seqs of the Events a child forked at `toSeq` inherits from `log`, in order. */
function inheritedSeqs(log: FamilyLog, toSeq: number): number[] {
  return log.replayable.filter((seq) => seq <= toSeq);
}

/** A Log's own Events (after a fork's inherited prefix), read again up to the count the first read saw. */
async function* ownEvents(ws: string, log: FamilyLog): AsyncGenerator<PixirEvent> {
  let left = log.count;
  for await (const item of (await openHistory(ws, log.sessionId)).items()) {
    if (left-- <= 0) return;
    const e = item.event;
    if (log.parent === null || (e.seq !== null && e.seq > log.link!.replayEventCount)) yield e;
  }
}

export interface PiExportOptionsPlan {
  /** archive.md §5: the header's cwd for a family pi did not write (--cwd, or the cwd another agent recorded). */
  cwd?: string;
}

/** What converting a Log needs besides the Log: the same when its entries are counted and when they are written. */
interface Conversion {
  ws: string;
  named: FamilyLog;
  familyIds: string[];
  byId: Map<string, EntryCalls>;
  cuts: Map<FamilyLog, Set<number>>;
}

/**
 * A Log's entries, in order, as `writer` makes them. A named fork without Events of its own still needs a
 * last line at its fork point for pi to resume: its session_fork, as a custom entry (which pi never shows
 * to the model).
 */
async function* logEntries(c: Conversion, log: FamilyLog, ids: IdSource, warnings: PiExportWarning[]): AsyncGenerator<JsonObject> {
  const load = workspaceImageLoader(c.ws, () => [log.sessionId, ...c.familyIds.filter((s) => s !== log.sessionId)]);
  const writer = new LogWriter(log, ids, c.byId, load, warnings, c.cuts.get(log)!);
  let n = 0;
  for await (const entry of writer.run(ownEvents(c.ws, log))) {
    n++;
    yield entry;
  }
  if (log === c.named && log.parent !== null && n === 0 && log.first?.type === "session_fork") yield* writer.resumePoint(log.first);
}

/** The first read of every Log of the family: its first Event, count and replayable seqs; the entry ids pi gave. */
async function readFamily(ws: string, all: FamilyLog[]): Promise<Set<string>> {
  const used = new Set<string>();
  for (const log of all) {
    for await (const item of (await openHistory(ws, log.sessionId)).items()) {
      const e = item.event;
      log.first ??= e;
      log.count++;
      if (isReplayType(e.type) && e.seq !== null) log.replayable.push(e.seq);
      if (e.type === "history_compaction") log.compacts = true;
      const entryId = entryIdOf(e);
      if (entryId !== null) used.add(entryId);
    }
  }
  return used;
}

/**
 * The entries counted, Log by Log in fork order (parents before children), keeping only what later Logs
 * and the written lines need: each Log's entry ids by seq, the ids NativeIds gave, and the tool calls of
 * each entry. Returns the Logs in the order visited.
 */
async function countEntries(c: Conversion, root: FamilyLog, used: Set<string>, warnings: PiExportWarning[]): Promise<FamilyLog[]> {
  const ids = new NativeIds(used);
  const order: FamilyLog[] = [];
  const visit = async (log: FamilyLog): Promise<void> => {
    order.push(log);
    const parent = log.parent;
    if (parent !== null) {
      // Inherited Events belong to the entries of the parent's Events they were copied from.
      const link = log.link!;
      inheritedSeqs(parent, link.forkedToSeq).slice(0, link.replayEventCount).forEach((seq, k) => {
        const entry = parent.entryBySeq.get(seq);
        if (entry !== undefined) log.entryBySeq.set(k + 1, entry);
      });
      log.attach = entryAtOrBefore(parent, link.forkedToSeq);
    }
    const recording: IdSource = { next: (eventId) => pushed(log.nativeIds, ids.next(eventId)) };
    for await (const _ of logEntries(c, log, recording, warnings)) log.entries++;
    for (const child of log.children) await visit(child);
  };
  await visit(root);
  return order;
}

const pushed = <T>(list: T[], value: T): T => {
  list.push(value);
  return value;
};

/**
 * The file's lines: the header, then each Log's entries, made again in the file's order (the named Log
 * last) from what countEntries kept: the same ids, paths and tool calls, so the same lines.
 */
async function* fileLines(c: Conversion, header: JsonObject, logs: FamilyLog[]): AsyncGenerator<string> {
  yield `${JSON.stringify(header)}\n`;
  for (const log of logs) {
    let k = 0;
    const replay: IdSource = { next: () => log.nativeIds[k++]! };
    for await (const entry of logEntries(c, log, replay, [])) yield `${JSON.stringify(entry)}\n`;
  }
}

/**
 * §4: the pi file of the fork family of `id`: its header, entry counts and warnings, and its lines made
 * when they are written (never held). Writes nothing.
 */
export async function planPiExportStreamed(ws: string, id: string, options: PiExportOptionsPlan = {}): Promise<PiExportPlan> {
  assertSessionId(id);
  if (inspectStatePath(logPath(ws, id)) === "missing") throw notFoundError(id, ws, logPath(ws, id).rel, "pixir export pi");
  const { root, all, named } = await discoverFamily(ws, id);
  const used = await readFamily(ws, all);
  const c: Conversion = { ws, named, familyIds: all.map((l) => l.sessionId), byId: new Map(), cuts: forkCuts(all) };
  const warnings: PiExportWarning[] = [];
  const order = await countEntries(c, root, used, warnings);
  const header = fileHeader(ws, root, options.cwd);
  const logs = order.filter((l) => l !== named).concat(named);
  let count = 0;
  let leaf: string | null = null;
  for (const log of logs) {
    count += log.entries;
    if (log.entries > 0) leaf = log.lastEntryId;
  }
  return {
    header,
    chunks: () => batchedBytes(fileLines(c, header, logs)),
    entryCount: count,
    sessions: logs.map((l) => ({
      session_id: l.sessionId,
      parent_session_id: l.link?.parent ?? null,
      strategy: typeof l.link?.strategy === "string" ? l.link.strategy : null,
      entry_count: l.entries,
    })),
    leafEntryId: leaf,
    warnings,
  };
}

/** planPiExportStreamed with the file's text held: for a caller that reads it (a re-import's check). */
export async function planPiExport(ws: string, id: string, options: PiExportOptionsPlan = {}): Promise<PiExportPlan & { text: string }> {
  const plan = await planPiExportStreamed(ws, id, options);
  const parts: Buffer[] = [];
  for await (const chunk of plan.chunks()) parts.push(chunk);
  const bytes = Buffer.concat(parts);
  return { ...plan, text: bytes.toString("utf8"), chunks: () => batchedBytes([bytes]) };
}

// ---------------------------------------------------------------------------------------------------
// §4 step 6: output.

export interface PiExportOptions {
  /** --out as given, resolved against `cwd`. */
  out?: string;
  cwd: string;
  dryRun?: boolean;
  /** --install: an existing file with the same bytes is `unchanged`, not refused. */
  sameIsUnchanged?: boolean;
  /** An interrupted run stops between batches, its temp file removed (exit 130). */
  signal?: AbortSignal;
}

export interface PiExportReport extends WriteReport {
  file: string | null;
  header_id: string | null;
  entry_count: number;
  sessions: PiExportSession[];
  leaf_entry_id: string | null;
  /** The header's cwd: where pi runs the session. */
  cwd: string | null;
  status: "written" | "unchanged" | "would_write" | "stdout";
}

/** pi's own file name: `<timestamp with : and . as ->_<id>.jsonl`, when both parts are safe. */
export function piFileName(header: JsonObject): string {
  const ts = typeof header.timestamp === "string" && /^[0-9T:.Z+-]+$/.test(header.timestamp) ? header.timestamp.replace(/[:.]/g, "-") : "session";
  const id = isValidSessionId(header.id) ? header.id : `pi-${sha256Hex(String(header.id)).slice(0, 32)}`;
  return `${ts}_${id}.jsonl`;
}

/** §4 step 6 with --out or --dry-run: the report; with --out and no --dry-run the file is written as it is made. */
export async function finishPiExport(plan: PiExportPlan, options: PiExportOptions): Promise<PiExportReport> {
  let file: string | null = null;
  let status: PiExportReport["status"] = "stdout";
  if (options.out !== undefined) {
    file = exportTarget(options.out, options.cwd, piFileName(plan.header));
    // --install: the file there is compared as the export is made again, never read whole.
    if (options.sameIsUnchanged === true && (await sameAsFile(file, abortable(plan.chunks(), options.signal)))) status = "unchanged";
    else if (options.dryRun) {
      if (pathExists(file)) throw exportExists(options.out);
      status = "would_write";
    } else {
      const out = new ExportFile(file, options.out, "the exported pi file");
      try {
        for await (const batch of abortable(plan.chunks(), options.signal)) out.write(batch);
        out.commit();
      } finally {
        out.discard();
      }
      status = "written";
    }
  }
  return {
    ok: true,
    recorded: status === "written",
    dry_run: Boolean(options.dryRun),
    file,
    header_id: isValidSessionId(plan.header.id) ? plan.header.id : null,
    entry_count: plan.entryCount,
    sessions: plan.sessions,
    leaf_entry_id: plan.leafEntryId,
    cwd: typeof plan.header.cwd === "string" ? plan.header.cwd : null,
    status,
  };
}
