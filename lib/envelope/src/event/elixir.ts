// context-and-compaction.md §6: JSON values as Pixir (Elixir, Jason) holds them, and the text forms
// Elixir gives them. The provider fold, compaction and branch summaries render values through these
// helpers only, so the model reads the same text pixir shows.
//
// A Term is a JSON value as Jason decodes it: an integer literal is an integer of any size (a bigint
// here), any other number is a float (a JavaScript number). So `1` and `1.0` stay different values.
import { truncate } from "./text.js";

export type Term = null | boolean | string | bigint | number | Term[] | TermObject;
/** A JSON object; made with a null prototype, so every key, "__proto__" included, is an own key. */
export interface TermObject {
  [key: string]: Term;
}

export const isTermObject = (v: unknown): v is TermObject => typeof v === "object" && v !== null && !Array.isArray(v);
/** An integer in Jason's sense (never a float, even an integral one). */
export const isInteger = (v: unknown): v is bigint => typeof v === "bigint";
export function termObject(): TermObject {
  return Object.create(null) as TermObject;
}

export const hasKey = (o: TermObject, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** `o[key]` when `o` is an object holding that key, else undefined (Elixir's `Map.get/2` giving nil). */
export function member(o: unknown, key: string): Term | undefined {
  return isTermObject(o) && hasKey(o, key) ? o[key] : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Decoding

/** Jason's decoding of a JSON text that is known to be valid (a Log line already parsed). */
export function parseTerm(text: string): Term {
  const p = new TermParser(text);
  const v = p.value();
  p.space();
  if (p.i !== text.length) throw new SyntaxError("unexpected text after a JSON value");
  return v;
}

/**
 * A value JSON.parse made, as a Term: an integral number becomes an integer. Only for values whose JSON
 * text is gone; it cannot tell `1.0` from `1`.
 */
export function termOfJs(v: unknown): Term {
  if (v === null || v === undefined) return null;
  switch (typeof v) {
    case "string":
    case "boolean":
    case "bigint":
      return v;
    case "number":
      return Number.isInteger(v) && Math.abs(v) <= Number.MAX_SAFE_INTEGER ? BigInt(v) : v;
    case "object": {
      if (Array.isArray(v)) return v.map(termOfJs);
      // As JSON.stringify sees it (a ToolCallList gives its records).
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === "function") return termOfJs(toJSON.call(v));
      const out = termObject();
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = termOfJs(x);
      return out;
    }
    default:
      return null;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

class TermParser {
  i = 0;
  constructor(private readonly s: string) {}

  space(): void {
    const s = this.s;
    while (this.i < s.length && isSpace(s.charCodeAt(this.i))) this.i++;
  }

  value(): Term {
    this.space();
    const s = this.s;
    const c = s.charCodeAt(this.i);
    if (c === 0x22) return this.string();
    if (c === 0x7b) return this.object();
    if (c === 0x5b) return this.array();
    if (s.startsWith("true", this.i)) return this.literal(4, true);
    if (s.startsWith("false", this.i)) return this.literal(5, false);
    if (s.startsWith("null", this.i)) return this.literal(4, null);
    return this.number();
  }

  private literal(length: number, v: Term): Term {
    this.i += length;
    return v;
  }

  private number(): Term {
    const s = this.s;
    const start = this.i;
    let float = false;
    for (; this.i < s.length; this.i++) {
      const c = s.charCodeAt(this.i);
      if (c === 0x2e || c === 0x65 || c === 0x45) float = true;
      else if (!((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b)) break;
    }
    const text = s.slice(start, this.i);
    if (text === "" || text === "-") throw new SyntaxError("invalid JSON number");
    return float ? Number(text) : BigInt(text);
  }

  /** The next backslash at or after the string being read (-1: none left), found once and reused. */
  private slash = -2;

  private string(): string {
    const s = this.s;
    const start = this.i;
    const close = s.indexOf('"', start + 1);
    if (this.slash !== -1 && this.slash <= start) this.slash = s.indexOf("\\", start + 1);
    const slash = this.slash;
    if (close < 0) throw new SyntaxError("unterminated JSON string");
    if (slash < 0 || slash > close) {
      this.i = close + 1;
      return s.slice(start + 1, close);
    }
    let j = slash;
    for (;;) {
      const c = s.charCodeAt(j);
      if (c === 0x5c) j += 2;
      else if (c === 0x22) break;
      else if (j >= s.length) throw new SyntaxError("unterminated JSON string");
      else j++;
    }
    this.i = j + 1;
    return JSON.parse(s.slice(start, j + 1)) as string;
  }

  private array(): Term[] {
    this.i++;
    const out: Term[] = [];
    this.space();
    if (this.s.charCodeAt(this.i) === 0x5d) {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value());
      this.space();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x5d) return out;
      if (c !== 0x2c) throw new SyntaxError("invalid JSON array");
    }
  }

  private object(): TermObject {
    this.i++;
    const out = termObject();
    this.space();
    if (this.s.charCodeAt(this.i) === 0x7d) {
      this.i++;
      return out;
    }
    for (;;) {
      this.space();
      if (this.s.charCodeAt(this.i) !== 0x22) throw new SyntaxError("invalid JSON object key");
      const key = this.string();
      this.space();
      if (this.s.charCodeAt(this.i++) !== 0x3a) throw new SyntaxError("invalid JSON object");
      // As Jason (maps:from_list), a repeated key keeps its last value.
      out[key] = this.value();
      this.space();
      const c = this.s.charCodeAt(this.i++);
      if (c === 0x7d) return out;
      if (c !== 0x2c) throw new SyntaxError("invalid JSON object");
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Orders

/**
 * UTF-8 byte order of two strings, which is code point order. JavaScript's `<` compares UTF-16 code
 * units, which puts U+E000–U+FFFF after the surrogates of every character above U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return unitRank(x) - unitRank(y);
  }
  return a.length - b.length;
}

/** Code units ranked so that surrogates (characters above U+FFFF) come after U+E000–U+FFFF. */
const unitRank = (c: number): number => (c < 0xd800 ? c : c >= 0xe000 ? c - 0x800 : c + 0x2000);

/** The keys of an object in UTF-8 byte order (§7 D3: at every size). */
export const sortedKeys = (o: TermObject): string[] => Object.keys(o).sort(compareUtf8);

/** Erlang's term order, as `Enum.sort_by` compares call ids (§6.6). */
export function compareTerms(a: Term, b: Term): number {
  const ra = termRank(a);
  const rb = termRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return compareNumbers(a as bigint | number, b as bigint | number);
    case 1:
    case 2:
    case 3:
      return 0;
    case 4: {
      const x = a as TermObject;
      const y = b as TermObject;
      const kx = sortedKeys(x);
      const ky = sortedKeys(y);
      if (kx.length !== ky.length) return kx.length - ky.length;
      for (let i = 0; i < kx.length; i++) {
        const c = compareUtf8(kx[i]!, ky[i]!);
        if (c !== 0) return c;
      }
      for (const k of kx) {
        const c = compareTerms(x[k]!, y[k]!);
        if (c !== 0) return c;
      }
      return 0;
    }
    case 5: {
      const x = a as Term[];
      const y = b as Term[];
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareTerms(x[i]!, y[i]!);
        if (c !== 0) return c;
      }
      return x.length - y.length;
    }
    default:
      return compareUtf8(a as string, b as string);
  }
}

/** number < atom (false < nil < true, by name) < map < list < binary. */
function termRank(v: Term): number {
  if (typeof v === "bigint" || typeof v === "number") return 0;
  if (v === false) return 1;
  if (v === null) return 2;
  if (v === true) return 3;
  if (typeof v === "string") return 6;
  return Array.isArray(v) ? 5 : 4;
}

function compareNumbers(a: bigint | number, b: bigint | number): number {
  if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
  const sign = typeof a === "bigint" ? 1 : -1;
  const int = (typeof a === "bigint" ? a : b) as bigint;
  const f = (typeof a === "bigint" ? b : a) as number;
  if (!Number.isFinite(f)) return f > 0 ? -sign : sign;
  // Exact: an integer against the integer part of the float.
  const floor = BigInt(Math.floor(f));
  if (int <= floor) return int === floor && Number.isInteger(f) ? 0 : -sign;
  return sign;
}

// ---------------------------------------------------------------------------------------------------
// §6.7 jason and float text

/**
 * §6.7: Erlang's `float_to_binary(F, [:short])`: the shortest digits that read back as F, in plain
 * decimal, or in scientific notation when that is strictly shorter or |F| ≥ 2^53.
 */
export function floatText(f: number): string {
  if (f === 0) return Object.is(f, -0) ? "-0.0" : "0.0";
  // Not a double Jason can decode (1e400); written so JSON readers see the same overflow.
  if (!Number.isFinite(f)) return f > 0 ? "1.0e999" : "-1.0e999";
  const sign = f < 0 ? "-" : "";
  const [mantissa, exponent] = Math.abs(f).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const exp = Number(exponent);
  const scientific = `${digits[0]}.${digits.length > 1 ? digits.slice(1) : "0"}e${exp}`;
  if (Math.abs(f) >= 2 ** 53) return sign + scientific;
  let plain: string;
  if (exp < 0) plain = `0.${"0".repeat(-exp - 1)}${digits}`;
  else if (digits.length <= exp + 1) plain = `${digits}${"0".repeat(exp + 1 - digits.length)}.0`;
  else plain = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  return sign + (scientific.length < plain.length ? scientific : plain);
}

// Characters Jason escapes: the quote, the backslash, and everything below U+0020. A lone surrogate
// cannot be written as UTF-8 at all (Jason never meets one), so it is escaped too.
const JASON_ESCAPES = /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const JASON_SHORT: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r" };

const hex4 = (c: number): string => c.toString(16).toUpperCase().padStart(4, "0");
const jasonEscape = (c: string): string => JASON_SHORT[c] ?? `\\u${hex4(c.charCodeAt(0))}`;
const jasonString = (s: string): string => `"${s.replace(JASON_ESCAPES, jasonEscape)}"`;

/** The text Jason and `to_string` both give integers, floats (§6.7) and booleans; undefined for others. */
function scalarText(v: Term): string | undefined {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") return floatText(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  return undefined;
}

/** §6.7: Jason's compact encoding, keys in UTF-8 byte order at every depth. */
export function jason(v: Term): string {
  if (typeof v === "string") return jasonString(v);
  if (v === null) return "null";
  if (Array.isArray(v)) return `[${v.map(jason).join(",")}]`;
  if (isTermObject(v)) return `{${sortedKeys(v).map((k) => `${jasonString(k)}:${jason(v[k]!)}`).join(",")}}`;
  return scalarText(v)!;
}

// ---------------------------------------------------------------------------------------------------
// §6.1 str

/** §6.1: Elixir's `to_string/1` (string interpolation). A value Elixir refuses is written with jason (§7 D4). */
export function str(v: Term | undefined): string {
  if (typeof v === "string") return v;
  if (v === undefined || v === null) return "";
  if (Array.isArray(v)) return charData(v) ?? jason(v);
  if (isTermObject(v)) return jason(v);
  return scalarText(v)!;
}

/** Elixir chardata (`List.to_string/1`): strings, Unicode scalar values and nested lists; else null. */
function charData(list: Term[]): string | null {
  let out = "";
  for (const item of list) {
    if (typeof item === "string") out += item;
    else if (typeof item === "bigint") {
      if (item < 0n || item > 0x10ffffn || (item >= 0xd800n && item <= 0xdfffn)) return null;
      out += String.fromCodePoint(Number(item));
    } else if (Array.isArray(item)) {
      const inner = charData(item);
      if (inner === null) return null;
      out += inner;
    } else return null;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// §6.2 inspect

/** Elixir's default `:limit` (elements of a list, map or binary) and `:printable_limit` (characters). */
const INSPECT_LIMIT = 50;
const PRINTABLE_LIMIT = 4096;

const CONTROL_ESCAPES: Record<number, string> = { 0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0a: "\\n", 0x0b: "\\v", 0x0c: "\\f", 0x0d: "\\r", 0x1b: "\\e", 0x7f: "\\d" };

/** Characters Elixir ≥ 1.18 writes as `\uXXXX` although they are printable (invisible or bidi marks). */
function isUnicodeEscaped(c: number): boolean {
  return (
    c === 0xa0 ||
    c === 0x34f ||
    c === 0x61c ||
    (c >= 0x2000 && c <= 0x200f) ||
    (c >= 0x2028 && c <= 0x202e) ||
    (c >= 0x205f && c <= 0x2064) ||
    (c >= 0x2066 && c <= 0x2069) ||
    c === 0xfeff ||
    (c >= 0xfff9 && c <= 0xfffc)
  );
}

/** `String.printable?/1`'s characters. */
function isPrintable(c: number): boolean {
  return (
    (c >= 0x20 && c <= 0x7e) ||
    CONTROL_ESCAPES[c] !== undefined ||
    (c >= 0xa0 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd) ||
    (c >= 0x10000 && c <= 0x10ffff)
  );
}

/** The body of a double-quoted Elixir literal for these code points (`Code.Identifier.escape/2`). */
function escapeQuoted(codePoints: readonly number[]): string {
  let out = "";
  for (let i = 0; i < codePoints.length; i++) {
    const c = codePoints[i]!;
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x23 && codePoints[i + 1] === 0x7b) out += "\\#";
    else if (CONTROL_ESCAPES[c] !== undefined) out += CONTROL_ESCAPES[c];
    else if (isUnicodeEscaped(c)) out += `\\u${hex4(c)}`;
    else out += String.fromCodePoint(c);
  }
  return out;
}

function codePointsOf(s: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.codePointAt(i)!;
    out.push(c);
    if (c > 0xffff) i++;
  }
  return out;
}

function inspectString(s: string, limit: number): string {
  const cps = codePointsOf(s);
  const head = cps.length > PRINTABLE_LIMIT ? cps.slice(0, PRINTABLE_LIMIT) : cps;
  // A lone surrogate is not a character at all: like any unprintable one, the string shows as bytes.
  if (head.every((c) => isPrintable(c) && (c < 0xd800 || c > 0xdfff))) {
    return `"${escapeQuoted(head)}"${cps.length > head.length ? " <> ..." : ""}`;
  }
  const bytes = Buffer.from(s, "utf8");
  const shown: string[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (i === limit) {
      shown.push("...");
      break;
    }
    shown.push(String(bytes[i]));
  }
  return `<<${shown.join(", ")}>>`;
}

/** `List.ascii_printable?/2`: every element a character Elixir writes in a `~c"…"` literal. */
function isCharlist(list: readonly Term[]): boolean {
  const n = Math.min(list.length, PRINTABLE_LIMIT);
  for (let i = 0; i < n; i++) {
    const c = list[i];
    if (typeof c !== "bigint" || !((c >= 7n && c <= 13n) || c === 27n || (c >= 32n && c <= 126n))) return false;
  }
  return true;
}

/** Elixir's `container_doc`: each element gets the limit left after it; at 0, `...` ends the list. */
function container(open: string, items: readonly unknown[], close: string, limit: number, each: (item: never, limit: number) => string): string {
  const docs: string[] = [];
  let left = limit;
  for (const item of items) {
    if (left === 0) {
      docs.push("...");
      break;
    }
    left--;
    docs.push(each(item as never, left));
  }
  return `${open}${docs.join(", ")}${close}`;
}

function inspectWithLimit(v: Term, limit: number): string {
  switch (typeof v) {
    case "string":
      return inspectString(v, limit);
    case "bigint":
      return v.toString();
    case "number":
      return Number.isInteger(v) && Math.abs(v) >= 1 && Math.abs(v) < 1e16 ? `${BigInt(v)}.0` : floatText(v);
    case "boolean":
      return v ? "true" : "false";
    default:
      if (v === null) return "nil";
      if (Array.isArray(v)) {
        if (v.length === 0) return "[]";
        if (isCharlist(v)) {
          const cps = v.map((c) => Number(c as bigint));
          const head = cps.length > PRINTABLE_LIMIT ? cps.slice(0, PRINTABLE_LIMIT) : cps;
          return `~c"${escapeQuoted(head)}"${cps.length > head.length ? " ++ ..." : ""}`;
        }
        return container("[", v, "]", limit, (item: Term, left) => inspectWithLimit(item, left));
      }
      return container("%{", sortedKeys(v), "}", limit, (k: string, left) => `${inspectWithLimit(k, left)} => ${inspectWithLimit(v[k]!, left)}`);
  }
}

/** §6.2: Elixir's `Kernel.inspect/1` with the default options (maps in key byte order, §7 D3). */
export function inspect(v: Term): string {
  return inspectWithLimit(v, INSPECT_LIMIT);
}

// ---------------------------------------------------------------------------------------------------
// §6.3 x, §6.4 etrim, §6.5 bullets, or

const ASCII_WHITESPACE_RUN = /[ \t\n\v\f\r]+/g;
export const EXCERPT_MAX_BYTES = 480;

/** §6.3 `x(v)`: the excerpt text of a value: inspect unless a string, whitespace runs as one space, 480 bytes. */
export function excerptOf(v: Term | undefined): string {
  const s = typeof v === "string" ? v : inspect(v ?? null);
  return truncate(s.replace(ASCII_WHITESPACE_RUN, " "), EXCERPT_MAX_BYTES);
}

const WHITE_SPACE = "\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const ETRIM = new RegExp(`^[${WHITE_SPACE}]+|[${WHITE_SPACE}]+$`, "g");

/** §6.4: Elixir's `String.trim/1` (Unicode White_Space at both ends; U+FEFF is not one). */
export function etrim(s: string): string {
  return s.replace(ETRIM, "");
}

/** `a || b || …` in Elixir: the first value present and neither null nor false. */
export function orElse(...values: Array<Term | undefined>): Term | undefined {
  for (const v of values) if (v !== undefined && v !== null && v !== false) return v;
  return undefined;
}

export const RENDER_BULLETS_LIMIT = 20;

/** §6.5: a list as `- item` lines (the first 20); a missing or empty list is `- none`. */
export function bullets(v: Term | undefined): string {
  if (Array.isArray(v)) {
    if (v.length === 0) return "- none";
    return v
      .slice(0, RENDER_BULLETS_LIMIT)
      .map((item) => `- ${str(item)}`)
      .join("\n");
  }
  // Enum.take of an empty map is [], so its section is empty; anything else makes Pixir raise (§7 D4).
  if (isTermObject(v) && Object.keys(v).length === 0) return "";
  return "- none";
}
