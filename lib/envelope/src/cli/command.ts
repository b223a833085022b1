// Flags declared once (STYLE.md): a command of any tool is one CommandDecl. yargs reads it as a command
// module (command, describe, a builder declaring every option's type, describe, choices, default and the
// examples, a handler that runs the lazily imported implementation), and the synopsis of a usage error,
// the help, `help <command>`, "did you mean", completion and the parse all come from it.
import type { Argv, CommandModule, Options } from "yargs";
import { usageError } from "../event/errors.js";
import type { CliIo, Output } from "./io.js";

export type CommandClass = "stream" | "report";

/** What a value flag takes: the words of `<flag> requires a <kind> value` (cli.md §1). */
export type ValueKind = "number" | "positive integer" | "session id" | "directory" | "path" | "command" | "format" | "strategy" | "type" | "mode" | "text";

export interface OptionDecl {
  type: "boolean" | "string";
  describe: string;
  /** Every string option says what it takes; a session id is offered by shell completion... */
  value?: ValueKind;
  /** ...unless the flag names a Session to be made (a fork's --child-id); an existing one's unique prefix is resolved. */
  newSession?: true;
  /** The value's name in the synopsis (default: from the kind, or the choices). */
  placeholder?: string;
  choices?: readonly string[];
  default?: string;
  /** May be given more than once (values collected in order). */
  repeatable?: boolean;
}

export interface PositionalDecl {
  describe: string;
  /** A session id is offered by shell completion, and a unique prefix of an existing one is resolved (archive.md §1)... */
  value?: "session id";
  /** ...unless the Session may be made by the command (append, write): then the id is taken literally. */
  newSession?: true;
}

export interface ParsedArgs {
  /** The command's positionals in the order they are declared (a variadic one spread). */
  positionals: string[];
  flags: Record<string, string | boolean | string[] | undefined>;
}

