// fork.md §3–§4 for the usual parent: one Log whose lines are all whole envelopes in our writers' layout
// with canonical `data`, in seq order. Both passes then run over large blocks of the file's bytes and make
// no object per line: the plan's pass checks each line where it lies (line-check.ts) and feeds the
// scanner from what the check found; the copying pass writes each inherited line's new head and the
// parent's bytes from `"ts":` on. A Log in any other form gives null here and takes the loader's way
// (fork.ts parentFromLog), which handles, or names the problem of, every line.
import { isUtf8 } from "node:buffer";
import { crc32 } from "node:zlib";
import { constants as fsConstants, fstatSync, read } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { COMMA, NEWLINE } from "../fast/json-bytes.js";
import type { PixirEvent } from "../event/envelope.js";
import { LineFingerprint, parentChangedError, PrefixScanner, type CheckedObserver, type ParentSource, type PrefixFacts } from "./fork-plan.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { derivedUlidInto } from "../event/ids.js";
import { checkedShareHeader, checkLine, copyBytes, LineFacts } from "../fast/line-check.js";
import { IS_REPLAY, LineHead, readHead, sessionIs, TS_KEY_LENGTH } from "../fast/line-head.js";
import { committedLength, headLine, lineBlocks, readLogRange, type LineBlock, type PositionalReader } from "../store/log-read.js";
import { decodeOwnHead } from "../event/envelope.js";
import { isValidSessionId } from "../event/session-id.js";
import type { HistoryItem, PrefixDigest } from "../store/loader.js";
import { isInherited } from "../store/loader.js";
import { lineTooLongToWrite, MAX_LINE_BYTES, splitLines } from "../lines/codec.js";
import { inspectStatePath, logPath, type StatePath } from "../store/paths.js";
import type { ByteProgress } from "../event/progress.js";


/** Write the decimal digits of the non-negative integer `n` at `at`; returns how many. */
function writeDigits(out: Buffer, at: number, n: number): number {
  let count = 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) count++;
  for (let i = count - 1, v = n; i >= 0; i--, v = Math.floor(v / 10)) out[at + i] = 0x30 + (v % 10);
  return count;
}
const INHERITED_BLOCK = 256 * 1024;

/**
 * Blocks of ChildLines handed back once written (recycleChildBlock). A copy of 1 GiB otherwise leaves
 * 4,096 blocks of garbage outside the heap, and the copying pass allocates too little on the heap for
 * the collector to run often: they piled up to some 50 MiB before it did.
 */
const freeBlocks: ArrayBuffer[] = [];
const FREE_BLOCKS_KEPT = 16;

/** A block for ChildLines: a free one when there is one and `size` fits it, else a new one. */
function childBlock(size: number): Buffer {
  const free = size <= INHERITED_BLOCK ? freeBlocks.pop() : undefined;
  return free !== undefined ? Buffer.from(free) : Buffer.allocUnsafeSlow(Math.max(INHERITED_BLOCK, size));
}

/** Give back a block that ChildLines made (any part of it) once nothing reads it any more. */
export function recycleChildBlock(block: Buffer): void {
  const whole = block.buffer;
  if (whole instanceof ArrayBuffer && whole.byteLength === INHERITED_BLOCK && freeBlocks.length < FREE_BLOCKS_KEPT && !freeBlocks.includes(whole)) freeBlocks.push(whole);
}
const ID_OPENER = Buffer.from('{"id":"', "latin1");

/**
 * The child's copies of inherited lines (fork.md §4.2), collected in blocks of whole lines. A line in
 * our layout becomes `{"id":<derived>,"session_id":<child>,"seq":k,` and the rest of the parent's line
 * from `"ts":`; any other line is given as the child's serialized text. Each finished block is a buffer
 * of its own, which the consumer may keep. With `fingerprint`, the lines copied are fingerprinted so
 * that the caller can prove they are the lines the plan was made from.
 */
export class ChildLines {
  /** Inherited lines so far: the child seq of the last one. */
  k = 0;
  readonly seen = new LineFingerprint();
  private readonly childSession: Buffer;
  /** `fork:<header id>:` and then the digits of k: the key of the k-th derived id, written in place. */
  private readonly key: Buffer;
  private readonly keyPrefix: number;
  private block = childBlock(INHERITED_BLOCK);
  private used = 0;
  private readonly head = new LineHead();
  private done: Buffer[] = [];

