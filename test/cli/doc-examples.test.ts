// Docs that cannot drift (STYLE.md): every command line of our tools shown in a README, in docs/, or in a
// tool's own `--help` examples must still parse: the tool and subcommand exist, every flag is known, value
// flags have values, the positionals fit. Each command runs through the real parser (`runTool`, yargs on
// the commands' declarations) with its implementation replaced by a no-op, so nothing is executed. What the commands print is pinned by the
// golden cases (test/cases) and the per-tool tests.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Writable, Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { mountedCommands, runTool, type CliIo, type CommandDecl, type ToolSpec } from "@pixir/envelope/cli";
import { tool as logTool } from "pixir-log";
import { tool as forkTool } from "pixir-fork";
import { tool as treeTool } from "pixir-tree";
import { tool as summarizeTool } from "pixir-summarize";
import { tool as wrapperTool } from "../../tools/pixir/src/main.js";
import { ROOT } from "../support/cli.js";

/** A copy of a command (and its subcommands) that parses its arguments and then does nothing. */
function parseOnlyCommand(c: CommandDecl): CommandDecl {
  return { ...c, handler: c.handler && (async () => 0), commands: c.commands?.map(parseOnlyCommand) };
}

function parseOnly(tool: ToolSpec): ToolSpec {
  return { ...tool, commands: tool.commands?.map(parseOnlyCommand), single: tool.single && parseOnlyCommand(tool.single) };
}

const TOOLS: Record<string, ToolSpec> = {
  "pixir-log": parseOnly(logTool),
  "pixir-fork": parseOnly(forkTool),
  "pixir-tree": parseOnly(treeTool),
  "pixir-summarize": parseOnly(summarizeTool),
  pixir: parseOnly(wrapperTool),
};

/** Run `argv` through the parser; the exit code and what it said (a report command's error goes to stdout with --json). */
async function parse(program: string, argv: string[]): Promise<{ code: number; said: string }> {
  let said = "";
  const sink = (onWrite?: (s: string) => void) =>
    new Writable({
      write(chunk, _enc, done) {
        onWrite?.(String(chunk));
        done();
      },
    });
  const io: CliIo = { stdin: Readable.from([]), stdout: sink((s) => (said += s)), stderr: sink((s) => (said += s)), env: {}, cwd: ROOT };
  const code = await runTool(TOOLS[program]!, argv, io);
  return { code, said };
}

// ---------------------------------------------------------------------------------------------
// Finding the examples

interface Example {
  /** Where it was found, for the failure message. */
  where: string;
  line: string;
}

/** Shell words and operators of one line, quotes removed; enough of sh for documentation examples. */
export function shellWords(line: string): string[] {
  const out: string[] = [];
  let word: string | null = null;
  const push = () => {
    if (word !== null) out.push(word);
    word = null;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      word = (word ?? "") + line.slice(i + 1, end < 0 ? line.length : end);
      i = end < 0 ? line.length : end;
    } else if (c === '"') {
      let j = i + 1;
      let text = "";
      for (; j < line.length && line[j] !== '"'; j++) text += line[j] === "\\" && j + 1 < line.length ? line[++j] : line[j];
      word = (word ?? "") + text;
      i = j;
    } else if (c === "\\" && i + 1 < line.length) {
      word = (word ?? "") + line[++i];
    } else if (c === "$" && line[i + 1] === "(") {
      // A command substitution stays one word (its inside is not one of our examples).
      let depth = 0;
      let j = i + 1;
      for (; j < line.length; j++) {
        if (line[j] === "(") depth++;
        else if (line[j] === ")" && --depth === 0) break;
      }
      word = (word ?? "") + line.slice(i, j + 1);
      i = j;
    } else if (c === "#" && word === null) {
      break;
    } else if (" \t".includes(c)) {
      push();
    } else if ("|&;<>".includes(c)) {
      // `2>` and `2>&1`: a file descriptor number belongs to its redirection.
      const fd = word !== null && /^\d$/.test(word) && (c === ">" || c === "<") ? word : "";
      if (fd) word = null;
      push();
      let op = fd + c;
      while (i + 1 < line.length && "|&<>".includes(line[i + 1]!) && op.length < 3) op += line[++i];
      if (op.endsWith(">&") || op.endsWith("<&")) {
        while (i + 1 < line.length && /[0-9-]/.test(line[i + 1]!)) op += line[++i];
      }
      out.push(op);
    } else {
      word = (word ?? "") + c;
    }
  }
  push();
  return out;
}

const SEPARATORS = new Set(["|", "||", "&&", ";", "&"]);
const isRedirection = (w: string) => /^\d?(?:<|>|>>|<<|&>|>&\d*|<&\d*|>\|)$/.test(w) || /^\d?>&\d+$/.test(w);

