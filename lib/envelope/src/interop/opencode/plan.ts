// docs/gemini-opencode-interop.md §6: the Logs of one opencode session. Each part of each message becomes
// its Events, in message then part order; the first Event of a message keeps the message info and the
// first Event of a part keeps the part, so the export gives both back. A compaction's summary message is a
// history_compaction checkpoint; a pending revert leaves the reverted messages in a share_v1 child.
import { sha256Hex } from "../../event/ids.js";
import { isJsonObject, type CanonicalType, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { checkPlannedLines, plannedLogBytes } from "../../session/agent-files.js";
import { derivedUlid } from "../../event/ids.js";
import { isValidSessionId } from "../../event/session-id.js";
import { plannedShareHeader } from "../../fork/fork.js";
import type { DigestLadder } from "../../store/digest-ladder.js";
import { inheritedItem, isInherited } from "../../store/loader.js";
import type { OpencodeMessage, OpencodeSession, OpencodeSessionRef } from "./source.js";

export interface PlannedOpencodeLog {
  sessionId: string;
  role: "root" | "reverted" | "fork";
  parent: PlannedOpencodeLog | null;
  forkedToSeq: number | null;
  stored: PixirEvent[];
  resolved: PixirEvent[];
  /** The prefix digests of `resolved`, made when a child is first cut from this Log. */
  digests?: DigestLadder;
}

interface Draft {
  type: CanonicalType;
  sub: string;
  data: JsonObject;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const obj = (v: unknown): JsonObject => (isJsonObject(v) ? v : {});
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** An opencode session id as a Log id: itself when valid, else a hash (never echoed). */
export function opencodeBaseSessionId(id: string): string {
  return isValidSessionId(id) && Buffer.byteLength(id, "utf8") <= 200 ? id : `opencode-${sha256Hex(id).slice(0, 32)}`;
}

const isoOf = (ms: unknown): string => new Date(typeof ms === "number" && Number.isFinite(ms) ? ms : 0).toISOString();
const textOfParts = (parts: JsonObject[]): string =>
  parts
    .filter((p) => p.type === "text" && p.ignored !== true && typeof p.text === "string")
    .map((p) => p.text as string)
    .join("\n");

/** The Events of one part. */
function partDrafts(msg: OpencodeMessage, part: JsonObject, subagentLog: (id: string) => string): Draft[] {
  const role = msg.info.role;
  const model = str(msg.info.modelID);
  switch (part.type) {
    case "text":
      if (part.ignored === true) break;
      return role === "user"
        ? [{ type: "user_message", sub: "text", data: { text: str(part.text) ?? "", origin: part.synthetic === true ? "context" : "user" } }]
        : [{ type: "assistant_message", sub: "text", data: { text: str(part.text) ?? "", model, provider: str(msg.info.providerID) } }];
    case "reasoning":
      return [{ type: "reasoning", sub: "reasoning", data: { text: str(part.text) ?? "", model, dialect: "opencode" } }];
    case "tool":
      return toolDrafts(part, subagentLog);
    case "step-finish": {
      const t = obj(part.tokens);
      const cache = obj(t.cache);
      return [
        {
          type: "provider_usage",
          sub: "usage",
          data: {
            provider: str(msg.info.providerID),
            model,
            input: num(t.input),
            output: num(t.output) + num(t.reasoning),
            reasoning: num(t.reasoning),
            cache_read: num(cache.read),
            cache_write: num(cache.write),
            cost_usd: typeof part.cost === "number" ? part.cost : null,
          },
        },
      ];
    }
  }
  return [{ type: "workflow_event", sub: "record", data: { event: "opencode_part", part_type: str(part.type) } }];
}

function toolDrafts(part: JsonObject, subagentLog: (id: string) => string): Draft[] {
  const state = obj(part.state);
  const callId = str(part.callID) ?? str(part.id) ?? "";
  const name = str(part.tool) ?? "";
  const out: Draft[] = [{ type: "tool_call", sub: "call", data: { call_id: callId, name, args: obj(state.input) } }];
  const child = str(obj(state.metadata).sessionId);
  if (child !== null) {
    out.push({ type: "subagent_event", sub: "link", data: { subagent_id: child, child_session_id: subagentLog(child), event: "spawned", agent: str(obj(state.input).subagent_type) ?? name, call_id: callId } });
  }
  if (state.status === "completed" || state.status === "error") {
    const output = state.status === "completed" ? (str(state.output) ?? "") : (str(state.error) ?? "");
    out.push({ type: "tool_result", sub: "result", data: { call_id: callId, tool_name: name, ok: state.status === "completed", output } });
  }
  return out;
}

class SessionPlanner {
  readonly logs: PlannedOpencodeLog[] = [];
  current: PlannedOpencodeLog;
  /** Seq of the last Event before each message, in the current Log (the range of a compaction). */
  private messageStart = new Map<string, number>();

  constructor(
    private readonly ws: string,
    private readonly session: OpencodeSession,
    readonly base: string,
  ) {
    this.current = this.newLog(base, "root", null, null);
  }

  private newLog(sessionId: string, role: PlannedOpencodeLog["role"], parent: PlannedOpencodeLog | null, forkedToSeq: number | null): PlannedOpencodeLog {
    const log: PlannedOpencodeLog = { sessionId, role, parent, forkedToSeq, stored: [], resolved: [] };
    this.logs.push(log);
    return log;
  }

  push(type: CanonicalType, data: JsonObject, key: string, ts: string): void {
    const log = this.current;
    const data2 = type === "subagent_event" ? { ...data, workspace: this.ws } : data;
    const event: PixirEvent = { id: derivedUlid(`opencode:${String(this.session.info.id)}:${key}`, ts), session_id: log.sessionId, seq: log.resolved.length, ts, type, data: data2 };
    log.stored.push(event);
    log.resolved.push(event);
  }

  header(): void {
    const info = this.session.info;
    const ts = isoOf(obj(info.time).created);
    this.push("workflow_event", {
      event: "opencode_session",
      agent: "opencode",
      session_id: String(info.id),
      cwd: str(info.directory),
      title: str(info.title),
      parent_session_id: str(info.parentID),
      opencode: { session: info },
    }, "session", ts);
  }

  message(msg: OpencodeMessage, summaryOf: string | null): void {
    const id = String(msg.info.id);
    const ts = isoOf(obj(msg.info.time).created);
    this.messageStart.set(id, this.current.resolved.length - 1);
    const keep = (first: boolean, part: JsonObject | null, partFirst: boolean): JsonObject => ({
      message_id: id,
      ...(first ? { message: msg.info } : {}),
      ...(part !== null ? (partFirst ? { part } : { part_id: String(part.id) }) : {}),
    });
    if (summaryOf !== null) {
      // The summary a compaction produced: one checkpoint hiding everything before the compaction request.
      const to = this.messageStart.get(summaryOf) ?? this.current.resolved.length - 1;
      this.push("history_compaction", {
        strategy: "opencode_compaction",
        summary: textOfParts(msg.parts),
        range: { from_seq: 0, to_seq: to },
        source_event_count: to + 1,
        opencode: { message_id: id, message: msg.info, parts: msg.parts },
      }, `${id}#summary`, ts);
      return;
    }
    if (msg.parts.length === 0) {
      this.push("workflow_event", { event: "opencode_message", role: str(msg.info.role), opencode: keep(true, null, false) }, `${id}#message`, ts);
      return;
    }
    let first = true;
    for (const part of msg.parts) {
      partDrafts(msg, part, opencodeBaseSessionId).forEach((d, i) => {
        this.push(d.type, { ...d.data, opencode: keep(first, part, i === 0) }, `${id}:${String(part.id)}#${d.sub}`, ts);
        first = false;
      });
    }
  }

  /** A pending revert: the messages from the reverted one on continue in a share_v1 child. */
  revertBranch(at: string): void {
    const parent = this.current;
    const ts = parent.resolved.at(-1)!.ts!;
    this.current = this.newLog(`${this.base}.reverted`, "reverted", parent, parent.resolved.length - 1);
    shareHeader(this.current, this.ws, this.base, derivedUlid(`opencode:${String(this.session.info.id)}:revert:${at}`, ts), ts, {
      synthetic: "reverted",
      session: String(this.session.info.id),
      revert: obj(this.session.info.revert),
    });
  }

  /** A session opencode forked from another (its first messages copied under new ids): a share_v1 child. */
  forkCopy(copy: ForkCopy): void {
    this.logs.length = 0;
    const ts = isoOf(obj(this.session.info.time).created);
    this.current = this.newLog(this.base, "fork", copy.parent, copy.toSeq);
    let root = copy.parent;
    while (root.parent !== null) root = root.parent;
    shareHeader(this.current, this.ws, root.sessionId, derivedUlid(`opencode:${String(this.session.info.id)}:fork`, ts), ts, {
      synthetic: "fork_copy",
      agent: "opencode",
      cwd: str(this.session.info.directory),
      title: str(this.session.info.title),
      session: this.session.info,
      source_session_id: copy.sourceId,
      copied: copy.copied,
    });
  }

  /** Where each message's last Event is (a fork copy of this session forks there). */
  readonly messageEnd = new Map<string, { log: PlannedOpencodeLog; seq: number }>();
  noteEnd(id: string): void {
    this.messageEnd.set(id, { log: this.current, seq: this.current.resolved.length - 1 });
  }
}

export interface ForkCopy {
  parent: PlannedOpencodeLog;
  toSeq: number;
  sourceId: string;
  /** The copies' ids, in order: each message's new id and its parts' new ids. */
  copied: Array<{ id: string; parts: string[] }>;
}

/** fork.md §4.3: the share_v1 header of `child` forked from its parent at `child.forkedToSeq`, and its resolved prefix. */
function shareHeader(child: PlannedOpencodeLog, ws: string, rootId: string, id: string, ts: string, opencode: JsonObject): void {
  const parent = child.parent!;
  const toSeq = child.forkedToSeq!;
  const inherited = parent.resolved.filter((e) => isInherited(e, toSeq));
  const header: PixirEvent = {
    id,
    session_id: child.sessionId,
    seq: 0,
    ts,
    type: "session_fork",
    data: { ...plannedShareHeader(ws, parent, child, rootId, toSeq, inherited), opencode },
  };
  child.stored.push(header);
  child.resolved.push(header);
  inherited.forEach((e, i) => child.resolved.push(inheritedItem({ event: e }, header.id!, child.sessionId, i + 1).event));
}

/** The compaction request each summary message answers: the user message before it with a compaction part. */
function summaryTargets(messages: OpencodeMessage[]): Map<string, string> {
  const out = new Map<string, string>();
  let request: string | null = null;
  for (const m of messages) {
    if (m.info.role === "user") request = m.parts.some((p) => p.type === "compaction") ? String(m.info.id) : null;
    else if (m.info.summary === true && request !== null) out.set(String(m.info.id), request);
  }
  return out;
}

const withoutKeys = (o: JsonObject, keys: string[]): string => JSON.stringify(Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k))));
const messageKey = (m: OpencodeMessage): string =>
  JSON.stringify([withoutKeys(m.info, ["id", "sessionID", "parentID"]), m.parts.map((p) => withoutKeys(p, ["id", "sessionID", "messageID"]))]);

