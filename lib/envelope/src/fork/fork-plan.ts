// fork.md §3.1, §4.3, §10: what one pass over the parent History learns for a fork plan (counts, digest,
// open tool calls, safe cut points, resources), and the parent source both passes read.
import { crc32 } from "node:zlib";
import { IdSet } from "../event/id-set.js";
import { canonicalJson, isReplayType, type CanonicalLine, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { checkedCallId } from "../fast/decode-line.js";
import type { LineFacts } from "../fast/line-check.js";
import { T_FORK } from "../fast/line-head.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { PixirError } from "../event/errors.js";
import { assertWritable } from "../lines/input.js";
import { PrefixDigest, type History, type HistoryItem } from "../store/loader.js";
import { checkDescriptor, type ResourceRef } from "../store/resources.js";
import { assertSessionId } from "../event/session-id.js";

/** What a pass over the parent History learns (fork.md §3.1 steps 5–8). */
export interface PrefixFacts {
  toSeq: number;
  maxSeq: number | null;
  eventCount: number;
  fromSeq: number | null;
  prefixDigest: string;
  openToolCalls: string[];
  forkRootSessionId: string;
  nearestSafeSeq: number | null;
  nextSafeSeq: number | null;
  resourceCount: number;
  /** sha256 over the inherited lines as read, so a second pass can prove it read the same bytes. */
  fingerprint: string;
  /** The distinct resource payloads the inherited Events reference (fork.md §7). */
  resources: ResourceRef[];
}


/**
 * Tool calls left without a result, in the order of their first call, each id once. Without `results`
 * only a later tool_result closes a call (cli.md §12.12, `pixir repair`). With it, as fork.md §4.3 asks
 * of open_tool_calls, a result closes every call of its id wherever it stands, earlier ones too: the
 * set remembers the ids of the results so far.
 */
export class OpenCalls {
  private readonly open = new Map<string, true>();
  constructor(private readonly results: IdSet | null = null) {}
  add(e: PixirEvent, canonical?: CanonicalLine | null): void {
    if (e.type !== "tool_call" && e.type !== "tool_result") return;
    // A checked line names its call id without parsing data.
    this.note(e.type, canonical ? canonical.callId : e.data.call_id);
  }
  /** A tool_call opens `callId` (unless a result of it was seen), a tool_result closes it; other types and a non-string id change nothing. */
  note(type: string, callId: unknown): void {
    if (typeof callId !== "string") return;
    if (type === "tool_call") {
      if (this.results === null || !this.results.has(callId)) this.open.set(callId, true);
    } else if (type === "tool_result") {
      this.open.delete(callId);
      this.results?.add(callId);
    }
  }
  get size(): number {
    return this.open.size;
  }
  list(): string[] {
    return [...this.open.keys()];
  }
}

/**
 * Distinct resource payloads an inherited Event references (fork.md §7 step 1). The spec names
 * user_message; we read `data.resources` of every inherited Event, because imported pi tool results
 * carry images too, and a child must never reference a payload it does not have.
 */
export function resourceDescriptors(e: Pick<PixirEvent, "data">, seen: Set<string>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  if (!Array.isArray(e.data.resources)) return out;
  for (const d of e.data.resources as unknown[]) {
    if (typeof d !== "object" || d === null || Array.isArray(d)) continue;
    const r = d as Record<string, unknown>;
    if (typeof r.resource_id !== "string" || seen.has(r.resource_id)) continue;
    seen.add(r.resource_id);
    if (typeof r.content_sha256 !== "string" || r.content_sha256 === "") continue;
    out.push(r);
  }
  return out;
}

const FINGERPRINT_STAGE = 1 << 20;

/**
 * A cheap identity of the inherited lines: a CRC-32 over their raw bytes (or, for Events resolved from
 * a share parent, their canonical JSON), each followed by `\n`, plus their count. It guards against a
 * parent rewritten by accident between two passes of one process; the prefix_digest (SHA-256) remains
 * the real check. Lines are staged and checksummed in large blocks: a call per line costs more.
 */
export class LineFingerprint {
  private crc = 0;
  private readonly stage = Buffer.allocUnsafe(FINGERPRINT_STAGE);
  private staged = 0;
  count = 0;
  add(e: PixirEvent, line?: Buffer): void {
    if (line !== undefined) this.addLine(line);
    else this.addLine(Buffer.from(canonicalJson([e.type, e.ts, e.data])));
  }
  addLine(line: Buffer): void {
    this.addRange(line, 0, line.length);
  }
  /** Add the line `b[s, e)`. */
  addRange(b: Buffer, s: number, e: number): void {
    const length = e - s;
    if (this.staged + length + 1 > FINGERPRINT_STAGE) {
      this.flush();
      if (length + 1 > FINGERPRINT_STAGE) {
        this.crc = crc32("\n", crc32(b.subarray(s, e), this.crc));
        this.count++;
        return;
      }
    }
    this.staged += b.copy(this.stage, this.staged, s, e);
    this.stage[this.staged++] = 0x0a;
    this.count++;
  }
  digest(): string {
    this.flush();
    return `crc32:${this.crc.toString(16).padStart(8, "0")}:${this.count}`;
  }
  private flush(): void {
    if (this.staged === 0) return;
    this.crc = crc32(this.stage.subarray(0, this.staged), this.crc);
    this.staged = 0;
  }
}

/**
 * Learn the plan facts from the parent History in one pass. Without `toSeq`, every replay-type Event
 * with an integer seq is inherited (to_seq is the greatest of them), so one pass suffices either way.
 */
export class PrefixScanner {
  private readonly digest: PrefixDigest;
  /** Calls open at each point of the History (which comes in seq order): the safe cut points of §10. */
  private readonly calls = new OpenCalls(new IdSet());
  /** The calls open at the cut, taken at the first replay Event past it: the header's open_tool_calls. */
  private openAtCut: string[] | null = null;
  private readonly seenResources = new Set<string>();
  private readonly fingerprint = new LineFingerprint();
  private readonly refs: ResourceRef[] = [];
  private maxSeq: number | null = null;
  private maxReplaySeq: number | null = null;
  private fromSeq: number | null = null;
  private forkRoot: string | null = null;
  private lastSafe: number | null = null;
  private nextSafe: number | null = null;

  /**
   * `fingerprintLines` false: the caller fingerprints what it read itself (parent-bytes.ts) and sets
   * `fingerprint`.
   */
  constructor(
    private readonly parentId: string,
    private readonly requestedToSeq: number | undefined,
    private readonly fingerprintLines = true,
  ) {
    this.digest = new PrefixDigest();
  }

  /** Inherited Events seen so far. */
  get inheritedCount(): number {
    return this.digest.count;
  }

  /** A digest that goes on from the inherited Events so far, or from all but the last (PrefixDigest.copy). */
  digestCopy(withoutLast: boolean): PrefixDigest {
    return this.digest.copy(withoutLast);
  }

  /**
   * Whether this Event is inherited (so the caller may spool it for the emitting pass). `line` is its
   * physical line; `canonical`, what the byte check found there, spares parsing `data`.
   */
  add(e: PixirEvent, line?: Buffer, canonical?: CanonicalLine | null, lineNo: number | null = null): boolean {
    if (this.forkRoot === null && e.type === "session_fork") this.noteForkRoot(e.data);
    const callId = e.type === "tool_call" || e.type === "tool_result" ? (canonical ? canonical.callId : e.data.call_id) : undefined;
    if (!this.admit(e.type, e.seq, callId)) return false;
    // The child will hold this Event: it must be writable (the byte check's lines always are).
    assertWritable(e, line, lineNo);
    this.digest.addLine(e, line, canonical);
    this.fingerprint.add(e, line);
    if (!canonical || canonical.hasResources) this.noteResources(e);
    return true;
  }

  /**
   * add() for the line `b[s, e)` that checkLine accepted into `facts`, without making an Event: `data`
   * is parsed only for the rare lines that need it.
   */
  addChecked(b: Buffer, s: number, e: number, facts: LineFacts): boolean {
    const type = CANONICAL_TYPES[facts.type]!;
    const parsedData = () => JSON.parse(b.toString("utf8", facts.dataStart, facts.dataEnd)) as JsonObject;
    if (this.forkRoot === null && facts.type === T_FORK) this.noteForkRoot(parsedData());
    if (!this.admit(type, facts.seq, checkedCallId(b, facts))) return false;
    this.digest.addChecked(b, facts);
    if (this.fingerprintLines) this.fingerprint.addRange(b, s, e);
    if (facts.hasResources) this.noteResources({ data: parsedData() });
    return true;
  }

  private noteForkRoot(data: JsonObject): void {
    const root = data.fork_root_session_id;
    this.forkRoot = typeof root === "string" ? root : "";
  }

  private noteResources(e: Pick<PixirEvent, "data">): void {
    for (const d of resourceDescriptors(e, this.seenResources)) this.refs.push(checkDescriptor(d));
  }

  /** The bookkeeping of every Event; whether it is inherited. The caller then digests an inherited one. */
  private admit(type: string, seq: number | null, callId: unknown): boolean {
    if (seq === null) return false;
    if (this.maxSeq === null || seq > this.maxSeq) this.maxSeq = seq;
    if (!isReplayType(type)) return false;
    if (this.maxReplaySeq === null || seq > this.maxReplaySeq) this.maxReplaySeq = seq;
    const cut = this.requestedToSeq;
    if (cut !== undefined && seq > cut && this.openAtCut === null) this.openAtCut = this.calls.list();
    this.calls.note(type, callId);
    const safe = this.calls.size === 0;
    if (cut !== undefined && seq > cut) {
      if (safe && this.nextSafe === null) this.nextSafe = seq;
      return false;
    }
    // The last replay seq at or below the cut that is safe; finish() keeps it only if below the cut.
    if (safe) this.lastSafe = seq;
    if (this.fromSeq === null) this.fromSeq = seq;
    return true;
  }

  finish(): PrefixFacts {
    const toSeq = this.requestedToSeq ?? this.maxReplaySeq ?? 0;
    if (this.requestedToSeq !== undefined && (this.maxSeq === null || this.requestedToSeq > this.maxSeq)) {
      throw new PixirError("invalid_args", "to_seq is above the parent's last seq", {
        field: "to_seq",
        to_seq: this.requestedToSeq,
        max_seq: this.maxSeq,
        next_actions: ["omit --to-seq to fork the full replayable prefix", "pass a non-negative integer no greater than max_seq"],
      });
    }
    const root = this.forkRoot === null || this.forkRoot === "" ? this.parentId : this.forkRoot;
    assertSessionId(root, "fork_root_session_id");
    const open = this.openAtCut ?? this.calls.list();
    // With open calls at the cut, the cut itself is unsafe, so lastSafe (if any) lies below it.
    return {
      toSeq,
      maxSeq: this.maxSeq,
      eventCount: this.digest.count,
      fromSeq: this.fromSeq,
      prefixDigest: this.digest.digest(),
      openToolCalls: open,
      forkRootSessionId: root,
      nearestSafeSeq: open.length > 0 && this.lastSafe !== null && this.lastSafe < toSeq ? this.lastSafe : null,
      nextSafeSeq: this.nextSafe,
      resourceCount: this.refs.length,
      fingerprint: this.fingerprint.digest(),
      resources: this.refs,
    };
  }
}

/** A parent History that can be read twice: the loader (--parent) or a spool of stdin. */
export interface ParentSource {
  parentId: string;
  facts: PrefixFacts;
  /** The inherited Events, in order, as HistoryItems of the parent. */
  inherited(): AsyncGenerator<HistoryItem>;
  /** The parent's resolved History, when it was read from the Workspace. */
  history?: History;
  /**
   * When the parent's lines can be copied (a pass-through Log read in History order, or the spool of a
   * piped parent): the child's inherited lines made from the parent's bytes, in blocks of whole lines
   * (copyInheritedBlocks), checked to be the lines the plan read.
   */
  inheritedBlocks?: (forkEventId: string, childId: string) => AsyncGenerator<Buffer>;
  dispose(): void;
}

/** The parent's inherited lines differ from those the plan was made from: it changed meanwhile. */
export function parentChangedError(parent: Pick<ParentSource, "parentId" | "facts">, childId: string, count: number): PixirError {
  return new PixirError("fork_prefix_mismatch", "parent log changed while it was being forked", {
    session_id: childId,
    parent_session_id: parent.parentId,
    expected_digest: parent.facts.prefixDigest,
    actual_digest: null,
    expected_count: parent.facts.eventCount,
    actual_count: count,
  });
}


/** Sees each inherited Event of the plan's pass, with its child seq (1..N), in History order. */
export type InheritedObserver = (event: PixirEvent, childSeq: number) => void;

/** The same, fed from the bytes of a line checkLine accepted: its type, and its `data` in `b[dataStart, dataEnd)`. */
export type CheckedObserver = (type: PixirEvent["type"], childSeq: number, b: Buffer, dataStart: number, dataEnd: number) => void;
