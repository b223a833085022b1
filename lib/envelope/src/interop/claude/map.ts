// claude-interop.md §2.1–§2.3: one Claude record ⇄ its Events. The importer maps a record to Event
// drafts (type, part, data without `claude`); `recordLineOf` gives the exact line back from an Event.
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { wellFormed } from "../../event/text.js";
import type { CanonicalType } from "../../event/vocabulary.js";
import type { Facts } from "./record-facts.js";
import { carriesCompactSummary, type ClaudeRecord } from "./transcript.js";

export interface ClaudeEventDraft {
  type: CanonicalType;
  /** §2.3 `part`. */
  part: string;
  data: JsonObject;
  /** A compact summary: the planner fills `range` and `source_event_count` once the seq is known. */
  compaction?: true;
}

/** The `text` blocks of a content array joined with `\n`. */
export function blocksText(content: unknown[]): string {
  return wellFormed(
    content
      .filter((b): b is JsonObject => isJsonObject(b) && b.type === "text" && typeof b.text === "string")
      .map((b) => b.text as string)
      .join("\n"),
  );
}

/** §3.8: the text of a compact summary (or of an inline group's first record, §3.6). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return wellFormed(content);
  if (Array.isArray(content)) return blocksText(content);
  return "";
}

/** §2.1 tool_result `output`. */
function resultOutput(content: unknown): string {
  if (typeof content === "string") return wellFormed(content);
  if (Array.isArray(content)) return blocksText(content);
  return "";
}

/** §2.1: the subtype of a workflow_event record. */
export function recordSubtype(v: JsonObject): string | null {
  if (typeof v.subtype === "string") return v.subtype;
  if (isJsonObject(v.attachment) && typeof v.attachment.type === "string") return v.attachment.type;
  if (isJsonObject(v.data) && typeof v.data.type === "string") return v.data.type;
  if (typeof v.operation === "string") return v.operation;
  return null;
}

export interface MapContext {
  /** `name` of the tool_use block with this id on an earlier line. */
  toolName(callId: string): string | null;
}

/** §2.1 for a path `user` record. */
function userDrafts(v: JsonObject, ctx: MapContext): ClaudeEventDraft[] {
  const meta = v.isMeta === true ? { meta: true } : {};
  const msg = isJsonObject(v.message) ? v.message : {};
  const content = msg.content;
  if (carriesCompactSummary(v)) {
    return [{ type: "history_compaction", part: "summary", data: { strategy: "claude_compaction", summary: contentText(content) }, compaction: true }];
  }
  if (typeof content === "string") return [{ type: "user_message", part: "text", data: { text: wellFormed(content), ...meta } }];
  if (!Array.isArray(content) || content.length === 0) return [{ type: "user_message", part: "msg", data: { text: "" } }];
  const out: ClaudeEventDraft[] = [];
  let run: { first: number; blocks: unknown[] } | null = null;
  const flush = () => {
    if (run === null) return;
    const images = run.blocks.filter((b) => isJsonObject(b) && b.type === "image").length;
    out.push({ type: "user_message", part: `b${run.first}`, data: { text: blocksText(run.blocks), ...(images > 0 ? { images } : {}), ...meta } });
    run = null;
  };
  content.forEach((b, i) => {
    if (isJsonObject(b) && b.type === "tool_result") {
      flush();
      const callId = typeof b.tool_use_id === "string" ? b.tool_use_id : "";
      const name = ctx.toolName(callId);
      out.push({
        type: "tool_result",
        part: `b${i}`,
        data: { call_id: wellFormed(callId), ...(name !== null ? { tool_name: wellFormed(name) } : {}), ok: b.is_error !== true, output: resultOutput(b.content) },
      });
    } else if (run === null) run = { first: i, blocks: [b] };
    else run.blocks.push(b);
  });
  flush();
  return out;
}

