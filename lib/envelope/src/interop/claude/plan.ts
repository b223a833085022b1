// claude-interop.md §2.4, §3.2–§3.8: one import batch of one source file. Records no Log holds yet are
// placed on Logs (the path Claude resumes, true branches as share_v1 children, side records), then
// mapped to Events in line order per Log. The same code plans a first import (no Log holds anything)
// and an incremental one (the family's Logs, read from disk, hold the earlier lines).
import { envelopeHead, isIsoUtc, isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { MAX_IMPORT_SHARE_HOPS, REPLAY_LIMITATIONS, shareHeaderData } from "../../fork/fork.js";
import { derivedUlid } from "../../event/ids.js";
import { inheritedItem, isInherited } from "../../store/loader.js";
import { isValidSessionId } from "../../event/session-id.js";
import { logPath } from "../../store/paths.js";
import { childLogId, sha256Hex, subagentIdOf, type SourceFile } from "./discover.js";
import { matchForkFile, type ForkSource, type SharedFork } from "./fork-file.js";
import { contentText, heldLine, recordLineOf, recordDrafts, reproduction, usageDraft, usageKeyOf, type ClaudeEventDraft } from "./map.js";
import { recordTape, type ToolUseFact } from "./record-facts.js";
import { draftTexts, Spliced, type TextDraft } from "./map-bytes.js";
import { readJsonLine } from "../../fast/json-tape.js";
import { assignTranscripts, hasToolResultBlock, TranscriptTree, type ClaudeRecord, type ReadFile } from "./transcript.js";

export type LogRole = "primary" | "branch" | "root_branch" | "fork_session" | "subagent" | "inline_subagent";
export const EPOCH = "1970-01-01T00:00:00.000Z";
const CLAUDE_TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A Log of a source file's family, as planned. */
export interface LogPlan {
  id: string;
  role: LogRole;
  parent: LogPlan | null;
  /** The transcript (0 main, k inline group) whose records it holds. */
  transcript: number;
  existed: boolean;
  /** Its resolved History, Events already on disk first. */
  events: PixirEvent[];
  /** Events on disk before this batch (a prefix of `events`). */
  diskEvents: number;
  /** Index in `events` of its first own Event (after a share header and the inherited prefix). */
  ownStart: number;
  /** §3.3: the Claude path (inherited and own path records). */
  path: ClaudeRecord[];
  /** Records placed on it by this batch, with their path flag. */
  placed: Array<{ rec: ClaudeRecord; path: boolean }>;
  /** Seq of the last own Event of each record it holds. */
  lastSeq: Map<ClaudeRecord, number>;
  forkPoint: ClaudeRecord | null;
  forkedToSeq: number | null;
  /** share_v1 hops from this Log to a self-contained one (0: it holds its whole History). */
  shareHops: number;
  /** The Events of this batch, to write (for a new Log: every stored Event). */
  batch: PixirEvent[];
}

export interface SubagentTarget {
  rootId: string | null;
  /** parentUuids of its records (compaction transcripts, §3.6 case 3); read when first asked. */
  parentUuids(): Set<string>;
  compaction: boolean;
}

export interface BatchInput {
  ws: string;
  src: SourceFile;
  read: ReadFile;
  /** SHA-256 of the imported prefix. */
  sha256: string;
  /** The family's Logs on disk, parents before children; empty on a first import. */
  existing: ExistingLog[];
  /** Subagent transcripts of the unit by agentId (session files only). */
  subagents: Map<string, SubagentTarget>;
  /** A subagent Log `<base>.agent-<agentId>` exists in the Workspace. */
  agentLogExists(agentId: string): boolean;
  /** §3.7: the Logs of the source session of a fork file, when they are in the run or the Workspace. */
  forkSource?: ForkSource | null;
  /** Lines covered by the last checkpoint's digest (K). */
  verifiedLines: number;
  /** child_session_ids named by subagent_events already in the unit's Logs. */
  linkedChildren: Set<string>;
  /** Subagent root Logs of the unit (session files only), by subagent_id. */
  unitChildren: Map<string, string>;
}

export interface ExistingLog {
  id: string;
  first: PixirEvent;
  events: PixirEvent[];
  replayCount: number;
  /** share_v1 hops from it to a self-contained Log (the loader's count). */
  shareHops: number;
}

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
  owner: Map<ClaudeRecord, LogPlan>;
  records: ClaudeRecord[];
  /** The line of each Event whose `data.claude.record` is a canonical line (so JSON.stringify(record) is that line). */
  recordText: Map<PixirEvent, string>;
  /** The whole `data` text of each Event mapped from its record's bytes (map-bytes.ts); its `data` is parsed from it when read. */
  eventText: Map<PixirEvent, Spliced>;
}

interface Link {
  subagentId: string;
  childId: string | null;
  status: string;
  agent: string | null;
  task: string | null;
  elapsed: number | null;
}

