// Twin of decodeValue(JSON.parse(line)) and canonicalJson (event/envelope.ts), held to them by
// lib/envelope/test/fast/line-check.test.ts. The fast check of one line, from its bytes: a line in our writers' layout (line-head.ts) whose `data`
// spells every string, number and literal as JSON.stringify would, without whitespace, is valid
// (envelope-and-log.md §7), and its canonical JSON (fork.md §4.3) is its own bytes with the members of
// any object whose keys are out of order put in order (`reorder`, canonicalInto). Every other line,
// valid or not, is refused here and takes the full decode (decodeLogLine), which names its problem.
// So this check must never accept a line that JSON.parse plus canonicalJson would see differently:
// lib/envelope/test/fast/line-check.test.ts holds it to those two as oracles.
import { isUtf8 } from "node:buffer";
import { MAX_NESTING_DEPTH } from "../event/nesting.js";
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-bytes.js";
import { LineHead, readHead, T_FORK } from "./line-head.js";
import { stringKernel, type StringKernel } from "./string-scan.js";

const ZERO = 0x30;
const NINE = 0x39;
const MINUS = 0x2d;

/**
 * What checkLine learnt of a line, and the room it works in. Offsets are into the checked buffer.
 * `callId*` bound the raw text of a top-level string `data.call_id` (-1 if none). A reader owns one and
 * passes it to every call, so a line costs no allocation; it describes the last line checked into it.
 */
export class LineFacts {
  type = -1;
  seq: number | null = null;
  tsStart = 0;
  tsEnd = 0;
  dataStart = 0;
  dataEnd = 0;
  callIdStart = -1;
  callIdEnd = -1;
  callIdEscaped = false;
  /** Bounds of the raw text of a top-level string `data.strategy` (-1 if none): a summary's kind. */
  strategyStart = -1;
  strategyEnd = -1;
  hasResources = false;
  /** Entries of `reorder` written for this line (0: every object's keys are already in order). */
  reorderLength = 0;
  /**
   * For each object of the line whose keys are not in order, in the order the objects close (inner ones
   * first): its start (`{`), its member count n, then n (start, end) pairs of its members in canonical
   * key order. Applying these to a copy of `data` gives canonical JSON (canonicalInto).
   */
  reorder: Int32Array = new Int32Array(64);
  /** The envelope head, as readHead read it. */
  readonly head = new LineHead();

  // The room the check works in, kept between lines so that a line costs no allocation. It starts small
  // (a LineFacts for one line is cheap) and grows to what the lines need.
  /** Members of the objects being checked: (key start, key end, member end) triples, a stack shared by the nesting. */
  members: Int32Array = new Int32Array(96);
  membersTop = 0;
  /** recordReorder's scratch: the members of one object in key order, as their offsets on the stack. */
  order: Int32Array = new Int32Array(32);
  depth = 0;
  /**
   * The string kernel the check walks strings with (string-scan.ts), or null for the JavaScript loop:
   * the default is the kernel where WebAssembly has it; tests hold the two to the same answers.
   */
  kernel: StringKernel | null = stringKernel;
  /** The line being checked is in the string kernel's memory, at its index minus `mirrorShift`. */
  mirrored = false;
  mirrorShift = 0;
}

/** `a`, or a copy twice as long (at least `need`) when `need` does not fit it. */
export function grow<T extends Int32Array | Uint8Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const bigger = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  bigger.set(a);
  return bigger;
}

/** Bytes of the top-level data keys the fork plan reads. */
const CALL_ID = Buffer.from("call_id");
const RESOURCES = Buffer.from("resources");
const STRATEGY = Buffer.from("strategy");

/** Lines at least this long are copied to the kernel's memory; shorter strings end sooner than a call costs. */
export const MIRROR_MIN_BYTES = 128;
/**
 * Longer lines (a branch summary with a record per tool call can be tens of MiB) take the JavaScript
 * loop: WebAssembly memory never shrinks, and a process must stay within its memory bound.
 */
export const MIRROR_MAX_BYTES = 1024 * 1024;

/** `b[s, e)` is `lit`. */
export function sameBytes(b: Uint8Array, s: number, e: number, lit: Uint8Array): boolean {
  if (e - s !== lit.length) return false;
  for (let i = 0; i < lit.length; i++) if (b[s + i] !== lit[i]) return false;
  return true;
}

const isHex = (c: number) => (c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66);
const hexValue = (c: number) => (c <= NINE ? c - ZERO : c - 0x61 + 10);

/** How a check walks strings: with the string kernel over a line mirrored into its memory, or in JavaScript. */
export interface StringWalk {
  kernel: StringKernel | null;
  /** The line being checked is in the string kernel's memory, at its index minus `mirrorShift`. */
  mirrored: boolean;
  mirrorShift: number;
}