/**
 * What a run keeps of each session it planned, in order: its reference (to read it again) and a digest of
 * its first message (ids aside), all a later session needs to tell whether it may be a fork copy of it. The
 * session itself is let go; a fork copy's source is read and planned again when one is found.
 */
export class PlannedSessions {
  private readonly records: Array<{ ref: OpencodeSessionRef; firstKey: string | null }> = [];
  private last: { index: number; session: OpencodeSession; planner: SessionPlanner } | null = null;

  get size(): number {
    return this.records.length;
  }

  add(ref: OpencodeSessionRef, session: OpencodeSession): void {
    this.records.push({ ref, firstKey: session.messages.length > 0 ? sha256Hex(messageKey(session.messages[0]!)) : null });
  }

  /** The sessions before the `limit`-th whose first message is `firstKey`, in order. */
  candidates(firstKey: string, limit: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < limit; i++) if (this.records[i]!.firstKey === firstKey) out.push(i);
    return out;
  }

  /** The session at `index` read again (its records as the run first read them; what was skipped then, skipped again). */
  session(index: number): OpencodeSession {
    if (this.last?.index === index) return this.last.session;
    return this.records[index]!.ref.read(true, []);
  }

  /** The session at `index` read and planned again, as it was planned in its turn (only the sessions before it known). */
  planned(ws: string, index: number): { session: OpencodeSession; planner: SessionPlanner } {
    if (this.last?.index !== index) {
      const session = this.session(index);
      this.last = { index, session, planner: planSession(ws, session, this, index) };
    }
    return this.last;
  }
}

