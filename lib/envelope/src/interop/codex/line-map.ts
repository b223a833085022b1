// codex-interop.md §2: one rollout line to canonical Events, with data.codex so the line can be rebuilt.
// The running state (§2.4.7 usage baseline, §2.4.9 model and turn, call id → tool name) is read from every
// line in order, copied lines of a fork included, whether or not the line gets Events.
import { isJsonObject, type CanonicalType, type JsonObject } from "../../event/envelope.js";
import { contentText, isContextual, outputText, type RolloutLine } from "./format.js";

/** An Event before it has a place: its type, data (codex last) and part of the line. */
export interface LineDraft {
  type: CanonicalType;
  data: JsonObject;
  /** null, "compacted" or "rh<j>" (§2.2). */
  part: string | null;
}

export const CODEX_COMPACTION_LIMITATIONS = [
  "Imported from a Codex compacted record: the Events after this checkpoint are the items Codex kept.",
  "Every earlier line of the rollout is still in the Log.",
];

const COUNTERS = ["input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"] as const;
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

const CALL_KIND: Record<string, string> = {
  function_call: "function",
  custom_tool_call: "custom",
  local_shell_call: "local_shell",
  tool_search_call: "tool_search",
};
const OUTPUT_KIND: Record<string, string> = {
  function_call_output: "function",
  custom_tool_call_output: "custom",
  tool_search_output: "tool_search",
};

/** §2.4.5: the name a call item is known by. */
function callName(item: JsonObject): string {
  if (item.type === "local_shell_call") return "local_shell";
  if (item.type === "tool_search_call") return "tool_search";
  return typeof item.name === "string" ? item.name : "";
}

function callIdOf(item: JsonObject): string | null {
  if (typeof item.call_id === "string") return item.call_id;
  if (item.type === "local_shell_call" && typeof item.id === "string") return item.id;
  return null;
}

/** The running state of one rollout (§2.4.7, §2.4.9, tool_name). */
export class RunningState {
  model: string | null = null;
  turn: string | null = null;
  /** B, in COUNTERS order (a Float64Array keeps -0 as the object it replaced did), and the counters being read. */
  private readonly baseline = new Float64Array(COUNTERS.length);
  private readonly now = new Float64Array(COUNTERS.length);
  private readonly toolNames = new Map<string, string>();
  constructor(readonly provider: string | null) {}

  /**
   * §2.4.9 and tool names: what a line tells later lines, from its record's type and its payload (`{}`
   * when that is no object). Usage is read by usageDelta.
   */
  observe(recordType: unknown, p: JsonObject): void {
    if (recordType === "turn_context") {
      if (typeof p.model === "string") this.model = p.model;
      if (typeof p.turn_id === "string") this.turn = p.turn_id;
    } else if (recordType === "event_msg" && p.type === "task_started" && typeof p.turn_id === "string") {
      this.turn = p.turn_id;
    } else if (recordType === "response_item") this.noteCall(p);
    else if (recordType === "compacted" && Array.isArray(p.replacement_history)) for (const it of p.replacement_history) if (isJsonObject(it)) this.noteCall(it);
  }

  private noteCall(item: JsonObject): void {
    if (typeof item.type !== "string" || CALL_KIND[item.type] === undefined) return;
    const id = callIdOf(item);
    if (id !== null) this.toolNames.set(id, callName(item));
  }

  toolName(callId: string | null): string | undefined {
    return callId === null ? undefined : this.toolNames.get(callId);
  }

  /** §2.4.7 steps 1–5: the deltas of a token_count, or null when it is a codex_record. Moves the baseline. */
  usageDelta(p: JsonObject): { delta: Record<string, number>; reset: boolean; info: JsonObject } | null {
    const info = p.info;
    if (!isJsonObject(info) || !isJsonObject(info.total_token_usage)) return null;
    const u = info.total_token_usage;
    const now = this.now;
    let reset = false;
    for (let i = 0; i < COUNTERS.length; i++) {
      now[i] = num(u[COUNTERS[i]!]);
      if (now[i]! - this.baseline[i]! < 0) reset = true;
    }
    const delta: Record<string, number> = {};
    let allZero = true;
    for (let i = 0; i < COUNTERS.length; i++) {
      const d = reset ? now[i]! : now[i]! - this.baseline[i]!;
      delta[COUNTERS[i]!] = d;
      if (d !== 0) allZero = false;
    }
    this.baseline.set(now);
    return allZero ? null : { delta, reset, info };
  }
}

/** §2.4.8: a codex_record. */
export function codexRecord(recordType: unknown, item: JsonObject, extra: JsonObject = {}): JsonObject {
  const data: JsonObject = {
    event: "codex_record",
    record_type: typeof recordType === "string" ? recordType : null,
    item_type: typeof item.type === "string" ? item.type : null,
  };
  if (item.type === "message") {
    data.role = item.role ?? null;
    data.text = contentText(item.content);
  }
  return { ...data, ...extra };
}