const tsOk = (v: unknown): v is string => typeof v === "string" && CLAUDE_TS.test(v) && isIsoUtc(v);

/** §2.4: the ts of each record (by line). */
/** §2.4: the record's own ts (`timestamp`, else `snapshot.timestamp`), or null. */
function ownTime(r: ClaudeRecord): string | null {
  const f = r.facts;
  if (f === null) return null;
  if (tsOk(f.timestamp)) return f.timestamp;
  if (tsOk(f.snapshotTimestamp)) return f.snapshotTimestamp;
  return null;
}

function recordTimes(records: ClaudeRecord[], fallback: string): Map<ClaudeRecord, string> {
  const out = new Map<ClaudeRecord, string>();
  let prev = fallback;
  for (const r of records) {
    prev = ownTime(r) ?? prev;
    out.set(r, prev);
  }
  return out;
}

function firstTime(records: ClaudeRecord[]): string {
  for (const r of records) {
    const ts = ownTime(r);
    if (ts !== null) return ts;
  }
  return EPOCH;
}

const newLog = (id: string, role: LogRole, parent: LogPlan | null, transcript: number): LogPlan => ({
  id,
  role,
  parent,
  transcript,
  existed: false,
  events: [],
  diskEvents: 0,
  ownStart: 0,
  path: [],
  placed: [],
  lastSeq: new Map(),
  forkPoint: null,
  forkedToSeq: null,
  shareHops: 0,
  batch: [],
});

const isConversation = (r: ClaudeRecord) => r.type === "user" || r.type === "assistant";