export interface CommandContext {
  io: CliIo;
  out: Output;
  json: boolean;
  /** The command as typed, e.g. "pixir-log append" or "pixir append": recorded in leases and release records. */
  program: string;
  /** `usage: <synopsis>`, for the usage errors a command finds itself (a flag's rule). */
  synopsis: string;
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

/**
 * One command. `command` is yargs' command string: the name, then the positionals (`cat <id>`,
 * `check [ids..]`, `pi <files..>`). A command with `commands` is a group (`pixir log`, `pixir import`).
 */
export interface CommandDecl {
  command: string;
  /** One line: the command in its tool's list of commands. */
  describe: string;
  /** The paragraphs of the command's own help (default: describe). */
  description?: string;
  /** cli.md §2 (default report). */
  class?: CommandClass | ((args: ParsedArgs) => CommandClass);
  /** Takes a Writer Lease: also accepts --take-over-dead-writer (writer-lease.md §9a). */
  writer?: boolean;
  positionals?: Readonly<Record<string, PositionalDecl>>;
  options?: Readonly<Record<string, OptionDecl>>;
  /** Command lines; `$0` is the command as typed (`pixir-log cat`, or `pixir log cat` under the wrapper). */
  examples?: readonly string[];
  /** cli.md §5: a spelling of --json besides --json (pixir-tree's `--format json`), read from the tokens. */
  jsonWhen?: (tokens: readonly string[]) => boolean;
  /** Lazily imports the implementation and runs it; resolves to the exit code. */
  handler?: (args: ParsedArgs, ctx: CommandContext) => Promise<number>;
  commands?: readonly CommandDecl[];
  /** What a group's command word is called in a usage error ("lock action", "import format"; default "command"). */
  subcommandWord?: string;
}

export interface ToolSpec {
  program: string;
  version: string;
  /** The paragraph of the tool's help. */
  description: string;
  /** A tool of several commands (pixir-log, pixir)... */
  commands?: readonly CommandDecl[];
  /** ...or a tool that is one command (pixir-fork): its name in `command` is the program's. */
  single?: CommandDecl;
}

/** The flags every command accepts (cli.md §1); -h/--help and --version are yargs' own. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionDecl>> = {
  workspace: { type: "string", value: "directory", describe: "the Workspace (default: $PIXIR_WORKSPACE, else the current directory)" },
  json: { type: "boolean", describe: "machine output" },
};

/** writer-lease.md §9a: every writer accepts it (the same as PIXIR_TAKE_OVER_DEAD_WRITER=1). */
export const WRITER_OPTIONS: Readonly<Record<string, OptionDecl>> = {
  "take-over-dead-writer": { type: "boolean", describe: "take over a stale lease whose holder provably died on this host" },
};

/** The help's group of the flags every command takes, listed after a command's own. */
export const EVERYWHERE: readonly [string[], string] = [[...Object.keys(GLOBAL_OPTIONS), "help", "version"], "Options everywhere:"];

/** A command where it is mounted: `path` is the words typed, program first (`["pixir", "log", "cat"]`). */
export interface Mounted {
  decl: CommandDecl;
  path: readonly string[];
}

export const commandName = (decl: CommandDecl): string => decl.command.split(" ")[0]!;

/** The positional names of a command string, in order, and whether each is variadic. */
export function positionalsOf(decl: CommandDecl): Array<{ name: string; required: boolean; variadic: boolean }> {
  return decl.command
    .split(" ")
    .slice(1)
    .map((w) => {
      const m = /^([<[])([\w-]+)(\.\.)?[>\]]$/.exec(w);
      if (m === null) throw new Error(`${decl.command}: not a positional: ${w}`);
      return { name: m[2]!, required: m[1] === "<", variadic: m[3] !== undefined };
    });
}

/** The options a mounted command parses: its own, the writer's, and the global ones. */
export function optionsOf(decl: CommandDecl): Record<string, OptionDecl> {
  return { ...decl.options, ...(decl.writer ? WRITER_OPTIONS : {}), ...GLOBAL_OPTIONS };
}

const PLACEHOLDERS: Record<ValueKind, string> = {
  number: "N",
  "positive integer": "N",
  "session id": "ID",
  directory: "DIR",
  path: "PATH",
  command: "CMD",
  format: "F",
  strategy: "S",
  type: "T",
  mode: "MODE",
  text: "TEXT",
};

function optionSynopsis(name: string, o: OptionDecl): string {
  const value = o.type === "boolean" ? "" : ` ${o.placeholder ?? (o.choices ? o.choices.join("|") : PLACEHOLDERS[o.value ?? "text"])}`;
  return `[--${name}${value}]${o.repeatable ? "..." : ""}`;
}

/**
 * The synopsis of a mounted command, from its declaration: `pixir-log cat <id> [--raw] [--from-seq N] …`;
 * a tool that is one command also names the flags every command takes, as a tool's own synopsis does.
 */
export function synopsisOf(m: Mounted, withGlobals = m.path.length === 1): string {
  const { decl, path } = m;
  const words = [...path];
  if (decl.commands) words.push(`<${decl.commands.map(commandName).join("|")}>`, "[args]");
  for (const p of positionalsOf(decl)) {
    const one = p.variadic ? `<${p.name.replace(/s$/, "")}>...` : `<${p.name}>`;
    words.push(p.required ? one : `[${one}]`);
  }
  for (const [name, o] of Object.entries({ ...decl.options, ...(decl.writer ? WRITER_OPTIONS : {}) })) words.push(optionSynopsis(name, o));
  if (withGlobals) words.push(...Object.entries(GLOBAL_OPTIONS).map(([name, o]) => optionSynopsis(name, o)));
  return words.join(" ");
}

/** Tokens before a literal `--`: flags after it are positionals, not options. */
export function optionTokens(argv: readonly string[]): string[] {
  const end = argv.indexOf("--");
  return end === -1 ? [...argv] : argv.slice(0, end);
}

/** The state of one run of a tool, shared by the command modules mounted for it. */
export interface RunState {
  /** The argv tokens before a literal `--` (cli.md §1: flags after it are positionals). */
  readonly tokens: readonly string[];
  /** The deepest command whose builder ran: its synopsis and class answer a usage error. */
  active: Mounted | undefined;
  /** The help asked for by `help <command>` or a bare group (`pixir log`): the words after the program. */
  helpTopic: string[] | undefined;
  /** Runs a command's handler with its context; resolves to the exit code. */
  execute(m: Mounted, args: ParsedArgs): Promise<number>;
  /** The command started by a handler, awaited once yargs' parse is done. */
  running: Promise<number> | undefined;
}

/** yargs options of a declaration's options. */
function yargsOptions(options: Record<string, OptionDecl>): Record<string, Options> {
  const out: Record<string, Options> = {};
  for (const [name, o] of Object.entries(options)) {
    out[name] = {
      type: o.type,
      describe: o.describe,
      // A value flag followed by nothing or by another flag has no value (cli.md §1).
      ...(o.type === "string" ? { requiresArg: true } : {}),
      ...(o.choices ? { choices: [...o.choices] } : {}),
      ...(o.default !== undefined ? { default: o.default } : {}),
    };
  }
  return out;
}

/**
 * A group finds its subcommand by yargs' parse of the line with the group's own options only; a flag of
 * a subcommand before the subcommand's name (`pixir-log --raw cat s`, cli.md §1: flags anywhere) would
 * take that name as its value. So the group knows every subcommand's flag by type, hidden and not
 * passed down: each subcommand then parses with its own.
 */
export function subcommandFlags(commands: readonly CommandDecl[]): Record<string, Options> {
  const out: Record<string, Options> = {};
  const walk = (list: readonly CommandDecl[]) => {
    for (const c of list) {
      for (const [name, o] of Object.entries({ ...c.options, ...(c.writer ? WRITER_OPTIONS : {}) })) out[name] = { type: o.type, hidden: true, global: false };
      if (c.commands) walk(c.commands);
    }
  };
  walk(commands);
  return out;
}

/**
 * What yargs' parse lets through and cli.md §1 or our contract refuses (docs/cli-contract.md "Parsing"):
 * a switch given a value (yargs reads `--dry-run=yes` as false), a single-value flag given twice, and an
 * empty directory, path or command, which would quietly mean the current directory or nothing at all.
 */
export function checkFlags(m: Mounted, argv: Record<string, unknown>, tokens: readonly string[]): true {
  const options = optionsOf(m.decl);
  const synopsis = `usage: ${synopsisOf(m)}`;
  for (const t of tokens) {
    const eq = t.indexOf("=");
    if (t.startsWith("--") && eq > 2 && options[t.slice(2, eq)]?.type === "boolean") throw usageError(synopsis, `${t.slice(0, eq)} takes no value`);
  }
  for (const [name, o] of Object.entries(options)) {
    const v = argv[name];
    if (Array.isArray(v) && !o.repeatable) throw usageError(synopsis, `--${name} may be given only once`);
    if (v === "" && (o.value === "directory" || o.value === "path" || o.value === "command")) throw usageError(synopsis, `--${name} requires a ${o.value} value`);
  }
  return true;
}

/**
 * The arguments a command's implementation reads, from yargs' argv (or the fast parser's record of the same
 * shape, cli/fast-parse.ts): positionals by name, each option's value, a repeated one as an array.
 */
export function parsedArgs(decl: CommandDecl, argv: Record<string, unknown>): ParsedArgs {
  const positionals: string[] = [];
  for (const p of positionalsOf(decl)) {
    const v = argv[p.name];
    if (Array.isArray(v)) positionals.push(...v.map(String));
    else if (v !== undefined) positionals.push(String(v));
  }
  const flags: ParsedArgs["flags"] = {};
  for (const [name, o] of Object.entries(optionsOf(decl))) {
    const v = argv[name] as string | boolean | string[] | undefined;
    flags[name] = o.repeatable && typeof v === "string" ? [v] : v;
  }
  return { positionals, flags };
}

/**
 * The yargs command module of a declaration mounted at `path`. Its builder records the command as the
 * run's active one (a usage error is answered with its synopsis and in its class).
 */
export function commandModule(m: Mounted, run: RunState, asDefault = false): CommandModule {
  const { decl, path } = m;
  const invocation = path.join(" ");
  return {
    command: asDefault ? decl.command.replace(/^\S+/, "$0") : decl.command,
    // A tool that is one command lists only its other commands (completion).
    describe: asDefault ? false : decl.describe,
    // yargs tells a builder whether help (or the version) is asked for: the help's texts are declared only then.
    builder: (y: Argv, helpOrVersion?: boolean) => {
      run.active = m;
      for (const [name, p] of Object.entries(decl.positionals ?? {})) y.positional(name, { type: "string", describe: p.describe });
      const own = yargsOptions({ ...decl.options, ...(decl.writer ? WRITER_OPTIONS : {}) });
      y.options(own);
      for (const sub of decl.commands ?? []) y.command(commandModule({ decl: sub, path: [...path, commandName(sub)] }, run));
      if (decl.commands) y.options(subcommandFlags(decl.commands));
      if (helpOrVersion) {
        // The usage of a tool that is one command is the tool's own (program() sets it).
        if (!asDefault) y.usage(usageText(m));
        // The command's own flags first, then the flags every command takes (a group made earlier).
        y.group(Object.keys(own), "Options:");
        if (asDefault) y.group(...EVERYWHERE);
        for (const example of decl.examples ?? []) y.example(example.replaceAll("$0", invocation), "");
      }
      return y.check((argv) => checkFlags(m, argv, run.tokens), false);
    },
    // Synchronous: the command is started and awaited after the parse. (yargs renders and keeps the
    // whole help when a handler returns a promise, a few milliseconds of every command's start.)
    handler: (argv) => {
      // A group typed without a subcommand shows its help, as a tool typed alone does (cli.md §6).
      if (decl.commands) {
        run.helpTopic = path.slice(1);
        return;
      }
      // Words after a literal `--` are positionals too: they join a final variadic positional
      // (`pixir search -- foo -bar`); one more than the command takes is a usage error.
      const rest = argv._.slice(path.length - 1).map(String);
      if (rest.length > 0 && positionalsOf(decl).at(-1)?.variadic !== true) throw usageError(`usage: ${synopsisOf(m)}`);
      const parsed = parsedArgs(decl, argv);
      parsed.positionals.push(...rest);
      run.running = run.execute(m, parsed);
    },
  };
}

/** The head of a command's help: its synopsis, then what it does. */
export function usageText(m: Mounted): string {
  return `Usage: ${synopsisOf(m)}\n\n${m.decl.description ?? m.decl.describe}`;
}

/** Every mounted command of a tool, with its path (for help topics, completion and the tests). */
export function mountedCommands(tool: ToolSpec): Mounted[] {
  if (tool.single) return [{ decl: tool.single, path: [tool.program] }];
  const out: Mounted[] = [];
  const walk = (list: readonly CommandDecl[], path: string[]) => {
    for (const decl of list) {
      const at = [...path, commandName(decl)];
      out.push({ decl, path: at });
      if (decl.commands) walk(decl.commands, at);
    }
  };
  walk(tool.commands ?? [], [tool.program]);
  return out;
}

/** The tool's own synopsis: `pixir-log <cat|write|…> [args] [--workspace DIR] [--json]`. */
export function toolSynopsis(tool: ToolSpec): string {
  if (tool.single) return synopsisOf({ decl: tool.single, path: [tool.program] });
  return synopsisOf({ decl: { command: tool.program, describe: "", commands: tool.commands }, path: [tool.program] }, true);
}
