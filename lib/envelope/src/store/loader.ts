// fork.md §6: the one resolving loader. Every reader's History of a Session comes from here, so a
// share_v1 child reads as its parent's verified prefix followed by its own Events.
import { createHash, type Hash } from "node:crypto";
import { CANONICAL_TYPES, canonicalJson, isReplayType, isSeq, lineDataText, type CanonicalLine, type PixirEvent } from "../event/envelope.js";
import { PixirError, prefixMismatch } from "../event/errors.js";
import { derivedUlid } from "../event/ids.js";
import { canonicalInto, copyBytes, type LineFacts } from "../fast/line-check.js";
import { corruptLineError, historyLines, scanLog, type LogLine, type ProblemHandler, type ScanResult } from "./log-read.js";
import { assertSessionId } from "../event/session-id.js";

export const MAX_FORK_DEPTH = 32;

export interface HistoryItem {
  event: PixirEvent;
  /** The stored line, when this item is exactly a physical line of this Session's Log. */
  line?: LogLine;
  /** Raw text of `data`, to keep its bytes when the envelope is rewritten. */
  dataText?: string;
  /** The physical line this item was read from, when it was read without a full decode. */
  lineBytes?: Buffer;
}

export interface ShareLink {
  header: PixirEvent;
  parent: History;
  replayEventCount: number;
  forkedToSeq: number;
}

export interface History {
  sessionId: string;
  scan: ScanResult;
  /** `OpenOptions.observe` saw the whole History, in History order. */
  observed: boolean;
  share: ShareLink | null;
  /** Number of Events in the resolved History. */
  eventCount: number;
  /** Streams the resolved History; each call reads the Logs again. */
  items(onProblem?: ProblemHandler): AsyncGenerator<HistoryItem>;
}

export interface OpenOptions {
  /** For the top-level Session: the message and details of `not_found`. */
  notFound?: () => PixirError;
  /**
   * Sees each line of the top-level Log during the checking pass. When the History turns out to be
   * exactly those lines in that order (`History.observed`), a caller needs no second pass.
   */
  observe?: (line: LogLine) => void;
  /** Let `--lenient` readers skip corrupt lines of this Log (never of a parent). */
  onProblem?: ProblemHandler;
}

/**
 * fork.md §6 step 2.3 at fork time: a share_v1 child of `parent` adds one hop to the parent's chain of
 * share hops, and a child past MAX_FORK_DEPTH would be refused by every reader, so it is never made.
 * `parent` null is a Log read without the loader (a plain Log: no hops).
 */
export function assertShareChildDepth(parent: History | null, parentId: string, childId: string): void {
  if (shareHops(parent) + 1 > MAX_FORK_DEPTH) {
    throw new PixirError("fork_depth_exceeded", undefined, { session_id: childId, parent_session_id: parentId, max_depth: MAX_FORK_DEPTH });
  }
}

/** The share hops below a History: its parent, its parent's parent … while each is a share_v1 child. */
export function shareHops(history: History | null): number {
  let hops = 0;
  for (let h = history; h?.share; h = h.share.parent) hops++;
  return hops;
}

/** fork.md §3.1 step 6: is this parent Event inherited by a fork through `toSeq`? */
export function isInherited(e: Pick<PixirEvent, "type" | "seq">, toSeq: number): boolean {
  return isReplayType(e.type) && e.seq !== null && e.seq <= toSeq;
}

const STAGE_BYTES = 1 << 20;
/** `["<type>",` for each canonical type: the start of a digest line. */
const TYPE_OPENERS = CANONICAL_TYPES.map((t) => Buffer.from(`[${JSON.stringify(t)},`));
const DIGEST_TAIL = Buffer.from("]\n");

/** The parts of a checked line a digest line is made of (CanonicalLine, or a LineFacts). */
type DigestParts = Pick<CanonicalLine, "typeIndex" | "tsStart" | "tsEnd" | "dataStart" | "dataEnd"> & { reorder: ArrayLike<number> | null };

