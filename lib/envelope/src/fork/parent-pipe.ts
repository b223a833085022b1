// A parent source: a pipe on stdin (or a file on stdin that is not all in our layout). Read once, in
// blocks of whole lines: a line the byte check accepts feeds the plan where it lies and is spooled as it
// is, any other line is decoded in full; the copying pass reads the spool into ChildLines.
import { isUtf8 } from "node:buffer";
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { NEWLINE } from "../fast/json-bytes.js";
import { type ParentSource, type PrefixFacts, PrefixScanner } from "./fork-plan.js";
import { checkLine, LineFacts } from "../fast/line-check.js";
import { LineHead, readHead, sessionIs } from "../fast/line-head.js";
import { corruptLineError, lineBlocks, readFileChunks } from "../store/log-read.js";
import { stdinLineActions } from "../lines/foreign.js";
import { dataTextOf, type DecodedLine, decodeOwnHead, isLineProblem, lineDataText, serializeEvent } from "../event/envelope.js";
import { assertSessionId, isValidSessionId } from "../event/session-id.js";
import { type HistoryItem } from "../store/loader.js";
import { splitLines } from "../lines/codec.js";
import os from "node:os";
import path from "node:path";
import { lineBlocksOf } from "../lines/pipe-read.js";
import { decodeLogLine, LineDecoder } from "../fast/decode-line.js";
import { PixirError } from "../event/errors.js";
import { osWriteFault } from "../event/os-fault.js";
import { integrityError, STDIN_PATH } from "../lines/input.js";
import { BlockWriter } from "../store/log-write.js";
import { abortable } from "../lines/abortable.js";
import { ChildLines, copyGeneral } from "./child-lines.js";

const CR = 0x0d;

/**
 * Read a parent History from a stream. The inherited lines are spooled to a
 * temp file in the OS temp directory, so memory stays flat; the file is removed by dispose().
 *
 * stdin is read in blocks of whole lines (lineBlocksOf): a line the byte check accepts
 * (line-check.ts) feeds the plan where it lies and is spooled as it is; any other line is decoded in
 * full (decodeLogLine), which tolerates what the reading rules tolerate and names every problem.
 */
export async function parentFromPipe(input: AsyncIterable<Buffer>, toSeq: number | undefined, signal?: AbortSignal): Promise<ParentSource> {
  const { dir, spool, fd } = openSpool();
  // Set by the first line (closures assign them, so they live in one record).
  const first: { parentId: string | null; parentBytes: Buffer | null; scanner: PrefixScanner | null } = { parentId: null, parentBytes: null, scanner: null };
  let prevSeq: number | null = null;
  let seenNull = false;
  let lineNo = 0;
  // The spool is written by libuv's threads while this one checks the next input (it is a temp file:
  // nothing asks the kernel to write it back).
  const writer = new BlockWriter(fd, { background: true, writeBack: false, paced: true });
  const spooled = spoolWrites(writer, dir);
  const startParent = (sessionId: string | null) => {
    assertSessionId(sessionId);
    first.parentId = sessionId;
    first.parentBytes = Buffer.from(sessionId, "utf8");
    // The spool is this process's own file: the copying pass needs no fingerprint of what it reads.
    return (first.scanner = new PrefixScanner(sessionId, toSeq, false));
  };
  const orderSeq = (seq: number | null) => {
    if (seq === null) seenNull = true;
    else if (seenNull) throw integrityError("seq_out_of_order", "no integer seq after a null one", seq, lineNo);
    else if (prevSeq !== null && seq < prevSeq) throw integrityError("seq_out_of_order", `seq >= ${prevSeq}`, seq, lineNo);
    else prevSeq = seq;
  };
  /** What checkLine found in the line at hand; decodeLine's own readHead of a line it decoded, and its decoder. */
  const lineFacts = new LineFacts();
  const decoder = new LineDecoder();
  const ownHead = new LineHead();
  /** A line the byte check refused (or of another session): the full decode, as splitLines' readers do. */
  const decodeLine = (bytes: Buffer, terminated: boolean) => {
    // The input is a History as `pixir-log cat` prints it, so the reading rules apply
    // (envelope-and-log.md §7): a missing or null id or ts is tolerated, as through --parent.
    const decoded = decodeLogLine(bytes, !terminated, decoder);
    if (isLineProblem(decoded)) {
      const err = corruptLineError(decoded, lineNo, STDIN_PATH);
      // A torn tail is the stream's; anything else is about what was piped in, not about a Log.
      if (decoded.reason !== "torn_tail") err.details.next_actions = stdinLineActions(bytes);
      throw err;
    }
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
  } catch (err) {
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
  return spoolSource(dir, spool, parentId, facts, decoder);
}

/** A temp directory of this process's own and the spool file in it, opened for writing. */
function openSpool(): { dir: string; spool: string; fd: number } {
  let dir: string;
  try {
    dir = mkdtempSync(path.join(os.tmpdir(), "pixir-fork-"));
  } catch (err) {
    throw spoolError(err, os.tmpdir());
  }
  const spool = path.join(dir, "inherited.ndjson");
  try {
    return { dir, spool, fd: openSync(spool, "wx", 0o600) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw spoolError(err, dir);
  }
}

/** The spool's writer as the reading pass uses it: only the spool's own writes fail as temp_spool_failed; an error reading stdin stays what it is. */
function spoolWrites(writer: BlockWriter, dir: string): { add(part: string | Buffer): void; drain(): Promise<void> } {
  return {
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
}

/** The parent read from a finished spool: its inherited lines, for either copying pass; dispose() removes the spool. */
function spoolSource(dir: string, spool: string, parentId: string, facts: PrefixFacts, decoder: LineDecoder): ParentSource {
  const spooledLines = () => splitLines(readFileChunks(spool), { path: STDIN_PATH });
  // The spool holds lines this process wrote from checked input; an inherited Event may still lack an
  // id or ts (null), exactly as it may through --parent.
  const spooledItem = (bytes: Buffer): HistoryItem => {
    const text = bytes.toString("utf8");
    const own = decodeOwnHead(text);
    if (own !== null) return { event: own.event, dataText: own.dataText };
    const decoded = decodeLogLine(bytes, false, decoder) as DecodedLine;
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
export function spoolError(err: unknown, dir: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (err instanceof PixirError || typeof code !== "string") return err;
  return osWriteFault(err, dir, "spool", "the spool file in the temp directory");
}

/**
 * The copying pass over parentFromPipe's spool, in blocks of its bytes: every line there is
 * inherited and was written by this process, so it needs no fingerprint; a line not in our layout
 * (a null id or ts) is decoded by `general`.
 */
export async function* copySpool(spool: string, parent: Pick<ParentSource, "facts">, forkEventId: string, childId: string, general: (bytes: Buffer) => HistoryItem): AsyncGenerator<Buffer> {
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