export function planBatch(input: BatchInput): BatchPlan {
  const { src, read } = input;
  const records = read.records;
  const groupStarts = assignTranscripts(records, src.kind === "subagent");
  const byLine = new Map<number, ClaudeRecord>();
  for (const r of records) byLine.set(r.line, r);
  const owner = new Map<ClaudeRecord, LogPlan>();
  const pathFlag = new Map<ClaudeRecord, boolean>();
  const logs: LogPlan[] = [];

  // Transcript root Logs: the file's root, then one per inline group.
  const inlineIds = groupStarts.map((g) => childLogId(src.base, `sidechain-${g.uuid}`));
  const rootRole: LogRole = src.kind === "subagent" ? "subagent" : "primary";

  // §4.3 step 4: what the family's Logs hold.
  const planById = new Map<string, LogPlan>();
  for (const ex of input.existing) {
    const header = ex.first.type === "session_fork" ? ex.first : null;
    const parent = header !== null && typeof header.data.parent_session_id === "string" ? (planById.get(header.data.parent_session_id) ?? null) : null;
    const claude = isJsonObject(ex.first.data.claude) ? ex.first.data.claude : {};
    const transcript = ex.id === src.rootId ? 0 : inlineIds.indexOf(ex.id) + 1 || (parent?.transcript ?? 0);
    const role: LogRole =
      ex.id === src.rootId
        ? claude.fork_kind === "claude_fork_session"
          ? "fork_session"
          : rootRole
        : inlineIds.includes(ex.id)
          ? "inline_subagent"
          : claude.fork_kind === "claude_root"
            ? "root_branch"
            : "branch";
    const log = newLog(ex.id, role, parent, transcript);
    log.existed = true;
    log.events = ex.events;
    log.diskEvents = ex.events.length;
    log.shareHops = ex.shareHops;
    log.ownStart = header !== null ? ex.replayCount + 1 : 0;
    if (header !== null) {
      log.forkedToSeq = typeof header.data.forked_to_seq === "number" ? header.data.forked_to_seq : 0;
      const fp = isJsonObject(header.data.claude) ? header.data.claude.fork_point_uuid : null;
      const cut = parent === null || typeof fp !== "string" ? -1 : parent.path.findIndex((r) => r.uuid === fp);
      log.path = parent === null ? [] : parent.path.slice(0, cut + 1);
      log.forkPoint = cut >= 0 ? parent!.path[cut]! : null;
    }
    for (let i = log.ownStart; i < ex.events.length; i++) {
      const e = ex.events[i]!;
      const line = heldLine(e);
      const c = e.data.claude;
      // §3.7: the copied records of a shared fork file are held by its root Log through its carrier.
      if (isJsonObject(c) && e.data.event === "claude_transcript" && Array.isArray(c.copied)) {
        const inheritedSeq = sourceRecordSeqs(log);
        for (const entry of c.copied) {
          const rec = isJsonObject(entry) && typeof entry.line === "number" ? byLine.get(entry.line) : undefined;
          if (rec === undefined) throw changed(input.ws, src, log.id, isJsonObject(entry) && typeof entry.line === "number" ? entry.line : 0);
          const seq = inheritedSeq.get(String(entry.source_uuid));
          if (seq !== undefined) log.lastSeq.set(rec, seq);
          owner.set(rec, log);
          pathFlag.set(rec, true);
          if (rec.message) log.path.push(rec);
        }
      }
      if (line !== null) {
        const rec = byLine.get(line);
        // A held line past the checkpoint (an interrupted run) must still be the file's line.
        if (rec === undefined || (line > input.verifiedLines && !sameLine(e, rec))) throw changed(input.ws, src, log.id, line);
        if (owner.has(rec)) {
          throw refusal(input.ws, src, log.id, "record_in_two_logs", { line });
        }
        owner.set(rec, log);
        const isPath = isJsonObject(c) && c.path === true;
        pathFlag.set(rec, isPath);
        if (isPath) log.path.push(rec);
      }
      if (isJsonObject(c) && typeof c.line === "number") {
        const rec = byLine.get(c.line);
        if (rec !== undefined) log.lastSeq.set(rec, e.seq!);
      }
    }
    planById.set(ex.id, log);
    logs.push(log);
  }
  // §3.7: a fork file whose source is here hangs from the source's Log and stores no copied record.
  let shared: SharedFork | null = null;
  let sharedRoot: LogPlan | null = null;
  if (input.existing.length === 0 && src.kind === "fork_session" && input.forkSource) {
    shared = matchForkFile(src.claudeSessionId, records, input.forkSource);
    if (shared !== null) {
      const g = newLog(shared.parentId, "primary", null, 0);
      g.events = shared.parentEvents;
      g.existed = true;
      sharedRoot = newLog(src.rootId, "fork_session", g, 0);
      sharedRoot.forkedToSeq = shared.forkedToSeq;
      for (const c of shared.copied) {
        owner.set(c, sharedRoot);
        pathFlag.set(c, true);
        if (c.message) sharedRoot.path.push(c);
      }
      logs.push(sharedRoot);
      planById.set(sharedRoot.id, sharedRoot);
    }
  }
  const heldRecords = owner.size;

  const carrierTs = typeof input.existing[0]?.first.ts === "string" ? input.existing[0].first.ts : firstTime(records);
  const times = recordTimes(records, carrierTs);
  const tsOf = (r: ClaudeRecord) => times.get(r) ?? carrierTs;

  const rootOf: LogPlan[] = [];
  const transcriptRoot = (t: number): LogPlan => {
    const known = rootOf[t];
    if (known !== undefined) return known;
    const id = t === 0 ? src.rootId : inlineIds[t - 1]!;
    let log = planById.get(id);
    if (log === undefined) {
      log = newLog(id, t === 0 ? rootRole : "inline_subagent", null, t);
      logs.push(log);
      planById.set(id, log);
    }
    rootOf[t] = log;
    return log;
  };
  transcriptRoot(0);

  // §3.4 steps 1–4, per transcript.
  const transcripts: ClaudeRecord[][] = [[]];
  for (let g = 0; g < groupStarts.length; g++) transcripts.push([]);
  for (const r of records) transcripts[r.transcript]!.push(r);
  const trees: TranscriptTree[] = transcripts.map((t) => new TranscriptTree(t));

  const place = (log: LogPlan, recs: ClaudeRecord[], isPath: boolean) => {
    for (const r of recs.sort((a, b) => a.line - b.line)) {
      owner.set(r, log);
      pathFlag.set(r, isPath);
      log.placed.push({ rec: r, path: isPath });
      if (isPath) log.path.push(r);
    }
  };
  const branch = (g: LogPlan, f: ClaudeRecord | null, recs: ClaudeRecord[], t: number) => {
    const head = recs.reduce((a, b) => (b.line < a.line ? b : a));
    const root = transcriptRoot(t);
    const log = newLog(childLogId(root.id, head.uuid!), f === null ? "root_branch" : "branch", g, t);
    log.forkPoint = f;
    if (f === null) log.path = [];
    else {
      const cut = g.path.indexOf(f);
      log.path = cut >= 0 ? g.path.slice(0, cut + 1) : g.path.filter((r) => r.line <= f.line);
    }
    logs.push(log);
    planById.set(log.id, log);
    place(log, recs, true);
  };

  trees.forEach((tree, t) => {
    const root = transcriptRoot(t);
    const isNew = (r: ClaudeRecord) => !owner.has(r);
    const walkNew = (x: ClaudeRecord) => {
      const w = tree.walk(x, true, (r) => owner.has(r));
      const last = w.at(-1)!;
      const lp = tree.logicalParent(last);
      const f = lp !== null && owner.has(lp) ? lp : null;
      const recs = [...w, ...tree.recover(f === null ? w : [...w, f]).filter(isNew)];
      return { f, recs };
    };
    // Step 1: the leaf's path.
    const leaf = tree.leaf;
    if (leaf !== null && isNew(leaf)) {
      const { f, recs } = walkNew(leaf);
      if (f === null) {
        if (root.path.length === 0) place(root, recs, true);
        else branch(root, null, recs, t);
      } else {
        const g = owner.get(f)!;
        const cp = tree.claudePath(leaf);
        if (g.path.filter(isConversation).every((r) => cp.has(r))) place(g, recs, true);
        else branch(g, f, recs, t);
      }
    }
    // Step 2: late tool results.
    for (const r of tree.messages) {
      if (!isNew(r) || r.type !== "user" || !hasToolResultBlock(r)) continue;
      const p = tree.parent(r);
      if (p !== null && p.type === "assistant" && owner.has(p)) place(owner.get(p)!, [r], true);
    }
    // Step 3: other tips.
    const inner = tree.withConversationDescendant();
    for (const r of tree.messages) {
      if (!isNew(r) || !isConversation(r) || inner.has(r)) continue;
      const { f, recs } = walkNew(r);
      if (f === null) branch(root, null, recs, t);
      else {
        const g = owner.get(f)!;
        if (g.path.at(-1) === f) place(g, recs, true);
        else branch(g, f, recs, t);
      }
    }
    // Step 4: leftovers, as side records.
    for (const r of tree.messages) {
      if (!isNew(r)) continue;
      const held = tree.walk(r).find((x) => owner.has(x));
      place(held ? owner.get(held)! : root, [r], false);
    }
  });
  // Step 5: progress, duplicates, metadata and malformed lines.
  const firstByUuid = new Map<string, ClaudeRecord>();
  for (const r of records) if (r.chain && !r.dup) firstByUuid.set(r.uuid!, r);
  for (const r of records) {
    if (owner.has(r)) continue;
    let target: LogPlan;
    if (r.chain && r.dup) target = owner.get(firstByUuid.get(r.uuid!)!) ?? transcriptRoot(r.transcript);
    else if (r.chain && r.type === "progress") {
      const tree = trees[r.transcript]!;
      const u = tree.bridge(r.parentUuid);
      const m = u === null ? undefined : firstByUuid.get(u);
      target = (m && m.message ? owner.get(m) : undefined) ?? transcriptRoot(r.transcript);
    } else target = transcriptRoot(0);
    place(target, [r], false);
  }

  // Mapping contexts over the whole file: tool names (earlier line, same transcript), usage keys.
  const toolNames = new Map<string, { line: number; name: string }>();
  const firstUsage = new Map<string, number>();
  for (const r of records) {
    const f = r.facts;
    if (f === null || r.type !== "assistant" || !r.message) continue;
    for (const b of f.toolUses) {
      if (b.name === null) continue;
      const key = `${r.transcript}\u0000${b.id}`;
      if (!toolNames.has(key)) toolNames.set(key, { line: r.line, name: b.name });
    }
    const k = usageKeyOf(f);
    if (k !== null && !firstUsage.has(k)) firstUsage.set(k, r.line);
  }
  const toolCalls = new Map<string, ToolUseFact>();
  for (const r of records) {
    if (r.type !== "assistant" || r.facts === null) continue;
    for (const b of r.facts.toolUses) if (!toolCalls.has(b.id)) toolCalls.set(b.id, b);
  }
  const links = subagentLinks(input, records, groupStarts, inlineIds, toolCalls);

  // Emission, parents before children (creation order does that).
  const workspace = input.ws;
  const recordText = new Map<PixirEvent, string>();
  const eventText = new EventTexts();
  const tape = recordTape();
  const src0 = src.sourceKey;
  const eventId = (key: string, part: string, ts: string) => derivedUlid(`claude:${src0}:${key}#${part}`, ts);
  const depth = src.kind === "subagent" ? 2 : 1;
  let changedAny = false;
  for (const log of logs) {
    const wasEmpty = log.events.length === 0;
    if (wasEmpty && log.placed.length === 0 && log !== rootOf[0]) continue;
    if (!log.existed && wasEmpty) {
      if (log === sharedRoot) addForkFileHeader(input.ws, log, src, shared!, carrierTs, records, eventText);
      else if (log.parent === null) addCarrier(log, src, log.transcript === 0 ? null : groupStarts[log.transcript - 1]!, carrierTs, records);
      else addBranchHeader(input.ws, log, src, tsOf, eventText);
    }
    // §2.4: the Events of a batch follow line order, whichever step placed the record.
    log.placed.sort((a, b) => a.rec.line - b.rec.line);
    for (const { rec, path } of log.placed) {
      const key = rec.chain && !rec.dup ? rec.uuid! : `L${rec.line}`;
      const ts = tsOf(rec);
      const message = rec.message;
      const ctx = {
        toolName: (id: string) => {
          const t = toolNames.get(`${rec.transcript}\u0000${id}`);
          return t !== undefined && t.line < rec.line ? t.name : null;
        },
      };
      const usageKey = message && rec.type === "assistant" && rec.facts !== null ? usageKeyOf(rec.facts) : undefined;
      const withUsage = usageKey !== undefined && (usageKey === null || firstUsage.get(usageKey) === rec.line);
      // A canonical line is mapped from its bytes (map-bytes.ts), its Events' data written as text.
      let texts: TextDraft[] | null = null;
      if (rec.canonical && readJsonLine(rec.bytes, rec.start, rec.end, tape, true)) texts = draftTexts(tape, rec.bytes, rec.type!, rec.facts!.subtype, path && message, ctx, withUsage);
      if (texts !== null) {
        const uuid = rec.chain ? `,"uuid":${JSON.stringify(rec.uuid)}` : "";
        texts.forEach((d, i) => {
          const data = new Spliced(rec.bytes).lit("{").append(d.fields).lit(`,"claude":{"line":${rec.line}${uuid},"part":"${d.part}"`);
          if (i === 0) {
            if (message) data.lit(`,"path":${path}`);
            data.lit(',"record":').range(rec.start, rec.end);
          }
          const event = textEvent(eventId(key, d.part, ts), log.id, log.events.length, ts, d.type, data.lit("}}"));
          eventText.set(event, data);
          push(log, event);
        });
      } else {
        // The record is parsed here, once, and let go with its Events.
        const { value: v, text } = rec.read();
        const drafts: ClaudeEventDraft[] = recordDrafts(rec, v, path && message, ctx);
        if (withUsage && v !== null) {
          const u = usageDraft(v);
          if (u !== null) drafts.push(u);
        }
        drafts.forEach((d, i) => {
          const seq = log.events.length;
          let data = d.data;
          if (d.compaction) data = compactionData(data, seq, rec, firstByUuid);
          const claude: JsonObject = { line: rec.line, ...(rec.chain ? { uuid: rec.uuid } : {}), part: d.part };
          if (i === 0) {
            if (message) claude.path = path;
            Object.assign(claude, reproduction(rec, v, text));
          }
          const event: PixirEvent = { id: eventId(key, d.part, ts), session_id: log.id, seq, ts, type: d.type, data: { ...data, claude } };
          // A canonical line is its record's JSON text (§2.3): the writer puts the line itself in the Event.
          if ("record" in claude && text !== null) recordText.set(event, text);
          push(log, event);
        });
      }
      const link = links.get(rec);
      if (link !== undefined) {
        const seq = log.events.length;
        push(log, {
          id: eventId(key, "agent", ts),
          session_id: log.id,
          seq,
          ts,
          type: "subagent_event",
          data: {
            subagent_id: link.subagentId,
            ...(link.childId !== null ? { child_session_id: link.childId } : {}),
            event: "returned",
            status: link.status,
            agent: link.agent,
            task: link.task,
            depth,
            ...(link.childId !== null ? { workspace } : {}),
            ...(link.elapsed !== null ? { elapsed_ms: link.elapsed } : {}),
            claude: { line: rec.line, ...(rec.chain ? { uuid: rec.uuid } : {}), part: "agent" },
          },
        });
      }
      log.lastSeq.set(rec, log.events.length - 1);
    }
    if (log.batch.length > 0 && log.placed.length > 0) changedAny = true;
  }
  const root = rootOf[0]!;
  /** §3.5, §3.6: an Event that stands for no record, at the end of the root Log, with the ts of the Event before it. */
  const appendTail = (key: string, type: PixirEvent["type"], data: JsonObject) => {
    const ts = root.events.at(-1)?.ts ?? carrierTs;
    push(root, { id: derivedUlid(`claude:${src0}:${key}`, ts), session_id: root.id, seq: root.events.length, ts, type, data });
  };
  // §3.6 detected subagents, at the end of a session file's batch.
  if (src.kind !== "subagent") {
    const named = new Set(input.linkedChildren);
    for (const log of logs) for (const e of log.batch) if (e.type === "subagent_event" && typeof e.data.child_session_id === "string") named.add(e.data.child_session_id);
    const candidates = new Map(input.unitChildren);
    groupStarts.forEach((g, i) => candidates.set(`sidechain-${g.uuid}`, inlineIds[i]!));
    const detected = [...candidates].filter(([, id]) => !named.has(id)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [subagentId, childId] of detected) {
      appendTail(`detected:${subagentId}`, "subagent_event", { subagent_id: subagentId, child_session_id: childId, event: "detected", status: "unknown", agent: null, task: null, depth: 1, workspace, claude: { source: src0 } });
      changedAny = true;
    }
  }
  const leaf = trees[0]!.leaf;
  const leafLog = leaf === null ? null : (owner.get(leaf) ?? null);
  const newRecords = records.length - heldRecords;
  if (newRecords > 0 || changedAny || !root.existed) {
    // Only the Events on disk can be checkpoints: this batch's come after it.
    const n = 1 + root.events.slice(0, root.diskEvents).filter((e) => e.type === "workflow_event" && e.data.event === "claude_import").length;
    appendTail(`import:${n}`, "workflow_event", {
      event: "claude_import",
      claude: {
        source: src0,
        bytes: read.completeBytes,
        lines: read.lines,
        records: records.length,
        sha256: input.sha256,
        leaf_uuid: leaf?.uuid ?? null,
        leaf_session_id: leafLog?.id ?? null,
      },
    });
  }
  // §4.3 step 6: an import never appends Claude records after Events written by something else.
  for (const log of logs) {
    const last = log.existed && log.batch.length > 0 ? log.events[log.diskEvents - 1] : undefined;
    if (last !== undefined && !isJsonObject(last.data.claude)) {
      throw refusal(input.ws, src, log.id, "log_diverged");
    }
  }
  return {
    logs,
    root,
    newRecords,
    heldRecords,
    leaf,
    leafLog,
    changed: logs.some((l) => l.batch.length > 0),
    malformed: records.filter((r) => r.problem !== null).length,
    owner,
    records,
    recordText,
    eventText,
  };
}

