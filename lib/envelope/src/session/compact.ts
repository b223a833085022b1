// context-and-compaction.md §2–§3: `pixir compact` records a deterministic history_compaction
// checkpoint that stands for everything but the last N candidates, carrying the previous checkpoint
// forward. The Log is not rewritten: the checkpoint is one more Event, appended under the Writer Lease.
// Three streaming passes (find the latest checkpoint, count the candidates, fold the prefix) keep memory
// to counts, the latest excerpts, the first 30 files and the tool-call list.
import { nextSeqFromTail } from "../store/append.js";
import { abortable } from "../lines/abortable.js";
import { isJsonObject, isSeq, serializeEvent, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { DETERMINISTIC_SUMMARY } from "../event/vocabulary.js";
import { newUlid } from "../event/ids.js";
import { acquireLease } from "../store/lease.js";
import { openHistory, type History } from "../store/loader.js";
import { appendJournaled, recoverJournal } from "../store/log-write.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { eventExcerpt, excerptValue, isSummaryCandidate, OPEN_TASKS_LIMIT, SortedStringSet, SUMMARY_BULLETS_LIMIT, FILES_TOUCHED_LIMIT, toolCallPaths } from "../summary/summary.js";

export const DEFAULT_TAIL_EVENTS = 40;
export const COMPACTED_SKILLS_LIMIT = 5;
export const NOTHING_TO_COMPACT = "history does not exceed requested tail";
/**
 * Not in the spec: a prefix of null-seq Events only gives a checkpoint with no integer `range.to_seq`,
 * which the context fold ignores (§1.1), and every run would append another.
 */
export const NO_SEQ_TO_COMPACT = "events to compact have no integer seq";
export const COMPACTION_LIMITATIONS = [
  "Deterministic compaction keeps operational facts and recent tail; it is not a semantic substitute for the full Log.",
  "The full NDJSON Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];
export const COMPACTED_SKILLS_LIMITATION =
  "Skill activations in the compacted range are listed by name, path and content hash only; their instructions remain in the full Log.";

/** §2: the data of a deterministic history_compaction. */
export interface HistoryCompactionData {
  [key: string]: unknown;
  strategy: string;
  trigger: "manual";
  range: { from_seq: unknown; to_seq: number | null };
  source_event_count: number;
  tail_event_count: number;
  event_counts: Record<string, number>;
  compacted_skill_activation_count: number;
  compacted_skill_activations: Array<{ seq: number | null; name: unknown; path: unknown; content_hash: unknown }>;
  tool_calls: Array<{ seq: number | null; call_id: unknown; name: unknown }>;
  files_touched: string[];
  open_tasks: string[];
  limitations: string[];
  summary: string;
}

export interface NothingToCompact {
  ok: true;
  compactable: false;
  recorded: false;
  tail_events: number;
  reason: string;
}

export interface CompactionPlan {
  ok: true;
  compactable: true;
  recorded: boolean;
  model_assisted: false;
  tail_events: number;
  would_compact_events: number;
  event: HistoryCompactionData;
  compaction_event_id?: string;
  compaction_seq?: number;
}

export type CompactResult = NothingToCompact | CompactionPlan;

export interface CompactOptions {
  /** N, a positive integer; default 40. */
  tailEvents?: number;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

const nothing = (tail: number, reason = NOTHING_TO_COMPACT): NothingToCompact => ({ ok: true, compactable: false, recorded: false, tail_events: tail, reason });

const rangeOf = (e: PixirEvent): JsonObject => (isJsonObject(e.data.range) ? e.data.range : {});
const integerOrNull = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);
/** Interpolation as in Pixir (Elixir): nil is the empty string. */
const interpolate = (v: unknown): string => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));

