// claude-interop.md §2.4, §3.2–§3.8: what the import plans with, of each record (its chain fields, times,
// message id, tool calls and results, the subagent it reports), so that planning a file needs no parsed
// record. factsOfValueInto reads them from the parsed record: the plain rule. factsOfTapeInto reads them
// from the bytes of a canonical line (fast/json-tape.ts), and lib/envelope/test/interop/claude-bytes.test.ts
// holds the two to the same facts on generated and real records.
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { J_ARRAY, J_NULL, J_NUMBER, J_OBJECT, J_STRING, J_TRUE, JsonTape, memberOf, numberOf, stringOf } from "../../fast/json-tape.js";
import { K_UUID, K_PARENT, K_SIDECHAIN, K_LOGICAL, K_SUBTYPE, K_ATTACHMENT, K_DATA, K_OPERATION, K_TYPE, K_TIMESTAMP, K_SNAPSHOT, K_MESSAGE, K_ID, K_REQUEST, K_CONTENT, K_NAME, K_INPUT, K_SUBAGENT_TYPE, K_DESCRIPTION, K_PROMPT, K_TOOL_USE_ID, K_IS_ERROR, K_TOOL_USE_RESULT, K_AGENT_ID, K_STATUS, K_DURATION, L_COMPACT_BOUNDARY, L_TOOL_RESULT, L_TOOL_USE } from "./record-keys.js";

/** A `tool_use` block of `message.content` with a string `id`. */
export interface ToolUseFact {
  id: string;
  name: string | null;
  /** `input.subagent_type`, `input.description`, `input.prompt` when strings (§3.6). */
  subagentType: string | null;
  description: string | null;
  prompt: string | null;
}

/** A `tool_result` block of `message.content`. */
export interface ToolResultFact {
  toolUseId: string | null;
  isError: boolean;
}

/** The facts most records lack, kept apart (null when all are). */
export interface RareFacts {
  logicalParentUuid: string | null;
  subtype: string | null;
  snapshotTimestamp: string | null;
  toolUseResult: { agentId: string | null; status: string | null; totalDurationMs: number | null } | null;
}

/** A record's fact flags, in one small integer (FactsSink `flags`). */
export const FACT_CHAIN = 1;
export const FACT_SIDECHAIN = 2;
export const FACT_COMPACT_BOUNDARY = 4;

/**
 * Where the rules below put a record's facts: a record's own fields (transcript.ts ClaudeRecord), with no
 * object made between (a facts object made and let go per record was promoted garbage on a large unit,
 * docs/performance.md, "Round 11"), or whatever a test wants to compare.
 */
export interface FactsSink<T> {
  takeFacts(
    flags: number,
    uuid: string | null,
    parentUuid: string | null,
    timestamp: string | null,
    messageId: string | null,
    requestId: string | null,
    toolUses: ToolUseFact[],
    toolResults: ToolResultFact[],
    rare: RareFacts | null,
  ): T;
}

/** What planning reads of a record: the record itself (transcript.ts ClaudeRecord keeps them as its own fields). */
export interface Facts {
  readonly chain: boolean;
  readonly sidechain: boolean;
  readonly compactBoundary: boolean;
  readonly uuid: string | null;
  readonly parentUuid: string | null;
  readonly timestamp: string | null;
  readonly messageId: string | null;
  readonly requestId: string | null;
  readonly toolUses: ToolUseFact[];
  readonly toolResults: ToolResultFact[];
  readonly logicalParentUuid: string | null;
  readonly subtype: string | null;
  readonly snapshotTimestamp: string | null;
  readonly toolUseResult: RareFacts["toolUseResult"];
}

