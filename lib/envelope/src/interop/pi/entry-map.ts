// pi-interop.md §2 and §4 step 3: one pi entry ⇄ its Events. Both directions live here so that the
// mapping and its inverse are read side by side: every pi key either maps to a data key whose presence
// mirrors it, or is kept verbatim in data.pi (extra, message_extra, fields, block_extra, usage).
import { isJsonObject, type CanonicalType, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import type { PiFileEntry } from "./format.js";
import { externalizeImages, internalizeImages, type ImageLoader, type ImageSink } from "./images.js";

/** An Event before the importer gives it an id, a seq and a session. */
export interface EventDraft {
  type: CanonicalType;
  /** `data.pi.part`, or null for an entry that maps to one Event. */
  part: string | null;
  data: JsonObject;
}

export interface MapOptions {
  /** Where image payloads go (Session Resources). */
  images: ImageSink;
  /** The id the assistant_message Event of an entry will get (`data.message_id`). */
  messageId(entryId: string): string;
}

const BASE_KEYS = ["type", "id", "parentId", "timestamp"];

/** pi's own key order per entry type and message role; only a different order is recorded. */
const ENTRY_ORDER: Record<string, string[]> = {
  message: [...BASE_KEYS, "message"],
  compaction: [...BASE_KEYS, "summary", "firstKeptEntryId", "tokensBefore", "details", "fromHook"],
  branch_summary: [...BASE_KEYS, "fromId", "summary", "details", "fromHook"],
  custom: ["type", "customType", "data", "id", "parentId", "timestamp"],
  custom_message: ["type", "customType", "content", "display", "details", "id", "parentId", "timestamp"],
  model_change: [...BASE_KEYS, "provider", "modelId"],
  thinking_level_change: [...BASE_KEYS, "thinkingLevel"],
  label: [...BASE_KEYS, "targetId", "label"],
  session_info: [...BASE_KEYS, "name"],
};
const MESSAGE_ORDER: Record<string, string[]> = {
  user: ["role", "content", "timestamp"],
  assistant: ["role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"],
  toolResult: ["role", "toolCallId", "toolName", "content", "details", "isError", "timestamp"],
  bashExecution: ["role", "command", "output", "exitCode", "cancelled", "truncated", "fullOutputPath", "timestamp", "excludeFromContext"],
  custom: ["role", "customType", "content", "display", "details", "timestamp"],
};
const TOOL_CALL_ORDER = ["type", "id", "name", "arguments"];

/** The keys of a compaction or branch_summary entry, in pi's order, each with its data key (`pi.`: a data.pi key). */
const SUMMARY_KEYS: Record<"compaction" | "branch_summary", Array<[string, string]>> = {
  compaction: [["summary", "summary"], ["firstKeptEntryId", "pi.first_kept_entry_id"], ["tokensBefore", "tokens_before"], ["details", "details"], ["fromHook", "from_hook"]],
  branch_summary: [["fromId", "pi.from_id"], ["summary", "summary"], ["details", "details"], ["fromHook", "from_hook"]],
};

const has = (o: JsonObject, k: string): boolean => Object.hasOwn(o, k);

/** Keys in the default order first, then the others in their own order. */
function predictedOrder(keys: string[], defaults: readonly string[]): string[] {
  const set = new Set(keys);
  const known = new Set(defaults);
  return [...defaults.filter((k) => set.has(k)), ...keys.filter((k) => !known.has(k))];
}

/** The actual key order when it is not the predicted one (so that the export can restore it). */
function unusualOrder(obj: JsonObject, defaults: readonly string[]): string[] | undefined {
  const keys = Object.keys(obj);
  const predicted = predictedOrder(keys, defaults);
  return predicted.every((k, i) => k === keys[i]) ? undefined : keys;
}

function reorder(obj: JsonObject, order: unknown, defaults: readonly string[]): JsonObject {
  const keys = Array.isArray(order) && order.every((k) => typeof k === "string") ? (order as string[]) : predictedOrder(Object.keys(obj), defaults);
  const pairs: Array<[string, unknown]> = [];
  for (const k of keys) if (has(obj, k)) pairs.push([k, obj[k]]);
  for (const k of Object.keys(obj)) if (!keys.includes(k)) pairs.push([k, obj[k]]);
  return Object.fromEntries(pairs);
}

/** The keys of `obj` outside `mapped`, verbatim, or undefined when there are none. */
function unmapped(obj: JsonObject, mapped: readonly string[]): JsonObject | undefined {
  const pairs = Object.entries(obj).filter(([k]) => !mapped.includes(k));
  return pairs.length > 0 ? Object.fromEntries(pairs) : undefined;
}

/** Build an object from [key, value] pairs, leaving out pairs whose value is undefined. */
function obj(pairs: Array<[string, unknown]>): JsonObject {
  return Object.fromEntries(pairs.filter(([, v]) => v !== undefined));
}

/** Copy `from[key]` to `[to, value]` only when the key is present (presence mirrors presence). */
function keep(from: JsonObject, key: string, to: string): [string, unknown] {
  return [to, has(from, key) ? from[key] : undefined];
}

/** The text blocks of a content value joined with `\n`, or the string itself. */
export function joinText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const b of content) if (isJsonObject(b) && b.type === "text" && typeof b.text === "string") parts.push(b.text);
  return parts.join("\n");
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function piBase(fe: PiFileEntry, part: string | null): JsonObject {
  const e = fe.entry;
  return obj([["entry_id", fe.id], keep(e, "parentId", "parent_id"), keep(e, "timestamp", "entry_ts"), ["part", part ?? undefined]]);
}