function sameLine(e: PixirEvent, rec: ClaudeRecord): boolean {
  const c = e.data.claude;
  const held = isJsonObject(c) ? recordLineOf(c) : null;
  const own = rec.raw ?? (rec.text !== null ? Buffer.from(rec.text, "utf8") : null);
  return held !== null && own !== null && held.equals(own);
}

/**
 * An Event whose `data` is the text `data` (map-bytes.ts): parsed only when something reads it (a share
 * header's digest of an inherited prefix, a fork file's match), so a planned Log holds no parsed record.
 */
function textEvent(id: string, sessionId: string, seq: number, ts: string, type: PixirEvent["type"], text: Spliced): PixirEvent {
  let data: JsonObject | undefined;
  return {
    id,
    session_id: sessionId,
    seq,
    ts,
    type,
    get data(): JsonObject {
      return (data ??= JSON.parse(text.toString()) as JsonObject);
    },
    set data(value: JsonObject) {
      data = value;
    },
  };
}

function push(log: LogPlan, e: PixirEvent): void {
  log.events.push(e);
  log.batch.push(e);
}

const changed = (ws: string, src: SourceFile, id: string, line: number): PixirError => refusal(ws, src, id, "transcript_changed", { line });

export type RefusalReason = "log_differs" | "not_a_claude_import" | "transcript_changed" | "record_in_two_logs" | "log_diverged";

