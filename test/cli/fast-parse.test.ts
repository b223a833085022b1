// cli/fast-parse.ts is the twin of yargs' parse (docs/architecture.md, "Fast paths and their twins"): on
// command lines generated from the real declarations of every tool, valid and not, it either declines the
// line or gives the same command and the same ParsedArgs as yargs (yargs-program.ts, as the runner runs it).
// Then the rules it declines by, one by one, and a count that it takes the plain lines it is there for.
import { cpSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastParse } from "../../lib/envelope/src/cli/fast-parse.js";
import { parseAndRun } from "../../lib/envelope/src/cli/yargs-program.js";
import { commandName, mountedCommands, optionsOf, optionTokens, positionalsOf, type Mounted, type ParsedArgs, type RunState, type ToolSpec } from "../../lib/envelope/src/cli/command.js";
import type { CliIo } from "../../lib/envelope/src/cli/io.js";
import { ROOT, run, tempDir, user, workspace } from "../support/cli.js";
import { tool as pixir } from "../../tools/pixir/src/main.js";
import { tool as pixirLog } from "../../tools/pixir-log/src/main.js";
import { tool as pixirFork } from "../../tools/pixir-fork/src/main.js";
import { tool as pixirTree } from "../../tools/pixir-tree/src/main.js";
import { tool as pixirSummarize } from "../../tools/pixir-summarize/src/main.js";

const TOOLS: readonly ToolSpec[] = [pixir, pixirLog, pixirFork, pixirTree, pixirSummarize];

const io: CliIo = { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: "/nonexistent" };

type Outcome = { ran: { path: string[]; args: ParsedArgs } } | { refused: string } | { printed: true };

/** What yargs does with a line, as the runner drives it: the command it runs with its arguments, an error, or output. */
async function viaYargs(tool: ToolSpec, argv: string[]): Promise<Outcome> {
  let ran: { path: string[]; args: ParsedArgs } | undefined;
  const run: RunState = {
    tokens: optionTokens(argv),
    active: undefined,
    helpTopic: undefined,
    running: undefined,
    execute: async (m, args) => {
      ran = { path: [...m.path], args };
      return 0;
    },
  };
  try {
    await parseAndRun(tool, run, argv, io);
  } catch (err) {
    return { refused: (err as Error).message };
  }
  return ran === undefined ? { printed: true } : { ran };
}

/** Words a value or a positional may be: plain, numeric, flag-like, quoted, empty, command names. */
function wordArb(tool: ToolSpec, m: Mounted): fc.Arbitrary<string> {
  const names = (tool.commands ?? []).map(commandName);
  const choices = Object.values(optionsOf(m.decl)).flatMap((o) => o.choices ?? []);
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom("s1", "abc", "0d3a8e6f", "src/x.ts", "a b", "a=b", "a-b", "a\nb", "é", "5", "007", "1e3", "0x10", "+3", "x,y", "q'") },
    { weight: 3, arbitrary: choices.length > 0 ? fc.constantFrom(...choices) : fc.constant("s2") },
    { weight: 2, arbitrary: fc.constantFrom("-5", "-x", "-", "--", "--json", "--help", "", "'q'", '"q"', "'", "true", "false", "help", "completion", "null", "__proto__") },
    { weight: 1, arbitrary: names.length > 0 ? fc.constantFrom(...names) : fc.constant("ls") },
    { weight: 1, arbitrary: fc.string({ maxLength: 4 }) },
  );
}

/** One token group of a command's line: a known flag in every form, an unknown or short flag, a positional. */
function tokenArb(tool: ToolSpec, m: Mounted): fc.Arbitrary<string[]> {
  const word = wordArb(tool, m);
  const options = Object.entries(optionsOf(m.decl));
  const known = fc.constantFrom(...options).chain(([name, o]) =>
    o.type === "boolean"
      ? fc.oneof({ weight: 8, arbitrary: fc.constant<string[]>([`--${name}`]) }, { weight: 1, arbitrary: word.map((w) => [`--${name}=${w}`]) }, { weight: 1, arbitrary: fc.constantFrom("true", "false").map((w) => [`--${name}`, w]) })
      : fc.oneof({ weight: 4, arbitrary: word.map((w) => [`--${name}`, w]) }, { weight: 2, arbitrary: word.map((w) => [`--${name}=${w}`]) }, { weight: 1, arbitrary: fc.constant<string[]>([`--${name}`]) }),
  );
  const odd = fc.constantFrom<string[]>(["--bogus"], ["--no-json"], ["-h"], ["--help"], ["--version"], ["-j"], ["--JSON"], ["--get-yargs-completions"], ["--"], ["--workspace", "--json"], ["-"], ["--to-sq=3"]);
  return fc.oneof({ weight: 6, arbitrary: known }, { weight: 4, arbitrary: word.map((w) => [w]) }, { weight: 1, arbitrary: odd });
}

