// claude-interop.md §1–§3.3: reading a Claude Code transcript and its tree rules (message records,
// bridged parents, walks, the parallel-call recovery, the leaf Claude resumes). Pure functions over
// the lines of one file. The oracle tests do not use them: test/support/claude-oracle.ts is written apart.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { deepWellFormed, isJsonObject, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { classifyUserText } from "../../event/injected.js";
import { MAX_NESTING_DEPTH, nestsDeeperThan } from "../../event/nesting.js";
import { J_STRING, memberOf, readJsonLine, stringOf, type JsonTape } from "../../fast/json-tape.js";
import { FACT_CHAIN, FACT_COMPACT_BOUNDARY, FACT_SIDECHAIN, factsOfTapeInto, factsOfValueInto, interned, NO_TOOL_RESULTS, NO_TOOL_USES, recordTape, type Facts, type FactsSink, type RareFacts, type ToolResultFact, type ToolUseFact } from "./record-facts.js";
import { denseSpan, PlaceIndex, RecordMap, RecordSet, UuidIndex, type ByUuid } from "./record-columns.js";
import { BufferBytes, FileBytes, type SourceBytes } from "./source-bytes.js";
import { packUuid, UUID_WORDS, uuidText } from "./uuid-words.js";

export type LineProblemReason = "invalid_utf8" | "malformed_line" | "invalid_record";

// ignoreBOM keeps a byte-order mark in the text: a line that starts with one is not JSON, so it is a malformed
// line (named, or kept raw under --lenient and given back byte for byte), never a line silently 3 bytes short.
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const SURROGATE_ESCAPE = /\\u[dD][89abcdefABCDEF]/;
const TYPE = Buffer.from("type");

// A record's flags, in one small integer (a large unit holds one record per line, so each field counts).
const CANONICAL = 1;
const DUP = 2;
const MESSAGE = 4;
const KEEP = 8;
const PROBLEM_SHIFT = 4;
const PROBLEM_MASK = 3 << PROBLEM_SHIFT;
const PROBLEMS: Array<LineProblemReason | null> = [null, "invalid_utf8", "malformed_line", "invalid_record"];
// Its facts' flags (record-facts.ts), in the same integer.
const HAS_FACTS = 64;
const FACT_SHIFT = 7;
const CHAIN = FACT_CHAIN << FACT_SHIFT;
const SIDECHAIN = FACT_SIDECHAIN << FACT_SHIFT;
const COMPACT_BOUNDARY = FACT_COMPACT_BOUNDARY << FACT_SHIFT;
// The milliseconds of a `timestamp` kept as a number (ClaudeRecord.keepTime), in the same integer.
const MS_SHIFT = 10;
const MS_MASK = 1023 << MS_SHIFT;
/** Its uuid is kept as four words (uuid-words.ts), not as its string. */
const UUID_PACKED = 1 << 20;
// Its transcript (below 2^9; a larger one is kept in `extra`), in the same integer, below 2^30.
const TRANSCRIPT_SHIFT = 21;
const TRANSCRIPT_MAX = 511;
const TRANSCRIPT_MASK = TRANSCRIPT_MAX << TRANSCRIPT_SHIFT;
/** Seconds a small integer holds (V8's on 64-bit: 31 bits and a sign), so a kept time costs no object. */
const MAX_SECONDS = 2 ** 31 - 1;

/**
 * What a record holds besides its place: its parse and text (kept with `keep`), its bytes when not UTF-8,
 * its rare facts, its tool calls and results (most records have none of these: they hold null).
 */
interface RecordExtra {
  parsed?: JsonObject;
  decoded?: string;
  raw?: Buffer;
  rare?: RareFacts;
  /** A chain record's uuid when it is not in the canonical form (it is then not packed). */
  uuid?: string;
  /** Its transcript when it is above TRANSCRIPT_MAX (its flags then hold that). */
  transcript?: number;
  uses?: OneOrMore<ToolUseFact>;
  results?: OneOrMore<ToolResultFact>;
}

/** One value, or several in an array (the values are never arrays themselves). */
type OneOrMore<V> = V | V[];

/**
 * A record's list of tool calls or results as it keeps it: its one fact (most have one), else the list in
 * an array of its own length (a list grown by push keeps room for 17); each a list, an array and room to
 * spare, was some 150 bytes a record with a tool call on a large unit (docs/performance.md, "Round 12").
 */
const kept = <T>(list: T[]): OneOrMore<T> => (list.length === 1 ? list[0]! : list.slice());
const listOf = <T>(v: OneOrMore<T> | undefined, none: T[]): T[] => (v === undefined ? none : Array.isArray(v) ? v : [v]);