/** Walk the strings of `b[s, e)` with the kernel when the line is long enough for it to pay (and fits). */
export function mirrorLine(f: StringWalk, b: Uint8Array, s: number, e: number): void {
  const kernel = f.kernel;
  f.mirrored = kernel !== null && e - s >= MIRROR_MIN_BYTES && e - s <= MIRROR_MAX_BYTES;
  if (f.mirrored) {
    kernel!.mirror(b, s, e);
    f.mirrorShift = s;
  }
}

/**
 * End (just past the closing quote) of the string whose opening quote is at `i`, or -1 when it is not
 * as JSON.stringify writes strings: raw bytes from 0x20 up (UTF-8 is checked for the whole line), and
 * the escapes \" \\ \b \f \n \r \t, or \u00xx in lowercase for the other control characters.
 */
export function canonicalStringEnd(f: StringWalk, b: Uint8Array, i: number, end: number): number {
  // A mirrored line's strings are walked by the kernel, escapes and all, in one call.
  if (f.mirrored) {
    const stringEnd = f.kernel!.string(i + 1 - f.mirrorShift, end - f.mirrorShift);
    return stringEnd < 0 ? -1 : stringEnd + f.mirrorShift;
  }
  for (i++; i < end; i++) {
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c !== BACKSLASH) continue;
    const e = b[++i];
    if (e === QUOTE || e === BACKSLASH || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74) continue;
    if (e !== 0x75 || b[i + 1] !== ZERO || b[i + 2] !== ZERO) return -1;
    const h = b[i + 3]!;
    const l = b[i + 4]!;
    if ((h !== ZERO && h !== 0x31) || !isHex(l)) return -1;
    const v = (h - ZERO) * 16 + hexValue(l);
    // \b \t \n \f \r have short forms, which JSON.stringify uses.
    if (v === 0x08 || v === 0x09 || v === 0x0a || v === 0x0c || v === 0x0d) return -1;
    i += 4;
  }
  return -1;
}

/** End of a number at `i` if it is written as JavaScript writes it (String(Number(text))), else -1. */
export function canonicalNumberEnd(b: Uint8Array, i: number, end: number): number {
  const start = i;
  if (b[i] === MINUS) i++;
  const firstDigit = i;
  while (i < end && b[i]! >= ZERO && b[i]! <= NINE) i++;
  const digits = i - firstDigit;
  if (digits === 0 || (digits > 1 && b[firstDigit] === ZERO)) return -1;
  const c = b[i];
  const plain = c !== 0x2e && c !== 0x65 && c !== 0x45;
  // Up to 15 digits an integer is exact and printed as written; "-0" prints as "0".
  if (plain && digits <= 15) return digits === 1 && b[firstDigit] === ZERO && start !== firstDigit ? -1 : i;
  // Anything else (fractions, exponents, long integers): compare with JavaScript's own printing.
  while (i < end) {
    const d = b[i]!;
    if ((d >= ZERO && d <= NINE) || d === 0x2e || d === 0x65 || d === 0x45 || d === 0x2b || d === MINUS) i++;
    else break;
  }
  const text = Buffer.prototype.latin1Slice.call(b, start, i) as string;
  if (!/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(text)) return -1;
  const n = Number(text);
  return Number.isFinite(n) && String(n) === text ? i : -1;
}

export function literalEnd(b: Uint8Array, i: number, end: number, lit: string): number {
  if (i + lit.length > end) return -1;
  for (let k = 0; k < lit.length; k++) if (b[i + k] !== lit.charCodeAt(k)) return -1;
  return i + lit.length;
}

/** End of the canonical value at `i`, or -1. */
function valueEnd(f: LineFacts, b: Uint8Array, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return canonicalStringEnd(f, b, i, end);
  if (c === OPEN_OBJECT) return objectEnd(f, b, i, end, false);
  if (c === OPEN_ARRAY) return arrayEnd(f, b, i, end);
  if (c === 0x74) return literalEnd(b, i, end, "true");
  if (c === 0x66) return literalEnd(b, i, end, "false");
  if (c === 0x6e) return literalEnd(b, i, end, "null");
  if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) return canonicalNumberEnd(b, i, end);
  return -1;
}

function arrayEnd(f: LineFacts, b: Uint8Array, i: number, end: number): number {
  if (++f.depth > MAX_NESTING_DEPTH) return -1;
  i++;
  if (b[i] === CLOSE_ARRAY) {
    f.depth--;
    return i + 1;
  }
  for (;;) {
    i = valueEnd(f, b, i, end);
    if (i < 0) return -1;
    const c = b[i];
    if (c === CLOSE_ARRAY) {
      f.depth--;
      return i + 1;
    }
    if (c !== COMMA) return -1;
    i++;
  }
}

