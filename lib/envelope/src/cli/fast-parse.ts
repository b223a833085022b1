// A plain command line parsed from the commands' declarations, without yargs (docs/architecture.md, "Fast
// paths and their twins"; docs/performance.md, "Round 7"). It is the twin of yargs' parse (yargs-program.ts):
// for a line it takes, it gives the command and the ParsedArgs yargs gives (test/cli/fast-parse.test.ts holds
// the two together on generated lines of every tool); any other line it declines, and yargs parses that line
// as before. So help, version, completion and every usage error keep yargs' path and words: the fast parser
// finds no error itself. What yargs' parse is followed by, the checks of command.ts (`checkFlags`) and the
// conversion to ParsedArgs (`parsedArgs`), is shared, not copied.
import { checkFlags, commandName, optionsOf, parsedArgs, positionalsOf, type Mounted, type OptionDecl, type ParsedArgs, type ToolSpec } from "./command.js";

/** A line the fast parser took: the command it runs and its arguments. */
export interface FastLine {
  mounted: Mounted;
  args: ParsedArgs;
}

/** `--name` or `--name=value`, the name in the declarations' alphabet (never `--`, `--no-x` or a short flag as such). */
const LONG_FLAG = /^--([a-z][a-z0-9-]*)(?:=([\s\S]*))?$/;

/**
 * A word taken as a value or a positional: not empty; no leading dash (a flag, `-`, `--`, a negative number:
 * yargs reads each its own way); no leading quote (yargs-parser strips a pair of quotes from a value).
 */
const plainWord = (word: string | undefined): word is string => word !== undefined && word !== "" && !/^[-'"]/.test(word);

/** A word taken as a positional: a plain word, or one in quotes (yargs keeps a positional's quotes, as a search phrase needs them). */
const positionalWord = (word: string): boolean => word !== "" && !word.startsWith("-");

/**
 * The command a line runs, and where its own words start: a tool's one command, or the command (and a
 * group's subcommand) named by the first words. Declined: a line that does not start with the names, a group
 * without a subcommand (its help), and `completion` anywhere in a tool of one command (yargs' command there).
 */
function commandOf(tool: ToolSpec, argv: readonly string[]): { mounted: Mounted; at: number } | undefined {
  if (tool.single) return argv.includes("completion") ? undefined : { mounted: { decl: tool.single, path: [tool.program] }, at: 0 };
  const path = [tool.program];
  let list = tool.commands;
  while (list !== undefined) {
    const word = argv[path.length - 1];
    const decl = list.find((d) => commandName(d) === word);
    if (decl === undefined) return undefined;
    path.push(word!);
    if (decl.commands === undefined) return decl.handler === undefined ? undefined : { mounted: { decl, path }, at: path.length - 1 };
    list = decl.commands;
  }
  return undefined;
}

/**
 * A flag and its value as yargs reads them, with the number of words they take; undefined for what the fast
 * parser leaves to yargs: an unknown or short flag, a switch with a value (checkFlags' error) or followed by
 * `true`/`false` (yargs-parser takes that as its value), a value flag without a plain value or with one not
 * among its choices.
 */
function readFlag(options: Record<string, OptionDecl>, words: readonly string[], at: number): { name: string; value: string | true; used: number } | undefined {
  const flag = LONG_FLAG.exec(words[at]!);
  const name = flag?.[1];
  if (name === undefined || !Object.hasOwn(options, name)) return undefined;
  const inline = flag![2];
  const o = options[name]!;
  if (o.type === "boolean") {
    const next = words[at + 1];
    return inline === undefined && next !== "true" && next !== "false" ? { name, value: true, used: 1 } : undefined;
  }
  const value = inline ?? words[at + 1];
  if (!plainWord(value) || (o.choices !== undefined && !o.choices.includes(value))) return undefined;
  return { name, value, used: inline === undefined ? 2 : 1 };
}

/**
 * yargs' argv for a command's words, of the shape command.ts reads (a flag given twice as an array, a default
 * where none is given), or undefined for anything the fast parser leaves to yargs: a flag readFlag declines,
 * a single-value flag given twice, a positional `help`, too few or too many positionals.
 */
function argvOf(m: Mounted, words: readonly string[]): Record<string, unknown> | undefined {
  const options = optionsOf(m.decl);
  const argv: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const positionals: string[] = [];
  for (let at = 0; at < words.length; ) {
    const word = words[at]!;
    if (word === "--") {
      // The end of the flags: every word after it is a positional as it stands (`pixir search -- -word`),
      // where yargs gives them to a variadic positional that the words before have reached.
      if (!variadicTakes(m, positionals.length)) return undefined;
      positionals.push(...words.slice(at + 1));
      break;
    }
    if (positionalWord(word)) {
      // yargs reads a last positional `help` as --help.
      if (word === "help") return undefined;
      positionals.push(word);
      at++;
      continue;
    }
    const flag = readFlag(options, words, at);
    if (flag === undefined) return undefined;
    const { name, value } = flag;
    if (name in argv) {
      if (value === true || options[name]!.repeatable !== true) return undefined;
      argv[name] = [argv[name], value].flat();
    } else argv[name] = value;
    at += flag.used;
  }
  for (const [name, o] of Object.entries(options)) if (o.default !== undefined && !(name in argv)) argv[name] = o.default;
  return placePositionals(m, options, positionals, argv) ? argv : undefined;
}

/**
 * Whether yargs gives the words after `--` to the command's variadic positional: its last, when the `given`
 * positionals before `--` fill those before it, and it too if it is required (yargs fills none from after).
 */
function variadicTakes(m: Mounted, given: number): boolean {
  const declared = positionalsOf(m.decl);
  const last = declared.at(-1);
  return last?.variadic === true && given >= declared.length - (last.required ? 0 : 1);
}

/** The positionals under their names, in order (a variadic one takes the rest); false when they do not fit. */
function placePositionals(m: Mounted, options: Record<string, unknown>, words: readonly string[], argv: Record<string, unknown>): boolean {
  let at = 0;
  for (const p of positionalsOf(m.decl)) {
    if (Object.hasOwn(options, p.name)) return false;
    if (p.variadic) {
      if (p.required && at === words.length) return false;
      argv[p.name] = words.slice(at);
      at = words.length;
    } else if (at < words.length) argv[p.name] = words[at++];
    else if (p.required) return false;
  }
  return at === words.length;
}

/** The command and arguments of a plain line, as yargs would parse them; undefined when yargs must. */
export function fastParse(tool: ToolSpec, argv: readonly string[]): FastLine | undefined {
  const found = commandOf(tool, argv);
  if (found === undefined) return undefined;
  const { mounted } = found;
  const record = argvOf(mounted, argv.slice(found.at));
  if (record === undefined) return undefined;
  try {
    checkFlags(mounted, record, argv);
  } catch {
    // A line checkFlags refuses is a usage error: yargs' path reports it.
    return undefined;
  }
  return { mounted, args: parsedArgs(mounted.decl, record) };
}