/**
 * One complete, non-blank line of a source file. What planning needs of it is its facts (record-facts.ts
 * Facts), kept as its own fields; the parsed record (`value`) and the line's text are made from its bytes
 * when asked for, and kept only when the file was read with `keep` (a reader that goes back to them often),
 * so a large file is not held twice. Its flags (its own and its facts') are bits of one number, its rare
 * facts and tool facts one object or none: a facts object beside each record cost 96 bytes more a record
 * (docs/performance.md, "Round 5", "Round 11").
 */
export class ClaudeRecord implements Facts, FactsSink<void> {
  type: string | null = null;
  /** Its place among the file's records (0-based; plan columns are indexed by it, record-columns.ts). */
  index = -1;
  /** A chain record's `uuid` in the canonical form, as four words (uuid-words.ts; its flags say so). */
  private u0 = 0;
  private u1 = 0;
  private u2 = 0;
  private u3 = 0;
  /** A chain record's `parentUuid`: the record before it when it is that record's uuid (most are), else its string. */
  private parent: ClaudeRecord | string | null = null;
  /** `timestamp` (below): whole seconds since the epoch (its milliseconds in the flags), or its string. */
  private time: number | string | null = null;
  /** `message.id` when a string. */
  messageId: string | null = null;
  /** `requestId` when a string. */
  requestId: string | null = null;
  private flags: number;
  private extra: RecordExtra | null = null;

  constructor(
    /** Physical line number, 1-based (blank lines count). */
    readonly line: number,
    /** Where the line's bytes are read from (the file's buffer, or the file itself), by file offset. */
    readonly bytes: SourceBytes,
    /** The line's place in the file. */
    readonly start: number,
    readonly end: number,
    keep: boolean,
  ) {
    this.flags = keep ? KEEP : 0;
  }

  private flag(bit: number, on: boolean): void {
    this.flags = on ? this.flags | bit : this.flags & ~bit;
  }

  /** Index of the transcript the record belongs to (0: the main or subagent transcript), in its flags. */
  get transcript(): number {
    const t = (this.flags & TRANSCRIPT_MASK) >> TRANSCRIPT_SHIFT;
    return t === TRANSCRIPT_MAX ? this.extra!.transcript! : t;
  }
  set transcript(t: number) {
    this.flags = (this.flags & ~TRANSCRIPT_MASK) | (Math.min(t, TRANSCRIPT_MAX) << TRANSCRIPT_SHIFT);
    if (t >= TRANSCRIPT_MAX) (this.extra ??= {}).transcript = t;
  }

  get problem(): LineProblemReason | null {
    return PROBLEMS[(this.flags & PROBLEM_MASK) >> PROBLEM_SHIFT]!;
  }
  set problem(p: LineProblemReason | null) {
    this.flags = (this.flags & ~PROBLEM_MASK) | (PROBLEMS.indexOf(p) << PROBLEM_SHIFT);
  }
  /** §2.3: `JSON.stringify(JSON.parse(text)) === text` and no lone surrogate. */
  get canonical(): boolean {
    return (this.flags & CANONICAL) !== 0;
  }
  set canonical(on: boolean) {
    this.flag(CANONICAL, on);
  }
  /** §3.2: a chain record whose uuid occurred on an earlier line of the file. */
  get dup(): boolean {
    return (this.flags & DUP) !== 0;
  }
  set dup(on: boolean) {
    this.flag(DUP, on);
  }
  /** §3.2: a chain record that is neither a duplicate nor `progress`. */
  get message(): boolean {
    return (this.flags & MESSAGE) !== 0;
  }
  set message(on: boolean) {
    this.flag(MESSAGE, on);
  }
  /**
   * A chain record's `uuid` (else null). One kept as words is made again when asked for, the last one
   * made kept (a record's uuid is asked for several times in a row): the 36-character string was 56 bytes
   * of each record of a large unit (docs/performance.md, "Round 12").
   */
  get uuid(): string | null {
    if ((this.flags & UUID_PACKED) === 0) return this.extra?.uuid ?? null;
    if (lastUuidOf !== this) {
      lastUuid = uuidText(this.u0, this.u1, this.u2, this.u3);
      lastUuidOf = this;
    }
    return lastUuid;
  }

  /** A chain record's `parentUuid` (else null). */
  get parentUuid(): string | null {
    const p = this.parent;
    return p === null || typeof p === "string" ? p : p.uuid;
  }

  /** Its parent is `prev`, the record before it: kept as that record, not as a second string of its uuid. */
  chainTo(prev: ClaudeRecord): void {
    this.parent = prev;
  }

  private keepUuid(uuid: string | null): void {
    if (uuid === null) return;
    if (!packUuid(uuid)) {
      (this.extra ??= {}).uuid = uuid;
      return;
    }
    this.u0 = UUID_WORDS[0]!;
    this.u1 = UUID_WORDS[1]!;
    this.u2 = UUID_WORDS[2]!;
    this.u3 = UUID_WORDS[3]!;
    this.flags |= UUID_PACKED;
  }

