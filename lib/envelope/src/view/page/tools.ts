// archive.md §4 "tools look like their job": the body of a tool card by what the tool did (tool-view.ts
// says what that is): an edit as a unified diff under its path, a command as `$ command` and its output,
// a look-up as one line that opens, a checklist, a subagent's task with its report as Markdown.
import { isFailedResult, toolCallSummary, toolResultText } from "../event-text.js";
import { checkMark, commandOutput, resultLines, toolView, type DiffFile, type ToolView } from "../tool-view.js";
import { el, lazyDetails, lineCount, pre } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

/** Output of more lines than this starts collapsed (view.md §1.1). */
export const OPEN_LINES = 20;
export const OPEN_CHARS = 4000;

type Data = Record<string, unknown>;

/** What a tool card shows. `result` is its result's data, if any; `subagentLink` a button to the subagent's Log. */
export interface ToolParts {
  view: ToolView;
  /** The card's title line, after the tool's name. */
  title: Array<Node | string>;
  body: Node[];
  /** The result is shown by the body (a command's output, a look-up's lines, a report): no separate output. */
  ownsResult: boolean;
}

export function toolParts(name: string, args: unknown, result: Data | null, subagentLink: () => HTMLElement | null): ToolParts {
  const view = toolView(name, args);
  switch (view.kind) {
    case "diff":
      return diffParts(view.files, result);
    case "command":
      return commandParts(view.command, view.prompt, result, view.description);
    case "lookup":
      return lookupParts(view.verb, view.target, result);
    case "checklist":
      return { view, title: [`${view.items.filter((i) => i.status === "completed").length}/${view.items.length} done`], body: [checklist(view.items), ...failure(result)], ownsResult: true };
    case "subagent":
      return subagentParts(view, result, subagentLink());
    default: {
      const summary = toolCallSummary(args);
      return { view, title: summary === "" ? [] : [el("code", { class: "tool-summary" }, summary)], body: [], ownsResult: false };
    }
  }
}

/** A result worth showing only when it failed (an edit's or a checklist's "done"). */
function failure(result: Data | null): Node[] {
  return result !== null && isFailedResult(result) ? [outputBlock(toolResultText(result), true, null)] : [];
}

function diffParts(files: DiffFile[], result: Data | null): ToolParts {
  const title = files.length === 1 ? [el("code", { class: "tool-path" }, files[0]!.path)] : [`${files.length} files`];
  const body = files.map((f) =>
    el(
      "section",
      { class: "diff-file" },
      files.length === 1 ? null : el("div", { class: "diff-path" }, el("code", null, f.path)),
      el("div", { class: "diff-stat" }, f.action === "update" ? "" : `${f.action === "add" ? "new file" : "deleted"} · `, el("span", { class: "added" }, `+${f.added}`), " ", el("span", { class: "removed" }, `−${f.removed}`)),
      diffNode(f.lines),
    ),
  );
  return { view: { kind: "diff", files }, title, body: [...body, ...failure(result)], ownsResult: true };
}

/** The lines of a diff, each coloured by what it does; hunks separated by a thin rule. */
export function diffNode(lines: string[]): HTMLElement {
  const node = el("pre", { class: "diff" });
  lines.forEach((line, k) => {
    if (line === "@@") {
      if (k > 0) node.append(el("span", { class: "hunk" }, "⋯\n"));
      return;
    }
    const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : "ctx";
    node.append(el("span", { class: cls }, `${line}\n`));
  });
  return node;
}

function commandParts(command: string, prompt: string, result: Data | null, description?: string): ToolParts {
  const first = command.split("\n")[0]!;
  const short = !command.includes("\n") && command.length <= 120;
  const title: Array<Node | string> = [el("code", { class: "tool-summary" }, `${prompt} ${short ? command : `${first.slice(0, 119)}…`}`)];
  if (description !== undefined) title.unshift(el("span", { class: "tool-description" }, description));
  // A short command is all in the title; a long one is shown whole.
  const body: Node[] = short ? [] : [pre(`${prompt} ${command}`, "command")];
  if (result !== null) {
    const { output, exitCode } = commandOutput(toolResultText(result));
    const failed = isFailedResult(result) || (exitCode !== null && exitCode !== 0);
    body.push(outputBlock(output, failed, exitCode === null ? null : `exit ${exitCode}`));
  }
  return { view: { kind: "command", command, prompt, ...(description === undefined ? {} : { description }) }, title, body, ownsResult: result !== null };
}

function lookupParts(verb: string, target: string, result: Data | null): ToolParts {
  const text = result === null ? "" : toolResultText(result);
  const n = resultLines(text);
  const failed = result !== null && isFailedResult(result);
  const count = result === null ? "" : failed ? " · failed" : ` · ${n} line${n === 1 ? "" : "s"}`;
  const line = lazyDetails(`lookup${failed ? " failed" : ""}`, [el("span", { class: "verb" }, verb), " ", el("code", { class: "tool-path" }, target), count], false, () => pre(text, "output-text"));
  return { view: { kind: "lookup", verb, target }, title: [], body: [line], ownsResult: true };
}

function checklist(items: Array<{ text: string; status: string }>): HTMLElement {
  return el("ul", { class: "checklist" }, ...items.map((item) => el("li", { class: `check ${item.status.replace(/[^a-z_]/g, "")}` }, el("span", { class: "box" }, checkMark(item.status)), " ", item.text)));
}

function subagentParts(view: Extract<ToolView, { kind: "subagent" }>, result: Data | null, link: HTMLElement | null): ToolParts {
  const title: Array<Node | string> = [el("span", { class: "tool-summary-text" }, view.description)];
  if (view.agent !== null) title.push(el("span", { class: "tag" }, view.agent));
  if (link !== null) title.push(link);
  const body: Node[] = [];
  if (view.prompt !== "") body.push(lazyDetails("prompt", ["task given"], false, () => el("div", { class: "markdown" }, renderMarkdown(view.prompt))));
  if (result !== null) {
    const report = toolResultText(result);
    const failed = isFailedResult(result);
    body.push(el("div", { class: `report markdown${failed ? " failed" : ""}` }, renderMarkdown(report)));
  }
  return { view, title, body, ownsResult: result !== null };
}

/** Output, open when short, else folded with its line count. */
export function outputBlock(text: string, failed: boolean, note: string | null): HTMLElement {
  const lines = lineCount(text);
  if (lines === 0) return el("div", { class: `tool-output no-output${failed ? " failed" : ""}` }, el("span", { class: failed ? "status failed" : "status ok" }, failed ? "failed" : "ok"), ` · no output${note === null ? "" : ` · ${note}`}`);
  const label = [el("span", { class: failed ? "status failed" : "status ok" }, failed ? "failed" : "ok"), ` output · ${lines} line${lines === 1 ? "" : "s"}${note === null ? "" : ` · ${note}`}`];
  return el("section", { class: `tool-output${failed ? " failed" : ""}` }, lazyDetails("output", label, lines <= OPEN_LINES && text.length <= OPEN_CHARS, () => pre(text, "output-text")));
}
