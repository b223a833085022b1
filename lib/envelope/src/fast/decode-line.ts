// envelope-and-log.md §7: one Log line decoded, by the byte-level checker (line-check.ts) when it accepts
// the line, else by the plain rule: JSON.parse and decodeValue (event/envelope.ts). Both give the same
// DecodedLine or LineProblem (lib/envelope/test/fast/line-check.test.ts holds them to it).
import { isUtf8 } from "node:buffer";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { decodeValue, isUtf8UpToCut, NESTING_PROBLEM, type CanonicalLine, type DecodedLine, type JsonObject, type LineProblem, type PixirEvent } from "../event/envelope.js";
import { nestsDeeperThan } from "../event/nesting.js";
import { checkLine, LineFacts } from "./line-check.js";

const NONE: string[] = [];

/**
 * The room decodeLogLine works in: the LineFacts checkLine fills, and the session id of the last line
 * made a string (consecutive lines of one Log share it). A reader of many lines keeps one and passes it
 * to every call; nothing is kept in this module between calls.
 */
export class LineDecoder {
  readonly facts = new LineFacts();
  private sessionBytes: Buffer = Buffer.alloc(0);
  private sessionText = "";

  /** The session id in `b[s, e)` as a string: the last one again when the bytes are the same. */
  sessionOf(b: Buffer, s: number, e: number): string {
    const last = this.sessionBytes;
    if (last.length === e - s && b.compare(last, 0, last.length, s, e) === 0) return this.sessionText;
    this.sessionBytes = Buffer.from(b.subarray(s, e));
    this.sessionText = b.toString("utf8", s, e);
    return this.sessionText;
  }
}

/**
 * envelope-and-log.md §7: check one physical line (without its `\n`) and apply the read tolerances.
 * `isTail` marks a final line that had no `\n`; a parse failure there is a torn tail. A reader of many
 * lines passes its own `decoder`; a single line may do without.
 */
export function decodeLogLine(bytes: Buffer, isTail: boolean, decoder: LineDecoder = new LineDecoder()): DecodedLine | LineProblem {
  if (!isUtf8(bytes)) return { reason: isTail && isUtf8UpToCut(bytes) ? "torn_tail" : "invalid_utf8" };
  if (checkLine(bytes, 0, bytes.length, decoder.facts, true) >= 0) return checkedLine(bytes, decoder.facts, decoder);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return { reason: isTail ? "torn_tail" : "invalid_json" };
  }
  if (nestsDeeperThan(bytes)) return NESTING_PROBLEM;
  return decodeValue(value);
}

const T_TOOL_CALL = CANONICAL_TYPES.indexOf("tool_call");
const T_TOOL_RESULT = CANONICAL_TYPES.indexOf("tool_result");
const T_BRANCH_SUMMARY = CANONICAL_TYPES.indexOf("branch_summary");
/** A copy of the line's reorder records, as a plain array: a typed array per line would be a malloc each. */
function reorderRecords(facts: LineFacts): number[] {
  const n = facts.reorderLength;
  const out = new Array<number>(n);
  const reorder = facts.reorder;
  for (let i = 0; i < n; i++) out[i] = reorder[i]!;
  return out;
}

/** The string `data.call_id` of a tool_call or tool_result that checkLine accepted in `bytes` into `facts`, else null. */
export function checkedCallId(bytes: Buffer, facts: LineFacts): string | null {
  if ((facts.type !== T_TOOL_CALL && facts.type !== T_TOOL_RESULT) || facts.callIdStart < 0) return null;
  return facts.callIdEscaped ? (JSON.parse(bytes.toString("utf8", facts.callIdStart - 1, facts.callIdEnd + 1)) as string) : bytes.toString("utf8", facts.callIdStart, facts.callIdEnd);
}

/**
 * The decoded form of a line that checkLine accepted into `facts`. Its `data` is parsed from the line's
 * own bytes when first read: readers that only need the envelope, counts or a digest never parse it.
 */
export function checkedLine(bytes: Buffer, facts: LineFacts, decoder?: LineDecoder): DecodedLine {
  const typeIndex = facts.type;
  const head = facts.head;
  const callId = checkedCallId(bytes, facts);
  // A summary's data can be large (one record per inherited tool call): its kind is read without parsing it.
  const strategy = typeIndex === T_BRANCH_SUMMARY && facts.strategyStart >= 0 ? (JSON.parse(bytes.toString("utf8", facts.strategyStart - 1, facts.strategyEnd + 1)) as string) : null;
  const canonical: CanonicalLine = { typeIndex, tsStart: facts.tsStart, tsEnd: facts.tsEnd, dataStart: facts.dataStart, dataEnd: facts.dataEnd, callId, strategy, hasResources: facts.hasResources, reorder: facts.reorderLength > 0 ? reorderRecords(facts) : null };
  let source: Buffer | null = bytes;
  let data: JsonObject | undefined;
  const event: PixirEvent = {
    id: bytes.toString("utf8", head.idStart, head.idEnd),
    session_id: decoder === undefined ? bytes.toString("utf8", head.sessionStart, head.sessionEnd) : decoder.sessionOf(bytes, head.sessionStart, head.sessionEnd),
    seq: facts.seq,
    ts: bytes.toString("utf8", facts.tsStart, facts.tsEnd),
    type: CANONICAL_TYPES[typeIndex]!,
    get data(): JsonObject {
      if (data === undefined) {
        data = JSON.parse(source!.toString("utf8", canonical.dataStart, canonical.dataEnd)) as JsonObject;
        source = null;
      }
      return data;
    },
    set data(value: JsonObject) {
      data = value;
      source = null;
    },
  };
  return { event, exact: facts.seq !== null, missingFields: NONE, extraFields: NONE, canonical };
}

