// cli.md §1: usage errors never echo the offending token. yargs says what went wrong in its own words,
// which name what was typed ("Unknown argument: X", "Given: X"); its strings are replaced (updateStrings)
// by codes, and the fail handler turns a code into our usage error: the synopsis, the flag rule, or the
// command or flag that was meant. No text of yargs' reaches the user, so nothing typed can.
import { PixirError, usageError } from "../event/errors.js";
import { commandName, optionsOf, synopsisOf, toolSynopsis, type Mounted, type RunState, type ToolSpec } from "./command.js";

/**
 * yargs' messages, as codes. `%s` keeps an argument that is ours (an option's key, a command's name,
 * or the list of unknown words, which is read only to find the flag that was meant); `%c` drops one.
 */
export const YARGS_STRINGS = {
  "Unknown argument: %s": { one: "unknown_arguments %s", other: "unknown_arguments %s" },
  "Unknown command: %s": { one: "unknown_command%c", other: "unknown_command%c" },
  "Did you mean %s?": "did_you_mean %s",
  "Invalid values:": "invalid_values",
  "Argument: %s, Given: %s, Choices: %s": "%s%c%c",
  "Not enough arguments following: %s": "missing_value %s",
  "Missing argument value: %s": { one: "missing_value %s", other: "missing_value %s" },
  "Argument check failed: %s": "check_failed%c",
  "Show help": "this help",
  "Show version number": "print the version",
};

/** The closest of `names` to `word`, if it is close enough to be what was meant (yargs' measure for commands). */
export function closest(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const name of names) {
    const d = distance(word, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best;
}

/** Levenshtein distance. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

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
    case "did_you_mean":
      return commandMeant(tool, m, rest, synopsis);
    case "unknown_arguments":
      return flagMeant(m, rest.split(", "), run.tokens, synopsis);
    default:
      return usageError(synopsis);
  }
}

/** `pixir forkk`: yargs recommends `fork`; the message names it with the words that lead to it. */
export function commandMeant(tool: ToolSpec, m: Mounted | undefined, name: string, synopsis: string): PixirError {
  const at = m === undefined ? [tool.program] : m.path;
  return new PixirError("usage", `${at.join(" ")} has no such command; did you mean ${[...at, name].join(" ")}?`, { synopsis, did_you_mean: [...at, name].join(" ") });
}

/**
 * An unknown flag: where one of the command's flags is close to it (`--to-sq`), the message names that
 * flag; else it is the synopsis. The unknown word is compared, never shown.
 */
function flagMeant(m: Mounted | undefined, unknown: string[], tokens: readonly string[], synopsis: string): PixirError {
  if (m === undefined) return usageError(synopsis);
  const known = Object.keys(optionsOf(m.decl));
  for (const word of unknown) {
    const typed = tokens.some((t) => t === `--${word}` || t.startsWith(`--${word}=`));
    const meant = typed ? closest(word, known) : undefined;
    if (meant !== undefined) return new PixirError("usage", `${m.path.join(" ")} has no such flag; did you mean --${meant}?`, { synopsis, did_you_mean: `--${meant}` });
  }
  return usageError(synopsis);
}

/** `help <command>`: a command of the tool, or a usage error that may name the one meant. */
export function helpTopic(tool: ToolSpec, word: string): string[] {
  const names = (tool.commands ?? []).map(commandName);
  if (names.includes(word)) return [word];
  const meant = closest(word, names);
  const synopsis = `usage: ${toolSynopsis(tool)}`;
  throw meant === undefined ? usageError(synopsis) : commandMeant(tool, undefined, meant, synopsis);
}
