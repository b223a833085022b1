// decode-line.ts is the twin of the plain rule of envelope-and-log.md §7: JSON.parse, then decodeValue
// (event/envelope.ts). Whichever way it takes (checkLine's fast path or the full decode), it must give
// the same Event, the same `exact`, or the same problem, on generated lines and on mutated ones.
import { isUtf8 } from "node:buffer";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { decodeValue, isLineProblem, NESTING_PROBLEM, serializeEvent, type DecodedLine, type LineProblem, type PixirEvent } from "../../src/event/envelope.js";
import { nestsDeeperThan } from "../../src/event/nesting.js";
import { CANONICAL_TYPES } from "../../src/event/vocabulary.js";
import { decodeLogLine, LineDecoder } from "../../src/fast/decode-line.js";

/** The plain rule, for a line that ended with `\n`. */
function plain(bytes: Buffer): DecodedLine | LineProblem {
  if (!isUtf8(bytes)) return { reason: "invalid_utf8" };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return { reason: "invalid_json" };
  }
  if (nestsDeeperThan(bytes)) return NESTING_PROBLEM;
  return decodeValue(value);
}

/** What a decode says, in a form to compare: the problem's reason, or the Event (data read) and `exact`. */
function said(d: DecodedLine | LineProblem): unknown {
  if (isLineProblem(d)) return { problem: d.reason };
  return { event: { ...d.event, data: d.event.data }, exact: d.exact };
}

const text = fc.oneof(fc.string({ maxLength: 10 }), fc.string({ unit: "grapheme-composite", maxLength: 6 }), fc.constantFrom("", "é🙂", '"\\', "\u0000\u001f"));
const events = fc.record({
  id: fc.oneof(fc.constantFrom("01J", "e1"), text),
  session_id: fc.constantFrom("s", "t", "sess-1"),
  seq: fc.oneof(fc.constant(null), fc.nat({ max: 99 })),
  ts: fc.constantFrom("2026-07-20T10:02:53.700Z", "2026-07-20T10:02:53Z", "not a time"),
  type: fc.oneof(fc.constantFrom(...CANONICAL_TYPES), fc.constantFrom("text_delta", "made_up")),
  data: fc.dictionary(fc.oneof(fc.constantFrom("text", "call_id", "resources", "strategy", "b", "a"), fc.string({ maxLength: 4 })), fc.oneof(text, fc.jsonValue({ maxDepth: 2 })), { maxKeys: 4 }),
});
const lineOf = (e: Record<string, unknown>) => Buffer.from(serializeEvent(e as unknown as PixirEvent).trimEnd(), "utf8");

const MUTANT_BYTES = [0x22, 0x5c, 0x2c, 0x3a, 0x7b, 0x7d, 0x5b, 0x5d, 0x20, 0x30, 0x6e, 0x0a, 0xc3, 0xff, 0x00];
const mutations = fc.array(fc.record({ at: fc.nat(), kind: fc.constantFrom("insert", "replace", "delete"), byte: fc.constantFrom(...MUTANT_BYTES) }), { minLength: 1, maxLength: 3 });
function mutate(line: Buffer, steps: Array<{ at: number; kind: string; byte: number }>): Buffer {
  let b = line;
  for (const { at, kind, byte } of steps) {
    const i = at % (b.length + 1);
    if (kind === "insert") b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
    else if (kind === "replace" && i < b.length) b = Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i + 1)]);
    else if (kind === "delete" && i < b.length) b = Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
  }
  return b;
}

describe("decodeLogLine is the plain rule (envelope-and-log.md §7)", () => {
  it("on generated lines in our writers' layout", () => {
    const decoder = new LineDecoder();
    let fastPath = 0;
    fc.assert(
      fc.property(events, (e) => {
        const b = lineOf(e);
        const d = decodeLogLine(b, false, decoder);
        if (!isLineProblem(d) && d.canonical !== null) fastPath++;
        expect(said(d)).toEqual(said(plain(b)));
      }),
      { numRuns: 3000 },
    );
    // Not vacuous: most took the byte path.
    expect(fastPath).toBeGreaterThan(500);
  });

  it("on mutated lines", () => {
    const decoder = new LineDecoder();
    fc.assert(
      fc.property(events, mutations, (e, steps) => {
        const b = mutate(lineOf(e), steps);
        expect(said(decodeLogLine(b, false, decoder))).toEqual(said(plain(b)));
      }),
      { numRuns: 4000 },
    );
  });

  it("a decoder belongs to its reader: lines of two sessions through two decoders, interleaved, keep their ids", () => {
    const a = new LineDecoder();
    const b = new LineDecoder();
    for (let i = 0; i < 4; i++) {
      const da = decodeLogLine(lineOf({ id: `a${i}`, session_id: "alpha", seq: i, ts: "2026-07-20T10:02:53Z", type: "user_message", data: { text: "x" } }), false, a);
      const db = decodeLogLine(lineOf({ id: `b${i}`, session_id: i % 2 ? "beta" : "gamma", seq: i, ts: "2026-07-20T10:02:53Z", type: "user_message", data: {} }), false, b);
      expect([(da as DecodedLine).event.session_id, (db as DecodedLine).event.session_id]).toEqual(["alpha", i % 2 ? "beta" : "gamma"]);
    }
  });
});
