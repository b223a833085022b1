// view.md §2: `pixir export md`, a Log's History as Markdown for a pull request or an issue. The text of
// a message is kept as written (it is Markdown already), with HTML outside code escaped and a fence it
// leaves open closed; everything pixir puts in a code block is fenced by a run of backticks longer than
// any run inside it, so no Log can break out. The same Log gives the same bytes (no export time in it).
import { MD_TOOL_MODES, type MdToolMode } from "../event/vocabulary.js";
import type { PixirEvent } from "../event/envelope.js";
import { openHistory, type History } from "../store/loader.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { notFoundError } from "../store/loader.js";
import { isFailedResult, longestRun, messageText, oneLine, toolCallSummary, toolResultText } from "./event-text.js";
import { escapeHtml, type ViewSession } from "./html-export.js";

export { MD_TOOL_MODES, type MdToolMode };

export interface MdExportPlan {
  id: string;
  history: History;
  tools: MdToolMode;
}

export async function planMdExport(ws: string, id: string, tools: MdToolMode): Promise<MdExportPlan> {
  const p = logPath(ws, id);
  if (inspectStatePath(p) === "missing") throw notFoundError(id, ws, p.rel, "pixir export md");
  return { id, history: await openHistory(ws, id), tools };
}

export const mdSessions = (plan: MdExportPlan): ViewSession[] => [{ session_id: plan.id, event_count: plan.history.eventCount }];

/** A fenced code block that `text` cannot close: its fence is longer than any backtick run inside. */
export function fenced(text: string, info = ""): string {
  const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  const body = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  return `${fence}${info}\n${body}${fence}\n`;
}

/** An inline code span that holds `text` (one line) whatever backticks it contains. */
export function codeSpan(text: string): string {
  const ticks = "`".repeat(longestRun(text, "`") + 1);
  const pad = text.startsWith("`") || text.endsWith("`") || text === "" ? " " : "";
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Message text as written, made safe to paste: no `<` of a Log reaches the reader's page raw. Outside
 * code it becomes `&lt;`; a code span that holds one becomes `<code>` with its text as entities; fenced
 * blocks are kept as they are (their text is code), and a fence the text opens but never closes is
 * closed, so what follows the message is not swallowed into its code block. Where this reading of the
 * text and a Markdown parser's differ, the parser may show an entity as written, never run HTML.
 */
export function safeMarkdown(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let open: { ch: string; len: number } | null = null;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(escapeInline(paragraph.join("\n")));
    paragraph = [];
  };
  for (const line of lines) {
    const m = FENCE_LINE.exec(line);
    if (open !== null) {
      out.push(line);
      if (m !== null && m[1]![0] === open.ch && m[1]!.length >= open.len && m[2]!.trim() === "") open = null;
      continue;
    }
    if (m !== null && !(m[1]![0] === "`" && m[2]!.includes("`"))) {
      flush();
      out.push(line);
      open = { ch: m[1]![0]!, len: m[1]!.length };
      continue;
    }
    // A code span never crosses a blank line: each paragraph is read on its own.
    if (line.trim() === "") {
      flush();
      out.push(line);
      continue;
    }
    // A backtick run that is no fence (its info holds a backtick) stays none when a code span after it
    // is rewritten: its first backtick is escaped.
    paragraph.push(m !== null ? line.replace(/^( {0,3})`/, "$1\\`") : line);
  }
  flush();
  if (open !== null) out.push(open.ch.repeat(open.len));
  return out.join("\n");
}

/** Code as an HTML element whose every ASCII punctuation mark is an entity (so nothing in it is markup). */
function codeElement(content: string): string {
  let text = content.replace(/\n/g, " ");
  if (text.startsWith(" ") && text.endsWith(" ") && text.trim() !== "") text = text.slice(1, -1);
  return `<code>${text.replace(/[!-/:-@[-`{-~]/g, (c) => `&#${c.charCodeAt(0)};`)}</code>`;
}

/** One paragraph: `<` outside code spans → `&lt;`; a code span with a `<` → codeElement. */
function escapeInline(text: string): string {
  if (!text.includes("<")) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\" && (text[i + 1] === "<" || text[i + 1] === "`")) {
      // An escaped `<` is a plain `<`; an escaped backtick opens no code span.
      out += text[i + 1] === "<" ? "&lt;" : "\\`";
      i += 2;
      continue;
    }
    if (c === "`") {
      let n = 1;
      while (text[i + n] === "`") n++;
      const close = closingRun(text, i + n, n);
      if (close === -1) {
        out += "`".repeat(n);
        i += n;
        continue;
      }
      const content = text.slice(i + n, close);
      out += content.includes("<") ? codeElement(content) : text.slice(i, close + n);
      i = close + n;
      continue;
    }
    out += c === "<" ? "&lt;" : c;
    i++;
  }
  return out;
}

/** Where the next run of exactly `n` backticks at or after `from` starts, or -1. */
function closingRun(text: string, from: number, n: number): number {
  for (let at = text.indexOf("`", from); at !== -1; ) {
    let end = at;
    while (text[end] === "`") end++;
    if (end - at === n) return at;
    at = text.indexOf("`", end);
  }
  return -1;
}

function quote(text: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? ">" : `> ${l}`))
    .join("\n");
}

