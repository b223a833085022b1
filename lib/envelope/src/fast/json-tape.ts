// Twin of `JSON.stringify(JSON.parse(text)) === text` for a line holding an object (a line exactly as
// JSON.stringify writes it: what claude-interop.md §2.3 calls canonical), and of the values JSON.parse
// gives at the places it records; held to both by lib/envelope/test/fast/json-tape.test.ts.
//
// readJsonLine checks the line's bytes where they lie and notes where its values are (a tape of nodes:
// kind, byte range, key, first child, next sibling), so that a reader can take the few values it needs
// without parsing the line, and copy any value's bytes as they are: in a canonical line every value's
// text is JSON.stringify's text of that value. It accepts only what it can vouch for: strings and numbers
// as JSON.stringify writes them (string-scan.ts walks the strings), no whitespace, no duplicate key (JSON.parse
// keeps the last, at the first's place), no key of digits alone (JavaScript puts integer keys first). A
// string may escape only quotes, backslashes and control characters, so no lone surrogate (which
// JSON.stringify writes as an escape) gets through. Anything else is refused, and
// the caller takes JSON.parse: a refusal never means the line is not canonical, only that this reader
// cannot tell.
import { isUtf8 } from "node:buffer";
import { CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE, BACKSLASH } from "./json-bytes.js";
import { canonicalNumberEnd, canonicalStringEnd, grow, literalEnd, mirrorLine, sameBytes, type StringWalk } from "./line-check.js";
import { stringKernel, type StringKernel } from "./string-scan.js";

export const J_OBJECT = 1;
export const J_ARRAY = 2;
export const J_STRING = 3;
export const J_NUMBER = 4;
export const J_TRUE = 5;
export const J_FALSE = 6;
export const J_NULL = 7;

/** Deeper than this, a line takes JSON.parse (which has no such limit, but a recursive reader does). */
const MAX_DEPTH = 200;

const ZERO = 0x30;
const NINE = 0x39;
const MINUS = 0x2d;

/**
 * The nodes readJsonLine recorded of the last line read into it (offsets into that line's buffer), and
 * the room it reads in. Node 0 is the line's object. Values are recorded `levels` deep (the object's
 * members are level 1), and `deepLevels` deep below the member named `deepKey`. A reader owns one and
 * passes it to every call, so a line costs no allocation.
 */
export class JsonTape implements StringWalk {
  count = 0;
  kind: Uint8Array = new Uint8Array(64);
  start: Int32Array = new Int32Array(64);
  end: Int32Array = new Int32Array(64);
  /** The text of a member's key between its quotes; -1 for an element of an array and for node 0. */
  keyStart: Int32Array = new Int32Array(64);
  keyEnd: Int32Array = new Int32Array(64);
  firstChild: Int32Array = new Int32Array(64);
  lastChild: Int32Array = new Int32Array(64);
  nextSibling: Int32Array = new Int32Array(64);
  /** Keys of the objects being read (start, end pairs), a stack shared by the nesting: the duplicate check. */
  private keys: Int32Array = new Int32Array(64);
  private keysTop = 0;
  kernel: StringKernel | null = stringKernel;
  mirrored = false;
  mirrorShift = 0;

  constructor(
    readonly deepKey: Uint8Array | null = null,
    readonly deepLevels = 6,
    readonly levels = 2,
  ) {}

  /** A new node at `start` under `parent` (-1: the root), its key `[ks, ke)` (-1 if none). */
  add(parent: number, start: number, ks: number, ke: number): number {
    const n = this.count++;
    if (n >= this.kind.length) {
      const size = n * 2;
      this.kind = grow(this.kind, size);
      this.start = grow(this.start, size);
      this.end = grow(this.end, size);
      this.keyStart = grow(this.keyStart, size);
      this.keyEnd = grow(this.keyEnd, size);
      this.firstChild = grow(this.firstChild, size);
      this.lastChild = grow(this.lastChild, size);
      this.nextSibling = grow(this.nextSibling, size);
    }
    this.start[n] = start;
    this.keyStart[n] = ks;
    this.keyEnd[n] = ke;
    this.firstChild[n] = -1;
    this.lastChild[n] = -1;
    this.nextSibling[n] = -1;
    if (parent >= 0) {
      const last = this.lastChild[parent]!;
      if (last < 0) this.firstChild[parent] = n;
      else this.nextSibling[last] = n;
      this.lastChild[parent] = n;
    }
    return n;
  }

  /** Push a key of the object whose keys start at `base`; false when the object has it already. */
  pushKey(b: Uint8Array, base: number, ks: number, ke: number): boolean {
    const keys = this.keys;
    const length = ke - ks;
    for (let k = base; k < this.keysTop; k += 2) {
      const s = keys[k]!;
      if (keys[k + 1]! - s !== length) continue;
      let i = 0;
      while (i < length && b[s + i] === b[ks + i]) i++;
      if (i === length) return false;
    }
    if (this.keysTop + 2 > keys.length) this.keys = grow(keys, this.keysTop + 2);
    this.keys[this.keysTop++] = ks;
    this.keys[this.keysTop++] = ke;
    return true;
  }

  get keyMark(): number {
    return this.keysTop;
  }

  set keyMark(at: number) {
    this.keysTop = at;
  }
}

/** A key JavaScript would treat as an array index (or one of digits that looks like it): refused. */
function digitsOnly(b: Uint8Array, s: number, e: number): boolean {
  if (s === e) return false;
  for (let i = s; i < e; i++) if (b[i]! < ZERO || b[i]! > NINE) return false;
  return true;
}