  constructor(
    private readonly toSeq: number,
    forkEventId: string,
    childId: string,
    private readonly fingerprint: boolean,
  ) {
    this.childSession = Buffer.from(`","session_id":${JSON.stringify(childId)},"seq":`, "utf8");
    const prefix = Buffer.from(`fork:${forkEventId}:`, "utf8");
    this.key = Buffer.alloc(prefix.length + 20);
    this.keyPrefix = prefix.copy(this.key);
  }

  /** Copy `b[s, e)` if it is inherited; false when it is not in our layout (readHead), and nothing was done. */
  addOurs(b: Buffer, s: number, e: number): boolean {
    const head = this.head;
    const type = readHead(b, s, e, head);
    if (type < 0) return false;
    const seq = head.seq;
    if (!IS_REPLAY[type] || seq === null || seq > this.toSeq) return true;
    const k = ++this.k;
    if (this.fingerprint) this.seen.addRange(b, s, e);
    const tail = head.tsStart - TS_KEY_LENGTH;
    const digits = writeDigits(this.key, this.keyPrefix, k);
    // {"id":"<26>  ","session_id":<child>,"seq":  <k>,  the parent's line from "ts":  \n
    this.room(ID_OPENER.length + 26 + this.childSession.length + digits + 1 + (e - tail) + 1);
    const block = this.block;
    let used = copyBytes(ID_OPENER, 0, ID_OPENER.length, block, this.used);
    derivedUlidInto(block, used, this.key, this.keyPrefix + digits, b, head.tsStart, head.tsEnd);
    used = copyBytes(this.childSession, 0, this.childSession.length, block, used + 26);
    used = copyBytes(this.key, this.keyPrefix, this.keyPrefix + digits, block, used);
    block[used++] = COMMA;
    used += b.copy(block, used, tail, e);
    // The child's id and session id may make the line longer than the parent's.
    if (used - this.used > MAX_LINE_BYTES) throw lineTooLongToWrite(used - this.used, CANONICAL_TYPES[type]!, k + 1);
    block[used++] = NEWLINE;
    this.used = used;
    return true;
  }

  /** Add an inherited line made some other way: its whole text (with its `\n`), and the parent's Event and line. */
  addText(text: string, parentEvent: PixirEvent, parentLine: Buffer): void {
    this.k++;
    if (this.fingerprint) this.seen.add(parentEvent, parentLine);
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes - 1 > MAX_LINE_BYTES) throw lineTooLongToWrite(bytes - 1, parentEvent.type, this.k + 1);
    this.room(bytes);
    this.used += this.block.write(text, this.used, "utf8");
  }

  /** Finished blocks since the last call; with `final`, the block being filled too. */
  take(final = false): Buffer[] {
    if (final && this.used > 0) this.finishBlock(INHERITED_BLOCK);
    const out = this.done;
    this.done = [];
    return out;
  }

  /** Room for `size` more bytes: the block so far is finished first; a line longer than a block gets one of its size. */
  private room(size: number): void {
    if (this.used + size <= this.block.length) return;
    if (this.used > 0) this.finishBlock(size);
    else this.block = childBlock(size);
  }

  private finishBlock(nextSize: number): void {
    this.done.push(this.block.subarray(0, this.used));
    this.used = 0;
    this.block = childBlock(nextSize);
  }
}

/**
 * The byte path's fingerprint: a CRC-32 of every byte it read, and their count. Both of its passes read
 * the same range in whole lines, so an unchanged Log gives the same value; any change within the range
 * (inherited lines or not) gives another, and the copy is refused.
 */
function bytesFingerprint(crc: number, length: number): string {
  return `crc32-bytes:${(crc >>> 0).toString(16).padStart(8, "0")}:${length}`;
}

