// line-check.ts is a fast path: whatever it accepts must be exactly what the full decode (JSON.parse,
// decodeValue) and canonicalJson make of the line. These tests hold it to those oracles on lines built
// to sit near every rule: escapes, numbers, key order, nesting, whitespace, and broken JSON.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalJson, decodeValue, isLineProblem } from "../../src/event/envelope.js";
import { decodeLogLine } from "../../src/fast/decode-line.js";
import { canonicalInto, checkLine, LineFacts } from "../../src/fast/line-check.js";
import { stringKernel } from "../../src/fast/string-scan.js";

/** The record every check in this file reads its findings from; each suite sets the string walk it uses. */
const facts = new LineFacts();
import { MAX_NESTING_DEPTH } from "../../src/event/nesting.js";

const headOf = (type = "tool_call", seq: number | null = 3) => `{"id":"01J","session_id":"s","seq":${seq},"ts":"2026-07-20T10:02:53.700Z","type":"${type}","data":`;

/** What the full decode says of a line, and canonicalJson of its data: the oracles for checkLine. */
function oracle(line: string): { valid: boolean; canonical: string | null } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { valid: false, canonical: null };
  }
  const decoded = decodeValue(value);
  if (isLineProblem(decoded)) return { valid: false, canonical: null };
  return { valid: true, canonical: canonicalJson(decoded.event.data) };
}

/** checkLine's verdict, and the canonical data it gives (canonicalInto) when it accepts. */
function fast(line: string): string | null {
  const b = Buffer.from(line, "utf8");
  if (checkLine(b, 0, b.length, facts) < 0) return null;
  const out = Buffer.alloc(facts.dataEnd - facts.dataStart);
  canonicalInto(b, facts.dataStart, facts.dataEnd, facts.reorder.slice(0, facts.reorderLength), out, 0);
  return out.toString("utf8");
}

const accepts = (line: string) => fast(line) !== null;

/** checkLine may refuse anything, but what it accepts must be valid, with the canonical JSON it gives. */
function sound(line: string): boolean {
  const got = fast(line);
  if (got === null) return true;
  // The oracle reads the same bytes (a lone surrogate in `line` was written as U+FFFD).
  const o = oracle(Buffer.from(line, "utf8").toString("utf8"));
  return o.valid && o.canonical === got;
}

