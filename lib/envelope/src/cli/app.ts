// cli.md §1–§6: the shared command-line runner. Each binary describes its commands; this module
// parses (yargs-parser), renders errors by channel class, and turns every failure into a documented exit.
import { setFlagsFromString } from "node:v8";
import { errorEnvelope, errorText, PixirError, usageError } from "../event/errors.js";
import { asNamedError } from "../event/os-fault.js";
import { resolveWorkspace } from "../store/paths.js";
import { Output, ProcessStdin, type CliIo } from "./io.js";
import { GROW_PIPE_AFTER, pipeBytes } from "./pipe-size.js";

export type CommandClass = "stream" | "report";

export interface OptionSpec {
  type: "string" | "boolean";
  /** May be given more than once (values collected in order). */
  repeatable?: boolean;
  /** Words for the "requires a <kind> value" rule, e.g. "number", "session id". */
  valueKind?: string;
}

export interface ParsedArgs {
  positionals: string[];
  flags: Record<string, string | boolean | string[] | undefined>;
}

export interface CommandContext {
  io: CliIo;
  out: Output;
  json: boolean;
  /** e.g. "pixir-log append": recorded in leases and release records. */
  program: string;
  workspace(): string;
  signal: AbortSignal | undefined;
  /** One warning line on stderr (cli.md §2). */
  warn(code: string, text: string, details?: Record<string, unknown>): void;
  /**
   * Print a report result: one JSON document with --json, else the text lines. `jsonText`, when given,
   * is that document already written (values JSON.stringify cannot write, such as Jason's `1.0`).
   */
  report(result: Record<string, unknown>, text: string | string[], jsonText?: string): Promise<void>;
  /** A line on stderr in text mode only (hints such as forkNextHint). */
  hint(text: string): void;
  /**
   * Where a long job writes its progress lines, `<prefix>: <text>` on stderr; undefined unless stderr is
   * a terminal and the output is text (with --json, stderr stays empty).
   */
  progress(prefix: string): ((text: string) => void) | undefined;
}

export interface CommandSpec {
  /** Subcommand name; "" for a tool that is a single command. */
  name: string;
  synopsis: string;
  help: string;
  kind: CommandClass | ((args: ParsedArgs) => CommandClass);
  positionals: { min: number; max: number };
  options: Record<string, OptionSpec>;
  /** Lazily loads and runs the implementation; returns the exit code. */
  run?: (args: ParsedArgs, ctx: CommandContext) => Promise<number>;
  /**
   * The command takes a Writer Lease: it also accepts `--take-over-dead-writer`, which is the same as
   * PIXIR_TAKE_OVER_DEAD_WRITER=1 (writer-lease.md §9a: every writer accepts either).
   */
  writer?: boolean;
  /** Hands the remaining argv to another tool's main (the wrapper's `pixir log`, `pixir tree`). */
  delegate?: (argv: string[], io: CliIo) => Promise<number>;
}

export interface ToolSpec {
  program: string;
  version: string;
  help: string;
  synopsis: string;
  commands: CommandSpec[];
}

/** The help paragraph for the flags every command accepts (cli.md §1). */
export const COMMON_OPTIONS_HELP = `
Options everywhere:
  --workspace DIR  the Workspace (default: $PIXIR_WORKSPACE, else the current directory)
  --json           machine output
  -h, --help       this help
  --version        print the version`;

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  workspace: { type: "string", valueKind: "directory" },
  json: { type: "boolean" },
};

const WRITER_OPTIONS: Record<string, OptionSpec> = {
  "take-over-dead-writer": { type: "boolean" },
};
const TAKE_OVER_FLAG = "--take-over-dead-writer";
const TAKE_OVER_TEXT = "take over a stale lease whose holder provably died on this host";

/** A writer's help names --take-over-dead-writer, after its own flags, where the text does not yet. */
function helpOf(command: CommandSpec): string {
  if (!command.writer || command.help.includes(TAKE_OVER_FLAG)) return command.help;
  const at = command.help.indexOf("\nOptions everywhere:");
  const before = at === -1 ? command.help.trimEnd() : command.help.slice(0, at);
  const line = takeOverLine(before);
  return at === -1 ? `${before}\n${line}\n` : `${before}${line}\n${command.help.slice(at)}`;
}

