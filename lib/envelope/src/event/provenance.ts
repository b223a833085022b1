// archive.md §4: the records a reading view does not show as cards (one "all records" toggle shows them):
// the provenance and raw source records an import keeps for a lossless round trip (`workflow_event`s named
// `claude_*`, `codex_*`, `pi_*`) and usage records (`provider_usage`, totalled in the page's header).

/** Import families whose `workflow_event`s are provenance: `<family>_<what>`. */
const PROVENANCE_PREFIXES = ["claude_", "codex_", "pi_", "gemini_", "opencode_"];

/** A provenance or raw source record of an import (not a person's or a model's words). */
export function isProvenance(type: string, data: Record<string, unknown>): boolean {
  if (type !== "workflow_event") return false;
  const name = data.event;
  return typeof name === "string" && PROVENANCE_PREFIXES.some((p) => name.startsWith(p));
}

/** Bookkeeping a reader does not read: provenance and usage records. */
export const isRecordOnly = (type: string, data: Record<string, unknown>): boolean => type === "provider_usage" || isProvenance(type, data);
