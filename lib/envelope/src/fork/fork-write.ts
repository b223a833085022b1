// fork.md §5, envelope-and-log.md §11.3: `pixir-log write` of a fork stream. The stream verifies itself
// (header counts, contiguous seqs, prefix digest) and is checked against the parent in the Workspace;
// the child Log appears only when all of it holds.
import { isUtf8 } from "node:buffer";
import type { RawLine } from "../lines/codec.js";
import { isSeq, type PixirEvent } from "../event/envelope.js";
import { checkedLine } from "../fast/decode-line.js";
import { PixirError, prefixMismatch } from "../event/errors.js";
import { forkPlan, type ForkPlan } from "./fork.js";
import type { ForkStrategy } from "../event/vocabulary.js";
import { resourceDescriptors } from "./fork-plan.js";
import { ParentPrefixCursor, parentFromOurLog } from "./parent-log.js";
import { checkInputSessionId, checkStreamedPrefix, decodeInputLine, ForkStreamSeqs, inputLine, integrityError, requireIsoTs, requireStamped, stampedEvent, StreamIds, type InputBlock, type InputEvent, type InputStream } from "../lines/input.js";
import { checkLine, LineFacts } from "../fast/line-check.js";
import { IS_REPLAY, readHead, stampedOf, TS_KEY_LENGTH } from "../fast/line-head.js";
import { acquireLease, type WriterLease } from "../store/lease.js";
import { assertShareChildDepth, isInherited, openHistory, PrefixDigest, type History } from "../store/loader.js";
import { createLogAtomically, type LineSink } from "../store/log-write.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { checkDescriptor, copyResources, PayloadWrites, type ResourceRef } from "../store/resources.js";
import { assertSessionId } from "../event/session-id.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";

export type ForkWriteResult = ForkPlan;

export interface ForkWriteOptions {
  program: string;
  env: NodeJS.ProcessEnv;
  dryRun?: boolean;
  takeOverDeadWriter?: boolean;
  signal?: AbortSignal;
  /** Called with the child's lease once taken (the stream's reader stops when it is lost). */
  onLease?: (lease: WriterLease) => void;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const NEWLINE = Buffer.from("\n");
const T_BRANCH_SUMMARY = CANONICAL_TYPES.indexOf("branch_summary");

interface HeaderFacts {
  event: PixirEvent;
  parentId: string;
  n: number;
  toSeq: number;
  fromSeq: number | null;
  strategy: ForkStrategy;
  digest: string;
  forkRoot: string;
  openToolCalls: string[];
}

function readHeader(e: PixirEvent, lineNo: number): HeaderFacts {
  const d = e.data;
  const malformed = (what: string) =>
    integrityError("missing_fork_header", "a session_fork header with valid data", what, lineNo);
  if (e.seq !== 0) throw integrityError("seq_conflict", 0, e.seq, lineNo);
  assertSessionId(d.parent_session_id, "parent_session_id");
  if (!isSeq(d.replay_event_count)) throw malformed("replay_event_count");
  if (!isSeq(d.forked_to_seq)) throw malformed("forked_to_seq");
  if (d.strategy !== "replay_v1" && d.strategy !== "share_v1") throw malformed("strategy");
  if (typeof d.prefix_digest !== "string" || !DIGEST.test(d.prefix_digest)) throw malformed("prefix_digest");
  if (d.from_seq !== null && d.from_seq !== undefined && !isSeq(d.from_seq)) throw malformed("from_seq");
  const root = typeof d.fork_root_session_id === "string" && d.fork_root_session_id !== "" ? d.fork_root_session_id : d.parent_session_id;
  assertSessionId(root, "fork_root_session_id");
  const open = Array.isArray(d.open_tool_calls) ? d.open_tool_calls.filter((x): x is string => typeof x === "string") : [];
  return {
    event: e,
    parentId: d.parent_session_id as string,
    n: d.replay_event_count,
    toSeq: d.forked_to_seq,
    fromSeq: (d.from_seq as number | null | undefined) ?? null,
    strategy: d.strategy,
    digest: d.prefix_digest,
    forkRoot: root,
    openToolCalls: open,
  };
}

/** fork.md §5 step 4: the parent in this Workspace must still hash to the header's prefix_digest. */
export async function checkParentPrefix(
  ws: string,
  childId: string,
  h: Pick<HeaderFacts, "parentId" | "n" | "toSeq" | "digest" | "strategy">,
  signal?: AbortSignal,
): Promise<History | null> {
  if (h.strategy === "replay_v1" && inspectStatePath(logPath(ws, h.parentId)) === "missing") return null;
  // A pass-through parent is checked from its bytes (parent-log.ts); it has no share parent, so
  // resources are looked up in it alone (resourceSources of null). Anything it cannot settle, a
  // mismatch included, goes the loader's way below, which names the problem.
  // Nothing is copied from it here, so its bytes need no fingerprint.
  const fast = await parentFromOurLog(ws, h.parentId, h.toSeq, { signal, fingerprint: false }).catch(() => null);
  signal?.throwIfAborted();
  if (fast !== null && fast.facts.eventCount === h.n && fast.facts.prefixDigest === h.digest) return null;
  // The digest is taken during the loader's checking pass when it sees the whole History in order.
  let digest = new PrefixDigest();
  const parent = await openHistory(ws, h.parentId, {
    notFound: () => new PixirError("fork_parent_missing", undefined, { session_id: childId, parent_session_id: h.parentId, depth: 1 }),
    observe: (line) => {
      if (isInherited(line.event, h.toSeq)) digest.addLine(line.event, line.bytes, line.canonical);
    },
  });
  if (!parent.observed) {
    digest = new PrefixDigest();
    for await (const item of parent.items()) if (isInherited(item.event, h.toSeq)) digest.addItem(item);
  }
  const actual = digest.digest();
  if (digest.count !== h.n || actual !== h.digest) {
    throw prefixMismatch(childId, h.parentId, { digest: h.digest, count: h.n }, { digest: actual, count: digest.count });
  }
  return parent;
}

/** The parent and its share ancestors, in the order resources are looked up (fork.md §7 step 3). */
export function resourceSources(parent: History | null, parentId: string): string[] {
  const out = [parentId];
  for (let h = parent; h?.share; h = h.share.parent) out.push(h.share.parent.sessionId);
  return out;
}

/**
 * A fork stream's lines after its header, checked, digested and emitted as they are read: the header and
 * the own Events' ids, the seqs, the inherited lines' digest and resources, a summary's strategy.
 */
class ForkStreamBody {
  readonly refs: ResourceRef[] = [];
  summaryStrategy: string | null = null;
  private readonly seenResources = new Set<string>();
  /** The stream's own digest of the inherited lines; null while it reads in step with the parent. */
  private streamed: PrefixDigest | null;
  // The header's and the own Events' ids must differ. Inherited ids are derived from the header by rule
  // (fork.md §4.2) and are not kept: an index of every one would grow with the Log (§12).
  private readonly ids = new StreamIds();
  private readonly seqs: ForkStreamSeqs;
  private lastLine: number;
  private readonly childBytes: Buffer;
  /** What readHead and checkLine found in the line at hand. */
  private readonly lineFacts = new LineFacts();
  private emit: LineSink = () => undefined;