/** A name from a Log's data: as it is when it is a plain word (`share_v1`), else as a code span. */
const plainWord = (v: unknown): string => (typeof v === "string" && /^[A-Za-z0-9][\w.-]*$/.test(v) ? v : codeSpan(oneLine(String(v))));

/** A seq from a Log's data as text: a number, or "…" for anything else (never the Log's own text). */
const seqText = (v: unknown): string => (typeof v === "number" && Number.isFinite(v) ? String(v) : "…");

interface ToolEntry {
  call: PixirEvent;
  result: PixirEvent | null;
}

type Role = "user" | "assistant" | null;

/** The Markdown, in pieces (one per Event or turn heading). */
export async function* markdownChunks(plan: MdExportPlan): AsyncGenerator<string> {
  const { tools } = plan;
  yield `# Session ${plan.id}\n`;
  let role: Role = null;
  const pending: ToolEntry[] = [];
  const open = new Map<string, ToolEntry>();
  const section = function* (next: Role): Generator<string> {
    if (next !== null && next !== role) yield `\n**${next}**\n`;
    role = next;
  };
  const flushTools = function* (): Generator<string> {
    for (const entry of pending) {
      yield* section("assistant");
      yield toolBlock(entry.call, entry.result, tools);
    }
    pending.length = 0;
    open.clear();
  };
  for await (const item of plan.history.items()) {
    const e = item.event;
    const d = e.data;
    if (e.type === "tool_call" || e.type === "tool_result") {
      if (tools === "none") continue;
      const callId = typeof d.call_id === "string" ? d.call_id : null;
      if (e.type === "tool_call") {
        const entry = { call: e, result: null };
        pending.push(entry);
        if (callId !== null && !open.has(callId)) open.set(callId, entry);
        continue;
      }
      const entry = callId === null ? undefined : open.get(callId);
      if (entry !== undefined) {
        entry.result = e;
        open.delete(callId!);
        if (pending.every((p) => p.result !== null)) yield* flushTools();
        continue;
      }
      yield* flushTools();
      yield* section("assistant");
      yield orphanResultBlock(e, tools);
      continue;
    }
    if (e.type === "session_fork" && e.seq === 0) {
      yield `\n_Forked from ${codeSpan(oneLine(String(d.parent_session_id)))} at seq ${seqText(d.forked_to_seq)} (${plainWord(d.strategy)})._\n`;
      continue;
    }
    if (e.type === "user_message" || e.type === "assistant_message") {
      const text = messageText(d);
      if (text.trim() === "") continue;
      yield* flushTools();
      yield* section(e.type === "user_message" ? "user" : "assistant");
      yield `\n${safeMarkdown(text)}\n`;
      continue;
    }
    if (e.type === "branch_summary" || e.type === "history_compaction") {
      yield* flushTools();
      role = null;
      const r = (d.range ?? {}) as Record<string, unknown>;
      const label = e.type === "branch_summary" ? "branch summary" : "checkpoint";
      const range = typeof d.range === "object" && d.range !== null ? ` (seq ${seqText(r.from_seq)}–${seqText(r.to_seq)})` : "";
      yield `\n${quote(`**${label}**${range}\n\n${safeMarkdown(typeof d.summary === "string" ? d.summary : "")}`)}\n`;
    }
    // reasoning is left out (view.md §2), and so are the Events that are neither talk nor tools.
  }
  yield* flushTools();
}

/** A call's name, summary and status, each on one line: a line break in a title would end its block. */
function toolTitle(call: PixirEvent | null, result: PixirEvent | null): { name: string; summary: string; status: string } {
  const name = oneLine(String(call?.data.name ?? result?.data.tool_name ?? "tool"));
  const summary = call === null ? oneLine(`result of ${String(result?.data.call_id ?? "a call")}`) : toolCallSummary(call.data.args);
  const status = result === null ? "no result" : isFailedResult(result.data) ? "failed" : "";
  return { name, summary, status };
}

function toolBlock(call: PixirEvent, result: PixirEvent | null, tools: MdToolMode): string {
  const { name, summary, status } = toolTitle(call, result);
  if (tools === "summary") return `\n- tool: ${codeSpan(name)}${summary === "" ? "" : ` ${codeSpan(summary)}`}${status === "" ? "" : ` (${status})`}\n`;
  const title = `tool: ${escapeHtml(name)}${summary === "" ? "" : ` ${escapeHtml(summary)}`}${status === "" ? "" : ` (${status})`}`;
  const parts = [`\n<details><summary>${title}</summary>\n\n**arguments**\n\n${fenced(JSON.stringify(call.data.args ?? null, null, 2), "json")}`];
  if (result !== null) parts.push(`\n**output**\n\n${fenced(toolResultText(result.data))}`);
  parts.push("\n</details>\n");
  return parts.join("");
}

function orphanResultBlock(result: PixirEvent, tools: MdToolMode): string {
  const { name, summary, status } = toolTitle(null, result);
  if (tools === "summary") return `\n- tool result: ${codeSpan(name)} ${codeSpan(summary)}${status === "" ? "" : ` (${status})`}\n`;
  const title = `tool result: ${escapeHtml(name)} ${escapeHtml(summary)}${status === "" ? "" : ` (${status})`}`;
  return `\n<details><summary>${title}</summary>\n\n${fenced(toolResultText(result.data))}\n</details>\n`;
}
