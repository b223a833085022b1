// fork.md §5, envelope-and-log.md §11.3: `pixir-log write` of a fork stream. The stream verifies itself
// (header counts, contiguous seqs, prefix digest) and is checked against the parent in the Workspace;
// the child Log appears only when all of it holds.
import { isUtf8 } from "node:buffer";
import type { RawLine } from "../lines/codec.js";
import { isSeq, type PixirEvent } from "../event/envelope.js";
import { checkedLine } from "../fast/decode-line.js";
import { PixirError } from "../event/errors.js";
import { forkPlan, type ForkPlan } from "./fork.js";
import type { ForkStrategy } from "../event/vocabulary.js";
import { resourceDescriptors } from "./fork-plan.js";
import { ParentPrefixCursor, parentFromOurLog } from "./parent-log.js";
import { checkInputSessionId, checkStreamedPrefix, decodeInputLine, ForkStreamSeqs, inputLine, integrityError, requireIsoTs, requireStamped, stampedEvent, StreamIds, type InputStream } from "../lines/input.js";
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
    throw new PixirError("fork_prefix_mismatch", undefined, {
      session_id: childId,
      parent_session_id: h.parentId,
      expected_digest: h.digest,
      actual_digest: actual,
      expected_count: h.n,
      actual_count: digest.count,
    });
  }
  return parent;
}