  /**
   * A replay stream of a pass-through parent is read in step with the parent (`cursor`): an inherited
   * line equal to the parent's from `"ts":` on is checked and digested by the parent's pass, which is
   * also the parent's own check. Until a line is not (then `streamed` takes over the digest so far), the
   * stream has no digest of its own.
   */
  constructor(
    private readonly first: InputEvent,
    private readonly header: HeaderFacts,
    private readonly childId: string,
    private readonly cursor: ParentPrefixCursor | null,
  ) {
    this.streamed = cursor === null ? new PrefixDigest() : null;
    this.seqs = new ForkStreamSeqs(header.n, header.strategy === "share_v1");
    this.lastLine = first.lineNo;
    this.childBytes = Buffer.from(childId, "utf8");
  }

  /** The header, then the rest of stdin in blocks; at the end, the inherited lines against the header. */
  async read(stream: InputStream, emit: LineSink): Promise<void> {
    this.emit = emit;
    emit(inputLine(this.first, this.header.event));
    this.ids.admit(this.header.event.id as string, this.first.lineNo);
    let lineNo = stream.linesRead;
    for await (const block of stream.restBlocks()) lineNo = await this.readBlock(block, lineNo);
    // Every inherited line matched the parent's: the stream's digest is the parent's so far.
    const digest = this.streamed ?? this.leaveStep(false);
    if (this.seqs.end()) checkStreamedPrefix(digest, { ...this.header, childId: this.childId }, this.lastLine);
  }

