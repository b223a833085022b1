// context-and-compaction.md §1: the model-visible History of a Session, by Pixir's provider fold. The
// latest checkpoint stands in for everything through its range.to_seq; summaries reach the model as user
// text; lineage, usage, failure, workflow and partial-answer Events are not shown. Two streaming passes
// over the one loader's History (find the checkpoint, then emit), so memory stays flat.
import { abortable } from "../lines/abortable.js";
import { isJsonObject, lineDataText, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { notFoundError, openHistory, type History, type HistoryItem } from "../store/loader.js";
import { logPath } from "../store/paths.js";
import { CONTEXT_FORMATS, type ContextFormat } from "../event/vocabulary.js";
import { renderBranchSummaryText, renderCheckpointText } from "../summary/summary.js";

export { CONTEXT_FORMATS, type ContextFormat };
export type ContextRole = "user" | "assistant" | "tool";

/** One item a model would see: rendered user text (`text`), or an Event's data unchanged. */
export interface ContextItem {
  seq: number | null;
  id: string | null;
  type: PixirEvent["type"];
  role: ContextRole;
  /** Rendered items (checkpoint, branch summary) only. */
  text?: string;
  /** Other items: the Event's data, and its stored bytes where known. */
  data?: JsonObject;
  dataText?: string;
}

const TERMINAL_SUBAGENT_EVENTS = new Set(["finished", "failed", "cancelled", "timed_out"]);

/** §1.1 step 2: a checkpoint is valid when `data.range.to_seq` is an integer. */
export function checkpointToSeq(e: PixirEvent): number | null {
  if (e.type !== "history_compaction" || !isJsonObject(e.data.range)) return null;
  const to = e.data.range.to_seq;
  return typeof to === "number" && Number.isInteger(to) ? to : null;
}

/** §1.1 step 4: the role an Event is shown with, or null when it is omitted. */
export function contextRole(e: PixirEvent): ContextRole | null {
  switch (e.type) {
    case "history_compaction":
    case "branch_summary":
    case "user_message":
    case "skill_activation":
      return "user";
    case "assistant_message":
      return isJsonObject(e.data.metadata) && e.data.metadata.partial === true ? null : "assistant";
    case "reasoning":
    case "tool_call":
      return "assistant";
    case "tool_result":
    case "permission_decision":
      return "tool";
    case "subagent_event":
      return typeof e.data.event === "string" && TERMINAL_SUBAGENT_EVENTS.has(e.data.event) ? "user" : null;
    default:
      // session_fork, provider_usage, turn_failed, workflow_event
      return null;
  }
}

/**
 * §1.1 step 2: the valid checkpoint with the greatest seq (a null seq counts as −1); on a tie, the later
 * one in History order. Memory holds that one Event only.
 */
export async function latestCheckpoint(history: History, signal?: AbortSignal): Promise<PixirEvent | null> {
  let latest: PixirEvent | null = null;
  let best = -Infinity;
  for await (const { event } of abortable(history.items(), signal)) {
    if (checkpointToSeq(event) === null) continue;
    const seq = event.seq ?? -1;
    if (seq >= best) {
      best = seq;
      latest = event;
    }
  }
  return latest;
}

/** The item of one visible Event, or null when the mapping omits it. */
export function contextItemOf(item: HistoryItem): ContextItem | null {
  const e = item.event;
  const role = contextRole(e);
  if (role === null) return null;
  const base = { seq: e.seq, id: e.id, type: e.type, role };
  if (e.type === "history_compaction") return { ...base, text: renderCheckpointText(e.data) };
  if (e.type === "branch_summary") return { ...base, text: renderBranchSummaryText(e.data) };
  const dataText = item.dataText ?? (item.line ? lineDataText(item.line.bytes.toString("utf8"), e, item.line.exact) : undefined);
  return { ...base, data: e.data, dataText };
}

/** §1.1: the visible list, mapped; `[latest]` first, then what follows its range, in History order. */
export async function* contextItems(history: History, signal?: AbortSignal): AsyncGenerator<ContextItem> {
  const latest = await latestCheckpoint(history, signal);
  const cut = latest === null ? null : checkpointToSeq(latest);
  if (latest !== null) yield contextItemOf({ event: latest })!;
  for await (const item of abortable(history.items(), signal)) {
    const e = item.event;
    if (e.type === "history_compaction") continue;
    if (cut !== null && e.seq !== null && e.seq <= cut) continue;
    const mapped = contextItemOf(item);
    if (mapped !== null) yield mapped;
  }
}

/** §1.2: one item as output, in either format (each chunk complete, ending in `\n`). */
export function formatContextItem(item: ContextItem, format: ContextFormat): string {
  if (format === "ndjson") {
    const head = `{"seq":${JSON.stringify(item.seq)},"id":${JSON.stringify(item.id)},"type":${JSON.stringify(item.type)},"role":${JSON.stringify(item.role)}`;
    if (item.text !== undefined) return `${head},"text":${JSON.stringify(item.text)}}\n`;
    return `${head},"data":${item.dataText ?? JSON.stringify(item.data)}}\n`;
  }
  let body: string;
  if (item.text !== undefined) body = item.text;
  else if ((item.type === "user_message" || item.type === "assistant_message") && typeof item.data?.text === "string") body = item.data.text;
  // The data as stored, as the ndjson form gives it: a number JavaScript cannot hold (a 64-bit id, 1e400)
  // reaches the model as written, not rounded or turned into null.
  else body = item.dataText ?? JSON.stringify(item.data ?? {});
  return `[${item.seq}] ${item.role} ${item.type}\n${body}\n\n`;
}

/** The History of `pixir context <id>`; a missing Log is `not_found`. */
export function openContextHistory(ws: string, id: string): Promise<History> {
  return openHistory(ws, id, { notFound: () => notFoundError(id, ws, logPath(ws, id).rel, "pixir context") });
}
