// context-and-compaction.md §6: the value helpers. The examples are the specification's; the properties
// hold the helpers to what JSON, UTF-8 and Erlang's orders say independently of this code (JSON.parse
// reads back what jason writes, Buffer.compare orders keys, Number reads back float text).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bullets, compareTerms, compareUtf8, etrim, excerptOf, floatText, inspect, jason, orElse, parseTerm, str, termOfJs, type Term } from "../../src/event/elixir.js";

/** Terms as a JSON text would give them: integers as bigints, other numbers as floats. */
const key = fc.string({ unit: "binary", maxLength: 6 });
const leaf: fc.Arbitrary<Term> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const { term } = fc.letrec<{ term: Term }>((tie) => ({
  term: fc.oneof(
    { depthSize: "small" },
    leaf,
    fc.array(tie("term"), { maxLength: 5 }),
    fc.dictionary(key, tie("term"), { maxKeys: 5 }).map((o) => Object.assign(Object.create(null) as Record<string, Term>, o)),
  ),
}));

/** What JSON.parse gives for a Term's JSON: the same structure with every number a double. */
function asJs(v: Term): unknown {
  if (typeof v === "bigint") return Number(v);
  if (typeof v === "number") return Object.is(v, -0) ? -0 : v;
  if (Array.isArray(v)) return v.map(asJs);
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asJs(x)]));
  return v;
}

/** The JSON strings of a text, in order (every token in `"…"`). */
const stringTokens = (json: string): string[] => [...json.matchAll(/"(?:[^"\\]|\\.)*"/g)].map((m) => JSON.parse(m[0]) as string);

describe("jason (§6.7)", () => {
  it("JSON.parse reads back the value it writes, numbers included", () => {
    fc.assert(
      fc.property(term, (v) => {
        expect(JSON.parse(jason(v))).toEqual(asJs(v));
      }),
      { numRuns: 400 },
    );
  });

  it("keeps integers of any size exactly and floats as floats", () => {
    fc.assert(fc.property(fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n }), (n) => jason(n) === n.toString()));
    expect(jason(parseTerm("[1,1.0,2.5,1e3,-0.0,12345678901234567890123]"))).toBe("[1,1.0,2.5,1.0e3,-0.0,12345678901234567890123]");
  });

  it("writes object members in UTF-8 byte order of their keys, at every depth", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: "binary", maxLength: 6 }), { maxLength: 8 }), (keys) => {
        const o = Object.create(null) as Record<string, Term>;
        for (const k of keys) o[k] = null;
        const written = stringTokens(jason(o));
        const byBytes = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(written).toEqual(byBytes);
        expect(stringTokens(jason([{ x: o }] as Term))).toEqual(["x", ...byBytes]);
      }),
    );
  });

  it("escapes only the quote, the backslash and controls, with upper-case hex", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 20 }), (s) => {
        const out = jason(s);
        expect(JSON.parse(out)).toBe(s);
        // Nothing below U+0020 is written raw; every \u escape is upper case; nothing else is escaped.
        expect(out).not.toMatch(/[\u0000-\u001f]/);
        for (const m of out.matchAll(/\\u([0-9A-Fa-f]{4})/g)) {
          expect(m[1]).toBe(m[1]!.toUpperCase());
          expect(parseInt(m[1]!, 16)).toBeLessThan(0x20);
        }
        const unescapedLength = [...s].filter((c) => c >= " " && c !== '"' && c !== "\\").join("").length;
        expect(out.replace(/\\(u[0-9A-F]{4}|.)/g, "").length - 2).toBe(unescapedLength);
      }),
    );
    expect(jason("a\tb\u0001\u001f/\u007f\u2028\u2029é")).toBe('"a\\tb\\u0001\\u001F/\u007f\u2028\u2029é"');
    expect(jason("\b\f\n\r\"\\")).toBe('"\\b\\f\\n\\r\\"\\\\"');
  });
});

describe("float text (§6.7)", () => {
  it("reads back as the same double, always with a fraction, in the shorter notation", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (f) => {
        const t = floatText(f);
        expect(Object.is(Number(t), f)).toBe(true);
        expect(t).toMatch(/^-?[0-9]+\.[0-9]+(e-?[0-9]+)?$/);
        if (Math.abs(f) >= 2 ** 53) expect(t).toContain("e");
        // The digits are the shortest that read back, as JavaScript's own (also shortest) form has them.
        const digits = (x: string) => x.replace(/e.*$/, "").replace(/[-.]/g, "").replace(/^0+/, "").replace(/0+$/, "");
        expect(digits(t)).toBe(digits(Math.abs(f).toExponential()) || "");
      }),
      { numRuns: 2000 },
    );
  });

  it("matches the specification's examples", () => {
    const cases: Array<[number, string]> = [
      [1000, "1.0e3"],
      [100, "100.0"],
      [0.0001, "0.0001"],
      [1e-5, "1.0e-5"],
      [9007199254740992, "9.007199254740992e15"],
      [1e20, "1.0e20"],
      [1.2e3, "1.2e3"],
      [123.456, "123.456"],
      [0.001, "0.001"],
      [0, "0.0"],
      [-0, "-0.0"],
      [2.5e-7, "2.5e-7"],
    ];
    for (const [f, text] of cases) expect(floatText(f)).toBe(text);
  });
});