/** Write `["<type>","<ts>",<canonical data>]\n` of a checked line to `out` at `at`; returns the end. */
function writeDigestLine(bytes: Buffer, c: DigestParts, out: Buffer, at: number): number {
  const opener = TYPE_OPENERS[c.typeIndex]!;
  at = copyBytes(opener, 0, opener.length, out, at);
  at = copyBytes(bytes, c.tsStart - 1, c.tsEnd + 1, out, at);
  out[at++] = 0x2c;
  if (c.reorder === null) copyBytes(bytes, c.dataStart, c.dataEnd, out, at);
  else canonicalInto(bytes, c.dataStart, c.dataEnd, c.reorder, out, at);
  at += c.dataEnd - c.dataStart;
  out[at++] = 0x5d;
  out[at++] = 0x0a;
  return at;
}

/** The line checkLine accepted into `facts`, as DigestParts (offsets into the buffer it checked). */
function checkedParts(facts: LineFacts): DigestParts {
  const n = facts.reorderLength;
  return { typeIndex: facts.type, tsStart: facts.tsStart, tsEnd: facts.tsEnd, dataStart: facts.dataStart, dataEnd: facts.dataEnd, reorder: n > 0 ? facts.reorder.subarray(0, n) : null };
}

/**
 * fork.md §4.3 prefix_digest, computed incrementally. `digest()` may be read any number of times.
 * A line whose `data` is already canonical (line-check.ts) gives its digest line from its own bytes,
 * `["<type>","<ts>",<data>]`; these are staged and hashed in large blocks, since a hash update per
 * line costs more than the hashing itself.
 */
export class PrefixDigest {
  private hash: Hash = createHash("sha256");
  private staging: Buffer | null = null;
  private staged = 0;
  private final: string | null = null;
  /**
   * What copy(true) needs to leave the last line out: where it begins in the stage, or (-1) the hash
   * as it was before it, for a line hashed on its own (one larger than the stage).
   */
  private lastStaged = -1;
  private beforeLast: Hash | null = null;
  count = 0;
  /** The stage, made when first staged into: a digest kept as a mark never needs one. */
  private get stage(): Buffer {
    return (this.staging ??= Buffer.allocUnsafeSlow(STAGE_BYTES));
  }
  add(e: PixirEvent): void {
    this.open();
    const line = `${canonicalJson([e.type, e.ts, e.data])}\n`;
    // Staged as a checked line is (a UTF-16 unit is at most 3 bytes): no hash state copied per Event.
    if (this.staged + line.length * 3 > STAGE_BYTES) this.flush();
    if (line.length * 3 > STAGE_BYTES) {
      this.beforeLast = this.hash.copy();
      this.lastStaged = -1;
      this.hash.update(line, "utf8");
    } else {
      this.lastStaged = this.staged;
      this.staged += this.stage.write(line, this.staged, "utf8");
    }
    this.count++;
  }
  /** Add the line of `bytes` that checkLine accepted into `facts`. */
  addChecked(bytes: Buffer, facts: LineFacts): void {
    this.addCanonical(bytes, checkedParts(facts));
  }
  /** Add a line that passed the byte check; `c` says where its parts lie in `bytes`. */
  addCanonical(bytes: Buffer, c: DigestParts): void {
    this.open();
    const dataLength = c.dataEnd - c.dataStart;
    const size = TYPE_OPENERS[c.typeIndex]!.length + (c.tsEnd - c.tsStart + 3) + dataLength + DIGEST_TAIL.length;
    if (this.staged + size > STAGE_BYTES) this.flush();
    if (size > STAGE_BYTES) {
      const own = Buffer.allocUnsafeSlow(size);
      writeDigestLine(bytes, c, own, 0);
      this.beforeLast = this.hash.copy();
      this.lastStaged = -1;
      this.hash.update(own);
    } else {
      this.lastStaged = this.staged;
      this.staged = writeDigestLine(bytes, c, this.stage, this.staged);
    }
    this.count++;
  }
  /** Add an Event read from `bytes`: from the bytes when the byte check accepted them, else by canonicalJson. */
  addLine(e: PixirEvent, bytes?: Buffer, canonical?: CanonicalLine | null): void {
    if (canonical && bytes) this.addCanonical(bytes, canonical);
    else this.add(e);
  }
  /** Add an item, from its stored line when it has one. */
  addItem(item: HistoryItem): void {
    this.addLine(item.event, item.line?.bytes, item.line?.canonical);
  }
  /**
   * A digest that goes on from this one's lines, or from all but the last (`withoutLast`; there must be
   * one): pixir-log write takes over the parent's digest of the lines a stream matched so far.
   */
  copy(withoutLast = false): PrefixDigest {
    this.open();
    const out = new PrefixDigest();
    if (!withoutLast) {
      this.flush();
      out.hash = this.hash.copy();
      out.count = this.count;
      return out;
    }
    if (this.count === 0) throw new Error("PrefixDigest: no last line to leave out");
    if (this.lastStaged >= 0) {
      out.hash = this.hash.copy();
      this.stage.copy(out.stage, 0, 0, this.lastStaged);
      out.staged = this.lastStaged;
    } else out.hash = this.beforeLast!.copy();
    out.count = this.count - 1;
    return out;
  }
  digest(): string {
    if (this.final === null) {
      this.flush();
      this.final = `sha256:${this.hash.digest("hex")}`;
    }
    return this.final;
  }
  private open(): void {
    if (this.final !== null) throw new Error("PrefixDigest: add() after digest()");
  }
  /** Hash the stage. */
  private flush(): void {
    if (this.staged === 0) return;
    if (this.lastStaged >= 0) {
      // The last line is hashed now: keep the state before it, for copy(true) (one copy per stage).
      this.hash.update(this.stage.subarray(0, this.lastStaged));
      this.beforeLast = this.hash.copy();
      this.hash.update(this.stage.subarray(this.lastStaged, this.staged));
      this.lastStaged = -1;
    } else this.hash.update(this.stage.subarray(0, this.staged));
    this.staged = 0;
  }
}