/**
 * The flag's line in the column of the flags above it; where the flag is too long for that column, its
 * text goes on the next line in that column, as in most tools' help.
 */
function takeOverLine(help: string): string {
  // `  --flag VALUE   text`: the flag and its value words are one space apart, its text two or more.
  const last = help
    .split("\n")
    .map((l) => /^( {2}-\S*(?: \S+)*?)( {2,})\S/.exec(l))
    .filter((m) => m !== null)
    .at(-1);
  const flag = `  ${TAKE_OVER_FLAG}`;
  if (last === undefined) return `${flag}   ${TAKE_OVER_TEXT}`;
  const column = last[1]!.length + last[2]!.length;
  return flag.length + 2 <= column ? `${flag.padEnd(column)}${TAKE_OVER_TEXT}` : `${flag}\n${" ".repeat(column)}${TAKE_OVER_TEXT}`;
}

const PARSER_CONFIG = {
  "parse-numbers": false,
  "populate--": false,
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

const isHelpToken = (t: string) => t === "-h" || t === "--help";

/** Tokens before a literal `--`: flags after it are positionals, not options. */
function optionTokens(argv: string[]): string[] {
  const end = argv.indexOf("--");
  return end === -1 ? argv : argv.slice(0, end);
}

/**
 * Find the subcommand: the first positional token, skipping flags and the values of flags that take one
 * (cli.md §1: flags may appear anywhere, so `pixir-log --to-seq 1 cat s` names `cat`). Before the
 * subcommand is known, a flag takes a value if it does in any command of the tool.
 */
function findSubcommand(argv: string[], tool: ToolSpec): { name: string | undefined; index: number } {
  const takesValue = (flag: string) => GLOBAL_OPTIONS[flag]?.type === "string" || tool.commands.some((c) => c.options[flag]?.type === "string");
  const tokens = optionTokens(argv);
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.startsWith("-")) {
      const flag = t.replace(/^--?/, "");
      if (!flag.includes("=") && takesValue(flag)) i++;
      continue;
    }
    return { name: t, index: i };
  }
  return { name: undefined, index: -1 };
}

/**
 * An empty directory, path or command (`--workspace ""`, an unset "$WS") would quietly mean the current
 * directory or nothing at all: it is no value. Other kinds are refused by their own checks, with the
 * spec's errors (an empty session id is invalid_args `empty`; an empty `--reason` is `--reason requires text`).
 */
const emptyIsNoValue = (spec: OptionSpec): boolean => spec.valueKind === "directory" || spec.valueKind === "path" || spec.valueKind === "command";

/**
 * cli.md §1: parse with yargs-parser (the parser inside yargs; loading all of yargs costs tens of
 * milliseconds at every start). Usage errors carry the synopsis or the flag rule, never the token.
 */
async function parseArgs(argv: string[], command: CommandSpec): Promise<ParsedArgs> {
  const { default: parse } = await import("yargs-parser");
  const options = { ...GLOBAL_OPTIONS, ...(command.writer ? WRITER_OPTIONS : {}), ...command.options };
  const tokens = optionTokens(argv);
  // A value flag followed by nothing, or by another `--` token, has no value.
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.startsWith("--")) continue;
    // A switch takes no value: yargs-parser would read `--dry-run=yes` as false and run for real.
    if (t.includes("=")) {
      const spec = options[t.slice(2, t.indexOf("="))];
      if (spec?.type === "boolean") throw usageError(command.synopsis);
      if (spec?.type === "string" && t.endsWith("=") && emptyIsNoValue(spec)) throw usageError(command.synopsis, `${t.slice(0, -1)} requires a ${spec.valueKind ?? "text"} value`);
      continue;
    }
    const spec = options[t.slice(2)];
    if (spec?.type !== "string") continue;
    const next = tokens[i + 1];
    if (next === undefined || next.startsWith("--") || (next === "" && emptyIsNoValue(spec))) throw usageError(command.synopsis, `${t} requires a ${spec.valueKind ?? "text"} value`);
    i++;
  }
  const names = Object.keys(options);
  const parsed = parse(argv, {
    string: names.filter((n) => options[n]!.type === "string"),
    boolean: names.filter((n) => options[n]!.type === "boolean"),
    configuration: PARSER_CONFIG,
  }) as Record<string, unknown> & { _: unknown[] };
  for (const key of Object.keys(parsed)) {
    if (key !== "_" && key !== "--" && options[key] === undefined) throw usageError(command.synopsis);
  }
  const flags: ParsedArgs["flags"] = {};
  for (const [name, spec] of Object.entries(options)) {
    let v = parsed[name] as string | boolean | string[] | boolean[] | undefined;
    if (Array.isArray(v) && !spec.repeatable) throw usageError(command.synopsis, `--${name} may be given only once`);
    if (spec.type === "boolean" && typeof v !== "boolean" && v !== undefined) throw usageError(command.synopsis);
    if (spec.repeatable && typeof v === "string") v = [v];
    flags[name] = v as ParsedArgs["flags"][string];
  }
  const positionals = (parsed._ ?? []).map(String);
  if (positionals.length < command.positionals.min || positionals.length > command.positionals.max) {
    throw usageError(command.synopsis);
  }
  return { positionals, flags };
}

