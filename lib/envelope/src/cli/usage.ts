// Usage errors that say what was wrong (docs/cli-contract.md "Parsing"): an unknown command names the
// word and the nearest command, an unknown flag names the flag and the nearest flag. cli.md §1 forbids
// echoing the offending token; we echo only a word that cannot carry anything else: a lower-case command
// word (letters and dashes, so never a Session id with digits, dots or slashes, never a path or a control
// byte) or a long flag's name (never its value). Anything else is named by its kind alone.
//
// yargs finds what is wrong (strict mode, requiresArg, choices) and says it in its own words, which name
// what was typed ("Unknown argument: X", "Given: X"): its strings are replaced (updateStrings) by codes,
// and the fail handler turns a code into our usage error. No text of yargs' reaches the user.
import { PixirError, usageError } from "../event/errors.js";
import { commandName, optionsOf, synopsisOf, toolSynopsis, type Mounted, type RunState, type ToolSpec } from "./command.js";

const COMMAND_WORD = /^[a-z][a-z-]{0,23}$/;
const FLAG_NAME = /^--[a-z][a-z0-9-]{0,31}$/;

/** Optimal string alignment distance (Levenshtein with adjacent transpositions), for "did you mean". */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** The candidate nearest to `word` when one is near (at most 2 edits, and fewer than half its letters); else undefined. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word, c);
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= 2 && bestDistance * 2 < Math.max(word.length, 2) ? best : undefined;
}

const suggestion = (near: string | undefined): string => (near === undefined ? "" : `; did you mean "${near}"?`);

/** `unknown command "forkk"; did you mean "fork"?` (`what` for a command's own words: `lock action`, `import format`). */
export function unknownWord(synopsis: string, word: string, known: readonly string[], what = "command"): PixirError {
  const shown = COMMAND_WORD.test(word) ? ` "${word}"` : "";
  return usageError(synopsis, `unknown ${what}${shown}${suggestion(nearest(word.toLowerCase(), known))}`);
}

/** `unknown flag --to-sq; did you mean --to-seq?`, from the token as typed (`--name` or `--name=value`). */
export function unknownFlag(synopsis: string, token: string, known: readonly string[]): PixirError {
  const name = token.includes("=") ? token.slice(0, token.indexOf("=")) : token;
  const shown = FLAG_NAME.test(name) ? ` ${name}` : "";
  const near = name.startsWith("--") ? nearest(name.slice(2).toLowerCase(), known) : undefined;
  return usageError(synopsis, `unknown flag${shown}${near === undefined ? "" : `; did you mean --${near}?`}`);
}

/**
 * yargs' messages, as codes. `%s` keeps an argument that is ours (an option's key, a command's name,
 * or the list of unknown words, which is read only to find the flag that was meant); `%c` drops one.
 */
export const YARGS_STRINGS = {
  "Unknown argument: %s": { one: "unknown_arguments %s", other: "unknown_arguments %s" },
  "Unknown command: %s": { one: "unknown_command%c", other: "unknown_command%c" },
  "Invalid values:": "invalid_values",
  "Argument: %s, Given: %s, Choices: %s": "%s%c%c",
  "Not enough arguments following: %s": "missing_value %s",
  "Missing argument value: %s": { one: "missing_value %s", other: "missing_value %s" },
  "Argument check failed: %s": "check_failed%c",
  "Show help": "this help",
  "Show version number": "print the version",
};


/** "a", "a or b", "a, b or c". */
const oneOf = (values: readonly string[]) => (values.length < 2 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`);

/**
 * The fail handler of every tool: an error a command threw passes through; a message of yargs' becomes
 * the usage error of the active command (or of the tool, before any command is known).
 */
export function usageFailure(tool: ToolSpec, run: RunState, message: string | null, err: Error | undefined): Error {
  if (err instanceof PixirError) return err;
  // A command's own failure (not yargs' YError) is the command's, whatever it is.
  if (err !== undefined && err.name !== "YError") return err;
  const m = run.active;
  const synopsis = `usage: ${m === undefined ? toolSynopsis(tool) : synopsisOf(m)}`;
  const [code, rest = ""] = (message ?? "").split(/\s+(.*)/s);
  const options = m === undefined ? {} : optionsOf(m.decl);
  switch (code) {
    case "missing_value": {
      const o = options[rest];
      return usageError(synopsis, `--${rest} requires a ${o?.value ?? "text"} value`);
    }
    case "invalid_values": {
      // One line per flag whose value is not among its choices; the value itself is never named.
      const name = rest.trim().split("\n")[0]!.trim();
      const choices = options[name]?.choices;
      return choices === undefined ? usageError(synopsis) : usageError(synopsis, `--${name} must be ${oneOf(choices)}`);
    }
    case "unknown_arguments":
      return unknownArgument(tool, m, rest.split(", "), run.tokens, synopsis);
    default:
      return usageError(synopsis);
  }
}

/**
 * What strict mode found unknown (flags by their names, positionals as typed). Where a command's name is
 * expected (the tool's, or a group's: `pixir lock <status|release>`) the first unknown word is an unknown
 * command; else the first unknown flag, named as typed; else a positional too many, the synopsis.
 */
function unknownArgument(tool: ToolSpec, m: Mounted | undefined, unknown: string[], tokens: readonly string[], synopsis: string): PixirError {
  const commands = m === undefined ? (tool.single ? undefined : tool.commands) : m.decl.commands;
  const isFlag = (word: string) => tokens.some((t) => t === `--${word}` || t.startsWith(`--${word}=`) || (t.startsWith("-") && !t.startsWith("--") && t.slice(1).includes(word)));
  const word = commands === undefined ? undefined : unknown.find((w) => !isFlag(w));
  if (word !== undefined) return unknownWord(synopsis, word, commands!.map(commandName), m?.decl.subcommandWord);
  const known = m === undefined ? [] : Object.keys(optionsOf(m.decl));
  // Name the token as typed: the first dash token that is not one of this command's flags.
  const token = tokens.find((t) => t.startsWith("-") && t !== "-" && !(t.startsWith("--") && known.includes(t.slice(2).split("=")[0]!)));
  return token === undefined ? usageError(synopsis) : unknownFlag(synopsis, token, known);
}

/** `help <command>`: a command of the tool, or the usage error of an unknown command. */
export function helpTopic(tool: ToolSpec, word: string): string[] {
  const names = (tool.commands ?? []).map(commandName);
  if (names.includes(word)) return [word];
  throw unknownWord(`usage: ${toolSynopsis(tool)}`, word, names);
}