  /** What planning reads of the record: the record itself, or null for a malformed line. */
  get facts(): Facts | null {
    return (this.flags & HAS_FACTS) !== 0 ? this : null;
  }
  /** A chain record: a string `uuid` and a `parentUuid` that is a string or null. */
  get chain(): boolean {
    return (this.flags & CHAIN) !== 0;
  }
  get sidechain(): boolean {
    return (this.flags & SIDECHAIN) !== 0;
  }
  /** `subtype === "compact_boundary"` (§1.7). */
  get compactBoundary(): boolean {
    return (this.flags & COMPACT_BOUNDARY) !== 0;
  }
  /**
   * `timestamp` when a string (§2.4 tests it). A string that `Date#toISOString` gives back exactly (every
   * time Claude Code writes) is kept as its seconds and milliseconds and made again when asked for: a 24-
   * character string per record was 40 bytes of a large unit's heap (docs/performance.md, "Round 11").
   */
  get timestamp(): string | null {
    const t = this.time;
    return typeof t === "number" ? new Date(t * 1000 + ((this.flags & MS_MASK) >> MS_SHIFT)).toISOString() : t;
  }

  /** Its `timestamp` is kept as a number: a string of toISOString's form, so an ISO UTC time (§2.4). */
  get timestampIsIso(): boolean {
    return typeof this.time === "number";
  }

  private keepTime(s: string | null): void {
    this.flags &= ~MS_MASK;
    this.time = s;
    const ms = s === null ? -1 : isoMillis(s);
    if (ms < 0 || Math.floor(ms / 1000) > MAX_SECONDS) return;
    this.time = Math.floor(ms / 1000);
    this.flags |= (ms % 1000) << MS_SHIFT;
  }

  get toolUses(): ToolUseFact[] {
    return listOf(this.extra?.uses, NO_TOOL_USES);
  }
  get toolResults(): ToolResultFact[] {
    return listOf(this.extra?.results, NO_TOOL_RESULTS);
  }
  /** `message.content` holds a `tool_result` block (toolResults, without a list made). */
  get hasToolResults(): boolean {
    return this.extra?.results !== undefined;
  }
  get logicalParentUuid(): string | null {
    return this.extra?.rare?.logicalParentUuid ?? null;
  }
  get subtype(): string | null {
    return this.extra?.rare?.subtype ?? null;
  }
  get snapshotTimestamp(): string | null {
    return this.extra?.rare?.snapshotTimestamp ?? null;
  }
  get toolUseResult(): RareFacts["toolUseResult"] {
    return this.extra?.rare?.toolUseResult ?? null;
  }
  /** The line's bytes, kept only when they are not valid UTF-8. */
  get raw(): Buffer | null {
    return this.extra?.raw ?? null;
  }
  set raw(b: Buffer | null) {
    if (b !== null) (this.extra ??= {}).raw = b;
  }

  /** The line's bytes without its `\n` (a view valid until the file's bytes are next read). */
  get lineBytes(): Buffer {
    const b = this.bytes.hold(this.start, this.end);
    return b.subarray(this.start - this.bytes.base, this.end - this.bytes.base);
  }

  private get keep(): boolean {
    return (this.flags & KEEP) !== 0;
  }

  /** The line's text without its `\n`; null when it is not valid UTF-8. */
  get text(): string | null {
    if (this.raw !== null) return null;
    if (this.extra?.decoded !== undefined) return this.extra.decoded;
    const text = UTF8.decode(this.lineBytes);
    if (this.keep) (this.extra ??= {}).decoded = text;
    return text;
  }

  /** The parsed object; null for a malformed line. */
  get value(): JsonObject | null {
    if (this.extra?.parsed !== undefined) return this.extra.parsed;
    if (this.problem !== null) return null;
    const v = JSON.parse(this.text!) as JsonObject;
    if (this.keep) (this.extra ??= {}).parsed = v;
    return v;
  }

  /** The parsed object and the text, made together (one decode of the line). */
  read(): { value: JsonObject | null; text: string | null } {
    if (this.extra?.parsed !== undefined || this.problem !== null) return { value: this.value, text: this.text };
    const text = this.text!;
    const value = JSON.parse(text) as JsonObject;
    if (this.keep) (this.extra ??= {}).parsed = value;
    return { value, text };
  }

  /** Set what the line's parse found (the plain reading). */
  held(value: JsonObject, text: string): void {
    if (!this.keep) return;
    (this.extra ??= {}).parsed = value;
    this.extra.decoded = text;
  }

