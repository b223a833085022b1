// archive.md §4 "tools look like their job", on the real fixtures: every real Edit/MultiEdit/Write and
// Codex apply_patch is a diff whose lines are the edit's own (checked against the source records, not
// against the diff library), commands and look-ups and checklists are read from their arguments, and
// `pixir export md --family` renders the same way.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { applyPatchFiles, commandOutput, toolView, type DiffFile } from "../../lib/envelope/src/view/tool-view.js";
import { allFixtureFiles, CLAUDE_FIXTURES } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";
import { cpSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { run, tempDir } from "../support/cli.js";

type Json = Record<string, unknown>;

/** Every tool_use block of the Claude fixtures: [name, input]. */
function claudeToolUses(): Array<{ name: string; input: Json; file: string }> {
  const out: Array<{ name: string; input: Json; file: string }> = [];
  for (const file of allFixtureFiles()) {
    for (const line of readFileSync(path.join(CLAUDE_FIXTURES, file), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      let record: Json;
      try {
        record = JSON.parse(line) as Json;
      } catch {
        continue;
      }
      const content = (record.message as Json | undefined)?.content;
      if (!Array.isArray(content)) continue;
      for (const b of content as Json[]) if (b?.type === "tool_use" && typeof b.name === "string") out.push({ name: b.name, input: (b.input ?? {}) as Json, file });
    }
  }
  return out;
}

/** Every custom/function tool call of the Codex fixtures in the repository. */
function codexCalls(): Array<{ name: string; input: unknown }> {
  const out: Array<{ name: string; input: unknown }> = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (name.endsWith(".jsonl"))
        for (const line of readFileSync(abs, "utf8").split("\n")) {
          if (!line.includes("_call")) continue;
          const p = (JSON.parse(line) as Json).payload as Json | undefined;
          if (p?.type === "custom_tool_call") out.push({ name: String(p.name), input: p.input });
          if (p?.type === "function_call") out.push({ name: String(p.name), input: JSON.parse(String(p.arguments)) });
        }
    }
  };
  walk(CODEX_FIXTURES_DIR);
  return out;
}

const lines = (text: string): string[] => (text === "" ? [] : text.replace(/\n$/, "").split("\n"));

/** The lines a hunk keeps from one side (context and that side's changes), without the marks. */
function side(file: DiffFile, keep: "+" | "-"): string[][] {
  const hunks: string[][] = [];
  for (const l of file.lines) {
    if (l === "@@") hunks.push([]);
    else if (l[0] === " " || l[0] === keep) hunks.at(-1)!.push(l.slice(1));
  }
  return hunks;
}

/** `part` occurs in `whole` as a run of consecutive lines. */
function isRun(part: string[], whole: string[]): boolean {
  if (part.length === 0) return true;
  for (let i = 0; i + part.length <= whole.length; i++) if (part.every((l, k) => whole[i + k] === l)) return true;
  return false;
}

