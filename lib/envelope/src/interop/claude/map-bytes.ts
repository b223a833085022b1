// Twin of recordDrafts and usageDraft (map.ts) with JSON.stringify of each draft's `data`, for a record
// whose line is canonical (claude-interop.md §2.3), read into a JsonTape (fast/json-tape.ts): each Event's
// data is written from the line's own bytes, since in a canonical line every value's text is
// JSON.stringify's text of that value and holds no lone surrogate (so wellFormed leaves it as it is).
// Nothing of the record is parsed. lib/envelope/test/interop/claude-bytes.test.ts holds the two to the
// same Events on generated and real records. A record this twin does not map (a compact summary, whose
// data the planner completes) gets null, and the plain rule maps it.
import type { CanonicalType } from "../../event/vocabulary.js";
import { J_ARRAY, J_NULL, J_NUMBER, J_OBJECT, J_STRING, J_TRUE, memberOf, numberOf, stringOf, type JsonTape } from "../../fast/json-tape.js";
import type { MapContext } from "./map.js";
import { BufferBytes, type SourceBytes } from "./source-bytes.js";
import { carriesCompactSummary } from "./transcript.js";
import { K_MESSAGE, K_CONTENT, K_TYPE, K_TEXT, K_ID, K_MODEL, K_NAME, K_INPUT, K_TOOL_USE_ID, K_IS_ERROR, K_IS_META, K_COMPACT, K_PARENT, K_API_ERROR, K_STOP, K_USAGE, K_REQUEST, K_INPUT_TOKENS, K_OUTPUT_TOKENS, K_CACHE_READ, K_CACHE_WRITE, L_TEXT, L_IMAGE, L_TOOL_RESULT, L_TOOL_USE, L_SERVER_TOOL_USE, L_THINKING, L_REDACTED, L_SYNTHETIC } from "./record-keys.js";

/**
 * A text made of literal strings and byte ranges of one source file: an Event's `data` written without
 * copying the record's bytes until they go to the Log. The ranges are file offsets, read from `src` (the
 * file's buffer, or the file itself a window at a time, source-bytes.ts) when the text is written.
 */
export class Spliced {
  /** Literal strings, and ranges as two numbers (start, end): file offsets. */
  parts: Array<string | number> = [];
  readonly src: SourceBytes;
  constructor(
    src: SourceBytes | Buffer,
    /** The file offset of the buffer the ranges given to range() index. */
    private readonly base = 0,
  ) {
    this.src = Buffer.isBuffer(src) ? new BufferBytes(src) : src;
  }
  lit(s: string): this {
    this.parts.push(s);
    return this;
  }
  range(s: number, e: number): this {
    this.parts.push(this.base + s, this.base + e);
    return this;
  }
  append(other: Spliced): this {
    for (const p of other.parts) this.parts.push(p);
    return this;
  }
  /** The text is complete: its parts are kept in an array of their own length (a growing array has room to spare). */
  seal(): this {
    this.parts = this.parts.slice();
    return this;
  }
  /**
   * Write the text's UTF-8 bytes to `out` at `at`, which has room for maxBytes; returns where they end.
   */
  writeInto(out: Buffer, at: number): number {
    const p = this.parts;
    const src = this.src;
    for (let i = 0; i < p.length; i++) {
      const x = p[i]!;
      if (typeof x === "string") at += out.write(x, at, "utf8");
      else {
        const end = p[++i] as number;
        const b = src.hold(x, end);
        const from = x - src.base;
        const to = end - src.base;
        // A short range is cheaper copied here than through Buffer#copy's checks.
        if (to - from <= SHORT_RANGE) for (let k = from; k < to; k++) out[at++] = b[k]!;
        else at += b.copy(out, at, from, to);
      }
    }
    return at;
  }
  /** At most this many UTF-8 bytes (a string's UTF-16 units count three each). */
  get maxBytes(): number {
    let n = 0;
    const p = this.parts;
    for (let i = 0; i < p.length; i++) {
      const x = p[i]!;
      n += typeof x === "string" ? x.length * 3 : (p[++i] as number) - x;
    }
    return n;
  }
  get byteLength(): number {
    let n = 0;
    const p = this.parts;
    for (let i = 0; i < p.length; i++) {
      const x = p[i]!;
      n += typeof x === "string" ? Buffer.byteLength(x, "utf8") : (p[++i] as number) - x;
    }
    return n;
  }
  toString(): string {
    let out = "";
    const p = this.parts;
    for (let i = 0; i < p.length; i++) {
      const x = p[i]!;
      if (typeof x === "string") out += x;
      else {
        const end = p[++i] as number;
        out += this.src.hold(x, end).toString("utf8", x - this.src.base, end - this.src.base);
      }
    }
    return out;
  }
}

