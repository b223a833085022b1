// envelope-and-log.md §1–§3: the six-key Event, the closed type vocabulary, and the wire form.
import { isUtf8 } from "node:buffer";
import { MAX_NESTING_DEPTH } from "./nesting.js";
import { truncate } from "./text.js";

import { isCanonicalType, MAX_SEQ, type CanonicalType } from "./vocabulary.js";
export { CANONICAL_TYPES, EPHEMERAL_TYPES, REPLAY_TYPES, MAX_SEQ, isCanonicalType, isEphemeralType, isReplayType } from "./vocabulary.js";
export type { CanonicalType, EphemeralType } from "./vocabulary.js";

export type JsonObject = Record<string, unknown>;

/** An Event as readers see it, after the read tolerances of §7. */
export interface PixirEvent {
  id: string | null;
  session_id: string | null;
  seq: number | null;
  ts: string | null;
  type: CanonicalType;
  data: JsonObject;
}

export const ENVELOPE_KEYS = ["id", "session_id", "seq", "ts", "type", "data"] as const;
const ENVELOPE_KEY_SET = new Set<string>(ENVELOPE_KEYS);

export type CorruptReason =
  | "invalid_utf8"
  | "invalid_json"
  | "torn_tail"
  | "unexpected_shape"
  | "missing_event_type"
  | "unknown_event_type"
  | "invalid_seq"
  | "invalid_data"
  | "invalid_field"
  | "line_too_long"
  | "nesting_too_deep"
  | "misplaced_share_header"
  | "seq_conflicts_with_shared_prefix";

export interface LineProblem {
  reason: CorruptReason;
  /** Extra details: `type` for unknown types, `field` for invalid fields. */
  extra?: Record<string, unknown>;
}

/** What a decoded line looked like, for check's warnings and cat's pass-through. */
export interface DecodedLine {
  event: PixirEvent;
  /** The line is already a six-key envelope with non-null id, session_id, seq and ts. */
  exact: boolean;
  missingFields: string[];
  extraFields: string[];
  /** Set when the line passed the byte-level check (line-check.ts): its `data` is canonical JSON. */
  canonical: CanonicalLine | null;
}

/**
 * Where the parts of a line with canonical `data` lie in its bytes: a digest over `[type, ts, data]`
 * can then be taken from the bytes themselves (loader.ts PrefixDigest). `callId` is the top-level
 * string `data.call_id` of a tool_call or tool_result, else null; `strategy`, the top-level string
 * `data.strategy` of a branch_summary, else null.
 */
export interface CanonicalLine {
  typeIndex: number;
  tsStart: number;
  tsEnd: number;
  dataStart: number;
  dataEnd: number;
  callId: string | null;
  strategy: string | null;
  hasResources: boolean;
  /** The objects of `data` whose keys are out of order, as line-check.ts records them; null if none. */
  reorder: readonly number[] | null;
}

export const isJsonObject = (v: unknown): v is JsonObject => typeof v === "object" && v !== null && !Array.isArray(v);
/** ISO-8601 in UTC, the form our writers stamp (`2026-06-30T00:00:00.000Z`); `check` warns about any other ts. */
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
export const isIsoUtc = (ts: string): boolean => ISO_UTC.test(ts);

export const isSeq = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_SEQ;

/** The type string as shown in error details: §3.3 truncation at 64 bytes. */
export const typeForDetails = (t: string): string => truncate(t, 64);

/**
 * Valid UTF-8 but for a character cut short at the very end: a write that stopped inside a multi-byte
 * character. Such a final line without `\n` does not parse either, so it is a torn tail, not invalid UTF-8.
 */
