// A parent source: a Log in our layout (fork.md §3–§4). Every line a whole envelope in our writers' key
// order with canonical `data`, in seq order, no share_v1 header: both passes run over large blocks of
// the file's bytes (parent-bytes.ts) and make no object per line. ParentPrefixCursor is the same check
// read in step with a fork stream (pixir-log write). A Log in any other form gives null here and takes
// the loader's way (parent-loader.ts).
import { isUtf8 } from "node:buffer";
import { constants as fsConstants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { NEWLINE } from "../fast/json-bytes.js";
import { type ParentSource, type PrefixFacts } from "./fork-plan.js";
import { TS_KEY_LENGTH } from "../fast/line-head.js";
import { committedLength, headLine, type LineBlock, lineBlocks, readLogRange } from "../store/log-read.js";
import { isInherited, type PrefixDigest } from "../store/loader.js";
import { LineDecoder } from "../fast/decode-line.js";
import { splitLines } from "../lines/codec.js";
import { inspectStatePath, logPath, type StatePath } from "../store/paths.js";
import { type BytePlan, type ByteReadOptions, copyPlannedBytes, ParentLineCheck, planFromBytes } from "./parent-bytes.js";

/** The file of a Log, opened without following a symlink; null when it is not a plain present Log. */
export async function openLog(p: StatePath): Promise<FileHandle | null> {
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
export async function parentFromOurLog(ws: string, parentId: string, toSeq: number | undefined, options: ByteReadOptions = {}): Promise<ParentSource | null> {
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
      const decoder = new LineDecoder();
      for await (const raw of splitLines(readLogRange(p, 0, byteLength), { path: p.rel })) {
        const line = headLine(raw, { path: p }, decoder);
        if (isInherited(line.event, facts.toSeq)) yield { event: line.event, dataText: line.dataText, lineBytes: line.bytes };
      }
    },
    inheritedBlocks: (forkEventId, childId) => copyPlannedBytes(() => openLog(p), byteLength, source, forkEventId, childId),
    dispose() {},
  };
  return source;
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
      // Nothing is copied from this pass: no fingerprint, as parentFromOurLog's without one.
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