/**
 * opencode's fork copies the first messages of a session under new ids and records no link. A session
 * without a parent whose first k ≥ 1 messages equal (ids aside) the first k of an earlier session is its
 * fork: the longest such copy wins, the earlier source on a tie.
 */
function findForkCopy(ws: string, session: OpencodeSession, planned: PlannedSessions, limit: number): ForkCopy | null {
  if (typeof session.info.parentID === "string" || session.messages.length === 0) return null;
  const candidates = planned.candidates(sha256Hex(messageKey(session.messages[0]!)), limit);
  if (candidates.length === 0) return null;
  const keys = session.messages.map(messageKey);
  let best: { k: number; index: number; source: OpencodeSession } | null = null;
  for (const index of candidates) {
    const source = planned.session(index);
    let k = 0;
    while (k < keys.length && k < source.messages.length && keys[k] === messageKey(source.messages[k]!)) k++;
    if (k > 0 && (best === null || k > best.k)) best = { k, index, source };
  }
  if (best === null) return null;
  const { planner } = planned.planned(ws, best.index);
  const end = planner.messageEnd.get(String(best.source.messages[best.k - 1]!.info.id))!;
  return {
    parent: end.log,
    toSeq: end.seq,
    sourceId: String(best.source.info.id),
    copied: session.messages.slice(0, best.k).map((m) => ({ id: String(m.info.id), parts: m.parts.map((p) => String(p.id)) })),
  };
}

