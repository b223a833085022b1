// archive.md §4 "tools look like their job": what a tool call is, read from its name and arguments, for
// the page's script and `pixir export md` alike (so both show an Edit as the same diff). Pure functions of
// an Event's data, no Node modules: this file runs in the browser too. Names are matched without case, so
// Claude's `Edit`, pi's `edit` and Codex's `apply_patch` each find their rule.
import { structuredPatch } from "diff";

type Data = Record<string, unknown>;

const isObject = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** One file of a diff: its path and its lines, each starting with ` `, `+`, `-` or `@@` (a hunk's start). */
export interface DiffFile {
  path: string;
  /** "add", "delete", "update" (apply_patch's words; an Edit is an update, a Write an add). */
  action: "add" | "delete" | "update";
  lines: string[];
  added: number;
  removed: number;
}

export interface ChecklistItem {
  text: string;
  /** `pending`, `in_progress`, `completed` (others shown as written). */
  status: string;
}

export type ToolView =
  | { kind: "diff"; files: DiffFile[] }
  /** `prompt` is `$` for a command, `stdin ›` for input written to a running one. */
  | { kind: "command"; command: string; prompt: string; description?: string }
  | { kind: "lookup"; verb: string; target: string }
  | { kind: "checklist"; items: ChecklistItem[] }
  | { kind: "subagent"; agent: string | null; description: string; prompt: string }
  | { kind: "generic" };

const EDIT_TOOLS = new Set(["edit", "multiedit", "write", "notebookedit", "apply_patch", "str_replace_based_edit_tool"]);
const COMMAND_TOOLS = new Set(["bash", "exec_command", "local_shell", "shell", "container.exec", "shell_command"]);
const LOOKUP_TOOLS: Record<string, string> = {
  read: "Read",
  glob: "Glob",
  grep: "Grep",
  ls: "LS",
  find: "Find",
  web_search: "Search the web",
  websearch: "Search the web",
  webfetch: "Fetch",
  web_fetch: "Fetch",
  tool_search: "Search tools",
  toolsearch: "Search tools",
};
const CHECKLIST_TOOLS = new Set(["todowrite", "update_plan"]);
const SUBAGENT_TOOLS = new Set(["task", "agent"]);

/** More changed lines than this between two texts are shown as all removed, then all added. */
const DIFF_MAX_EDIT = 4000;

/** The view of a tool call `name(args)`. */
export function toolView(name: string, args: unknown): ToolView {
  const tool = name.toLowerCase();
  if (EDIT_TOOLS.has(tool)) {
    const files = editFiles(tool, args);
    if (files.length > 0) return { kind: "diff", files };
  }
  if (COMMAND_TOOLS.has(tool)) {
    const command = commandOf(args);
    // Claude's Bash says what the command is for: shown beside it.
    const description = isObject(args) ? str(args.description) : null;
    if (command !== null) return description === null ? { kind: "command", command, prompt: "$" } : { kind: "command", command, prompt: "$", description };
  }
  if (tool === "write_stdin" && isObject(args)) {
    // Codex writes to (or, with no characters, waits on) a command it started earlier.
    const chars = str(args.chars) ?? "";
    return { kind: "command", command: chars === "" ? `(waiting on session ${String(args.session_id ?? "?")})` : chars, prompt: "stdin ›" };
  }
  if (LOOKUP_TOOLS[tool] !== undefined) {
    const target = lookupTarget(args);
    if (target !== null) return { kind: "lookup", verb: LOOKUP_TOOLS[tool]!, target };
  }
  if (CHECKLIST_TOOLS.has(tool)) {
    const items = checklistItems(args);
    if (items !== null) return { kind: "checklist", items };
  }
  if (SUBAGENT_TOOLS.has(tool) && isObject(args)) {
    return { kind: "subagent", agent: str(args.subagent_type), description: str(args.description) ?? "", prompt: str(args.prompt) ?? "" };
  }
  return { kind: "generic" };
}

// ---------------------------------------------------------------------------------------------------
// Edits.

function editFiles(tool: string, args: unknown): DiffFile[] {
  if (tool === "apply_patch") {
    const patch = typeof args === "string" ? args : isObject(args) ? (str(args.input) ?? str(args.patch)) : null;
    return patch === null ? [] : applyPatchFiles(patch);
  }
  if (!isObject(args)) return [];
  const path = str(args.file_path) ?? str(args.path) ?? str(args.filePath) ?? str(args.notebook_path) ?? "";
  if (tool === "write") {
    const content = str(args.content);
    return content === null ? [] : [fileDiff(path, "add", "", content)];
  }
  if (tool === "notebookedit") {
    const source = str(args.new_source);
    return source === null ? [] : [fileDiff(path, args.edit_mode === "delete" ? "delete" : "update", "", source)];
  }
  const edits = Array.isArray(args.edits) ? args.edits.filter(isObject) : [args];
  const pairs = edits
    .map((e) => ({ old: str(e.old_string) ?? str(e.oldText) ?? str(e.old_str), new: str(e.new_string) ?? str(e.newText) ?? str(e.new_str) }))
    .filter((p): p is { old: string; new: string } => p.old !== null && p.new !== null);
  if (pairs.length === 0) return [];
  const parts = pairs.map((p) => fileDiff(path, "update", p.old, p.new));
  return [{ path, action: "update", lines: parts.flatMap((p) => p.lines), added: sum(parts, "added"), removed: sum(parts, "removed") }];
}

const sum = (files: DiffFile[], key: "added" | "removed"): number => files.reduce((n, f) => n + f[key], 0);

/** A unified diff of `before` → `after` (the `diff` package), hunks only: a snippet's line numbers mean nothing. */
export function fileDiff(path: string, action: DiffFile["action"], before: string, after: string): DiffFile {
  const lines: string[] = [];
  const patch = structuredPatch(path, path, withNewline(before), withNewline(after), undefined, undefined, { context: 3, maxEditLength: DIFF_MAX_EDIT });
  if (patch === undefined) {
    // Too different to diff quickly: all of it out, all of it in.
    lines.push("@@", ...splitLines(before).map((l) => `-${l}`), ...splitLines(after).map((l) => `+${l}`));
  } else {
    for (const hunk of patch.hunks) lines.push("@@", ...hunk.lines.filter((l) => !l.startsWith("\\")));
  }
  return { path, action, lines, ...countChanges(lines) };
}

const withNewline = (text: string): string => (text === "" || text.endsWith("\n") ? text : `${text}\n`);
const splitLines = (text: string): string[] => (text === "" ? [] : withNewline(text).slice(0, -1).split("\n"));

function countChanges(lines: string[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const l of lines) {
    if (l.startsWith("+")) added++;
    else if (l.startsWith("-")) removed++;
  }
  return { added, removed };
}

const PATCH_FILE = /^\*\*\* (Add|Delete|Update) File: (.*)$/;

/** Codex's `apply_patch` envelope (`*** Begin Patch` … `*** End Patch`): its files, already in diff lines. */
export function applyPatchFiles(patch: string): DiffFile[] {
  const files: DiffFile[] = [];
  let current: DiffFile | null = null;
  const close = () => {
    // A blank line before the next header is the patch's own spacing, not a line of context.
    while (current !== null && current.lines.at(-1) === " ") current.lines.pop();
    if (current !== null) files.push({ ...current, ...countChanges(current.lines) });
    current = null;
  };
  for (const line of patch.replace(/\r\n?/g, "\n").split("\n")) {
    const head = PATCH_FILE.exec(line);
    if (head !== null) {
      close();
      const action = head[1]!.toLowerCase() as DiffFile["action"];
      current = { path: head[2]!.trim(), action, lines: action === "update" ? [] : ["@@"], added: 0, removed: 0 };
      continue;
    }
    if (current === null || line.startsWith("*** End Patch") || line.startsWith("*** End of File")) continue;
    if (line.startsWith("*** Move to: ")) current.path = `${current.path} → ${line.slice(13).trim()}`;
    else if (line.startsWith("@@")) current.lines.push("@@");
    else if (/^[ +-]/.test(line)) current.lines.push(line);
    else if (line === "") current.lines.push(" ");
  }
  close();
  return files;
}

// ---------------------------------------------------------------------------------------------------
// Commands, look-ups, checklists.

function commandOf(args: unknown): string | null {
  if (typeof args === "string") return args;
  if (!isObject(args)) return null;
  for (const key of ["command", "cmd"]) {
    const v = args[key];
    if (typeof v === "string") return v;
    // `["bash", "-lc", "npm test"]`: the script the shell runs is what was meant.
    if (Array.isArray(v) && v.every((s) => typeof s === "string")) {
      const words = v as string[];
      return words.length === 3 && /(^|\/)(ba|z)?sh$/.test(words[0]!) && /^-l?c$/.test(words[1]!) ? words[2]! : words.join(" ");
    }
  }
  return null;
}

function lookupTarget(args: unknown): string | null {
  if (typeof args === "string") return args;
  if (!isObject(args)) return null;
  const target = str(args.file_path) ?? str(args.path) ?? str(args.pattern) ?? str(args.query) ?? str(args.url) ?? str(args.notebook_path);
  if (target === null) return null;
  // A search names where it looked when it says so: `Grep parseLine in src/`.
  const where = target !== args.path ? str(args.path) : null;
  return where === null ? target : `${target} in ${where}`;
}

function checklistItems(args: unknown): ChecklistItem[] | null {
  if (!isObject(args)) return null;
  const list = Array.isArray(args.todos) ? args.todos : Array.isArray(args.plan) ? args.plan : null;
  if (list === null) return null;
  return list.filter(isObject).map((item) => ({ text: str(item.content) ?? str(item.step) ?? str(item.text) ?? "", status: str(item.status) ?? "pending" }));
}

/** A checklist item's box: done, in progress, to do. */
export const checkMark = (status: string): string => (status === "completed" ? "☑" : status === "in_progress" ? "◐" : "☐");

// ---------------------------------------------------------------------------------------------------
// Results.

/** Codex's exec output starts with a header (`Chunk ID`, `Wall time`, exit code, `Output:`): the output is what follows. */
const EXEC_HEADER = /^Chunk ID: [^\n]*\nWall time: [^\n]*\n(?:Process exited with code (-?\d+)\n|Process running with session ID [^\n]*\n)?(?:Original token count: [^\n]*\n)?Output:\n/;

/** A command's output as a person reads it, and its exit code when the output says it. */
export function commandOutput(text: string): { output: string; exitCode: number | null } {
  const head = EXEC_HEADER.exec(text);
  if (head === null) {
    const json = /^Exit code: (-?\d+)\n/.exec(text);
    return json === null ? { output: text, exitCode: null } : { output: text.slice(json[0].length), exitCode: Number(json[1]) };
  }
  return { output: text.slice(head[0].length), exitCode: head[1] === undefined ? null : Number(head[1]) };
}

/** How many lines a look-up's output has: the files a Glob found, the lines a Read showed. */
export function resultLines(text: string): number {
  const trimmed = text.replace(/\n+$/, "");
  return trimmed === "" ? 0 : trimmed.split("\n").length;
}
