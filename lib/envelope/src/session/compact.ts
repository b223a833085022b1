// context-and-compaction.md §3–§4: `pixir compact` records a deterministic history_compaction
// checkpoint, exactly as Pixir's `Compaction` computes it: everything but the last N candidates, with
// the latest checkpoint carried forward (its counts, its skill activations, its summary as an excerpt).
// The Log is not rewritten: the checkpoint is one more Event, appended under the Writer Lease. Three
// streaming passes (the latest checkpoint, the count of candidates, the prefix) keep memory to counts,
// the last candidates, five skill identities, the first 30 files and the tool-call list.
import { nextSeqFromTail } from "../store/append.js";
import { abortable } from "../lines/abortable.js";
import { serializeEvent, type PixirEvent } from "../event/envelope.js";
import { DETERMINISTIC_SUMMARY } from "../event/vocabulary.js";
import { compareUtf8, etrim, hasKey, isInteger, isTermObject, jason, member, orElse, str, termObject, type Term, type TermObject } from "../event/elixir.js";
import { newUlid } from "../event/ids.js";
import { acquireLease } from "../store/lease.js";
import { openHistory, type History, type HistoryItem } from "../store/loader.js";
import { appendJournaled, recoverJournal } from "../store/log-write.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { excerptParts, FILES_TOUCHED_LIMIT, OPEN_TASKS_LIMIT, SortedStringSet, SUMMARY_BULLETS_LIMIT, toolCallPaths } from "../summary/summary.js";
import { checkpointToSeq, eventData } from "./context.js";

