// summarize.md: the branch summary of a fork child's inherited prefix. One accumulator computes the
// deterministic_operational_summary_v1 data in bounded memory, one function renders it for a model, and
// one stream stage (pixir-summarize, pixir fork --summarize) passes a fork stream through and appends it.
import { isUtf8 } from "node:buffer";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import type { Writable } from "node:stream";
import { abortable } from "../lines/abortable.js";
import { type RawLine } from "../lines/codec.js";
import { lineBlocksOf } from "../lines/pipe-read.js";
import { checkLine, LineFacts } from "../fast/line-check.js";
import { stampedOf } from "../fast/line-head.js";
import { readToolCall, ToolCallFields } from "../fast/tool-call-bytes.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { envelopeHead, isJsonObject, isSeq, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { PixirError, prefixMismatch } from "../event/errors.js";
import { DETERMINISTIC_SUMMARY, MODEL_SUMMARY, SUMMARY_FORMATS, type ForkStrategy, type SummaryFormat } from "../event/vocabulary.js";
import { newUlid } from "../event/ids.js";
import { checkInputSessionId, checkStreamedPrefix, decodeInputLine, ForkStreamSeqs, integrityError, requireStamped, stampedEvent, STDIN_PATH, type InputEvent } from "../lines/input.js";
import { inheritedItem, isInherited, openHistory, PrefixDigest } from "../store/loader.js";
import { assertSessionId } from "../event/session-id.js";
import { truncate } from "../event/text.js";
import { etrim, excerptOf, hasKey, isTermObject, orElse, str, termObject, termOfJs, type TermObject } from "../event/elixir.js";
import { renderBranchSummaryText } from "./render.js";
import { agentOfEvent, agentTodoList, agentToolPaths, isInjectedUserMessage } from "./agent-facts.js";
import { commandLineOf, oneLine } from "../event/injected.js";

