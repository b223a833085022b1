// archive.md §1: the facts one Log holds about itself, in one pass over its bytes. Most lines are only
// counted from their envelope head (fast/line-head.ts); a line is parsed only when it can hold a fact:
// the first line, lineage, a title record, an import's header, user messages until the first prompt.
import { closeSync, openSync, readSync } from "node:fs";
import { fsPromises } from "../event/lazy-builtins.js";
import { isJsonObject, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { oneLine, typedText } from "../event/injected.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { LineHead, readHead } from "../fast/line-head.js";
import { lineBlocks } from "../store/log-read.js";
import { AGENT_RULES, agentOfData, TITLE_ORDER, type AgentName, type AgentRules, type NamedTitle } from "./agents.js";
import { callTotal, modelCallsOf } from "./model-calls.js";

/** What a Log says about itself; the catalog joins these into SessionFacts (lineage, inherited counts). */
export interface LogScan {
  agent: AgentName | null;
  cwd: string | null;
  /** The title the agent recorded (archive.md §1's per-agent order), before the first-prompt fallback. */
  named_title: string | null;
  first_prompt: string | null;
  started: string | null;
  updated: string | null;
  /**
   * user and assistant messages among the Log's own Events, and their seqs (a share child counts its parent's
   * up to its fork point); the seqs are null where catalog-scans.json did not keep them (no share child needed them).
   */
  messages: number;
  message_seqs: number[] | null;
  /** The Log's own model calls' tokens (archive.md §3, model-calls.ts), or null when it records none. */
  tokens: number | null;
  events: number;
  fork: { parent: string; forked_to_seq: number | null; strategy: string | null; branch: boolean } | null;
  /** child_session_id of this Log's subagent runs. */
  subagents: string[];
  /** The first problem met (an unreadable Log or a line that is not JSON); the facts cover what was read. */
  problem: string | null;
}

const WORKFLOW = CANONICAL_TYPES.indexOf("workflow_event");
const USER = CANONICAL_TYPES.indexOf("user_message");
const ASSISTANT = CANONICAL_TYPES.indexOf("assistant_message");
const SUBAGENT = CANONICAL_TYPES.indexOf("subagent_event");
const FORK = CANONICAL_TYPES.indexOf("session_fork");
const PROVIDER_USAGE = CANONICAL_TYPES.indexOf("provider_usage");
/** A line that may hold a model call: a `provider_usage`, or a source record with a usage (Claude's assistant records). */
const USAGE_KEY = Buffer.from('"usage":{', "utf8");
/** How far into `data` the markers of a workflow_event are looked for (they follow its `event` name). */
const MARKER_WINDOW = 160;
const MARKERS = AGENT_RULES.flatMap((r) => r.markers.map((m) => Buffer.from(m, "utf8")));
const PROVENANCE = new Set(AGENT_RULES.flatMap((r) => r.provenanceOnly));
const EVENT_KEY = Buffer.from('{"event":"', "utf8");

/** Logs up to this size are read whole into a buffer the caller reuses: a Workspace holds thousands of small Logs. */
const WHOLE_READ_MAX = 16 * 1024 * 1024;

/** A buffer one scanner reuses from Log to Log (allocating per Log costs more than reading it). */
export class ScanBuffer {
  bytes: Buffer = Buffer.allocUnsafe(1024 * 1024);
}

/** One Log's own facts, reading its first `size` bytes. */
export async function scanLogFacts(abs: string, size: number, scratch: ScanBuffer = new ScanBuffer()): Promise<LogScan> {
  const scan = new ScanState();
  if (size <= WHOLE_READ_MAX) {
    readWhole(abs, size, scratch, scan);
    return scan.result();
  }
  let file;
  try {
    file = await fsPromises().open(abs, "r");
  } catch (err) {
    scan.problem = (err as NodeJS.ErrnoException).code === "EACCES" ? "permission_denied" : "log_read_failed";
    return scan.result();
  }
  try {
    for await (const block of lineBlocks(file, size)) scan.block(block.bytes, block.end);
  } catch {
    scan.problem ??= "log_read_failed";
  } finally {
    await file.close();
  }
  return scan.result();
}

/** One Log to scan: its path and how many of its bytes. */
export type ScanTask = { abs: string; size: number };

/** A batch's scans in order, one Log after another in one ScanBuffer (a worker's task, or the same here). */
export async function scanBatch(batch: readonly ScanTask[], scratch: ScanBuffer): Promise<LogScan[]> {
  const out: LogScan[] = [];
  for (const { abs, size } of batch) out.push(await scanLogFacts(abs, size, scratch));
  return out;
}

/**
 * Where the next `"usage":{` lies in a block (-1: none left), kept from line to line: a search starts
 * again only once a line has passed the last one found, so the block is searched once in all (a search
 * per line, or a compare at every quote, cost a third of a cold scan of Claude Logs).
 */
class KeyCursor {
  private view: Buffer = Buffer.alloc(0);
  /** -2: not searched yet in this block. */
  private at = -2;
  constructor(private readonly key: Buffer) {}
  reset(b: Buffer, end: number): void {
    this.view = b.subarray(0, end);
    this.at = -2;
  }
  /** The key occurs in `[from, to)` of the block. */
  within(from: number, to: number): boolean {
    if (this.at !== -1 && this.at < from) this.at = this.view.indexOf(this.key, from);
    return this.at !== -1 && this.at + this.key.length <= to;
  }
}

function readWhole(abs: string, size: number, scratch: ScanBuffer, scan: ScanState): void {
  if (scratch.bytes.length < size) scratch.bytes = Buffer.allocUnsafe(size);
  let fd: number;
  try {
    fd = openSync(abs, "r");
  } catch (err) {
    scan.problem = (err as NodeJS.ErrnoException).code === "EACCES" ? "permission_denied" : "log_read_failed";
    return;
  }
  let have = 0;
  try {
    for (let n = -1; have < size && n !== 0; have += n) n = readSync(fd, scratch.bytes, have, size - have, have);
  } catch {
    scan.problem ??= "log_read_failed";
  } finally {
    closeSync(fd);
  }
  scan.block(scratch.bytes, have);
}

/** The scan of a Log with no bytes read: what a scan cut short by a closed worker pool stands for. */
export function emptyScan(): LogScan {
  return new ScanState().result();
}

class ScanState {
  private readonly head = new LineHead();
  private readonly usageKey = new KeyCursor(USAGE_KEY);
  private agent: AgentRules | null = null;
  private cwd: string | null = null;
  private readonly titles = new Map<string, NamedTitle>();
  private readonly summaries: NamedTitle[] = [];
  private leaf: string | null = null;
  private firstPrompt: string | null = null;
  private started: string | null = null;
  private updated: string | null = null;
  private readonly messageSeqs: number[] = [];
  private events = 0;
  private fork: LogScan["fork"] = null;
  private readonly subagents = new Set<string>();
  /** The Events that may hold model calls, their bulky text dropped, for model-calls.ts at the end. */
  private readonly usageEvents: PixirEvent[] = [];
  problem: string | null = null;

  block(b: Buffer, end: number): void {
    this.usageKey.reset(b, end);
    let s = 0;
    while (s < end) {
      let e = b.indexOf(0x0a, s);
      if (e < 0 || e > end) e = end;
      if (e > s) this.line(b, s, e);
      s = e + 1;
    }
  }

  private line(b: Buffer, s: number, e: number): void {
    const t = readHead(b, s, e, this.head);
    if (t < 0) return this.parsedLine(b, s, e);
    const first = this.events === 0;
    this.events++;
    if (t === WORKFLOW) {
      const name = this.eventName(b, e);
      if (!PROVENANCE.has(name)) this.stampBytes(b);
      if (first || this.hasMarker(b, e) || this.wantsCwd()) this.facts(t, this.head.seq, this.dataAt(b, s, e));
      return;
    }
    this.stampBytes(b);
    if (t === USER || t === ASSISTANT) this.messageSeqs.push(this.head.seq ?? -1);
    const usage = t === PROVIDER_USAGE || (this.agent?.agent === "claude" && t !== USER && this.usageKey.within(this.head.dataOpen, e));
    const wanted = first || usage || t === FORK || t === SUBAGENT || (t === USER && this.firstPrompt === null) || this.wantsCwd();
    if (!wanted) return;
    const data = this.dataAt(b, s, e);
    this.facts(t, this.head.seq, data);
    if (usage) this.keepUsage(t, this.head.seq, b.toString("latin1", this.head.tsStart, this.head.tsEnd), data);
  }

  private keepUsage(t: number, seq: number | null, ts: string | null, data: JsonObject): void {
    const claude = isJsonObject(data.claude) ? data.claude : null;
    const record = claude !== null && isJsonObject(claude.record) ? claude.record : null;
    const message = record !== null && isJsonObject(record.message) ? record.message : null;
    const slim = message === null ? data : { ...data, text: undefined, claude: { ...claude, record: { ...record, message: { ...message, content: [] } } } };
    this.usageEvents.push({ id: null, session_id: null, seq, ts, type: CANONICAL_TYPES[t]!, data: slim });
  }

  /** A line in another layout than our writers': decoded in full (or skipped as a problem). */
  private parsedLine(b: Buffer, s: number, e: number): void {
    let v: unknown;
    try {
      v = JSON.parse(b.toString("utf8", s, e));
    } catch {
      this.problem ??= "corrupt_log_line";
      return;
    }
    if (!isJsonObject(v) || typeof v.type !== "string") {
      this.problem ??= "corrupt_log_line";
      return;
    }
    this.events++;
    const t = CANONICAL_TYPES.indexOf(v.type as (typeof CANONICAL_TYPES)[number]);
    const data = isJsonObject(v.data) ? v.data : {};
    if (typeof v.ts === "string" && !(t === WORKFLOW && PROVENANCE.has(String(data.event)))) this.stamp(v.ts);
    const seq = typeof v.seq === "number" ? v.seq : null;
    if (t === USER || t === ASSISTANT) this.messageSeqs.push(seq ?? -1);
    this.facts(t, seq, data);
    if (t >= 0 && (t === PROVIDER_USAGE || JSON.stringify(data).includes('"usage":{'))) this.keepUsage(t, seq, typeof v.ts === "string" ? v.ts : null, data);
  }

  private dataAt(b: Buffer, s: number, e: number): JsonObject {
    try {
      const v = JSON.parse(b.toString("utf8", s, e)) as JsonObject;
      return isJsonObject(v.data) ? v.data : {};
    } catch {
      this.problem ??= "corrupt_log_line";
      return {};
    }
  }

  private eventName(b: Buffer, e: number): string {
    const at = this.head.dataOpen;
    if (b.compare(EVENT_KEY, 0, EVENT_KEY.length, at, Math.min(at + EVENT_KEY.length, e)) !== 0) return "";
    const start = at + EVENT_KEY.length;
    const close = b.indexOf(0x22, start);
    return close < 0 || close > e ? "" : b.toString("latin1", start, close);
  }

  private hasMarker(b: Buffer, e: number): boolean {
    const windowEnd = Math.min(e, this.head.dataOpen + MARKER_WINDOW);
    const window = b.subarray(this.head.dataOpen, windowEnd);
    return MARKERS.some((m) => window.includes(m));
  }

  /** Claude keeps the cwd on every record: read lines until one names it. */
  private wantsCwd(): boolean {
    return this.cwd === null && this.agent?.agent === "claude";
  }

  /** stamp() of the line's ts as latin1, compared in place: a string is made only for a new first or last time. */
  private stampBytes(b: Buffer): void {
    const { tsStart, tsEnd } = this.head;
    // Times mostly grow line by line: a time past the last is not before the first (one compare, not two).
    if (this.updated === null || this.started === null) this.stamp(b.toString("latin1", tsStart, tsEnd));
    else if (latin1Compare(b, tsStart, tsEnd, this.updated) > 0) this.updated = b.toString("latin1", tsStart, tsEnd);
    else if (latin1Compare(b, tsStart, tsEnd, this.started) < 0) this.started = b.toString("latin1", tsStart, tsEnd);
  }

  private stamp(ts: string): void {
    if (this.started === null || ts < this.started) this.started = ts;
    if (this.updated === null || ts > this.updated) this.updated = ts;
  }

  private facts(t: number, seq: number | null, data: JsonObject): void {
    this.agent ??= agentOfData(data);
    const rules = this.agent;
    if (rules !== null) {
      this.cwd ??= rules.cwdOf(data);
      this.leaf ??= rules.leafOf(data);
      const title = rules.titleOf(data);
      if (title?.slot === "summary") this.summaries.push(title);
      else if (title !== null) this.titles.set(title.slot, title); // the newest of each kind wins
    }
    if (t === FORK && seq === 0 && typeof data.parent_session_id === "string") this.fork = forkOf(data);
    if (t === SUBAGENT && typeof data.child_session_id === "string" && data.child_session_id !== "") this.subagents.add(data.child_session_id);
    if (this.firstPrompt !== null) return;
    const prompt = t === USER ? (typeof data.text === "string" ? data.text : null) : t === WORKFLOW ? (rules?.promptOf(data) ?? null) : null;
    const typed = prompt === null ? null : typedText(prompt, t === USER ? (rules?.userFlags(data) ?? {}) : {});
    if (typed !== null) this.firstPrompt = oneLine(typed);
  }

  private namedTitle(): string | null {
    for (const slot of TITLE_ORDER) {
      if (slot === "summary") {
        const leafSummary = this.summaries.findLast((s) => this.leaf !== null && s.leaf === this.leaf);
        if (leafSummary !== undefined) return oneLine(leafSummary.text);
        continue;
      }
      const t = this.titles.get(slot);
      if (t !== undefined) return oneLine(t.text);
    }
    return null;
  }

  private tokens(): number | null {
    if (this.usageEvents.length === 0) return null;
    const calls = modelCallsOf(this.usageEvents, this.agent?.agent ?? "pixir");
    return calls.length === 0 ? null : calls.reduce((sum, c) => sum + callTotal(c), 0);
  }

  result(): LogScan {
    return {
      agent: this.agent?.agent ?? null,
      cwd: this.cwd,
      named_title: this.namedTitle(),
      first_prompt: this.firstPrompt,
      started: this.started,
      updated: this.updated,
      messages: this.messageSeqs.length,
      message_seqs: this.messageSeqs,
      tokens: this.tokens(),
      events: this.events,
      fork: this.fork,
      subagents: [...this.subagents],
      problem: this.problem,
    };
  }
}

/** The order of `b[s, e)` read as latin1 against `text`, as `<` and `>` on the two strings would give it. */
export function latin1Compare(b: Buffer, s: number, e: number, text: string): number {
  const n = Math.min(e - s, text.length);
  for (let i = 0; i < n; i++) {
    const d = b[s + i]! - text.charCodeAt(i);
    if (d !== 0) return d;
  }
  return e - s - text.length;
}

/** A first-line session_fork: the parent, the fork point, and whether an agent's import made it as a branch. */
function forkOf(data: JsonObject): LogScan["fork"] {
  const agentData = AGENT_RULES.map((r) => data[r.key]).find(isJsonObject);
  const forkKind = typeof agentData?.fork_kind === "string" ? agentData.fork_kind : "";
  return {
    parent: data.parent_session_id as string,
    forked_to_seq: typeof data.forked_to_seq === "number" ? data.forked_to_seq : null,
    strategy: typeof data.strategy === "string" ? data.strategy : null,
    // A rewind or an edited prompt (Claude's branches, and a transcript's second root) against a fork someone made.
    // Gemini's rewinds, replacements and edits, and opencode's pending revert, are branches too.
    branch: forkKind === "claude_branch" || forkKind === "claude_root" || agentData?.synthetic === "branch_fork" || agentData?.synthetic === "reverted",
  };
}

