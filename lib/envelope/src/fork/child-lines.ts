// fork.md §4.2: the one copy routine of every parent source. An inherited line in our layout becomes
// the child's new head followed by the parent's bytes from `"ts":` on (ChildLines.addOurs); a line in
// any other form is made from its Event (copyGeneral: inheritedItem, serializeEvent). The lines are
// collected in blocks the writer (fork-write.ts, fork-job.ts) writes as they are and hands back.
import { COMMA, NEWLINE } from "../fast/json-bytes.js";
import { type PixirEvent, serializeEvent } from "../event/envelope.js";
import { LineFingerprint } from "./fork-plan.js";
import { CANONICAL_TYPES } from "../event/vocabulary.js";
import { derivedUlidInto } from "../event/ids.js";
import { copyBytes } from "../fast/line-check.js";
import { IS_REPLAY, LineHead, readHead, TS_KEY_LENGTH } from "../fast/line-head.js";
import { inheritedItem, isInherited } from "../store/loader.js";
import { lineTooLongToWrite, MAX_LINE_BYTES } from "../lines/codec.js";

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

/** An inherited line not in our layout, decoded by the caller (`line`), as the child's serialized text. */
export function copyGeneral(out: ChildLines, line: { event: PixirEvent; dataText?: string }, bytes: Buffer, toSeq: number, forkEventId: string, childId: string): void {
  if (!isInherited(line.event, toSeq)) return;
  const child = inheritedItem({ event: line.event, dataText: line.dataText, lineBytes: bytes }, forkEventId, childId, out.k + 1);
  out.addText(serializeEvent(child.event, child.dataText), line.event, bytes);
}
