// claude-interop.md §3.6: the subagent_events of an import batch: which records link a subagent transcript
// (an agentId in the tool result, a ≤ 1.0.x inline group by its Task prompt, a compaction transcript by its
// boundary). Pure over the records.
import { isJsonObject } from "../../event/envelope.js";
import { childLogId, subagentIdOf } from "./discover.js";
import { contentText } from "./map.js";
import type { BatchInput } from "./plan-log.js";
import type { ToolUseFact } from "./record-facts.js";
import type { ClaudeRecord } from "./transcript.js";

export interface Link {
  subagentId: string;
  childId: string | null;
  status: string;
  agent: string | null;
  task: string | null;
  elapsed: number | null;
}

/** The first tool_use block of each id, over the file's assistant records. */
function toolCallsOf(records: ClaudeRecord[]): Map<string, ToolUseFact> {
  const toolCalls = new Map<string, ToolUseFact>();
  for (const r of records) {
    if (r.type !== "assistant" || r.facts === null) continue;
    for (const b of r.facts.toolUses) if (!toolCalls.has(b.id)) toolCalls.set(b.id, b);
  }
  return toolCalls;
}

/** §3.6: which records link a subagent transcript, computed over the whole file (line order). */
export function subagentLinks(input: BatchInput, records: ClaudeRecord[], groupStarts: ClaudeRecord[], inlineIds: string[]): Map<ClaudeRecord, Link> {
  const toolCalls = toolCallsOf(records);
  const links = new Map<ClaudeRecord, Link>();
  const inlineLinked = new Set<number>();
  const compactLinked = new Set<string>();
  const boundaries: ClaudeRecord[] = [];
  // The first text of each inline group, read when a Task prompt is first compared with them.
  let groupTexts: string[] | null = null;
  const groupText = (i: number): string => {
    groupTexts ??= groupStarts.map((g) => contentText(isJsonObject(g.value?.message) ? g.value!.message.content : undefined));
    return groupTexts[i]!;
  };
  for (const r of records) {
    const f = r.facts;
    if (f === null) continue;
    if (r.type === "user") {
      const results = f.toolResults;
      const withCall = results.find((b) => b.toolUseId !== null && toolCalls.has(b.toolUseId)) ?? results[0];
      const call = withCall !== undefined && withCall.toolUseId !== null ? toolCalls.get(withCall.toolUseId) : undefined;
      const tur = f.toolUseResult;
      const status = tur?.status ?? (withCall?.isError === true ? "failed" : "completed");
      const common = {
        status,
        agent: call?.subagentType ?? null,
        task: call?.description ?? null,
        elapsed: tur?.totalDurationMs ?? null,
      };
      if (tur !== null && tur.agentId !== null) {
        const agentId = tur.agentId;
        const target = input.subagents.get(agentId);
        const childId = target?.rootId ?? (input.agentLogExists(agentId) ? childLogId(input.src.base, `agent-${agentId}`) : null);
        links.set(r, { subagentId: subagentIdOf(agentId), childId, ...common });
        continue;
      }
      // ≤ 1.0.x: the inline group whose first record's text is the Task prompt.
      if (call && (call.name === "Task" || call.name === "Agent") && call.prompt !== null) {
        let best = -1;
        groupStarts.forEach((g, i) => {
          if (!inlineLinked.has(i) && g.line < r.line && groupText(i) === call.prompt && (best < 0 || g.line > groupStarts[best]!.line)) best = i;
        });
        if (best >= 0) {
          inlineLinked.add(best);
          links.set(r, { subagentId: `sidechain-${groupStarts[best]!.uuid}`, childId: inlineIds[best]!, ...common });
        }
      }
    } else if (r.type === "system" && f.compactBoundary && f.logicalParentUuid !== null) {
      boundaries.push(r);
      const lp = f.logicalParentUuid;
      for (const [agentId, target] of input.subagents) {
        if (!target.compaction || compactLinked.has(agentId) || !target.parentUuids().has(lp)) continue;
        compactLinked.add(agentId);
        if (!links.has(r)) links.set(r, { subagentId: subagentIdOf(agentId), childId: target.rootId, status: "completed", agent: "compact", task: null, elapsed: null });
      }
    }
  }
  linkUnmatchedCompactions(input, boundaries, compactLinked, links);
  return links;
}

/**
 * A compaction transcript whose records name none of the boundaries' logical parents (both files may lose
 * records) is still this session's compaction: its file is in the session's folder, under its sessionId.
 * Each is linked, in name order, from the next boundary that links nothing yet, rather than left `detected`.
 */
function linkUnmatchedCompactions(input: BatchInput, boundaries: ClaudeRecord[], compactLinked: Set<string>, links: Map<ClaudeRecord, Link>): void {
  const free = boundaries.filter((b) => !links.has(b));
  const unmatched = [...input.subagents].filter(([agentId, t]) => t.compaction && !compactLinked.has(agentId)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [agentId, target] of unmatched) {
    const at = free.shift();
    if (at === undefined) return;
    compactLinked.add(agentId);
    links.set(at, { subagentId: subagentIdOf(agentId), childId: target.rootId, status: "completed", agent: "compact", task: null, elapsed: null });
  }
}