// Every case runs twice: with the string kernel (string-scan.ts) skipping the ordinary bytes of strings in
// lines of 128 bytes or more, and with the JavaScript loop alone.
describe.each([
  ["with the string kernel", true],
  ["with the JavaScript loop", false],
])("checkLine %s", (_, kernelOn) => {
  beforeAll(() => {
    facts.kernel = kernelOn ? stringKernel : null;
    expect(facts.kernel !== null).toBe(kernelOn);
  });
  afterAll(() => {
    facts.kernel = stringKernel;
  });

  it("accepts our writers' lines with canonical data and reports where the parts lie", () => {
    const line = `${headOf()}{"args":{"path":"a/b.ts"},"call_id":"c\\"1","name":"read"}}`;
    const b = Buffer.from(line);
    expect(checkLine(b, 0, b.length, facts)).toBeGreaterThanOrEqual(0);
    expect(b.toString("utf8", facts.dataStart, facts.dataEnd)).toBe('{"args":{"path":"a/b.ts"},"call_id":"c\\"1","name":"read"}');
    expect(b.toString("utf8", facts.tsStart, facts.tsEnd)).toBe("2026-07-20T10:02:53.700Z");
    expect(b.toString("utf8", facts.callIdStart, facts.callIdEnd)).toBe('c\\"1');
    expect(facts.callIdEscaped).toBe(true);
    expect(facts.hasResources).toBe(false);
    expect(facts.seq).toBe(3);
  });

  it("refuses what canonicalJson would write differently, and what is not JSON", () => {
    const refused = [
      '{"a":1,"a":2}', // duplicate key
      '{"b":1,"c":2,"b":3}', // duplicate key, out of order
      '{"e":1,"d":2,"c":3,"b":4,"a":5,"d":6}', // duplicate key found while sorting many members
      '{"ab":1,"a":2,"ab":3}', // a duplicate next to its prefix
      '{"a": 1}', // whitespace
      '{"a":"\\/"}', // an escape JSON.stringify does not write
      '{"a":"\\u0041"}',
      '{"a":"\\u001F"}', // uppercase hex
      '{"a":"\\u000a"}', // \n has a short form
      '{"a":"\\ud83d\\ude00"}',
      '{"a":1.0}',
      '{"a":1e2}',
      '{"a":-0}',
      '{"a":01}',
      '{"a":12345678901234567890}',
      '{"a":"x\ty"}', // raw control character: not JSON
      '{"a":tru}',
      '{"a":[1,]}',
      '{"a":{}', // unbalanced
      '{"\\u0061":1}', // escaped key
      '{"é":1}', // non-ASCII key: code-unit order is left to the full decode
      "[1]",
    ];
    for (const data of refused) expect(accepts(`${headOf()}${data}}`), data).toBe(false);
    expect(accepts(`${headOf()}{"a":1}}\r`), "CRLF").toBe(false);
    expect(accepts(`${headOf()}{"a":1}} `), "trailing space").toBe(false);
    expect(accepts(`${headOf("text_delta")}{"a":1}}`), "ephemeral type").toBe(false);
    expect(accepts(`${headOf()}{"a":1}}`.replace('"seq":3', '"seq":03')), "leading zero seq").toBe(false);
  });

  it("accepts the canonical forms of numbers, escapes and literals", () => {
    const accepted = ['{"a":0}', '{"a":-12}', '{"a":0.5}', '{"a":1e+21}', '{"a":1234567890123456}', '{"a":"\\u001b\\b\\f\\n\\r\\t\\"\\\\"}', '{"a":[true,false,null,{}],"b":[]}', '{"10":1,"2":2}', '{"":1,"a":"é🙂\u2028"}'];
    for (const data of accepted) {
      const line = `${headOf()}${data}}`;
      expect(accepts(line), data).toBe(true);
      expect(oracle(line), data).toEqual({ valid: true, canonical: data });
    }
  });

  it("puts the members of objects with keys out of order in order, inner objects first", () => {
    const cases = [
      ['{"b":1,"a":2}', '{"a":2,"b":1}'],
      ['{"name":"x","call_id":"c","args":{"z":[{"q":1,"p":{"y":0,"x":[]}}],"a":"s"}}', '{"args":{"a":"s","z":[{"p":{"x":[],"y":0},"q":1}]},"call_id":"c","name":"x"}'],
      ['{"2":0,"10":1}', '{"10":1,"2":0}'],
      ['{"j":9,"i":8,"h":7,"g":6,"f":5,"e":4,"d":3,"c":2,"b":1,"a":0}', '{"a":0,"b":1,"c":2,"d":3,"e":4,"f":5,"g":6,"h":7,"i":8,"j":9}'],
      ['{"ab":1,"a":2,"b":{"y":1,"x":2},"aa":3}', '{"a":2,"aa":3,"ab":1,"b":{"x":2,"y":1}}'],
      // Objects out of order side by side in an array, one inside another, and one in order around them.
      ['{"a":[{"d":1,"c":2},{"f":{"h":[{"j":1,"i":2}],"g":2},"e":3}],"k":{"m":{"o":1,"n":2},"l":0}}', '{"a":[{"c":2,"d":1},{"e":3,"f":{"g":2,"h":[{"i":2,"j":1}]}}],"k":{"l":0,"m":{"n":2,"o":1}}}'],
    ];
    for (const [data, want] of cases) {
      expect(fast(`${headOf()}${data}}`), data).toBe(want);
      expect(oracle(`${headOf()}${data}}`).canonical).toBe(want);
    }
  });

  it("puts objects out of order nested hundreds deep in order (each written inside the one around it)", () => {
    const depth = 400;
    const data = `${'{"b":0,"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    expect(fast(`${headOf()}${data}}`)).toBe(oracle(`${headOf()}${data}}`).canonical);
  });

  it("checks a line longer than the kernel's 1 MiB the same way (the JavaScript loop takes it)", () => {
    const text = `${"abc é 🙂 \\n \\\" ".repeat(150_000)}end`;
    const good = `${headOf("user_message")}{"text":"${text}"}}`;
    expect(Buffer.byteLength(good)).toBeGreaterThan(2 * 1024 * 1024);
    expect(fast(good)).toBe(oracle(good).canonical);
    // A raw control byte deep inside the long string makes the line invalid JSON: refused.
    const bad = good.replace("end", "e\u0001d");
    expect(accepts(bad)).toBe(false);
  });

  it("leaves nesting past the limit to the full decode", () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    // The envelope is depth 1 and data depth 2, so data may hold MAX - 2 more levels.
    expect(accepts(`${headOf()}{"a":${deep(MAX_NESTING_DEPTH - 2)}}}`)).toBe(true);
    expect(accepts(`${headOf()}{"a":${deep(MAX_NESTING_DEPTH - 1)}}}`)).toBe(false);
  });

  it("never accepts a line the oracles see differently (generated data)", () => {
    const key = fc.oneof(fc.constantFrom("a", "b", "call_id", "resources", "10", "2", "", "__proto__"), fc.string({ maxLength: 4 }));
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        fc.string({ unit: "grapheme-composite", maxLength: 8 }),
        fc.string({ unit: "binary", maxLength: 6 }),
        fc.double(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(key, tie("value"), { maxKeys: 4 }),
      ),
    })).value;
    const data = fc.dictionary(key, json, { maxKeys: 5 });
    // The data as canonicalJson writes it, as JSON.stringify writes it (insertion order), and mutated.
    const text = fc.tuple(data, fc.nat(), fc.constantFrom("none", "stringify", "insert", "delete", "swap")).map(([d, at, how]) => {
      const t = how === "stringify" ? JSON.stringify(d) : canonicalJson(d);
      const i = at % (t.length + 1);
      const pick = " \\\"{}[],:0.e-u/\t\u0001é"[at % 17]!;
      if (how === "insert") return t.slice(0, i) + pick + t.slice(i);
      if (how === "delete") return t.slice(0, i) + t.slice(i + 1);
      if (how === "swap" && i + 1 < t.length) return t.slice(0, i) + t[i + 1] + t[i] + t.slice(i + 2);
      return t;
    });
    let accepted = 0;
    fc.assert(
      fc.property(text, (t) => {
        if (accepts(`${headOf()}${t}}`)) accepted++;
        return sound(`${headOf()}${t}}`);
      }),
      { numRuns: Number(process.env.LINE_CHECK_RUNS ?? 4000) },
    );
    // Not vacuous: the canonical texts among them pass.
    expect(accepted).toBeGreaterThan(100);
  });

  it("names a branch_summary's top-level string strategy from the bytes, as data.strategy reads", () => {
    const cases: Array<[string, string]> = [
      ["branch_summary", '{"strategy":"deterministic_operational_summary_v1","tool_calls":[{"seq":1}]}'],
      ["branch_summary", '{"range":{"strategy":"inner"},"strategy":"a\\"b\\\\"}'],
      ["branch_summary", '{"strategy":7}'],
      ["branch_summary", '{"x":{"strategy":"inner"}}'],
      ["branch_summary", '{"resources":[],"strategy":"s"}'],
      ["tool_call", '{"call_id":"c","strategy":"not a summary"}'],
    ];
    for (const [type, data] of cases) {
      const line = `${headOf(type)}${data}}`;
      const decoded = decodeLogLine(Buffer.from(line), false);
      if (isLineProblem(decoded) || decoded.canonical === null) throw new Error(`refused: ${line}`);
      const slow = JSON.parse(line).data.strategy;
      expect(decoded.canonical.strategy, line).toBe(type === "branch_summary" && typeof slow === "string" ? slow : null);
    }
  });

  it("gives decodeLogLine the same Event as the full decode", () => {
    const lines = [
      `${headOf("tool_result", 7)}{"call_id":"c1","ok":true,"output":"é\\n🙂"}}`,
      `${headOf("user_message", null)}{"text":"hi"}}`,
      `${headOf("user_message", 1)}{"resources":[{"resource_id":"r"}],"text":"x"}}`,
    ];
    for (const line of lines) {
      const b = Buffer.from(line);
      const fast = decodeLogLine(b, false);
      if (isLineProblem(fast)) throw new Error("refused");
      expect(fast.canonical).not.toBeNull();
      const slow = decodeValue(JSON.parse(line));
      if (isLineProblem(slow)) throw new Error("refused");
      expect({ ...fast.event }).toEqual(slow.event);
      expect(fast.exact).toBe(slow.exact);
    }
  });
});

describe("LineFacts", () => {
  it("belongs to its reader: checking a line into one record leaves another's findings as they were", () => {
    const a = Buffer.from(`${headOf("tool_call", 3)}{"call_id":"a1","name":"read"}}`);
    const b = Buffer.from(`${headOf("user_message", 9)}{"text":"hi","b":1,"a":2}}`);
    const fa = new LineFacts();
    const fb = new LineFacts();
    expect(checkLine(a, 0, a.length, fa)).toBeGreaterThanOrEqual(0);
    expect(checkLine(b, 0, b.length, fb)).toBeGreaterThanOrEqual(0);
    expect(fa.seq).toBe(3);
    expect(a.toString("utf8", fa.callIdStart, fa.callIdEnd)).toBe("a1");
    expect(fa.reorderLength).toBe(0);
    expect(a.toString("utf8", fa.head.idStart, fa.head.idEnd)).toBe("01J");
    expect(fb.seq).toBe(9);
    expect(fb.callIdStart).toBe(-1);
    expect(fb.reorderLength).toBeGreaterThan(0);
  });
});
