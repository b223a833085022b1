// claude-interop.md §6 "The oracle": the items `pixir context` must show for a session file, computed
// from the file alone: the chain Claude resumes from the last message record (progress bridged, gaps to
// the nearest earlier message record, no logicalParentUuid), plus the parallel-call recovery.
import type { JsonObject } from "../../event/envelope.js";
import { recordDrafts } from "./map.js";
import { readTranscriptBytes, TranscriptTree, type ClaudeRecord } from "./transcript.js";

export interface ClaudeOracleItem {
  type: "user_message" | "assistant_message" | "tool_call" | "tool_result" | "history_compaction";
  uuid: string;
  part: string;
  data: JsonObject;
}

const ITEM_TYPES = new Set(["user_message", "assistant_message", "tool_call", "tool_result", "history_compaction"]);

/** The expected context items of a session file (its main transcript). */
export function claudeOracle(bytes: Buffer): ClaudeOracleItem[] {
  const { records } = readTranscriptBytes(bytes, "oracle", true);
  const main = records.filter((r) => !r.sidechain);
  const tree = new TranscriptTree(main);
  const leaf = tree.leaf;
  if (leaf === null) return [];
  const walk = tree.walk(leaf, false);
  const kept = [...walk, ...tree.recover(walk)].sort((a, b) => a.line - b.line).filter((r) => r.type === "user" || r.type === "assistant");
  const items: ClaudeOracleItem[] = [];
  for (const r of kept) {
    for (const d of recordDrafts(r, true, { toolName: () => null })) {
      if (ITEM_TYPES.has(d.type)) items.push({ type: d.type as ClaudeOracleItem["type"], uuid: r.uuid!, part: d.part, data: d.data });
    }
  }
  return items;
}

export type { ClaudeRecord };