  /** FactsSink: the rules of record-facts.ts put a record's facts here, as its own fields. */
  takeFacts(flags: number, uuid: string | null, parentUuid: string | null, timestamp: string | null, messageId: string | null, requestId: string | null, toolUses: ToolUseFact[], toolResults: ToolResultFact[], rare: RareFacts | null): void {
    this.flags |= HAS_FACTS | (flags << FACT_SHIFT);
    this.keepUuid(uuid);
    this.parent = parentUuid;
    this.keepTime(timestamp);
    this.messageId = messageId;
    this.requestId = requestId;
    if (toolUses.length > 0) (this.extra ??= {}).uses = kept(toolUses);
    if (toolResults.length > 0) (this.extra ??= {}).results = kept(toolResults);
    if (rare !== null) (this.extra ??= {}).rare = rare;
  }
}

/** The uuid string made last (ClaudeRecord.uuid), and its record. */
let lastUuidOf: ClaudeRecord | null = null;
let lastUuid = "";

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number written in `s` at [at, at + n) in decimal digits, or -1. */
function digits(s: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/**
 * `s` as milliseconds since the epoch when it is exactly what `Date#toISOString` makes of them
 * (`YYYY-MM-DDTHH:mm:ss.sssZ`, every field in its range, from 1970), else -1.
 */
export function isoMillis(s: string): number {
  if (s.length !== 24 || s[4] !== "-" || s[7] !== "-" || s[10] !== "T" || s[13] !== ":" || s[16] !== ":" || s[19] !== "." || s[23] !== "Z") return -1;
  const y = digits(s, 0, 4);
  const mo = digits(s, 5, 2);
  const d = digits(s, 8, 2);
  const h = digits(s, 11, 2);
  const mi = digits(s, 14, 2);
  const sec = digits(s, 17, 2);
  const ms = digits(s, 20, 3);
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0) return -1;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  if (d > (mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]!)) return -1;
  return Date.UTC(y, mo - 1, d, h, mi, sec, ms);
}

export interface ReadFile {
  records: ClaudeRecord[];
  /** Bytes up to and including the last `\n` (§3.5 `bytes`). */
  completeBytes: number;
  /** Physical lines in that prefix. */
  lines: number;
  blankLines: number;
  pendingTailBytes: number;
  /** Bytes of the longest complete non-blank line. */
  longestLine: number;
  /**
   * The first chain record of each uuid of `records` (the others are duplicates), as the reading found
   * them; the plan takes it rather than making its own (plan-place.ts indexUuids) and lets it go.
   */
  firstByUuid?: UuidIndex<ClaudeRecord>;
}

/** §1.2, §4.2: blank lines hold only spaces, tabs or `\r`. */
function isBlank(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}

/**
 * Parse one line of a transcript into a record (chain facts filled; dup/transcript set by the caller).
 * A line that `tape` reads as canonical (fast/json-tape.ts) is not parsed: its facts come from its bytes.
 * `keep`: the record holds its parsed value and text (else they are made again when asked for).
 */
export function parseLine(bytes: Buffer, start: number, end: number, line: number, checkOnly = false, tape: JsonTape | null = null, keep = true, source: SourceBytes = new BufferBytes(bytes), base = 0): ClaudeRecord {
  // `bytes` holds the line at [start, end); the record keeps its place in the file (base + start) and `source`.
  const rec = new ClaudeRecord(line, source, base + start, base + end, keep);
  // JSON nested deeper than a Log may hold (envelope-and-log.md §7) is a malformed line: refused, or kept raw.
  if (end - start > MAX_NESTING_DEPTH && nestsDeeperThan(bytes.subarray(start, end))) {
    rec.problem = "malformed_line";
    return rec;
  }
  if (tape !== null && readJsonLine(bytes, start, end, tape)) {
    const type = memberOf(tape, bytes, 0, TYPE);
    if (type >= 0 && tape.kind[type] === J_STRING) {
      rec.type = interned(stringOf(tape, bytes, type));
      rec.canonical = true;
      if (!checkOnly) factsOfTapeInto(tape, bytes, rec);
      return rec;
    }
  }
  let text: string;
  try {
    text = UTF8.decode(bytes.subarray(start, end));
  } catch {
    rec.raw = Buffer.from(bytes.subarray(start, end));
    rec.problem = "invalid_utf8";
    return rec;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    rec.problem = "malformed_line";
    return rec;
  }
  if (!isJsonObject(value)) {
    rec.problem = "malformed_line";
    return rec;
  }
  if (typeof value.type !== "string") {
    rec.problem = "invalid_record";
    return rec;
  }
  rec.held(value, text);
  rec.type = interned(value.type);
  if (checkOnly) return rec;
  // A lone surrogate can only come from a \uD8xx–\uDFxx escape: valid UTF-8 text holds none itself.
  rec.canonical = JSON.stringify(value) === text && (!SURROGATE_ESCAPE.test(text) || deepWellFormed(value));
  factsOfValueInto(value, rec);
  return rec;
}