/** fork.md §4.2: the k-th inherited Event as the child stores or resolves it. */
export function inheritedItem(parentItem: HistoryItem, forkEventId: string, childId: string, k: number): HistoryItem {
  const p = parentItem.event;
  const event: PixirEvent = {
    id: derivedUlid(`fork:${forkEventId}:${k}`, p.ts),
    session_id: childId,
    seq: k,
    ts: p.ts,
    type: p.type,
    data: p.data,
  };
  const line = parentItem.line;
  return { event, dataText: parentItem.dataText ?? (line ? lineDataText(line.bytes.toString("utf8"), p, line.exact) : undefined) };
}

function shareHeaderOf(first: LogLine | null): PixirEvent | null {
  if (first === null) return null;
  const e = first.event;
  return e.type === "session_fork" && e.seq === 0 && e.data.strategy === "share_v1" ? e : null;
}

export function notFoundError(id: string, ws: string, rel: string, command = "pixir-log cat"): PixirError {
  return new PixirError("not_found", "session log was not found", {
    session_id: id,
    workspace: ws,
    log_path: rel,
    next_actions: ["check the session id", `run ${command} from the workspace that owns the session log`],
  });
}

/**
 * Open the resolved History of `id`. Checks every line of every Log on the lineage and the prefix
 * digests before returning, so a caller that starts printing only afterwards never prints a partial view.
 */
export async function openHistory(ws: string, id: string, options: OpenOptions = {}): Promise<History> {
  assertSessionId(id);
  return open(ws, id, 0, [], options, null, null);
}

/**
 * The Histories opened by one OpenedHistories, by session id, and whether each keeps its Events once read
 * in full. Only Histories opened without OpenOptions go in: a History does not depend on the walk that
 * opened it (its depth, the Logs above it), so any later child may be resolved against it.
 */
interface Opened {
  histories: Map<string, History>;
  keepEvents: boolean;
}

/**
 * openHistory for several Logs of one Workspace (a family an importer reads back), each Log opened and
 * checked once: a share child whose parent was opened here is checked against that parent's History
 * (its prefix digest from the parent's items) instead of opening the parent's whole chain again. The
 * same History, the same checks and the same errors as openHistory for each Log, in any order of opening.
 * With `keepEvents`, a History's Events read once to the end are kept and replayed from memory as items
 * without their lines (a caller that holds every Log's Events anyway): a parent's lines are decoded once
 * for all its children, whose prefix digests are then made from the Events (the plain rule), and no line's
 * bytes are held beside its Event. Without it, memory stays that of one Log's lines at a time.
 */
