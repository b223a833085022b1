// Twin of decodeOwnHead (event/envelope.ts), held to it by lib/envelope/test/fast/line-head.test.ts.
// Our writers' envelope head, read from bytes. Every line our tools write starts
// `{"id":…,"session_id":…,"seq":…,"ts":…,"type":…,"data":`; a reader that only needs the envelope (the
// tree's counts, a fork's renumbered copy) reads it here without decoding the line or parsing `data`.
// A line in any other form gets -1, and the caller decodes it in full.
import { BACKSLASH, QUOTE } from "./json-bytes.js";
import { CANONICAL_TYPES, isReplayType, MAX_SEQ } from "../event/vocabulary.js";

const utf8 = (s: string) => Buffer.from(s, "utf8");

export const TYPE_INDEX = new Map<string, number>(CANONICAL_TYPES.map((t, i) => [t, i]));
export const IS_REPLAY = CANONICAL_TYPES.map((t) => isReplayType(t));
export const T_SUBAGENT = TYPE_INDEX.get("subagent_event")!;
export const T_BRANCH = TYPE_INDEX.get("branch_summary")!;
export const T_FORK = TYPE_INDEX.get("session_fork")!;

const LIT_HEAD = utf8('{"id":"');
const LIT_SESSION = utf8('","session_id":"');
const LIT_SEQ = utf8('","seq":');
const LIT_NULL = utf8("null");
const LIT_TS = utf8(',"ts":"');
const LIT_TYPE = utf8('","type":"');
const LIT_DATA = utf8('","data":{');

function matchAt(b: Buffer, at: number, lit: Buffer, end: number): boolean {
  if (at + lit.length > end) return false;
  for (let i = 0; i < lit.length; i++) if (b[at + i] !== lit[i]) return false;
  return true;
}

/** Index of the closing quote of a JSON string without escapes or control characters, else -1. */
function plainStringEnd(b: Buffer, from: number, end: number): number {
  for (let i = from; i < end; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i;
    if (c === BACKSLASH || c < 0x20) return -1;
  }
  return -1;
}

/** Canonical type names by byte length, to identify a type without making a string. */
const TYPES_BY_LENGTH: Array<Array<[Buffer, number]>> = [];
for (const [t, i] of TYPE_INDEX) (TYPES_BY_LENGTH[t.length] ??= []).push([utf8(t), i]);

function typeAt(b: Buffer, start: number, end: number): number {
  const candidates = TYPES_BY_LENGTH[end - start];
  if (candidates === undefined) return -1;
  for (const [name, index] of candidates) if (matchAt(b, start, name, end)) return index;
  return -1;
}

/** `"ts":"` — the ts key starts this many bytes before `head.tsStart`; from there to the end, a line is `ts`, `type` and `data`. */
export const TS_KEY_LENGTH = 6;

/**
 * What readHead found in a line: seq, and where the id, session id and ts strings lie and `data` opens
 * (offsets into the buffer it read). The reader owns one and passes it to every call, so a line costs
 * no allocation; it describes the last line read into it.
 */
export class LineHead {
  seq: number | null = null;
  idStart = 0;
  idEnd = 0;
  sessionStart = 0;
  sessionEnd = 0;
  tsStart = 0;
  tsEnd = 0;
  dataOpen = 0;
}

/** The line read into `head` names the Session whose id is `session` (its UTF-8 bytes). */
export function sessionIs(b: Buffer, session: Buffer, head: LineHead): boolean {
  return b.compare(session, 0, session.length, head.sessionStart, head.sessionEnd) === 0;
}

/** ...and is stamped as `pixir-log write` needs: a non-empty id and an integer seq (ts is a string in this layout). */
export function stampedOf(b: Buffer, session: Buffer, head: LineHead): boolean {
  return head.seq !== null && head.idEnd !== head.idStart && sessionIs(b, session, head);
}

/**
 * The envelope head of a line in our writers' key order, up to `"data":{`: the type index, with
 * seq and the bounds of its parts in `head`; -1 when the line is in any other form.
 */
export function readHead(b: Buffer, s: number, e: number, head: LineHead): number {
  if (!matchAt(b, s, LIT_HEAD, e)) return -1;
  head.idStart = s + LIT_HEAD.length;
  let q = plainStringEnd(b, head.idStart, e);
  if (q < 0 || !matchAt(b, q, LIT_SESSION, e)) return -1;
  head.idEnd = q;
  head.sessionStart = q + LIT_SESSION.length;
  q = plainStringEnd(b, head.sessionStart, e);
  if (q < 0 || !matchAt(b, q, LIT_SEQ, e)) return -1;
  head.sessionEnd = q;
  let i = q + LIT_SEQ.length;
  if (matchAt(b, i, LIT_NULL, e)) {
    head.seq = null;
    i += LIT_NULL.length;
  } else {
    const start = i;
    let v = 0;
    while (i < e && b[i]! >= 0x30 && b[i]! <= 0x39) v = v * 10 + (b[i++]! - 0x30);
    const digits = i - start;
    if (digits === 0 || digits > 16 || (digits > 1 && b[start] === 0x30) || v > MAX_SEQ) return -1;
    head.seq = v;
  }
  if (!matchAt(b, i, LIT_TS, e)) return -1;
  head.tsStart = i + LIT_TS.length;
  head.tsEnd = plainStringEnd(b, head.tsStart, e);
  if (head.tsEnd < 0 || !matchAt(b, head.tsEnd, LIT_TYPE, e)) return -1;
  const typeStart = head.tsEnd + LIT_TYPE.length;
  const typeEnd = plainStringEnd(b, typeStart, e);
  if (typeEnd < 0 || !matchAt(b, typeEnd, LIT_DATA, e)) return -1;
  head.dataOpen = typeEnd + LIT_DATA.length - 1;
  return typeAt(b, typeStart, typeEnd);
}

