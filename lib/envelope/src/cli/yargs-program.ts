// The yargs half of the runner (cli.md §1–§6): each binary's declarations (command.ts) mounted as yargs
// command modules, yargs' parse, its help, version and completion, and every usage error in its words
// (usage.ts). app.ts imports this module only for a line the fast parser declines (cli/fast-parse.ts), so
// a plain command line never loads or compiles yargs.
import yargs, { type Argv, type CommandModule } from "yargs";
import { commandModule, commandName, EVERYWHERE, GLOBAL_OPTIONS, optionTokens, subcommandFlags, toolSynopsis, usageText, type CommandDecl, type RunState, type ToolSpec } from "./command.js";
import { complete } from "./completion.js";
import type { CliIo } from "./io.js";
import { helpTopic, usageFailure, YARGS_STRINGS } from "./usage.js";

/** yargs-parser's configuration: values stay strings, nothing is renamed, a repeated flag is seen (cli.md §1). */
const PARSER_CONFIG = {
  "parse-numbers": false,
  "parse-positional-numbers": false,
  "dot-notation": false,
  "boolean-negation": false,
  "camel-case-expansion": false,
  "duplicate-arguments-array": true,
  "greedy-arrays": false,
  "short-option-groups": true,
  "strip-aliased": true,
  "unknown-options-as-args": false,
} as const;

/**
 * The yargs program of a tool for one run: strict (an unknown flag, command or positional fails),
 * commands recommended, nothing printed or exited by yargs itself: its output is returned to us and
 * every failure goes to usageFailure.
 */
function program(tool: ToolSpec, run: RunState, argv: string[], io: CliIo): Argv {
  // yargs' own flag: the words of the line being completed follow it.
  const completing = argv.slice(argv.indexOf("--get-yargs-completions") + 1);
  const y = yargs(argv)
    .scriptName(tool.program)
    .locale("en")
    // y18n takes a plural as {one, other}; the typings know only strings.
    .updateStrings(YARGS_STRINGS as unknown as Record<string, string>)
    .parserConfiguration(PARSER_CONFIG)
    .exitProcess(false)
    // An unknown command, flag or positional fails; the usage error names the command or flag meant by
    // usage.ts's measure (yargs' recommendCommands names its pick by a looser one, and not the word typed).
    .strict()
    // Help is not rewrapped: the texts are written in lines of at most 100 columns, and yargs' wrapping
    // follows the terminal (so help would vary) and breaks words.
    .wrap(null)
    .help("help", "this help")
    .alias("help", "h")
    .version("version", "print the version", tool.version)
    .options(Object.fromEntries(Object.entries(GLOBAL_OPTIONS).map(([name, o]) => [name, { type: o.type, describe: o.describe, global: true, ...(o.type === "string" ? { requiresArg: true } : {}) }])))
    .fail((message, err) => {
      throw usageFailure(tool, run, message, err);
    })
    // yargs' completion command under a name no word can be (a word starting with "--" is a flag):
    // yargs would run it before a tool's default command, and strict mode refuses it as a positional.
    // `completion` is the command below, which prints yargs' script.
    // Synchronous: yargs runs a command's handler when an asynchronous completion has not answered yet.
    .completion("--completion", false, (_current: string, argv: Record<string, unknown>) => complete(tool, completing, argv, io));
  if (tool.single) {
    const m = { decl: tool.single, path: [tool.program] };
    return y.usage(usageText(m)).command(commandModule(m, run, true)).command(completionCommand(tool, y));
  }
  y.usage(`Usage: ${toolSynopsis(tool)}\n\n${tool.description}`).group(...EVERYWHERE);
  const named = commandRun(tool, argv);
  if (named !== undefined) return y.command(commandModule({ decl: named, path: [tool.program, commandName(named)] }, run));
  for (const decl of tool.commands ?? []) y.command(commandModule({ decl, path: [tool.program, commandName(decl)] }, run));
  y.command(completionCommand(tool, y));
  // A subcommand's flag before the command's name (cli.md §1) needs the subcommands' flags known here
  // (command.ts); other lines do not, and declaring them costs every start.
  if (flagsBeforeCommand(argv)) y.options(subcommandFlags(tool.commands ?? []));
  // `help <command>` is that command's help (cli.md §6); `help` alone, yargs' own.
  y.command({
    command: "help [command]",
    describe: false,
    handler: (argv) => {
      run.helpTopic = argv.command === undefined ? [] : helpTopic(tool, String(argv.command));
    },
  });
  return y;
}

/** A help, version or completion flag, or a group of short flags (`-h` may hide in one): before `--`, the whole tool is declared. */
const TOOL_WIDE = /^(?:--(?:help|version|get-yargs-completions)(?:=|$)|-[^-])/;

/**
 * The command a line runs when its first word names one and it asks for no help, version or completion:
 * only that command is declared to yargs, which parses and checks the line as it would with every command
 * declared (declaring all of them, and the completion and help commands, costs every start some
 * milliseconds). Any other line (a flag first, a mistyped command, help) declares the whole tool.
 */
function commandRun(tool: ToolSpec, argv: readonly string[]): CommandDecl | undefined {
  if (optionTokens(argv).some((t) => TOOL_WIDE.test(t))) return undefined;
  return tool.commands?.find((decl) => commandName(decl) === argv[0]);
}

/** Does a flag other than the ones every command takes come before the first word that is not a flag? */
function flagsBeforeCommand(argv: readonly string[]): boolean {
  const everywhere = new Set([...Object.keys(GLOBAL_OPTIONS), "help", "h", "version"]);
  for (const t of argv) {
    if (!t.startsWith("-") || t === "--") return false;
    if (!everywhere.has(t.replace(/^-+/, "").split("=")[0]!)) return true;
  }
  return false;
}

/** `<tool> completion`: yargs' script for the shell in $SHELL (bash, or zsh). */
function completionCommand(tool: ToolSpec, y: Argv): CommandModule {
  return {
    command: "completion",
    describe: "print the shell completion script (bash, or zsh when $SHELL is zsh; see the README)",
    // yargs takes the program and the command's name (its typings know neither).
    handler: () => void (y.showCompletionScript as (program: string, command: string) => Argv)(tool.program, "completion"),
  };
}

/** Parse and run; what yargs printed (help, version, a completion script) is returned. */
export async function parseAndRun(tool: ToolSpec, run: RunState, argv: string[], io: CliIo): Promise<string> {
  let printed = "";
  await program(tool, run, argv, io).parseAsync(argv, {}, (_err, _argv, output) => {
    printed = output;
  });
  return printed;
}