const SHORT_RANGE = 32;

/** An Event of a record, its `data` members written as text (without the braces and `claude`). */
export interface TextDraft {
  type: CanonicalType;
  part: string;
  fields: Spliced;
}


/** The mapper's view of one line: its tape and buffer. */
class Reader {
  constructor(
    readonly t: JsonTape,
    readonly b: Buffer,
    /** Where `b` lies in the source file, for the Spliced texts made of its ranges. */
    private readonly src: SourceBytes,
    private readonly base: number,
  ) {}
  /** A new text whose ranges are places in `b`. */
  out(): Spliced {
    return new Spliced(this.src, this.base);
  }
  member(node: number, key: Uint8Array): number {
    return node >= 0 && this.t.kind[node] === J_OBJECT ? memberOf(this.t, this.b, node, key) : -1;
  }
  kind(node: number): number {
    return node >= 0 ? this.t.kind[node]! : 0;
  }
  isTrue(node: number): boolean {
    return this.kind(node) === J_TRUE;
  }
  /** `node` is a string whose text is `lit` (plain ASCII, compared as bytes). */
  is(node: number, lit: Uint8Array): boolean {
    if (this.kind(node) !== J_STRING) return false;
    const s = this.t.start[node]! + 1;
    if (this.t.end[node]! - 1 - s !== lit.length) return false;
    for (let i = 0; i < lit.length; i++) if (this.b[s + i] !== lit[i]) return false;
    return true;
  }
  /** Append the JSON text of `node` (as JSON.stringify writes its value). */
  value(out: Spliced, node: number): Spliced {
    return out.range(this.t.start[node]!, this.t.end[node]!);
  }
  /** Append the string `node`, or `""` when it is not a string (`typeof x === "string" ? wellFormed(x) : ""`). */
  stringOr(out: Spliced, node: number, otherwise: string): Spliced {
    return this.kind(node) === J_STRING ? this.value(out, node) : out.lit(otherwise);
  }
  children(node: number): number[] {
    const out: number[] = [];
    for (let c = this.t.firstChild[node]!; c >= 0; c = this.t.nextSibling[c]!) out.push(c);
    return out;
  }
  /** blocksText: the `text` blocks of `blocks` joined with `\n`, as a JSON string. */
  blocksText(out: Spliced, blocks: number[]): Spliced {
    const texts: number[] = [];
    for (const blk of blocks) {
      if (this.kind(blk) !== J_OBJECT || !this.is(this.member(blk, K_TYPE), L_TEXT)) continue;
      const text = this.member(blk, K_TEXT);
      if (this.kind(text) === J_STRING) texts.push(text);
    }
    if (texts.length === 0) return out.lit('""');
    if (texts.length === 1) return this.value(out, texts[0]!);
    out.lit('"');
    texts.forEach((text, i) => {
      if (i > 0) out.lit("\\n");
      out.range(this.t.start[text]! + 1, this.t.end[text]! - 1);
    });
    return out.lit('"');
  }
  /** The text of a string `node`, or of the first `text` block of an array (`""` when that is no string). */
  firstText(node: number): string {
    const k = this.kind(node);
    if (k === J_STRING) return stringOf(this.t, this.b, node);
    const block = k === J_ARRAY ? this.children(node).find((c) => this.kind(c) === J_OBJECT && this.is(this.member(c, K_TYPE), L_TEXT)) : undefined;
    const text = block === undefined ? -1 : this.member(block, K_TEXT);
    return this.kind(text) === J_STRING ? stringOf(this.t, this.b, text) : "";
  }
  /** contentText / resultOutput: a string as it is, an array's text blocks, else `""`. */
  contentText(out: Spliced, node: number): Spliced {
    const k = this.kind(node);
    if (k === J_STRING) return this.value(out, node);
    if (k === J_ARRAY) return this.blocksText(out, this.children(node));
    return out.lit('""');
  }
  str(node: number): string | null {
    return this.kind(node) === J_STRING ? stringOf(this.t, this.b, node) : null;
  }
  /** count(): a number as it is, else 0 (a canonical number is finite). */
  count(node: number): number {
    return this.kind(node) === J_NUMBER ? numberOf(this.t, this.b, node) : 0;
  }
}

