// archive.md §2 (`--file`) and §5 (files touched): the paths a tool call names as its file argument. Claude
// Read/Edit/Write/MultiEdit/NotebookEdit (`file_path`, `notebook_path`), Glob/Grep/LS (`path`), a Codex
// `apply_patch` (its `*** Add|Update|Delete File:` and `*** Move to:` headers), pi read/edit/write (`path`).
// Other argument values (a command line, a pattern) are never paths here.

/** Argument keys that hold a file the tool works on. */
const FILE_KEYS = ["file_path", "notebook_path", "path", "filePath"];
const PATCH_HEADER = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The file paths of an apply_patch body, each once, in order. */
export function patchPaths(patch: string): string[] {
  const out: string[] = [];
  for (const m of patch.matchAll(PATCH_HEADER)) {
    const p = m[1].trim();
    if (p !== "" && !out.includes(p)) out.push(p);
  }
  return out;
}

/** The paths tool call `name` names as its file arguments, each once. */
export function toolFilePaths(name: string, args: unknown): string[] {
  if (typeof args === "string") return name === "apply_patch" || args.startsWith("*** Begin Patch") ? patchPaths(args) : [];
  if (!isObject(args)) return [];
  const out: string[] = [];
  for (const key of FILE_KEYS) {
    const v = args[key];
    if (typeof v === "string" && v.trim() !== "" && !out.includes(v)) out.push(v);
  }
  // Codex: apply_patch as a custom tool (`input`) or a shell call whose argv carries the patch.
  const patch = typeof args.input === "string" ? args.input : typeof args.patch === "string" ? args.patch : null;
  if (patch !== null && patch.includes("*** Begin Patch")) for (const p of patchPaths(patch)) if (!out.includes(p)) out.push(p);
  // ...or whose command line, as argv or as one string (`exec_command` `cmd: "apply_patch <<'EOF' …"`), carries it.
  const argv = Array.isArray(args.command) ? args.command : Array.isArray(args.cmd) ? args.cmd : [args.cmd, args.command];
  for (const a of argv) if (typeof a === "string" && a.includes("*** Begin Patch")) for (const p of patchPaths(a)) if (!out.includes(p)) out.push(p);
  return out;
}