/** §4.2's reading of the complete lines of a file, fed its bytes in one buffer or in blocks of whole lines. */
class LineReader {
  readonly records: ClaudeRecord[] = [];
  longestLine = 0;
  line = 0;
  blank = 0;
  /** The first chain record of each uuid: what finds a duplicate here is the plan's table (ReadFile). */
  private readonly firstByUuid = new UuidIndex(this.records);
  private readonly tape = recordTape();
  /** The last record with a uuid. */
  private lastChain: ClaudeRecord | null = null;

  constructor(
    private readonly file: string,
    private readonly lenient: boolean,
    private readonly keep: boolean,
    private readonly lazy: boolean,
    private readonly source: SourceBytes,
  ) {}

  /**
   * The complete lines of `bytes` from `start` (file offset `base + start`); returns where the first line
   * without its `\n` starts. `tick(offset)` is told the file offset after each line.
   */
  lines(bytes: Buffer, start: number, base: number, tick?: (offset: number) => void): number {
    for (;;) {
      const nl = bytes.indexOf(0x0a, start);
      if (nl < 0) return start;
      this.add(bytes, start, nl, base);
      start = nl + 1;
      tick?.(base + start);
    }
  }

  private add(bytes: Buffer, start: number, nl: number, base: number): void {
    const line = ++this.line;
    if (isBlank(bytes, start, nl)) {
      this.blank++;
      return;
    }
    const rec = parseLine(bytes, start, nl, line, !this.keep, this.tape, !this.lazy, this.source, base);
    if (rec.problem !== null && !this.lenient) {
      throw new PixirError("invalid_claude_session", undefined, { reason: rec.problem, file: this.file, line });
    }
    this.longestLine = Math.max(this.longestLine, nl - start);
    if (!this.keep) return;
    // A chain's parent is most often the record before: kept as that record, not as a string of its uuid.
    const last = this.lastChain;
    if (last !== null && rec.parentUuid !== null && rec.parentUuid === last.uuid) rec.chainTo(last);
    if (rec.uuid !== null) this.lastChain = rec;
    rec.index = this.records.length;
    this.records.push(rec);
    if (rec.chain) {
      rec.dup = !this.firstByUuid.add(rec);
      rec.message = !rec.dup && rec.type !== "progress";
    }
  }

  result(completeBytes: number, pendingTailBytes: number): ReadFile {
    return { records: this.records, completeBytes, lines: this.line, blankLines: this.blank, pendingTailBytes, longestLine: this.longestLine, firstByUuid: this.firstByUuid };
  }
}

/** Progress in steps of a tenth of `total` bytes, told the offset reached. */
function progressTicks(total: number, progress?: (percent: number) => void): ((offset: number) => void) | undefined {
  if (progress === undefined) return undefined;
  const step = Math.max(1, Math.ceil(total / 10));
  let nextReport = step;
  return (offset) => {
    if (offset < nextReport) return;
    progress(Math.floor((100 * offset) / total));
    nextReport = (Math.floor(offset / step) + 1) * step;
  };
}

/**
 * §4.2: the complete lines of `bytes` (a final segment without `\n` is the pending tail), blank lines
 * skipped and counted. Malformed lines are refused (`invalid_claude_session`) unless `lenient`. With
 * `keep` false, the lines are only checked (no record is kept). With `lazy`, a record keeps neither its
 * parsed value nor its text (the import: they are made again from the file's bytes when mapped).
 */
export function readTranscriptBytes(bytes: Buffer, file: string, lenient: boolean, progress?: (percent: number) => void, keep = true, lazy = false): ReadFile {
  const reader = new LineReader(file, lenient, keep, lazy, new BufferBytes(bytes));
  const end = reader.lines(bytes, 0, 0, progressTicks(bytes.length, progress));
  progress?.(100);
  return reader.result(end, bytes.length - end);
}

/** Blocks a large file is read in (a longer line gets a block of its own size). */
const READ_BLOCK_BYTES = 1024 * 1024;

/**
 * readTranscriptBytes (lazy) of a file read in blocks of whole lines, never whole: each record keeps its
 * place and reads its bytes from the file again when mapped (source-bytes.ts FileBytes). `digest` is fed
 * the complete lines (§4.3's digest of the imported prefix). With `keep` false the lines are only checked.
 */
export function readTranscriptFile(abs: string, file: string, lenient: boolean, digest: (bytes: Buffer) => void, progress?: (percent: number) => void, keep = true): ReadFile {
  const fd = openSync(abs, "r");
  try {
    const st = fstatSync(fd);
    const source = new FileBytes(abs, file, st.ino);
    const reader = new LineReader(file, lenient, keep, true, source);
    const tick = progressTicks(st.size, progress);
    let buf = Buffer.allocUnsafe(READ_BLOCK_BYTES);
    let have = 0;
    let base = 0;
    for (let n = -1; n !== 0; ) {
      if (have === buf.length) buf = Buffer.concat([buf.subarray(0, have)], 2 * buf.length);
      n = readSync(fd, buf, have, buf.length - have, base + have);
      have += n;
      const end = reader.lines(buf.subarray(0, have), 0, base, tick);
      digest(buf.subarray(0, end));
      buf.copy(buf, 0, end, have);
      have -= end;
      base += end;
    }
    source.length = base;
    progress?.(100);
    return reader.result(base, have);
  } finally {
    closeSync(fd);
  }
}

