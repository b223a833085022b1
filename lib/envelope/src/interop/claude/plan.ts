// claude-interop.md §2.4, §3.2–§3.8: one import batch of one source file, planned by pure functions over
// its records. Records no Log holds yet are placed on Logs (plan-place.ts: the path Claude resumes, true
// branches as share_v1 children, side records), then mapped to Events in line order per Log
// (plan-emit.ts), then the root Log's tail (detected subagents, the import checkpoint). The same code
// plans a first import (no Log holds anything) and an incremental one (the family's Logs, read from
// disk, hold the earlier lines).
import { type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { derivedUlid } from "../../event/ids.js";
import type { Spliced } from "./map-bytes.js";
import { eventFacts } from "./held-event.js";
import { Emission } from "./plan-emit.js";
import { subagentLinks } from "./plan-links.js";
import { firstTime, push, RecordTimes, refusal, type BatchInput, type LogPlan } from "./plan-log.js";
import { Placement } from "./plan-place.js";
import type { RecordMap } from "./record-columns.js";
import { assignTranscripts, TranscriptTree, type ClaudeRecord } from "./transcript.js";

export interface BatchPlan {
  logs: LogPlan[];
  root: LogPlan;
  newRecords: number;
  heldRecords: number;
  leaf: ClaudeRecord | null;
  leafLog: LogPlan | null;
  changed: boolean;
  malformed: number;
  /** Which Log holds each record (for a fork file planned after its source, §3.7). */
  owner: RecordMap<LogPlan>;
  records: ClaudeRecord[];
  /** The line of each Event whose `data.claude.record` is a canonical line (so JSON.stringify(record) is that line). */
  recordText: Map<PixirEvent, string>;
  /** The whole `data` text of each Event mapped from its record's bytes (map-bytes.ts); its `data` is parsed from it when read. */
  eventText: Map<PixirEvent, Spliced>;
}

export function planBatch(input: BatchInput): BatchPlan {
  const { src, read } = input;
  const records = read.records;
  const groupStarts = assignTranscripts(records, src.kind === "subagent");
  const placement = new Placement(input, groupStarts);
  placement.adoptExisting();
  placement.adoptSharedFork();
  const heldRecords = placement.owner.size;
  const carrierTs = typeof input.existing[0]?.first.ts === "string" ? input.existing[0].first.ts : firstTime(records);
  const times = new RecordTimes(records, carrierTs);
  const root = placement.transcriptRoot(0);

  // §3.4 steps 1–5, per transcript (the file's, then one per inline group).
  // A file with no inline group is one transcript: its records, not a copy of them.
  const transcripts: ClaudeRecord[][] = groupStarts.length === 0 ? [records] : [[], ...groupStarts.map(() => [])];
  if (groupStarts.length > 0) for (const r of records) transcripts[r.transcript]!.push(r);
  // A loop, not a closure: the closures of this function share one context, which the plan's `tsOf`
  // keeps alive, and the table is let go with the placement.
  const firstByUuid = placement.indexUuids();
  const trees: TranscriptTree[] = [];
  for (const t of transcripts) trees.push(new TranscriptTree(t, firstByUuid));
  trees.forEach((tree, t) => placement.placeTranscript(tree, t));
  placement.placeRest(records, trees);

  const links = subagentLinks(input, records, groupStarts, placement.inlineIds);
  const emission = new Emission({ ws: input.ws, src, records, placement, carrierTs, tsOf: (r) => times.get(r), links });
  let changedAny = emission.emitLogs();
  changedAny = appendDetected(input, placement, root, carrierTs) || changedAny;
  const leaf = trees[0]!.leaf;
  const leafLog = leaf === null ? null : (placement.owner.get(leaf) ?? null);
  const newRecords = records.length - heldRecords;
  if (newRecords > 0 || changedAny || !root.existed) appendCheckpoint(input, root, carrierTs, leaf, leafLog);
  refuseDiverged(input, placement.logs);
  placement.letGo();
  return {
    logs: placement.logs,
    root,
    newRecords,
    heldRecords,
    leaf,
    leafLog,
    changed: placement.logs.some((l) => l.batch.length > 0),
    malformed: records.filter((r) => r.problem !== null).length,
    owner: placement.owner,
    records,
    recordText: emission.recordText,
    eventText: emission.eventText,
  };
}

/** §3.5, §3.6: an Event that stands for no record, at the end of the root Log, with the ts of the Event before it. */
function appendTail(input: BatchInput, root: LogPlan, carrierTs: string, key: string, type: PixirEvent["type"], data: JsonObject): void {
  const ts = root.events.at(-1)?.ts ?? carrierTs;
  push(root, { id: derivedUlid(`claude:${input.src.sourceKey}:${key}`, ts), session_id: root.id, seq: root.events.length, ts, type, data });
}

/** §3.6 detected subagents, at the end of a session file's batch; true when there is one. */
function appendDetected(input: BatchInput, placement: Placement, root: LogPlan, carrierTs: string): boolean {
  if (input.src.kind === "subagent") return false;
  const named = new Set(input.linkedChildren);
  // Indexed loops over the Events (here and below): this runs once a batch, unoptimised, and an iterator
  // over a large unit's Events made a result object per Event.
  for (const log of placement.logs) {
    for (let i = 0; i < log.batch.length; i++) {
      const e = log.batch[i]!;
      if (e.type === "subagent_event" && typeof e.data.child_session_id === "string") named.add(e.data.child_session_id);
    }
  }
  const candidates = new Map(input.unitChildren);
  placement.groupStarts.forEach((g, i) => candidates.set(`sidechain-${g.uuid}`, placement.inlineIds[i]!));
  const detected = [...candidates].filter(([, id]) => !named.has(id)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [subagentId, childId] of detected) {
    const data = { subagent_id: subagentId, child_session_id: childId, event: "detected", status: "unknown", agent: null, task: null, depth: 1, workspace: input.ws, claude: { source: input.src.sourceKey } };
    appendTail(input, root, carrierTs, `detected:${subagentId}`, "subagent_event", data);
  }
  return detected.length > 0;
}

/** §4.3: the `claude_import` checkpoint: the imported prefix's size and digest, and the leaf. */
function appendCheckpoint(input: BatchInput, root: LogPlan, carrierTs: string, leaf: ClaudeRecord | null, leafLog: LogPlan | null): void {
  const { read } = input;
  // Only the Events on disk can be checkpoints: this batch's come after it.
  let n = 1;
  for (let i = 0; i < root.diskEvents && i < root.events.length; i++) {
    const e = root.events[i]!;
    if (e.type === "workflow_event" && eventFacts(e).event === "claude_import") n++;
  }
  appendTail(input, root, carrierTs, `import:${n}`, "workflow_event", {
    event: "claude_import",
    claude: {
      source: input.src.sourceKey,
      bytes: read.completeBytes,
      lines: read.lines,
      records: read.records.length,
      sha256: input.sha256,
      leaf_uuid: leaf?.uuid ?? null,
      leaf_session_id: leafLog?.id ?? null,
    },
  });
}

/** §4.3 step 6: an import never appends Claude records after Events written by something else. */
function refuseDiverged(input: BatchInput, logs: LogPlan[]): void {
  for (const log of logs) {
    const last = log.existed && log.batch.length > 0 ? log.events[log.diskEvents - 1] : undefined;
    if (last !== undefined && !eventFacts(last).claude) throw refusal(input.ws, input.src, log.id, "log_diverged");
  }
}
