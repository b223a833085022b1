// docs/gemini-opencode-interop.md §2: a Gemini message record ⇄ canonical Events. A message Gemini
// re-appends after a change becomes only the Events it adds (new thoughts, new tool calls, a result, the
// token count), provided it only grew; any other change is not an extension and the importer branches.
import { createHash } from "node:crypto";
import { isJsonObject, type CanonicalType, type JsonObject } from "../../event/envelope.js";

/** An Event before the importer gives it an id, a seq and a Log. */
export interface GeminiDraft {
  type: CanonicalType;
  /** Part name, unique within the line (`msg`, `think2`, `call:<id>`, `result:<id>`, `usage`). */
  part: string;
  data: JsonObject;
  /** The message timestamp the Event carries, when the record has one. */
  ts?: string;
}

/**
 * What the Log already shows of one message, its values as the keys they are compared by (`jsonKey`): it
 * holds none of the record, so a long session's plan keeps a few short strings per message, not its text.
 */
export interface ShownMessage {
  id: string;
  type: string;
  content: string;
  thoughts: number;
  calls: ShownCall[];
  tokens: boolean;
}

/** A tool call as shown: what was called, and its outcome (status and result) once final (else null). */
interface ShownCall {
  id: string;
  name: string;
  args: string;
  status: string | null;
  result: string | null;
}

/** Tool statuses after which Gemini sends the result to the model. */
const FINAL_STATUSES = new Set(["success", "error", "cancelled"]);

/** The text of a PartListUnion: text parts (thought parts excepted) joined, as Gemini shows them. */
export function partsText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(partsText).join("");
  if (isJsonObject(content) && typeof content.text === "string" && content.thought !== true) return content.text;
  return "";
}

/** The output text of a tool result: its text parts and each functionResponse's output or error. */
export function resultText(result: unknown): string {
  const parts = Array.isArray(result) ? result : result === undefined || result === null ? [] : [result];
  const out: string[] = [];
  for (const p of parts) {
    if (typeof p === "string") out.push(p);
    else if (isJsonObject(p) && typeof p.text === "string") out.push(p.text);
    else if (isJsonObject(p) && isJsonObject(p.functionResponse)) {
      const r = p.functionResponse.response;
      if (isJsonObject(r) && typeof r.output === "string") out.push(r.output);
      else if (isJsonObject(r) && typeof r.error === "string") out.push(r.error);
      else out.push(JSON.stringify(r ?? null));
    }
  }
  return out.join("\n");
}

interface ToolCallRecord {
  id: string;
  record: JsonObject;
}

function toolCallsOf(msg: JsonObject): ToolCallRecord[] {
  const calls = Array.isArray(msg.toolCalls) ? msg.toolCalls : [];
  return calls.filter((c): c is JsonObject => isJsonObject(c) && typeof c.id === "string").map((c) => ({ id: c.id as string, record: c }));
}

const isFinal = (c: JsonObject): boolean => typeof c.status === "string" && FINAL_STATUSES.has(c.status);
const thoughtsOf = (msg: JsonObject): unknown[] => (Array.isArray(msg.thoughts) ? msg.thoughts : []);

function thoughtText(t: unknown): string {
  if (!isJsonObject(t)) return "";
  const subject = typeof t.subject === "string" ? t.subject : "";
  const description = typeof t.description === "string" ? t.description : "";
  return subject && description ? `**${subject}** ${description}` : subject || description;
}

function callDraft(msg: JsonObject, c: ToolCallRecord): GeminiDraft {
  const r = c.record;
  return {
    type: "tool_call",
    part: `call:${c.id}`,
    ts: typeof r.timestamp === "string" ? r.timestamp : undefined,
    data: { call_id: c.id, name: typeof r.name === "string" ? r.name : "", args: isJsonObject(r.args) ? r.args : {}, message_id: msg.id as string },
  };
}

/** A call that ran a subagent (`agentId`): the tool_call, then the link `pixir tree` follows. */
function callDrafts(msg: JsonObject, c: ToolCallRecord, subagentLog: (agentId: string) => string): GeminiDraft[] {
  const out = [callDraft(msg, c)];
  const agentId = c.record.agentId;
  if (typeof agentId === "string" && agentId !== "") {
    out.push({
      type: "subagent_event",
      part: `link:${c.id}`,
      ts: out[0]!.ts,
      data: { subagent_id: agentId, child_session_id: subagentLog(agentId), event: "spawned", agent: typeof c.record.name === "string" ? c.record.name : null, call_id: c.id },
    });
  }
  return out;
}