function withPi(data: JsonObject, pi: JsonObject): JsonObject {
  return { ...data, pi };
}

/** Content with images moved to Session Resources, plus the descriptors for `data.resources`. */
function contentOf(message: JsonObject, options: MapOptions): { content: [string, unknown]; resources: [string, unknown] } {
  if (!has(message, "content")) return { content: ["content", undefined], resources: ["resources", undefined] };
  const { content, resources } = externalizeImages(message.content, options.images);
  return { content: ["content", content], resources: ["resources", resources.length > 0 ? resources : undefined] };
}

/** pi-interop.md §2: the Events of one entry, in order. */
export function entryToDrafts(fe: PiFileEntry, options: MapOptions): EventDraft[] {
  const e = fe.entry;
  const entryOrder = unusualOrder(e, ENTRY_ORDER[fe.type] ?? BASE_KEYS);
  switch (fe.type) {
    case "message": {
      const m = e.message;
      if (!isJsonObject(m)) break;
      const extra = unmapped(e, [...BASE_KEYS, "message"]);
      const role = m.role;
      const common = (mapped: string[]) => ({
        extra,
        message_extra: unmapped(m, mapped),
        key_order: entryOrder,
        message_key_order: unusualOrder(m, MESSAGE_ORDER[role as string] ?? []),
      });
      if (role === "user") return [userDraft(fe, m, options, common(MESSAGE_ORDER.user!))];
      if (role === "custom") return [customRoleDraft(fe, m, options, common(MESSAGE_ORDER.custom!))];
      if (role === "assistant") return assistantDrafts(fe, m, options, common);
      if (role === "toolResult") return [toolResultDraft(fe, m, options, common(MESSAGE_ORDER.toolResult!))];
      if (role === "bashExecution") return bashDrafts(fe, m, common(MESSAGE_ORDER.bashExecution!));
      break;
    }
    case "custom_message": {
      const data = customData(e, options, []);
      const pi = obj([
        ...Object.entries(piBase(fe, null)),
        ["entry_type", "custom_message"],
        ["extra", unmapped(e, [...BASE_KEYS, "customType", "content", "display", "details"])],
        ["key_order", entryOrder],
      ]);
      return [{ type: "user_message", part: null, data: withPi(data, pi) }];
    }
    case "compaction":
    case "branch_summary": {
      const keys = SUMMARY_KEYS[fe.type];
      // A compaction's range, source_event_count and first_kept_event_id are set once seqs are known (§2.3);
      // a branch summary's parent_session_id and branch_point_event_id once the Logs are planned.
      const data = obj([["strategy", `pi_${fe.type}`], ...keys.filter(([, to]) => !to.startsWith("pi.")).map(([k, to]) => keep(e, k, to))]);
      const pi = obj([
        ...Object.entries(piBase(fe, null)),
        ...keys.filter(([, to]) => to.startsWith("pi.")).map(([k, to]) => keep(e, k, to.slice(3))),
        ["extra", unmapped(e, ENTRY_ORDER[fe.type]!)],
        ["key_order", entryOrder],
      ]);
      return [{ type: fe.type === "compaction" ? "history_compaction" : "branch_summary", part: null, data: withPi(data, pi) }];
    }
  }
  // model_change, thinking_level_change, label, session_info, custom, unknown types and roles.
  const pi = obj([...Object.entries(piBase(fe, null)), ["fields", unmapped(e, BASE_KEYS) ?? {}], ["key_order", entryOrder]]);
  return [{ type: "workflow_event", part: null, data: { event: "pi_entry", entry_type: fe.type, pi } }];
}

