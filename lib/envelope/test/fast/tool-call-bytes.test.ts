// readToolCall finds a tool call's call_id, name and path-like args in its data's bytes; JSON.parse,
// JSON.stringify and toolCallPaths (the Event path of the summary) are its oracles.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/event/envelope.js";
import { toolCallPaths } from "../../src/summary/summary.js";
import { readToolCall, ToolCallFields } from "../../src/fast/tool-call-bytes.js";
import { checkLine, LineFacts } from "../../src/fast/line-check.js";

/** What readToolCall read from `text`, as values; null when it declined. */
function read(text: string): { callId: string; name: string; paths: string[] } | null {
  const b = Buffer.from(text, "utf8");
  // Inside a larger buffer, as lines are: bytes around the data must not matter.
  const padded = Buffer.concat([Buffer.from('{"data":'), b, Buffer.from("}\n{}")]);
  const start = 8;
  const f = new ToolCallFields();
  if (!readToolCall(padded, start, start + b.length, f)) return null;
  const json = (s: number, e: number) => (s < 0 ? "null" : padded.toString("utf8", s, e));
  const paths: string[] = [];
  for (let k = 0; k < f.paths.length; k += 3) {
    const raw = padded.toString("utf8", f.paths[k], f.paths[k + 1]);
    const escape = f.paths[k + 2]!;
    // The first escape of the string, or -1 when it has none.
    expect(raw.includes("\\")).toBe(escape >= 0);
    if (escape >= 0) expect(padded.indexOf(0x5c, f.paths[k])).toBe(escape);
    paths.push(escape >= 0 ? (JSON.parse(raw) as string) : raw.slice(1, -1));
  }
  return { callId: json(f.callIdStart, f.callIdEnd), name: json(f.nameStart, f.nameEnd), paths: paths.sort() };
}

/** The same, from the parsed data, as the summary's Event path reads it. */
function expected(text: string): { callId: string; name: string; paths: string[] } {
  const data = JSON.parse(text) as Record<string, unknown>;
  return {
    callId: JSON.stringify(data.call_id ?? null),
    name: JSON.stringify(data.name ?? null),
    // In order of neither side: the summary keeps the paths as a sorted set (files_touched), and a parsed
    // object puts integer-like keys ("0") first where the bytes keep them in key order.
    paths: toolCallPaths({ type: "tool_call", data: data as never }).sort(),
  };
}