/** §3 step 2: the history_compaction with the greatest seq (null counts as −1; a tie goes to the later one). */
async function latestCompaction(history: History, signal?: AbortSignal): Promise<PixirEvent | null> {
  let latest: PixirEvent | null = null;
  let best = -Infinity;
  for await (const { event } of abortable(history.items(), signal)) {
    if (event.type !== "history_compaction") continue;
    if ((event.seq ?? -1) >= best) {
      best = event.seq ?? -1;
      latest = event;
    }
  }
  return latest;
}

/** §3 step 3: the candidates, given the latest checkpoint's integer `range.to_seq` (if any). */
function isCandidate(e: PixirEvent, after: number | null): boolean {
  if (e.type === "history_compaction") return false;
  return after === null || (e.seq !== null && e.seq > after);
}

/** §2 and §3 steps 5–10: folds the material (the carried checkpoint, then the prefix) into the data. */
export class CompactionBuilder {
  private readonly counts = new Map<string, number>();
  private readonly skills: HistoryCompactionData["compacted_skill_activations"] = [];
  private skillCount = 0;
  private readonly toolCalls: HistoryCompactionData["tool_calls"] = [];
  private readonly files = new SortedStringSet(FILES_TOUCHED_LIMIT);
  private readonly excerpts: string[] = [];
  private materialCount = 0;
  private prefixCount = 0;
  private firstPrefixSeq: number | null | undefined = undefined;
  private maxSeq: number | null = null;

  constructor(private readonly carried: PixirEvent | null) {
    if (carried === null) return;
    this.count(carried);
    this.maxSeq = integerOrNull(rangeOf(carried).to_seq);
    if (Array.isArray(carried.data.files_touched)) {
      for (const f of carried.data.files_touched) if (typeof f === "string") this.files.add(f);
    }
    const r = rangeOf(carried);
    this.excerpt(`previous checkpoint seq ${interpolate(r.from_seq)}..${interpolate(r.to_seq)}: ${excerptValue(carried.data.summary)}`);
  }

  private count(e: PixirEvent): void {
    this.materialCount++;
    this.counts.set(e.type, (this.counts.get(e.type) ?? 0) + 1);
  }

  private excerpt(text: string): void {
    if (text === "") return;
    this.excerpts.push(text);
    if (this.excerpts.length > OPEN_TASKS_LIMIT) this.excerpts.shift();
  }

  /** The next prefix Event, in History order. */
  add(e: PixirEvent): void {
    this.count(e);
    this.prefixCount++;
    if (this.firstPrefixSeq === undefined) this.firstPrefixSeq = e.seq;
    if (e.seq !== null && (this.maxSeq === null || e.seq > this.maxSeq)) this.maxSeq = e.seq;
    if (e.type === "skill_activation") {
      this.skillCount++;
      const d = e.data;
      this.skills.push({ seq: e.seq, name: d.name ?? null, path: d.path ?? null, content_hash: d.content_hash ?? null });
      if (this.skills.length > COMPACTED_SKILLS_LIMIT) this.skills.shift();
    }
    if (e.type === "tool_call") {
      this.toolCalls.push({ seq: e.seq, call_id: e.data.call_id ?? null, name: e.data.name ?? null });
      for (const p of toolCallPaths(e)) this.files.add(p);
    }
    if (isSummaryCandidate(e)) this.excerpt(eventExcerpt(e));
  }

  get compacted(): number {
    return this.prefixCount;
  }