/**
 * End of an object at `i` whose members are canonical: keys are plain ASCII (no escapes), so byte order
 * is JavaScript's code-unit order. Keys out of order are recorded in `reorder`; a duplicate key is
 * refused (JSON.parse keeps the last, which a permutation cannot express). `top` marks `data` itself,
 * whose `call_id` and `resources` members are noted in `f`.
 */
function objectEnd(f: LineFacts, b: Uint8Array, i: number, end: number, top: boolean): number {
  if (++f.depth > MAX_NESTING_DEPTH) return -1;
  const open = i;
  i++;
  if (b[i] === CLOSE_OBJECT) {
    f.depth--;
    return i + 1;
  }
  const base = f.membersTop;
  let prevStart = -1;
  let prevEnd = -1;
  let inOrder = true;
  for (;;) {
    if (b[i] !== QUOTE) return -1;
    const keyStart = i + 1;
    let k = keyStart;
    while (k < end) {
      const c = b[k]!;
      if (c === QUOTE) break;
      if (c < 0x20 || c === BACKSLASH || c > 0x7e) return -1;
      k++;
    }
    if (k >= end || b[k + 1] !== COLON) return -1;
    if (inOrder && prevStart >= 0 && compareBytes(b, prevStart, prevEnd, keyStart, k) >= 0) inOrder = false;
    prevStart = keyStart;
    prevEnd = k;
    const valueStart = k + 2;
    i = valueEnd(f, b, valueStart, end);
    if (i < 0) return -1;
    let top3 = f.membersTop;
    if (top3 + 3 > f.members.length) f.members = grow(f.members, top3 + 3);
    const members = f.members;
    members[top3++] = keyStart - 1;
    members[top3++] = k;
    members[top3++] = i;
    f.membersTop = top3;
    if (top) {
      if (sameBytes(b, keyStart, k, RESOURCES)) f.hasResources = true;
      else if (b[valueStart] === QUOTE) {
        if (sameBytes(b, keyStart, k, CALL_ID)) {
          f.callIdStart = valueStart + 1;
          f.callIdEnd = i - 1;
        } else if (sameBytes(b, keyStart, k, STRATEGY)) {
          f.strategyStart = valueStart + 1;
          f.strategyEnd = i - 1;
        }
      }
    }
    const c = b[i];
    if (c === CLOSE_OBJECT) {
      f.depth--;
      if (!inOrder && !recordReorder(f, b, open, base)) return -1;
      f.membersTop = base;
      return i + 1;
    }
    if (c !== COMMA) return -1;
    i++;
  }
}

/**
 * Sort the members on the stack from `base` by key and record them in `f.reorder`; false on a duplicate key.
 * An insertion sort: objects have few members, and most are nearly in order.
 */
function recordReorder(f: LineFacts, b: Uint8Array, open: number, base: number): boolean {
  const n = (f.membersTop - base) / 3;
  if (n > f.order.length) f.order = grow(f.order, n);
  const o = f.order;
  const m3 = f.members;
  for (let m = 0; m < n; m++) {
    const x = base + 3 * m;
    let j = m;
    for (; j > 0; j--) {
      const y = o[j - 1]!;
      const d = compareBytes(b, m3[y]! + 1, m3[y + 1]!, m3[x]! + 1, m3[x + 1]!);
      if (d === 0) return false;
      if (d < 0) break;
      o[j] = y;
    }
    o[j] = x;
  }
  const at = f.reorderLength;
  const reorder = (f.reorder = grow(f.reorder, at + 2 + 2 * n));
  reorder[at] = open;
  reorder[at + 1] = n;
  for (let m = 0; m < n; m++) {
    reorder[at + 2 + 2 * m] = m3[o[m]!]!;
    reorder[at + 3 + 2 * m] = m3[o[m]! + 2]!;
  }
  f.reorderLength = at + 2 + 2 * n;
  return true;
}

/**
 * Write the canonical JSON of `data` (bytes `[dataStart, dataEnd)` of the line) to `out` at `at`, given
 * the line's reorder records (offsets into the line). The result has the same length as the input.
 * Each byte is copied once: an object out of order is written member by member in key order, and a
 * member holding another such object writes that one the same way.
 */
export function canonicalInto(line: Uint8Array, dataStart: number, dataEnd: number, records: ArrayLike<number>, out: Uint8Array, at: number): void {
  const order = recordsByStart(records);
  spanInto(line, dataStart, dataEnd, records, order, out, at);
}