describe("readToolCall", () => {
  it("reads call_id, name and the path-like args as the parsed data gives them (generated data)", () => {
    const text = fc.oneof(
      fc.constantFrom("src/a.ts", "a.b", "/", ".", "no path", "", "é/🙂.md", 'q"uote/d', "back\\slash.", "line\nbreak/x", "\u0001ctl.", "a\\/b"),
      fc.string({ unit: "grapheme-composite", maxLength: 10 }),
      fc.string({ unit: "binary", maxLength: 8 }),
    );
    const json = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        text,
        fc.double(),
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.oneof(fc.constantFrom("path", "args", "name", "call_id", "__proto__"), text), tie("value"), { maxKeys: 3 }),
      ),
    })).value;
    const args = fc.oneof(fc.dictionary(text, fc.oneof(text, fc.array(fc.oneof(text, json), { maxLength: 4 }), json), { maxKeys: 5 }), json);
    const data = fc.record(
      { call_id: fc.oneof(text, json), name: fc.oneof(text, json), args, other: json },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(data, fc.boolean(), (d, canonical) => {
        const t = canonical ? canonicalJson(d) : JSON.stringify(d);
        expect(read(t), t).toEqual(expected(t));
      }),
      { numRuns: 3000 },
    );
  });

  it("reads mutated data as the parsed data gives it, wherever checkLine still accepts the line (else it may decline)", () => {
    // readToolCall is only given data that checkLine accepted; such data after a mutation it must read
    // rightly or decline, never misread.
    const facts = new LineFacts();
    const text = fc.oneof(fc.constantFrom("src/a.ts", "a.b", "x", "", 'q"/d', "é/🙂"), fc.string({ maxLength: 6 }));
    const data = fc.record({ call_id: text, name: text, args: fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })), { maxKeys: 4 }), other: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] });
    const step = fc.record({ at: fc.nat(), kind: fc.constantFrom("insert", "delete", "swap"), char: fc.constantFrom(..." \\\"{}[],:0.e-/\t\u0001é") });
    let readMutated = 0;
    fc.assert(
      fc.property(data, fc.array(step, { minLength: 1, maxLength: 3 }), fc.boolean(), (d, steps, canonical) => {
        let t = canonical ? canonicalJson(d) : JSON.stringify(d);
        for (const { at, kind, char } of steps) {
          const i = at % (t.length + 1);
          if (kind === "insert") t = t.slice(0, i) + char + t.slice(i);
          else if (kind === "delete") t = t.slice(0, i) + t.slice(i + 1);
          else if (i + 1 < t.length) t = t.slice(0, i) + t[i + 1] + t[i] + t.slice(i + 2);
        }
        // A swap can split a surrogate pair: the bytes (and so the oracle) hold U+FFFD there.
        t = Buffer.from(t, "utf8").toString("utf8");
        // Its callers give it only the data of a line checkLine accepted: that is the precondition.
        const line = Buffer.from(`{"id":"01J","session_id":"s","seq":1,"ts":"2026-07-20T10:02:53.700Z","type":"tool_call","data":${t}}`, "utf8");
        if (checkLine(line, 0, line.length, facts) < 0) return;
        const got = read(t);
        if (got === null) return;
        readMutated++;
        expect(got, t).toEqual(expected(t));
      }),
      { numRuns: 4000 },
    );
    expect(readMutated).toBeGreaterThan(100);
  });

  it("reads edge cases of the layout", () => {
    const cases = [
      "{}",
      '{"args":{}}',
      '{"args":[]}',
      '{"args":"a/b"}',
      '{"args":{"a":[]}}',
      '{"args":{"a":["x/y",{"p":"q/r"},["s.t"],1.5e+21,"u.v"],"b":-0.5,"c":"w/x"}}',
      '{"call_id":{"b":1,"a":[2]},"name":["x"],"args":{"path":"p.q"}}',
      '{"call_id":"c1","call_id":"c2","args":{"a":"x.y"},"args":{"b":"z/w"}}',
      '{"args":{"a":"x.y"},"args":7}',
      '{"args":{"p":"a\\/b","q":"\\"\\\\\\n"}}',
      '{"name":true,"call_id":false,"args":{"n":null}}',
      '{"__proto__":{"x":1},"name":"n","args":{"__proto__":"a/b","p":["__proto__.x"]}}',
      '{"args":{"call_id":"x/y","args":{"p":"not/top"},"name":"n.m"}}',
    ];
    for (const t of cases) expect(read(t), t).toEqual(expected(t));
  });

  it("declines JSON with whitespace between tokens, rather than read it wrongly", () => {
    for (const t of ['{"call_id": "c"}', '{ "name":"x"}', '{"name":"x" }', '{"args":{"p": "a/b"}}', '{"args":{"p":["a/b" ]}}', '{"args":{"n":1 }}', '{"call_id" :"c"}']) {
      expect(read(t), t).toBeNull();
    }
  });

  it("declines bytes that are not one object, end before the data does or after it, or lack a value", () => {
    for (const t of ['{"args":{"p":"a/b}', '{"call_id":"c', '{"args":{"p":["a"}', '{"name":tru', '{"call_id":,"name":"x"}', '{"name":"x"}}', '{}}', '""', '[1]', 'x"name":"y"}']) {
      const b = Buffer.from(t);
      expect(readToolCall(b, 0, b.length, new ToolCallFields()), t).toBe(false);
    }
  });
});