/** Each invocation of one of our tools in a command line: `[program, argv]`. */
export function invocations(line: string): Array<[string, string[]]> {
  const found: Array<[string, string[]]> = [];
  let segment: string[] = [];
  const flush = () => {
    const words = segment.filter((w, i) => !isRedirection(w) && !(i > 0 && isRedirection(segment[i - 1]!) && !/&\d+$/.test(segment[i - 1]!)));
    while (words.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
    if (words.length > 0 && words[0]! in TOOLS) found.push([words[0]!, words.slice(1)]);
    segment = [];
  };
  for (const w of shellWords(line)) {
    if (SEPARATORS.has(w)) flush();
    else segment.push(w);
  }
  flush();
  return found;
}

/** Command lines of the sh/bash/console blocks of a Markdown file: `$ ` lines where a block has any, else every line. */
function markdownExamples(rel: string): Example[] {
  const text = readFileSync(path.join(ROOT, rel), "utf8");
  const out: Example[] = [];
  const fence = /^```(sh|bash|console|shell)[^\n]*\n([\s\S]*?)^```/gm;
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    const startLine = text.slice(0, m.index).split("\n").length + 1;
    const raw = m[2]!.split("\n");
    const transcript = raw.some((l) => l.startsWith("$ "));
    const lines: Array<{ n: number; text: string }> = [];
    raw.forEach((l, k) => {
      const prev = lines.at(-1);
      if (prev !== undefined && prev.text.endsWith("\\")) prev.text = `${prev.text.slice(0, -1)} ${l.trim()}`;
      else if (transcript ? l.startsWith("$ ") : l.trim() !== "") lines.push({ n: startLine + k, text: transcript ? l.slice(2) : l });
    });
    for (const l of lines) out.push({ where: `${rel}:${l.n}`, line: l.text });
  }
  return out;
}

/** The examples every command declares, as its help shows them (`$0` is the command as typed). */
function helpExamples(): Example[] {
  const out: Example[] = [];
  for (const tool of [logTool, forkTool, treeTool, summarizeTool, wrapperTool]) {
    for (const { decl, path: at } of mountedCommands(tool)) {
      for (const line of decl.examples ?? []) out.push({ where: `${at.join(" ")} --help`, line: line.replaceAll("$0", at.join(" ")) });
    }
  }
  return out;
}

function markdownFiles(): string[] {
  const docs = readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`);
  const readmes = [...readdirSync(path.join(ROOT, "tools")).map((t) => `tools/${t}/README.md`), "lib/envelope/README.md", "README.md", "test/cases/README.md"];
  return [...readmes, ...docs];
}

describe("documented command lines still parse", () => {
  it("reads shell words and finds our tools in pipelines", () => {
    expect(shellWords(`pixir-log cat P --type 'a b' | jq -r ".x" 2>&1 > out.txt`)).toEqual(["pixir-log", "cat", "P", "--type", "a b", "|", "jq", "-r", ".x", "2>&1", ">", "out.txt"]);
    expect(invocations(`FOO=1 pixir-log cat P 2>/dev/null | pixir-fork --to-seq 4 < in && echo "$(pixir tree)" # done`)).toEqual([
      ["pixir-log", ["cat", "P"]],
      ["pixir-fork", ["--to-seq", "4"]],
    ]);
  });

  it("the parser refuses what has drifted (an unknown flag, a missing value, a subcommand that is gone)", async () => {
    expect((await parse("pixir-fork", ["--to-seq", "4", "--child-id", "c"])).code).toBe(0);
    expect((await parse("pixir", ["log", "cat", "P", "--raw"])).code).toBe(0);
    for (const [program, argv] of [
      ["pixir-fork", ["--upto", "4"]],
      ["pixir-fork", ["--to-seq"]],
      ["pixir-log", ["concat", "P"]],
      ["pixir", ["log", "cat", "P", "--bogus"]],
      ["pixir", ["fork"]],
    ] as const) {
      expect((await parse(program, [...argv])).code, `${program} ${argv.join(" ")}`).toBe(2);
    }
  });

  it("in every README, docs/ page and help text", async () => {
    const examples = [...markdownFiles().flatMap(markdownExamples), ...helpExamples()];
    const drifted: string[] = [];
    let checked = 0;
    for (const ex of examples) {
      for (const [program, argv] of invocations(ex.line)) {
        checked++;
        const r = await parse(program, argv);
        if (r.code !== 0) drifted.push(`${ex.where}: ${program} ${argv.join(" ")} → ${r.said.split("\n")[0]}`);
      }
    }
    // Enough examples were found that the search itself cannot have silently broken.
    expect(checked).toBeGreaterThan(100);
    expect(drifted).toEqual([]);
  });
});