/** §2.1 for a path `assistant` record. */
function assistantDrafts(v: JsonObject): ClaudeEventDraft[] {
  const msg = isJsonObject(v.message) ? v.message : {};
  const common: JsonObject = { message_id: typeof msg.id === "string" ? wellFormed(msg.id) : null, model: typeof msg.model === "string" ? wellFormed(msg.model) : null };
  const stop = msg.stop_reason !== null && msg.stop_reason !== undefined ? { stop_reason: msg.stop_reason } : {};
  const apiError = v.isApiErrorMessage === true ? { api_error: true } : {};
  const content = msg.content;
  if (!Array.isArray(content) || content.length === 0) {
    return [{ type: "assistant_message", part: "msg", data: { ...common, text: typeof content === "string" ? wellFormed(content) : "", ...stop, ...apiError } }];
  }
  return content.map((b, i): ClaudeEventDraft => {
    const part = `b${i}`;
    const t = isJsonObject(b) ? b.type : undefined;
    if (isJsonObject(b) && (t === "thinking" || t === "redacted_thinking")) return { type: "reasoning", part, data: { ...common, item: b, dialect: "claude" } };
    if (isJsonObject(b) && t === "text") return { type: "assistant_message", part, data: { ...common, text: typeof b.text === "string" ? wellFormed(b.text) : "", ...stop, ...apiError } };
    if (isJsonObject(b) && (t === "tool_use" || t === "server_tool_use")) {
      return {
        type: "tool_call",
        part,
        data: {
          ...common,
          call_id: typeof b.id === "string" ? wellFormed(b.id) : "",
          name: typeof b.name === "string" ? wellFormed(b.name) : "",
          args: isJsonObject(b.input) ? b.input : {},
          ...(t === "server_tool_use" ? { server: true } : {}),
        },
      };
    }
    if (isJsonObject(b) && typeof t === "string" && t.endsWith("_tool_result")) {
      return { type: "tool_result", part, data: { ...common, call_id: typeof b.tool_use_id === "string" ? wellFormed(b.tool_use_id) : "", ok: true, output: "", server: true } };
    }
    return { type: "assistant_message", part, data: { ...common, text: "", block_type: typeof t === "string" ? wellFormed(t) : null, ...stop, ...apiError } };
  });
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** §2.2: the provider_usage of an assistant message record, when it carries usage. */
export function usageDraft(v: JsonObject): ClaudeEventDraft | null {
  const msg = isJsonObject(v.message) ? v.message : null;
  if (msg === null || !isJsonObject(msg.usage) || msg.model === "<synthetic>") return null;
  const u = msg.usage;
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  const read = count(u.cache_read_input_tokens);
  const write = count(u.cache_creation_input_tokens);
  return {
    type: "provider_usage",
    part: "usage",
    data: {
      provider: "anthropic",
      model: typeof msg.model === "string" ? wellFormed(msg.model) : null,
      message_id: typeof msg.id === "string" ? wellFormed(msg.id) : null,
      request_id: typeof v.requestId === "string" ? wellFormed(v.requestId) : null,
      input,
      output,
      cache_read: read,
      cache_write: write,
      total_tokens: input + output + read + write,
    },
  };
}

/** §2.2: the dedup key of an assistant record's usage (null: always emits). */
export function usageKey(v: JsonObject): string | null {
  const msg = isJsonObject(v.message) ? v.message : null;
  if (msg === null || typeof msg.id !== "string") return null;
  return JSON.stringify([msg.id, typeof v.requestId === "string" ? v.requestId : null]);
}

/** usageKey of a record from its facts. */
export const usageKeyOf = (f: Facts): string | null => (f.messageId === null ? null : JSON.stringify([f.messageId, f.requestId]));

/** §2.1: the Events of a record, without `data.claude`. `path` is true for a path record. */
export function recordDrafts(rec: ClaudeRecord, v: JsonObject | null, path: boolean, ctx: MapContext): ClaudeEventDraft[] {
  if (v === null) return [{ type: "workflow_event", part: "rec", data: { event: "claude_record", record_type: null, subtype: null } }];
  if (path && rec.type === "user") return userDrafts(v, ctx);
  if (path && rec.type === "assistant") return assistantDrafts(v);
  return [{ type: "workflow_event", part: "rec", data: { event: "claude_record", record_type: wellFormed(rec.type!), subtype: subtypeOf(v) } }];
}

const subtypeOf = (v: JsonObject): string | null => {
  const s = recordSubtype(v);
  return s === null ? null : wellFormed(s);
};

/** §2.3: the `claude` fields that reproduce the record (on its first Event), given its value and text. */
export function reproduction(rec: ClaudeRecord, value: JsonObject | null, text: string | null): JsonObject {
  if (rec.raw !== null) return { raw_base64: rec.raw.toString("base64") };
  if (rec.canonical) return { record: value };
  return { raw_line: text };
}

/** §5.2: the exact line an Event with `data.claude.record|raw_line|raw_base64` stands for (no `\n`). */
export function recordLineOf(claude: JsonObject): Buffer | null {
  if (typeof claude.raw_base64 === "string") return Buffer.from(claude.raw_base64, "base64");
  if (typeof claude.raw_line === "string") return Buffer.from(claude.raw_line, "utf8");
  if ("record" in claude) return Buffer.from(JSON.stringify(claude.record), "utf8");
  return null;
}

/** §4.3 step 4: the line a held record Event carries, or null. */
export function heldLine(e: PixirEvent): number | null {
  const c = e.data.claude;
  if (!isJsonObject(c) || typeof c.line !== "number") return null;
  return "record" in c || typeof c.raw_line === "string" || typeof c.raw_base64 === "string" ? c.line : null;
}
