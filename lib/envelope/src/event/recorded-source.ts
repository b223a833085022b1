// archive.md §1 `cwd` and §5: the agent a Log came from and the project directory that agent recorded
// (Claude `cwd`, Codex `session_meta.cwd`, pi header `cwd`), read from the import's carrier Events. The one
// rule for "the cwd a source recorded": the exporters' hand-off and the session facts both use it.
import { isJsonObject, type PixirEvent } from "./envelope.js";

export type SourceAgent = "claude" | "codex" | "pi";

export interface RecordedSource {
  agent: SourceAgent;
  /** The first cwd the source recorded; null when it recorded none. */
  cwd: string | null;
}

const text = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** The Claude record an import-made Event carries (its parsed record, or its verbatim line). */
function claudeRecordCwd(carrier: Record<string, unknown>): string | null {
  if (isJsonObject(carrier.record)) return text(carrier.record.cwd);
  if (typeof carrier.raw_line === "string" && carrier.raw_line.includes('"cwd"')) {
    try {
      const v: unknown = JSON.parse(carrier.raw_line);
      return isJsonObject(v) ? text(v.cwd) : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** What one Event says of its source: null when it carries no import provenance. */
export function sourceOfEvent(e: Pick<PixirEvent, "data">): RecordedSource | null {
  const d = e.data;
  if (isJsonObject(d.claude)) return { agent: "claude", cwd: claudeRecordCwd(d.claude) };
  if (isJsonObject(d.codex)) return { agent: "codex", cwd: d.event === "codex_session_meta" ? text(d.cwd) : null };
  if (isJsonObject(d.pi)) return { agent: "pi", cwd: d.event === "pi_session_header" && isJsonObject(d.pi.header) ? text(d.pi.header.cwd) : null };
  return null;
}

/**
 * The agent of the first Event with provenance, and the first cwd that agent recorded; null for a
 * Pixir-native History; it stops reading at that cwd. A fork's inherited prefix counts: its History is the parent's up to the fork.
 */
export async function recordedSource<T>(items: Iterable<T> | AsyncIterable<T>, eventOf: (item: T) => PixirEvent): Promise<RecordedSource | null> {
  let found: RecordedSource | null = null;
  for await (const item of items) {
    const s = sourceOfEvent(eventOf(item));
    if (s === null) continue;
    if (found === null) found = { agent: s.agent, cwd: null };
    if (s.agent === found.agent && s.cwd !== null) return { agent: found.agent, cwd: s.cwd };
  }
  return found;
}
