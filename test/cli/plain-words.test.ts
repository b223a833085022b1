// Messages read as a new user would (issue 33): bad input piped to a stream tool is about the input, an
// agent's own session file piped in is recognised, an import that finds nothing says so.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run, tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";

const firstLines = (file: string, n: number) => readFileSync(file, "utf8").split("\n").slice(0, n).join("\n") + "\n";
const CLAUDE_LINES = firstLines(path.join(CLAUDE_FIXTURES, "agent-history/session-01.jsonl"), 2);
const CODEX_LINES = firstLines(path.join(CODEX_FIXTURES_DIR, "agent-history/session-01.jsonl"), 3);

describe("bad input piped to a stream tool", () => {
  it("gets a hint about the input, not about checking a Log", () => {
    for (const [tool, args] of [["pixir", ["append", "s1"]], ["pixir-log", ["append", "s1"]], ["pixir-fork", ["--to-seq", "1"]]] as const) {
      const r = run(tool, [...args], { cwd: tempDir(), input: "{not json\n" });
      expect(r.code, tool).toBe(1);
      expect(r.stderr, tool).toContain("hint: the input must be pixir Events, one JSON object per line, as pixir-log cat prints them");
      expect(r.stderr, tool).not.toContain("pixir-log check");
    }
  });

  it("a Claude transcript or a Codex rollout is recognised and the import named", () => {
    const claude = run("pixir", ["append", "s1"], { cwd: tempDir(), input: CLAUDE_LINES });
    expect(claude.stderr).toContain("hint: this looks like a line of a Claude Code transcript, not a pixir Event: import the file with pixir import claude FILE");
    const codex = run("pixir-fork", ["--to-seq", "1"], { cwd: tempDir(), input: CODEX_LINES });
    expect(codex.stderr).toContain("hint: this looks like a line of a Codex rollout, not a pixir Event: import the file with pixir import codex FILE");
    const json = run("pixir", ["append", "s1", "--json"], { cwd: tempDir(), input: CODEX_LINES });
    expect(json.json.error.details.next_actions).toEqual(["this looks like a line of a Codex rollout, not a pixir Event: import the file with pixir import codex FILE"]);
  });
});

describe("an import that finds nothing", () => {
  it("says so, for Claude and Codex", () => {
    const empty = tempDir();
    const claude = run("pixir", ["import", "claude", empty], { cwd: tempDir() });
    expect(claude.code).toBe(0);
    expect(claude.stdout).toBe(`nothing imported: no Claude Code session files (*.jsonl) found in ${empty}\n`);
    const codex = run("pixir", ["import", "codex", empty], { cwd: tempDir() });
    expect(codex.code).toBe(0);
    expect(codex.stdout).toBe(`nothing imported: no Codex rollouts (*.jsonl) found in ${empty}\n`);
  });
});