describe("tool views of real tool calls", () => {
  const uses = claudeToolUses();

  it("shows every real Edit and MultiEdit as a diff whose hunks are runs of the old and new text", () => {
    const edits = uses.filter((u) => u.name === "Edit" || u.name === "MultiEdit");
    expect(edits.length).toBeGreaterThan(50);
    for (const u of edits) {
      const view = toolView(u.name, u.input);
      expect(view.kind, u.file).toBe("diff");
      if (view.kind !== "diff") continue;
      const file = view.files[0]!;
      expect(file.path).toBe(u.input.file_path);
      const pairs = u.name === "Edit" ? [u.input] : (u.input.edits as Json[]);
      const olds = pairs.flatMap((p) => lines(String(p.old_string)));
      const news = pairs.flatMap((p) => lines(String(p.new_string)));
      // Every hunk is a stretch of the old text seen from the left and of the new text from the right.
      for (const hunk of side(file, "-")) expect(isRun(hunk, olds) || pairs.length > 1, u.file).toBe(true);
      for (const hunk of side(file, "+")) expect(isRun(hunk, news) || pairs.length > 1, u.file).toBe(true);
      // Nothing is added that the new text lacks, nothing removed that the old text lacks.
      for (const l of file.lines.filter((x) => x[0] === "+")) expect(news).toContain(l.slice(1));
      for (const l of file.lines.filter((x) => x[0] === "-")) expect(olds).toContain(l.slice(1));
      if (pairs.every((p) => p.old_string !== p.new_string)) expect(file.added + file.removed).toBeGreaterThan(0);
    }
  });

  it("shows a real Write as a new file of all its lines", () => {
    const writes = uses.filter((u) => u.name === "Write");
    expect(writes.length).toBeGreaterThan(10);
    for (const u of writes) {
      const view = toolView(u.name, u.input);
      if (view.kind !== "diff") throw new Error(`${u.file}: Write is ${view.kind}`);
      expect(view.files[0]!.action).toBe("add");
      expect(view.files[0]!.lines.filter((l) => l !== "@@").map((l) => l.slice(1))).toEqual(lines(String(u.input.content)));
    }
  });

  it("reads commands, look-ups, checklists and subagent tasks from their arguments", () => {
    for (const u of uses.filter((x) => x.name === "Bash")) {
      const description = typeof u.input.description === "string" ? { description: u.input.description } : {};
      expect(toolView("Bash", u.input)).toEqual({ kind: "command", command: u.input.command, prompt: "$", ...description });
    }
    for (const u of uses.filter((x) => x.name === "Read")) expect(toolView("Read", u.input)).toMatchObject({ kind: "lookup", verb: "Read", target: u.input.file_path });
    for (const u of uses.filter((x) => x.name === "TodoWrite")) {
      const view = toolView("TodoWrite", u.input);
      expect(view).toMatchObject({ kind: "checklist" });
      if (view.kind === "checklist") expect(view.items.map((i) => i.text)).toEqual((u.input.todos as Json[]).map((t) => t.content));
    }
    for (const u of uses.filter((x) => x.name === "Task" || x.name === "Agent")) expect(toolView(u.name, u.input)).toMatchObject({ kind: "subagent", description: u.input.description ?? "" });
  });

  it("shows every real Codex apply_patch as the files it names, with its own + and - lines", () => {
    const patches = codexCalls().filter((c) => c.name === "apply_patch");
    expect(patches.length).toBeGreaterThan(0);
    for (const c of patches) {
      const text = typeof c.input === "string" ? c.input : String((c.input as Json).input);
      const view = toolView("apply_patch", c.input);
      if (view.kind !== "diff") throw new Error("apply_patch is not a diff");
      const named = [...text.matchAll(/^\*\*\* (?:Add|Delete|Update) File: (.*)$/gm)].map((m) => m[1]!.trim());
      expect(view.files.map((f) => f.path.split(" → ")[0])).toEqual(named);
      const changed = text.split("\n").filter((l) => /^[+-]/.test(l) && !l.startsWith("***"));
      expect(view.files.flatMap((f) => f.lines.filter((l) => l[0] === "+" || l[0] === "-"))).toEqual(changed);
    }
  });

  it("reads Codex exec commands and strips the exec header off their output", () => {
    const execs = codexCalls().filter((c) => c.name === "exec_command");
    expect(execs.length).toBeGreaterThan(0);
    for (const c of execs) expect(toolView("exec_command", c.input)).toEqual({ kind: "command", command: (c.input as Json).cmd, prompt: "$" });
    expect(commandOutput("Chunk ID: a1\nWall time: 0.1 seconds\nProcess exited with code 2\nOriginal token count: 3\nOutput:\nboom\n")).toEqual({ output: "boom\n", exitCode: 2 });
    expect(commandOutput("plain")).toEqual({ output: "plain", exitCode: null });
  });

  it("parses apply_patch moves and deletions", () => {
    const files = applyPatchFiles("*** Begin Patch\n*** Update File: a.ts\n*** Move to: b.ts\n@@\n-x\n+y\n*** Delete File: c.ts\n*** Add File: d.ts\n+new\n*** End Patch\n");
    expect(files.map((f) => [f.path, f.action, f.added, f.removed])).toEqual([
      ["a.ts → b.ts", "update", 1, 1],
      ["c.ts", "delete", 0, 0],
      ["d.ts", "add", 1, 0],
    ]);
  });
});

