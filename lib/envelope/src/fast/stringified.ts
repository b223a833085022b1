// Twin of `JSON.stringify(JSON.parse(text))` for the text of a JSON object, held to it by
// lib/envelope/test/fast/stringified.test.ts.
// A line whose bytes are what JSON.stringify writes for the value JSON.parse reads from them, but for the
// spelling of some numbers (serde_json writes `25.0` where JavaScript writes `25`), can be copied where a
// writer would parse it and serialise it again (the Codex import's `record`, codex-interop.md §2.2): the
// copy is the line with those numbers spelt again (writeStringified), and the line itself when there are
// none. Inside such a line, the bytes of every value are that value's JSON.stringify but for the same
// numbers. The check notes where the members of the object, and of the object that is the value of one
// member named by the caller, lie, so a reader takes the few values it needs from their bytes. It refuses
// (false) whatever it does not prove, valid JSON or not: whitespace, escapes JSON.stringify would not
// write, a duplicate key (JSON.parse keeps the last value, at the first one's place), a key that starts with
// a digit (a parsed object puts integer-like keys first), a key with an escape, invalid UTF-8, and nesting
// deeper than MAX_NESTING_DEPTH.
import { isUtf8 } from "node:buffer";
import { MAX_NESTING_DEPTH } from "../event/nesting.js";
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-bytes.js";
import { canonicalStringEnd, grow, literalEnd, MIRROR_MAX_BYTES, MIRROR_MIN_BYTES, type StringWalk } from "./line-check.js";
import { stringKernel, type StringKernel } from "./string-scan.js";

/** An object with more members than this is refused: its duplicate-key check would cost their square. */
const MAX_MEMBERS = 256;

/**
 * What checkStringified found, and the room it works in; offsets are into the checked buffer. A reader
 * owns one and passes it to every call, so a line costs no allocation; it describes the last line checked.
 */
export class StringifiedObject implements StringWalk {
  /** The object's members: (key start, key end, value start, value end) for each, keys without their quotes. */
  members: Int32Array = new Int32Array(64);
  count = 0;
  /** The same for the object that is the value of the member named `nested`; -1 when there is none. */
  inner: Int32Array = new Int32Array(64);
  innerCount = -1;
  /** The string walk (line-check.ts): the kernel where WebAssembly has it; tests set null for the JavaScript loop. */
  kernel: StringKernel | null = stringKernel;
  mirrored = false;
  mirrorShift = 0;
  /** Keys of the objects being checked, (start, end) pairs: a stack shared by the nesting. */
  keys: Int32Array = new Int32Array(128);
  keysTop = 0;
  depth = 0;
  /** Numbers JSON.stringify spells otherwise: (start, end) pairs in `respelt`, their spelling in `spellings`. */
  respelt: Int32Array = new Int32Array(16);
  spellings: string[] = [];
  respeltCount = 0;
  /** How many bytes longer writeStringified's copy is than the text (negative when shorter). */
  growth = 0;
}

/** The index in `o.members` (a multiple of 4) of the member whose key is `key`, or -1. */
export function memberAt(o: StringifiedObject, b: Uint8Array, key: Uint8Array, inner = false): number {
  const m = inner ? o.inner : o.members;
  const n = inner ? o.innerCount : o.count;
  for (let k = 0; k < 4 * n; k += 4) {
    const s = m[k]!;
    if (m[k + 1]! - s !== key.length) continue;
    let same = true;
    for (let j = 0; j < key.length && same; j++) same = b[s + j] === key[j];
    if (same) return k;
  }
  return -1;
}

/**
 * Check `b[s, e)`: true when it is one JSON object, nothing before or after, spelt exactly as
 * JSON.stringify(JSON.parse(text)) spells it; then `o` says where its members lie, and (when `nested`
 * names a member whose value is an object) that object's members.
 */
export function checkStringified(b: Uint8Array, s: number, e: number, o: StringifiedObject, nested: Uint8Array | null): boolean {
  if (b[s] !== OPEN_OBJECT) return false;
  o.count = 0;
  o.innerCount = -1;
  o.keysTop = 0;
  o.depth = 0;
  o.respeltCount = 0;
  o.growth = 0;
  const kernel = o.kernel;
  o.mirrored = kernel !== null && e - s >= MIRROR_MIN_BYTES && e - s <= MIRROR_MAX_BYTES;
  if (o.mirrored) {
    kernel!.mirror(b, s, e);
    o.mirrorShift = s;
  }
  if (objectEnd(o, b, s, e, 1, nested) !== e) return false;
  return isUtf8(b.subarray(s, e));
}

/** End of the value at `i`, or -1. */
function valueEnd(o: StringifiedObject, b: Uint8Array, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return canonicalStringEnd(o, b, i, end);
  if (c === OPEN_OBJECT) return objectEnd(o, b, i, end, 0, null);
  if (c === OPEN_ARRAY) return arrayEnd(o, b, i, end);
  if (c === 0x74) return literalEnd(b, i, end, "true");
  if (c === 0x66) return literalEnd(b, i, end, "false");
  if (c === 0x6e) return literalEnd(b, i, end, "null");
  return numberEnd(o, b, i, end);
}

const ZERO = 0x30;
const NINE = 0x39;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= ZERO && c <= NINE;

/**
 * End of the JSON number at `i`, or -1. One that JSON.stringify spells otherwise (String of the Number,
 * `null` for one that overflows, `0` for -0) is noted in `o.respelt`.
 */