function resultDraft(c: ToolCallRecord): GeminiDraft {
  const r = c.record;
  return {
    type: "tool_result",
    part: `result:${c.id}`,
    ts: typeof r.timestamp === "string" ? r.timestamp : undefined,
    data: { call_id: c.id, tool_name: typeof r.name === "string" ? r.name : "", ok: r.status === "success", output: resultText(r.result), status: r.status ?? null },
  };
}

/**
 * Gemini's `tokens` as provider_usage, in the keys archive/model-calls.ts reads: `input` is the prompt not
 * read from the cache (tool-use prompt tokens included), `output` includes the thought tokens (reasoning
 * is inside output, as for the other agents), so input + output + cache_read is Gemini's `total`.
 */
function usageDraft(msg: JsonObject): GeminiDraft {
  const t = msg.tokens as JsonObject;
  const n = (k: string): number => (typeof t[k] === "number" ? (t[k] as number) : 0);
  return {
    type: "provider_usage",
    part: "usage",
    data: {
      provider: "google",
      model: typeof msg.model === "string" ? msg.model : null,
      input: n("input") - n("cached") + n("tool"),
      output: n("output") + n("thoughts"),
      cache_read: n("cached"),
      cache_write: null,
      reasoning: n("thoughts"),
      total_tokens: n("total"),
      tokens: t,
    },
  };
}

/** The first copy of a message: every Event it gives. */
function fullDrafts(msg: JsonObject, subagentLog: (agentId: string) => string): GeminiDraft[] {
  const ts = typeof msg.timestamp === "string" ? msg.timestamp : undefined;
  const text = partsText(msg.content);
  if (msg.type === "user") return [{ type: "user_message", part: "msg", ts, data: { text, content: msg.content ?? null, origin: "user", message_id: msg.id as string } }];
  if (msg.type !== "gemini") {
    // info, error, warning: shown to the person, never sent to the model.
    return [{ type: "workflow_event", part: "msg", ts, data: { event: "gemini_notice", level: typeof msg.type === "string" ? msg.type : null, text, message_id: msg.id as string } }];
  }
  const out: GeminiDraft[] = thoughtsOf(msg).map((t, i) => thoughtDraft(msg, t, i));
  out.push({ type: "assistant_message", part: "msg", ts, data: { text, content: msg.content ?? null, model: typeof msg.model === "string" ? msg.model : null, message_id: msg.id as string } });
  for (const c of toolCallsOf(msg)) {
    out.push(...callDrafts(msg, c, subagentLog));
    if (isFinal(c.record)) out.push(resultDraft(c));
  }
  if (isJsonObject(msg.tokens)) out.push(usageDraft(msg));
  return out;
}

function thoughtDraft(msg: JsonObject, t: unknown, i: number): GeminiDraft {
  const ts = isJsonObject(t) && typeof t.timestamp === "string" ? t.timestamp : undefined;
  return { type: "reasoning", part: `think${i}`, ts, data: { item: (t ?? null) as JsonObject, text: thoughtText(t), model: typeof msg.model === "string" ? msg.model : null, dialect: "gemini", message_id: msg.id as string } };
}

const SHOWN = new WeakMap<JsonObject, ShownMessage>();

/** A value as JSON.stringify writes it where it stands in an array: undefined and non-finite numbers are null. */
const asJson = (v: unknown): unknown => (v === undefined || (typeof v === "number" && !Number.isFinite(v)) ? null : v);

/**
 * True when two parsed JSON values have the same JSON.stringify text (keys in the same order), found
 * without writing either: a message Gemini re-appends is compared with the one shown, and writing both
 * (a tool's output, each time) was most of a large import's garbage.
 */
export function sameJson(x: unknown, y: unknown): boolean {
  const a = asJson(x);
  const b = asJson(y);
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  for (let i = 0; i < keysA.length; i++) {
    const k = keysA[i]!;
    if (k !== keysB[i] || !sameJson((a as JsonObject)[k], (b as JsonObject)[k])) return false;
  }
  return true;
}

const sameCall = (a: ShownCall, b: ShownCall): boolean => a.id === b.id && a.name === b.name && a.args === b.args;

const sameOutcome = (a: ShownCall, b: ShownCall): boolean => a.status === b.status && a.result === b.result;

/** True when two messages show the same (an upsert that changed nothing the model sees). */
export function showsSame(a: ShownMessage, b: ShownMessage): boolean {
  if (a === b) return true;
  if (a.id !== b.id || a.type !== b.type || a.thoughts !== b.thoughts || a.tokens !== b.tokens || a.content !== b.content) return false;
  if (a.calls.length !== b.calls.length) return false;
  return a.calls.every((c, i) => sameCall(c, b.calls[i]!) && sameOutcome(c, b.calls[i]!));
}