export function isUtf8UpToCut(bytes: Uint8Array): boolean {
  // The last character's lead byte: at most three continuation bytes (10xxxxxx) back.
  let lead = bytes.length - 1;
  while (lead >= 0 && bytes.length - lead <= 3 && (bytes[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return false;
  const b = bytes[lead]!;
  const length = b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
  if (length <= bytes.length - lead) return false;
  // The bytes there must begin some character: completed with the lowest or the highest continuation
  // byte, one of the two is valid whatever the lead's own range for its second byte.
  const begun = [0x80, 0xbf].some((fill) => {
    const whole = Buffer.alloc(length, fill);
    whole.set(bytes.subarray(lead), 0);
    return isUtf8(whole);
  });
  return begun && isUtf8(bytes.subarray(0, lead));
}

export const NESTING_PROBLEM: LineProblem = { reason: "nesting_too_deep", extra: { max_nesting_depth: MAX_NESTING_DEPTH } };

const NONE: string[] = [];

export function decodeValue(value: unknown): DecodedLine | LineProblem {
  if (!isJsonObject(value)) return { reason: "unexpected_shape" };
  const type = value.type;
  if (typeof type !== "string") return { reason: "missing_event_type" };
  if (!isCanonicalType(type)) return { reason: "unknown_event_type", extra: { type: typeForDetails(type) } };
  const seq = value.seq;
  if (seq !== undefined && seq !== null && !isSeq(seq)) return { reason: "invalid_seq" };
  const data = value.data;
  if (data !== undefined && data !== null && !isJsonObject(data)) return { reason: "invalid_data" };
  for (const field of ["id", "session_id", "ts"] as const) {
    const v = value[field];
    if (v !== undefined && v !== null && typeof v !== "string") return { reason: "invalid_field", extra: { field } };
  }
  let missingFields = NONE;
  for (const key of ENVELOPE_KEYS) if (value[key] === undefined) missingFields = [...missingFields, key];
  let extraFields = NONE;
  for (const key of Object.keys(value)) if (!ENVELOPE_KEY_SET.has(key)) extraFields = [...extraFields, key];
  const event: PixirEvent = {
    id: (value.id as string | null | undefined) ?? null,
    session_id: (value.session_id as string | null | undefined) ?? null,
    seq: (seq as number | null | undefined) ?? null,
    ts: (value.ts as string | null | undefined) ?? null,
    type: type as CanonicalType,
    data: (data as JsonObject | null | undefined) ?? {},
  };
  const exact =
    missingFields.length === 0 &&
    extraFields.length === 0 &&
    event.id !== null &&
    event.session_id !== null &&
    event.seq !== null &&
    event.ts !== null &&
    data !== null;
  return { event, exact, missingFields, extraFields, canonical: null };
}

export const isLineProblem = (d: DecodedLine | LineProblem): d is LineProblem => (d as LineProblem).reason !== undefined;

/** The envelope part of our key order, up to and including `"data":`. */
export function envelopeHead(e: PixirEvent): string {
  return (
    `{"id":${JSON.stringify(e.id)},"session_id":${JSON.stringify(e.session_id)},"seq":${JSON.stringify(e.seq)},` +
    `"ts":${JSON.stringify(e.ts)},"type":${JSON.stringify(e.type)},"data":`
  );
}

/**
 * §3: one compact line in the key order id, session_id, seq, ts, type, data, with the trailing `\n`.
 * `dataText` lets a stage rewrite envelope fields while keeping the original bytes of `data`.
 */
export function serializeEvent(e: PixirEvent, dataText?: string): string {
  return `${envelopeHead(e)}${dataText ?? JSON.stringify(e.data)}}\n`;
}

/**
 * The raw text of `data` in a line that is in our key order, else undefined. Call it only for a
 * line whose object has exactly the six keys (an `exact` line), so nothing can follow `data`.
 * Later stages use it to keep `data` byte for byte when they renumber or re-id an Event.
 */
export function dataTextOf(line: string, e: PixirEvent): string | undefined {
  const head = envelopeHead(e);
  if (!line.startsWith(head)) return rawDataText(line);
  const end = line.endsWith("\r") ? line.length - 2 : line.length - 1;
  if (line[end] !== "}") return rawDataText(line);
  return line.slice(head.length, end);
}

/**
 * The raw text of `data` in any line that decoded to `e`: the fast path for an exact line (six keys),
 * else the scanner. Writers keep these bytes, so a number JavaScript cannot represent exactly (a
 * 64-bit id, 1e400) is stored as it came instead of being rounded or turned into `null`.
 */
export function lineDataText(line: string, e: PixirEvent, exact: boolean): string | undefined {
  return exact ? dataTextOf(line, e) : rawDataText(line);
}

const isJsonSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(s: string, i: number): number {
  while (i < s.length && isJsonSpace(s.charCodeAt(i))) i++;
  return i;
}

/** Index just after the string starting at `i` (a `"`), or -1. */
function stringEnd(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    const c = s.charCodeAt(j);
    if (c === 0x5c) j++;
    else if (c === 0x22) return j + 1;
  }
  return -1;
}

/** Index just after the JSON value starting at `i`, or -1. */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22) return stringEnd(s, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const d = s.charCodeAt(j);
      if (d === 0x22) {
        j = stringEnd(s, j) - 1;
        if (j < 0) return -1;
      } else if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  while (j < s.length && !isJsonSpace(s.charCodeAt(j)) && !",}]".includes(s[j]!)) j++;
  return j;
}

/** JSON text without the whitespace outside strings (our wire form is compact). */
function compactJson(text: string): string {
  if (!/[ \t\r\n]/.test(text)) return text;
  let out = "";
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end;
    } else {
      if (!isJsonSpace(c)) out += text[i];
      i++;
    }
  }
  return out;
}

/**
 * The text of the top-level `data` member of a JSON object line that has already parsed, in any key
 * order (the last one wins, as in JSON.parse), compacted; undefined when it is absent or not an object.
 */
