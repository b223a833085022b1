// stringified.ts is a fast path: whatever it accepts must parse, and its copy (writeStringified) must be
// JSON.stringify(JSON.parse(text)), for the whole text and for each member it reports. These tests hold it
// to JSON.parse and JSON.stringify on generated objects, written as JSON.stringify writes them and spelt
// otherwise (numbers as serde_json writes them, whitespace, escapes, duplicate keys, broken bytes).
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_NESTING_DEPTH } from "../../src/event/nesting.js";
import { checkStringified, memberAt, StringifiedObject, writeStringified } from "../../src/fast/stringified.js";
import { stringKernel } from "../../src/fast/string-scan.js";

const o = new StringifiedObject();
const PAYLOAD = Buffer.from("payload");

/** writeStringified of `b[s, e)`, as text. */
function copy(b: Buffer, s: number, e: number): string {
  const out = Buffer.alloc(2 * (e - s) + 64 * (o.respeltCount + 1));
  return out.toString("utf8", 0, writeStringified(o, b, s, e, out, 0));
}

/**
 * Check `text` inside a larger buffer (bytes around a line must not matter). When accepted, hold the copy
 * and every reported member to JSON.parse and JSON.stringify. Returns whether it was accepted.
 */
function holds(text: string | Buffer): boolean {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const b = Buffer.concat([Buffer.from("[1,"), bytes, Buffer.from(',"}\n')]);
  const s = 3;
  const e = s + bytes.length;
  if (!checkStringified(b, s, e, o, PAYLOAD)) return false;
  const value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes)) as Record<string, unknown>;
  expect(copy(b, s, e)).toBe(JSON.stringify(value));
  expect(o.respeltCount === 0).toBe(JSON.stringify(value) === bytes.toString("utf8"));
  const keys = Object.keys(value);
  expect(o.count).toBe(keys.length);
  for (let k = 0; k < o.count; k++) {
    const key = b.toString("utf8", o.members[4 * k], o.members[4 * k + 1]);
    expect(key).toBe(keys[k]);
    expect(memberAt(o, b, Buffer.from(key))).toBe(4 * k);
    expect(copy(b, o.members[4 * k + 2]!, o.members[4 * k + 3]!)).toBe(JSON.stringify(value[key]));
  }
  const payload = value.payload;
  if (payload !== null && typeof payload === "object" && !Array.isArray(payload)) {
    const inner = Object.keys(payload);
    expect(o.innerCount).toBe(inner.length);
    inner.forEach((key, k) => {
      expect(b.toString("utf8", o.inner[4 * k], o.inner[4 * k + 1])).toBe(key);
      expect(memberAt(o, b, Buffer.from(key), true)).toBe(4 * k);
      expect(copy(b, o.inner[4 * k + 2]!, o.inner[4 * k + 3]!)).toBe(JSON.stringify((payload as Record<string, unknown>)[key]));
    });
  } else expect(o.innerCount).toBe(-1);
  return true;
}

const str = fc.oneof(
  fc.constantFrom("", "a\"b\\c", "line\nbreak\ttab\r\f\b", "\u0000\u0001\u001f\u007f", "é🙂", "\u2028\u2029", "\ud800", "x\udc00y"),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: "binary", maxLength: 6 }),
);
const key = fc.oneof(fc.constantFrom("type", "payload", "a", "", "__proto__", "0", "1x", "10", "é", "k\"q", "b\\"), fc.string({ maxLength: 4 }));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    str,
    fc.integer(),
    fc.double(),
    fc.constantFrom(0, -0, 1e21, 1e-7, 2 ** 53 + 2, 123456789012345678, 0.1, 25),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(key, tie("v"), { maxKeys: 4 }),
  ),
})).v;
const object = fc.oneof(fc.dictionary(key, value, { maxKeys: 5 }), fc.record({ type: str, payload: fc.dictionary(key, value, { maxKeys: 5 }) }, { requiredKeys: [] }));

/** A text changed where the spelling rules bite. */
function mutate(text: string, at: number, how: number): string | Buffer {
  const i = at % (text.length + 1);
  const insert = (s: string) => text.slice(0, i) + s + text.slice(i);
  switch (how) {
    case 0:
      return insert(" ");
    case 1:
      return text.replace(/(\d)([,}\]])/, "$1.0$2"); // serde_json's float
    case 2:
      return text.replace(/(-?\d+)([,}\]])/, "$1E2$2");
    case 3:
      return text.replace(/(-?\d+)([,}\]])/, "$1e400$2");
    case 4:
      return text.replace(/:(-?\d+)/, ":-0");
    case 5:
      return text.replace(/"([a-z])/, '"\\u0061$1');
    case 6:
      return text.replace(/\\u00([0-9a-f])([a-f])/, "\\u00$1$2".toUpperCase());
    case 7:
      return text.replace(/"([^"\\]*)":/, '"$1":1,"$1":'); // a duplicate key
    case 8:
      return `${text}\r`;
    case 9:
      return insert("\\/");
    case 10: {
      const b = Buffer.from(text, "utf8");
      if (b.length > 0) b[at % b.length] = 0xc3;
      return b;
    }
    case 11:
      return text.slice(0, i);
    case 12:
      return text.replace(/(\d)([,}\]])/, "$1.50$2");
    default:
      return `\ufeff${text}`;
  }
}

describe.each([
  ["with the string kernel", true],
  ["with the JavaScript loop", false],
])("checkStringified %s", (_, kernelOn) => {
  beforeAll(() => {
    o.kernel = kernelOn ? stringKernel : null;
  });
  afterAll(() => {
    o.kernel = stringKernel;
  });

  it("accepts what JSON.stringify writes, unless a key starts with a digit or holds an escape, or a string a lone surrogate", () => {
    fc.assert(
      fc.property(object, (v) => {
        const text = JSON.stringify(v);
        const accepted = holds(text);
        const refusable = /[{,]"(\d|[^"]*\\)/.test(text) || text.includes("\\ud");
        if (!refusable) expect(accepted, text).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it("copies a text spelt otherwise as JSON.stringify would write it, or refuses it", () => {
    fc.assert(
      fc.property(object, fc.nat(), fc.nat(13), (v, at, how) => {
        holds(mutate(JSON.stringify(v), at, how));
      }),
      { numRuns: 2000 },
    );
  });

  it("spells numbers as JSON.stringify does, and refuses what is not JSON or not so", () => {
    const serde = Buffer.from('{"a":25.0,"b":[1E2,1e400,-0,0.10,1e21,5e-324,123456789012345678]}');
    expect(holds(serde)).toBe(true);
    expect(checkStringified(serde, 0, serde.length, o, null)).toBe(true);
    expect(copy(serde, 0, serde.length)).toBe('{"a":25,"b":[100,null,0,0.1,1e+21,5e-324,123456789012345680]}');
    for (const bad of ['{"a":1,"a":2}', '{"a":01}', '{"a":1.}', '{"a":.5}', '{"a":-}', '{"a":1e}', '{"a": 1}', '{"a":"\\/"}', '{"a":"\\u0041"}', '{"a":"\\u001F"}', '{"0":1}', '{"a\\"":1}', "[1]", '{"a":1}x', '{"a":tru}', '{"a":"x}']) {
      expect(holds(bad), bad).toBe(false);
    }
    const deep = `{"a":${"[".repeat(MAX_NESTING_DEPTH)}${"]".repeat(MAX_NESTING_DEPTH)}}`;
    expect(holds(deep)).toBe(false);
  });
});