/** A tree (an object or an array) of `next` equal to the one of `previous`: the one to keep. */
const sameTree = (previous: unknown, next: unknown): boolean => typeof previous === "object" && previous !== null && previous !== next && sameJson(previous, next);

/**
 * A new copy of a message (Gemini re-appends it whole as it grows) made to hold its previous copy's
 * content, arguments and results wherever they are equal, so the plan holds each once (the Events made
 * from the previous copy point to them). Their JSON texts are the same, so nothing written changes.
 * Call it before the new copy is compared or drafted.
 */
export function adoptEqualParts(previous: JsonObject, next: JsonObject): void {
  if (sameTree(previous.content, next.content)) next.content = previous.content;
  const before = new Map(toolCallsOf(previous).map((c) => [c.id, c.record]));
  for (const { id, record } of toolCallsOf(next)) {
    const old = before.get(id);
    if (old === undefined) continue;
    if (sameTree(old.args, record.args)) record.args = old.args;
    if (sameTree(old.result, record.result)) record.result = old.result;
  }
}

/** What the Log shows of `msg` once its Events are written (computed once per record). */
export function shownOf(msg: JsonObject): ShownMessage {
  let s = SHOWN.get(msg);
  if (s === undefined) SHOWN.set(msg, (s = computeShown(msg)));
  return s;
}

/** Texts up to this long are their own key; a longer one is keyed by its digest. */
const KEY_TEXT_MAX = 64;

/**
 * A parsed JSON value as the key it is compared by: its JSON.stringify text (undefined as null), or the
 * SHA-256 of a longer text in base64 (which ends in `=`, as no JSON text does). Equal keys are equal
 * texts, as sameJson decides for two values.
 */
export function jsonKey(value: unknown): string {
  if (typeof value !== "object" || value === null) return keyOf(value);
  // A part a re-appended copy took from the previous one (adoptEqualParts) is keyed once.
  let key = KEYS.get(value);
  if (key === undefined) KEYS.set(value, (key = keyOf(value)));
  return key;
}

/** The keys of parsed parts, which are never changed once parsed. */
const KEYS = new WeakMap<object, string>();

function keyOf(value: unknown): string {
  const text = JSON.stringify(value === undefined ? null : value) ?? "null";
  return text.length <= KEY_TEXT_MAX ? text : createHash("sha256").update(text, "utf8").digest("base64");
}

function computeShown(msg: JsonObject): ShownMessage {
  return {
    id: msg.id as string,
    type: typeof msg.type === "string" ? msg.type : "",
    content: jsonKey(msg.content),
    thoughts: thoughtsOf(msg).length,
    calls: toolCallsOf(msg).map(({ id, record: c }) => ({ id, name: jsonKey(c.name), args: jsonKey(c.args), status: isFinal(c) ? jsonKey(c.status) : null, result: isFinal(c) ? jsonKey(c.result) : null })),
    tokens: isJsonObject(msg.tokens),
  };
}

/**
 * The Events a new copy of a shown message adds, or null when it is not an extension: the type or the
 * content changed, a thought or a call went away or changed, or a result already shown changed.
 */
export function extensionDrafts(shown: ShownMessage, msg: JsonObject, subagentLog: (agentId: string) => string): GeminiDraft[] | null {
  const next = shownOf(msg);
  if (next.type !== shown.type || next.content !== shown.content || next.thoughts < shown.thoughts) return null;
  if (next.calls.length < shown.calls.length || (shown.tokens && !next.tokens)) return null;
  const calls = toolCallsOf(msg);
  const out: GeminiDraft[] = thoughtsOf(msg).slice(shown.thoughts).map((t, i) => thoughtDraft(msg, t, shown.thoughts + i));
  for (let i = 0; i < calls.length; i++) {
    const before = shown.calls[i];
    const c = calls[i]!;
    const now = next.calls[i]!;
    if (before === undefined) {
      out.push(...callDrafts(msg, c, subagentLog));
      if (now.status !== null) out.push(resultDraft(c));
      continue;
    }
    if (!sameCall(before, now)) return null;
    if (before.status !== null && !sameOutcome(before, now)) return null;
    if (before.status === null && now.status !== null) out.push(resultDraft(c));
  }
  if (!shown.tokens && next.tokens) out.push(usageDraft(msg));
  return out;
}

export { fullDrafts };