/**
 * §3.1: split a session file's records into the main transcript (0) and one inline transcript per
 * sidechain group (1, 2, …). Returns the first record of each inline group, by transcript index.
 */
export function assignTranscripts(records: ClaudeRecord[], subagentFile: boolean): ClaudeRecord[] {
  const groupStarts: ClaudeRecord[] = [];
  if (subagentFile) return groupStarts;
  const byUuid = new Map<string, ClaudeRecord>();
  for (const r of records) if (r.chain && !r.dup && r.sidechain) byUuid.set(r.uuid!, r);
  const groupOfRoot = new Map<ClaudeRecord, number>();
  let lastSidechainGroup = 0;
  const group = (root: ClaudeRecord): number => {
    let g = groupOfRoot.get(root);
    if (g === undefined) {
      g = groupStarts.length + 1;
      groupStarts.push(root);
      groupOfRoot.set(root, g);
    }
    return g;
  };
  for (const r of records) {
    if (!r.sidechain || !r.chain) continue;
    let x: ClaudeRecord | undefined = r;
    const visited = new Set<ClaudeRecord>();
    let root: ClaudeRecord | null = null;
    while (x !== undefined && !visited.has(x)) {
      visited.add(x);
      if (x.parentUuid === null) {
        root = x;
        break;
      }
      x = byUuid.get(x.parentUuid);
    }
    const g: number = root !== null ? group(root) : lastSidechainGroup > 0 ? lastSidechainGroup : group(r);
    r.transcript = g;
    lastSidechainGroup = g;
  }
  // The group's first record is its record on the smallest line.
  for (const r of records) {
    if (r.transcript > 0 && r.line < groupStarts[r.transcript - 1]!.line) groupStarts[r.transcript - 1] = r;
  }
  return groupStarts;
}

const messageId = (r: ClaudeRecord): string | null => r.facts?.messageId ?? null;

/**
 * §1.7, §3.8: a record that carries a compaction summary: `isCompactSummary`, or (≤ 1.0.x, which wrote no
 * flag) a root `user` record whose text is the summary's (injected.ts names the words).
 */
export function carriesCompactSummary(v: JsonObject): boolean {
  if (v.isCompactSummary === true) return true;
  if (v.type !== "user" || v.parentUuid !== null || !isJsonObject(v.message)) return false;
  const content = v.message.content;
  const first = Array.isArray(content) ? content.find((b) => isJsonObject(b) && b.type === "text") : content;
  const text = typeof first === "string" ? first : isJsonObject(first) && typeof first.text === "string" ? first.text : "";
  return classifyUserText(text).injected === "compact_summary";
}

/** §1.7 (≤ 1.0.x): a root `user` record carrying a compaction summary: the chain restarts from it. */
function isCompactRestart(r: ClaudeRecord): boolean {
  if (r.type !== "user" || r.parentUuid !== null) return false;
  const v = r.value;
  return v !== null && carriesCompactSummary(v);
}

/** `message.content` holds a `tool_result` block. */
export const hasToolResultBlock = (r: ClaudeRecord): boolean => r.facts !== null && r.hasToolResults;

/** §3.2–§3.3 over the records of one transcript. */
export class TranscriptTree {
  /** Message records of the transcript, line order. */
  readonly messages: ClaudeRecord[];
  /** This transcript's message record, and its progress record (chain, not a duplicate), of a uuid. */
  private readonly messageOf: (uuid: string) => ClaudeRecord | undefined;
  private readonly progressOf: (uuid: string) => ClaudeRecord | undefined;
  private readonly parentOf: RecordMap<ClaudeRecord | null>;
  /** The logical parent of each record whose logical parent is not its parent (a few: compaction boundaries and restarts). */
  private readonly logicalOf = new RecordMap<ClaudeRecord | null>();
  /** The assistant records of each message id, and the tool results whose parent is one of them. */
  private readonly assistantsByMsg: Groups;
  private readonly resultsByMsg: Groups;