interface Common {
  extra: JsonObject | undefined;
  message_extra: JsonObject | undefined;
  key_order: string[] | undefined;
  message_key_order: string[] | undefined;
}

const commonPairs = (c: Common): Array<[string, unknown]> => Object.entries(c);

function userDraft(fe: PiFileEntry, m: JsonObject, options: MapOptions, c: Common): EventDraft {
  const { content, resources } = contentOf(m, options);
  const data = obj([["text", joinText(m.content)], content, ["origin", "user"], keep(m, "timestamp", "message_ts"), resources]);
  return { type: "user_message", part: null, data: withPi(data, obj([...Object.entries(piBase(fe, null)), ...commonPairs(c)])) };
}

/** The data of a custom message: an entry of its own, or a message with role custom (`more`: its timestamp). */
function customData(m: JsonObject, options: MapOptions, more: Array<[string, unknown]>): JsonObject {
  const { content, resources } = contentOf(m, options);
  return obj([["text", joinText(m.content)], content, ["origin", "extension"], keep(m, "customType", "custom_type"), keep(m, "display", "display"), keep(m, "details", "details"), ...more, resources]);
}

function customRoleDraft(fe: PiFileEntry, m: JsonObject, options: MapOptions, c: Common): EventDraft {
  const data = customData(m, options, [keep(m, "timestamp", "message_ts")]);
  const pi = obj([
    ...Object.entries(piBase(fe, null)),
    ["role", "custom"],
    ["original_role", fe.originalRole],
    ...commonPairs(c),
  ]);
  return { type: "user_message", part: null, data: withPi(data, pi) };
}

function toolResultDraft(fe: PiFileEntry, m: JsonObject, options: MapOptions, c: Common): EventDraft {
  const { content, resources } = contentOf(m, options);
  const data = obj([
    keep(m, "toolCallId", "call_id"),
    keep(m, "toolName", "tool_name"),
    ["ok", m.isError !== true],
    ["output", joinText(m.content)],
    content,
    keep(m, "isError", "is_error"),
    keep(m, "details", "details"),
    keep(m, "timestamp", "message_ts"),
    resources,
  ]);
  return { type: "tool_result", part: null, data: withPi(data, obj([...Object.entries(piBase(fe, null)), ...commonPairs(c)])) };
}

function bashDrafts(fe: PiFileEntry, m: JsonObject, c: Common): EventDraft[] {
  const callId = `pi-bash:${fe.id}`;
  const call = obj([
    ["call_id", callId],
    ["name", "bash"],
    ["args", obj([keep(m, "command", "command")])],
    ["initiator", "user"],
  ]);
  const result = obj([
    ["call_id", callId],
    ["tool_name", "bash"],
    ["ok", m.exitCode === 0 && m.cancelled !== true],
    keep(m, "output", "output"),
    keep(m, "exitCode", "exit_code"),
    keep(m, "cancelled", "cancelled"),
    keep(m, "truncated", "truncated"),
    keep(m, "fullOutputPath", "full_output_path"),
    keep(m, "excludeFromContext", "exclude_from_context"),
    keep(m, "timestamp", "message_ts"),
  ]);
  return [
    { type: "tool_call", part: "bash_call", data: withPi(call, obj([...Object.entries(piBase(fe, "bash_call")), ["role", "bashExecution"], ...commonPairs(c)])) },
    { type: "tool_result", part: "bash_result", data: withPi(result, obj([...Object.entries(piBase(fe, "bash_result")), ["role", "bashExecution"]])) },
  ];
}