  /**
   * A block of whole lines: a line our tools wrote (stamped, of this child, in our layout) is checked
   * where it lies and written as its bytes, in runs; any other is decoded in full. The last line number.
   */
  private async readBlock(block: InputBlock, lineNo: number): Promise<number> {
    let { bytes: b, start, end } = block;
    if (block.tail) {
      // A last line without its `\n` is read as a line and written with one.
      b = Buffer.concat([b.subarray(start, end), NEWLINE]);
      start = 0;
      end = b.length;
    }
    const utf8 = isUtf8(b.subarray(start, end));
    /** [run, s) is checked lines not yet written. */
    let run = start;
    for (let s = start, e = 0; s < end; s = e + 1) {
      e = b.indexOf(0x0a, s);
      lineNo++;
      if (e !== s) {
        this.lastLine = lineNo;
        if (this.streamed === null) {
          let matched = this.matchParent(b, s, e, utf8);
          while (matched === "more") {
            await this.cursor!.load();
            matched = this.matchParent(b, s, e, utf8);
          }
          if (matched) continue;
        }
        if (checkLine(b, s, e, this.lineFacts, utf8) >= 0 && stampedOf(b, this.childBytes, this.lineFacts.head)) {
          if (!this.checked(b, s, e, lineNo)) continue;
        } else {
          if (run < s) this.emit(b.subarray(run, s));
          run = e + 1;
          this.decodeLine({ bytes: Buffer.from(b.subarray(s, e)), lineNo, offset: 0, terminated: !(block.tail && e === end - 1) });
          continue;
        }
      }
      // A blank line, or an inherited one that stays in the parent: not written.
      if (run < s) this.emit(b.subarray(run, s));
      run = e + 1;
    }
    if (run < end) this.emit(b.subarray(run, end));
    return lineNo;
  }

  /**
   * In step with the parent, the next inherited line with its head in our layout: true when it equals the
   * parent's from `"ts":` on (the parent's pass has checked and digested these very bytes); "more" when the
   * cursor must read on first; false once the stream has left the step (any other line goes the usual
   * way, which checks it and names its problem).
   */
  private matchParent(b: Buffer, s: number, e: number, utf8: boolean): boolean | "more" {
    const head = this.lineFacts.head;
    const seqs = this.seqs;
    const type = utf8 ? readHead(b, s, e, head) : -1;
    if (!(type >= 0 && head.seq === seqs.next && seqs.next <= this.header.n && IS_REPLAY[type] && stampedOf(b, this.childBytes, head))) {
      this.leaveStep(false);
      return false;
    }
    const found = this.cursor!.next();
    if (found === "more") return "more";
    const p = this.cursor!.line;
    const tsKey = head.tsStart - TS_KEY_LENGTH;
    if (found === true && e - tsKey === p.end - p.tsKey && b.compare(p.bytes, p.tsKey, p.end, tsKey, e) === 0) {
      this.admit(CANONICAL_TYPES[type]!, seqs.next);
      if (p.hasResources) this.addResources(b.subarray(s, e));
      return true;
    }
    this.leaveStep(found === true);
    return false;
  }

  /** A line the byte check accepted; true when it is not written in the run (a share stream's inherited line). */
  private checked(b: Buffer, s: number, e: number, lineNo: number): boolean {
    const facts = this.lineFacts;
    const head = facts.head;
    if (this.admit(CANONICAL_TYPES[facts.type]!, facts.seq!)) { // stampedOf: an integer seq
      this.streamed!.addChecked(b, facts);
      if (facts.hasResources) this.addResources(b.subarray(s, e));
      // A resolved share stream's inherited lines stay in the parent.
      return this.header.strategy !== "replay_v1";
    }
    requireIsoTs(b.toString("latin1", head.tsStart, head.tsEnd), lineNo);
    this.ids.admit(b.toString("utf8", head.idStart, head.idEnd), lineNo);
    if (facts.type === T_BRANCH_SUMMARY && this.summaryStrategy === null && facts.strategyStart >= 0) {
      // A summary's data can be large (one record per inherited tool call): its kind is read alone.
      this.summaryStrategy = JSON.parse(b.toString("utf8", facts.strategyStart - 1, facts.strategyEnd + 1)) as string;
    }
    return false;
  }

  /** A line the byte check did not accept: decoded in full, checked, written as inputLine writes it. */
  private decodeLine(raw: RawLine): void {
    const e = decodeInputLine(raw, { nullTs: true })!;
    checkInputSessionId(e.value.session_id, this.childId, e.lineNo);
    requireStamped(e, true);
    const event = stampedEvent(e);
    const inPrefix = this.admit(event.type, event.seq!);
    if (inPrefix) {
      this.streamed!.add(event);
      for (const d of resourceDescriptors(event, this.seenResources)) this.refs.push(checkDescriptor(d));
    } else {
      // Only inherited Events carry the parent's ts as it is (null, say); the child's own Events need ours.
      requireStamped(e);
      this.ids.admit(event.id as string, e.lineNo);
      if (event.type === "branch_summary" && this.summaryStrategy === null) {
        this.summaryStrategy = typeof event.data.strategy === "string" ? event.data.strategy : null;
      }
    }
    if (!inPrefix || this.header.strategy === "replay_v1") this.emit(inputLine(e, event));
  }