export function rawDataText(line: string): string | undefined {
  let i = skipSpace(line, 0);
  if (line[i] !== "{") return undefined;
  i = skipSpace(line, i + 1);
  if (line[i] === "}") return undefined;
  let found: [number, number] | undefined;
  for (;;) {
    if (line[i] !== '"') return undefined;
    const keyEnd = stringEnd(line, i);
    if (keyEnd < 0) return undefined;
    const rawKey = line.slice(i, keyEnd);
    const key = rawKey.includes("\\") ? (JSON.parse(rawKey) as string) : rawKey.slice(1, -1);
    i = skipSpace(line, keyEnd);
    if (line[i] !== ":") return undefined;
    i = skipSpace(line, i + 1);
    const end = valueEnd(line, i);
    if (end < 0) return undefined;
    if (key === "data") found = [i, end];
    i = skipSpace(line, end);
    if (line[i] === ",") i = skipSpace(line, i + 1);
    else if (line[i] === "}") break;
    else return undefined;
  }
  if (found === undefined || line[found[0]] !== "{") return undefined;
  return compactJson(line.slice(found[0], found[1]));
}

const STR = String.raw`"(?:[^"\\]|\\.)*"`;
const OUR_HEAD = new RegExp(String.raw`^\{"id":(${STR}|null),"session_id":(${STR}|null),"seq":([0-9]+|null),"ts":(${STR}|null),"type":"([a-z_]+)","data":`);

/**
 * The envelope of a line in our writers' key order, without parsing `data`: the fast path of a second
 * pass over lines that a checking pass already validated (byte-identical, checked by a fingerprint).
 * Returns null for any other layout; the caller then decodes the line in full.
 */
export function decodeOwnHead(text: string): { event: PixirEvent; dataText: string } | null {
  const m = OUR_HEAD.exec(text);
  if (m === null || !isCanonicalType(m[5])) return null;
  const end = text.endsWith("\r") ? text.length - 2 : text.length - 1;
  if (text[end] !== "}") return null;
  const event: PixirEvent = {
    id: JSON.parse(m[1]!),
    session_id: JSON.parse(m[2]!),
    seq: m[3] === "null" ? null : Number(m[3]),
    ts: JSON.parse(m[4]!),
    type: m[5] as CanonicalType,
    data: NO_DATA,
  };
  return { event, dataText: text.slice(m[0].length, end) };
}

/** Placeholder `data` of an Event decoded by decodeOwnHead: its text travels as `dataText`. */
const NO_DATA: JsonObject = Object.freeze({}) as JsonObject;

const SURROGATE_ESCAPE = /\\u[dD][89abcdefABCDEF]/;

/** §3: strings must be valid Unicode. Only a `\uD8xx`-style escape can smuggle in a lone surrogate. */
export function isEncodable(lineText: string, value: unknown): boolean {
  if (!SURROGATE_ESCAPE.test(lineText)) return true;
  return deepWellFormed(value);
}

/** Every string of `value`, keys included, is well-formed UTF-16 (no lone surrogate). */
export function deepWellFormed(value: unknown): boolean {
  if (typeof value === "string") return value.isWellFormed();
  if (Array.isArray(value)) return value.every(deepWellFormed);
  if (isJsonObject(value)) {
    for (const key of Object.keys(value)) {
      if (!key.isWellFormed() || !deepWellFormed(value[key])) return false;
    }
  }
  return true;
}

/**
 * fork.md §4.3: JSON.stringify with object keys sorted recursively, no whitespace. Most values
 * already have their keys in order and go straight to the native JSON.stringify. Others are copied
 * with sorted keys (into null-prototype objects, so a "__proto__" key stays a key), except where an
 * integer-like key forces JavaScript's own property order: those are written out by hand.
 */
export function canonicalJson(value: unknown): string {
  if (isCanonicalOrder(value)) return JSON.stringify(value) ?? "null";
  if (!hasIndexKey(value)) return JSON.stringify(sortedCopy(value)) ?? "null";
  return canonicalByHand(value);
}

function isCanonicalOrder(value: unknown): boolean {
  if (Array.isArray(value)) {
    for (const v of value) if (v === undefined || !isCanonicalOrder(v)) return false;
    return true;
  }
  if (!isJsonObject(value)) return true;
  let prev: string | undefined;
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (prev !== undefined && !(prev < k)) return false;
    const v = value[k];
    if (v === undefined || !isCanonicalOrder(v)) return false;
    prev = k;
  }
  return true;
}

const INDEX_KEY = /^(0|[1-9][0-9]*)$/;

function hasIndexKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasIndexKey);
  if (!isJsonObject(value)) return false;
  for (const k of Object.keys(value)) if (INDEX_KEY.test(k) || hasIndexKey(value[k])) return true;
  return false;
}

function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortedCopy(v)));
  if (!isJsonObject(value)) return value;
  const out: Record<string, unknown> = Object.create(null);
  for (const k of Object.keys(value).sort()) {
    const v = value[k];
    if (v !== undefined) out[k] = sortedCopy(v);
  }
  return out;
}

function canonicalByHand(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => canonicalByHand(v === undefined ? null : v)).join(",")}]`;
  if (isJsonObject(value)) {
    const parts: string[] = [];
    for (const k of Object.keys(value).sort()) {
      if (value[k] !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalByHand(value[k])}`);
    }
    return `{${parts.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
