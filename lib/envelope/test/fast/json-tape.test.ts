// json-tape.ts is a fast path: a line it accepts must be one that JSON.stringify(JSON.parse(line)) gives
// back unchanged, and every value it records must be what JSON.parse gives at that place. These tests
// hold it to JSON.parse and JSON.stringify on generated objects (which it must accept when nothing in them
// is outside its rules) and on lines mutated near every rule: escapes, numbers, whitespace, duplicate and
// integer keys, lone surrogates, nesting, broken JSON.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { J_ARRAY, J_FALSE, J_NULL, J_NUMBER, J_OBJECT, J_STRING, J_TRUE, JsonTape, memberOf, numberOf, readJsonLine, stringOf } from "../../src/fast/json-tape.js";
import { stringKernel } from "../../src/fast/string-scan.js";

const DEEP = Buffer.from("message");
const tape = new JsonTape(DEEP, 6, 2);

/** The plain rule: the line is an object that JSON.stringify writes back as it is. */
function plain(line: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  return v !== null && typeof v === "object" && !Array.isArray(v) && JSON.stringify(v) === line ? v : undefined;
}

/** The recorded node `n` holds `v`, and its children (recorded to the tape's levels) hold v's. */
function holds(b: Buffer, n: number, v: unknown, depth: number, limit: number): void {
  const kind = t().kind[n];
  if (v === null) expect(kind).toBe(J_NULL);
  else if (v === true) expect(kind).toBe(J_TRUE);
  else if (v === false) expect(kind).toBe(J_FALSE);
  else if (typeof v === "number") {
    expect(kind).toBe(J_NUMBER);
    expect(numberOf(t(), b, n)).toBe(v);
  } else if (typeof v === "string") {
    expect(kind).toBe(J_STRING);
    expect(stringOf(t(), b, n)).toBe(v);
  } else {
    // Every value's bytes are JSON.stringify's text of it.
    expect(b.toString("utf8", t().start[n], t().end[n])).toBe(JSON.stringify(v));
    const children: number[] = [];
    for (let c = t().firstChild[n]!; c >= 0; c = t().nextSibling[c]!) children.push(c);
    const values: unknown[] = Array.isArray(v) ? v : Object.values(v as object);
    if (depth + 1 > limit && depth > 0) {
      expect(children).toEqual([]);
      return;
    }
    expect(kind).toBe(Array.isArray(v) ? J_ARRAY : J_OBJECT);
    expect(children.length).toBe(values.length);
    const keys = Array.isArray(v) ? [] : Object.keys(v as object);
    children.forEach((c, i) => {
      let childLimit = limit;
      if (!Array.isArray(v)) {
        expect(JSON.parse(b.toString("utf8", t().keyStart[c]! - 1, t().keyEnd[c]! + 1))).toBe(keys[i]);
        if (depth === 0) childLimit = keys[i] === "message" ? 6 : 2;
      }
      holds(b, c, values[i], depth + 1, childLimit);
    });
  }
}
const t = () => tape;

/** readJsonLine's verdict on `line`, checked against the plain rule when it accepts. */
function fast(line: string): boolean {
  const b = Buffer.from(line, "utf8");
  if (!readJsonLine(b, 0, b.length, tape)) return false;
  const v = plain(b.toString("utf8"));
  expect(v, line).not.toBeUndefined();
  holds(b, 0, v, 0, 6);
  return true;
}

// Characters near every string rule: quotes, backslashes, control characters, DEL, non-ASCII, astral
// characters, U+2028, and lone surrogates (which JSON.stringify writes as escapes).
const char = fc.oneof(
  { arbitrary: fc.constantFrom('"', "\\", "/", "\n", "\t", "\b", "\f", "\r", "\u0000", "\u001f", "\u007f", "é", "中", "😀", "\u2028"), weight: 1 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 1 }), weight: 4 },
);
const text = fc.oneof(
  { arbitrary: fc.array(char, { maxLength: 12 }).map((a) => a.join("")), weight: 40 },
  { arbitrary: fc.tuple(fc.string({ maxLength: 3 }), fc.constantFrom("\ud800", "\udc00", "\ud83d")).map(([a, b]) => a + b), weight: 1 },
);
const key = fc.oneof(
  { arbitrary: text, weight: 8 },
  { arbitrary: fc.constantFrom("type", "message", "content", "text", "id", "__proto__", "a", "b"), weight: 8 },
  { arbitrary: fc.constantFrom("0", "12"), weight: 1 },
);
const scalar = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 1e-7, 2 ** 53, 0.1, null, true, false));
const value = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("array"), tie("object")),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(key, tie("value"), { maxKeys: 5 }),
})).value;
/** An object with a deep `message`, the shape a Claude record has. */
const record = fc.record({
  type: fc.constantFrom("user", "assistant", "progress"),
  uuid: text,
  message: fc.record({ id: text, content: fc.array(fc.dictionary(key, value, { maxKeys: 4 }), { maxLength: 3 }) }),
  extra: value,
  // Long enough, often, for the string kernel to walk the line (128 bytes or more).
  pad: fc.string({ maxLength: 200 }),
});
const line = fc.oneof(record, fc.dictionary(key, value, { maxKeys: 6 })).map((v) => JSON.stringify(v));