  /** Whether a line of this type and seq is inherited (ForkStreamSeqs checks the order). */
  private admit(type: string, seq: number): boolean {
    return this.seqs.admit(type, seq, this.lastLine);
  }

  /** Go on without the parent's pass for this and the later lines; `found`: the cursor holds a line the stream did not match. */
  private leaveStep(found: boolean): PrefixDigest {
    return (this.streamed = this.cursor!.digestSoFar(found));
  }

  /** The resource descriptors of an inherited line the byte check accepted (few lines have any). */
  private addResources(line: Buffer): void {
    const own = Buffer.from(line);
    const facts = new LineFacts();
    checkLine(own, 0, own.length, facts);
    for (const d of resourceDescriptors(checkedLine(own, facts).event, this.seenResources)) this.refs.push(checkDescriptor(d));
  }
}

/**
 * The parent's prefix is checked while the stream is read: in step with it (the cursor), or else by a
 * pass of its own, started by the first call, since a pipeline's last stage mostly waits for its input.
 * Every call answers with the one check; `signal` (a failed stream) stops it.
 */
function parentCheck(ws: string, childId: string, header: HeaderFacts, cursor: ParentPrefixCursor | null, signal: AbortSignal): () => Promise<History | null> {
  let check: Promise<History | null> | null = null;
  return () => {
    if (check === null) {
      check = (async () => {
        if (cursor !== null) {
          const facts = await cursor.finish(signal);
          if (facts !== null && facts.eventCount === header.n && facts.prefixDigest === header.digest) return null;
        }
        // Anything the cursor could not settle, a mismatch included, goes the general way, which names the problem.
        return checkParentPrefix(ws, childId, header, signal);
      })();
      check.catch(() => undefined);
    }
    return check;
  };
}

export async function writeForkStream(ws: string, targetArg: string | undefined, stream: InputStream, options: ForkWriteOptions): Promise<ForkWriteResult> {
  const first = (await stream.next())!;
  requireStamped(first);
  const header = readHeader(stampedEvent(first), first.lineNo);
  const childId = targetArg ?? (first.value.session_id as string);
  assertSessionId(childId, "child_session_id");
  checkInputSessionId(first.value.session_id, childId, first.lineNo);
  const log = logPath(ws, childId);
  if (inspectStatePath(log) === "present") {
    throw integrityError("fork_header_on_existing_log", "a new child log", "an existing log", first.lineNo);
  }

  const cursor = header.strategy === "replay_v1" ? await ParentPrefixCursor.open(ws, header.parentId, header.toSeq) : null;
  const body = new ForkStreamBody(first, header, childId, cursor);
  const parentAbort = new AbortController();
  const checkParent = parentCheck(ws, childId, header, cursor, parentAbort.signal);
  const produceChecking = async (emit: LineSink) => {
    if (cursor === null) void checkParent();
    await body.read(stream, emit);
  };
  let resourceCount = 0;
  const payloads = new PayloadWrites();
  const beforeCommit = async (verifyOnly: boolean) => {
    const parent = await checkParent();
    if (header.strategy === "share_v1") assertShareChildDepth(parent, header.parentId, childId);
    if (header.strategy === "replay_v1" && body.refs.length > 0) {
      resourceCount = copyResources(ws, resourceSources(parent, header.parentId), childId, body.refs, verifyOnly, payloads);
    }
  };
  const plan = (recorded: boolean) =>
    forkPlan(
      ws,
      header.parentId,
      childId,
      {
        forkRootSessionId: header.forkRoot,
        fromSeq: header.fromSeq,
        toSeq: header.toSeq,
        eventCount: header.n,
        prefixDigest: header.digest,
        openToolCalls: header.openToolCalls,
        resourceCount,
      },
      header.strategy,
      { recorded, dryRun: Boolean(options.dryRun), summaryStrategy: body.summaryStrategy },
    );

  try {
    if (options.dryRun) {
      await produceChecking(() => undefined);
      await beforeCommit(true);
      return plan(false);
    }
    const lease = await acquireLease(ws, childId, { program: options.program, env: options.env, signal: options.signal, takeOverDeadWriter: options.takeOverDeadWriter });
    options.onLease?.(lease);
    let wrote = false;
    try {
      await createLogAtomically(ws, childId, produceChecking, { lease, signal: options.signal }, () => beforeCommit(false));
      wrote = true;
      return plan(true);
    } finally {
      if (!wrote) payloads.undo(); // the child never appeared: neither do its resources
      lease.release(!wrote);
    }
  } finally {
    // A check still running (the stream or the write failed) must not keep the process alive.
    parentAbort.abort();
    await cursor?.close();
  }
}