const REMOVE_AND_IMPORT = "remove the file's Logs with pixir-log rm and import again";
const REFUSALS: Record<RefusalReason, { message: string; next_actions: string[] }> = {
  log_differs: { message: "session log already exists", next_actions: ["remove the existing logs with pixir-log rm, then import again"] },
  not_a_claude_import: { message: "the log was not made by pixir import claude", next_actions: ["remove the existing logs with pixir-log rm, then import again"] },
  transcript_changed: {
    message: "the Claude transcript changed after it was imported",
    next_actions: [
      "the Logs keep every record imported so far; nothing was written",
      "to import the changed file from scratch, remove the file's Logs with pixir-log rm, its branch Logs before the root (use --materialize-children only for fork children of other sessions), and import again",
    ],
  },
  record_in_two_logs: { message: "a Claude record is held by two logs", next_actions: [REMOVE_AND_IMPORT] },
  log_diverged: { message: "the log has Events written by something else", next_actions: ["an import never appends Claude records after Events written by something else", REMOVE_AND_IMPORT] },
};

/** §4.3: `already_exists` of the import, details `{session_id, log_path, reason, file, line?, next_actions}` plus `extra`. */
export function refusal(ws: string, src: SourceFile, id: string, reason: RefusalReason, extra: JsonObject = {}): PixirError {
  const { message, next_actions } = REFUSALS[reason];
  return new PixirError("already_exists", message, { session_id: id, log_path: logPath(ws, id).rel, reason, file: src.file, ...extra, next_actions });
}