/** The parent and its share ancestors, in the order resources are looked up (fork.md §7 step 3). */
export function resourceSources(parent: History | null, parentId: string): string[] {
  const out = [parentId];
  for (let h = parent; h?.share; h = h.share.parent) out.push(h.share.parent.sessionId);
  return out;
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

  const refs: ResourceRef[] = [];
  let summaryStrategy: string | null = null;
  let resourceCount = 0;
  const seenResources = new Set<string>();
  // A replay stream of a pass-through parent is read in step with the parent (ParentPrefixCursor): an
  // inherited line equal to the parent's from `"ts":` on is checked and digested by the parent's pass,
  // which is also the parent's own check. Until a line is not (then `streamed` takes over the digest so
  // far), the stream has no digest of its own.
  const cursor = header.strategy === "replay_v1" ? await ParentPrefixCursor.open(ws, header.parentId, header.toSeq) : null;
  let streamed: PrefixDigest | null = cursor === null ? new PrefixDigest() : null;
  /** Go on without the parent's pass for this and the later lines; `found`: the cursor holds a line the stream did not match. */
  const leaveStep = (found: boolean): PrefixDigest => (streamed = cursor!.digestSoFar(found));

  const produce = async (emit: LineSink) => {
    emit(inputLine(first, header.event));
    // The header's and the own Events' ids must differ. Inherited ids are derived from the header by rule
    // (fork.md §4.2) and are not kept: an index of every one would grow with the Log (§12).
    const ids = new StreamIds();
    ids.admit(header.event.id as string, first.lineNo);
    const seqs = new ForkStreamSeqs(header.n, header.strategy === "share_v1");
    let lastLine = first.lineNo;
    const childBytes = Buffer.from(childId, "utf8");
    /** What readHead and checkLine found in the line at hand. */
    const lineFacts = new LineFacts();
    const lineHead = lineFacts.head;
    const admit = (type: string, seq: number): boolean => seqs.admit(type, seq, lastLine);
    /** A line the byte check did not accept: decoded in full, checked, written as inputLine writes it. */
    const decodeLine = (raw: RawLine) => {
      const e = decodeInputLine(raw, { nullTs: true })!;
      checkInputSessionId(e.value.session_id, childId, e.lineNo);
      requireStamped(e, true);
      const event = stampedEvent(e);
      const inPrefix = admit(event.type, event.seq!);
      if (inPrefix) {
        streamed!.add(event);
        for (const d of resourceDescriptors(event, seenResources)) refs.push(checkDescriptor(d));
      } else {
        // Only inherited Events carry the parent's ts as it is (null, say); the child's own Events need ours.
        requireStamped(e);
        ids.admit(event.id as string, e.lineNo);
        if (event.type === "branch_summary" && summaryStrategy === null) {
          summaryStrategy = typeof event.data.strategy === "string" ? event.data.strategy : null;
        }
      }
      if (!inPrefix || header.strategy === "replay_v1") emit(inputLine(e, event));
    };

    // The rest of stdin in blocks: a line our tools wrote (stamped, of this child, in our layout) is
    // checked where it lies and written as its bytes, in runs; any other is decoded in full.
    let lineNo = stream.linesRead;
    for await (const block of stream.restBlocks()) {
      let b = block.bytes;
      let start = block.start;
      let end = block.end;
      if (block.tail) {
        // A last line without its `\n` is read as a line and written with one.
        b = Buffer.concat([b.subarray(start, end), NEWLINE]);
        start = 0;
        end = b.length;
      }
      const utf8 = isUtf8(b.subarray(start, end));
      /** [run, s) is checked lines not yet written. */
      let run = start;
      const writeRun = (upTo: number) => {
        if (run < upTo) emit(b.subarray(run, upTo));
      };
      for (let s = start; s < end; ) {
        const e = b.indexOf(0x0a, s);
        lineNo++;
        if (e === s) {
          writeRun(s);
          run = s = e + 1;
          continue;
        }
        lastLine = lineNo;
        if (streamed === null) {
          // Only the next inherited line, with its head in our layout, is compared with the parent's;
          // any other line goes the usual way below, which checks it and names its problem.
          const type = utf8 ? readHead(b, s, e, lineHead) : -1;
          if (type >= 0 && lineHead.seq === seqs.next && seqs.next <= header.n && IS_REPLAY[type] && stampedOf(b, childBytes, lineHead)) {
            const tsKey = lineHead.tsStart - TS_KEY_LENGTH;
            let found = cursor!.next();
            while (found === "more") {
              await cursor!.load();
              found = cursor!.next();
            }
            const p = cursor!.line;
            if (found === true && e - tsKey === p.end - p.tsKey && b.compare(p.bytes, p.tsKey, p.end, tsKey, e) === 0) {
              // The parent's pass has checked and digested these very bytes; the head is checked above.
              admit(CANONICAL_TYPES[type]!, seqs.next);
              if (p.hasResources) addResources(b.subarray(s, e));
              s = e + 1;
              continue;
            }
            leaveStep(found === true);
          } else leaveStep(false);
        }
        if (checkLine(b, s, e, lineFacts, utf8) >= 0 && stampedOf(b, childBytes, lineHead)) {
          const typeIndex = lineFacts.type;
          if (admit(CANONICAL_TYPES[typeIndex]!, lineFacts.seq!)) { // stampedOf: an integer seq
            streamed!.addChecked(b, lineFacts);
            if (lineFacts.hasResources) addResources(b.subarray(s, e));
            if (header.strategy !== "replay_v1") {
              // A resolved share stream's inherited lines stay in the parent.
              writeRun(s);
              run = e + 1;
            }
          } else {
            requireIsoTs(b.toString("latin1", lineHead.tsStart, lineHead.tsEnd), lineNo);
            ids.admit(b.toString("utf8", lineHead.idStart, lineHead.idEnd), lineNo);
            if (typeIndex === T_BRANCH_SUMMARY && summaryStrategy === null && lineFacts.strategyStart >= 0) {
              // A summary's data can be large (one record per inherited tool call): its kind is read alone.
              summaryStrategy = JSON.parse(b.toString("utf8", lineFacts.strategyStart - 1, lineFacts.strategyEnd + 1)) as string;
            }
          }
        } else {
          writeRun(s);
          run = e + 1;
          decodeLine({ bytes: Buffer.from(b.subarray(s, e)), lineNo, offset: 0, terminated: !(block.tail && e === end - 1) });
        }
        s = e + 1;
      }
      writeRun(end);
    }
    // Every inherited line matched the parent's: the stream's digest is the parent's so far.
    const digest = streamed ?? leaveStep(false);
    if (seqs.end()) checkStreamedPrefix(digest, { ...header, childId }, lastLine);
  };
  /** The resource descriptors of an inherited line the byte check accepted (few lines have any). */
  const addResources = (line: Buffer) => {
    const own = Buffer.from(line);
    const facts = new LineFacts();
    checkLine(own, 0, own.length, facts);
    for (const d of resourceDescriptors(checkedLine(own, facts).event, seenResources)) refs.push(checkDescriptor(d));
  };
  // The parent's prefix is checked while the stream is read: in step with it (the cursor), or else by a
  // pass of its own that starts now, since a pipeline's last stage mostly waits for its input. A failed
  // stream stops it.
  const parentAbort = new AbortController();
  let parentCheck: Promise<History | null> | null = null;
  const checkParent = () => {
    if (parentCheck === null) {
      parentCheck = (async () => {
        if (cursor !== null) {
          const facts = await cursor.finish(parentAbort.signal);
          if (facts !== null && facts.eventCount === header.n && facts.prefixDigest === header.digest) return null;
        }
        // Anything the cursor could not settle, a mismatch included, goes the general way, which names the problem.
        return checkParentPrefix(ws, childId, header, parentAbort.signal);
      })();
      parentCheck.catch(() => undefined);
    }
    return parentCheck;
  };
  const produceChecking = async (emit: LineSink) => {
    if (cursor === null) void checkParent();
    await produce(emit);
  };
  const payloads = new PayloadWrites();
  const beforeCommit = async (verifyOnly: boolean) => {
    const parent = await checkParent();
    if (header.strategy === "share_v1") assertShareChildDepth(parent, header.parentId, childId);
    if (header.strategy === "replay_v1" && refs.length > 0) {
      resourceCount = copyResources(ws, resourceSources(parent, header.parentId), childId, refs, verifyOnly, payloads);
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
      { recorded, dryRun: Boolean(options.dryRun), summaryStrategy },
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
