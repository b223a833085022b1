// fork.md §3–§4, §10: the fork plan and the fork stream. One pass over the parent History computes the
// plan (counts, digest, open tool calls, safe cut points); a second pass emits the inherited Events.
import { closeSync, fstatSync, openSync, rmSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { splitLines, type RawLine } from "../lines/codec.js";
import { lineBlocksOf } from "../lines/pipe-read.js";
import { isUtf8 } from "node:buffer";
import { checkLine, LineFacts } from "../fast/line-check.js";
import { decodeOwnHead, isLineProblem, isReplayType, serializeEvent, type DecodedLine, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { decodeLogLine } from "../fast/decode-line.js";
import { scanThreadCount } from "../store/threads.js";
import { OpenCalls, parentChangedError, PrefixScanner, type CheckedObserver, type InheritedObserver, type ParentSource, type PrefixFacts } from "./fork-plan.js";
import { PixirError, usageError } from "../event/errors.js";
import { osWriteFault } from "../event/os-fault.js";
import { newUlid } from "../event/ids.js";
import { integrityError, STDIN_PATH } from "../lines/input.js";
import { corruptLineError, headLine, headLines, lineBlocks, readFileChunks, scannedBytes } from "../store/log-read.js";
import { open } from "node:fs/promises";
import { inheritedItem, isInherited, openHistory, PrefixDigest, type History, type HistoryItem } from "../store/loader.js";
import { IdSet } from "../event/id-set.js";
import { LineHead, readHead, sessionIs } from "../fast/line-head.js";
import { ChildLines, passThroughParent, passThroughStdin, readFd } from "./fork-bytes.js";
import { BlockWriter } from "../store/log-write.js";
import { logPath } from "../store/paths.js";
import { assertSessionId, isValidSessionId } from "../event/session-id.js";
import { abortable } from "../lines/abortable.js";
import type { ByteProgress } from "../event/progress.js";
import { dataTextOf, lineDataText } from "../event/envelope.js";
import { FORK_STRATEGIES, type ForkStrategy } from "../event/vocabulary.js";

export const REPLAY_LIMITATIONS = ["full replayed prefix remains authoritative; session_fork is lineage metadata only"];
export const SHARE_LIMITATIONS = ["shared prefix is read from the parent log and verified by prefix_digest; the parent log must be kept"];

export interface ForkRequest {
  ws: string;
  parentId: string;
  childId: string;
  toSeq?: number;
  strategy: ForkStrategy;
  strictBoundary?: boolean;
}

/** The plan JSON of fork.md §3.2. */
export interface ForkPlan {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  parent_session_id: string;
  child_session_id: string;
  fork_root_session_id: string;
  from_seq: number | null;
  to_seq: number;
  event_count: number;
  workspace: string;
  parent_log_path: string;
  child_log_path: string;
  summarize: boolean;
  would_record_branch_summary: boolean;
  branch_summary_strategy: string | null;
  strategy: ForkStrategy;
  resume_command: string;
  prefix_digest: string;
  open_tool_calls: string[];
  resource_count: number;
}

/**
 * The line a recorded fork prints on stderr in text mode: what to run next, with our own commands.
 * The plan's `resume_command` (fork.md §3) names Pixir's runtime command `pixir resume`, kept for
 * Pixir's readers of the plan; our `pixir` wrapper has no such command, so it is not printed as a hint.
 */
export const forkNextHint = (childId: string): string =>
  `hint: continue the child with pixir append ${childId}; pixir context ${childId} prints what a model sees of it`;

export function forkPlan(
  ws: string,
  parentId: string,
  childId: string,
  facts: Pick<PrefixFacts, "forkRootSessionId" | "fromSeq" | "toSeq" | "eventCount" | "prefixDigest" | "openToolCalls" | "resourceCount">,
  strategy: ForkStrategy,
  flags: { recorded: boolean; dryRun: boolean; summaryStrategy: string | null },
): ForkPlan {
  return {
    ok: true,
    recorded: flags.recorded,
    dry_run: flags.dryRun,
    parent_session_id: parentId,
    child_session_id: childId,
    fork_root_session_id: facts.forkRootSessionId,
    from_seq: facts.fromSeq,
    to_seq: facts.toSeq,
    event_count: facts.eventCount,
    workspace: ws,
    parent_log_path: logPath(ws, parentId).abs,
    child_log_path: logPath(ws, childId).abs,
    summarize: flags.summaryStrategy !== null,
    would_record_branch_summary: flags.summaryStrategy !== null,
    branch_summary_strategy: flags.summaryStrategy,
    strategy,
    resume_command: `pixir resume ${childId} "..."`,
    prefix_digest: facts.prefixDigest,
    open_tool_calls: facts.openToolCalls,
    resource_count: strategy === "share_v1" ? 0 : facts.resourceCount,
  };
}

/** fork.md §10: --strict-boundary refuses a cut that leaves tool calls open. */
export function checkBoundary(facts: PrefixFacts, requestedToSeq: number | undefined): void {
  if (facts.openToolCalls.length === 0) return;
  throw new PixirError("unsafe_fork_boundary", undefined, {
    to_seq: requestedToSeq ?? facts.toSeq,
    open_tool_calls: facts.openToolCalls,
    nearest_safe_seq: facts.nearestSafeSeq,
    next_safe_seq: facts.nextSafeSeq,
  });
}

/**
 * fork.md §3.1 steps 6–8 and §4.3: the data of a share_v1 header over `inherited`, the parent's replayable
 * Events up to `toSeq` in History order (an importer that plans a child in memory: Codex rollbacks and forks).
 */
export function shareHeaderData(ws: string, parentId: string, forkRootId: string, toSeq: number, inherited: readonly PixirEvent[]): JsonObject {
  const digest = new PrefixDigest();
  const open = new OpenCalls(new IdSet());
  for (const e of inherited) {
    digest.add(e);
    open.add(e);
  }
  return {
    parent_session_id: parentId,
    fork_root_session_id: forkRootId,
    forked_to_seq: toSeq,
    parent_workspace: ws,
    child_workspace: ws,
    replay_event_count: inherited.length,
    from_seq: inherited[0]?.seq ?? null,
    strategy: "share_v1",
    limitations: SHARE_LIMITATIONS,
    prefix_digest: digest.digest(),
    open_tool_calls: open.list(),
  };
}

/** The session_fork header Event of fork.md §4.3. */
export function forkHeader(ws: string, parentId: string, childId: string, facts: PrefixFacts, strategy: ForkStrategy): PixirEvent {
  return {
    id: newUlid(),
    session_id: childId,
    seq: 0,
    ts: new Date().toISOString(),
    type: "session_fork",
    data: {
      parent_session_id: parentId,
      fork_root_session_id: facts.forkRootSessionId,
      forked_to_seq: facts.toSeq,
      parent_workspace: ws,
      child_workspace: ws,
      replay_event_count: facts.eventCount,
      from_seq: facts.fromSeq,
      strategy,
      limitations: strategy === "share_v1" ? SHARE_LIMITATIONS : REPLAY_LIMITATIONS,
      prefix_digest: facts.prefixDigest,
      open_tool_calls: facts.openToolCalls,
    },
  };
}

const CR = 0x0d;
const NEWLINE = 0x0a;

/** What parentFromLog reports as it reads, besides the plan: all optional. */
export interface ParentReadOptions {
  /** A new observer of the inherited Events (with their child seqs), made for each pass that feeds one. */
  observeInherited?: () => InheritedObserver;
  /** Counts the bytes checked, for progress. */
  checked?: ByteProgress;
  /** A new observer of the inherited lines as checked bytes; used instead of observeInherited when the byte path reads the parent. */
  observeChecked?: () => CheckedObserver;
}

/**
 * Read the parent through the resolving loader (pixir fork, pixir-fork --parent). The plan is learnt
 * during the loader's checking pass when the History is the Log's lines in order (the usual case); the
 * emitting pass then reads our own key order without parsing `data` again.
 */
export async function parentFromLog(ws: string, parentId: string, toSeq: number | undefined, command: string, options: ParentReadOptions = {}): Promise<ParentSource> {
  const { observeInherited, checked, observeChecked } = options;
  // An observer (the summary of --summarize) is fed from the byte path's checked lines when it has a
  // form for them (observeChecked); otherwise it is fed Events, which the loader's pass makes anyway.
  const fast = observeInherited === undefined || observeChecked !== undefined ? await passThroughParent(ws, parentId, toSeq, { checked, onInherited: observeChecked?.() }) : null;
  if (fast !== null) return fast;
  checked?.restart();
  let scanner = new PrefixScanner(parentId, toSeq);
  let observer = observeInherited?.();
  let observedLines = 0;
  const history: History = await openHistory(ws, parentId, {
    notFound: () => parentNotFound(ws, parentId, command),
    observe: (line) => {
      observedLines++;
      checked?.add(line.bytes.length + 1);
      if (scanner.add(line.event, line.bytes, line.canonical, line.lineNo)) observer?.(line.event, scanner.inheritedCount);
    },
  });
  if (history.eventCount === 0) throw parentNotFound(ws, parentId, command);
  if (!history.observed) {
    scanner = new PrefixScanner(parentId, toSeq);
    observer = observeInherited?.();
    // Progress counts each byte once: a Log read out of order was counted while the loader scanned it.
    const counted = observedLines > 0 ? undefined : checked;
    for await (const item of history.items()) {
      const bytes = item.line?.bytes ?? item.lineBytes;
      if (bytes !== undefined) counted?.add(bytes.length + 1);
      if (scanner.add(item.event, item.line?.bytes ?? item.lineBytes, item.line?.canonical, item.line?.lineNo ?? null)) observer?.(item.event, scanner.inheritedCount);
    }
  }
  const facts = scanner.finish();
  const light = history.observed && history.scan.passThrough;
  const source: ParentSource = {
    parentId,
    facts,
    history,
    async *inherited() {
      const items = light ? lightItems(history) : history.items();
      for await (const item of items) {
        if (isReplayType(item.event.type) && item.event.seq !== null && item.event.seq <= facts.toSeq) yield item;
      }
    },
    inheritedBlocks: light
      ? (forkEventId, childId) => {
          const scan = history.scan;
          const lines = splitLines(scannedBytes(scan), { path: scan.path.rel });
          return copyInheritedBlocks(lines, source, forkEventId, childId, (raw) => headLine(raw, scan), true);
        }
      : undefined,
    dispose() {},
  };
  return source;
}

/**
 * fork.md §4.2 from bytes, for lines given one by one (RawLine): a line in our layout is copied as a new
 * head and the rest of the parent's line (ChildLines); lines in another form (a null id or ts) take the
 * general way (`general` decodes them; inheritedItem, serializeEvent). With `fingerprint`, the lines
 * read must be the very lines the plan was made from (a Log read twice); a spool this process wrote
 * needs no check.
 */
async function* copyInheritedBlocks(
  lines: AsyncIterable<RawLine>,
  parent: Pick<ParentSource, "parentId" | "facts">,
  forkEventId: string,
  childId: string,
  general: (raw: RawLine) => { event: PixirEvent; dataText?: string },
  fingerprint: boolean,
): AsyncGenerator<Buffer> {
  const toSeq = parent.facts.toSeq;
  const out = new ChildLines(toSeq, forkEventId, childId, fingerprint);
  for await (const raw of lines) {
    const b = raw.bytes;
    if (!out.addOurs(b, 0, b.length)) copyGeneral(out, general(raw), b, toSeq, forkEventId, childId);
    yield* out.take();
  }
  yield* out.take(true);
  if (fingerprint && (out.seen.count !== parent.facts.eventCount || out.seen.digest() !== parent.facts.fingerprint)) throw parentChangedError(parent, childId, out.seen.count);
}

/** An inherited line not in our layout, decoded by the caller (`line`), as the child's serialized text. */
function copyGeneral(out: ChildLines, line: { event: PixirEvent; dataText?: string }, bytes: Buffer, toSeq: number, forkEventId: string, childId: string): void {
  if (!isInherited(line.event, toSeq)) return;
  const child = inheritedItem({ event: line.event, dataText: line.dataText, lineBytes: bytes }, forkEventId, childId, out.k + 1);
  out.addText(serializeEvent(child.event, child.dataText), line.event, bytes);
}

/**
 * The copying pass over parentFromStream's spool, in blocks of its bytes: every line there is
 * inherited and was written by this process, so it needs no fingerprint; a line not in our layout
 * (a null id or ts) is decoded by `general`.
 */
async function* copySpool(spool: string, parent: Pick<ParentSource, "facts">, forkEventId: string, childId: string, general: (bytes: Buffer) => HistoryItem): AsyncGenerator<Buffer> {
  const toSeq = parent.facts.toSeq;
  const out = new ChildLines(toSeq, forkEventId, childId, false);
  const file = await open(spool, "r");
  try {
    for await (const block of lineBlocks(file, (await file.stat()).size)) {
      const b = block.bytes;
      for (let s = 0; s < block.end; ) {
        let e = b.indexOf(NEWLINE, s);
        if (e < 0 || e > block.end) e = block.end;
        if (!out.addOurs(b, s, e)) {
          const bytes = Buffer.from(b.subarray(s, e));
          copyGeneral(out, general(bytes), bytes, toSeq, forkEventId, childId);
        }
        s = e + 1;
      }
      yield* out.take();
    }
  } finally {
    await file.close();
  }
  yield* out.take(true);
}

/** The parent's lines read from their heads only (log-read.ts headLines), as HistoryItems. */
async function* lightItems(history: History): AsyncGenerator<HistoryItem> {
  for await (const line of headLines(history.scan)) yield { event: line.event, dataText: line.dataText, lineBytes: line.bytes };
}

export function parentNotFound(ws: string, parentId: string, command = "pixir fork"): PixirError {
  return new PixirError("not_found", "parent session log was not found or is empty", {
    parent_session_id: parentId,
    log_path: logPath(ws, parentId).rel,
    next_actions: ["check the session id", `run ${command} from the workspace that owns the parent log`],
  });
}

/**
 * The parent History on stdin (pixir-fork without --parent). A regular file is read in place, twice
 * (passThroughStdin); when its lines need the general way it is read again from where it began, as a
 * pipe is read: through parentFromStream, which spools what the copying pass needs.
 */
export async function parentFromStdin(stdin: AsyncIterable<Buffer>, toSeq: number | undefined, signal?: AbortSignal): Promise<ParentSource> {
  const fd = seekableFd(stdin);
  if (fd === null) return parentFromStream(stdin, toSeq, signal);
  const range = { start: 0, length: 0 };
  const inPlace = await passThroughStdin(fd, toSeq, range);
  if (inPlace !== null) return inPlace;
  return parentFromStream(fdRange(fd, range.start, range.length), toSeq, signal);
}

/** The descriptor behind `stdin` when it is a regular file (process.stdin is then an fs.ReadStream); else null. */
function seekableFd(stdin: unknown): number | null {
  const fd = (stdin as { fd?: unknown }).fd;
  if (typeof fd !== "number") return null;
  try {
    return fstatSync(fd).isFile() ? fd : null;
  } catch {
    return null;
  }
}

/** `[start, start + length)` of `fd`, read by position in chunks of one reused buffer. */
async function* fdRange(fd: number, start: number, length: number): AsyncGenerator<Buffer> {
  const buf = Buffer.allocUnsafe(1 << 20);
  for (let at = 0; at < length; ) {
    const { bytesRead: n } = await readFd(fd, buf, 0, Math.min(buf.length, length - at), start + at);
    if (n === 0) return;
    at += n;
    yield buf.subarray(0, n);
  }
}

/**
 * Read a parent History from a stream. The inherited lines are spooled to a
 * temp file in the OS temp directory, so memory stays flat; the file is removed by dispose().
 *
 * stdin is read in blocks of whole lines (lineBlocksOf): a line the byte check accepts
 * (line-check.ts) feeds the plan where it lies and is spooled as it is; any other line is decoded in
 * full (decodeLogLine), which tolerates what the reading rules tolerate and names every problem.
 */
export async function parentFromStream(input: AsyncIterable<Buffer>, toSeq: number | undefined, signal?: AbortSignal): Promise<ParentSource> {
  let dir: string;
  try {
    dir = mkdtempSync(path.join(os.tmpdir(), "pixir-fork-"));
  } catch (err) {
    throw spoolError(err, os.tmpdir());
  }
  const spool = path.join(dir, "inherited.ndjson");
  let fd: number;
  try {
    fd = openSync(spool, "wx", 0o600);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw spoolError(err, dir);
  }
  // Set by the first line (closures assign them, so they live in one record).
  const first: { parentId: string | null; parentBytes: Buffer | null; scanner: PrefixScanner | null } = { parentId: null, parentBytes: null, scanner: null };
  let prevSeq: number | null = null;
  let seenNull = false;
  let lineNo = 0;
  // The spool is written by libuv's threads while this one checks the next input (it is a temp file:
  // nothing asks the kernel to write it back).
  const writer = new BlockWriter(fd, { background: true, writeBack: false, paced: true });
  // Only the spool's own writes fail as temp_spool_failed; an error reading stdin stays what it is.
  const spooled = {
    add(part: string | Buffer): void {
      try {
        writer.add(part);
      } catch (err) {
        throw spoolError(err, dir);
      }
    },
    async drain(): Promise<void> {
      try {
        await writer.drain();
      } catch (err) {
        throw spoolError(err, dir);
      }
    },
  };
  const startParent = (sessionId: string | null) => {
    assertSessionId(sessionId);
    first.parentId = sessionId;
    first.parentBytes = Buffer.from(sessionId, "utf8");
    // The spool is this process's own file: the copying pass needs no fingerprint of what it reads.
    // The digest is hashed on a worker thread (where more than one may read): this one has the checks
    // and the spool to do.
    return (first.scanner = new PrefixScanner(sessionId, toSeq, false, scanThreadCount(process.env, Number.MAX_SAFE_INTEGER) > 1));
  };
  const orderSeq = (seq: number | null) => {
    if (seq === null) seenNull = true;
    else if (seenNull) throw integrityError("seq_out_of_order", "no integer seq after a null one", seq, lineNo);
    else if (prevSeq !== null && seq < prevSeq) throw integrityError("seq_out_of_order", `seq >= ${prevSeq}`, seq, lineNo);
    else prevSeq = seq;
  };
  /** What checkLine found in the line at hand; decodeLine's own readHead of a line it decoded. */
  const lineFacts = new LineFacts();
  const ownHead = new LineHead();
  /** A line the byte check refused (or of another session): the full decode, as splitLines' readers do. */
  const decodeLine = (bytes: Buffer, terminated: boolean) => {
    // The input is a History as `pixir-log cat` prints it, so the reading rules apply
    // (envelope-and-log.md §7): a missing or null id or ts is tolerated, as through --parent.
    const decoded = decodeLogLine(bytes, !terminated);
    if (isLineProblem(decoded)) throw corruptLineError(decoded, lineNo, STDIN_PATH);
    const sessionId = decoded.event.session_id;
    const parentId = first.parentId;
    const scanner = parentId === null ? startParent(sessionId) : first.scanner!;
    if (parentId !== null && sessionId !== parentId) {
      if (!isValidSessionId(sessionId)) assertSessionId(sessionId);
      throw integrityError("session_id_mismatch", parentId, sessionId, lineNo);
    }
    orderSeq(decoded.event.seq);
    // session_id equals parentId here; the decoded Event is used as it is, so its data stays unparsed.
    const event = decoded.event;
    if (scanner.add(event, bytes, decoded.canonical, lineNo)) {
      // A whole envelope in our key order is already the line serializeEvent would write: keep its bytes.
      if (decoded.exact && bytes[bytes.length - 1] !== CR && readHead(bytes, 0, bytes.length, ownHead) >= 0) {
        spooled.add(bytes);
        spooled.add("\n");
      } else spooled.add(serializeEvent(event, lineDataText(bytes.toString("utf8"), event, decoded.exact)));
    }
  };
  try {
    for await (const block of abortable(lineBlocksOf(input, { path: STDIN_PATH }), signal)) {
      await writer.ready();
      await first.scanner?.digestRoom();
      const b = block.bytes;
      if (block.tail) {
        lineNo++;
        decodeLine(Buffer.from(b.subarray(0, block.end)), false);
        continue;
      }
      // Runs of inherited lines are spooled as one copy; [run, s) is the run so far.
      const utf8 = isUtf8(b.subarray(0, block.end));
      let run = 0;
      for (let s = 0; s < block.end; ) {
        const e = b.indexOf(NEWLINE, s);
        lineNo++;
        if (e === s) {
          if (run < s) spooled.add(b.subarray(run, s));
          run = s = e + 1;
          continue;
        }
        let kept = false;
        const parentBytes = first.parentBytes;
        if (checkLine(b, s, e, lineFacts, utf8) >= 0 && parentBytes !== null && sessionIs(b, parentBytes, lineFacts.head)) {
          orderSeq(lineFacts.seq);
          kept = first.scanner!.addChecked(b, s, e, lineFacts);
        } else {
          if (run < s) spooled.add(b.subarray(run, s));
          run = s;
          decodeLine(Buffer.from(b.subarray(s, e)), true);
        }
        if (!kept) {
          if (run < s) spooled.add(b.subarray(run, s));
          run = e + 1;
        }
        s = e + 1;
      }
      if (run < block.end) spooled.add(b.subarray(run, block.end));
    }
    await spooled.drain();
    await first.scanner?.settleDigest();
  } catch (err) {
    first.scanner?.stopDigest();
    // Writes still in flight would otherwise land on whatever file reuses the descriptor.
    await writer.settle();
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  closeSync(fd);
  const { parentId, scanner } = first;
  if (parentId === null || scanner === null) {
    rmSync(dir, { recursive: true, force: true });
    throw integrityError("empty_stream", "at least one event", 0, null);
  }
  let facts: PrefixFacts;
  try {
    facts = scanner.finish();
  } catch (err) {
    // The plan's own refusals (a --to-seq above the last seq, a bad fork root) come from finish().
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const spooledLines = () => splitLines(readFileChunks(spool), { path: STDIN_PATH });
  // The spool holds lines this process wrote from checked input; an inherited Event may still lack an
  // id or ts (null), exactly as it may through --parent.
  const spooledItem = (bytes: Buffer): HistoryItem => {
    const text = bytes.toString("utf8");
    const own = decodeOwnHead(text);
    if (own !== null) return { event: own.event, dataText: own.dataText };
    const decoded = decodeLogLine(bytes, false) as DecodedLine;
    return { event: decoded.event, dataText: dataTextOf(text, decoded.event) };
  };
  const source: ParentSource = {
    parentId,
    facts,
    async *inherited() {
      for await (const raw of spooledLines()) yield spooledItem(raw.bytes);
    },
    inheritedBlocks: (forkEventId, childId) => copySpool(spool, source, forkEventId, childId, spooledItem),
    dispose() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return source;
}

/** The temp directory refused the spool (missing, full, read-only): a named error, not an internal one. */
function spoolError(err: unknown, dir: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof PixirError || typeof code !== "string") return err;
  return osWriteFault(err, dir, "spool", "the spool file in the temp directory");
}

/** The fork stream of fork.md §4.1 as lines: header, then (replay_v1) the renumbered inherited Events. */
export async function* forkStreamLines(ws: string, parent: ParentSource, childId: string, strategy: ForkStrategy, header?: PixirEvent): AsyncGenerator<string> {
  const head = header ?? forkHeader(ws, parent.parentId, childId, parent.facts, strategy);
  yield serializeEvent(head);
  if (strategy === "share_v1") return;
  let k = 0;
  for await (const item of parent.inherited()) {
    k++;
    const child = inheritedItem(item, head.id!, childId, k);
    yield serializeEvent(child.event, child.dataText);
  }
}

/**
 * The same fork stream as forkStreamLines, as chunks of whole lines: the inherited lines are copied
 * from the parent's bytes when the parent allows it (ParentSource.inheritedBlocks), else made one by one.
 */
export async function* forkStreamChunks(ws: string, parent: ParentSource, childId: string, strategy: ForkStrategy): AsyncGenerator<string | Buffer> {
  const header = forkHeader(ws, parent.parentId, childId, parent.facts, strategy);
  if (strategy === "share_v1" || parent.inheritedBlocks === undefined) {
    yield* forkStreamLines(ws, parent, childId, strategy, header);
    return;
  }
  yield serializeEvent(header);
  yield* parent.inheritedBlocks(header.id!, childId);
}

/** --strategy: replay_v1 (the default) or share_v1; anything else is a usage error. */
export function parseForkStrategy(value: string | undefined, synopsis: string): ForkStrategy {
  if (value === undefined) return "replay_v1";
  if (!(FORK_STRATEGIES as readonly string[]).includes(value)) throw usageError(synopsis, "--strategy must be replay_v1 or share_v1");
  return value as ForkStrategy;
}