export const DEFAULT_TAIL_EVENTS = 40;
/** §4 step 11: identities of compacted skill activations a checkpoint keeps. */
export const COMPACTED_SKILLS_LIMIT = 5;
export const NOTHING_TO_COMPACT = "history does not exceed requested tail";
export const NO_COMPACTABLE_HISTORY = "no compactable history";
export const COMPACTION_LIMITATIONS = [
  "Deterministic compaction keeps operational facts and recent tail; it is not a semantic substitute for the full Log.",
  "The full NDJSON Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];
export const COMPACTED_SKILLS_LIMITATION =
  "Skills activated only inside the compacted range are not replayed unless they remain in the recent raw tail or are explicitly re-activated.";

/** §4 step 16: nothing to compact. A dry run says how many candidates there are and why. */
export interface NothingToCompact {
  ok: true;
  compactable: false;
  recorded: false;
  tail_events?: number;
  reason?: string;
}

/** §4 steps 15 and 17: the checkpoint `event` (the data recorded) and, once recorded, where it is. */
export interface CompactionPlan {
  ok: true;
  compactable: true;
  recorded: boolean;
  model_assisted: false;
  tail_events: number;
  would_compact_events: number;
  /** The 13 keys of §3, as Jason values (integers are bigints). */
  event: TermObject;
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

const nothingDryRun = (candidates: number): NothingToCompact => ({ ok: true, compactable: false, recorded: false, tail_events: candidates, reason: NOTHING_TO_COMPACT });
const NOTHING: NothingToCompact = { ok: true, compactable: false, recorded: false };

const obj = (entries: Record<string, Term>): TermObject => Object.assign(termObject(), entries);
const seqTerm = (seq: number | null): Term => (seq === null ? null : BigInt(seq));

/** §1.1 step 2: the checkpoint with the greatest seq (null counts as −1); the first one wins a tie. */
async function latestCheckpoint(history: History, signal?: AbortSignal): Promise<HistoryItem | null> {
  let latest: HistoryItem | null = null;
  let best = -Infinity;
  for await (const item of abortable(history.items(), signal)) {
    if (item.event.type !== "history_compaction") continue;
    const seq = item.event.seq ?? -1;
    if (seq > best) {
      best = seq;
      latest = item;
    }
  }
  return latest;
}

/** §4 step 3: after a checkpoint with an integer `to_seq`, only Events with a greater integer seq count. */
function isCandidate(e: PixirEvent, to: bigint | null): boolean {
  if (e.type === "history_compaction") return false;
  return to === null || (e.seq !== null && e.seq > to);
}

/** §4 step 11: a skill identity's sort key; a seq that is not an integer counts as −1. */
const identityRank = (identity: TermObject): bigint => (isInteger(identity.seq) ? identity.seq : -1n);
const IDENTITY_KEYS = ["seq", "name", "path", "content_hash"] as const;

/** §4 step 12: the excerpt candidates. */
const EXCERPT_TYPES = new Set<PixirEvent["type"]>(["history_compaction", "user_message", "assistant_message", "subagent_event"]);
const EXCERPT_WINDOW = Math.max(OPEN_TASKS_LIMIT, SUMMARY_BULLETS_LIMIT);

/** §4 step 12: the excerpt, computed even when empty (an empty one still takes its slot). */
function excerpt(type: PixirEvent["type"], data: TermObject): string {
  const parts = excerptParts(type, data);
  return parts === null ? "" : parts[0] + parts[1];
}

/** §3 and §4 steps 6–14: folds the material (the carried checkpoint, then the prefix) into the data. */
export class CompactionBuilder {
  private readonly counts = new Map<string, number>();
  private materialCount = 0;
  private first: { seq: number | null; data: TermObject | null } | null = null;
  private toSeq: bigint | null = null;
  private sourceCount = 0n;
  private skillCount = 0n;
  /** The latest five identities by (seq, material order), in that order, and how many there were. */
  private readonly identities: TermObject[] = [];
  private identityCount = 0;
  private readonly toolCalls: TermObject[] = [];
  private readonly files = new SortedStringSet(FILES_TOUCHED_LIMIT);
  /** The last excerpt candidates, whose data is read only at the end. */
  private readonly candidates: Array<{ type: PixirEvent["type"]; data: () => TermObject }> = [];

  /** The next material Event, in order: the carried checkpoint first. */
  add(item: HistoryItem): void {
    const e = item.event;
    let parsed: TermObject | null = null;
    const data = () => (parsed ??= eventData(item));
    this.materialCount++;
    this.counts.set(e.type, (this.counts.get(e.type) ?? 0) + 1);
    const checkpoint = e.type === "history_compaction";
    if (this.first === null) this.first = { seq: e.seq, data: checkpoint ? data() : null };
    // §4 step 8: a checkpoint stands for its range; any other Event for its own seq.
    const to = checkpoint ? checkpointToSeq(data()) : null;
    const last = to ?? (e.seq === null ? null : BigInt(e.seq));
    if (last !== null && (this.toSeq === null || last > this.toSeq)) this.toSeq = last;
    if (checkpoint) this.addCheckpoint(data());
    else {
      this.sourceCount++;
      if (e.type === "skill_activation") {
        this.skillCount++;
        const d = data();
        this.addIdentity(obj({ seq: seqTerm(e.seq), name: d.name ?? null, path: d.path ?? null, content_hash: d.content_hash ?? null }));
      } else if (e.type === "tool_call") {
        const d = data();
        this.toolCalls.push(obj({ seq: seqTerm(e.seq), call_id: d.call_id ?? null, name: d.name ?? null }));
        for (const p of toolCallPaths({ type: e.type, data: d })) this.files.add(p);
      }
    }
    if (EXCERPT_TYPES.has(e.type)) {
      this.candidates.push({ type: e.type, data });
      if (this.candidates.length > EXCERPT_WINDOW) this.candidates.shift();
    }
  }

  /** §4 steps 9–11 for a carried checkpoint: its counts and identities; its files and calls stay behind. */
  private addCheckpoint(d: TermObject): void {
    this.sourceCount += isInteger(d.source_event_count) ? d.source_event_count : 1n;
    const explicit = d.compacted_skill_activation_count;
    const legacy = member(d.event_counts, "skill_activation");
    if (isInteger(explicit) && explicit >= 0n) this.skillCount += explicit;
    else if (isInteger(legacy) && legacy >= 0n) this.skillCount += legacy;
    if (!Array.isArray(d.compacted_skill_activations)) return;
    for (const carried of d.compacted_skill_activations) {
      if (!isTermObject(carried)) continue;
      const identity = termObject();
      for (const k of IDENTITY_KEYS) if (hasKey(carried, k)) identity[k] = carried[k]!;
      this.addIdentity(identity);
    }
  }

  /** §4 step 11 `latest5`: a stable sort by seq keeps the last five, so a later equal seq wins. */
  private addIdentity(identity: TermObject): void {
    this.identityCount++;
    const rank = identityRank(identity);
    let at = this.identities.length;
    while (at > 0 && identityRank(this.identities[at - 1]!) > rank) at--;
    this.identities.splice(at, 0, identity);
    if (this.identities.length > COMPACTED_SKILLS_LIMIT) this.identities.shift();
  }

  finish(tailCount: number): TermObject {
    const eventCounts = termObject();
    const types = [...this.counts.keys()].sort(compareUtf8);
    for (const t of types) eventCounts[t] = BigInt(this.counts.get(t)!);
    const excerpts = this.candidates.map((c) => excerpt(c.type, c.data()));
    const bulletLines = excerpts.slice(-SUMMARY_BULLETS_LIMIT).filter((x) => x !== "");
    const countText = types.map((t) => `${t}=${this.counts.get(t)}`).join(", ");
    const summary = etrim(
      `Compacted ${this.materialCount} events (${countText}).\nRecent compacted conversational facts:\n` +
        (bulletLines.length > 0 ? bulletLines.map((x) => `- ${x}`).join("\n") : "- none recorded"),
    );
    const first = this.first;
    const carriedFrom = first?.data === null || first === null ? undefined : member(first.data.range, "from_seq");
    const fromSeq = isInteger(carriedFrom) ? carriedFrom : seqTerm(first?.seq ?? null);
    return obj({
      strategy: DETERMINISTIC_SUMMARY,
      trigger: "manual",
      range: obj({ from_seq: fromSeq, to_seq: this.toSeq }),
      source_event_count: this.sourceCount,
      tail_event_count: BigInt(tailCount),
      event_counts: eventCounts,
      compacted_skill_activation_count: this.skillCount,
      compacted_skill_activations: [...this.identities],
      tool_calls: this.toolCalls,
      files_touched: this.files.list(),
      open_tasks: excerpts.slice(-OPEN_TASKS_LIMIT).filter((x) => x !== ""),
      limitations: this.limitations(),
      summary,
    });
  }

  /** §4 step 13. */
  private limitations(): string[] {
    const out = [...COMPACTION_LIMITATIONS];
    if (this.skillCount > 0n) out.push(COMPACTED_SKILLS_LIMITATION);
    if (this.identityCount > 0) {
      const named = this.identities.map(
        (r) =>
          `${str(orElse(r.name, "unknown"))} (seq ${str(orElse(r.seq, "?"))}, ${str(orElse(r.path, "unknown path"))}, sha256 ${str(orElse(r.content_hash, "unknown"))})`,
      );
      const earlier = this.identityCount - this.identities.length;
      out.push(`Compacted skill activations: ${named.join("; ")}${earlier > 0 ? `; +${earlier} earlier.` : "."}`);
    }
    return out;
  }
}

/** §4 steps 1–15 over a resolved History: the checkpoint that `pixir compact` would record. */
export async function planCompaction(history: History, tailEvents: number, signal?: AbortSignal): Promise<CompactResult> {
  const latest = await latestCheckpoint(history, signal);
  const to = latest === null ? null : checkpointToSeq(eventData(latest));
  let candidates = 0;
  for await (const { event } of abortable(history.items(), signal)) if (isCandidate(event, to)) candidates++;
  if (candidates <= tailEvents) return nothingDryRun(candidates);
  const prefixLength = candidates - tailEvents;
  const builder = new CompactionBuilder();
  if (latest !== null) builder.add(latest);
  let prefix = 0;
  for await (const item of abortable(history.items(), signal)) {
    if (prefix === prefixLength) break;
    if (!isCandidate(item.event, to)) continue;
    builder.add(item);
    prefix++;
  }
  return {
    ok: true,
    compactable: true,
    recorded: false,
    model_assisted: false,
    tail_events: tailEvents,
    would_compact_events: prefixLength,
    event: builder.finish(tailEvents),
  };
}

/** §4 steps 16–17: plan, and unless a dry run, record the checkpoint at the next seq under the Writer Lease. */
export async function compactSession(ws: string, id: string, options: CompactOptions): Promise<CompactResult> {
  const n = options.tailEvents ?? DEFAULT_TAIL_EVENTS;
  const answer = (r: CompactResult): CompactResult => (r.compactable || options.dryRun ? r : NOTHING);
  // A missing Session is an empty History: nothing to compact, and nothing is created.
  if (inspectStatePath(logPath(ws, id)) === "missing") return answer(nothingDryRun(0));
  const first = await planCompaction(await openHistory(ws, id), n, options.signal);
  if (!first.compactable || options.dryRun) return answer(first);

  const lease = await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  let recorded = false;
  try {
    recoverJournal(ws, id);
    // Computed again under the lease: another writer may have appended since the first look.
    const plan = await planCompaction(await openHistory(ws, id), n, options.signal);
    if (!plan.compactable) return answer(plan);
    const { next, tail } = await nextSeqFromTail(ws, id);
    const event: PixirEvent = { id: newUlid(), session_id: id, seq: next, ts: new Date().toISOString(), type: "history_compaction", data: {} };
    // Keys in byte order and numbers as Jason writes them, as Pixir writes its checkpoints.
    await appendJournaled(ws, id, tail, async (emit) => emit(serializeEvent(event, jason(plan.event))), { lease, signal: options.signal });
    recorded = true;
    return { ...plan, recorded: true, compaction_event_id: event.id!, compaction_seq: next };
  } finally {
    lease.release(!recorded);
  }
}

/** §4 steps 15–17: the `--json` document (its `event` written as Jason writes it). */
export function compactJson(r: CompactResult): string {
  if (!r.compactable) return JSON.stringify(r);
  const { event, ...head } = r;
  return `${JSON.stringify(head).slice(0, -1)},"event":${jason(event)}}`;
}

/** §4 steps 15–17: the text output. */
export function compactText(r: CompactResult): string {
  if (!r.compactable) return `Nothing to compact: ${r.reason ?? NO_COMPACTABLE_HISTORY}`;
  const span = `seq ${str(member(r.event.range, "from_seq"))}..${str(member(r.event.range, "to_seq"))}`;
  return r.recorded ? `Recorded compaction checkpoint at seq ${r.compaction_seq} for ${span}.` : `Would compact ${r.would_compact_events} events, ${span}.`;
}
