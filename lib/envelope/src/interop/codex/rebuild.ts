// codex-interop.md §2.2 "Rebuild" and §3.7: a rollout line from its Events, and the lines a family holds.
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";

/** The codex key of an imported Event, or null for a native Event. */
export const codexOf = (e: Pick<PixirEvent, "data">): JsonObject | null => (isJsonObject(e.data.codex) ? e.data.codex : null);

/** A line Event: an Event that stands for a line or a part of one (not synthetic, §2.5). */
export function lineOf(e: Pick<PixirEvent, "data">): number | null {
  const c = codexOf(e);
  if (c === null || c.synthetic !== undefined) return null;
  return typeof c.line === "number" && Number.isInteger(c.line) ? c.line : null;
}

/**
 * §2.2: the text of one line (without `\n`) from its Events in part order; null for a line a lenient
 * import skipped, which cannot be rebuilt.
 */
export function rebuildLine(events: Array<Pick<PixirEvent, "data">>): string | null {
  const first = events[0];
  if (first === undefined) return null;
  const codex = codexOf(first)!;
  if (codex.skipped === true) return null;
  if (typeof codex.raw === "string") return codex.raw;
  const record = codex.record;
  if (!isJsonObject(record)) return null;
  let out: JsonObject = record;
  if (record.payload === "$item") out = { ...record, payload: first.data.item };
  // Substitution 2 happened only when the line had an array, which the checkpoint counts (§2.4.6); a
  // replacement_history that was a number in the rollout itself stays as it was.
  else if (record.type === "compacted" && isJsonObject(record.payload) && typeof first.data.replacement_item_count === "number") {
    const items = events.slice(1).map((e) => {
      const c = codexOf(e)!;
      return Object.hasOwn(c, "item") ? c.item : e.data.item;
    });
    out = { ...record, payload: { ...record.payload, replacement_history: items } };
  }
  return JSON.stringify(out);
}

/** Group the own line Events of some Logs by line number (parts stay in seq order). */
export function eventsByLine(events: Iterable<PixirEvent>, into = new Map<number, PixirEvent[]>()): Map<number, PixirEvent[]> {
  for (const e of events) {
    const n = lineOf(e);
    if (n === null) continue;
    const list = into.get(n);
    if (list === undefined) into.set(n, [e]);
    else list.push(e);
  }
  return into;
}
