// fork.md §3–§4 for the usual parent: one Log whose lines are all whole envelopes in our writers' layout
// with canonical `data`, in seq order. Both passes then run over large blocks of the file's bytes and make
// no object per line: the plan's pass checks each line where it lies (line-check.ts) and feeds the
// scanner from what the check found; the copying pass writes each inherited line's new head and the
// parent's bytes from `"ts":` on. A Log in any other form gives null here and takes the loader's way
// (fork.ts parentFromLog), which handles, or names the problem of, every line.
import { isUtf8 } from "node:buffer";
import { crc32 } from "node:zlib";
import { constants as fsConstants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import type { PixirEvent } from "./envelope.js";
import { LineFingerprint, parentChangedError, PrefixScanner, type ParentSource } from "./fork-plan.js";
import { derivedUlidOfBytes } from "./ids.js";
import { checkedShareHeader, checkLine, facts } from "./line-check.js";
import { head, IS_REPLAY, readHead, TS_KEY_LENGTH } from "./line-head.js";
import { committedLength, headLine, lineBlocks, readLogRange } from "./log-read.js";
import { isInherited } from "./loader.js";
import { splitLines } from "./codec.js";
import { inspectStatePath, logPath, type StatePath } from "./paths.js";
import type { ByteProgress } from "./progress.js";

const NEWLINE = 0x0a;
const COMMA = 0x2c;

/** Write the decimal digits of the non-negative integer `n` at `at`; returns how many. */
function writeDigits(out: Buffer, at: number, n: number): number {
  let count = 1;
  for (let v = n; v >= 10; v = Math.floor(v / 10)) count++;
  for (let i = count - 1, v = n; i >= 0; i--, v = Math.floor(v / 10)) out[at + i] = 0x30 + (v % 10);
  return count;
}
const INHERITED_BLOCK = 256 * 1024;

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
  private block = Buffer.allocUnsafeSlow(INHERITED_BLOCK);
  private used = 0;
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
    const type = readHead(b, s, e);
    if (type < 0) return false;
    const seq = head.seq;
    if (!IS_REPLAY[type] || seq === null || seq > this.toSeq) return true;
    const k = ++this.k;
    if (this.fingerprint) this.seen.addRange(b, s, e);
    const tail = head.tsStart - TS_KEY_LENGTH;
    const digits = writeDigits(this.key, this.keyPrefix, k);
    const id = derivedUlidOfBytes(this.key, this.keyPrefix + digits, b.toString("utf8", head.tsStart, head.tsEnd));
    // {"id":"<26>  ","session_id":<child>,"seq":  <k>,  the parent's line from "ts":  \n
    this.room(7 + id.length + this.childSession.length + digits + 1 + (e - tail) + 1);
    const block = this.block;
    let used = this.used;
    used += block.write('{"id":"', used, "latin1");
    used += block.write(id, used, "latin1");
    used += this.childSession.copy(block, used);
    used += this.key.copy(block, used, this.keyPrefix, this.keyPrefix + digits);
    block[used++] = COMMA;
    used += b.copy(block, used, tail, e);
    this.block[used++] = NEWLINE;
    this.used = used;
    return true;
  }

  /** Add an inherited line made some other way: its whole text (with its `\n`), and the parent's Event and line. */
  addText(text: string, parentEvent: PixirEvent, parentLine: Buffer): void {
    this.k++;
    if (this.fingerprint) this.seen.add(parentEvent, parentLine);
    this.room(Buffer.byteLength(text, "utf8"));
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
    else this.block = Buffer.allocUnsafeSlow(Math.max(INHERITED_BLOCK, size));
  }

  private finishBlock(nextSize: number): void {
    this.done.push(this.block.subarray(0, this.used));
    this.used = 0;
    this.block = Buffer.allocUnsafeSlow(Math.max(INHERITED_BLOCK, nextSize));
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
export async function passThroughParent(
  ws: string,
  parentId: string,
  toSeq: number | undefined,
  checked?: ByteProgress,
): Promise<ParentSource | null> {
  const p = logPath(ws, parentId);
  const file = await openLog(p);
  if (file === null) return null;
  let byteLength: number;
  const scanner = new PrefixScanner(parentId, toSeq, false);
  let crc = 0;
  try {
    byteLength = committedLength(ws, parentId, file.fd).byteLength;
    if (byteLength === 0) return null;
    let prevSeq = -1;
    for await (const block of lineBlocks(file, byteLength)) {
      const b = block.bytes;
      // A line ends at the first `\n`, which is never part of a multi-byte character: the lines of a
      // block are valid UTF-8 each exactly when the block is.
      const lines = b.subarray(0, block.end);
      if (block.tail || !isUtf8(lines)) return null;
      crc = crc32(lines, crc);
      for (let s = 0; s < block.end; ) {
        const e = b.indexOf(NEWLINE, s);
        if (e === s || checkLine(b, s, e, true) < 0) return null;
        const seq = facts.seq;
        if (seq === null || seq < prevSeq) return null;
        prevSeq = seq;
        // A share_v1 header makes this Log a share child (or, past line 1, a corrupt one).
        if (checkedShareHeader(b)) return null;
        scanner.addChecked(b, s, e);
        s = e + 1;
      }
      checked?.add(block.end);
    }
  } finally {
    await file.close();
  }
  const plan = { ...scanner.finish(), fingerprint: bytesFingerprint(crc, byteLength) };
  const source: ParentSource = {
    parentId,
    facts: plan,
    async *inherited() {
      for await (const raw of splitLines(readLogRange(p, 0, byteLength), { path: p.rel })) {
        const line = headLine(raw, { path: p });
        if (isInherited(line.event, plan.toSeq)) yield { event: line.event, dataText: line.dataText, lineBytes: line.bytes };
      }
    },
    inheritedBlocks: (forkEventId, childId) => copyPassThrough(p, byteLength, source, forkEventId, childId),
    dispose() {},
  };
  return source;
}


/**
 * The copying pass over a parent planned by passThroughParent: the child's inherited lines, in blocks.
 * The parent is not leased, so the lines read now must be the very lines the plan read (fingerprint).
 */
async function* copyPassThrough(p: StatePath, byteLength: number, parent: Pick<ParentSource, "parentId" | "facts">, forkEventId: string, childId: string): AsyncGenerator<Buffer> {
  const changed = (count: number) => parentChangedError(parent, childId, count);
  const file = await openLog(p);
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
    await file.close();
  }
  yield* lines.take(true);
  if (lines.k !== parent.facts.eventCount || bytesFingerprint(crc, read) !== parent.facts.fingerprint) throw changed(lines.k);
}