export const DETERMINISTIC_SUMMARY_LIMITATIONS = [
  "Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.",
  "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];
export const MODEL_SUMMARY_LIMITATIONS = [
  "Model-assisted branch summary was produced by an external command from the forked prefix; it may omit or misstate facts.",
  "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];

/** summarize.md §2–§4 limits. */
export const FILES_TOUCHED_LIMIT = 30;
export const OPEN_TASKS_LIMIT = 8;
export const SUMMARY_BULLETS_LIMIT = 6;
/** summarize.md §7: excerpts in the model prompt, model output bound, summary bound, timeouts. */
export const PROMPT_EXCERPTS_LIMIT = 200;
export const MODEL_OUTPUT_MAX_BYTES = 1024 * 1024;
export const MODEL_SUMMARY_MAX_BYTES = 16000;
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
export const MODEL_KILL_GRACE_MS = 2_000;

export type ModelFallbackReason = "spawn_failed" | "timeout" | "nonzero_exit" | "empty_output" | "invalid_utf8" | "output_too_large";

export interface SummaryToolCall {
  seq: number | null;
  call_id: unknown;
  name: unknown;
}

export interface ModelCheckpoint {
  command_sha256: string;
  elapsed_ms: number;
  output_bytes: number;
  truncated: boolean;
}

/** The data of a branch_summary Event (summarize.md §2, plus the §7 model keys). */
export interface BranchSummaryData {
  [key: string]: unknown;
  strategy: string;
  parent_session_id: unknown;
  forked_to_seq: unknown;
  range: { from_seq: unknown; to_seq: unknown };
  source_event_count: number;
  event_counts: Record<string, number>;
  tool_calls: ToolCallList;
  files_touched: string[];
  open_tasks: string[];
  limitations: string[];
  summary: string;
  model_checkpoint?: ModelCheckpoint;
  model_assisted_fallback?: true;
  model_assisted_fallback_reason?: ModelFallbackReason;
}

const TOOL_CALL_BLOCK = 1 << 20;
const LIST_OPEN = Buffer.from("[");
const NEWLINE = Buffer.from("\n");
const LIST_CLOSE = Buffer.from("]");

/**
 * §2 `tool_calls`: one `{"seq","call_id","name"}` record per source tool_call, kept as the UTF-8 JSON
 * text the summary line carries, in 1 MiB blocks. A fork of a large Log inherits hundreds of thousands
 * of calls: an object per call, then JSON.stringify's copies of the whole list, took the summary of a
 * 1 GiB Log past 128 MiB. `branchSummaryLine` writes these bytes as they are; `toJSON` gives the
 * records as values to anything else that serialises or reads the data.
 */
export class ToolCallList {
  private readonly full: Buffer[] = [];
  private block = Buffer.allocUnsafe(TOOL_CALL_BLOCK);
  private used = 0;
  length = 0;

  push(call: SummaryToolCall): void {
    this.append(call.seq, JSON.stringify(call.call_id ?? null), JSON.stringify(call.name ?? null));
  }

  /** A record whose call_id and name are given as JSON text, as JSON.stringify writes them. */
  append(seq: number | null, callIdJson: string, nameJson: string): void {
    const text = `${this.length > 0 ? "," : ""}{"seq":${JSON.stringify(seq)},"call_id":${callIdJson},"name":${nameJson}}`;
    const size = Buffer.byteLength(text, "utf8");
    if (this.used + size > this.block.length) {
      this.full.push(this.block.subarray(0, this.used));
      this.block = Buffer.allocUnsafe(Math.max(TOOL_CALL_BLOCK, size));
      this.used = 0;
    }
    this.used += this.block.write(text, this.used, "utf8");
    this.length++;
  }

  /** The list as JSON, `[...]`, in UTF-8: exactly what JSON.stringify writes for the records. */
  jsonBytes(): Buffer {
    return Buffer.concat(this.jsonParts());
  }

  /** jsonBytes in the pieces it is made of, for a writer that copies them once, into its own line. */
  jsonParts(): Buffer[] {
    return [LIST_OPEN, ...this.full, this.block.subarray(0, this.used), LIST_CLOSE];
  }

  toJSON(): SummaryToolCall[] {
    return JSON.parse(this.jsonBytes().toString("utf8")) as SummaryToolCall[];
  }
}

// ---------------------------------------------------------------------------------------------------
// §3 Excerpts

/** Candidate Events (§2): messages and subagent Events, without the permission_posture record (§3.2). */
export function isSummaryCandidate(e: Pick<PixirEvent, "type" | "data">): boolean {
  if (e.type === "user_message" || e.type === "assistant_message") return true;
  return e.type === "subagent_event" && e.data.event !== "permission_posture";
}

/**
 * summarize.md §3.1 and context-and-compaction.md §4 step 12: an Event's excerpt as its label and its
 * `x(…)` text, or null when it has none. A `history_compaction` is a candidate of compaction only.
 */
export function excerptParts(type: PixirEvent["type"], d: TermObject): [label: string, text: string] | null {
  switch (type) {
    case "user_message":
      return hasKey(d, "text") ? ["user: ", excerptOf(d.text)] : null;
    case "assistant_message":
      return hasKey(d, "text") ? ["assistant: ", excerptOf(d.text)] : null;
    case "subagent_event":
      if (d.event === "permission_posture") return null;
      return [`subagent ${str(orElse(d.subagent_id, "unknown"))}: `, excerptOf(orElse(d.summary, d.status, d.event, ""))];
    case "history_compaction": {
      const range = isTermObject(d.range) ? d.range : undefined;
      return [`previous checkpoint seq ${str(range?.from_seq)}..${str(range?.to_seq)}: `, excerptOf(orElse(d.summary, ""))];
    }
    default:
      return null;
  }
}

/** The keys an excerpt reads. */
const EXCERPT_KEYS = ["text", "subagent_id", "summary", "status", "event"] as const;

/** summarize.md §3.1 `excerpt(e)`; "" when the Event has nothing to say, or its text is empty (§3.2). */
export function eventExcerpt(e: Pick<PixirEvent, "type" | "data">): string {
  if (e.type === "history_compaction") return "";
  const read = termObject();
  for (const k of EXCERPT_KEYS) if (Object.hasOwn(e.data, k) && e.data[k] !== undefined) read[k] = termOfJs(e.data[k]);
  const parts = excerptParts(e.type, read);
  return parts === null || parts[1] === "" ? "" : parts[0] + parts[1];
}

/**
 * The excerpt of a candidate: summarize.md §3 for a Pixir-native Event; for an agent's (archive.md §5) an
 * injected user text is no fact, and a slash-command wrapper reads as the command line typed.
 */
export function candidateExcerpt(e: Pick<PixirEvent, "type" | "data">): string {
  if (agentOfEvent(e) === null) return eventExcerpt(e);
  // An agent's blank message (a tool-use turn's " ") says nothing either.
  if (typeof e.data.text === "string" && e.data.text.trim() === "") return "";
  if (e.type !== "user_message") return eventExcerpt(e);
  if (isInjectedUserMessage(e)) return "";
  const line = typeof e.data.text === "string" ? commandLineOf(e.data.text) : null;
  return eventExcerpt(line === null ? e : { type: e.type, data: { ...e.data, text: line } });
}

/** The bytes of a tool call's data name an importer's carrier: the call is an agent's, read by archive.md §5. */
const CARRIER_KEYS = ['"claude":{', '"codex":{', '"pi":{'].map((k) => Buffer.from(k));
const carriesSource = (b: Buffer, start: number, end: number): boolean => {
  const data = b.subarray(start, end);
  return CARRIER_KEYS.some((k) => data.includes(k));
};

/** archive.md §5: an agent's summary stays at most 80 lines and 8 KB as the model reads it. */
export const AGENT_SUMMARY_MAX_LINES = 80;
export const AGENT_SUMMARY_MAX_BYTES = 8 * 1024;
const AGENT_OPEN_TASKS_LIMIT = 20;
const AGENT_TASK_MAX_CHARS = 200;

/** Drop what the model can do without (files last in order, then tasks, then the oldest facts) until the text fits. */
function fitAgentSummary(data: BranchSummaryData, bullets: string[], n: number, counts: Record<string, number>): BranchSummaryData {
  const fits = () => {
    const text = renderBranchSummaryText(data as unknown as Record<string, unknown>);
    return text.split("\n").length <= AGENT_SUMMARY_MAX_LINES && Buffer.byteLength(text, "utf8") <= AGENT_SUMMARY_MAX_BYTES;
  };
  while (!fits()) {
    if (data.files_touched.length > 0) data.files_touched = data.files_touched.slice(0, -1);
    else if (data.open_tasks.length > 0) data.open_tasks = data.open_tasks.slice(0, -1);
    else if (bullets.length > 0) {
      bullets = bullets.slice(1);
      data.summary = summaryText(n, counts, bullets);
    } else break;
  }
  return data;
}

/** summarize.md §2 files_touched: the top-level string values (and string array elements) that look like paths. */
export function toolCallPaths(e: Pick<PixirEvent, "type" | "data">): string[] {
  const out: string[] = [];
  if (e.type !== "tool_call" || !isJsonObject(e.data.args)) return out;
  const looksLikePath = (v: unknown): v is string => typeof v === "string" && (v.includes("/") || v.includes("."));
  for (const v of Object.values(e.data.args)) {
    if (looksLikePath(v)) out.push(v);
    else if (Array.isArray(v)) for (const item of v) if (looksLikePath(item)) out.push(item);
  }
  return out;
}

/**
 * The first `limit` distinct strings in UTF-8 byte order, kept in bounded memory: a string that falls
 * off the end can never come back, since everything kept sorts before it.
 */
export class SortedStringSet {
  private readonly items: Array<{ text: string; bytes: Buffer }> = [];

  constructor(private readonly limit: number) {}

  add(text: string): void {
    const bytes = Buffer.from(text, "utf8");
    this.insert(bytes, 0, bytes.length, text, true);
  }

  /**
   * Add the string that the JSON string `b[start, end)` spells (quotes included; `escape` is where its
   * first backslash is). Its bytes before the escape are its UTF-8's first bytes, and once the set is full they
   * usually show that it sorts after everything kept: then it is never decoded.
   */
  addEscaped(b: Buffer, start: number, end: number, escape: number): void {
    const n = this.items.length;
    if (n === this.limit && n > 0) {
      const last = this.items[n - 1]!.bytes;
      const known = escape - (start + 1);
      const c = last.compare(b, start + 1, escape, 0, Math.min(known, last.length));
      // Differing within the known bytes settles it; so does `last` ending within them (the string is longer).
      if (c < 0 || (c === 0 && last.length <= known)) return;
    }
    this.add(JSON.parse(b.toString("utf8", start, end)) as string);
  }

  /** Add the string whose UTF-8 is `b[start, end)` (a range of the caller's buffer). Nothing is copied unless it is kept. */
  addBytes(b: Buffer, start: number, end: number): void {
    this.insert(b, start, end, undefined, false);
  }

  /** `owned`: `b` is a buffer of the set's own (add's), kept as it is instead of copied. */
  private insert(b: Buffer, start: number, end: number, text: string | undefined, owned: boolean): void {
    let hi = this.items.length;
    // Once the set is full most strings sort after all it keeps: one comparison turns them away.
    if (hi === this.limit && hi > 0 && this.items[hi - 1]!.bytes.compare(b, start, end) <= 0) return;
    let lo = 0;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.items[mid]!.bytes.compare(b, start, end);
      if (c === 0) return;
      if (c < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= this.limit) return;
    const kept = { text: text ?? b.toString("utf8", start, end), bytes: owned ? b : Buffer.from(b.subarray(start, end)) };
    this.items.splice(lo, 0, kept);
    if (this.items.length > this.limit) this.items.pop();
  }

  list(): string[] {
    return this.items.map((i) => i.text);
  }
}

// ---------------------------------------------------------------------------------------------------
// §2 and §4: the deterministic data

export interface BranchSummaryBuilderOptions {
  /** How many of the latest non-empty excerpts to keep (at least 8; 200 for a model prompt). */
  excerptWindow?: number;
}

/** Candidates kept unexcerpted before they are settled: per excerpt of the window, and in bytes of data. */
const PENDING_PER_WINDOW = 16;
const PENDING_MAX_BYTES = 4 * 1024 * 1024;

/** A summary candidate held as its data's bytes, parsed only when its excerpt is made. */
class PendingExcerpt {
  constructor(
    readonly type: PixirEvent["type"],
    private readonly bytes: Buffer,
  ) {}
  get data(): JsonObject {
    return JSON.parse(this.bytes.toString("utf8")) as JsonObject;
  }
}

/**
 * Accumulates deterministic_operational_summary_v1 over the source Events, one at a time. Memory holds
 * counts, the latest excerpts, the first 30 files and the tool-call list only, and (addChecked) up to
 * 4 MiB of candidates not yet excerpted.
 */
export class BranchSummaryBuilder {
  private readonly counts = new Map<string, number>();
  private readonly toolCalls = new ToolCallList();
  /** Where readToolCall puts what it found in the tool call at hand. */
  private readonly toolCallFields = new ToolCallFields();
  private readonly files = new SortedStringSet(FILES_TOUCHED_LIMIT);
  private recent: string[] = [];
  /** Candidates added by addChecked whose excerpts are not made yet, oldest first, and their data's bytes. */
  private pending: PendingExcerpt[] = [];
  private pendingBytes = 0;
  /** Holds the pending candidates' bytes, end to end, and is reused after each settle: no buffer per candidate. */
  private arena: Buffer | null = null;
  private readonly window: number;
  private sourceCount = 0;
  /** archive.md §5: an agent's Event was read, so its rules shape the summary. */
  private agentSeen = false;
  /** The unfinished items of the last TodoWrite / update_plan, or null before one. */
  private todo: string[] | null = null;

  constructor(options: BranchSummaryBuilderOptions = {}) {
    this.window = Math.max(OPEN_TASKS_LIMIT, SUMMARY_BULLETS_LIMIT, options.excerptWindow ?? 0);
  }

  /**
   * Add the next source Event; its seq is its child seq (1..N), `seq` when given. Only the types the
   * summary reads touch `data`, so a checked line's data is parsed only for those.
   */
  add(e: PixirEvent, seq: number | null = e.seq): void {
    this.settlePending();
    this.sourceCount++;
    this.counts.set(e.type, (this.counts.get(e.type) ?? 0) + 1);
    if (e.type === "tool_call") this.addToolCall(seq, e);
    if (!isSummaryCandidate(e)) return;
    if (agentOfEvent(e) !== null) this.agentSeen = true;
    // §3.2: empty excerpts are dropped before the last K are taken.
    const text = candidateExcerpt(e);
    if (text === "") return;
    this.recent.push(text);
    if (this.recent.length > this.window) this.recent.shift();
  }

  /**
   * Add the next source Event from the bytes of a line checkLine accepted: `type`, and its `data` in
   * `b[dataStart, dataEnd)`. Only a tool call's data is parsed now; a message's excerpt is made only
   * if it turns out to be among the last ones (settlePending), which saves most of that work.
   */
  addChecked(type: PixirEvent["type"], seq: number | null, b: Buffer, dataStart: number, dataEnd: number): void {
    this.sourceCount++;
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    if (type === "tool_call" && (carriesSource(b, dataStart, dataEnd) || !this.addToolCallBytes(seq, b, dataStart, dataEnd))) {
      this.addToolCall(seq, { type, data: JSON.parse(b.toString("utf8", dataStart, dataEnd)) as JsonObject });
    }
    if (type !== "user_message" && type !== "assistant_message" && type !== "subagent_event") return;
    const length = dataEnd - dataStart;
    if (this.pendingBytes + length > PENDING_MAX_BYTES) this.settlePending();
    let bytes: Buffer;
    if (length > PENDING_MAX_BYTES) bytes = Buffer.from(b.subarray(dataStart, dataEnd));
    else {
      const arena = (this.arena ??= Buffer.allocUnsafe(PENDING_MAX_BYTES));
      b.copy(arena, this.pendingBytes, dataStart, dataEnd);
      bytes = arena.subarray(this.pendingBytes, this.pendingBytes + length);
    }
    this.pending.push(new PendingExcerpt(type, bytes));
    this.pendingBytes += length;
    if (this.pending.length >= this.window * PENDING_PER_WINDOW || this.pendingBytes >= PENDING_MAX_BYTES) this.settlePending();
  }

  /** A tool call read from its data's bytes (tool-call-bytes.ts), as addToolCall reads the parsed data; false if it cannot be. */
  private addToolCallBytes(seq: number | null, b: Buffer, dataStart: number, dataEnd: number): boolean {
    const f = this.toolCallFields;
    if (!readToolCall(b, dataStart, dataEnd, f)) return false;
    const json = (s: number, e: number) => (s < 0 ? "null" : b.toString("utf8", s, e));
    this.toolCalls.append(seq, json(f.callIdStart, f.callIdEnd), json(f.nameStart, f.nameEnd));
    const paths = f.paths;
    for (let k = 0; k < paths.length; k += 3) {
      const start = paths[k]!;
      const end = paths[k + 1]!;
      const escape = paths[k + 2]!;
      if (escape >= 0) this.files.addEscaped(b, start, end, escape);
      else this.files.addBytes(b, start + 1, end - 1);
    }
    return true;
  }

  private addToolCall(seq: number | null, e: Pick<PixirEvent, "type" | "data">): void {
    this.toolCalls.push({ seq, call_id: e.data.call_id ?? null, name: e.data.name ?? null });
    const agent = agentOfEvent(e);
    if (agent === null) {
      for (const p of toolCallPaths(e)) this.files.add(p);
      return;
    }
    this.agentSeen = true;
    for (const p of agentToolPaths(agent, e.data.name, e.data.args)) this.files.add(p);
    this.todo = agentTodoList(e.data.name, e.data.args) ?? this.todo;
  }

  /**
   * Make the excerpts of the pending candidates from the newest back, only until the window is full of
   * non-empty ones: the older ones could never be among the last `window` (§3.2).
   */
  private settlePending(): void {
    if (this.pending.length === 0) return;
    const found: string[] = [];
    for (let i = this.pending.length - 1; i >= 0 && found.length < this.window; i--) {
      const e = this.pending[i]!;
      if (!isSummaryCandidate(e)) continue;
      const data = e.data;
      if (agentOfEvent({ data }) !== null) this.agentSeen = true;
      const text = candidateExcerpt({ type: e.type, data });
      if (text !== "") found.push(text);
    }
    found.reverse();
    this.recent = found.length >= this.window ? found : [...this.recent, ...found].slice(-this.window);
    this.pending = [];
    this.pendingBytes = 0;
  }

  get count(): number {
    return this.sourceCount;
  }

  /** The latest non-empty candidate excerpts, oldest first (up to the window). */
  excerpts(limit = this.window): string[] {
    this.settlePending();
    return this.recent.slice(-limit);
  }

  /** The data for the fork whose header this is. */
  finish(header: Pick<PixirEvent, "data">): BranchSummaryData {
    const h = header.data;
    const eventCounts: Record<string, number> = {};
    for (const [type, n] of this.counts) eventCounts[type] = n;
    const bullets = this.excerpts(SUMMARY_BULLETS_LIMIT);
    const data: BranchSummaryData = {
      strategy: DETERMINISTIC_SUMMARY,
      parent_session_id: h.parent_session_id ?? null,
      forked_to_seq: h.forked_to_seq ?? null,
      range: { from_seq: h.from_seq ?? null, to_seq: h.forked_to_seq ?? null },
      source_event_count: this.sourceCount,
      event_counts: eventCounts,
      tool_calls: this.toolCalls,
      files_touched: this.files.list(),
      open_tasks: this.excerpts(OPEN_TASKS_LIMIT),
      limitations: [...DETERMINISTIC_SUMMARY_LIMITATIONS],
      summary: summaryText(this.sourceCount, eventCounts, bullets),
    };
    if (!this.agentSeen) return data;
    // archive.md §5: an agent's open tasks are its own last task list, never its last messages.
    data.open_tasks = (this.todo ?? []).slice(0, AGENT_OPEN_TASKS_LIMIT).map((t) => oneLine(t, AGENT_TASK_MAX_CHARS));
    return fitAgentSummary(data, bullets, this.sourceCount, eventCounts);
  }
}

/** summarize.md §4. */
function summaryText(n: number, counts: Record<string, number>, bullets: string[]): string {
  const types = Object.keys(counts).sort();
  const countText = types.map((t) => `${t}=${counts[t]}`).join(", ");
  const lines = bullets.length > 0 ? bullets.map((b) => `- ${b}`).join("\n") : "- none recorded";
  return etrim(`Forked ${n} replayed events (${countText}).\nRecent forked conversational facts:\n${lines}`);
}

// ---------------------------------------------------------------------------------------------------
// §7 Model-assisted mode

/** summarize.md §7 step 2. */
export function summaryPrompt(data: BranchSummaryData, excerpts: string[]): string {
  const latest = excerpts.slice(-PROMPT_EXCERPTS_LIMIT);
  return [
    "You are summarizing the inherited prefix of a forked agent session so that work can continue in the child session.",
    "Write a short factual summary: the goal, what was done, files involved, and open tasks. Do not invent facts.",
    "",
    renderBranchSummaryText(data),
    "",
    "Conversation excerpts (oldest first):",
    latest.length > 0 ? latest.map((e) => `- ${e}`).join("\n") : "- none recorded",
    "",
  ].join("\n");
}

export interface ModelCommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Where the command's stderr goes (ours). */
  stderr?: Writable;
  signal?: AbortSignal;
}

export type ModelCommandResult = { ok: true; output: Buffer; elapsedMs: number } | { ok: false; reason: ModelFallbackReason; elapsedMs: number };

/** setTimeout fires at once for delays above 2^31−1 ms; longer waits are capped there (~24 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * After the command has exited and closed its stdout, how long its stderr may still take to drain. A
 * process it left behind may hold stderr open for good; what the command itself wrote is in the pipe.
 */
export const MODEL_STDERR_DRAIN_MS = 200;

/**
 * summarize.md §7 step 3: run `sh -c CMD` with the prompt on stdin and capture up to 1 MiB of stdout.
 * The command runs in its own process group so that a timeout ends it and everything it started.
 *
 * Its answer is complete when it has exited and its stdout has ended; stderr is forwarded, not waited
 * for. Once the answer cannot count (a timeout, too much output, an abort) its stdout is no longer read,
 * and once the command is gone every pipe to it is closed: a process that left the group (setsid, a
 * daemon) and holds a pipe can neither keep us waiting nor keep this process alive.
 */
export function runModelCommand(cmd: string, prompt: string, options: ModelCommandOptions): Promise<ModelCommandResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve, reject) => {
    let failure: ModelFallbackReason | null = null;
    let settled = false;
    const chunks: Buffer[] = [];
    let bytes = 0;
    let exitCode: number | null | undefined;
    let stdoutClosed = false;
    let termTimer: NodeJS.Timeout | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;

    // The POSIX shell where system(3) finds it: not whatever `sh` the command's PATH (perhaps `.`, the Workspace) names first.
    const child = spawn("/bin/sh", ["-c", cmd], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"], detached: true });

    const signalGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const groupAlive = (): boolean => {
      if (child.pid === undefined) return false;
      try {
        process.kill(-child.pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const closePipes = () => {
      child.stdin.destroy();
      child.stdout.destroy();
      child.stderr.destroy();
    };
    const stop = (reason: ModelFallbackReason) => {
      failure ??= reason;
      // Nothing more it writes can count: a writer past the bound gets a broken pipe instead of being drained.
      child.stdout.destroy();
      if (killTimer !== undefined) return;
      signalGroup("SIGTERM");
      killTimer = setTimeout(() => {
        signalGroup("SIGKILL");
        closePipes();
      }, MODEL_KILL_GRACE_MS);
    };
    const onAbort = () => {
      signalGroup("SIGKILL");
      finish(() => reject(options.signal!.reason));
    };
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(termTimer);
      // An armed SIGKILL still comes (§7: SIGKILL 2 s after SIGTERM): a process of the group that ignores
      // SIGTERM and holds none of the pipes does not outlive a timeout because the command itself ended.
      // Only a group with nobody left in it needs none (and then this process need not wait for it).
      if (killTimer !== undefined && !groupAlive()) clearTimeout(killTimer);
      clearTimeout(drainTimer);
      options.signal?.removeEventListener("abort", onAbort);
      closePipes();
      settle();
    };
    const result = () => {
      finish(() => {
        if (failure !== null) return resolve({ ok: false, reason: failure, elapsedMs: elapsed() });
        if (exitCode !== 0) return resolve({ ok: false, reason: "nonzero_exit", elapsedMs: elapsed() });
        resolve({ ok: true, output: Buffer.concat(chunks, bytes), elapsedMs: elapsed() });
      });
    };
    /** The command has exited and its stdout is closed: settle once stderr has drained, or soon after. */
    const maybeSettle = () => {
      if (exitCode === undefined || !stdoutClosed || drainTimer !== undefined) return;
      clearTimeout(termTimer); // the answer is in: a timeout now would not be the command's
      drainTimer = setTimeout(result, MODEL_STDERR_DRAIN_MS);
    };

    child.on("error", () => finish(() => resolve({ ok: false, reason: "spawn_failed", elapsedMs: elapsed() })));
    child.on("exit", (code) => {
      exitCode = code;
      maybeSettle();
    });
    // Every pipe closed after the exit: nothing is left to wait for.
    child.on("close", result);
    // The command may ignore its stdin: a broken pipe is not a failure.
    child.stdin.on("error", () => undefined);
    child.stdin.end(prompt, "utf8");
    child.stdout.on("data", (chunk: Buffer) => {
      if (failure !== null) return;
      bytes += chunk.length;
      if (bytes > MODEL_OUTPUT_MAX_BYTES) {
        chunks.length = 0;
        stop("output_too_large");
        return;
      }
      chunks.push(chunk);
    });
    child.stdout.on("close", () => {
      stdoutClosed = true;
      maybeSettle();
    });
    const stderr = options.stderr ?? process.stderr;
    child.stderr.on("data", (chunk: Buffer) => stderr.write(chunk));

    termTimer = setTimeout(() => stop("timeout"), Math.min(options.timeoutMs, MAX_TIMER_MS));
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface ModelSummaryOptions {
  cmd: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  childSessionId: string;
  timeoutMs?: number;
  stderr?: Writable;
  signal?: AbortSignal;
  warn?: SummaryWarn;
}

export type SummaryWarn = (code: string, text: string, details?: Record<string, unknown>) => void;

/** summarize.md §7 steps 2–5: ask the command for the summary text, or fall back to the deterministic data. */
export async function modelAssistedData(data: BranchSummaryData, excerpts: string[], options: ModelSummaryOptions): Promise<BranchSummaryData> {
  const env: NodeJS.ProcessEnv = {
    ...options.env,
    PIXIR_SUMMARY_KIND: "branch_summary",
    PIXIR_SESSION_ID: options.childSessionId,
    PIXIR_PARENT_SESSION_ID: str(termOfJs(data.parent_session_id)),
  };
  const result = await runModelCommand(options.cmd, summaryPrompt(data, excerpts), {
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS,
    stderr: options.stderr,
    signal: options.signal,
  });
  let reason: ModelFallbackReason | null = null;
  let text = "";
  if (!result.ok) reason = result.reason;
  else if (!isUtf8(result.output)) reason = "invalid_utf8";
  else {
    text = result.output.toString("utf8").trim();
    if (text === "") reason = "empty_output";
  }
  if (!result.ok || reason !== null) {
    const why = reason!;
    options.warn?.("model_assisted_fallback", why, { reason: why });
    return { ...data, model_assisted_fallback: true, model_assisted_fallback_reason: why };
  }
  const summary = truncate(text, MODEL_SUMMARY_MAX_BYTES);
  return {
    ...data,
    strategy: MODEL_SUMMARY,
    summary,
    limitations: [...MODEL_SUMMARY_LIMITATIONS],
    model_checkpoint: {
      command_sha256: `sha256:${createHash("sha256").update(options.cmd, "utf8").digest("hex")}`,
      elapsed_ms: result.elapsedMs,
      output_bytes: result.output.length,
      truncated: summary !== text,
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// §1 and envelope-and-log.md §11.2: the stream stage

export { SUMMARY_FORMATS, type SummaryFormat };

export interface SummarizeOptions {
  /** The Workspace: a compact share_v1 prefix is resolved from the parent there; the model runs there. */
  ws: string;
  format?: SummaryFormat;
  modelCmd?: string;
  timeoutMs?: number;
  /** The model command's environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Where the model command's stderr and default warnings go (default: process.stderr). */
  stderr?: Writable;
  signal?: AbortSignal;
  warn?: SummaryWarn;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

interface StreamHeader {
  event: PixirEvent;
  text: string;
  childId: string;
  parentId: string;
  n: number;
  toSeq: number;
  strategy: ForkStrategy;
  digest: string;
}

/** summarize.md §1: the first Event must be a well-formed session_fork at seq 0. */
function readStreamHeader(e: InputEvent): StreamHeader {
  const expected = "a session_fork event at seq 0";
  if (e.value.type !== "session_fork") throw integrityError("missing_fork_header", expected, e.value.type, e.lineNo);
  if (e.value.seq !== 0) throw integrityError("missing_fork_header", expected, e.value.seq ?? null, e.lineNo);
  requireStamped(e);
  const event = stampedEvent(e);
  assertSessionId(event.session_id, "session_id");
  const d = event.data;
  assertSessionId(d.parent_session_id, "parent_session_id");
  const malformed = (what: string) => integrityError("missing_fork_header", "a session_fork header with valid data", what, e.lineNo);
  if (!isSeq(d.replay_event_count)) throw malformed("replay_event_count");
  if (!isSeq(d.forked_to_seq)) throw malformed("forked_to_seq");
  if (d.strategy !== "replay_v1" && d.strategy !== "share_v1") throw malformed("strategy");
  if (typeof d.prefix_digest !== "string" || !DIGEST.test(d.prefix_digest)) throw malformed("prefix_digest");
  return {
    event,
    text: e.text,
    childId: event.session_id as string,
    parentId: d.parent_session_id,
    n: d.replay_event_count,
    toSeq: d.forked_to_seq,
    strategy: d.strategy,
    digest: d.prefix_digest,
  };
}

/** A compact share_v1 stream: the prefix comes from the parent through the one loader (fork.md §6). */
async function addSharedPrefix(h: StreamHeader, builder: BranchSummaryBuilder, ws: string, signal: AbortSignal | undefined): Promise<void> {
  const parent = await openHistory(ws, h.parentId, {
    notFound: () => new PixirError("fork_parent_missing", undefined, { session_id: h.childId, parent_session_id: h.parentId, depth: 1 }),
  });
  const digest = new PrefixDigest();
  for await (const item of abortable(parent.items(), signal)) {
    if (!isInherited(item.event, h.toSeq)) continue;
    digest.addItem(item);
    if (digest.count <= h.n) builder.add(inheritedItem(item, h.event.id!, h.childId, digest.count).event);
  }
  const actual = digest.digest();
  if (digest.count !== h.n || actual !== h.digest) throw prefixMismatch(h.childId, h.parentId, { digest: h.digest, count: h.n }, { digest: actual, count: digest.count });
}

/**
 * summarize.md §1: pass a fork stream through and append its branch_summary. Input is raw NDJSON in
 * chunks of any size; output is complete lines. The last input line is held back and written only with
 * the summary (envelope-and-log.md §11.2), so a failure here always leaves the stream short downstream.
 * With `format: "text"` only the rendering of the summary data is produced.
 */
export async function* summarizeStage(input: AsyncIterable<Buffer | string>, options: SummarizeOptions): AsyncGenerator<string | Buffer> {
  const passThrough = (options.format ?? "ndjson") === "ndjson";
  let header: StreamHeader | null = null;
  let builder: BranchSummaryBuilder | null = null;
  const streamed = new PrefixDigest();
  /** Set with the header. */
  let seqs: ForkStreamSeqs | null = null;
  let lastLine = 0;
  let lineNo = 0;
  let childId = Buffer.alloc(0);
  const out = new HeldBackOutput();
  /** What checkLine found in the line at hand. */
  const lineFacts = new LineFacts();

  const admit = (type: string, seq: number) => seqs!.admit(type, seq, lineNo);
  /** A line the byte check did not accept (or the header): decoded in full, passed on as its text. */
  const decodeLine = (raw: RawLine) => {
    const e = decodeInputLine(raw, { nullTs: header !== null })!;
    if (header === null) {
      header = readStreamHeader(e);
      seqs = new ForkStreamSeqs(header.n, header.strategy === "share_v1");
      childId = Buffer.from(header.childId, "utf8");
      builder = summaryBuilder(options);
    } else {
      checkInputSessionId(e.value.session_id, header.childId, e.lineNo);
      requireStamped(e, true);
      const event = stampedEvent(e);
      if (admit(event.type, event.seq!)) {
        streamed.add(event);
        builder!.add(event);
      } else if (event.ts === null) requireStamped(e); // only inherited Events may carry the parent's null ts
    }
    out.text(`${e.text}\n`);
  };

  // stdin in blocks of whole lines: a line our tools wrote is checked where it lies (line-check.ts) and
  // passed on as its bytes; any other is decoded in full.
  for await (const block of abortable(lineBlocksOf(input, { path: STDIN_PATH }), options.signal)) {
    let b = block.bytes;
    let end = block.end;
    if (block.tail) {
      // A last line without its `\n` is read as a line; it is passed on with one.
      b = Buffer.concat([b.subarray(0, end), NEWLINE]);
      end = b.length;
    }
    const utf8 = isUtf8(b.subarray(0, end));
    out.startBlock(b);
    for (let s = 0; s < end; ) {
      const e = b.indexOf(0x0a, s);
      lineNo++;
      if (e === s) {
        out.skip();
        s = e + 1;
        continue;
      }
      lastLine = lineNo;
      if (
        header !== null &&
        checkLine(b, s, e, lineFacts, utf8) >= 0 &&
        stampedOf(b, childId, lineFacts.head)
      ) {
        const type = CANONICAL_TYPES[lineFacts.type]!;
        if (admit(type, lineFacts.seq!)) { // stampedOf: an integer seq
          streamed.addChecked(b, lineFacts);
          builder!.addChecked(type, lineFacts.seq, b, lineFacts.dataStart, lineFacts.dataEnd);
        }
        out.line(s, e + 1);
      } else {
        out.skip();
        decodeLine({ bytes: Buffer.from(b.subarray(s, e)), lineNo, offset: 0, terminated: !block.tail });
      }
      s = e + 1;
    }
    const passed = out.endBlock();
    if (passThrough && passed !== null) yield passed;
  }

  // Assigned in decodeLine, which TypeScript does not follow.
  const h = header as StreamHeader | null;
  if (h === null) throw integrityError("missing_fork_header", "a session_fork event at seq 0", "end of input", null);
  if (seqs!.end()) checkStreamedPrefix(streamed, h, lastLine);
  else await addSharedPrefix(h, builder!, options.ws, options.signal);

  const data = await finishSummary(builder!, h.event, options);
  if (!passThrough) {
    yield `${renderBranchSummaryText(data)}\n`;
    return;
  }
  yield out.held()!;
  yield branchSummaryLine(h.childId, seqs!.next, data);
}

/**
 * The pass-through of summarizeStage: lines in order, as runs of the reused block's bytes or as texts,
 * with the last line so far held back, so that a stage that fails never passes its whole input on
 * (envelope-and-log.md §11.2). Each block's output is one new buffer of its own.
 */
class HeldBackOutput {
  private block: Buffer = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private runStart = -1;
  private runEnd = -1;
  /** Where the last line passed on lies in the block, [lastStart, lastEnd); -1 when it is the last part itself (a text). */
  private lastStart = -1;
  private lastEnd = -1;
  private last: Buffer | null = null;

  startBlock(b: Buffer): void {
    this.block = b;
    this.parts = this.last !== null ? [this.last] : [];
    this.last = null;
    this.lastStart = -1;
  }
  /** `[s, e)` of the block is the next line, passed on as it is. */
  line(s: number, e: number): void {
    if (this.runStart >= 0 && this.runEnd !== s) this.closeRun();
    if (this.runStart < 0) this.runStart = s;
    this.runEnd = e;
    this.lastStart = s;
    this.lastEnd = e;
  }
  /** A line of the block that is not passed on as it is (a blank line, or one passed on as text). */
  skip(): void {
    this.closeRun();
  }
  text(line: string): void {
    this.closeRun();
    this.parts.push(Buffer.from(line, "utf8"));
    this.lastStart = -1;
  }
  /** What the block passes on, the last line held back as a buffer of its own; null when nothing. */
  endBlock(): Buffer | null {
    this.closeRun();
    const tail = this.parts.pop();
    if (tail === undefined || this.lastStart < 0) this.last = tail ?? null;
    else {
      // The last part is the run that ends with the last line (only blank lines may follow it): pass on
      // the run's lines before it, and hold a copy of that line, since the block's buffer is reused.
      const before = tail.length - (this.lastEnd - this.lastStart);
      if (before > 0) this.parts.push(tail.subarray(0, before));
      this.last = Buffer.from(tail.subarray(before));
    }
    const parts = this.parts;
    this.parts = [];
    this.lastStart = -1;
    this.block = Buffer.alloc(0);
    return parts.length === 0 ? null : Buffer.concat(parts);
  }
  held(): Buffer | null {
    return this.last;
  }
  private closeRun(): void {
    if (this.runStart < 0) return;
    this.parts.push(this.block.subarray(this.runStart, this.runEnd));
    this.runStart = -1;
  }
}

/** The summary of a builder fed every source Event: deterministic, or the model's (§6) with its fallback. */
export async function finishSummary(builder: BranchSummaryBuilder, header: PixirEvent, options: SummarizeOptions): Promise<BranchSummaryData> {
  const data = builder.finish(header);
  if (options.modelCmd === undefined) return data;
  return modelAssistedData(data, builder.excerpts(), {
    cmd: options.modelCmd,
    cwd: options.ws,
    env: options.env ?? process.env,
    childSessionId: header.session_id!,
    timeoutMs: options.timeoutMs,
    stderr: options.stderr,
    signal: options.signal,
    warn: options.warn ?? defaultWarn(options.stderr),
  });
}

/** summarize.md §3: the branch_summary Event at the child's seq N+1. */
export function branchSummaryEvent(childId: string, seq: number, data: BranchSummaryData): PixirEvent {
  return { id: newUlid(), session_id: childId, seq, ts: new Date().toISOString(), type: "branch_summary", data: data as unknown as JsonObject };
}

/**
 * The line of a new branch_summary Event, byte for byte what serializeEvent writes for it, with the
 * tool-call list copied from its JSON bytes instead of turned into values and stringified again.
 */
export function branchSummaryLine(childId: string, seq: number, data: BranchSummaryData): Buffer {
  const event = branchSummaryEvent(childId, seq, data);
  const parts: Buffer[] = [];
  let text = `${envelopeHead(event)}{`;
  let first = true;
  // JSON.stringify's own rules for an object of JSON values: own keys in order, undefined left out.
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    text += `${first ? "" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (value instanceof ToolCallList) {
      parts.push(Buffer.from(text, "utf8"), ...value.jsonParts());
      text = "";
    } else text += JSON.stringify(value);
  }
  parts.push(Buffer.from(`${text}}}\n`, "utf8"));
  return Buffer.concat(parts);
}

/** A builder for a summary of `options` (a model prompt keeps more excerpts). */
export function summaryBuilder(options: Pick<SummarizeOptions, "modelCmd">): BranchSummaryBuilder {
  return new BranchSummaryBuilder({ excerptWindow: options.modelCmd !== undefined ? PROMPT_EXCERPTS_LIMIT : undefined });
}

function defaultWarn(stderr: Writable | undefined): SummaryWarn {
  return (code, text) => {
    (stderr ?? process.stderr).write(`warning: ${code}: ${text}\n`);
  };
}