/**
 * §2.3: the Event of one item (a response_item payload or a replacement item), without `codex`.
 * Reading a replacement item does not move the running state's usage.
 */
export function itemDraft(item: JsonObject, state: RunningState, recordType: string): { type: CanonicalType; data: JsonObject } {
  switch (item.type) {
    case "message": {
      if (item.role === "user") {
        const images = Array.isArray(item.content) ? item.content.filter((c) => isJsonObject(c) && c.type === "input_image").length : 0;
        const data: JsonObject = { text: contentText(item.content), role: "user", origin: isContextual(item.content) ? "context" : "user" };
        if (images > 0) data.images = images;
        return { type: "user_message", data };
      }
      if (item.role === "assistant") {
        const data: JsonObject = { text: contentText(item.content) };
        if (typeof item.phase === "string") data.phase = item.phase;
        return { type: "assistant_message", data };
      }
      return { type: "workflow_event", data: codexRecord(recordType, item) };
    }
    case "agent_message":
      return { type: "user_message", data: { text: contentText(item.content), role: "agent", origin: "inter_agent" } };
    case "reasoning":
    case "compaction":
    case "compaction_summary":
      return { type: "reasoning", data: { item, model: state.model, dialect: "codex", kind: item.type === "reasoning" ? "reasoning" : "compaction", text: reasoningText(item) } };
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call":
    case "tool_search_call": {
      const data: JsonObject = {};
      const id = callIdOf(item);
      if (id !== null) data.call_id = id;
      data.name = callName(item);
      const { args, invalid } = callArgs(item);
      data.args = args;
      if (invalid) data.args_invalid = true;
      data.kind = CALL_KIND[item.type];
      if (typeof item.namespace === "string") data.namespace = item.namespace;
      return { type: "tool_call", data };
    }
    case "function_call_output":
    case "custom_tool_call_output":
    case "tool_search_output": {
      const data: JsonObject = {};
      const id = typeof item.call_id === "string" ? item.call_id : null;
      if (id !== null) data.call_id = id;
      data.ok = !(isJsonObject(item.output) && item.output.success === false);
      data.output = item.type === "tool_search_output" ? JSON.stringify(item.tools ?? null) : outputText(item.output);
      const name = state.toolName(id);
      if (name !== undefined) data.tool_name = name;
      data.kind = OUTPUT_KIND[item.type];
      return { type: "tool_result", data };
    }
    default:
      return { type: "workflow_event", data: codexRecord(recordType, item) };
  }
}

function reasoningText(item: JsonObject): string {
  const parts: string[] = [];
  if (Array.isArray(item.summary)) for (const s of item.summary) if (isJsonObject(s) && s.type === "summary_text" && typeof s.text === "string") parts.push(s.text);
  if (Array.isArray(item.content)) {
    for (const c of item.content) if (isJsonObject(c) && (c.type === "reasoning_text" || c.type === "text") && typeof c.text === "string") parts.push(c.text);
  }
  return parts.join("\n");
}