/** Where each record begins in `records`, ordered by the start of its object in the line (records close inner first). */
function recordsByStart(records: ArrayLike<number>): Int32Array {
  let count = 0;
  for (let r = 0; r < records.length; r += 2 + 2 * records[r + 1]!) count++;
  const order = new Int32Array(count);
  let n = 0;
  for (let r = 0; r < records.length; r += 2 + 2 * records[r + 1]!) {
    let j = n++;
    for (; j > 0 && records[order[j - 1]!]! > records[r]!; j--) order[j] = order[j - 1]!;
    order[j] = r;
  }
  return order;
}

/** The first record (in `order`) whose object starts at `from` or later. */
function firstRecordFrom(records: ArrayLike<number>, order: Int32Array, from: number): number {
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (records[order[mid]!]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** `line[s, e)` to `out` at `at`, every recorded object in it in key order; returns the end. */
function spanInto(line: Uint8Array, s: number, e: number, records: ArrayLike<number>, order: Int32Array, out: Uint8Array, at: number): number {
  let pos = s;
  for (let i = firstRecordFrom(records, order, s); i < order.length; ) {
    const r = order[i]!;
    const open = records[r]!;
    if (open >= e) break;
    at = copyBytes(line, pos, open, out, at);
    out[at++] = OPEN_OBJECT;
    const n = records[r + 1]!;
    let close = open + 1;
    for (let m = 0; m < n; m++) {
      if (m > 0) out[at++] = COMMA;
      const ms = records[r + 2 + 2 * m]!;
      const me = records[r + 3 + 2 * m]!;
      at = spanInto(line, ms, me, records, order, out, at);
      if (me > close) close = me;
    }
    out[at++] = CLOSE_OBJECT;
    // The object ends with its last member in the line's order; the records inside it are written.
    pos = close + 1;
    i = firstRecordFrom(records, order, pos);
  }
  return copyBytes(line, pos, e, out, at);
}

/** Copy `from[s, e)` to `to` at `at`; returns the end. Members are mostly short, and a view per copy costs more than a loop. */
export function copyBytes(from: Uint8Array, s: number, e: number, to: Uint8Array, at: number): number {
  if (e - s > 64) {
    to.set(from.subarray(s, e), at);
    return at + (e - s);
  }
  for (let k = s; k < e; k++) to[at++] = from[k]!;
  return at;
}

function compareBytes(b: Uint8Array, s1: number, e1: number, s2: number, e2: number): number {
  const n = Math.min(e1 - s1, e2 - s2);
  for (let k = 0; k < n; k++) {
    const d = b[s1 + k]! - b[s2 + k]!;
    if (d !== 0) return d;
  }
  return e1 - s1 - (e2 - s2);
}

/**
 * Check the line `b[s, e)` (without its `\n`). Returns its type index, with the rest in `f`, when it
 * is a whole, valid Event in our layout with canonical `data`; -1 for any other line, which the caller
 * then decodes in full. UTF-8 is checked here unless the caller did (`utf8Checked`).
 */
export function checkLine(b: Buffer, s: number, e: number, f: LineFacts, utf8Checked = false): number {
  const head = f.head;
  const type = readHead(b, s, e, head);
  if (type < 0) return -1;
  // The envelope closes right after data; no trailing bytes (a CRLF line takes the full decode).
  if (b[e - 1] !== CLOSE_OBJECT) return -1;
  f.callIdStart = -1;
  f.callIdEnd = -1;
  f.strategyStart = -1;
  f.strategyEnd = -1;
  f.hasResources = false;
  f.reorderLength = 0;
  f.membersTop = 0;
  f.depth = 1;
  mirrorLine(f, b, s, e);
  const dataEnd = objectEnd(f, b, head.dataOpen, e - 1, true);
  if (dataEnd !== e - 1) return -1;
  if (!utf8Checked && !isUtf8(s === 0 && e === b.length ? b : b.subarray(s, e))) return -1;
  f.type = type;
  f.seq = head.seq;
  f.tsStart = head.tsStart;
  f.tsEnd = head.tsEnd;
  f.dataStart = head.dataOpen;
  f.dataEnd = dataEnd;
  f.callIdEscaped = false;
  for (let i = f.callIdStart; i >= 0 && i < f.callIdEnd; i++) {
    if (b[i] === BACKSLASH) {
      f.callIdEscaped = true;
      break;
    }
  }
  return type;
}

const SHARE_V1 = Buffer.from("share_v1");

/** Whether the line of `b` checked into `f` is a share_v1 session_fork header. */
export function checkedShareHeader(b: Buffer, f: LineFacts): boolean {
  // A canonical string spells share_v1 without escapes, so its bytes can be compared as they are.
  return f.type === T_FORK && f.strategyStart >= 0 && b.compare(SHARE_V1, 0, SHARE_V1.length, f.strategyStart, f.strategyEnd) === 0;
}