/** Edits near the rules, each of which may make a line that is not canonical (or not JSON). */
function mutate(l: string, at: number, which: number): string {
  const i = at % (l.length + 1);
  const edits = [
    () => `${l.slice(0, i)} ${l.slice(i)}`,
    () => l.replace(/\\n/, "\\u000a"),
    () => l.replace(/\\u00([0-9a-f]{2})/, (_, h: string) => `\\u00${h.toUpperCase()}`),
    () => l.replace(/\\"/, "\\u0022"),
    () => l.replace(/\//, "\\/"),
    () => l.replace(/:(-?\d+)([,}\]])/, ":$1.0$2"),
    () => l.replace(/:(\d+)([,}\]])/, ":0$1$2"),
    () => l.replace(/:(-?\d+)([,}\]])/, ":$1e0$2"),
    () => l.replace(/:0([,}\]])/, ":-0$1"),
    () => l.replace(/^\{("[^"]*":[^,{}[\]]*),/, "{$1,$1,"),
    () => l.replace(/^\{/, '{"7":1,'),
    () => l.replace(/^\{/, '{"\\ud800":1,'),
    () => `${l.slice(0, i)}${l.slice(i + 1)}`,
    () => `${l.slice(0, i)}\u0001${l.slice(i)}`,
    () => l.replace(/true/, "True"),
    () => `${l}\r`,
    () => `[${l}]`,
  ];
  return edits[which % edits.length]!();
}

describe.each([
  ["with the string kernel", true],
  ["with the JavaScript loop", false],
])("readJsonLine %s", (_, kernelOn) => {
  beforeAll(() => {
    tape.kernel = kernelOn ? stringKernel : null;
    expect(tape.kernel !== null).toBe(kernelOn);
  });
  afterAll(() => {
    tape.kernel = stringKernel;
  });

  it("accepts every line JSON.stringify writes of an object without integer keys or lone surrogates, and records its values", () => {
    let accepted = 0;
    let long = 0;
    fc.assert(
      fc.property(line, (l) => {
        const within = !/"\d+":/.test(l) && !/\\ud[89a-f]/.test(l);
        const ok = fast(l);
        if (within) expect(ok, l).toBe(true);
        if (ok) accepted++;
        if (ok && l.length >= 128) long++;
      }),
      { numRuns: 3000 },
    );
    expect(accepted).toBeGreaterThan(1000);
    expect(long).toBeGreaterThan(300);
  });

  it("accepts only canonical lines, whatever the edit", () => {
    fc.assert(
      fc.property(line, fc.nat(), fc.nat(), (l, at, which) => {
        fast(mutate(l, at, which));
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses what JSON.stringify would write differently", () => {
    const refused = [
      '{"a": 1}',
      '{"a":1.0}',
      '{"a":1E5}',
      '{"a":-0}',
      '{"a":01}',
      '{"a":"\\u0041"}',
      '{"a":"\\/"}',
      '{"a":"\\u000A"}',
      '{"a":"\\u000a"}',
      '{"a":"\\ud800"}',
      '{"a":1,"a":2}',
      '{"b":1,"1":2}',
      '{"a":[1,]}',
      '{"a":tru}',
      "[1]",
      '"a"',
      '{"a":1} ',
      '{"a":"\u0001"}',
    ];
    for (const l of refused) expect(fast(l), l).toBe(false);
    // The last byte of a string that is not valid UTF-8.
    const bad = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3]), Buffer.from('"}')]);
    expect(readJsonLine(bad, 0, bad.length, tape)).toBe(false);
  });

  it("reads members by key, and strings with escapes as JSON.parse does", () => {
    const l = JSON.stringify({ type: "user", message: { content: [{ type: "text", text: 'a "quoted"\n\ttab é 😀' }] }, n: 12.5 });
    const b = Buffer.from(l);
    expect(readJsonLine(b, 0, b.length, tape)).toBe(true);
    const m = memberOf(tape, b, 0, Buffer.from("message"));
    const c = memberOf(tape, b, m, Buffer.from("content"));
    const block = tape.firstChild[c]!;
    expect(stringOf(tape, b, memberOf(tape, b, block, Buffer.from("text")))).toBe('a "quoted"\n\ttab é 😀');
    expect(numberOf(tape, b, memberOf(tape, b, 0, Buffer.from("n")))).toBe(12.5);
    expect(memberOf(tape, b, 0, Buffer.from("absent"))).toBe(-1);
  });
});