/** One string per common value (record types, tool names): a large unit holds one record per line. */
const INTERNED = new Map<string, string>();
export function interned(s: string): string;
export function interned(s: string | null): string | null;
export function interned(s: string | null): string | null {
  if (s === null) return null;
  const known = INTERNED.get(s);
  if (known !== undefined) return known;
  if (INTERNED.size < 256) INTERNED.set(s, s);
  return s;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

// Most records call no tool and return none: they share these (a large unit holds one facts per record).
export const NO_TOOL_USES: ToolUseFact[] = Object.freeze([]) as unknown as ToolUseFact[];
export const NO_TOOL_RESULTS: ToolResultFact[] = Object.freeze([]) as unknown as ToolResultFact[];
const usesOrNone = (list: ToolUseFact[]): ToolUseFact[] => (list.length === 0 ? NO_TOOL_USES : list);
const resultsOrNone = (list: ToolResultFact[]): ToolResultFact[] => (list.length === 0 ? NO_TOOL_RESULTS : list);

type TurFacts = RareFacts["toolUseResult"];

/** The rare facts in one object, or null when a record lacks them all (most do). */
function rareOrNull(logicalParentUuid: string | null, subtype: string | null, snapshotTimestamp: string | null, toolUseResult: TurFacts): RareFacts | null {
  if (logicalParentUuid === null && subtype === null && snapshotTimestamp === null && toolUseResult === null) return null;
  return { logicalParentUuid, subtype, snapshotTimestamp, toolUseResult };
}

/** The facts of a parsed record (the plain rule), put in `sink`. */
export function factsOfValueInto<T>(v: JsonObject, sink: FactsSink<T>): T {
  const pu = v.parentUuid;
  const chain = typeof v.uuid === "string" && (typeof pu === "string" || pu === null);
  const msg = isJsonObject(v.message) ? v.message : null;
  const content = msg !== null && Array.isArray(msg.content) ? msg.content : [];
  const toolUses: ToolUseFact[] = [];
  const toolResults: ToolResultFact[] = [];
  for (const b of content) {
    if (!isJsonObject(b)) continue;
    if (b.type === "tool_use" && typeof b.id === "string") {
      const input = isJsonObject(b.input) ? b.input : {};
      toolUses.push({ id: b.id, name: interned(str(b.name)), subagentType: str(input.subagent_type), description: str(input.description), prompt: str(input.prompt) });
    } else if (b.type === "tool_result") toolResults.push({ toolUseId: str(b.tool_use_id), isError: b.is_error === true });
  }
  const tur = isJsonObject(v.toolUseResult) ? v.toolUseResult : null;
  return sink.takeFacts(
    (chain ? FACT_CHAIN : 0) | (v.isSidechain === true ? FACT_SIDECHAIN : 0) | (v.subtype === "compact_boundary" ? FACT_COMPACT_BOUNDARY : 0),
    chain ? (v.uuid as string) : null,
    chain ? (pu as string | null) : null,
    str(v.timestamp),
    msg !== null ? str(msg.id) : null,
    str(v.requestId),
    usesOrNone(toolUses),
    resultsOrNone(toolResults),
    rareOrNull(
      str(v.logicalParentUuid),
      str(v.subtype) ?? (isJsonObject(v.attachment) ? str(v.attachment.type) : null) ?? (isJsonObject(v.data) ? str(v.data.type) : null) ?? str(v.operation),
      isJsonObject(v.snapshot) ? str(v.snapshot.timestamp) : null,
      tur === null ? null : { agentId: str(tur.agentId), status: str(tur.status), totalDurationMs: typeof tur.totalDurationMs === "number" ? tur.totalDurationMs : null },
    ),
  );
}

/**
 * The tape a record line is read into: the record's members, theirs, and below `message` the content
 * blocks, their members and (a tool_result's content) theirs, with the members of a tool_use's `input`.
 */
export const recordTape = (): JsonTape => new JsonTape(K_MESSAGE, 6, 2);

/** The string at `node`, or null when it is absent or not a string. */
function tapeStr(t: JsonTape, b: Buffer, node: number): string | null {
  return node >= 0 && t.kind[node] === J_STRING ? stringOf(t, b, node) : null;
}

/** The string member `key` of object `node`, or null. */
const memberStr = (t: JsonTape, b: Buffer, node: number, key: Uint8Array): string | null => (node >= 0 && t.kind[node] === J_OBJECT ? tapeStr(t, b, memberOf(t, b, node, key)) : null);

/** `node` is a string whose text is `lit` (plain ASCII, so its bytes are compared as they are). */
function isLiteral(t: JsonTape, b: Buffer, node: number, lit: Uint8Array): boolean {
  if (node < 0 || t.kind[node] !== J_STRING) return false;
  const s = t.start[node]! + 1;
  if (t.end[node]! - 1 - s !== lit.length) return false;
  for (let i = 0; i < lit.length; i++) if (b[s + i] !== lit[i]) return false;
  return true;
}

/** The facts of a canonical record line read into `t` (readJsonLine with recordTape), the fast rule, put in `sink`. */
export function factsOfTapeInto<T>(t: JsonTape, b: Buffer, sink: FactsSink<T>): T {
  const uuidNode = memberOf(t, b, 0, K_UUID);
  const puNode = memberOf(t, b, 0, K_PARENT);
  const chain = uuidNode >= 0 && t.kind[uuidNode] === J_STRING && puNode >= 0 && (t.kind[puNode] === J_STRING || t.kind[puNode] === J_NULL);
  const subtypeNode = memberOf(t, b, 0, K_SUBTYPE);
  const msg = memberOf(t, b, 0, K_MESSAGE);
  const isMsg = msg >= 0 && t.kind[msg] === J_OBJECT;
  const content = isMsg ? memberOf(t, b, msg, K_CONTENT) : -1;
  // Made at a record's first tool call or result: most records have none.
  let toolUses: ToolUseFact[] | null = null;
  let toolResults: ToolResultFact[] | null = null;
  if (content >= 0 && t.kind[content] === J_ARRAY) {
    for (let block = t.firstChild[content]!; block >= 0; block = t.nextSibling[block]!) {
      if (t.kind[block] !== J_OBJECT) continue;
      const type = memberOf(t, b, block, K_TYPE);
      if (isLiteral(t, b, type, L_TOOL_USE)) {
        const id = memberStr(t, b, block, K_ID);
        if (id === null) continue;
        const input = memberOf(t, b, block, K_INPUT);
        (toolUses ??= []).push({ id, name: interned(memberStr(t, b, block, K_NAME)), subagentType: memberStr(t, b, input, K_SUBAGENT_TYPE), description: memberStr(t, b, input, K_DESCRIPTION), prompt: memberStr(t, b, input, K_PROMPT) });
      } else if (isLiteral(t, b, type, L_TOOL_RESULT)) {
        const isError = memberOf(t, b, block, K_IS_ERROR);
        (toolResults ??= []).push({ toolUseId: memberStr(t, b, block, K_TOOL_USE_ID), isError: isError >= 0 && t.kind[isError] === J_TRUE });
      }
    }
  }
  const tur = memberOf(t, b, 0, K_TOOL_USE_RESULT);
  const duration = tur >= 0 && t.kind[tur] === J_OBJECT ? memberOf(t, b, tur, K_DURATION) : -1;
  const sidechain = memberOf(t, b, 0, K_SIDECHAIN);
  const flags = (chain ? FACT_CHAIN : 0) | (sidechain >= 0 && t.kind[sidechain] === J_TRUE ? FACT_SIDECHAIN : 0) | (isLiteral(t, b, subtypeNode, L_COMPACT_BOUNDARY) ? FACT_COMPACT_BOUNDARY : 0);
  return sink.takeFacts(
    flags,
    chain ? stringOf(t, b, uuidNode) : null,
    chain ? tapeStr(t, b, puNode) : null,
    tapeStr(t, b, memberOf(t, b, 0, K_TIMESTAMP)),
    isMsg ? memberStr(t, b, msg, K_ID) : null,
    tapeStr(t, b, memberOf(t, b, 0, K_REQUEST)),
    toolUses ?? NO_TOOL_USES,
    toolResults ?? NO_TOOL_RESULTS,
    rareOrNull(
      tapeStr(t, b, memberOf(t, b, 0, K_LOGICAL)),
      interned(tapeStr(t, b, subtypeNode) ?? memberStr(t, b, memberOf(t, b, 0, K_ATTACHMENT), K_TYPE) ?? memberStr(t, b, memberOf(t, b, 0, K_DATA), K_TYPE) ?? tapeStr(t, b, memberOf(t, b, 0, K_OPERATION))),
      memberStr(t, b, memberOf(t, b, 0, K_SNAPSHOT), K_TIMESTAMP),
      tur >= 0 && t.kind[tur] === J_OBJECT ? { agentId: memberStr(t, b, tur, K_AGENT_ID), status: memberStr(t, b, tur, K_STATUS), totalDurationMs: duration >= 0 && t.kind[duration] === J_NUMBER ? numberOf(t, b, duration) : null } : null,
    ),
  );
}
