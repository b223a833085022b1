// archive.md §2 "What is searched": the text of user and assistant messages, reasoning, tool names,
// arguments and outputs, branch summaries and checkpoints, as one document per Event. Provenance records
// (`workflow_event`), usage, lineage and the raw source records an import keeps (`data.claude`,
// `data.codex`, `data.pi`) are never part of it.
import { toolFilePaths } from "../../event/file-args.js";
import { blockText, messageText } from "../../event/injected.js";

type Data = Record<string, unknown>;

/** What the index keeps of one Event. */
export interface Searchable {
  text: string;
  /** `user`, `assistant`, `tool` or `system` (summaries and checkpoints). */
  role: string;
  /** The tool's name for a call or a result, else null. */
  tool: string | null;
  /** The files a tool call names as its file argument (`--file`). */
  paths: string[];
}

/** Keys of `data` that hold an importer's copy of its source record, or bookkeeping: never searched. */
const SOURCE_KEYS = new Set(["claude", "codex", "pi", "gemini", "opencode"]);

const isObject = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every string and number inside a value (keys of objects and flags like `replace_all: false` are left out), in order. */
function stringsOf(v: unknown, out: string[], depth = 0): void {
  if (typeof v === "string") out.push(v);
  else if (typeof v === "number") out.push(String(v));
  else if (depth > 32) return;
  else if (Array.isArray(v)) for (const x of v) stringsOf(x, out, depth + 1);
  else if (isObject(v)) for (const [k, x] of Object.entries(v)) if (!SOURCE_KEYS.has(k)) stringsOf(x, out, depth + 1);
}

/** A reasoning item's readable text: thinking, summary or content parts, else `data.text`. */
function reasoningText(d: Data): string {
  const item = d.item;
  if (typeof item === "string") return item;
  if (isObject(item)) {
    if (typeof item.thinking === "string") return item.thinking;
    if (typeof item.text === "string") return item.text;
    const parts = [blockText(item.summary) ?? "", blockText(item.content) ?? ""].filter((s) => s !== "");
    if (parts.length > 0) return parts.join("\n");
  }
  return typeof d.text === "string" ? d.text : "";
}

function joined(v: unknown): string {
  const out: string[] = [];
  stringsOf(v, out);
  return out.join("\n");
}

/** The searchable document of an Event, or null when the type is not searched or it holds no text. */
export function searchableOf(type: string, d: Data): Searchable | null {
  const s = documentOf(type, d);
  return s === null || s.text.trim() === "" ? null : s;
}

function documentOf(type: string, d: Data): Searchable | null {
  switch (type) {
    case "user_message":
      return { text: messageText(d), role: "user", tool: null, paths: [] };
    case "assistant_message":
      return { text: messageText(d), role: "assistant", tool: null, paths: [] };
    case "reasoning":
      return { text: reasoningText(d), role: "assistant", tool: null, paths: [] };
    case "tool_call": {
      const name = typeof d.name === "string" ? d.name : "";
      return { text: `${name}\n${joined(d.args)}`, role: "assistant", tool: name || null, paths: toolFilePaths(name, d.args) };
    }
    case "tool_result": {
      const name = typeof d.tool_name === "string" ? d.tool_name : null;
      const body = d.output !== undefined && d.output !== null ? joined(d.output) : joined(d.error);
      return { text: body, role: "tool", tool: name, paths: [] };
    }
    case "branch_summary":
    case "history_compaction":
      return { text: typeof d.summary === "string" ? d.summary : joined(d.summary), role: "system", tool: null, paths: [] };
    default:
      return null;
  }
}

/** The Event types that can give a document (`--type` accepts these). */
export const SEARCHED_TYPES = ["user_message", "assistant_message", "reasoning", "tool_call", "tool_result", "branch_summary", "history_compaction"] as const;
