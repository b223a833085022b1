// archive.md §1 "Id prefixes": every command that takes an EXISTING session accepts a unique prefix of its
// id. The declarations say which arguments those are (`value: "session id"` without `newSession`), so the
// runner resolves them once here, before the command runs, and no command repeats the rule.
import { resolveWorkspace } from "../store/workspace.js";
import { optionsOf, positionalsOf, type CommandDecl, type ParsedArgs } from "./command.js";
import type { CliIo } from "./io.js";

/** `args` with each prefix of an existing session replaced by its full id (others as given). */
export async function resolveSessionArgs(decl: CommandDecl, args: ParsedArgs, io: CliIo): Promise<ParsedArgs> {
  const slots = sessionSlots(decl, args);
  if (slots.positionals.length === 0 && slots.flags.length === 0) return args;
  let ws: string;
  try {
    ws = resolveWorkspace(args.flags.workspace as string | undefined, io.env, io.cwd);
  } catch {
    return args; // the command reports the Workspace in its own words
  }
  const { resolveExistingSessionId } = await import("../archive/resolve.js");
  const positionals = [...args.positionals];
  for (const i of slots.positionals) positionals[i] = await resolveExistingSessionId(ws, positionals[i]!);
  const flags = { ...args.flags };
  for (const name of slots.flags) flags[name] = await resolveExistingSessionId(ws, flags[name] as string);
  return { positionals, flags };
}

/** Which positionals (by index in `args.positionals`) and flags hold an existing session's id. */
function sessionSlots(decl: CommandDecl, args: ParsedArgs): { positionals: number[]; flags: string[] } {
  const positionals: number[] = [];
  let at = 0;
  for (const p of positionalsOf(decl)) {
    const spec = decl.positionals?.[p.name];
    const count = p.variadic ? args.positionals.length - at : at < args.positionals.length ? 1 : 0;
    if (spec?.value === "session id" && spec.newSession !== true) for (let k = 0; k < count; k++) positionals.push(at + k);
    at += count;
  }
  const flags = Object.entries(optionsOf(decl))
    .filter(([name, o]) => o.value === "session id" && o.newSession !== true && typeof args.flags[name] === "string")
    .map(([name]) => name);
  return { positionals, flags };
}