describe("str (§6.1)", () => {
  it("matches the specification's table", () => {
    expect(str("s")).toBe("s");
    expect(str(null)).toBe("");
    expect(str(undefined)).toBe("");
    expect(str(true)).toBe("true");
    expect(str(-12n)).toBe("-12");
    expect(str(1.0)).toBe("1.0");
    expect(str(1000.0)).toBe("1.0e3");
    expect(str(parseTerm('["a","b"]'))).toBe("ab");
    expect(str(parseTerm("[104,105]"))).toBe("hi");
    expect(str(parseTerm('["a",[98,["c"]]]'))).toBe("abc");
    // Not character data: Pixir raises; pixir writes the JSON (§7 D4).
    expect(str(parseTerm("[1.5]"))).toBe("[1.5]");
    expect(str(parseTerm("[55296]"))).toBe("[55296]");
    expect(str(parseTerm('{"k":1}'))).toBe('{"k":1}');
  });
});

describe("inspect (§6.2)", () => {
  it("matches the specification's examples", () => {
    expect(inspect(null)).toBe("nil");
    expect(inspect(parseTerm('{"k":1,"b":[1,"x"]}'))).toBe('%{"b" => [1, "x"], "k" => 1}');
    expect(inspect(1000.0)).toBe("1000.0");
    expect(inspect(1e16)).toBe("1.0e16");
    expect(inspect(0.0001)).toBe("0.0001");
    expect(inspect(2.5e-7)).toBe("2.5e-7");
    expect(inspect(parseTerm("[]"))).toBe("[]");
    expect(inspect(parseTerm("{}"))).toBe("%{}");
    expect(inspect(parseTerm("[104,105]"))).toBe('~c"hi"');
    expect(inspect(parseTerm("[7,27,10]"))).toBe('~c"\\a\\e\\n"');
    expect(inspect(parseTerm("[127]"))).toBe("[127]");
    expect(inspect(parseTerm('["a\\"b\\\\c#{d}"]'))).toBe('["a\\"b\\\\c\\#{d}"]');
    expect(inspect(parseTerm('["\\u0000x"]'))).toBe("[<<0, 120>>]");
    expect(inspect(parseTerm('["\\u00a0\\ufeff"]'))).toBe('["\\u00A0\\uFEFF"]');
    expect(inspect(parseTerm('["é😀\\u007f"]'))).toBe('["é😀\\d"]');
    expect(inspect(true)).toBe("true");
  });

  it("writes plain strings, lists and map keys as Elixir does", () => {
    const plain = fc.string({ unit: fc.constantFrom(..."abc xyz019_-.,:;()[]{}'!?".split("")), maxLength: 15 });
    fc.assert(fc.property(plain, (s) => inspect([s]) === `["${s}"]`));
    const notChars = fc.array(fc.bigInt({ min: 200n, max: 10n ** 12n }), { minLength: 1, maxLength: 50 });
    fc.assert(fc.property(notChars, (ns) => inspect(ns) === `[${ns.join(", ")}]`));
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ unit: "grapheme-ascii", maxLength: 4 }).filter((k) => /^[a-z0-9 ]*$/.test(k)), { minLength: 1, maxLength: 10 }), (keys) => {
        const o = Object.create(null) as Record<string, Term>;
        keys.forEach((k, i) => (o[k] = BigInt(i)));
        const sorted = [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        return inspect(o) === `%{${sorted.map((k) => `"${k}" => ${keys.indexOf(k)}`).join(", ")}}`;
      }),
    );
  });

  it("shows at most 50 elements of a list, a map or a binary", () => {
    const list = Array.from({ length: 60 }, (_, i) => BigInt(1000 + i));
    expect(inspect(list)).toBe(`[${list.slice(0, 50).join(", ")}, ...]`);
    expect(inspect(list.slice(0, 50))).toBe(`[${list.slice(0, 50).join(", ")}]`);
    expect(inspect(`\u0000${"a".repeat(59)}`)).toBe(`<<0, ${Array(49).fill("97").join(", ")}, ...>>`);
  });
});