function assistantDrafts(fe: PiFileEntry, m: JsonObject, options: MapOptions, common: (mapped: string[]) => Common): EventDraft[] {
  const usageMapped = isJsonObject(m.usage);
  const mapped = MESSAGE_ORDER.assistant!.filter((k) => k !== "usage" || usageMapped);
  const c = common(mapped);
  const messageId = options.messageId(fe.id);
  const model = keep(m, "model", "model");
  const reasoning: EventDraft[] = [];
  const calls: EventDraft[] = [];
  let content: unknown = has(m, "content") ? m.content : undefined;
  let blockOrder: Array<string | null> | undefined;
  if (Array.isArray(m.content)) {
    const other: unknown[] = [];
    blockOrder = [];
    m.content.forEach((b, i) => {
      const type = isJsonObject(b) && typeof b.type === "string" ? b.type : null;
      blockOrder!.push(type);
      if (isJsonObject(b) && type === "thinking") {
        const data = obj([["item", b], model, ["dialect", "pi"], ["message_id", messageId]]);
        reasoning.push({ type: "reasoning", part: `think${i}`, data: withPi(data, piBase(fe, `think${i}`)) });
      } else if (isJsonObject(b) && type === "toolCall") {
        const data = obj([keep(b, "id", "call_id"), keep(b, "name", "name"), keep(b, "arguments", "args"), ["message_id", messageId]]);
        const pi = obj([
          ...Object.entries(piBase(fe, `call${i}`)),
          ["block_extra", unmapped(b, TOOL_CALL_ORDER)],
          ["block_keys", unusualOrder(b, TOOL_CALL_ORDER)],
        ]);
        calls.push({ type: "tool_call", part: `call${i}`, data: withPi(data, pi) });
      } else other.push(b);
    });
    content = other;
  }
  const msgData = obj([
    ["text", joinText(m.content)],
    ["content", content],
    keep(m, "stopReason", "stop_reason"),
    keep(m, "errorMessage", "error_message"),
    keep(m, "provider", "provider"),
    model,
    keep(m, "api", "api"),
    keep(m, "timestamp", "message_ts"),
    ["message_id", messageId],
  ]);
  const msg: EventDraft = { type: "assistant_message", part: "msg", data: withPi(msgData, obj([...Object.entries(piBase(fe, "msg")), ["block_order", blockOrder]])) };
  // The entry-level leftovers ride on the first Event of the entry.
  const first = reasoning[0] ?? msg;
  first.data.pi = obj([...Object.entries(first.data.pi as JsonObject), ...commonPairs(c)]);
  const drafts = [...reasoning, msg, ...calls];
  if (usageMapped) {
    const u = m.usage as JsonObject;
    const cost = isJsonObject(u.cost) ? u.cost : {};
    const total = typeof u.totalTokens === "number" ? u.totalTokens : num(u.input) + num(u.output) + num(u.cacheRead) + num(u.cacheWrite);
    const data = obj([
      keep(m, "provider", "provider"),
      model,
      keep(m, "api", "api"),
      ["input", num(u.input)],
      ["output", num(u.output)],
      ["cache_read", num(u.cacheRead)],
      ["cache_write", num(u.cacheWrite)],
      ["total_tokens", total],
      ["cost", { input: num(cost.input), output: num(cost.output), cache_read: num(cost.cacheRead), cache_write: num(cost.cacheWrite), total: num(cost.total) }],
      ["message_id", messageId],
    ]);
    drafts.push({ type: "provider_usage", part: "usage", data: withPi(data, obj([...Object.entries(piBase(fe, "usage")), ["usage", u]])) });
  }
  return drafts;
}

// ---------------------------------------------------------------------------------------------------
// The inverse (§4 step 3): Events that share data.pi.entry_id back to the one entry they came from.

const piOf = (e: PixirEvent): JsonObject => (isJsonObject(e.data.pi) ? e.data.pi : {});

/** An imported Event: one whose data.pi names an entry. */
export function isImportedEvent(e: PixirEvent): boolean {
  return typeof piOf(e).entry_id === "string";
}

export function entryIdOf(e: PixirEvent): string | null {
  const id = piOf(e).entry_id;
  return typeof id === "string" ? id : null;
}

function baseFromPi(pi: JsonObject, type: unknown): Array<[string, unknown]> {
  return [["type", type], ["id", pi.entry_id], keep(pi, "parent_id", "parentId"), keep(pi, "entry_ts", "timestamp")];
}

function spread(o: unknown): Array<[string, unknown]> {
  return isJsonObject(o) ? Object.entries(o) : [];
}

function finishEntry(type: string, pairs: Array<[string, unknown]>, pi: JsonObject): JsonObject {
  return reorder(obj(pairs), pi.key_order, ENTRY_ORDER[type] ?? BASE_KEYS);
}

function messageEntry(pi: JsonObject, message: JsonObject): JsonObject {
  const role = message.role as string;
  const m = reorder(message, pi.message_key_order, MESSAGE_ORDER[role] ?? []);
  return finishEntry("message", [...baseFromPi(pi, "message"), ["message", m], ...spread(pi.extra)], pi);
}

function restoredContent(d: JsonObject, load: ImageLoader): [string, unknown] {
  return ["content", has(d, "content") ? internalizeImages(d.content, d.resources, load) : undefined];
}

