// The synopsis at the top of each tool's README is generated from the command declarations (the
// CommandDecls the parser, the help and completion read), so it cannot drift from the tool: this test
// fails when a README's block differs from what the declarations give, and `UPDATE_SYNOPSIS=1` rewrites
// the blocks (as UPDATE_GOLDEN=1 does for the golden cases).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { commandName, synopsisOf, toolSynopsis, type CommandDecl, type ToolSpec } from "../../lib/envelope/src/cli/command.js";
import { tool as forkTool } from "../../tools/pixir-fork/src/main.js";
import { tool as logTool } from "../../tools/pixir-log/src/main.js";
import { tool as summarizeTool } from "../../tools/pixir-summarize/src/main.js";
import { tool as treeTool } from "../../tools/pixir-tree/src/main.js";
import { tool as wrapperTool } from "../../tools/pixir/src/main.js";

const BEGIN = "<!-- synopsis: generated from the command declarations; UPDATE_SYNOPSIS=1 pnpm exec vitest run test/cli/readme-synopsis.test.ts rewrites it -->";
const END = "<!-- /synopsis -->";

/** Each command below a group, as `program group command …`; shell completion is left out (it has its own section). */
function commandLines(commands: readonly CommandDecl[], path: string[]): string[] {
  const lines: string[] = [];
  for (const decl of commands) {
    const at = [...path, commandName(decl)];
    if (decl.commands) lines.push(...commandLines(decl.commands, at));
    else lines.push(synopsisOf({ decl, path: at }, false));
  }
  return lines;
}

/** The block: the tool's synopsis, then one line per command of a tool of several commands. */
function synopsisBlock(tool: ToolSpec): string {
  const lines = [toolSynopsis(tool)];
  if (tool.commands) lines.push("", ...commandLines(tool.commands, [tool.program]));
  return [BEGIN, "```", ...lines, "```", END].join("\n");
}

const TOOLS: Array<[string, ToolSpec]> = [
  ["pixir", wrapperTool],
  ["pixir-log", logTool],
  ["pixir-fork", forkTool],
  ["pixir-summarize", summarizeTool],
  ["pixir-tree", treeTool],
];

const readmePath = (dir: string): string => fileURLToPath(new URL(`../../tools/${dir}/README.md`, import.meta.url));

describe("the tool READMEs' synopses", () => {
  it.each(TOOLS)("tools/%s/README.md holds the synopsis its declarations give", (dir, tool) => {
    const file = readmePath(dir);
    const text = readFileSync(file, "utf8");
    const start = text.indexOf(BEGIN);
    const end = text.indexOf(END, start);
    expect(start, `${file}: no generated synopsis block`).toBeGreaterThanOrEqual(0);
    const block = synopsisBlock(tool);
    if (process.env.UPDATE_SYNOPSIS === "1") writeFileSync(file, text.slice(0, start) + block + text.slice(end + END.length));
    else expect(text.slice(start, end + END.length)).toBe(block);
  });

  it("lists every command, groups' commands included (the generator is not blind)", () => {
    const block = synopsisBlock(wrapperTool);
    expect(block).toContain("\npixir import claude ");
    expect(block).toContain("\npixir log cat <id> ");
    expect(synopsisBlock(forkTool).split("\n")).toHaveLength(5);
  });
});