  /**
   * `firstByUuid`, when given, is the batch's first chain record of each uuid (every transcript's): the
   * trees of a batch look their records up there, filtered, instead of each keeping two tables of its own
   * (on a 400 MB session, some 20 MB of tables and their garbage).
   */
  constructor(records: ClaudeRecord[], firstByUuid?: ByUuid<ClaudeRecord>) {
    this.messages = messagesOf(records);
    // Columns at their full length when this tree's messages are most of the records up to its last.
    const places = denseSpan(this.messages);
    this.parentOf = new RecordMap(places);
    if (firstByUuid !== undefined) {
      const t = records[0]?.transcript ?? 0;
      this.messageOf = (u) => {
        const r = firstByUuid.get(u);
        return r !== undefined && r.message && r.transcript === t ? r : undefined;
      };
      this.progressOf = (u) => {
        const r = firstByUuid.get(u);
        return r !== undefined && r.type === "progress" && r.transcript === t ? r : undefined;
      };
    } else {
      const byUuid = new Map<string, ClaudeRecord>();
      const progressByUuid = new Map<string, ClaudeRecord>();
      for (const r of this.messages) byUuid.set(r.uuid!, r);
      for (const r of records) if (r.chain && !r.dup && r.type === "progress") progressByUuid.set(r.uuid!, r);
      this.messageOf = (u) => byUuid.get(u);
      this.progressOf = (u) => progressByUuid.get(u);
    }
    this.messages.forEach((r, i) => {
      this.parentOf.set(r, this.resolve(r.parentUuid, i));
      const lp = r.facts!.logicalParentUuid;
      const boundary = r.type === "system" && r.facts!.compactBoundary && r.parentUuid === null && lp !== null;
      const logical = boundary ? this.resolve(lp, i) : i > 0 && isCompactRestart(r) ? this.restartParent(records, i) : this.parentOf.get(r)!;
      if (logical !== this.parentOf.get(r)) this.logicalOf.set(r, logical);
    });
    this.assistantsByMsg = new Groups(this.messages, (r) => (r.type === "assistant" ? messageId(r) : null));
    this.resultsByMsg = new Groups(this.messages, (r) => {
      if (r.type !== "user" || !hasToolResultBlock(r)) return null;
      const p = this.parentOf.get(r);
      return p && p.type === "assistant" ? messageId(p) : null;
    });
  }

  /**
   * §1.7 (≤ 1.0.x): the logical parent of a compaction restart (messages[i]): the record on the latest line
   * before it that a `summary` record's `leafUuid` names, else the message record on the line before it.
   */
  private restartParent(records: ClaudeRecord[], i: number): ClaudeRecord {
    const restart = this.messages[i]!;
    let named: ClaudeRecord | null = null;
    for (const r of records) {
      if (r.type !== "summary" || r.line > restart.line) continue;
      const leaf = r.value?.leafUuid;
      const x = typeof leaf === "string" ? this.messageOf(leaf) : undefined;
      if (x !== undefined && x.line < restart.line && (named === null || x.line > named.line)) named = x;
    }
    return named ?? this.messages[i - 1]!;
  }

  /** bridge(u): progress records are passed through to their own parent, each at most once. */
  bridge(u: string | null): string | null {
    // Made at the first progress record met: most parents are not one, and a Set per call was 7 MB of
    // garbage on a 400 MB session.
    let visited: Set<ClaudeRecord> | null = null;
    let x = u;
    while (x !== null) {
      const p = this.progressOf(x);
      if (p === undefined) return x;
      visited ??= new Set();
      if (visited.has(p)) return null;
      visited.add(p);
      x = p.parentUuid;
    }
    return null;
  }

  /** The rule of parent(X) applied to `u`, for the message record at `index` of `messages`. */
  private resolve(u: string | null, index: number): ClaudeRecord | null {
    const p = this.bridge(u);
    if (p === null) return null;
    return this.messageOf(p) ?? (index > 0 ? this.messages[index - 1]! : null);
  }

  parent(r: ClaudeRecord): ClaudeRecord | null {
    return this.parentOf.get(r) ?? null;
  }

  logicalParent(r: ClaudeRecord): ClaudeRecord | null {
    const logical = this.logicalOf.get(r);
    return logical !== undefined ? logical : this.parent(r);
  }

  /** walk(X) with the logical parent; `parent` for the oracle (no logicalParentUuid). */
  walk(x: ClaudeRecord, useLogical = true, stop?: (r: ClaudeRecord) => boolean): ClaudeRecord[] {
    const step = (r: ClaudeRecord) => (useLogical ? this.logicalParent(r) : this.parent(r));
    // Counted first, then made at its length: a walk of a large session's path grown by push left the
    // arrays it outgrew as V8 large objects, garbage until the next full GC (docs/performance.md, "Round 12").
    let n = 0;
    const seen = new RecordSet();
    for (let r: ClaudeRecord | null = x; r !== null && !seen.has(r) && !(stop?.(r) ?? false); r = step(r)) {
      seen.add(r);
      n++;
    }
    const out = new Array<ClaudeRecord>(n);
    let r = x;
    for (let i = 0; i < n; i++, r = step(r)!) out[i] = r;
    return out;
  }