/** The Logs of one session, knowing the first `limit` sessions planned before it. */
function planSession(ws: string, session: OpencodeSession, planned: PlannedSessions, limit: number): SessionPlanner {
  const base = opencodeBaseSessionId(String(session.info.id));
  const p = new SessionPlanner(ws, session, base);
  const copy = findForkCopy(ws, session, planned, limit);
  if (copy === null) p.header();
  else p.forkCopy(copy);
  const revertAt = str(obj(session.info.revert).messageID);
  const summaries = summaryTargets(session.messages);
  session.messages.forEach((m, i) => {
    if (copy !== null && i < copy.copied.length) return;
    if (revertAt !== null && String(m.info.id) === revertAt && p.current.role !== "reverted") p.revertBranch(revertAt);
    p.message(m, summaries.get(String(m.info.id)) ?? null);
    p.noteEnd(String(m.info.id));
  });
  return p;
}

/**
 * The Logs of one session (their Events; their bytes are made as they are checked or written), the sessions
 * planned before it (the first `limit` of `planned`, all by default) known for its fork copy. The caller adds
 * it to `planned` once it is the next one.
 */
export function planOpencodeSession(ws: string, session: OpencodeSession, planned: PlannedSessions = new PlannedSessions(), limit: number = planned.size): PlannedOpencodeLog[] {
  return planSession(ws, session, planned, limit).logs;
}

/** A planned Log's lines checked as they would be written, none kept (a dry run). */
export function checkOpencodeLog(log: PlannedOpencodeLog, source: string): void {
  checkPlannedLines(log.stored, source, undefined);
}

/** A planned Log's bytes: what is compared with a Log on disk. */
export const opencodeLogBytes = (log: PlannedOpencodeLog, source: string): Buffer => plannedLogBytes(log.stored, source);