const OBJECT_TEXT = /^[ \t\n\r]*\{/;

function callArgs(item: JsonObject): { args: unknown; invalid: boolean } {
  switch (item.type) {
    case "function_call": {
      if (typeof item.arguments !== "string") return { args: {}, invalid: false };
      // Only a text whose first character after JSON whitespace is `{` parses to an object: any other is
      // invalid without JSON.parse, whose thrown error costs tens of microseconds (redacted arguments).
      if (!OBJECT_TEXT.test(item.arguments)) return { args: {}, invalid: true };
      try {
        const v: unknown = JSON.parse(item.arguments);
        return isJsonObject(v) ? { args: v, invalid: false } : { args: {}, invalid: true };
      } catch {
        return { args: {}, invalid: true };
      }
    }
    case "custom_tool_call":
      return { args: typeof item.input === "string" ? { input: item.input } : {}, invalid: false };
    case "local_shell_call":
      return { args: isJsonObject(item.action) ? item.action : {}, invalid: false };
    default:
      return { args: isJsonObject(item.arguments) ? item.arguments : {}, invalid: false };
  }
}

/** §2.2: the codex key of a line's first Event. `raw` only when JSON.stringify does not give the text back. */
function lineCodex(thread: string, line: RolloutLine, record: JsonObject, part: string | null): JsonObject {
  const codex: JsonObject = { thread, line: line.n };
  if (part !== null) codex.part = part;
  codex.record = record;
  if (line.raw !== null) codex.raw = line.raw;
  return codex;
}

/**
 * §2.1–§2.4: the Events of line `line` (n ≥ 2) of thread `thread`. Moves the running state. Returns
 * [] for no line: every line gives at least one Event.
 */
export function mapLine(thread: string, line: RolloutLine, state: RunningState): LineDraft[] {
  if (line.record === null) {
    return [{ type: "workflow_event", data: { event: "codex_skipped_line", reason: line.skipped ?? "malformed_line", codex: { thread, line: line.n, skipped: true } }, part: null }];
  }
  const record = line.record;
  const p = isJsonObject(record.payload) ? record.payload : {};
  if (record.type === "compacted") {
    state.observe(record.type, p);
    return compactedDrafts(thread, line, record, p, state);
  }
  const { type, data, storedAsItem } = recordDraft(record.type, p, state);
  const stored = storedAsItem ? { ...record, payload: "$item" } : record;
  return [{ type, data: { ...data, codex: lineCodex(thread, line, stored, null) }, part: null }];
}

/**
 * §2.3–§2.4: the Event of a line whose record is not `compacted`, without `codex`, from the record's type
 * and its payload (`{}` when that is no object); moves the running state. `storedAsItem`: the record is
 * stored with `payload` "$item" (§2.2 substitution 1). Every member of the payload it reads: `type`, and
 * by record and item type `model`, `turn_id`, `info`, `reason`, `num_turns`, `role`, `content`, and for a
 * response_item the whole item.
 */
export function recordDraft(recordType: unknown, p: JsonObject, state: RunningState): { type: CanonicalType; data: JsonObject; storedAsItem: boolean } {
  state.observe(recordType, p);
  if (recordType === "response_item") {
    const { type, data } = itemDraft(p, state, "response_item");
    return { type, data, storedAsItem: type === "reasoning" };
  }
  if (recordType === "event_msg") {
    if (p.type === "token_count") {
      const usage = state.usageDelta(p);
      if (usage !== null) {
        const d = usage.delta;
        const data: JsonObject = {
          provider: state.provider,
          model: state.model,
          turn_id: state.turn,
          input: d.input_tokens! - d.cached_input_tokens!,
          cache_read: d.cached_input_tokens,
          cache_write: d.cache_write_input_tokens,
          output: d.output_tokens,
          reasoning: d.reasoning_output_tokens,
          total_tokens: d.total_tokens,
          model_context_window: typeof usage.info.model_context_window === "number" ? usage.info.model_context_window : null,
        };
        if (usage.reset) data.reset = true;
        return { type: "provider_usage", data, storedAsItem: false };
      }
    } else if (p.type === "turn_aborted") {
      const data = { reason: typeof p.reason === "string" ? p.reason : "aborted", turn_id: typeof p.turn_id === "string" ? p.turn_id : null, source: "codex_turn_aborted" };
      return { type: "turn_failed", data, storedAsItem: false };
    } else if (p.type === "thread_rolled_back") {
      return { type: "workflow_event", data: codexRecord(recordType, p, { num_turns: p.num_turns ?? null }), storedAsItem: false };
    }
  }
  return { type: "workflow_event", data: codexRecord(recordType, p), storedAsItem: false };
}

/** §2.4.6: a checkpoint, then one Event per replacement item. range and source_event_count are set when placed. */
function compactedDrafts(thread: string, line: RolloutLine, record: JsonObject, p: JsonObject, state: RunningState): LineDraft[] {
  const rh = Array.isArray(p.replacement_history) ? (p.replacement_history as unknown[]) : null;
  const stored = rh === null ? record : { ...record, payload: { ...p, replacement_history: rh.length } };
  const checkpoint: LineDraft = {
    type: "history_compaction",
    part: "compacted",
    data: {
      strategy: "codex_compacted",
      trigger: "codex",
      summary: typeof p.message === "string" ? p.message : "",
      range: null,
      source_event_count: null,
      replacement_item_count: rh === null ? null : rh.length,
      limitations: CODEX_COMPACTION_LIMITATIONS,
      codex: lineCodex(thread, line, stored, "compacted"),
    },
  };
  const out = [checkpoint];
  (rh ?? []).forEach((raw, j) => {
    const item = isJsonObject(raw) ? raw : {};
    const { type, data } = itemDraft(item, state, "response_item");
    const part = `rh${j}`;
    const codex: JsonObject = { thread, line: line.n, part };
    if (type !== "reasoning") codex.item = raw;
    out.push({ type, data: { ...data, codex }, part });
  });
  return out;
}

/** Does this Event carry a Codex item (a response_item line Event or a replacement part)? §3.3. */
export function carriesItem(data: JsonObject): boolean {
  const codex = data.codex;
  if (!isJsonObject(codex) || codex.synthetic !== undefined || codex.skipped === true) return false;
  if (typeof codex.part === "string") return codex.part !== "compacted";
  return isJsonObject(codex.record) && codex.record.type === "response_item";
}