/** §3.8: the range of a compact summary at `seq`. */
function compactionData(data: JsonObject, seq: number, rec: ClaudeRecord, byUuid: Map<string, ClaudeRecord>): JsonObject {
  const out: JsonObject = { ...data, range: { from_seq: 0, to_seq: seq - 1 }, source_event_count: seq };
  const p = rec.parentUuid === null ? undefined : byUuid.get(rec.parentUuid);
  const v = p !== undefined && p.type === "system" && p.facts?.compactBoundary === true ? p.value : null;
  if (v) {
    const meta = isJsonObject(v.compactMetadata) ? v.compactMetadata : {};
    if (meta.trigger !== undefined) out.trigger = meta.trigger;
    if (meta.preTokens !== undefined) out.pre_tokens = meta.preTokens;
  }
  return out;
}

/** §3.5: the carrier of a transcript root Log. */
function addCarrier(log: LogPlan, src: SourceFile, groupStart: ClaudeRecord | null, fileTs: string, records: ClaudeRecord[], shared: SharedFork | null = null): void {
  const ts = groupStart === null ? fileTs : firstTime(records.filter((r) => r.transcript === groupStart.transcript));
  const kind = groupStart !== null ? "inline_subagent" : src.kind;
  const forkedFrom = shared !== null ? { session_id: shared.source, message_uuid: shared.messageUuid, shared: true } : forkedFromOf(src, records);
  push(log, {
    id: derivedUlid(`claude:${src.sourceKey}:${groupStart === null ? "transcript" : `sidechain:${groupStart.uuid}`}`, ts),
    session_id: log.id,
    seq: log.events.length,
    ts,
    type: "workflow_event",
    data: {
      event: "claude_transcript",
      claude: {
        source: src.sourceKey,
        kind,
        session_id: isValidSessionId(src.claudeSessionId) ? src.claudeSessionId : null,
        agent_id: src.agentId,
        file: src.file,
        project_dir: src.projectDir,
        layout: groupStart !== null ? "inline" : src.layout,
        forked_from: forkedFrom,
        ...(shared !== null ? { copied: shared.entries } : {}),
      },
    },
  });
}

