// pixir search as the command runs it: the index is brought up to date and searched, the filters that
// need session facts (--agent, --project) select on the session cards (the catalog's facts, archive.md §1,
// as the index keeps them: session-cards.ts), and each hit gets its session's agent, project and title.
import { PixirError } from "../../event/errors.js";
import { AGENT_NAMES } from "../../event/vocabulary.js";
import { resolveSessionId } from "../resolve.js";
import { searchWorkspace, type IndexState } from "./job.js";
import { parseQuery } from "./query.js";
import type { Hit } from "./render.js";
import { SEARCHED_TYPES } from "./searchable.js";
import type { SessionCards } from "./session-cards.js";
import type { SearchSort } from "./search.js";
import type { UpdateProgress } from "./update.js";
import { dateBound } from "./when.js";

export interface SearchOptions {
  query: readonly string[];
  agent?: string;
  project?: string;
  session?: string;
  types?: readonly string[];
  tool?: string;
  file?: string;
  since?: string;
  until?: string;
  sort: SearchSort;
  limit: number;
}

function checkTypes(types: readonly string[]): void {
  const known = new Set<string>(SEARCHED_TYPES);
  const bad = types.find((t) => !known.has(t));
  if (bad !== undefined) throw new PixirError("invalid_args", `--type takes the searched Event types: ${SEARCHED_TYPES.join(", ")}`, { field: "type", reason: "unknown_type", allowed: [...SEARCHED_TYPES] });
}

/** `--file ./src/a.ts` is `src/a.ts`: a path a tool named as `./src/a.ts` still ends in `/src/a.ts`. */
const withoutDotSlash = (file: string): string => file.replace(/^(?:\.\/+)+(?=.)/, "");

/** The sessions --agent and --project leave, or null when neither is given. */
function sessionsOf(cards: SessionCards, o: SearchOptions): Set<string> | null {
  if (o.agent === undefined && o.project === undefined) return null;
  const project = o.project?.toLowerCase();
  return new Set(
    cards
      .all()
      .filter((f) => (o.agent === undefined || f.agent === o.agent) && (project === undefined || (f.project ?? "").toLowerCase().includes(project)))
      .map((f) => f.session_id),
  );
}

export interface SearchRun {
  hits: Hit[];
  index: IndexState;
}

/** archive.md §2: `pixir search`. */
export async function searchSessions(ws: string, o: SearchOptions, progress?: UpdateProgress): Promise<SearchRun> {
  const query = parseQuery(o.query);
  if (o.types !== undefined) checkTypes(o.types);
  const since = o.since === undefined ? null : dateBound(o.since, "since", false);
  const until = o.until === undefined ? null : dateBound(o.until, "until", true);
  if (o.agent !== undefined && !(AGENT_NAMES as readonly string[]).includes(o.agent)) {
    throw new PixirError("usage", `--agent must be ${AGENT_NAMES.slice(0, -1).join(", ")} or ${AGENT_NAMES.at(-1)}`, { field: "agent", reason: "unknown_agent", allowed: [...AGENT_NAMES] });
  }
  // A session that is not there is not_found (exit 2), as for every command that takes one; never an empty answer.
  const session = o.session === undefined ? null : await resolveSessionId(ws, o.session);
  const { hits, index, cards } = await searchWorkspace(ws, (all) => ({
    query,
    filters: { sessions: sessionsOf(all, o), session, types: o.types ?? null, tool: o.tool ?? null, file: o.file === undefined ? null : withoutDotSlash(o.file), since, until },
    sort: o.sort,
    limit: o.limit,
  }), progress);
  return {
    index,
    hits: hits.map((h) => {
      const f = cards.get(h.session_id);
      return { ...h, agent: f?.agent ?? null, project: f?.project ?? null, title: f?.title ?? null };
    }),
  };
}
