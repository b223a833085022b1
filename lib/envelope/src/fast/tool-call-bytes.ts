// Twin of JSON.parse of a tool call's data read by toolCallPaths (summary/summary.ts), held to them by
// lib/envelope/test/fast/tool-call-bytes.test.ts.
// What the branch summary reads of a tool call (summarize.md §2: `data.call_id`, `data.name`, and the
// path-like strings of `data.args`), found in the bytes of its `data` without JSON.parse. A 1 GiB Log
// inherits hundreds of thousands of tool calls, and parsing each one's data (long edit strings included)
// was an eighth of pixir-summarize's time.
//
// Only for JSON written as JSON.stringify writes it: no whitespace between tokens, and strings and numbers
// spelt as it spells them (every line checkLine accepts is so). There a value's bytes are exactly
// JSON.stringify(JSON.parse(bytes)), and a string holds `/` or `.` exactly when its bytes do (JSON.stringify
// escapes neither, and spells no other character with them). readToolCall returns false on bytes it cannot
// walk (whitespace between tokens among them); the caller then parses them.
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from "./json-bytes.js";
import { sameBytes } from "./line-check.js";

const SLASH = 0x2f;
const DOT = 0x2e;

const CALL_ID = Buffer.from("call_id");
const NAME = Buffer.from("name");
const ARGS = Buffer.from("args");

/**
 * What readToolCall found: the bounds of the JSON text of `call_id` and `name` (-1 when missing), and
 * `paths`, the path-like strings as (start, end, escape) triples: `b[start, end)` is the string with
 * its quotes, and `escape` is where its first escape is (-1 if none; then its bytes are its UTF-8).
 * The caller owns one and passes it to every call, so a tool call costs no allocation.
 */
export class ToolCallFields {
  callIdStart = -1;
  callIdEnd = -1;
  nameStart = -1;
  nameEnd = -1;
  readonly paths: number[] = [];
}

/**
 * End (past the closing quote) of the string whose opening quote is at `i`, or -1 if it does not close
 * before `end`. The quotes are found by Buffer.indexOf: a byte loop in JavaScript is several times
 * slower than JSON.parse over the long strings of an edit, which would undo the point of this file.
 */
function stringEnd(b: Buffer, i: number, end: number): number {
  for (let q = b.indexOf(QUOTE, i + 1); q !== -1 && q < end; q = b.indexOf(QUOTE, q + 1)) {
    // A quote after an odd run of backslashes is escaped; the opening quote stops the run.
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - k) % 2 === 1) return q + 1;
  }
  return -1;
}

/** Note the string `b[start, end)` (with its quotes) if it looks like a path. */
function notePath(b: Buffer, start: number, end: number, paths: number[]): void {
  const body = b.subarray(start + 1, end - 1);
  if (body.indexOf(SLASH) < 0 && body.indexOf(DOT) < 0) return;
  const escape = body.indexOf(BACKSLASH);
  paths.push(start, end, escape < 0 ? -1 : start + 1 + escape);
}

/** End of the value at `i`, or -1 if it does not end before `end`. */
function valueEnd(b: Buffer, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return stringEnd(b, i, end);
  if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
    let depth = 0;
    for (let j = i; j < end; ) {
      const d = b[j];
      if (d === QUOTE) {
        j = stringEnd(b, j, end);
        if (j < 0) return -1;
        continue;
      }
      if (d === OPEN_OBJECT || d === OPEN_ARRAY) depth++;
      else if ((d === CLOSE_OBJECT || d === CLOSE_ARRAY) && --depth === 0) return j + 1;
      j++;
    }
    return -1;
  }
  // A number (digits, `-+.eE`) or a literal (lowercase letters), followed by a `,`, `}` or `]`.
  let j = i;
  while (j < end && isScalarByte(b[j]!)) j++;
  const after = b[j];
  return j > i && (after === COMMA || after === CLOSE_OBJECT || after === CLOSE_ARRAY) ? j : -1;
}

function isScalarByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a) || c === 0x2d || c === 0x2b || c === DOT || c === 0x45;
}

/**
 * Walk the members of the object whose `{` is at `i`: `member(keyStart, keyEnd, valueStart)` gets each
 * key's bounds (without its quotes) and where its value starts, and returns where that value ends (-1:
 * stop). The end of the object (past its `}`), or -1 when the bytes are not as this reads them.
 */
function objectEnd(b: Buffer, i: number, end: number, member: (keyStart: number, keyEnd: number, valueStart: number) => number): number {
  if (b[i] !== OPEN_OBJECT) return -1;
  if (b[i + 1] === CLOSE_OBJECT) return i + 2;
  for (i++; ; ) {
    if (b[i] !== QUOTE) return -1;
    const keyEnd = stringEnd(b, i, end);
    if (keyEnd < 0 || b[keyEnd] !== COLON) return -1;
    const next = member(i + 1, keyEnd - 1, keyEnd + 1);
    if (next < 0) return -1;
    if (b[next] === CLOSE_OBJECT) return next + 1;
    if (b[next] !== COMMA) return -1;
    i = next + 1;
  }
}

/** End of a top-level value of `args`; noted if it is a path-like string, and so are the path-like string elements of an array. */
function argEnd(b: Buffer, v: number, end: number, paths: number[]): number {
  if (b[v] !== OPEN_ARRAY) {
    const next = valueEnd(b, v, end);
    if (next >= 0 && b[v] === QUOTE) notePath(b, v, next, paths);
    return next;
  }
  if (b[v + 1] === CLOSE_ARRAY) return v + 2;
  for (let item = v + 1; ; ) {
    const next = valueEnd(b, item, end);
    if (next < 0) return -1;
    if (b[item] === QUOTE) notePath(b, item, next, paths);
    if (b[next] === CLOSE_ARRAY) return next + 1;
    if (b[next] !== COMMA) return -1;
    item = next + 1;
  }
}

/**
 * Read the tool call whose `data` is the object `b[start, end)` into `f`; false when the bytes are not
 * compact JSON as this reads it (then nothing in `f` is to be used).
 */
export function readToolCall(b: Buffer, start: number, end: number, f: ToolCallFields): boolean {
  f.callIdStart = f.callIdEnd = f.nameStart = f.nameEnd = -1;
  f.paths.length = 0;
  const dataEnd = objectEnd(b, start, end, (keyStart, keyEnd, v) => {
    // A duplicate key: JSON.parse keeps the last, and so does this.
    if (sameBytes(b, keyStart, keyEnd, ARGS)) {
      f.paths.length = 0;
      return b[v] === OPEN_OBJECT ? objectEnd(b, v, end, (_ks, _ke, arg) => argEnd(b, arg, end, f.paths)) : valueEnd(b, v, end);
    }
    const next = valueEnd(b, v, end);
    if (sameBytes(b, keyStart, keyEnd, CALL_ID)) {
      f.callIdStart = v;
      f.callIdEnd = next;
    } else if (sameBytes(b, keyStart, keyEnd, NAME)) {
      f.nameStart = v;
      f.nameEnd = next;
    }
    return next;
  });
  return dataEnd === end;
}