/** §3.7 (not shared): the carrier's `forked_from` of a fork file, else null. */
export function forkedFromOf(src: SourceFile, records: ClaudeRecord[]): JsonObject | null {
  if (src.kind !== "fork_session") return null;
  let uuid: unknown = null;
  let s: unknown = null;
  for (const r of records) {
    const ff = r.value?.forkedFrom;
    if (r.chain && isJsonObject(ff) && typeof ff.sessionId === "string" && ff.sessionId !== src.claudeSessionId) {
      s = ff.sessionId;
      uuid = ff.messageUuid ?? null;
    }
  }
  return s === null ? null : { session_id: s, message_uuid: uuid, shared: false };
}

/** §3.4 "branch of G at F" and fork.md §4.3: the share_v1 header, the inherited prefix, a carried checkpoint. */
function addBranchHeader(ws: string, log: LogPlan, src: SourceFile, tsOf: (r: ClaudeRecord) => string, texts: EventTexts): void {
  const g = log.parent!;
  const f = log.forkPoint;
  const toSeq = f === null ? 0 : (g.lastSeq.get(f) ?? 0);
  log.forkedToSeq = toSeq;
  const head = log.placed.reduce((a, b) => (b.rec.line < a.rec.line ? b : a)).rec;
  const ts = tsOf(head);
  let familyRoot: LogPlan = g;
  while (familyRoot.parent !== null) familyRoot = familyRoot.parent;
  const key = `claude:${src.sourceKey}:fork:${head.uuid}`;
  const claude = { source: src.sourceKey, fork_kind: f === null ? "claude_root" : "claude_branch", fork_point_uuid: f?.uuid ?? null, head_uuid: head.uuid };
  const replay = g.shareHops + 1 > MAX_IMPORT_SHARE_HOPS;
  const inherited = addShareHeader(ws, log, { id: g.id, forkRoot: familyRoot.id, events: g.events }, toSeq, key, ts, claude, texts, replay);
  log.shareHops = replay ? 0 : g.shareHops + 1;
  carryCheckpoint(log, g.events, inherited, toSeq, `${key}#checkpoint`, ts);
}

/**
 * fork.md §4.3: a share_v1 header of `log` at `toSeq` of `parent`, and the prefix it stands for; returns
 * that prefix. `replay`: the header says replay_v1 and the prefix is stored in the Log (as pixir-log
 * materialize writes a share child), the same History either way.
 */
function addShareHeader(ws: string, log: LogPlan, parent: { id: string; forkRoot: string; events: PixirEvent[] }, toSeq: number, key: string, ts: string, claude: JsonObject, texts: EventTexts, replay = false): PixirEvent[] {
  const inherited = parent.events.filter((e) => isInherited(e, toSeq));
  const shared = texts.shareData(ws, parent, toSeq, inherited);
  const header: PixirEvent = {
    id: derivedUlid(key, ts),
    session_id: log.id,
    seq: 0,
    ts,
    type: "session_fork",
    data: replay ? { ...shared, strategy: "replay_v1", limitations: REPLAY_LIMITATIONS, claude } : { ...shared, claude },
  };
  push(log, header);
  for (let i = 0; i < inherited.length; i++) {
    const copy = texts.inheritedCopy(inherited[i]!, header.id!, log.id, i + 1);
    if (replay) push(log, copy);
    else log.events.push(copy);
  }
  log.ownStart = log.events.length;
  return inherited;
}

/**
 * The `data` text of the Events mapped from their records' bytes (map-bytes.ts), by Event: the writer
 * writes them from it, and a share header digests their lines from it (a prefix read from bytes, as the
 * loader reads it), so their data is never parsed.
 */