/** The file of a Log, opened without following a symlink; null when it is not a plain present Log. */
async function openLog(p: StatePath): Promise<FileHandle | null> {
  if (inspectStatePath(p) !== "present") return null;
  try {
    return await open(p.abs, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
  } catch {
    return null;
  }
}

/**
 * The parent `parentId` read from its bytes, as parentFromLog's ParentSource; null when its Log is not
 * of the form this module handles (missing, empty, journalled lines out of seq order, a null seq, a
 * line the byte check refuses, a share_v1 header, a torn tail), so that the caller takes the general way.
 */
export async function passThroughParent(ws: string, parentId: string, toSeq: number | undefined, options: ByteReadOptions = {}): Promise<ParentSource | null> {
  const p = logPath(ws, parentId);
  const file = await openLog(p);
  if (file === null) return null;
  let plan: BytePlan | null;
  let byteLength: number;
  try {
    byteLength = committedLength(ws, parentId, file.fd).byteLength;
    if (byteLength === 0) return null;
    plan = await planFromBytes(file, byteLength, parentId, toSeq, options);
  } finally {
    await file.close();
  }
  if (plan === null || plan.read !== byteLength) return null;
  const facts = plan.facts;
  const source: ParentSource = {
    parentId,
    facts,
    async *inherited() {
      for await (const raw of splitLines(readLogRange(p, 0, byteLength), { path: p.rel })) {
        const line = headLine(raw, { path: p });
        if (isInherited(line.event, facts.toSeq)) yield { event: line.event, dataText: line.dataText, lineBytes: line.bytes };
      }
    },
    inheritedBlocks: (forkEventId, childId) => copyPassThrough(() => openLog(p), byteLength, source, forkEventId, childId),
    dispose() {},
  };
  return source;
}

/**
 * A History in a regular file on stdin (`pixir-fork < FILE`), read in place twice like a Log, with no
 * spool: `fd` is read on from where it stands to its end. Null when the lines are not all of the form
 * passThroughParent handles, or are not all of one session; the caller then reads the same bytes again
 * the general way, from `start` for `length` bytes (both given in `range`).
 */
export async function passThroughStdin(
  fd: number,
  toSeq: number | undefined,
  range: { start: number; length: number },
): Promise<ParentSource | null> {
  let read = 0;
  const sequential: PositionalReader = {
    async read(buffer, offset, length) {
      const got = await readFd(fd, buffer, offset, length, null);
      read += got.bytesRead;
      return got;
    },
  };
  const plan = await planFromBytes(sequential, Infinity, null, toSeq);
  // A pass that gave up read part of the input: read to its end, so that its start is known.
  const rest = Buffer.allocUnsafe(1 << 16);
  while (plan === null && (await sequential.read(rest, 0, rest.length, 0)).bytesRead > 0);
  // stdin's offset cannot be asked for; at its end it is the file's size, so the input began `read` bytes before.
  range.length = read;
  range.start = fstatSync(fd).size - read;
  if (plan === null || read === 0 || range.start < 0) return null;
  const start = range.start;
  const positional: PositionalReader = { read: (buffer, offset, length, position) => readFd(fd, buffer, offset, length, start + position) };
  const source: ParentSource = {
    parentId: plan.parentId,
    facts: plan.facts,
    async *inherited() {
      yield* inheritedOfBlocks(positional, read, source);
    },
    inheritedBlocks: (forkEventId, childId) => copyPassThrough(async () => positional, read, source, forkEventId, childId),
    dispose() {},
  };
  return source;
}

/** fs.read as a promise, on a descriptor (stdin) rather than a FileHandle. */
export function readFd(fd: number, buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (err, bytesRead) => (err ? reject(err) : resolve({ bytesRead }))));
}

/** The inherited lines of a range planned by planFromBytes, as HistoryItems (the line way of the fork stream). */
async function* inheritedOfBlocks(file: PositionalReader, length: number, parent: Pick<ParentSource, "parentId" | "facts">): AsyncGenerator<HistoryItem> {
  let count = 0;
  for await (const block of lineBlocks(file, length)) {
    const b = block.bytes;
    for (let s = 0; s < block.end; ) {
      const e = b.indexOf(NEWLINE, s);
      // Every line was checked by the plan's pass: one that is not in our layout now was changed since.
      const own = block.tail ? null : decodeOwnHead(b.toString("utf8", s, e));
      if (own === null) throw parentChangedError(parent, "", count);
      if (isInherited(own.event, parent.facts.toSeq)) {
        count++;
        yield { event: own.event, dataText: own.dataText };
      }
      s = e + 1;
    }
  }
}

interface BytePlan {
  parentId: string;
  facts: PrefixFacts;
  /** Bytes the pass read: all of the range unless it shrank. */
  read: number;
}

/** What a pass over a parent's bytes reports, and whether it fingerprints them (only for a later copy). */
export interface ByteReadOptions {
  checked?: ByteProgress;
  signal?: AbortSignal;
  onInherited?: CheckedObserver;
  /** Default true; false when no copying pass follows (the facts' fingerprint is then empty). */
  fingerprint?: boolean;
}

/**
 * The byte path's checks of a parent's lines, one at a time, in file order: a whole envelope in our
 * layout (line-check.ts), seqs in order, no share_v1 header, and with `parentId` null (a History on
 * stdin) one session, named by the first line. Its scanner learns the plan's facts.
 */
