// archive.md §1: the joined facts as catalog.json keeps them: one array per session instead of an object,
// without what the facts repeat (the project is the cwd's last segment; the title, most often, is the first
// prompt). Read on every `pixir ls`, `usage` and `search` when no Log changed, so its size is what they pay.
import { projectOf, SESSION_KINDS, type AgentName, type SessionFacts, type SessionKind } from "./facts.js";

/** session_id, agent, kind, cwd, title, first_prompt, started, updated, messages, tokens, parent, children, events, log_bytes[, error] */
export type FactsRow = [string, string, string, S, S | typeof SAME_AS_PROMPT, S, S, S, number, number | null, S, string[], number, number, string?];
type S = string | null;

/** In a row's title slot: the title is the first prompt. */
const SAME_AS_PROMPT = 0;

export function factsToRow(f: SessionFacts): FactsRow {
  const title = f.title === f.first_prompt ? SAME_AS_PROMPT : f.title;
  const row: FactsRow = [f.session_id, f.agent, f.kind, f.cwd, title, f.first_prompt, f.started, f.updated, f.messages, f.tokens, f.parent, f.children, f.events, f.log_bytes];
  if (f.error !== undefined) row.push(f.error);
  return row;
}

const isS = (v: unknown): v is S => v === null || typeof v === "string";
const KINDS: ReadonlySet<string> = new Set(SESSION_KINDS);

/** The facts of a row as joinFacts makes them (the same keys in the same order), or null when it is not a row. */
export function rowToFacts(r: unknown): SessionFacts | null {
  if (!Array.isArray(r) || (r.length !== 14 && r.length !== 15)) return null;
  const [id, agent, kind, cwd, title, prompt, started, updated, messages, tokens, parent, children, events, bytes, error] = r as unknown[];
  if (typeof id !== "string" || typeof agent !== "string" || typeof kind !== "string" || !KINDS.has(kind)) return null;
  if (!isS(cwd) || !(isS(title) || title === SAME_AS_PROMPT) || !isS(prompt) || !isS(started) || !isS(updated) || !isS(parent)) return null;
  if (typeof messages !== "number" || !(tokens === null || typeof tokens === "number") || typeof events !== "number" || typeof bytes !== "number") return null;
  if (!Array.isArray(children) || !(error === undefined || typeof error === "string")) return null;
  const facts: SessionFacts = {
    session_id: id,
    agent: agent as AgentName,
    kind: kind as SessionKind,
    cwd,
    project: projectOf(cwd),
    title: title === SAME_AS_PROMPT ? prompt : title,
    first_prompt: prompt,
    started,
    updated,
    messages,
    tokens,
    parent,
    children: children as string[],
    events,
    log_bytes: bytes,
  };
  if (error !== undefined) facts.error = error;
  return facts;
}