/** §2.1 for a path `user` record (map.ts userDrafts); null for a compact summary. */
function userDrafts(r: Reader, ctx: MapContext): TextDraft[] | null {
  const msg = r.member(0, K_MESSAGE);
  const content = r.member(msg, K_CONTENT);
  if (r.isTrue(r.member(0, K_COMPACT))) return null;
  // ≤ 1.0.x: a root whose words are a compaction summary (the rule is transcript.ts's, given what it reads).
  if (r.kind(r.member(0, K_PARENT)) === J_NULL && carriesCompactSummary({ type: "user", parentUuid: null, message: { content: r.firstText(content) } })) return null;
  const meta = r.isTrue(r.member(0, K_IS_META)) ? ',"meta":true' : "";
  const ck = r.kind(content);
  const fields = () => r.out();
  if (ck === J_STRING) return [{ type: "user_message", part: "text", fields: r.value(fields().lit('"text":'), content).lit(meta) }];
  const blocks = ck === J_ARRAY ? r.children(content) : [];
  if (blocks.length === 0) return [{ type: "user_message", part: "msg", fields: fields().lit('"text":""') }];
  const out: TextDraft[] = [];
  let run: number[] = [];
  let first = -1;
  const flush = () => {
    if (run.length === 0) return;
    let images = 0;
    for (const blk of run) if (r.kind(blk) === J_OBJECT && r.is(r.member(blk, K_TYPE), L_IMAGE)) images++;
    const f = r.blocksText(fields().lit('"text":'), run);
    if (images > 0) f.lit(`,"images":${images}`);
    out.push({ type: "user_message", part: `b${first}`, fields: f.lit(meta) });
    run = [];
  };
  blocks.forEach((blk, i) => {
    if (r.kind(blk) === J_OBJECT && r.is(r.member(blk, K_TYPE), L_TOOL_RESULT)) {
      flush();
      const id = r.member(blk, K_TOOL_USE_ID);
      const name = ctx.toolName(r.str(id) ?? "");
      const f = r.stringOr(fields().lit('"call_id":'), id, '""');
      if (name !== null) f.lit(`,"tool_name":${JSON.stringify(name)}`);
      f.lit(`,"ok":${r.isTrue(r.member(blk, K_IS_ERROR)) ? "false" : "true"},"output":`);
      out.push({ type: "tool_result", part: `b${i}`, fields: r.contentText(f, r.member(blk, K_CONTENT)) });
    } else {
      if (run.length === 0) first = i;
      run.push(blk);
    }
  });
  flush();
  return out;
}