describe("x, etrim, bullets, or (§6.3–§6.5)", () => {
  it("x collapses ASCII whitespace runs without trimming and inspects other values", () => {
    expect(excerptOf("a\n\tb  c")).toBe("a b c");
    expect(excerptOf(" a ")).toBe(" a ");
    expect(excerptOf(null)).toBe("nil");
    expect(excerptOf("a\u00a0 b")).toBe("a\u00a0 b");
    expect(excerptOf("a".repeat(481))).toBe(`${"a".repeat(480)}\n…[truncated, showing up to 480 of 481 bytes]`);
  });

  it("etrim removes Unicode White_Space at both ends, U+0085 included, U+FEFF kept", () => {
    expect(etrim("\u0085\u00a0\u3000 x y\t\u2028\u205f")).toBe("x y");
    expect(etrim("\ufeffx\ufeff")).toBe("\ufeffx\ufeff");
    fc.assert(fc.property(fc.string(), (s) => etrim(etrim(s)) === etrim(s) && s.includes(etrim(s))));
  });

  it("bullets follows the specification's table", () => {
    expect(bullets(undefined)).toBe("- none");
    expect(bullets(null)).toBe("- none");
    expect(bullets(false)).toBe("- none");
    expect(bullets(parseTerm("[]"))).toBe("- none");
    expect(bullets(parseTerm("{}"))).toBe("");
    expect(bullets("text")).toBe("- none");
    expect(bullets(parseTerm('[null,5,true,1.0,["a","b"],"  p  "]'))).toBe("- \n- 5\n- true\n- 1.0\n- ab\n-   p  ");
    expect(bullets(Array.from({ length: 25 }, (_, i) => `f${i}`)).split("\n")).toHaveLength(20);
  });

  it("or takes the first value present and neither null nor false", () => {
    expect(orElse(undefined, null, false, "", "b")).toBe("");
    expect(orElse(null, 0n, 1n)).toBe(0n);
    expect(orElse(undefined)).toBeUndefined();
  });
});

describe("call-id order (§6.6)", () => {
  const rank = (v: Term) =>
    typeof v === "bigint" || typeof v === "number" ? 0 : v === false ? 1 : v === null ? 2 : v === true ? 3 : typeof v === "string" ? 6 : Array.isArray(v) ? 5 : 4;

  it("puts numbers, then false, null, true, then objects, arrays and strings", () => {
    fc.assert(
      fc.property(term, term, (a, b) => {
        const c = Math.sign(compareTerms(a, b));
        expect(Math.sign(compareTerms(b, a))).toBe(-c || 0);
        if (rank(a) !== rank(b)) expect(c).toBe(Math.sign(rank(a) - rank(b)));
        if (typeof a === "string" && typeof b === "string") expect(c).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
        if (typeof a === "bigint" && typeof b === "bigint") expect(c).toBe(a < b ? -1 : a > b ? 1 : 0);
        // By value: where doubles tell two numbers apart, the order is theirs.
        else if (rank(a) === 0 && rank(b) === 0 && Number(a) !== Number(b)) expect(c).toBe(Math.sign(Number(a) - Number(b)));
      }),
      { numRuns: 1000 },
    );
  });

  it("is a total order on any three values", () => {
    fc.assert(
      fc.property(term, term, term, (a, b, c) => {
        if (compareTerms(a, b) <= 0 && compareTerms(b, c) <= 0) expect(compareTerms(a, c)).toBeLessThanOrEqual(0);
      }),
    );
  });

  it("compares an integer and a float by value, exactly", () => {
    expect(compareTerms(2n ** 60n, 2 ** 60)).toBe(0);
    expect(compareTerms(2n ** 60n + 1n, 2 ** 60)).toBeGreaterThan(0);
    expect(compareTerms(1n, 1.5)).toBeLessThan(0);
    expect(compareTerms(-1n, -1.5)).toBeGreaterThan(0);
  });

  it("compares strings by UTF-8 bytes, not UTF-16 units", () => {
    expect(compareUtf8("\uffff", "😀")).toBeLessThan(0);
    expect("\uffff" < "😀").toBe(false);
  });
});

describe("parseTerm (Jason's decoding)", () => {
  it("gives what JSON.parse gives, integers as bigints", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(asJs(parseTerm(JSON.stringify(v)))).toEqual(JSON.parse(JSON.stringify(v)));
      }),
    );
  });

  it("keeps 1 and 1.0 apart, and big integers exact", () => {
    expect(parseTerm("1")).toBe(1n);
    expect(parseTerm("1.0")).toBe(1);
    expect(parseTerm("1e2")).toBe(100);
    expect(parseTerm("123456789012345678901")).toBe(123456789012345678901n);
    expect(parseTerm(' { "a" : [ 1 , "x\\"y" ] , "a" : 2 } ')).toEqual(Object.assign(Object.create(null), { a: 2n }));
    expect(termOfJs({ a: 1, b: 1.5 })).toEqual(Object.assign(Object.create(null), { a: 1n, b: 1.5 }));
  });
});