/** The pi entry that the Events of one imported entry (in seq order) came from. */
export function rebuildEntry(events: PixirEvent[], load: ImageLoader): JsonObject {
  const first = events[0]!;
  const pi = piOf(first);
  const d = first.data;
  switch (first.type) {
    case "workflow_event":
      return finishEntry(String(d.entry_type), [...baseFromPi(pi, d.entry_type), ...spread(pi.fields)], pi);
    case "history_compaction":
    case "branch_summary": {
      const type = first.type === "history_compaction" ? "compaction" : "branch_summary";
      const keys = SUMMARY_KEYS[type].map(([k, to]) => (to.startsWith("pi.") ? keep(pi, to.slice(3), k) : keep(d, to, k)));
      return finishEntry(type, [...baseFromPi(pi, type), ...keys, ...spread(pi.extra)], pi);
    }
    case "user_message": {
      const custom = (): Array<[string, unknown]> => [keep(d, "custom_type", "customType"), restoredContent(d, load), keep(d, "display", "display"), keep(d, "details", "details")];
      if (pi.entry_type === "custom_message") return finishEntry("custom_message", [...baseFromPi(pi, "custom_message"), ...custom(), ...spread(pi.extra)], pi);
      if (pi.role === "custom") return messageEntry(pi, obj([["role", "custom"], ...custom(), keep(d, "message_ts", "timestamp"), ...spread(pi.message_extra)]));
      return messageEntry(pi, obj([["role", "user"], restoredContent(d, load), keep(d, "message_ts", "timestamp"), ...spread(pi.message_extra)]));
    }
    case "tool_result":
      return messageEntry(
        pi,
        obj([
          ["role", "toolResult"],
          keep(d, "call_id", "toolCallId"),
          keep(d, "tool_name", "toolName"),
          restoredContent(d, load),
          keep(d, "details", "details"),
          keep(d, "is_error", "isError"),
          keep(d, "message_ts", "timestamp"),
          ...spread(pi.message_extra),
        ]),
      );
    case "tool_call":
      if (pi.part === "bash_call") {
        const result = events.find((e) => piOf(e).part === "bash_result")?.data ?? {};
        const args = isJsonObject(d.args) ? d.args : {};
        return messageEntry(
          pi,
          obj([
            ["role", "bashExecution"],
            keep(args, "command", "command"),
            keep(result, "output", "output"),
            keep(result, "exit_code", "exitCode"),
            keep(result, "cancelled", "cancelled"),
            keep(result, "truncated", "truncated"),
            keep(result, "full_output_path", "fullOutputPath"),
            keep(result, "message_ts", "timestamp"),
            keep(result, "exclude_from_context", "excludeFromContext"),
            ...spread(pi.message_extra),
          ]),
        );
      }
      return assistantEntry(events, pi);
    default:
      return assistantEntry(events, pi);
  }
}

function assistantEntry(events: PixirEvent[], pi: JsonObject): JsonObject {
  const reasoning = events.filter((e) => e.type === "reasoning");
  const calls = events.filter((e) => e.type === "tool_call");
  const msg = events.find((e) => e.type === "assistant_message")?.data ?? {};
  const usage = events.find((e) => e.type === "provider_usage");
  const msgPi = isJsonObject(msg.pi) ? msg.pi : {};
  let content: [string, unknown] = keep(msg, "content", "content");
  if (Array.isArray(msgPi.block_order)) {
    const other = Array.isArray(msg.content) ? msg.content : [];
    let r = 0;
    let c = 0;
    let o = 0;
    const blocks: unknown[] = [];
    for (const type of msgPi.block_order) {
      if (type === "thinking") blocks.push(reasoning[r++]?.data.item);
      else if (type === "toolCall") blocks.push(toolCallBlock(calls[c++]));
      else blocks.push(other[o++]);
    }
    content = ["content", blocks];
  }
  return messageEntry(
    pi,
    obj([
      ["role", "assistant"],
      content,
      keep(msg, "api", "api"),
      keep(msg, "provider", "provider"),
      keep(msg, "model", "model"),
      ["usage", usage !== undefined ? piOf(usage).usage : undefined],
      keep(msg, "stop_reason", "stopReason"),
      keep(msg, "error_message", "errorMessage"),
      keep(msg, "message_ts", "timestamp"),
      ...spread(pi.message_extra),
    ]),
  );
}

function toolCallBlock(e: PixirEvent | undefined): JsonObject {
  if (e === undefined) return {};
  const d = e.data;
  const pi = piOf(e);
  const block = obj([["type", "toolCall"], keep(d, "call_id", "id"), keep(d, "name", "name"), keep(d, "args", "arguments"), ...spread(pi.block_extra)]);
  return reorder(block, pi.block_keys, TOOL_CALL_ORDER);
}