class EventTexts extends Map<PixirEvent, Spliced> {
  private readonly shared = new Map<string, JsonObject>();
  /**
   * fork.md §4.3: the share_v1 header data of `parent`'s prefix up to `toSeq` (`inherited`), digested once
   * for every Log that branches at that Event (a record with two or more children).
   */
  shareData(ws: string, parent: { id: string; forkRoot: string }, toSeq: number, inherited: readonly PixirEvent[]): JsonObject {
    const key = `${parent.id}\u0000${parent.forkRoot}\u0000${toSeq}`;
    let data = this.shared.get(key);
    if (data === undefined) this.shared.set(key, (data = shareHeaderData(ws, parent.id, parent.forkRoot, toSeq, inherited, (e) => this.lineOf(e))));
    return { ...data, open_tool_calls: [...(data.open_tool_calls as string[])] };
  }
  /** `e`'s Log line without its `\n`, when its data is a text. */
  lineOf(e: PixirEvent): Buffer | null {
    const data = this.get(e);
    if (data === undefined) return null;
    const parts: Buffer[] = [Buffer.from(envelopeHead(e), "utf8")];
    data.emit((part) => parts.push(typeof part === "string" ? Buffer.from(part, "utf8") : part));
    parts.push(CLOSE_LINE);
    return Buffer.concat(parts);
  }
  /** The child's copy of an inherited Event (loader.ts inheritedItem), its data the parent's, read when asked for. */
  inheritedCopy(e: PixirEvent, headerId: string, childId: string, k: number): PixirEvent {
    const data = this.get(e);
    if (data === undefined) return inheritedItem({ event: e }, headerId, childId, k).event;
    // Built field by field: a spread of `e` would read (and parse) its data.
    const copy = inheritedItem({ event: { id: e.id, session_id: e.session_id, seq: e.seq, ts: e.ts, type: e.type, data: {} } }, headerId, childId, k).event;
    Object.defineProperty(copy, "data", { get: () => e.data, enumerable: true, configurable: true });
    this.set(copy, data);
    return copy;
  }
}

const CLOSE_LINE = Buffer.from("}");

/** §3.8 carried checkpoint: the latest checkpoint of the parent at or before the fork point. */
function carryCheckpoint(log: LogPlan, parentEvents: PixirEvent[], inherited: PixirEvent[], toSeq: number, key: string, ts: string): void {
  const c = parentEvents.filter((e) => e.type === "history_compaction" && e.seq! <= toSeq).at(-1);
  if (c === undefined || !isJsonObject(c.data.range) || typeof c.data.range.to_seq !== "number") return;
  const upTo = c.data.range.to_seq;
  const n = inherited.filter((e) => e.seq! <= upTo).length;
  const cClaude = isJsonObject(c.data.claude) ? c.data.claude : {};
  push(log, {
    id: derivedUlid(key, ts),
    session_id: log.id,
    seq: log.events.length,
    ts,
    type: "history_compaction",
    data: { ...c.data, range: { ...c.data.range, from_seq: 0, to_seq: n }, source_event_count: n + 1, claude: { carried_from: c.id, uuid: cClaude.uuid ?? null } },
  });
}

/** §3.7 shared: the fork file's root Log is a share_v1 child of the source's Log G; then its carrier. */
function addForkFileHeader(ws: string, log: LogPlan, src: SourceFile, shared: SharedFork, ts: string, records: ClaudeRecord[], texts: EventTexts): void {
  const key = `claude:${src.sourceKey}:forked_from`;
  const claude = { source: src.sourceKey, fork_kind: "claude_fork_session", forked_from: { session_id: shared.source, message_uuid: shared.messageUuid } };
  const parent = { id: shared.parentId, forkRoot: shared.forkRoot, events: shared.parentEvents };
  const inherited = addShareHeader(ws, log, parent, shared.forkedToSeq, key, ts, claude, texts);
  // A copied record stands for its source record: a branch at it forks at that record's last inherited Event.
  const inheritedSeq = sourceRecordSeqs(log);
  shared.entries.forEach((entry, i) => {
    const seq = inheritedSeq.get(entry.source_uuid);
    if (seq !== undefined) log.lastSeq.set(shared.copied[i]!, seq);
  });
  addCarrier(log, src, null, ts, records, shared);
  carryCheckpoint(log, shared.parentEvents, inherited, shared.forkedToSeq, `${key}#checkpoint`, ts);
}

/** The seq of the last inherited Event of each source record (by uuid) in a fork-session child's History. */
function sourceRecordSeqs(log: LogPlan): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 1; i < log.ownStart && i < log.events.length; i++) {
    const e = log.events[i]!;
    const c = e.data.claude;
    if (isJsonObject(c) && typeof c.uuid === "string" && typeof e.seq === "number") out.set(c.uuid, e.seq);
  }
  return out;
}

/** §3.6: which records link a subagent transcript, computed over the whole file (line order). */
function subagentLinks(input: BatchInput, records: ClaudeRecord[], groupStarts: ClaudeRecord[], inlineIds: string[], toolCalls: Map<string, ToolUseFact>): Map<ClaudeRecord, Link> {
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

export const planSha256 = sha256Hex;
