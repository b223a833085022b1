// cli.md §1–§6: the shared command-line runner on yargs. Each binary declares its commands (command.ts);
// this module mounts them as yargs command modules, renders errors by channel class, and turns every
// failure into a documented exit.
import yargs, { type Argv, type CommandModule } from "yargs";
import { resolveSessionArgs } from "./session-args.js";
import { errorEnvelope, errorText, PixirError, usageError } from "../event/errors.js";
import { commandModule, commandName, EVERYWHERE, GLOBAL_OPTIONS, subcommandFlags, synopsisOf, toolSynopsis, usageText, type CommandClass, type CommandContext, type CommandDecl, type Mounted, type ParsedArgs, type RunState, type ToolSpec } from "./command.js";
import { complete } from "./completion.js";
import { Output, ProcessStdin, type CliIo } from "./io.js";
import { resolveWorkspace } from "../store/workspace.js";
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


/** Tokens before a literal `--`: flags after it are positionals, not options. */
function optionTokens(argv: string[]): string[] {
  const end = argv.indexOf("--");
  return end === -1 ? argv : argv.slice(0, end);
}

function commandClass(m: Mounted | undefined, args: ParsedArgs): CommandClass {
  const kind = m?.decl.class ?? "report";
  return typeof kind === "string" ? kind : kind(args);
}

/** cli.md §1: `--json` anywhere before a literal `--`, or the command's other spelling of it. */
function jsonMode(run: RunState): boolean {
  return run.tokens.includes("--json") || run.active?.decl.jsonWhen?.(run.tokens) === true;
}

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
  if (optionTokens([...argv]).some((t) => TOOL_WIDE.test(t))) return undefined;
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
async function parseAndRun(tool: ToolSpec, run: RunState, argv: string[], io: CliIo): Promise<string> {
  let printed = "";
  await program(tool, run, argv, io).parseAsync(argv, {}, (_err, _argv, output) => {
    printed = output;
  });
  return printed;
}

/** Run a tool: parse, then help, version or the command. Never throws. */
export async function runTool(tool: ToolSpec, argv: string[], io: CliIo): Promise<number> {
  const out = new Output(io.stdout, io.signal);
  let args: ParsedArgs | undefined;
  const run: RunState = {
    tokens: optionTokens(argv),
    active: undefined,
    helpTopic: undefined,
    running: undefined,
    execute: async (m, given) => {
      args = given;
      const parsed = await resolveSessionArgs(m.decl, given, io);
      args = parsed;
      const code = await m.decl.handler!(parsed, makeContext(m, parsed, io, out, jsonMode(run)));
      await out.finish();
      return code;
    },
  };
  try {
    // A tool of several commands typed alone prints its help (cli.md §6).
    let printed = await parseAndRun(tool, run, tool.commands && argv.length === 0 ? ["--help"] : argv, io);
    if (run.helpTopic !== undefined) printed = await parseAndRun(tool, { ...run, helpTopic: undefined }, [...run.helpTopic, "--help"], io);
    if (run.running !== undefined) return await run.running;
    // Flags and no command (`pixir --json`), or a lone `--`: nothing to run. (A completion may be empty.)
    const completion = run.tokens.includes("--get-yargs-completions");
    if (printed === "" && !completion) throw usageError(`usage: ${toolSynopsis(tool)}`);
    if (printed !== "") await out.write(`${printed}\n`);
    await out.finish();
    return 0;
  } catch (thrown) {
    const { asNamedError } = await import("../event/os-fault.js");
    const err = asNamedError(thrown, workspaceOf(args, io));
    if (err.kind === "internal_error" && !(thrown instanceof PixirError)) (err as PixirError & { cause?: unknown }).cause = thrown;
    // A usage error comes before the arguments parse: the command's class is judged from the bare
    // flags on the line (`pixir-fork --dry-run --json --bogus` is a report command).
    const bare = { positionals: [], flags: Object.fromEntries(run.tokens.filter((t) => /^--[a-z-]+$/.test(t)).map((t) => [t.slice(2), true])) };
    await renderError(err, io, out, commandClass(run.active, args ?? bare), jsonMode(run));
    return err.exitCode;
  }
}