  finish(tailCount: number): HistoryCompactionData {
    const carried = this.carried;
    const eventCounts: Record<string, number> = {};
    for (const [type, n] of this.counts) eventCounts[type] = n;
    const countText = Object.keys(eventCounts)
      .sort()
      .map((t) => `${t}=${eventCounts[t]}`)
      .join(", ");
    const recent = this.excerpts.slice(-SUMMARY_BULLETS_LIMIT);
    const bullets = recent.length > 0 ? recent.map((x) => `- ${x}`).join("\n") : "- none recorded";
    const carriedCount = carried !== null && isSeq(carried.data.source_event_count) ? carried.data.source_event_count : 0;
    return {
      strategy: DETERMINISTIC_SUMMARY,
      trigger: "manual",
      range: {
        from_seq: carried !== null ? (rangeOf(carried).from_seq ?? null) : (this.firstPrefixSeq ?? null),
        to_seq: this.maxSeq,
      },
      source_event_count: carriedCount + this.prefixCount,
      tail_event_count: tailCount,
      event_counts: eventCounts,
      compacted_skill_activation_count: this.skillCount,
      compacted_skill_activations: this.skills,
      tool_calls: this.toolCalls,
      files_touched: this.files.list(),
      open_tasks: this.excerpts.slice(-OPEN_TASKS_LIMIT),
      limitations: this.skillCount > 0 ? [...COMPACTION_LIMITATIONS, COMPACTED_SKILLS_LIMITATION] : [...COMPACTION_LIMITATIONS],
      summary: `Compacted ${this.materialCount} events (${countText}).\nRecent compacted conversational facts:\n${bullets}`.trim(),
    };
  }
}

/** §3 steps 1–11 over a resolved History: the checkpoint that `pixir compact` would record. */
export async function planCompaction(history: History, tailEvents: number, signal?: AbortSignal): Promise<CompactResult> {
  const latest = await latestCompaction(history, signal);
  const after = latest === null ? null : integerOrNull(rangeOf(latest).to_seq);
  let candidates = 0;
  for await (const { event } of abortable(history.items(), signal)) if (isCandidate(event, after)) candidates++;
  if (candidates <= tailEvents) return nothing(candidates);
  const prefixLength = candidates - tailEvents;
  const builder = new CompactionBuilder(latest);
  for await (const { event } of abortable(history.items(), signal)) {
    if (builder.compacted === prefixLength) break;
    if (isCandidate(event, after)) builder.add(event);
  }
  const event = builder.finish(tailEvents);
  if (event.range.to_seq === null) return nothing(candidates, NO_SEQ_TO_COMPACT);
  return {
    ok: true,
    compactable: true,
    recorded: false,
    model_assisted: false,
    tail_events: tailEvents,
    would_compact_events: prefixLength,
    event,
  };
}

/** §3: plan, and unless a dry run, record the checkpoint at the next seq under the Writer Lease. */
export async function compactSession(ws: string, id: string, options: CompactOptions): Promise<CompactResult> {
  const n = options.tailEvents ?? DEFAULT_TAIL_EVENTS;
  // A missing Session is an empty History: nothing to compact, and nothing is created.
  if (inspectStatePath(logPath(ws, id)) === "missing") return nothing(0);
  const first = await planCompaction(await openHistory(ws, id), n, options.signal);
  if (!first.compactable || options.dryRun) return first;

  const lease = await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  let recorded = false;
  try {
    recoverJournal(ws, id);
    // Computed again under the lease: another writer may have appended since the first look.
    const plan = await planCompaction(await openHistory(ws, id), n, options.signal);
    if (!plan.compactable) return plan;
    const { next, tail } = await nextSeqFromTail(ws, id);
    const event: PixirEvent = { id: newUlid(), session_id: id, seq: next, ts: new Date().toISOString(), type: "history_compaction", data: plan.event };
    await appendJournaled(ws, id, tail, async (emit) => emit(serializeEvent(event)), { lease, signal: options.signal });
    recorded = true;
    return { ...plan, recorded: true, compaction_event_id: event.id!, compaction_seq: next };
  } finally {
    lease.release(!recorded);
  }
}

/** §3 text output. */
export function compactText(r: CompactResult): string {
  if (!r.compactable) return `Nothing to compact: ${r.reason}`;
  const { from_seq: from, to_seq: to } = r.event.range;
  const span = `seq ${interpolate(from)}..${interpolate(to)}`;
  return r.recorded ? `Recorded compaction checkpoint at seq ${r.compaction_seq} for ${span}.` : `Would compact ${r.would_compact_events} events, ${span}.`;
}