/** §2.1 for a path `assistant` record (map.ts assistantDrafts). */
function assistantDrafts(r: Reader): TextDraft[] {
  const msg = r.member(0, K_MESSAGE);
  const common = r.out().lit('"message_id":');
  r.stringOr(common, r.member(msg, K_ID), "null").lit(',"model":');
  r.stringOr(common, r.member(msg, K_MODEL), "null");
  const stopNode = r.member(msg, K_STOP);
  const tail = r.out();
  if (stopNode >= 0 && r.kind(stopNode) !== J_NULL) r.value(tail.lit(',"stop_reason":'), stopNode);
  if (r.isTrue(r.member(0, K_API_ERROR))) tail.lit(',"api_error":true');
  const content = r.member(msg, K_CONTENT);
  const ck = r.kind(content);
  const blocks = ck === J_ARRAY ? r.children(content) : [];
  const start = () => r.out().append(common);
  if (blocks.length === 0) {
    const f = r.stringOr(start().lit(',"text":'), ck === J_STRING ? content : -1, '""');
    return [{ type: "assistant_message", part: "msg", fields: f.append(tail) }];
  }
  return blocks.map((blk, i): TextDraft => {
    const part = `b${i}`;
    const isObject = r.kind(blk) === J_OBJECT;
    const t = isObject ? r.member(blk, K_TYPE) : -1;
    if (isObject && (r.is(t, L_THINKING) || r.is(t, L_REDACTED))) return { type: "reasoning", part, fields: r.value(start().lit(',"item":'), blk).lit(',"dialect":"claude"') };
    if (isObject && r.is(t, L_TEXT)) return { type: "assistant_message", part, fields: r.stringOr(start().lit(',"text":'), r.member(blk, K_TEXT), '""').append(tail) };
    const server = r.is(t, L_SERVER_TOOL_USE);
    if (isObject && (server || r.is(t, L_TOOL_USE))) {
      const f = r.stringOr(start().lit(',"call_id":'), r.member(blk, K_ID), '""').lit(',"name":');
      r.stringOr(f, r.member(blk, K_NAME), '""').lit(',"args":');
      const input = r.member(blk, K_INPUT);
      if (r.kind(input) === J_OBJECT) r.value(f, input);
      else f.lit("{}");
      if (server) f.lit(',"server":true');
      return { type: "tool_call", part, fields: f };
    }
    const typeName = isObject ? r.str(t) : null;
    if (isObject && typeName !== null && typeName.endsWith("_tool_result")) {
      const f = r.stringOr(start().lit(',"call_id":'), r.member(blk, K_TOOL_USE_ID), '""').lit(',"ok":true,"output":"","server":true');
      return { type: "tool_result", part, fields: f };
    }
    const f = start().lit(',"text":"","block_type":');
    if (typeName !== null) r.value(f, t);
    else f.lit("null");
    return { type: "assistant_message", part, fields: f.append(tail) };
  });
}

/** §2.2 (map.ts usageDraft): the provider_usage of an assistant message record, or null. */
function usageDraft(r: Reader): TextDraft | null {
  const msg = r.member(0, K_MESSAGE);
  if (r.kind(msg) !== J_OBJECT) return null;
  const usage = r.member(msg, K_USAGE);
  const model = r.member(msg, K_MODEL);
  if (r.kind(usage) !== J_OBJECT || r.is(model, L_SYNTHETIC)) return null;
  const input = r.count(r.member(usage, K_INPUT_TOKENS));
  const output = r.count(r.member(usage, K_OUTPUT_TOKENS));
  const read = r.count(r.member(usage, K_CACHE_READ));
  const write = r.count(r.member(usage, K_CACHE_WRITE));
  const f = r.stringOr(r.out().lit('"provider":"anthropic","model":'), model, "null").lit(',"message_id":');
  r.stringOr(f, r.member(msg, K_ID), "null").lit(',"request_id":');
  r.stringOr(f, r.member(0, K_REQUEST), "null");
  f.lit(`,"input":${JSON.stringify(input)},"output":${JSON.stringify(output)},"cache_read":${JSON.stringify(read)},"cache_write":${JSON.stringify(write)},"total_tokens":${JSON.stringify(input + output + read + write)}`);
  return { type: "provider_usage", part: "usage", fields: f };
}

/**
 * The Events of a record whose canonical line `b` is read into `t` (recordDrafts, then usageDraft when
 * `withUsage`: the planner decides, §2.2), as text. `path`: a path record (§2.1); `subtype` its §2.1
 * subtype. Null when the plain rule must map it.
 */
export function draftTexts(t: JsonTape, b: Buffer, type: string, subtype: string | null, path: boolean, ctx: MapContext, withUsage: boolean, src: SourceBytes = new BufferBytes(b), base = 0): TextDraft[] | null {
  const r = new Reader(t, b, src, base);
  let drafts: TextDraft[] | null;
  if (path && type === "user") drafts = userDrafts(r, ctx);
  else if (path && type === "assistant") drafts = assistantDrafts(r);
  else drafts = [{ type: "workflow_event", part: "rec", fields: r.out().lit(`"event":"claude_record","record_type":${JSON.stringify(type)},"subtype":${subtype === null ? "null" : JSON.stringify(subtype)}`) }];
  if (drafts !== null && withUsage) {
    const u = usageDraft(r);
    if (u !== null) drafts.push(u);
  }
  return drafts;
}
