// Shell completion (README "Shell completion"). `<tool> completion` prints yargs' script, which asks
// `<tool> --get-yargs-completions <words>` for the completions of the last word; yargs hands the words to
// `complete` below, which answers from the declarations: the commands of a group, the flags of the
// command (with the ones every command takes), a flag's choices, and where the word is a session id (a
// positional or a flag declared with `value: "session id"`) the ids of the Workspace's Logs. It reads one
// directory listing, at most MAX_IDS names, and fails silently: a completion must never print an error.
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { isValidSessionId } from "../event/session-id.js";
import { commandName, GLOBAL_OPTIONS, optionsOf, type CommandDecl, type OptionDecl, type ToolSpec } from "./command.js";

const MAX_IDS = 1000;

interface Place {
  /** The command the words have reached (undefined: a tool of several commands, before its command). */
  decl: CommandDecl | undefined;
  /** Its subcommands, while no positional has been given. */
  commands: readonly CommandDecl[];
  positionals: number;
  /** The flag right before the last word, when it takes a value. */
  valueOf: OptionDecl | undefined;
  given: Set<string>;
}

/** Walk the words before the last one: which command, how many positionals, which flag wants a value. */
function placeOf(tool: ToolSpec, words: readonly string[]): Place {
  const place: Place = { decl: tool.single, commands: tool.commands ?? [], positionals: 0, valueOf: undefined, given: new Set() };
  for (let i = 0; i < words.length - 1; i++) {
    const w = words[i]!;
    if (w.startsWith("-")) {
      const name = w.replace(/^-+/, "").split("=")[0]!;
      place.given.add(name);
      const o = (place.decl === undefined ? GLOBAL_OPTIONS : optionsOf(place.decl))[name];
      if (o?.type === "string" && !w.includes("=")) {
        if (i === words.length - 2) place.valueOf = o;
        i++;
      }
      continue;
    }
    const sub = place.positionals === 0 ? place.commands.find((c) => commandName(c) === w) : undefined;
    if (sub !== undefined) {
      place.decl = sub;
      place.commands = sub.commands ?? [];
    } else place.positionals++;
  }
  return place;
}

/** Is the next positional of the command a session id? */
function positionalIsSessionId(decl: CommandDecl | undefined, given: number): boolean {
  if (decl === undefined || decl.commands) return false;
  const slots = decl.command.split(" ").slice(1);
  const slot = slots[Math.min(given, slots.length - 1)];
  if (slot === undefined || (given >= slots.length && !slot.includes(".."))) return false;
  return decl.positionals?.[/[\w-]+/.exec(slot)![0]]?.value === "session id";
}

/** The completions of the last of the shell's words (the program first). */
export function complete(tool: ToolSpec, typed: readonly string[], argv: Record<string, unknown>, io: { env: NodeJS.ProcessEnv; cwd: string }): string[] {
  const words = typed.slice(1);
  const current = words.at(-1) ?? "";
  const place = placeOf(tool, words);
  const starting = (list: Iterable<string>) => [...list].filter((w) => w.startsWith(current));
  if (place.valueOf !== undefined) {
    if (place.valueOf.choices) return starting(place.valueOf.choices);
    return place.valueOf.value === "session id" && !place.valueOf.newSession ? sessionIds(current, argv, io) : [];
  }
  if (current.startsWith("-")) {
    const names = [...Object.keys(place.decl === undefined ? GLOBAL_OPTIONS : optionsOf(place.decl)), "help", "version"];
    return starting(names.filter((n) => !place.given.has(n)).map((n) => `--${n}`));
  }
  const commands = place.positionals === 0 ? place.commands.map(commandName) : [];
  if (place.positionals === 0 && (place.decl === undefined || place.decl === tool.single)) commands.push("completion");
  return [...starting(commands), ...(positionalIsSessionId(place.decl, place.positionals) ? sessionIds(current, argv, io) : [])];
}

/** The ids of the Logs in the Workspace that start with `current`; none when anything goes wrong. */
function sessionIds(current: string, argv: Record<string, unknown>, io: { env: NodeJS.ProcessEnv; cwd: string }): string[] {
  try {
    const flag = typeof argv.workspace === "string" && argv.workspace !== "" ? argv.workspace : undefined;
    const ws = path.resolve(io.cwd, flag ?? io.env.PIXIR_WORKSPACE ?? ".");
    // Our layout only: neither .pixir nor .pixir/sessions may be a link (envelope-and-log.md §6).
    for (const dir of [path.join(ws, ".pixir"), path.join(ws, ".pixir", "sessions")]) if (!lstatSync(dir).isDirectory()) return [];
    const ids: string[] = [];
    for (const name of readdirSync(path.join(ws, ".pixir", "sessions"))) {
      if (!name.endsWith(".ndjson")) continue;
      const id = name.slice(0, -".ndjson".length);
      if (id.startsWith(current) && isValidSessionId(id)) ids.push(id);
      if (ids.length === MAX_IDS) break;
    }
    return ids.sort();
  } catch {
    return [];
  }
}
