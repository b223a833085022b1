// archive.md §3: the model calls a Log records, each counted exactly once, per agent. A Log's OWN Events
// only: a fork's inherited prefix is its parent's (never inherited, fork.md), so summing the Logs of a
// family counts a shared call once. The one cross-Log case, a Claude response whose records fall in two
// Logs of a family, is settled by `dedupe_key` (claude-interop.md §2.2: readers deduplicate themselves).
import { isJsonObject, type JsonObject, type PixirEvent } from "../event/envelope.js";

/** archive.md §1 `agent`: one type, in archive/agents.ts. */
import type { AgentName } from "./agents.js";
export type { AgentName } from "./agents.js";

/** One model call. A count the source does not give is null, never a guessed 0. */
export interface ModelCall {
  session_id: string;
  seq: number;
  ts: string;
  model: string | null;
  /** Input not read from the cache. */
  input: number | null;
  output: number | null;
  cache_read: number | null;
  /** Every cache write; 5m and 1h below when the source splits them (their sum), else null. */
  cache_write: number | null;
  cache_write_5m: number | null;
  cache_write_1h: number | null;
  /** Reasoning output where the source counts it apart; it is already part of `output`. */
  reasoning: number | null;
  /** A cost the source recorded (pi `usage.cost.total`, Claude `costUSD`), in USD. */
  recorded_cost_usd: number | null;
  /**
   * The identity of one call across Logs, where a copy can hold it again: Claude `message.id` + `requestId`;
   * pi the entry id + timestamp (a pi `/fork` file copies its parent's entries); else null.
   */
  dedupe_key: string | null;
}

/** A call's token counts, in the order the reports give them. */
export const TOKEN_KEYS = ["input", "output", "cache_read", "cache_write", "cache_write_5m", "cache_write_1h", "reasoning"] as const;
export type TokenKey = (typeof TOKEN_KEYS)[number];

/** What a call's tokens and cost are computed from. */
export type CallUsage = Omit<ModelCall, "session_id" | "seq" | "ts" | "dedupe_key">;

/** Tokens of a call: input, output, cache read and cache write (reasoning is inside output). */
export const callTotal = (c: CallUsage): number => (c.input ?? 0) + (c.output ?? 0) + (c.cache_read ?? 0) + (c.cache_write ?? 0);

/** The model calls recorded in a Log's OWN Events (not the prefix it inherits), in seq order. */
export function modelCallsOf(events: readonly PixirEvent[], agent: AgentName): ModelCall[] {
  const counter = new ModelCallCounter(agent);
  for (const e of events) counter.push(e);
  return counter.calls();
}

/** modelCallsOf one Event at a time, for a reader that streams a Log: it holds the calls, not the Events. */
export class ModelCallCounter {
  private readonly found: ModelCall[] = [];
  /** Claude: the index in `found` of each response's call and its output so far. */
  private readonly responses = new Map<string, { index: number; output: number }>();

  constructor(private readonly agent: AgentName) {}

  push(e: PixirEvent): void {
    if (this.agent === "claude") this.pushClaude(e);
    else if (e.type === "provider_usage") this.found.push(this.agent === "codex" ? codexCall(e) : this.agent === "pi" ? piCall(e) : usageEventCall(e));
  }

  calls(): ModelCall[] {
    return this.found;
  }

  /**
   * Claude (archive.md §3): the records of one API response (same `message.id` and `requestId`) are one
   * call, with the usage of the record with the most output tokens (streamed records repeat usage while
   * `output_tokens` grows). The call sits at its first record's Event.
   */
  private pushClaude(e: PixirEvent): void {
    const found = claudeUsageRecord(e);
    if (found === null) return;
    const key = typeof found.message.id === "string" ? `${found.message.id}\u0000${str(found.record.requestId) ?? ""}` : null;
    const call = claudeCall(e, found.message, found.usage, found.record, key);
    const output = call.output ?? 0;
    const seen = key === null ? undefined : this.responses.get(key);
    if (seen === undefined) {
      if (key !== null) this.responses.set(key, { index: this.found.length, output });
      this.found.push(call);
    } else if (output > seen.output) {
      const first = this.found[seen.index]!;
      this.found[seen.index] = { ...call, seq: first.seq, ts: first.ts };
      seen.output = output;
    }
  }
}

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
/** The first of `keys` that holds a finite number. */
const pick = (o: JsonObject, ...keys: string[]): number | null => {
  for (const k of keys) if (num(o[k]) !== null) return o[k] as number;
  return null;
};

function baseCall(e: PixirEvent, model: string | null): ModelCall {
  return {
    session_id: e.session_id ?? "",
    seq: e.seq ?? 0,
    ts: e.ts ?? "",
    model,
    input: null,
    output: null,
    cache_read: null,
    cache_write: null,
    cache_write_5m: null,
    cache_write_1h: null,
    reasoning: null,
    recorded_cost_usd: null,
    dedupe_key: null,
  };
}

