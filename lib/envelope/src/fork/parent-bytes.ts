// fork.md §3–§4 from a parent's bytes: the passes a Log in our layout (parent-log.ts) and a regular file
// on stdin (parent-stdin-file.ts) share. The plan's pass checks each line where it lies (line-check.ts)
// and feeds the scanner from what the check found, with a CRC-32 of every byte read; the copying pass
// reads the same bytes again into ChildLines and must find the same CRC. Any line these passes do not
// handle makes them give up (null), and the caller takes the general way.
import { isUtf8 } from "node:buffer";
import { crc32 } from "node:zlib";
import { NEWLINE } from "../fast/json-bytes.js";
import { type CheckedObserver, parentChangedError, type ParentSource, type PrefixFacts, PrefixScanner } from "./fork-plan.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { checkedShareHeader, checkLine, LineFacts } from "../fast/line-check.js";
import { sessionIs } from "../fast/line-head.js";
import { lineBlocks, type PositionalReader } from "../store/log-read.js";
import { decodeOwnHead } from "../event/envelope.js";
import { isValidSessionId } from "../event/session-id.js";
import { type HistoryItem, isInherited } from "../store/loader.js";
import { read } from "node:fs";
import { type ByteProgress } from "../event/progress.js";
import { ChildLines } from "./child-lines.js";

/**
 * The byte path's fingerprint: a CRC-32 of every byte it read, and their count. Both of its passes read
 * the same range in whole lines, so an unchanged Log gives the same value; any change within the range
 * (inherited lines or not) gives another, and the copy is refused.
 */
export function bytesFingerprint(crc: number, length: number): string {
  return `crc32-bytes:${(crc >>> 0).toString(16).padStart(8, "0")}:${length}`;
}

/** fs.read as a promise, on a descriptor (stdin) rather than a FileHandle. */
export function readFd(fd: number, buffer: Buffer, offset: number, length: number, position: number | null): Promise<{ bytesRead: number }> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (err, bytesRead) => (err ? reject(err) : resolve({ bytesRead }))));
}

/** The inherited lines of a range planned by planFromBytes, as HistoryItems (the line way of the fork stream). */
export async function* inheritedOfBlocks(file: PositionalReader, length: number, parent: Pick<ParentSource, "parentId" | "facts">): AsyncGenerator<HistoryItem> {
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

export interface BytePlan {
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
export class ParentLineCheck {
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
export async function planFromBytes(file: PositionalReader, length: number, parentId: string | null, toSeq: number | undefined, options: ByteReadOptions = {}): Promise<BytePlan | null> {
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
 * The copying pass over a parent planned by parentFromOurLog: the child's inherited lines, in blocks.
 * The parent is not leased, so the lines read now must be the very lines the plan read (fingerprint).
 */
export async function* copyPlannedBytes(
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