function numberEnd(o: StringifiedObject, b: Uint8Array, i: number, end: number): number {
  const start = i;
  if (b[i] === 0x2d) i++;
  const first = i;
  while (i < end && isDigit(b[i])) i++;
  const digits = i - first;
  if (digits === 0 || (digits > 1 && b[first] === ZERO)) return -1;
  let plain = true;
  if (i < end && b[i] === 0x2e) {
    plain = false;
    const f = ++i;
    while (i < end && isDigit(b[i])) i++;
    if (i === f) return -1;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    plain = false;
    i++;
    if (i < end && (b[i] === 0x2b || b[i] === 0x2d)) i++;
    const f = i;
    while (i < end && isDigit(b[i])) i++;
    if (i === f) return -1;
  }
  // Up to 15 digits an integer is exact and printed as written, but for -0.
  if (plain && digits <= 15 && !(digits === 1 && b[first] === ZERO && start !== first)) return i;
  const text = Buffer.prototype.latin1Slice.call(b, start, i) as string;
  const n = Number(text);
  const spelt = Number.isFinite(n) ? String(n) : "null";
  if (spelt !== text) {
    const at = 2 * o.respeltCount;
    if (at + 2 > o.respelt.length) o.respelt = grow(o.respelt, at + 2);
    o.respelt[at] = start;
    o.respelt[at + 1] = i;
    o.spellings[o.respeltCount++] = spelt;
    o.growth += spelt.length - (i - start);
  }
  return i;
}

/**
 * Write JSON.stringify(JSON.parse(text)) of the part `b[s, e)` of a text just checked into `o` (the whole
 * text, or a value inside it) to `out` at `at`: its bytes with the noted numbers spelt again. Returns the end.
 */
export function writeStringified(o: StringifiedObject, b: Uint8Array, s: number, e: number, out: Uint8Array, at: number): number {
  let from = s;
  for (let k = 0; k < o.respeltCount; k++) {
    const ns = o.respelt[2 * k]!;
    const ne = o.respelt[2 * k + 1]!;
    if (ns < s || ne > e) continue;
    out.set(b.subarray(from, ns), at);
    at += ns - from;
    const spelt = o.spellings[k]!;
    for (let j = 0; j < spelt.length; j++) out[at++] = spelt.charCodeAt(j);
    from = ne;
  }
  out.set(b.subarray(from, e), at);
  return at + (e - from);
}

function arrayEnd(o: StringifiedObject, b: Uint8Array, i: number, end: number): number {
  if (++o.depth > MAX_NESTING_DEPTH) return -1;
  i++;
  if (b[i] !== CLOSE_ARRAY) {
    for (;;) {
      i = valueEnd(o, b, i, end);
      if (i < 0) return -1;
      if (b[i] !== COMMA) break;
      i++;
    }
    if (b[i] !== CLOSE_ARRAY) return -1;
  }
  o.depth--;
  return i + 1;
}

/**
 * End of the object at `i`, or -1. `record` 1: its members go to `o.members` (and the value of the
 * member named `nested`, an object, is recorded as 2); 2: they go to `o.inner`; 0: not recorded.
 */
function objectEnd(o: StringifiedObject, b: Uint8Array, i: number, end: number, record: number, nested: Uint8Array | null): number {
  if (++o.depth > MAX_NESTING_DEPTH) return -1;
  i++;
  if (b[i] === CLOSE_OBJECT) {
    if (record === 2) o.innerCount = 0;
    o.depth--;
    return i + 1;
  }
  const base = o.keysTop;
  let count = 0;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyStart = i + 1;
    let k = keyStart;
    for (; k < end; k++) {
      const c = b[k]!;
      if (c === QUOTE) break;
      if (c < 0x20 || c === BACKSLASH) return -1;
    }
    const length = k - keyStart;
    // An empty key is fine; one that starts with a digit may be integer-like.
    if (k >= end || b[k + 1] !== COLON || (length > 0 && b[keyStart]! >= 0x30 && b[keyStart]! <= 0x39)) return -1;
    if (++count > MAX_MEMBERS) return -1;
    const keys = o.keys;
    for (let j = base; j < o.keysTop; j += 2) {
      const ks = keys[j]!;
      if (keys[j + 1]! - ks !== length) continue;
      let same = true;
      for (let x = 0; x < length && same; x++) same = b[ks + x] === b[keyStart + x];
      if (same) return -1;
    }
    if (o.keysTop + 2 > keys.length) o.keys = grow(keys, o.keysTop + 2);
    o.keys[o.keysTop++] = keyStart;
    o.keys[o.keysTop++] = k;
    const valueStart = k + 2;
    let isNested = false;
    if (record === 1 && nested !== null && length === nested.length && b[valueStart] === OPEN_OBJECT) {
      isNested = true;
      for (let x = 0; x < length && isNested; x++) isNested = b[keyStart + x] === nested[x];
    }
    i = isNested ? objectEnd(o, b, valueStart, end, 2, null) : valueEnd(o, b, valueStart, end);
    if (i < 0) return -1;
    if (record !== 0) {
      const at = 4 * (record === 1 ? o.count++ : count - 1);
      if (record === 1) o.members = grow(o.members, at + 4);
      else o.inner = grow(o.inner, at + 4);
      const m = record === 1 ? o.members : o.inner;
      m[at] = keyStart;
      m[at + 1] = k;
      m[at + 2] = valueStart;
      m[at + 3] = i;
    }
    const c = b[i];
    if (c === CLOSE_OBJECT) break;
    if (c !== COMMA) return -1;
    i++;
  }
  if (record === 2) o.innerCount = count;
  o.keysTop = base;
  o.depth--;
  return i + 1;
}