function commandClass(command: CommandSpec | undefined, args: ParsedArgs | undefined): CommandClass {
  if (command === undefined) return "report";
  if (typeof command.kind === "string") return command.kind;
  return command.kind(args ?? { positionals: [], flags: {} });
}

/** Text of a tool run by the wrapper, with the wrapper's name for it (CliIo.programAlias). */
function shownAs(io: CliIo, text: string): string {
  return io.programAlias === undefined ? text : text.split(io.programAlias[0]).join(io.programAlias[1]);
}

function renderError(thrown: PixirError, io: CliIo, out: Output, kind: CommandClass, json: boolean): Promise<void> | void {
  let err = thrown;
  if (err.kind === "usage" && io.programAlias !== undefined) {
    const synopsis = typeof err.details.synopsis === "string" ? shownAs(io, err.details.synopsis) : err.details.synopsis;
    err = new PixirError("usage", shownAs(io, err.message), { ...err.details, synopsis });
  }
  if (err.kind === "internal_error" && io.env.PIXIR_DEBUG === "1") {
    const cause = (err as PixirError & { cause?: unknown }).cause;
    io.stderr.write(`${(cause as Error | undefined)?.stack ?? err.stack}\n`);
  }
  const envelope = `${JSON.stringify(errorEnvelope(err))}\n`;
  // When stdout itself failed, the envelope goes where it can still be read.
  if (json && kind === "report" && !out.failed) return out.write(envelope).catch(() => void io.stderr.write(envelope));
  io.stderr.write(json ? envelope : errorText(err));
}

/** Run a tool: help and version first, then parse, then the command. Never throws. */
export async function runTool(tool: ToolSpec, argv: string[], io: CliIo): Promise<number> {
  const out = new Output(io.stdout, io.signal);
  const tokens = optionTokens(argv);
  const json = tokens.includes("--json");
  const single = tool.commands.length === 1 && tool.commands[0]!.name === "";
  const sub = single ? { name: "", index: -1 } : findSubcommand(argv, tool);
  // `help <command>` is that command's help.
  const helpFor = !single && sub.name === "help" ? tool.commands.find((c) => c.name === argv[sub.index + 1] && c.name !== "") : undefined;
  const command = helpFor ?? tool.commands.find((c) => c.name === sub.name);

  if (helpFor?.delegate) return helpFor.delegate(["--help"], io);
  if (command?.delegate) {
    const rest = [...argv.slice(0, sub.index), ...argv.slice(sub.index + 1)];
    return command.delegate(rest, io);
  }
  let args: ParsedArgs | undefined;
  try {
    // `help <no such command>` names nothing to help with.
    const helpTopic = !single && sub.name === "help" ? argv[sub.index + 1] : undefined;
    if (helpTopic !== undefined && !helpTopic.startsWith("-") && helpFor === undefined) throw usageError(tool.synopsis);
    // Help when asked, or for a bare tool name; a lone `--` is no subcommand, so a usage error below.
    if (tokens.some(isHelpToken) || (!single && argv.length === 0) || (!single && sub.name === "help")) {
      await out.write(shownAs(io, command ? helpOf(command) : tool.help));
      await out.finish();
      return 0;
    }
    if (tokens.includes("--version")) {
      await out.write(`${tool.version}\n`);
      await out.finish();
      return 0;
    }
    if (command === undefined) throw usageError(tool.synopsis);
    const pipe = pipeBytes(io.env);
    if (pipe > 0 && io.growStdoutPipe !== undefined) out.growPipeAfter(GROW_PIPE_AFTER, () => io.growStdoutPipe!(pipe));
    const rest = single ? argv : [...argv.slice(0, sub.index), ...argv.slice(sub.index + 1)];
    args = await parseArgs(rest, command);
    const ctx = makeContext(tool, command, args, io, out, json);
    const code = await command.run!(args, ctx);
    await out.finish();
    return code;
  } catch (thrown) {
    const err = asNamedError(thrown, workspaceOf(args, io));
    if (err.kind === "internal_error" && !(thrown instanceof PixirError)) (err as PixirError & { cause?: unknown }).cause = thrown;
    // A usage error comes before the arguments parse: the command's class is judged from the bare
    // flags on the line (`pixir-fork --dry-run --json --bogus` is a report command).
    const bare = { positionals: [], flags: Object.fromEntries(tokens.filter((t) => /^--[a-z-]+$/.test(t)).map((t) => [t.slice(2), true])) };
    await renderError(err, io, out, commandClass(command, args ?? bare), json);
    return err.exitCode;
  }
}

