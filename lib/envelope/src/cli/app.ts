// cli.md §1–§6: the shared command-line runner. Each binary declares its commands (command.ts); a plain
// line is parsed from the declarations (fast-parse.ts), any other by yargs (yargs-program.ts, loaded only
// then); this module runs the command, renders errors by channel class, and turns every failure into a
// documented exit.
import { resolveSessionArgs } from "./session-args.js";
import { errorEnvelope, errorText, PixirError, usageError } from "../event/errors.js";
import { optionTokens, synopsisOf, toolSynopsis, type CommandClass, type CommandContext, type Mounted, type ParsedArgs, type RunState, type ToolSpec } from "./command.js";
import { fastParse } from "./fast-parse.js";
import { DirectStdout } from "./direct-stdout.js";
import { Output, ProcessStdin, type CliIo } from "./io.js";
import { resolveWorkspace } from "../store/workspace.js";

function commandClass(m: Mounted | undefined, args: ParsedArgs): CommandClass {
  const kind = m?.decl.class ?? "report";
  return typeof kind === "string" ? kind : kind(args);
}

/** cli.md §1: `--json` anywhere before a literal `--`, or the command's other spelling of it. */
function jsonMode(run: RunState): boolean {
  return run.tokens.includes("--json") || run.active?.decl.jsonWhen?.(run.tokens) === true;
}

/** Run a tool: parse, then help, version or the command. Never throws. */
export async function runTool(tool: ToolSpec, argv: string[], io: CliIo): Promise<number> {
  const out = new Output(() => io.stdout, io.signal, io.stdoutFd === undefined ? null : DirectStdout.open(io.stdoutFd));
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
    // `--version` alone prints what yargs' version flag prints (yargs-program.ts), without loading yargs: it is
    // the start-up people time (docs/performance.md); with anything else on the line it is yargs'.
    if (argv.length === 1 && argv[0] === "--version") {
      await out.write(`${tool.version}\n`);
      await out.finish();
      return 0;
    }
    // A plain line runs without yargs; one the fast parser declines (help, a usage error, anything unusual) is yargs'.
    const line = fastParse(tool, argv);
    if (line !== undefined) {
      run.active = line.mounted;
      return await run.execute(line.mounted, line.args);
    }
    const { parseAndRun } = await import("./yargs-program.js");
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