class ParentLineCheck {
  scanner: PrefixScanner | null;
  /** What checkLine found in the line `line` last took. */
  readonly facts = new LineFacts();
  private session: Buffer | null = null;
  private prevSeq = -1;

  constructor(
    public parentId: string | null,
    private readonly toSeq: number | undefined,
  ) {
    this.scanner = parentId === null ? null : new PrefixScanner(parentId, toSeq, false);
  }

  /** The line `b[s, e)`: -1 if this path does not handle it, else 1 if it is inherited and 0 if not (`facts` describe it). */
  line(b: Buffer, s: number, e: number): number {
    const facts = this.facts;
    if (e === s || checkLine(b, s, e, facts, true) < 0) return -1;
    const seq = facts.seq;
    if (seq === null || seq < this.prevSeq) return -1;
    this.prevSeq = seq;
    // A share_v1 header makes this Log a share child (or, past line 1, a corrupt one).
    if (checkedShareHeader(b, facts)) return -1;
    let scanner = this.scanner;
    if (scanner === null) {
      const id = b.toString("utf8", facts.head.sessionStart, facts.head.sessionEnd);
      if (!isValidSessionId(id)) return -1;
      this.parentId = id;
      this.session = Buffer.from(id, "utf8");
      scanner = this.scanner = new PrefixScanner(id, this.toSeq, false);
    } else if (this.session !== null && !sessionIs(b, this.session, facts.head)) return -1;
    return scanner.addChecked(b, s, e, facts) ? 1 : 0;
  }
}

/**
 * The plan's pass over the bytes of `[0, length)` of `file`: each line checked where it lies and fed to
 * the scanner, with a CRC-32 of every byte read as the fingerprint the copying pass must match. With
 * `parentId` null the first line names the parent and every line must be of that session (a History
 * on stdin). Null at the first line this path does not handle.
 */
async function planFromBytes(file: PositionalReader, length: number, parentId: string | null, toSeq: number | undefined, options: ByteReadOptions = {}): Promise<BytePlan | null> {
  const { checked, signal, onInherited } = options;
  const fingerprint = options.fingerprint !== false;
  const check = new ParentLineCheck(parentId, toSeq);
  let crc = 0;
  let read = 0;
  for await (const block of lineBlocks(file, length)) {
    const b = block.bytes;
    // A line ends at the first `\n`, which is never part of a multi-byte character: the lines of a
    // block are valid UTF-8 each exactly when the block is.
    const lines = b.subarray(0, block.end);
    if (block.tail || !isUtf8(lines) || signal?.aborted) return null;
    if (fingerprint) crc = crc32(lines, crc);
    read += block.end;
    for (let s = 0; s < block.end; ) {
      const e = b.indexOf(NEWLINE, s);
      const inherited = check.line(b, s, e);
      if (inherited < 0) return null;
      if (inherited > 0) onInherited?.(CANONICAL_TYPES[check.facts.type]!, check.scanner!.inheritedCount, b, check.facts.dataStart, check.facts.dataEnd);
      s = e + 1;
    }
    checked?.add(block.end);
  }
  if (check.scanner === null) return null;
  return { parentId: check.parentId!, facts: { ...check.scanner.finish(), fingerprint: fingerprint ? bytesFingerprint(crc, read) : "" }, read };
}

/**
 * A pass-through parent read in step with a fork stream (pixir-log write): next() checks the parent's
 * lines up to its next inherited one, which the caller compares with the stream's line. A stream line
 * whose bytes from `"ts":` on equal the parent's is then checked and digested by this pass alone. The
 * same pass, finished by finish(), is the parent's own check (every line; count and digest).
 */
export class ParentPrefixCursor {
  private readonly check: ParentLineCheck;
  private readonly blocks: AsyncIterator<LineBlock>;
  private block: LineBlock | null = null;
  private at = 0;
  private read = 0;
  private ended = false;
  /** The Log is not of the form the byte path handles (or the read failed): the caller checks it the general way. */
  failed = false;
  /** The inherited line next() found: `bytes[tsKey, end)` is its `"ts":` on. Valid until the next call. */
  readonly line: { bytes: Buffer; tsKey: number; end: number; hasResources: boolean } = { bytes: Buffer.alloc(0), tsKey: 0, end: 0, hasResources: false };

  private constructor(
    private readonly file: FileHandle,
    private readonly byteLength: number,
    parentId: string,
    toSeq: number,
  ) {
    this.check = new ParentLineCheck(parentId, toSeq);
    this.blocks = lineBlocks(file, byteLength)[Symbol.asyncIterator]();
  }