describe("pixir export md with tools by their job", () => {
  it("writes a real Claude family as sections, edits in diff fences and commands in sh fences", () => {
    const ws = tempDir("pixir-md-family-");
    const copy = path.join(tempDir("pixir-md-src-"), "claude-code-log");
    mkdirSync(copy);
    const id = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    cpSync(path.join(CLAUDE_FIXTURES, "claude-code-log", `${id}.jsonl`), path.join(copy, `${id}.jsonl`));
    cpSync(path.join(CLAUDE_FIXTURES, "claude-code-log", id), path.join(copy, id), { recursive: true });
    expect(run("pixir", ["import", "claude", path.dirname(copy)], { cwd: ws }).code).toBe(0);
    const logs = readdirSync(path.join(ws, ".pixir", "sessions")).filter((f) => f.endsWith(".ndjson"));
    const r = run("pixir", ["export", "md", id, "--family"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    // One section per Log of the family: the session and its six subagents.
    const heading = /^## .* \(`[^`]+`, (root|fork of .*|subagent.*)\)$/;
    const sections = r.stdout.split("\n").filter((l) => heading.test(l));
    expect(sections).toHaveLength(logs.length);
    expect(sections.filter((s) => s.includes("subagent"))).toHaveLength(logs.length - 1);
    // Every Bash call of the session is a command in an sh fence.
    const bash = uses(path.join(copy, `${id}.jsonl`)).filter((u) => u.name === "Bash");
    expect(bash.length).toBeGreaterThan(0);
    for (const u of bash) expect(r.stdout).toContain(`\`\`\`sh\n$ ${u.input.command}\n`);
    // Without --family, only the named Log.
    expect(run("pixir", ["export", "md", id], { cwd: ws }).stdout.split("\n").filter((l) => heading.test(l))).toEqual([]);
  });

  it("writes a real Edit as a diff fence under its path", () => {
    const ws = tempDir("pixir-md-edit-");
    const copy = path.join(tempDir("pixir-md-src-"), "claude-code-viewer");
    mkdirSync(copy);
    const file = path.join(CLAUDE_FIXTURES, "claude-code-viewer", "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl");
    cpSync(file, path.join(copy, path.basename(file)));
    expect(run("pixir", ["import", "claude", path.dirname(copy)], { cwd: ws }).code).toBe(0);
    // The transcript's sidechains are Logs of the family: --family writes them all.
    const md = run("pixir", ["export", "md", "fe5e1c67-53e7-4862-81ae-d0e013e3270b", "--family"], { cwd: ws }).stdout;
    const edits = uses(file).filter((u) => u.name === "Edit");
    expect(edits.length).toBeGreaterThan(0);
    for (const u of edits) {
      expect(md).toContain(`--- ${u.input.file_path}\n+++ ${u.input.file_path}\n`);
      const added = String(u.input.new_string).split("\n").find((l) => !String(u.input.old_string).split("\n").includes(l) && l.trim() !== "");
      if (added !== undefined) expect(md).toContain(`\n+${added}\n`);
    }
    expect(md).toContain("```diff\n");
  });
});

/** The tool_use blocks of one Claude transcript. */
function uses(file: string): Array<{ name: string; input: Json }> {
  const out: Array<{ name: string; input: Json }> = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    const content = ((JSON.parse(line) as Json).message as Json | undefined)?.content;
    if (Array.isArray(content)) for (const b of content as Json[]) if (b?.type === "tool_use") out.push({ name: String(b.name), input: (b.input ?? {}) as Json });
  }
  return out;
}
