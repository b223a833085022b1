// Shell completion of session ids (README "Shell completion"): yargs completes commands, flags and
// choices from the declarations; where the word being completed is a session id (a positional or a flag
// declared with `value: "session id"`), the ids of the Workspace's Logs are offered as well. It reads one
// directory listing, at most MAX_IDS names, and fails silently: a completion must never print an error.
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { isValidSessionId } from "../event/session-id.js";
import { commandName, optionsOf, type CommandDecl, type ToolSpec } from "./command.js";

const MAX_IDS = 1000;

/** Where the last word stands: does it name a session id? `words` are the words after the program. */
function isSessionIdSlot(tool: ToolSpec, words: readonly string[]): boolean {
  let decl: CommandDecl | undefined = tool.single;
  let list = tool.commands ?? [];
  let positionals = 0;
  for (let i = 0; i < words.length - 1; i++) {
    const w = words[i]!;
    if (w.startsWith("-")) {
      const o = decl === undefined ? undefined : optionsOf(decl)[w.replace(/^-+/, "")];
      // A value flag's value is not a positional; the value of the flag right before the last word is it.
      if (o?.type === "string" && !w.includes("=")) {
        if (i === words.length - 2) return o.value === "session id";
        i++;
      }
      continue;
    }
    const sub = list.find((c) => commandName(c) === w);
    if (sub !== undefined && positionals === 0) {
      decl = sub;
      list = sub.commands ?? [];
      continue;
    }
    positionals++;
  }
  if (decl === undefined || words.at(-1)?.startsWith("-")) return false;
  const slots = decl.command.split(" ").slice(1);
  const slot = slots[Math.min(positionals, slots.length - 1)];
  if (slot === undefined || (positionals >= slots.length && !slot.includes(".."))) return false;
  const name = /[\w-]+/.exec(slot)![0];
  return decl.positionals?.[name]?.value === "session id";
}

/** The ids of the Logs in the Workspace that start with `current`, when the word is a session id. */
export function completeSessionIds(tool: ToolSpec, typed: readonly string[], argv: Record<string, unknown>, io: { env: NodeJS.ProcessEnv; cwd: string }): string[] {
  try {
    // The shell hands the words with the program first; the last is the one being completed.
    const words = typed.slice(1);
    const current = words.at(-1) ?? "";
    if (!isSessionIdSlot(tool, words)) return [];
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
