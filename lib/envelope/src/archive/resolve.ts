// archive.md §1 "Id prefixes": a session id may be given as a unique prefix of at least 4 characters, as
// git takes a commit. A full id whose Log exists always wins. Only ids of EXISTING sessions resolve:
// writers take a new id literally (`--child-id`, imports).
import { PixirError } from "../event/errors.js";
import { isValidSessionId } from "../event/session-id.js";
import { notFoundError } from "../store/loader.js";
import { listLogs } from "../store/ls.js";
import { logPath } from "../store/paths.js";
import { readCatalog } from "./catalog.js";

export const MIN_PREFIX = 4;
const MAX_CANDIDATES = 10;

/** An existing session id from a full id or a unique prefix (≥ 4 chars); `ambiguous_session_id` or `not_found` otherwise. */
export async function resolveSessionId(workspace: string, idOrPrefix: string): Promise<string> {
  const id = await resolveExistingSessionId(workspace, idOrPrefix);
  if (!listLogs(workspace).sizes.has(id)) throw notFoundError(id, workspace, logPath(workspace, id).rel, "pixir ls");
  return id;
}

/**
 * For a command that takes an existing session: the full id a unique prefix names, or the argument as
 * given when nothing matches, so that the command reports a missing or malformed id in its own words.
 * An ambiguous prefix is `ambiguous_session_id` (exit 2) with up to 10 candidates and their titles.
 */
export async function resolveExistingSessionId(workspace: string, idOrPrefix: string): Promise<string> {
  if (!isValidSessionId(idOrPrefix) || idOrPrefix.length < MIN_PREFIX) return idOrPrefix;
  const ids = listLogs(workspace).sessionIds;
  if (ids.includes(idOrPrefix)) return idOrPrefix;
  const matches = ids.filter((id) => id.startsWith(idOrPrefix));
  if (matches.length === 0) return idOrPrefix;
  if (matches.length === 1) return matches[0]!;
  throw await ambiguous(workspace, idOrPrefix, matches);
}

async function ambiguous(workspace: string, prefix: string, matches: readonly string[]): Promise<PixirError> {
  const titles = new Map<string, string | null>();
  try {
    for (const f of await readCatalog(workspace)) titles.set(f.session_id, f.title);
  } catch {
    // The titles are a courtesy: the candidates are named without them.
  }
  const candidates = matches.slice(0, MAX_CANDIDATES).map((id) => ({ session_id: id, title: titles.get(id) ?? null }));
  return new PixirError("ambiguous_session_id", `session id prefix ${prefix} matches ${matches.length} sessions`, {
    prefix,
    match_count: matches.length,
    candidates,
  });
}

/** The shortest prefix of each id (at least `min` characters) that no other id shares. */
export function shortestUniquePrefixes(ids: readonly string[], min = 8): Map<string, string> {
  const sorted = [...ids].sort();
  const out = new Map<string, string>();
  sorted.forEach((id, i) => {
    const common = Math.max(commonLength(id, sorted[i - 1]), commonLength(id, sorted[i + 1]));
    out.set(id, id.slice(0, Math.max(min, common + 1)));
  });
  return out;
}

function commonLength(a: string, b: string | undefined): number {
  if (b === undefined) return 0;
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}