/** A command line: the command's words (sometimes wrong or missing), then flags and positionals in any order. */
function lineArb(tool: ToolSpec, m: Mounted): fc.Arbitrary<string[]> {
  const words = m.path.slice(1);
  const head = fc.oneof(
    { weight: 8, arbitrary: fc.constant(words) },
    { weight: 1, arbitrary: fc.constant(words.slice(0, -1)) },
    { weight: 1, arbitrary: fc.constantFrom(["help", ...words], ["completion"], [...words.map((w) => `${w}x`)]) },
  );
  const plain = positionalsOf(m.decl).map((p) => (p.name === "query" ? "annotation" : "s1"));
  const body = fc.oneof({ weight: 2, arbitrary: fc.constant(plain.map((w) => [w])) }, { weight: 3, arbitrary: fc.array(tokenArb(tool, m), { maxLength: 7 }) });
  return fc.tuple(head, body, fc.array(tokenArb(tool, m), { maxLength: 3 })).map(([h, b, more]) => [...h, ...b.flat(), ...more.flat()]);
}

const CASES = TOOLS.flatMap((tool) => mountedCommands(tool).map((m) => ({ tool, m })));

describe("the fast parse is yargs' parse, or declines", () => {
  it("on generated lines of every command of every tool", async () => {
    let taken = 0;
    let lines = 0;
    for (const { tool, m } of CASES) {
      await fc.assert(
        fc.asyncProperty(lineArb(tool, m), async (argv) => {
          lines++;
          const fast = fastParse(tool, argv);
          if (fast === undefined) return;
          taken++;
          expect(await viaYargs(tool, argv), argv.join(" ")).toStrictEqual({ ran: { path: [...fast.mounted.path], args: fast.args } });
        }),
        { numRuns: Number(process.env.FAST_PARSE_RUNS ?? 60), seed: Number(process.env.FAST_PARSE_SEED ?? 35) },
      );
    }
    if (process.env.FAST_PARSE_RUNS) console.log(`taken ${taken} of ${lines}`);
    // Not vacuous: a fair share of the generated lines are taken.
    expect(taken).toBeGreaterThan(lines / 8);
  }, 60_000);
});

describe("the fast parse takes the plain lines it is there for", () => {
  const takes = (tool: ToolSpec, argv: string[]) => fastParse(tool, argv);
  it("a search, a listing, an append, a group's subcommand, a tool of one command", async () => {
    const lines: Array<[ToolSpec, string[]]> = [
      [pixir, ["search", "annotation", "--workspace", "/tmp/ws"]],
      [pixir, ["search", "--file", "src/x.ts", "--limit=5", "--json", "parse", "line"]],
      [pixir, ["ls"]],
      [pixir, ["ls", "--json"]],
      [pixir, ["usage", "--by", "model"]],
      [pixir, ["log", "cat", "s1", "--type", "user_message", "--type=tool_call"]],
      [pixir, ["lock", "release", "s1", "--force", "--reason", "writer was OOM-killed"]],
      [pixirLog, ["append", "s1"]],
      [pixirLog, ["cat", "s1", "--from-seq", "3"]],
      [pixirFork, ["--parent", "s1", "--to-seq", "40"]],
      [pixirTree, []],
      // A phrase in quotes, and the words after `--` (an excluded word): the search's own syntax, no flags.
      [pixir, ["search", '"working tree clean"', "--json"]],
      [pixir, ["search", "--limit", "3", "--", "migration", "-sqlite", "--json", "help", "--"]],
      [pixir, ["import", "pi", "a.jsonl", "--", "-b.jsonl"]],
    ];
    for (const [tool, argv] of lines) {
      const fast = takes(tool, argv);
      expect(fast, argv.join(" ")).toBeDefined();
      expect(await viaYargs(tool, argv)).toStrictEqual({ ran: { path: [...fast!.mounted.path], args: fast!.args } });
    }
    const search = takes(pixir, ["search", "parse", "--type", "tool_call", "line"])!;
    expect(search.mounted.path).toEqual(["pixir", "search"]);
    expect(search.args.positionals).toEqual(["parse", "line"]);
    expect(search.args.flags.type).toBe("tool_call");
    expect(takes(pixir, ["usage"])!.args.flags.mode).toBe("auto");
  });
});