export class OpenedHistories {
  private readonly opened: Opened;
  constructor(
    private readonly ws: string,
    options: { keepEvents?: boolean } = {},
  ) {
    this.opened = { histories: new Map(), keepEvents: options.keepEvents ?? false };
  }
  async open(id: string): Promise<History> {
    assertSessionId(id);
    return this.opened.histories.get(id) ?? open(this.ws, id, 0, [], {}, null, this.opened);
  }
}

/** `history` put in `opened`, as the Histories opened later see it. */
function remember(opened: Opened | null, history: History): History {
  if (opened === null) return history;
  const kept = opened.keepEvents ? keepingEvents(history) : history;
  opened.histories.set(history.sessionId, kept);
  return kept;
}

/**
 * `history` whose Events, once read to the end failing closed, are kept and replayed from memory as items
 * of their Event alone: the Events a read of the same file gives again (a read from disk would also fail if
 * the Log were replaced meanwhile; a replay does not look, so it suits one pass over a family, not a
 * long-lived cache). A line's bytes and data text are not kept: a 61 MB Codex family grown with 12
 * rollbacks peaked 423 MiB higher with them (docs/performance.md, "Round 8: found, and only partly fixed").
 */
function keepingEvents(history: History): History {
  let kept: HistoryItem[] | null = null;
  const read = history.items;
  async function* readAndKeep(): AsyncGenerator<HistoryItem> {
    const items: HistoryItem[] = [];
    for await (const item of read()) {
      items.push({ event: item.event });
      yield item;
    }
    kept = items;
  }
  async function* replay(items: HistoryItem[]): AsyncGenerator<HistoryItem> {
    yield* items;
  }
  return { ...history, items: (onProblem) => (onProblem !== undefined ? read(onProblem) : kept !== null ? replay(kept) : readAndKeep()) };
}

async function open(ws: string, id: string, depth: number, lineage: string[], options: OpenOptions, child: string | null, opened: Opened | null): Promise<History> {
  const observe = child === null ? options.observe : undefined;
  const scan = await scanLog(ws, id, {
    onProblem: child === null ? options.onProblem : undefined,
    // Only an observer needs every line as an object; otherwise the scan may check blocks of bytes.
    onLine: observe,
    refuseLaterShareHeaders: true,
  });
  if (!scan.exists) {
    if (child !== null) {
      throw new PixirError("fork_parent_missing", undefined, { session_id: child, parent_session_id: id, depth });
    }
    throw options.notFound?.() ?? notFoundError(id, ws, scan.path.rel);
  }
  const first = scan.first;
  if (first && first.event.type === "session_fork" && first.event.data.strategy === "share_v1" && first.event.seq !== 0) {
    throw corruptLineError({ reason: "misplaced_share_header" }, first.lineNo, scan.path.rel);
  }
  const header = shareHeaderOf(first);
  if (header === null) {
    return remember(opened, {
      sessionId: id,
      scan,
      observed: child === null && options.observe !== undefined && scan.inOrder && scan.skipped.length === 0,
      share: null,
      eventCount: scan.eventCount,
      items: (onProblem) => ownItems(scan, onProblem ?? (child === null ? options.onProblem : undefined)),
    });
  }
  const link = await resolveShare(ws, id, header, scan, depth, lineage, options, opened);
  return remember(opened, {
    sessionId: id,
    scan,
    observed: false,
    share: link,
    eventCount: scan.eventCount + link.replayEventCount,
    items: (onProblem) => shareItems(id, scan, link, onProblem ?? (child === null ? options.onProblem : undefined)),
  });
}