  /** The cursor over `parentId`'s Log; null when it is missing or empty (the general way decides then). */
  static async open(ws: string, parentId: string, toSeq: number): Promise<ParentPrefixCursor | null> {
    const file = await openLog(logPath(ws, parentId));
    if (file === null) return null;
    try {
      const byteLength = committedLength(ws, parentId, file.fd).byteLength;
      if (byteLength > 0) return new ParentPrefixCursor(file, byteLength, parentId, toSeq);
    } catch {
      /* the general way names the problem */
    }
    await file.close();
    return null;
  }

  /** Inherited lines found so far; the digest of them all, or of all but the last (copy). */
  digestSoFar(withoutLast: boolean): PrefixDigest {
    return this.check.scanner!.digestCopy(withoutLast);
  }

  /**
   * Find the next inherited line (then in `line`): true; false at the Log's end or once failed; "more"
   * when a block must be read first (load()).
   */
  next(): boolean | "more" {
    for (;;) {
      const block = this.block;
      if (this.failed) return false;
      if (block === null || this.at >= block.end) return this.ended ? false : "more";
      const b = block.bytes;
      const s = this.at;
      const e = b.indexOf(NEWLINE, s);
      this.at = e + 1;
      const inherited = this.check.line(b, s, e);
      if (inherited < 0) this.failed = true;
      else if (inherited > 0) {
        const line = this.line;
        line.bytes = b;
        line.tsKey = this.check.facts.tsStart - TS_KEY_LENGTH;
        line.end = e;
        line.hasResources = this.check.facts.hasResources;
        return true;
      }
    }
  }

  /** Read the next block of the Log (after next() said "more"). */
  async load(): Promise<void> {
    try {
      const r = await this.blocks.next();
      if (r.done) {
        this.ended = true;
        this.block = null;
        if (this.read !== this.byteLength) this.failed = true;
        return;
      }
      const block = r.value;
      if (block.tail || !isUtf8(block.bytes.subarray(0, block.end))) this.failed = true;
      this.read += block.end;
      this.block = block;
      this.at = 0;
    } catch {
      this.failed = true;
    }
  }

  /**
   * Check the rest of the Log: its facts, or null when it is not of this path's form or they cannot be
   * had (a to_seq above its last seq, say: the general way names that). Closes the file.
   */
  async finish(signal?: AbortSignal): Promise<PrefixFacts | null> {
    try {
      for (let r = this.next(); r !== false; r = this.next()) {
        if (signal?.aborted) return null;
        if (r === "more") await this.load();
      }
      // Nothing is copied from this pass: no fingerprint, as passThroughParent's without one.
      return this.failed ? null : { ...this.check.scanner!.finish(), fingerprint: "" };
    } catch {
      return null;
    } finally {
      await this.close();
    }
  }

  private closed = false;
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ended = true;
    this.block = null;
    await this.blocks.return?.(undefined);
    await this.file.close().catch(() => undefined);
  }
}

/**
 * The copying pass over a parent planned by passThroughParent: the child's inherited lines, in blocks.
 * The parent is not leased, so the lines read now must be the very lines the plan read (fingerprint).
 */
async function* copyPassThrough(
  reopen: () => Promise<(PositionalReader & { close?(): Promise<void> }) | null>,
  byteLength: number,
  parent: Pick<ParentSource, "parentId" | "facts">,
  forkEventId: string,
  childId: string,
): AsyncGenerator<Buffer> {
  const changed = (count: number) => parentChangedError(parent, childId, count);
  const file = await reopen();
  if (file === null) throw changed(0);
  const lines = new ChildLines(parent.facts.toSeq, forkEventId, childId, false);
  let crc = 0;
  let read = 0;
  try {
    for await (const block of lineBlocks(file, byteLength)) {
      if (block.tail) throw changed(lines.k);
      const b = block.bytes;
      crc = crc32(b.subarray(0, block.end), crc);
      read += block.end;
      for (let s = 0; s < block.end; ) {
        const e = b.indexOf(NEWLINE, s);
        if (!lines.addOurs(b, s, e)) throw changed(lines.k);
        s = e + 1;
      }
      yield* lines.take();
    }
  } finally {
    await file.close?.();
  }
  yield* lines.take(true);
  if (lines.k !== parent.facts.eventCount || bytesFingerprint(crc, read) !== parent.facts.fingerprint) throw changed(lines.k);
}
