// archive.md §4 for `pixir export md`: a tool call as Markdown by what it did, as the page shows it (the
// same tool-view.ts rules): an edit as a ```diff fence under its path, a command as ```sh, a look-up as one
// line, a checklist as task-list items, a subagent's task with its report quoted. Everything from the Log
// is fenced (a fence it cannot close), escaped in a `<summary>`, or passed through safeMarkdown.
import type { PixirEvent } from "../event/envelope.js";
import type { MdToolMode } from "../event/vocabulary.js";
import { oneLine } from "../event/injected.js";
import { isFailedResult, toolCallSummary, toolResultText } from "./event-text.js";
import { escapeHtml } from "./html-export.js";
import { codeSpan, fenced, safeMarkdown } from "./md-safe.js";
import { checkMark, commandOutput, resultLines, toolView, type DiffFile } from "./tool-view.js";


const summaryTag = (text: string, status: string): string => `<summary>${escapeHtml(text)}${status === "" ? "" : ` (${status})`}</summary>`;

function statusOf(result: PixirEvent | null): string {
  return result === null ? "no result" : isFailedResult(result.data) ? "failed" : "";
}

/** The unified diff text of a file: `--- path` / `+++ path` then its hunks. */
export function diffText(file: DiffFile): string {
  const from = file.action === "add" ? "/dev/null" : file.path;
  const to = file.action === "delete" ? "/dev/null" : file.path;
  return [`--- ${from}`, `+++ ${to}`, ...file.lines.map((l) => (l === "@@" ? "@@ @@" : l))].join("\n");
}

/** One tool call (with its result) as Markdown. */
export function toolMarkdown(call: PixirEvent, result: PixirEvent | null, tools: MdToolMode): string {
  const name = oneLine(String(call.data.name ?? "tool"));
  const status = statusOf(result);
  const output = result === null ? null : toolResultText(result.data);
  const view = toolView(name, call.data.args);
  if (tools === "summary") {
    const summary = toolCallSummary(call.data.args);
    return `\n- tool: ${codeSpan(name)}${summary === "" ? "" : ` ${codeSpan(summary)}`}${status === "" ? "" : ` (${status})`}\n`;
  }
  switch (view.kind) {
    case "diff": {
      const stat = view.files.map((f) => `${oneLine(f.path)} +${f.added} −${f.removed}`).join(", ");
      const failure = status === "failed" && output !== null ? `\n**output**\n\n${fenced(output)}` : "";
      return `\n<details open>${summaryTag(`${name}: ${stat}`, status)}\n\n${fenced(view.files.map(diffText).join("\n"), "diff")}${failure}\n</details>\n`;
    }
    case "command": {
      const out = output === null ? null : commandOutput(output);
      const exit = out?.exitCode === null || out === null ? "" : ` · exit ${out.exitCode}`;
      const body = out === null ? "" : `\n${fenced(out.output)}`;
      return `\n<details>${summaryTag(`${view.prompt} ${oneLine(view.command)}${exit}`, status)}\n\n${fenced(`${view.prompt} ${view.command}`, "sh")}${body}\n</details>\n`;
    }
    case "lookup": {
      const n = output === null ? 0 : resultLines(output);
      return `\n<details>${summaryTag(`${view.verb} ${oneLine(view.target)} · ${n} line${n === 1 ? "" : "s"}`, status)}\n\n${fenced(output ?? "")}\n</details>\n`;
    }
    case "checklist":
      return `\n**${escapeHtml(name)}**\n\n${view.items.map((i) => `- ${checkMark(i.status)} ${safeMarkdown(oneLine(i.text, 400))}`).join("\n")}\n`;
    case "subagent": {
      const title = `${name}: ${oneLine(view.description)}${view.agent === null ? "" : ` (${view.agent})`}`;
      const prompt = view.prompt === "" ? "" : `\n**task given**\n\n${quote(safeMarkdown(view.prompt))}\n`;
      const report = output === null ? "" : `\n**report**\n\n${quote(safeMarkdown(output))}\n`;
      return `\n<details>${summaryTag(title, status)}\n${prompt}${report}\n</details>\n`;
    }
    default: {
      const summary = toolCallSummary(call.data.args);
      const parts = [`\n<details>${summaryTag(`tool: ${name}${summary === "" ? "" : ` ${summary}`}`, status)}\n\n**arguments**\n\n${fenced(JSON.stringify(call.data.args ?? null, null, 2), "json")}`];
      if (output !== null) parts.push(`\n**output**\n\n${fenced(output)}`);
      parts.push("\n</details>\n");
      return parts.join("");
    }
  }
}

export function quote(text: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? ">" : `> ${l}`))
    .join("\n");
}
