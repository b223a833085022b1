// cli/fast-parse.ts is the twin of yargs' parse (docs/architecture.md, "Fast paths and their twins"): on
// command lines generated from the real declarations of every tool, valid and not, it either declines the
// line or gives the same command and the same ParsedArgs as yargs (yargs-program.ts, as the runner runs it).
// Then the rules it declines by, one by one, and a count that it takes the plain lines it is there for.
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fastParse } from "../../lib/envelope/src/cli/fast-parse.js";
import { parseAndRun } from "../../lib/envelope/src/cli/yargs-program.js";
import { commandName, mountedCommands, optionsOf, optionTokens, positionalsOf, type Mounted, type ParsedArgs, type RunState, type ToolSpec } from "../../lib/envelope/src/cli/command.js";
import type { CliIo } from "../../lib/envelope/src/cli/io.js";
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
    { weight: 6, arbitrary: fc.constantFrom("s1", "abc", "0d3a8e6f", "src/x.ts", "a b", "a=b", "5", "007", "1e3", "0x10", "+3", "x,y") },
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
      ? fc.oneof({ weight: 8, arbitrary: fc.constant([`--${name}`]) }, { weight: 1, arbitrary: word.map((w) => [`--${name}=${w}`]) }, { weight: 1, arbitrary: fc.constantFrom("true", "false").map((w) => [`--${name}`, w]) })
      : fc.oneof({ weight: 4, arbitrary: word.map((w) => [`--${name}`, w]) }, { weight: 2, arbitrary: word.map((w) => [`--${name}=${w}`]) }, { weight: 1, arbitrary: fc.constant([`--${name}`]) }),
  );
  const odd = fc.constantFrom(["--bogus"], ["--no-json"], ["-h"], ["--help"], ["--version"], ["-j"], ["--JSON"], ["--get-yargs-completions"], ["--"], ["--workspace", "--json"], ["-"], ["--to-sq=3"]);
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
