// archive.md §5: branch summaries of forks of real agent transcripts. What each tool call names as its file
// argument, and the last task list, are read here from the source files themselves, not from pixir.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, jsonRecords as records } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES, sessionFixtures } from "../support/claude.js";
import { CODEX_FIXTURES_DIR, codexFixtures } from "../support/codex.js";


/** Claude: `file_path`, `notebook_path`, and Glob/Grep `path` of every tool_use block in the file. */
function claudeNamedPaths(file: string): Set<string> {
  const out = new Set<string>();
  for (const r of records(file)) {
    const content = r?.message?.content;
    if (!Array.isArray(content)) continue;
    for (const b of content) {
      if (b?.type !== "tool_use" || typeof b.input !== "object" || b.input === null) continue;
      for (const k of ["file_path", "notebook_path", ...(b.name === "Glob" || b.name === "Grep" ? ["path"] : [])]) if (typeof b.input[k] === "string") out.add(b.input[k]);
    }
  }
  return out;
}

/** Codex: the `*** Add/Update/Delete File:` and `*** Move to:` headers of every apply_patch in the rollout. */
function codexNamedPaths(file: string): Set<string> {
  const out = new Set<string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.includes("apply_patch")) continue;
    const text = JSON.parse(line) as any;
    const p = text.payload ?? {};
    const patch = p.type === "custom_tool_call" ? p.input : p.type === "function_call" && p.name === "apply_patch" ? JSON.parse(p.arguments).input : null;
    if (typeof patch !== "string") continue;
    for (const m of patch.matchAll(/^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/gm)) out.add(m[1]!);
  }
  return out;
}

/** The unfinished steps of the rollout's last update_plan. */
function codexLastPlan(file: string): string[] | null {
  let last: string[] | null = null;
  for (const r of records(file)) {
    const p = r.payload ?? {};
    if (p.type !== "function_call" || p.name !== "update_plan") continue;
    let args: any;
    try {
      args = JSON.parse(p.arguments);
    } catch {
      continue; // arguments that are not JSON (a redacted fixture) name no plan
    }
    last = (args.plan as any[]).filter((s) => s.status !== "completed").map((s) => `${s.status}: ${s.step}`);
  }
  return last;
}

interface Summary {
  data: any;
  text: string;
}

/** Fork the whole Log with --summarize; the branch_summary's data and the text a model reads of it. */
function summarize(ws: string, id: string): Summary {
  const child = `sum-${id.slice(0, 8)}`;
  const f = run("pixir", ["fork", id, "--summarize", "--child-id", child, "--json"], { cwd: ws });
  expect(f.code, f.stderr).toBe(0);
  const lines = readFileSync(path.join(ws, ".pixir", "sessions", `${child}.ndjson`), "utf8").trim().split("\n");
  const data = JSON.parse(lines.at(-1)!).data;
  const ctx = run("pixir", ["context", child], { cwd: ws });
  expect(ctx.code, ctx.stderr).toBe(0);
  const item = ctx.lines.at(-1);
  expect(item.type).toBe("branch_summary");
  return { data, text: item.item.content[0].text };
}

const INJECTED = /^- user: (<command-(name|message)>|<system-reminder>|<local-command|<environment_context>|# AGENTS\.md|Caveat: The messages below)/i;

function expectBounded(s: Summary): void {
  expect(s.text.split("\n").length).toBeLessThanOrEqual(80);
  expect(Buffer.byteLength(s.text, "utf8")).toBeLessThanOrEqual(8 * 1024);
  for (const line of s.data.summary.split("\n").filter((l: string) => l.startsWith("- "))) {
    expect(line).not.toMatch(/^- (user|assistant): ?$/);
    expect(line).not.toMatch(INJECTED);
  }
}

describe("branch summaries of forks of real Claude transcripts", () => {
  const ws = tempDir("pixir-agent-summary-");
  // The sessions that read and edit files most (Read, Edit, Write, Glob, Grep, TodoWrite), kept few for time.
  const files = sessionFixtures()
    .map((f) => ({ f, n: claudeNamedPaths(path.join(CLAUDE_FIXTURES, f)).size }))
    .sort((a, b) => b.n - a.n)
    .slice(0, 5)
    .map((x) => x.f);
  expect(run("pixir", ["import", "claude", ...files.map((f) => path.join(CLAUDE_FIXTURES, f))], { cwd: ws }).code).toBe(0);
  let withFiles = 0;

  for (const rel of files) {
    const id = path.basename(rel, ".jsonl");
    it(`${rel}: files touched are paths its tools named; at most 80 lines and 8 KB; no injected or empty facts`, () => {
      if (!existsSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`))) return; // a file whose session id differs from its name
      const s = summarize(ws, id);
      const named = claudeNamedPaths(path.join(CLAUDE_FIXTURES, rel));
      for (const f of s.data.files_touched) expect(named, f).toContain(f);
      if (s.data.files_touched.length > 0) withFiles++;
      expectBounded(s);
      for (const t of s.data.open_tasks) expect(t).toMatch(/^(pending|in_progress): \S/);
    });
  }

  it("found files touched in the transcripts that edit files", () => {
    expect(withFiles).toBeGreaterThan(3);
  });
});

describe("branch summaries of forks of real Codex threads", () => {
  const ws = tempDir("pixir-agent-summary-codex-");
  const files = codexFixtures().filter((f) => existsSync(path.join(CODEX_FIXTURES_DIR, f)));

  for (const rel of files) {
    it(`${rel}: files touched are its apply_patch headers; open tasks are its last update_plan's`, () => {
      const file = path.join(CODEX_FIXTURES_DIR, rel);
      const r = run("pixir", ["import", "codex", file, "--json"], { cwd: ws });
      expect(r.code, r.stderr).toBe(0);
      const id = r.json.imports[0].sessions[0].session_id;
      const s = summarize(ws, id);
      expect(s.data.files_touched).toEqual([...codexNamedPaths(file)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).slice(0, 30));
      expect(s.data.open_tasks).toEqual(codexLastPlan(file) ?? []);
      expectBounded(s);
    });
  }

  it("the codemie thread names the three files it patched and its last open step", () => {
    const file = path.join(CODEX_FIXTURES_DIR, "codemie-code", "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl");
    expect(codexNamedPaths(file).size).toBe(3);
    expect(codexLastPlan(file)).toEqual(["in_progress: Run focused verification"]);
  });
});
