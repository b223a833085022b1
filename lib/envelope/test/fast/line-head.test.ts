// line-head.ts reads the envelope head of a line from its bytes; its plain rule is decodeOwnHead
// (event/envelope.ts), which reads the same head from the line's text with a regular expression and
// JSON.parse. Whatever readHead accepts, decodeOwnHead must accept with the same id, session_id, seq, ts,
// type and the same start of `data`; and our writers' lines with plain strings are never refused.
import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeOwnHead, serializeEvent, type PixirEvent } from "../../src/event/envelope.js";
import { CANONICAL_TYPES, MAX_SEQ } from "../../src/event/vocabulary.js";
import { LineHead, readHead } from "../../src/fast/line-head.js";

const head = new LineHead();

/** readHead's findings on `b`, or null when it refuses the line. */
function fastHead(b: Buffer) {
  const type = readHead(b, 0, b.length, head);
  if (type < 0) return null;
  return {
    id: b.toString("utf8", head.idStart, head.idEnd),
    session_id: b.toString("utf8", head.sessionStart, head.sessionEnd),
    seq: head.seq,
    ts: b.toString("utf8", head.tsStart, head.tsEnd),
    type: CANONICAL_TYPES[type]!,
    dataText: b.toString("utf8", head.dataOpen, b.length - 1),
  };
}

/** decodeOwnHead's findings on the same line, as text. */
function plainHead(b: Buffer) {
  const own = decodeOwnHead(b.toString("utf8"));
  if (own === null) return null;
  const { id, session_id, seq, ts, type } = own.event;
  return { id, session_id, seq, ts, type, dataText: own.dataText };
}

/** readHead may refuse anything; what it accepts, decodeOwnHead reads alike. */
function agrees(b: Buffer): boolean {
  const fast = fastHead(b);
  if (fast === null) return true;
  // decodeOwnHead also asks the line to end with the envelope's `}`; readHead stops at `"data":{`.
  if (b[b.length - 1] !== 0x7d) return true;
  expect(plainHead(b)).toEqual(fast);
  return true;
}

const plainText = fc.string({ unit: fc.constantFrom(..."abcXYZ019-_:.T"), minLength: 0, maxLength: 30 });
const anyText = fc.string({ unit: "binary", maxLength: 12 });
const seqs = fc.oneof(fc.constant(null), fc.nat({ max: 1000 }), fc.constantFrom(0, 9, 10, 99, MAX_SEQ - 1, MAX_SEQ));
const types = fc.oneof(fc.constantFrom(...CANONICAL_TYPES), fc.constantFrom("text_delta", "tool", "Tool_call", ""));
const datas = fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });

/** Events in our writers' layout: plain strings (readHead's domain) or any strings (escapes, controls). */
const events = (text: fc.Arbitrary<string>) =>
  fc.record({ id: text, session_id: text, seq: seqs, ts: text, type: types, data: datas }).map((e) => e as unknown as PixirEvent);

const lineOf = (e: PixirEvent) => Buffer.from(serializeEvent(e).slice(0, -1), "utf8");

/** Bytes that sit near readHead's rules: quotes, escapes, structure, digits, controls, non-ASCII. */
const MUTANT_BYTES = [0x22, 0x5c, 0x7b, 0x7d, 0x2c, 0x3a, 0x30, 0x31, 0x39, 0x20, 0x6e, 0x75, 0x00, 0x0a, 0x1f, 0x7f, 0xc3, 0xa9];

const mutations = fc.array(
  fc.record({ at: fc.nat(), kind: fc.constantFrom("insert", "replace", "delete"), byte: fc.constantFrom(...MUTANT_BYTES) }),
  { minLength: 1, maxLength: 3 },
);

function mutate(line: Buffer, steps: Array<{ at: number; kind: string; byte: number }>): Buffer {
  let b = Buffer.from(line);
  for (const { at, kind, byte } of steps) {
    // Most of the rules lie in the head: aim there more often than into data.
    const i = at % Math.max(1, Math.min(b.length, at % 3 === 0 ? b.length : 120));
    if (kind === "insert") b = Buffer.concat([b.subarray(0, i), Buffer.of(byte), b.subarray(i)]);
    else if (kind === "replace" && b.length > 0) b = Buffer.concat([b.subarray(0, i), Buffer.of(byte), b.subarray(i + 1)]);
    else if (b.length > 0) b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
  }
  return b;
}

describe("readHead, held to decodeOwnHead", () => {
  it("reads our writers' lines with plain strings, as decodeOwnHead does", () => {
    fc.assert(
      fc.property(events(plainText), (e) => {
        const b = lineOf(e);
        const plain = plainHead(b);
        const fast = fastHead(b);
        // readHead takes only the canonical types and a data object; decodeOwnHead the canonical types.
        if ((CANONICAL_TYPES as readonly string[]).includes(e.type)) expect(fast).not.toBeNull();
        else expect(fast).toBeNull();
        if (fast !== null) expect(plain).toEqual(fast);
      }),
      { numRuns: 2000 },
    );
  });

  it("accepts only what decodeOwnHead reads alike (generated strings with escapes and controls)", () => {
    fc.assert(fc.property(events(anyText), (e) => agrees(lineOf(e))), { numRuns: 2000 });
  });

  it("accepts only what decodeOwnHead reads alike (mutated lines)", () => {
    fc.assert(
      fc.property(events(plainText), mutations, (e, steps) => {
        const b = mutate(lineOf(e), steps);
        // decodeOwnHead reads text: compare where the bytes are text.
        return !isUtf8(b) || agrees(b);
      }),
      { numRuns: 5000 },
    );
  });

  it("refuses heads decodeOwnHead takes but readHead leaves to the full decode", () => {
    const data = '"data":{}}';
    for (const line of [
      `{"id":"a\\"b","session_id":"s","seq":1,"ts":"t","type":"user_message",${data}`, // an escape in id
      `{"id":null,"session_id":"s","seq":1,"ts":"t","type":"user_message",${data}`, // a null id
      `{"id":"a","session_id":"s","seq":01,"ts":"t","type":"user_message",${data}`, // a leading zero
      `{"id":"a","session_id":"s","seq":1,"ts":"t","type":"user_message","data":[]}`, // data not an object
    ]) {
      const b = Buffer.from(line);
      expect(readHead(b, 0, b.length, head), line).toBe(-1);
      expect(decodeOwnHead(line), line).not.toBeNull();
    }
  });
});
