// view.md §2 and archive.md §4: `pixir export md`, a Log's History (or with --family its whole family,
// each Log a section) as Markdown for a pull request or an issue. The text of a message is kept as written
// (it is Markdown already), with HTML outside code escaped and a fence it leaves open closed; tools are
// rendered by their job (md-tools.ts); everything pixir puts in a code block is fenced by a run of
// backticks longer than any run inside it, so no Log can break out. The same Logs give the same bytes.
import { classifyUserText, messageText, oneLine } from "../event/injected.js";
import { MD_TOOL_MODES, type MdToolMode } from "../event/vocabulary.js";
import type { PixirEvent } from "../event/envelope.js";
import { openHistory, type History } from "../store/loader.js";
import { isFailedResult, toolCallSummary, toolResultText } from "./event-text.js";
import { familyMembers } from "./family.js";
import { escapeHtml, type ViewSession } from "./html-export.js";
import { codeSpan, fenced, safeMarkdown } from "./md-safe.js";
import { quote, toolMarkdown } from "./md-tools.js";

export { MD_TOOL_MODES, type MdToolMode };
export { codeSpan, fenced, safeMarkdown };

/** One Log of the Markdown: its History, and the inherited prefix it leaves to its parent's section. */
export interface MdSection {
  id: string;
  history: History;
  /** Events 1..skip are the parent's (a fork's prefix), shown in the parent's section. */
  skip: number;
  /** The section's heading (`--family`), or null for a lone Log. */
  heading: string | null;
}

export interface MdExportPlan {
  id: string;
  tools: MdToolMode;
  sections: MdSection[];
  /** The title of the page (`# <title>`). */
  title: string;
}

/** Titles a caller knows (archive.md §1 facts), by session id. */
export type TitleOf = (id: string) => string | null;

export async function planMdExport(ws: string, id: string, tools: MdToolMode, options: { family?: boolean; maxDepth?: number; titleOf?: TitleOf } = {}): Promise<MdExportPlan> {
  const titleOf = options.titleOf ?? (() => null);
  const members = await familyMembers(ws, id, { family: options.family === true, maxDepth: options.maxDepth }, "pixir export md");
  const sections: MdSection[] = [];
  for (const m of members) {
    if (m.missing) continue;
    const history = await openHistory(m.ws, m.id);
    const inherits = m.relation === "fork" && m.parent !== null;
    const skip = inherits ? (history.share?.replayEventCount ?? forkReplayCount(history)) : 0;
    const name = titleOf(m.id) ?? m.subagent?.task ?? m.id;
    const parent = m.parent === null ? null : members[m.parent]!;
    const lineage = m.relation === "fork" && parent !== null ? `fork of ${parent.id} at seq ${m.forkedToSeq ?? "…"}` : m.relation === "subagent" ? `subagent${m.subagent?.agent ? ` ${m.subagent.agent}` : ""}` : "root";
    sections.push({ id: m.id, history, skip, heading: options.family === true ? `${oneLine(name)} (${codeSpan(m.id)}, ${lineage})` : null });
  }
  const root = members[0]!;
  const title = options.family === true ? (titleOf(root.id) ?? `Session ${root.id}`) : (titleOf(id) ?? `Session ${id}`);
  return { id, tools, sections, title };
}

function forkReplayCount(history: History): number {
  const header = history.scan.first?.event;
  const n = header?.type === "session_fork" && header.seq === 0 ? header.data.replay_event_count : 0;
  return typeof n === "number" ? n : 0;
}

export const mdSessions = (plan: MdExportPlan): ViewSession[] => plan.sections.map((s) => ({ session_id: s.id, event_count: s.history.eventCount }));

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
  yield `# ${safeMarkdown(oneLine(plan.title, 200))}\n`;
  for (const section of plan.sections) {
    if (section.heading !== null) yield `\n## ${section.heading}\n`;
    if (section.skip > 0) yield `\n_The first ${section.skip} events are the parent's, shown in its section._\n`;
    yield* sectionChunks(section, plan.tools);
  }
}

async function* sectionChunks(section: MdSection, tools: MdToolMode): AsyncGenerator<string> {
  let role: Role = null;
  const pending: ToolEntry[] = [];
  const open = new Map<string, ToolEntry>();
  const heading = function* (next: Role): Generator<string> {
    if (next !== null && next !== role) yield `\n**${next}**\n`;
    role = next;
  };
  const flushTools = function* (): Generator<string> {
    for (const entry of pending) {
      yield* heading("assistant");
      yield toolMarkdown(entry.call, entry.result, tools);
    }
    pending.length = 0;
    open.clear();
  };
  for await (const item of section.history.items()) {
    const e = item.event;
    const d = e.data;
    if (e.seq !== null && e.seq >= 1 && e.seq <= section.skip) continue;
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
      yield* heading("assistant");
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
      if (e.type === "user_message") {
        // archive.md §4: injected text is folded context, a command wrapper is the command it names.
        const c = classifyUserText(text, { isMeta: d.meta === true });
        if (c.injected !== null) {
          yield `\n<details><summary>context: ${c.injected.replace(/_/g, " ")}</summary>\n\n${fenced(text)}\n</details>\n`;
          continue;
        }
        yield* heading("user");
        yield `\n${safeMarkdown(c.commandLine ?? text)}\n`;
        continue;
      }
      yield* heading("assistant");
      yield `\n${safeMarkdown(text)}\n`;
      continue;
    }
    if (e.type === "branch_summary" || e.type === "history_compaction") {
      yield* flushTools();
      role = null;
      const r = (d.range ?? {}) as Record<string, unknown>;
      const label = e.type === "branch_summary" ? "branch summary" : "checkpoint: compacted here, the model no longer sees what is above";
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

function orphanResultBlock(result: PixirEvent, tools: MdToolMode): string {
  const { name, summary, status } = toolTitle(null, result);
  if (tools === "summary") return `\n- tool result: ${codeSpan(name)} ${codeSpan(summary)}${status === "" ? "" : ` (${status})`}\n`;
  const title = `tool result: ${escapeHtml(name)} ${escapeHtml(summary)}${status === "" ? "" : ` (${status})`}`;
  return `\n<details><summary>${title}</summary>\n\n${fenced(toolResultText(result.data))}\n</details>\n`;
}