  /** §3.3 recover(W), W being `w` and `also` (a record beside them, not copied into them). */
  recover(w: ClaudeRecord[], also: ClaudeRecord | null = null): ClaudeRecord[] {
    const inW = new RecordSet(w);
    if (also !== null) inW.add(also);
    const out: ClaudeRecord[] = [];
    const added = new RecordSet();
    const add = (r: ClaudeRecord) => {
      if (!inW.has(r) && !added.has(r)) {
        added.add(r);
        out.push(r);
      }
    };
    // A message id is done when its first record is (a bit by place, not a Set of the ids).
    const done = new RecordSet();
    const recoverOf = (r: ClaudeRecord) => {
      const m = r.type === "assistant" ? messageId(r) : null;
      if (m === null) return;
      const first = this.assistantsByMsg.first(m);
      if (first !== undefined) {
        if (done.has(first)) return;
        done.add(first);
      }
      this.assistantsByMsg.each(m, add);
      this.resultsByMsg.each(m, add);
    };
    for (const r of w) recoverOf(r);
    if (also !== null) recoverOf(also);
    return out;
  }

  /** CP(X): walk(X) plus recover(walk(X)). */
  claudePath(x: ClaudeRecord): RecordSet {
    const w = this.walk(x);
    const path = new RecordSet(w);
    for (const r of this.recover(w)) path.add(r);
    return path;
  }

  get leaf(): ClaudeRecord | null {
    return this.messages.at(-1) ?? null;
  }

  /** The message records with a `user` or `assistant` descendant (§3.4 step 3). */
  withConversationDescendant(): RecordSet {
    const marked = new RecordSet();
    for (const y of this.messages) {
      if (y.type !== "user" && y.type !== "assistant") continue;
      // Every record this walk meets is marked as it is met, so a walk that comes round again stops at a
      // marked record or at `y` (no Set per record: on a large unit, one per message record was garbage).
      let x = this.logicalParent(y);
      while (x !== null && x !== y && !marked.has(x)) {
        marked.add(x);
        x = this.logicalParent(x);
      }
    }
    return marked;
  }
}

/**
 * `recs` in line order, sorted in place. A walk gives its records from the leaf up (the reverse of line
 * order), and Array#sort copies its array first: on a 400 MB session a 1.5 MB copy for each of the
 * largest arrays of the plan.
 */
export function inLineOrder(recs: ClaudeRecord[]): ClaudeRecord[] {
  let ascending = true;
  let descending = true;
  for (let i = 1; i < recs.length && (ascending || descending); i++) {
    if (recs[i - 1]!.line < recs[i]!.line) descending = false;
    else ascending = false;
  }
  if (ascending) return recs;
  if (descending) return recs.reverse();
  return recs.sort((a, b) => a.line - b.line);
}

/**
 * The message records of `records` (line order), in an array made at its length: a filter grows its array
 * as it goes, and the arrays a 512 MiB session's 252,000 records outgrow are V8 large objects, garbage until
 * the next full GC (docs/performance.md, "Round 12").
 */
function messagesOf(records: ClaudeRecord[]): ClaudeRecord[] {
  let n = 0;
  for (const r of records) if (r.message) n++;
  const out = new Array<ClaudeRecord>(n);
  n = 0;
  for (const r of records) if (r.message) out[n++] = r;
  return out;
}

/**
 * The records of a list that share a key (a message id), in list order: the first of each key found by a
 * table of places (record-columns.ts PlaceIndex), each chained to the next by place. A Map of a 512 MiB
 * session's 126,000 message ids held some 4 MB and left as much garbage as it grew (docs/performance.md,
 * "Round 12"); an array per message id was 5 MB on a 400 MB session.
 */
class Groups {
  private readonly firsts: PlaceIndex<ClaudeRecord>;
  /** By place: the place of the next record of its key, or -1. */
  private readonly next: Int32Array;

  constructor(
    private readonly list: ClaudeRecord[],
    keyOf: (r: ClaudeRecord) => string | null,
  ) {
    this.firsts = new PlaceIndex(list, keyOf);
    this.next = new Int32Array(list.length).fill(-1);
    // For a key's first, the place of its last (while the chains are made; let go young, with its bytes).
    const last = new Int32Array(list.length);
    list.forEach((r, i) => {
      const k = keyOf(r);
      if (k === null) return;
      if (this.firsts.add(r, i)) last[i] = i;
      else {
        const f = this.firsts.placeOfKey(k);
        this.next[last[f]!] = i;
        last[f] = i;
      }
    });
  }

  first(key: string): ClaudeRecord | undefined {
    return this.firsts.get(key);
  }

  /** Each record of `key`, in list order. */
  each(key: string, f: (r: ClaudeRecord) => void): void {
    for (let i = this.firsts.placeOfKey(key); i >= 0; i = this.next[i]!) f(this.list[i]!);
  }
}