/** End of the value at `i`, recorded under `parent` when `record`; -1 when the reader cannot vouch for it. */
function readValue(t: JsonTape, b: Uint8Array, i: number, end: number, depth: number, limit: number, parent: number, record: boolean, ks: number, ke: number): number {
  const node = record ? t.add(parent, i, ks, ke) : -1;
  const c = b[i];
  let stop: number;
  let kind: number;
  if (c === QUOTE) {
    kind = J_STRING;
    stop = canonicalStringEnd(t, b, i, end);
  } else if (c === OPEN_OBJECT) {
    kind = J_OBJECT;
    stop = readObject(t, b, i, end, depth, limit, node);
  } else if (c === OPEN_ARRAY) {
    kind = J_ARRAY;
    stop = readArray(t, b, i, end, depth, limit, node);
  } else if (c === 0x74) {
    kind = J_TRUE;
    stop = literalEnd(b, i, end, "true");
  } else if (c === 0x66) {
    kind = J_FALSE;
    stop = literalEnd(b, i, end, "false");
  } else if (c === 0x6e) {
    kind = J_NULL;
    stop = literalEnd(b, i, end, "null");
  } else if (c === MINUS || (c !== undefined && c >= ZERO && c <= NINE)) {
    kind = J_NUMBER;
    stop = canonicalNumberEnd(b, i, end);
  } else return -1;
  if (node >= 0) {
    t.kind[node] = kind;
    t.end[node] = stop;
  }
  return stop;
}

function readObject(t: JsonTape, b: Uint8Array, i: number, end: number, depth: number, limit: number, node: number): number {
  if (depth >= MAX_DEPTH) return -1;
  i++;
  if (b[i] === CLOSE_OBJECT) return i + 1;
  const base = t.keyMark;
  try {
    for (;;) {
      if (b[i] !== QUOTE) return -1;
      const keyStop = canonicalStringEnd(t, b, i, end);
      if (keyStop < 0 || b[keyStop] !== COLON) return -1;
      const ks = i + 1;
      const ke = keyStop - 1;
      if (digitsOnly(b, ks, ke) || !t.pushKey(b, base, ks, ke)) return -1;
      // Below the deep member, values are recorded deeper than elsewhere.
      const childLimit = depth === 0 && t.deepKey !== null ? (sameBytes(b, ks, ke, t.deepKey) ? t.deepLevels : t.levels) : limit;
      i = readValue(t, b, keyStop + 1, end, depth + 1, childLimit, node, node >= 0 && depth + 1 <= childLimit, ks, ke);
      if (i < 0) return -1;
      const c = b[i];
      if (c === CLOSE_OBJECT) return i + 1;
      if (c !== COMMA) return -1;
      i++;
    }
  } finally {
    t.keyMark = base;
  }
}

function readArray(t: JsonTape, b: Uint8Array, i: number, end: number, depth: number, limit: number, node: number): number {
  if (depth >= MAX_DEPTH) return -1;
  i++;
  if (b[i] === CLOSE_ARRAY) return i + 1;
  for (;;) {
    i = readValue(t, b, i, end, depth + 1, limit, node, node >= 0 && depth + 1 <= limit, -1, -1);
    if (i < 0) return -1;
    const c = b[i];
    if (c === CLOSE_ARRAY) return i + 1;
    if (c !== COMMA) return -1;
    i++;
  }
}

/**
 * Read the line `b[s, e)` (without its `\n`) into `t`. True when it is an object exactly as JSON.stringify
 * writes it, with no lone surrogate: then `t` holds its recorded values. False says nothing of the line.
 * UTF-8 is checked here unless the caller did (`utf8Checked`).
 */
export function readJsonLine(b: Buffer, s: number, e: number, t: JsonTape, utf8Checked = false): boolean {
  t.count = 0;
  t.keyMark = 0;
  if (b[s] !== OPEN_OBJECT || b[e - 1] !== CLOSE_OBJECT) return false;
  mirrorLine(t, b, s, e);
  const limit = Math.max(t.levels, t.deepKey !== null ? t.deepLevels : 0);
  if (readValue(t, b, s, e, 0, limit, -1, true, -1, -1) !== e) return false;
  return utf8Checked || isUtf8(s === 0 && e === b.length ? b : b.subarray(s, e));
}

/** The child of object node `node` whose key is `key` (plain ASCII), or -1. */
export function memberOf(t: JsonTape, b: Uint8Array, node: number, key: Uint8Array): number {
  for (let c = t.firstChild[node]!; c >= 0; c = t.nextSibling[c]!) if (sameBytes(b, t.keyStart[c]!, t.keyEnd[c]!, key)) return c;
  return -1;
}

/** The string of a J_STRING node, as JSON.parse gives it. */
export function stringOf(t: JsonTape, b: Buffer, node: number): string {
  const s = t.start[node]! + 1;
  const e = t.end[node]! - 1;
  if (!hasBackslash(b, s, e)) return b.toString("utf8", s, e);
  return JSON.parse(b.toString("utf8", s - 1, e + 1)) as string;
}

/**
 * Whether `b[s, e)` holds a backslash. Bounded at `e`: `b` is often a whole file, and a search to its end
 * for every string made a file without escapes cost its length squared.
 */
function hasBackslash(b: Buffer, s: number, e: number): boolean {
  if (e - s > 64) return b.subarray(s, e).indexOf(BACKSLASH) >= 0;
  for (let i = s; i < e; i++) if (b[i] === BACKSLASH) return true;
  return false;
}

/** The number of a J_NUMBER node, as JSON.parse gives it. */
export function numberOf(t: JsonTape, b: Buffer, node: number): number {
  return Number(b.toString("latin1", t.start[node]!, t.end[node]!));
}