describe("the fast parse declines, and yargs answers", () => {
  const declines: Array<[string, ToolSpec, string[]]> = [
    ["no command", pixir, []],
    ["a flag before the command", pixir, ["--json", "ls"]],
    ["an unknown command", pixir, ["serch", "x"]],
    ["a group without its subcommand", pixir, ["log"]],
    ["a group's flag before the subcommand", pixir, ["log", "--raw", "cat", "s1"]],
    ["help", pixir, ["search", "--help"]],
    ["-h", pixir, ["search", "-h"]],
    ["a positional help", pixir, ["search", "help"]],
    ["--version", pixir, ["ls", "--version"]],
    ["completion words", pixir, ["ls", "--get-yargs-completions", "pixir", "l"]],
    ["completion in a tool of one command", pixirFork, ["completion"]],
    ["a short flag", pixirLog, ["cat", "s1", "-r"]],
    ["--no-x", pixir, ["ls", "--no-json"]],
    ["an unknown flag", pixir, ["search", "x", "--bogus"]],
    ["a flag in capitals", pixir, ["ls", "--JSON"]],
    ["a missing value", pixir, ["search", "x", "--limit"]],
    ["a value that looks like a flag", pixir, ["search", "x", "--limit", "--json"]],
    ["a negative number", pixir, ["search", "x", "--limit", "-5"]],
    ["an empty value", pixir, ["search", "x", "--file="]],
    ["a quoted value", pixir, ["search", "x", "--file", "'a b'"]],
    ["a switch with a value", pixir, ["ls", "--json=true"]],
    ["a switch followed by true", pixir, ["ls", "--json", "true"]],
    ["a switch given twice", pixir, ["ls", "--json", "--json"]],
    ["a single-value flag given twice", pixir, ["search", "x", "--limit", "1", "--limit", "2"]],
    ["a choice not in the list", pixir, ["search", "x", "--sort", "size"]],
    ["too few positionals", pixirLog, ["cat"]],
    ["too many positionals", pixirLog, ["cat", "s1", "s2"]],
    ["a literal -- before a positional that is not variadic", pixirLog, ["cat", "--", "s1"]],
    ["a literal -- before a required variadic positional has a word", pixir, ["import", "pi", "--", "a.jsonl"]],
    ["a lone -", pixirLog, ["append", "-"]],
    ["an empty directory (checkFlags)", pixir, ["ls", "--workspace="]],
  ];
  for (const [what, tool, argv] of declines) {
    it(what, () => {
      expect(fastParse(tool, argv)).toBeUndefined();
    });
  }
});

describe("the built pixir loads yargs only for a line the fast parser declines", () => {
  it("a plain line and `--version` alone run with yargs' chunk gone; help, version with more and a usage error need it; main.cjs does not hold yargs", () => {
    const dir = path.join(tempDir("pixir-no-yargs-"), "pixir");
    for (const part of ["package.json", "bin", "dist"]) cpSync(path.join(ROOT, "tools/pixir", part), path.join(dir, part), { recursive: true });
    const chunks = readdirSync(path.join(dir, "dist/chunks")).filter((f) => f.startsWith("yargs-program-"));
    expect(chunks).toHaveLength(1);
    expect(readFileSync(path.join(dir, "dist/main.cjs"), "utf8")).not.toMatch(/YargsInstance|yargs-parser/);
    rmSync(path.join(dir, "dist/chunks", chunks[0]!));
    const bin = path.join(dir, "bin/pixir.js");
    const ws = workspace({ s1: [user("where is parse_line defined")] });
    const ls = run("pixir", ["ls", "--json"], { cwd: ws, bin });
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout.trim().split("\n")[0]!)).toMatchObject({ session_id: "s1" });
    for (const argv of [["--version", "--json"], ["ls", "--help"], ["ls", "--bogus"]]) expect(run("pixir", argv, { cwd: ws, bin }).code, argv.join(" ")).not.toBe(0);
    expect(run("pixir", ["--version", "--json"], { cwd: ws }).code).toBe(0);
    // `--version` alone is the runner's own (app.ts).
    expect(run("pixir", ["--version"], { cwd: ws, bin }).stdout).toBe(run("pixir", ["--version", "--json"], { cwd: ws }).stdout);
  });
});

describe("`--version` alone is printed without yargs (app.ts), as yargs' version flag prints it", () => {
  it("every tool: the same stdout as yargs gives for the same flag, exit 0, and nothing on stderr", async () => {
    for (const tool of TOOLS) {
      const printed = await parseAndRun(tool, { tokens: ["--version"], active: undefined, helpTopic: undefined, running: undefined, execute: async () => 1 }, ["--version"], io);
      const name = tool.program as Parameters<typeof run>[0];
      const fast = run(name, ["--version"], { cwd: tempDir() });
      expect(fast.code, name).toBe(0);
      // yargs prints the tool's version and nothing else (the sources' spec here; the bins carry the package's).
      expect(printed, name).toBe(tool.version);
      expect(fast.stdout, name).toMatch(/^\d+\.\d+\.\d+\S*\n$/);
      expect(fast.stderr, name).toBe("");
      // yargs' own path, for a line with more than the flag: the same words.
      expect(run(name, ["--version", "--json"], { cwd: tempDir() }).stdout, name).toBe(fast.stdout);
    }
  });
});
