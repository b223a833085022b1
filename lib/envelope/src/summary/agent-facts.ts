// archive.md §5: what a branch summary reads of an agent's own tool calls and messages. summarize.md keeps
// Pixir's exact rules for Pixir's tools; an Event an importer made (it carries its Claude, Codex or pi
// source) is read by the rules of the agent that wrote it.
import { isJsonObject, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { classifyUserText } from "../event/injected.js";

export type SourceAgent = "claude" | "codex" | "pi";

/**
 * The agent whose tool or message this Event is (the key its import keeps the source record under, as
 * archive/agents.ts names them), or null for a Pixir-native Event.
 */
export function agentOfEvent(e: Pick<PixirEvent, "data">): SourceAgent | null {
  const d = e.data;
  return isJsonObject(d.claude) ? "claude" : isJsonObject(d.codex) ? "codex" : isJsonObject(d.pi) ? "pi" : null;
}

/** A file argument: one line, not empty, of a sensible length (a path, never a piece of code). */
const fileArg = (v: unknown): v is string => typeof v === "string" && v.trim() !== "" && !/[\r\n]/.test(v) && v.length <= 1024;

/** Codex `apply_patch` headers: the files a patch adds, updates, deletes or moves to. */
const PATCH_HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/gm;

function patchPaths(patch: unknown): string[] {
  if (typeof patch !== "string") return [];
  return [...patch.matchAll(PATCH_HEADER)].map((m) => m[1]!).filter(fileArg);
}

/** The patch text of a Codex tool call: `apply_patch` (its input), or a shell call whose command is `apply_patch <patch>`. */
function codexPatch(name: unknown, args: unknown): unknown {
  if (typeof args === "string") return name === "apply_patch" ? args : null;
  if (!isJsonObject(args)) return null;
  if (name === "apply_patch") return args.input ?? args.patch;
  const command = args.command;
  if (Array.isArray(command) && command[0] === "apply_patch") return command[1];
  return null;
}

/** archive.md §5 files touched: the paths an agent's tool names as its file argument, never other argument values. */
export function agentToolPaths(agent: SourceAgent, name: unknown, args: unknown): string[] {
  if (agent === "codex") return patchPaths(codexPatch(name, args));
  if (!isJsonObject(args)) return [];
  const keys = agent === "claude" ? (name === "Glob" || name === "Grep" ? ["file_path", "notebook_path", "path"] : ["file_path", "notebook_path"]) : ["path"];
  return keys.map((k) => args[k]).filter(fileArg);
}

/**
 * archive.md §5 open tasks: when this call is a Claude `TodoWrite` or a Codex `update_plan`, its unfinished
 * items as `<status>: <text>`; null for any other call (the last list seen stands).
 */
export function agentTodoList(name: unknown, args: unknown): string[] | null {
  if (!isJsonObject(args)) return null;
  const items = name === "TodoWrite" ? args.todos : name === "update_plan" ? args.plan : undefined;
  if (!Array.isArray(items)) return null;
  const open: string[] = [];
  for (const item of items) {
    if (!isJsonObject(item)) continue;
    const text = item.content ?? item.step;
    const status = typeof item.status === "string" ? item.status : "pending";
    if (typeof text !== "string" || text.trim() === "" || status === "completed") continue;
    open.push(`${status}: ${text.replace(/\s+/g, " ").trim()}`);
  }
  return open;
}

/** archive.md §5 (and §4): a user message an agent or its harness injected, which is no conversational fact. */
export function isInjectedUserMessage(e: Pick<PixirEvent, "type" | "data">): boolean {
  if (e.type !== "user_message" || typeof e.data.text !== "string") return false;
  const claude = e.data.claude;
  const record: JsonObject = isJsonObject(claude) && isJsonObject(claude.record) ? claude.record : {};
  return classifyUserText(e.data.text, { isMeta: record.isMeta === true, isCompactSummary: record.isCompactSummary === true }).injected !== null;
}