/** pi and Pixir: one `provider_usage` Event is one call (pi-interop.md §3; the keys Pixir writes). */
function usageEventCall(e: PixirEvent): ModelCall {
  const d = e.data;
  const cost = d.cost_usd ?? d.cost;
  const write5m = pick(d, "cache_write_5m");
  const write1h = pick(d, "cache_write_1h");
  const split = write5m !== null || write1h !== null ? (write5m ?? 0) + (write1h ?? 0) : null;
  return {
    ...baseCall(e, str(d.model)),
    input: pick(d, "input", "input_tokens"),
    output: pick(d, "output", "output_tokens"),
    cache_read: pick(d, "cache_read", "cache_read_input_tokens"),
    cache_write: pick(d, "cache_write", "cache_creation_input_tokens") ?? split,
    cache_write_5m: write5m,
    cache_write_1h: write1h,
    reasoning: pick(d, "reasoning", "reasoning_tokens"),
    recorded_cost_usd: num(cost) ?? (isJsonObject(cost) ? num(cost.total) : null),
  };
}

/** pi (pi-interop.md §3): a provider_usage, keyed by its entry, which a `/fork` copy keeps. */
function piCall(e: PixirEvent): ModelCall {
  const pi = e.data.pi;
  const entry = isJsonObject(pi) ? str(pi.entry_id) : null;
  const at = isJsonObject(pi) ? (str(pi.entry_ts) ?? "") : "";
  return { ...usageEventCall(e), dedupe_key: entry === null ? null : `pi:${entry}\u0000${at}` };
}

/**
 * Codex (codex-interop.md §2.4.7): the importer writes a `provider_usage` exactly for a `token_count` whose
 * running totals grew; the call is that line's `last_token_usage` (archive.md §3), else the totals' delta.
 */
function codexCall(e: PixirEvent): ModelCall {
  const fromDelta = usageEventCall(e);
  const codex = e.data.codex;
  const record = isJsonObject(codex) ? codex.record : null;
  const payload = isJsonObject(record) ? record.payload : null;
  const info = isJsonObject(payload) ? payload.info : null;
  const last = isJsonObject(info) ? info.last_token_usage : null;
  if (!isJsonObject(last) || num(last.input_tokens) === null || num(last.output_tokens) === null) {
    return { ...fromDelta, recorded_cost_usd: null };
  }
  const cached = num(last.cached_input_tokens) ?? 0;
  return {
    ...fromDelta,
    input: (last.input_tokens as number) - cached,
    output: last.output_tokens as number,
    cache_read: cached,
    cache_write: num(last.cache_write_input_tokens),
    reasoning: num(last.reasoning_output_tokens),
    recorded_cost_usd: null,
  };
}

/** The Claude record an Event holds (claude-interop.md §2.3): `record`, else its `raw_line` parsed. */
function claudeRecordOf(e: PixirEvent): JsonObject | null {
  const c = e.data.claude;
  if (!isJsonObject(c)) return null;
  if (isJsonObject(c.record)) return c.record;
  if (typeof c.raw_line !== "string") return null;
  try {
    const parsed: unknown = JSON.parse(c.raw_line);
    return isJsonObject(parsed) ? parsed : null;
  } catch {
    return null; // a malformed line kept by --lenient holds no usage
  }
}

/** A Claude `assistant` record with usage, not synthetic (claude-interop.md §2.2); else null. */
function claudeUsageRecord(e: PixirEvent): { message: JsonObject; usage: JsonObject; record: JsonObject } | null {
  const record = claudeRecordOf(e);
  if (record === null || record.type !== "assistant" || !isJsonObject(record.message)) return null;
  const message = record.message;
  if (!isJsonObject(message.usage) || message.model === "<synthetic>") return null;
  return { message, usage: message.usage, record };
}

function claudeCall(e: PixirEvent, message: JsonObject, usage: JsonObject, record: JsonObject, key: string | null): ModelCall {
  const creation = usage.cache_creation;
  const write5m = isJsonObject(creation) ? num(creation.ephemeral_5m_input_tokens) : null;
  const write1h = isJsonObject(creation) ? num(creation.ephemeral_1h_input_tokens) : null;
  const split = write5m !== null || write1h !== null ? (write5m ?? 0) + (write1h ?? 0) : null;
  return {
    ...baseCall(e, str(message.model)),
    input: num(usage.input_tokens) ?? 0,
    output: num(usage.output_tokens) ?? 0,
    cache_read: num(usage.cache_read_input_tokens) ?? 0,
    cache_write: num(usage.cache_creation_input_tokens) ?? split ?? 0,
    cache_write_5m: write5m,
    cache_write_1h: write1h,
    recorded_cost_usd: num(record.costUSD),
    dedupe_key: key,
  };
}