async function resolveShare(
  ws: string,
  id: string,
  header: PixirEvent,
  scan: ScanResult,
  depth: number,
  lineage: string[],
  options: OpenOptions,
  opened: Opened | null,
): Promise<ShareLink> {
  const parentId = header.data.parent_session_id;
  assertSessionId(parentId, "parent_session_id");
  const walked = [...lineage, id];
  if (parentId === id || lineage.includes(parentId)) {
    throw new PixirError("fork_cycle", undefined, { session_id: walked[0], lineage: [...walked, parentId] });
  }
  if (depth + 1 > MAX_FORK_DEPTH) {
    throw new PixirError("fork_depth_exceeded", undefined, { session_id: walked[0], max_depth: MAX_FORK_DEPTH });
  }
  const n = header.data.replay_event_count;
  const toSeq = header.data.forked_to_seq;
  if (!isSeq(n) || !isSeq(toSeq)) {
    throw corruptLineError({ reason: "unexpected_shape", extra: { field: "session_fork.data" } }, scan.first!.lineNo, scan.path.rel);
  }
  // Own Events must come after the shared prefix (fork.md §6 step 6). Lines a lenient scan skipped (and
  // reported) are skipped again here, quietly.
  const skipAgain: ProblemHandler | undefined = scan.skipped.length > 0 ? () => "skip" : undefined;
  for await (const line of historyLines(scan, skipAgain)) {
    if (line === scan.first) continue;
    if (line.lineNo !== scan.first!.lineNo && line.event.seq !== null && line.event.seq <= n) {
      throw corruptLineError({ reason: "seq_conflicts_with_shared_prefix" }, line.lineNo, scan.path.rel);
    }
  }
  const parent = await openParent(ws, parentId, depth + 1, walked, options, id, opened);
  const digest = new PrefixDigest();
  for await (const item of parent.items()) if (isInherited(item.event, toSeq)) digest.addItem(item);
  const actual = digest.digest();
  const expected = header.data.prefix_digest;
  if (digest.count !== n || actual !== expected) {
    throw prefixMismatch(id, parentId, { digest: expected, count: n }, { digest: actual, count: digest.count });
  }
  return { header, parent, replayEventCount: n, forkedToSeq: toSeq };
}

/**
 * The parent at `depth` of the walk from `lineage[0]`: opened already (its own chain checked then), or
 * opened now. A parent opened already still counts its hops for the walk: past MAX_FORK_DEPTH in all, the
 * walk is refused as opening the parent's chain again would refuse it.
 */
async function openParent(ws: string, parentId: string, depth: number, lineage: string[], options: OpenOptions, child: string, opened: Opened | null): Promise<History> {
  const known = opened?.histories.get(parentId);
  if (known === undefined) return open(ws, parentId, depth, lineage, options, child, opened);
  if (depth + shareHops(known) > MAX_FORK_DEPTH) {
    throw new PixirError("fork_depth_exceeded", undefined, { session_id: lineage[0], max_depth: MAX_FORK_DEPTH });
  }
  return known;
}

/** A stored line as an item; a line that is not copied byte for byte brings its data text along. */
function storedItem(line: LogLine): HistoryItem {
  return line.exact ? { event: line.event, line } : { event: line.event, line, dataText: lineDataText(line.bytes.toString("utf8"), line.event, false) };
}

async function* ownItems(scan: ScanResult, onProblem?: ProblemHandler): AsyncGenerator<HistoryItem> {
  for await (const line of historyLines(scan, onProblem)) yield storedItem(line);
}

async function* shareItems(id: string, scan: ScanResult, link: ShareLink, onProblem?: ProblemHandler): AsyncGenerator<HistoryItem> {
  let headerDone = false;
  for await (const line of historyLines(scan, onProblem)) {
    if (!headerDone) {
      headerDone = true;
      // Open every Log up the lineage before the first item goes out: each is then read as its checking
      // pass saw it (an open file outlives a rename over it), or the pass fails before any output.
      const parentItems = link.parent.items();
      try {
        let next = await parentItems.next();
        yield storedItem(line);
        let k = 0;
        for (; !next.done; next = await parentItems.next()) {
          if (!isInherited(next.value.event, link.forkedToSeq)) continue;
          k++;
          if (k > link.replayEventCount) break;
          yield inheritedItem(next.value, link.header.id ?? "", id, k);
        }
      } finally {
        await parentItems.return(undefined);
      }
      continue;
    }
    yield storedItem(line);
  }
}
