// archive.md §1 "Id prefixes": a session id may be given as a unique prefix of at least 4 characters, as
// git takes a commit. A full id whose Log exists always wins. Only ids of EXISTING sessions resolve:
// writers take a new id literally (`--child-id`, imports). The imports name a session's branches and
// subagents `<id>.<suffix>`: a prefix that selects one session and only Logs named under it names that
// session (`0d3a8e6f` is the session 0d3a8e6f-…, not also its two branches 0d3a8e6f-….f714a687…).
import { lstatSync, readdirSync } from "node:fs";
import { PixirError } from "../event/errors.js";
import { isValidSessionId } from "../event/session-id.js";
import { notFoundError } from "../store/loader.js";
import { logPath, sessionsDir } from "../store/paths.js";
import { readCatalog } from "./catalog.js";

const MIN_PREFIX = 4;
const LOG_SUFFIX = ".ndjson";
const MAX_CANDIDATES = 10;

/** An existing session id from a full id or a unique prefix (≥ 4 chars); `ambiguous_session_id` or `not_found` otherwise. */
export async function resolveSessionId(workspace: string, idOrPrefix: string): Promise<string> {
  const id = await resolveExistingSessionId(workspace, idOrPrefix);
  if (!isLog(workspace, id)) throw notFoundError(id, workspace, logPath(workspace, id).rel, "pixir ls");
  return id;
}

/**
 * For a command that takes an existing session: the full id a unique prefix names, or the argument as
 * given when nothing matches, so that the command reports a missing or malformed id in its own words.
 * An ambiguous prefix is `ambiguous_session_id` (exit 2) with up to 10 candidates and their titles.
 */
export async function resolveExistingSessionId(workspace: string, idOrPrefix: string): Promise<string> {
  if (!isValidSessionId(idOrPrefix) || idOrPrefix.length < MIN_PREFIX || isLog(workspace, idOrPrefix)) return idOrPrefix;
  const matches = logIdsStartingWith(workspace, idOrPrefix);
  if (matches.length === 0) return idOrPrefix;
  const heads = matches.filter((id) => !matches.some((other) => isUnder(id, other)));
  if (heads.length === 1) return heads[0]!;
  throw await ambiguous(workspace, idOrPrefix, matches);
}

function isLog(workspace: string, id: string): boolean {
  try {
    return lstatSync(logPath(workspace, id).abs).isFile();
  } catch {
    return false;
  }
}

/** The ids of the Logs whose names start with `prefix` (the directory's names only: no stat of every Log). */
function logIdsStartingWith(workspace: string, prefix: string): string[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(workspace).abs);
  } catch {
    return [];
  }
  const ids = names.filter((n) => n.startsWith(prefix) && n.endsWith(LOG_SUFFIX)).map((n) => n.slice(0, -LOG_SUFFIX.length));
  return ids.filter((id) => id.startsWith(prefix) && isValidSessionId(id) && isLog(workspace, id)).sort();
}

async function ambiguous(workspace: string, prefix: string, matches: readonly string[]): Promise<PixirError> {
  const titles = new Map<string, string | null>();
  try {
    for (const f of await readCatalog(workspace)) titles.set(f.session_id, f.title);
  } catch {
    // The titles are a courtesy: the candidates are named without them.
  }
  const candidates = matches.slice(0, MAX_CANDIDATES).map((id) => ({ session_id: id, title: titles.get(id) ?? null }));
  const more = matches.length > candidates.length ? [`… and ${matches.length - candidates.length} more: run pixir ls --all`] : [];
  return new PixirError("ambiguous_session_id", `session id prefix ${prefix} matches ${matches.length} sessions`, {
    prefix,
    match_count: matches.length,
    candidates,
    next_actions: ["give more characters of the id, one of:", ...candidates.map((c) => `  ${c.session_id}  ${c.title ?? ""}`.trimEnd()), ...more],
  });
}

/** `id` is named under `head`: `<head>.<suffix>`. */
const isUnder = (id: string, head: string): boolean => id.length > head.length + 1 && id.startsWith(head) && id[head.length] === ".";

/**
 * The shortest prefix of each id (at least `min` characters) that resolves to it: one no other id shares
 * but the ids named under it. In sorted order those follow it as one run, so the ids that share the most
 * with it are the one before it and the first after that run.
 */
export function shortestUniquePrefixes(ids: readonly string[], min = 8): Map<string, string> {
  const sorted = [...ids].sort();
  const out = new Map<string, string>();
  sorted.forEach((id, i) => {
    let next = i + 1;
    while (next < sorted.length && isUnder(sorted[next]!, id)) next++;
    const common = Math.max(commonLength(id, sorted[i - 1]), commonLength(id, sorted[next]));
    // An id named under another (`<parent>.<suffix>`) shows `min` characters of its own part too.
    const own = id.lastIndexOf(".") + 1 + (id.includes(".") ? min : 0);
    out.set(id, id.slice(0, Math.max(min, own, common + 1)));
  });
  return out;
}

function commonLength(a: string, b: string | undefined): number {
  if (b === undefined) return 0;
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