/** The Workspace, for an error's path; undefined when the arguments do not name a usable one. */
function workspaceOf(args: ParsedArgs | undefined, io: CliIo): string | undefined {
  try {
    return resolveWorkspace(args?.flags.workspace as string | undefined, io.env, io.cwd);
  } catch {
    return undefined;
  }
}

function makeContext(tool: ToolSpec, command: CommandSpec, args: ParsedArgs, io: CliIo, out: Output, json: boolean): CommandContext {
  // Every writer hands io.env to acquireLease, which reads PIXIR_TAKE_OVER_DEAD_WRITER.
  if (command.writer && args.flags["take-over-dead-writer"] === true) io = { ...io, env: { ...io.env, PIXIR_TAKE_OVER_DEAD_WRITER: "1" } };
  let workspace: string | undefined;
  const kind = commandClass(command, args);
  return {
    io,
    out,
    json,
    program: command.name ? `${tool.program} ${command.name}` : tool.program,
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

/** cli.md §1: integers match ^\+?[0-9]+$ and lie in 0..2^53−1. */
export function parseNonNegativeInt(flag: string, value: string | undefined, synopsis: string, positive = false): number | undefined {
  if (value === undefined) return undefined;
  const rule = `--${flag} must be ${positive ? "a positive integer" : "a non-negative integer"}`;
  if (!/^\+?[0-9]+$/.test(value)) throw usageError(synopsis, rule);
  const n = Number(value.replace(/^\+/, ""));
  if (!Number.isSafeInteger(n) || (positive && n === 0)) throw usageError(synopsis, rule);
  return n;
}

export const stringFlag = (args: ParsedArgs, name: string): string | undefined => args.flags[name] as string | undefined;
export const boolFlag = (args: ParsedArgs, name: string): boolean => args.flags[name] === true;
export const listFlag = (args: ParsedArgs, name: string): string[] => (args.flags[name] as string[] | undefined) ?? [];

/**
 * The bin entry: wires process signals to an AbortSignal and sets the exit code. Unless `steadyNursery`
 * says no for these arguments, V8's young generation is kept from growing: a reader checking a large
 * Log makes short-lived objects fast enough that V8 would grow it to 3 × 16 MiB, which alone takes
 * `pixir-log cat` of 1 GiB past its 128 MiB bound (docs/performance.md). The Session Tree opts out:
 * it is bound by time, not by that limit.
 */
export async function runProcess(
  main: (argv: string[], io: CliIo) => Promise<number>,
  makeIo: (signal: AbortSignal) => CliIo,
  steadyNursery: (argv: string[]) => boolean = () => true,
): Promise<void> {
  if (steadyNursery(process.argv.slice(2))) setFlagsFromString("--semi-space-growth-factor=1");
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort(new PixirError("interrupted", undefined, { signal }));
  };
  // SIGHUP (the terminal went away) ends a run as SIGINT and SIGTERM do: writers roll back, exit 130.
  const signals: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
  for (const s of signals) process.on(s, onSignal);
  // stderr carries diagnostics only: one that has gone away (a closed pipe) must not fail the command
  // or cost its output. A model command's stderr is forwarded there; warnings and hints go there.
  process.stderr.on("error", () => undefined);
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