function renderError(thrown: PixirError, io: CliIo, out: Output, kind: CommandClass, json: boolean): Promise<void> | void {
  const err = thrown;
  if (err.kind === "internal_error" && io.env.PIXIR_DEBUG === "1") {
    const cause = (err as PixirError & { cause?: unknown }).cause;
    io.stderr.write(`${(cause as Error | undefined)?.stack ?? err.stack}\n`);
  }
  const envelope = `${JSON.stringify(errorEnvelope(err))}\n`;
  // When stdout itself failed, the envelope goes where it can still be read.
  if (json && kind === "report" && !out.failed) return out.write(envelope).catch(() => void io.stderr.write(envelope));
  io.stderr.write(json ? envelope : errorText(err));
}

/** The Workspace, for an error's path; undefined when the arguments do not name a usable one. */
function workspaceOf(args: ParsedArgs | undefined, io: CliIo): string | undefined {
  try {
    return resolveWorkspace(args?.flags.workspace as string | undefined, io.env, io.cwd);
  } catch {
    return undefined;
  }
}

function makeContext(m: Mounted, args: ParsedArgs, io: CliIo, out: Output, json: boolean): CommandContext {
  // Every writer hands io.env to acquireLease, which reads PIXIR_TAKE_OVER_DEAD_WRITER.
  if (m.decl.writer && args.flags["take-over-dead-writer"] === true) io = { ...io, env: { ...io.env, PIXIR_TAKE_OVER_DEAD_WRITER: "1" } };
  let workspace: string | undefined;
  const kind = commandClass(m, args);
  return {
    io,
    out,
    json,
    program: m.path.join(" "),
    synopsis: `usage: ${synopsisOf(m)}`,
    signal: io.signal,
    workspace() {
      workspace ??= resolveWorkspace(args.flags.workspace as string | undefined, io.env, io.cwd);
      return workspace;
    },
    warn(code, text, details = {}) {
      // A report command's --json output is one document and nothing on stderr (cli.md §2); what a
      // warning says is in the result (e.g. a summary's model_assisted_fallback_reason).
      if (json && kind === "report") return;
      io.stderr.write(json && kind === "stream" ? `${JSON.stringify({ warning: { kind: code, details } })}\n` : `warning: ${code}: ${text}\n`);
    },
    async report(result, text, jsonText) {
      try {
        if (json) await out.write(`${jsonText ?? JSON.stringify(result)}\n`);
        else {
          const lines = Array.isArray(text) ? text : [text];
          if (lines.length > 0) await out.write(`${lines.join("\n")}\n`);
        }
        await out.finish();
      } catch (err) {
        // The work is done and durable; only its report is lost. Say so, lest a retry do it twice.
        if (!(err instanceof PixirError) || result.recorded !== true) throw err;
        throw new PixirError(err.kind, "the command's changes were recorded, but its report could not be written to stdout", {
          ...err.details,
          recorded: true,
          next_actions: ["do not run the command again: its changes are in the workspace", "inspect them with pixir-log cat or pixir-log ls"],
        });
      }
    },
    hint(text) {
      if (!json) io.stderr.write(`${text}\n`);
    },
    progress(prefix) {
      return io.stderrIsTty && !json ? (text) => io.stderr.write(`${prefix}: ${text}\n`) : undefined;
    },
  };
}

/** The bin entry: wires process signals to an AbortSignal and sets the exit code. */
export async function runProcess(
  main: (argv: string[], io: CliIo) => Promise<number>,
  makeIo: (signal: AbortSignal) => CliIo,
): Promise<void> {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort(new PixirError("interrupted", undefined, { signal }));
  };
  // SIGHUP (the terminal went away) ends a run as SIGINT and SIGTERM do: writers roll back, exit 130.
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);
  const io = makeIo(controller.signal);
  const code = await main(process.argv.slice(2), io);
  process.exitCode = code;
  for (const s of signals) process.off(s, onSignal);
  if (io.stdin instanceof ProcessStdin) io.stdin.close(controller.signal.aborted);
  // Output still queued for a reader that has stopped reading would keep an interrupted run alive
  // until that reader drains the pipe (stdout cannot be destroyed); the run has failed, so what it had
  // not yet written is dropped.
  if (controller.signal.aborted && process.stdout.writableLength > 0) process.exit(code);
}
