// A parent source: any other Log, through the resolving loader (fork.md §3–§4; store/loader.ts). The
// loader's checking pass feeds the plan; the copying pass reads the Log's lines again, from their heads
// when they are in our layout (ChildLines), else as Events (copyGeneral).
import { isReplayType, type PixirEvent } from "../event/envelope.js";
import { type CheckedObserver, type InheritedObserver, parentChangedError, type ParentSource, PrefixScanner } from "./fork-plan.js";
import { headLine, headLines, scannedBytes } from "../store/log-read.js";
import { LineDecoder } from "../fast/decode-line.js";
import { type History, type HistoryItem, openHistory } from "../store/loader.js";
import { type RawLine, splitLines } from "../lines/codec.js";
import { logPath } from "../store/paths.js";
import { type ByteProgress } from "../event/progress.js";
import { PixirError } from "../event/errors.js";
import { ChildLines, copyGeneral } from "./child-lines.js";

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
 * Any other parent Log (a share_v1 child, lines out of seq order, a tolerated null id or ts, a torn
 * tail, bytes not in our layout): read through the resolving loader (store/loader.ts), which handles or
 * names the problem of every line. The plan is learnt during the loader's checking pass when the History
 * is the Log's lines in order; the emitting pass then reads our own key order without parsing `data`
 * again.
 */
export async function parentThroughLoader(ws: string, parentId: string, toSeq: number | undefined, command: string, options: ParentReadOptions = {}): Promise<ParentSource> {
  const { observeInherited, checked } = options;
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
          const decoder = new LineDecoder();
          return copyInheritedBlocks(lines, source, forkEventId, childId, (raw) => headLine(raw, scan, decoder), true);
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
export async function* copyInheritedBlocks(
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

/** The parent's lines read from their heads only (log-read.ts headLines), as HistoryItems. */
export async function* lightItems(history: History): AsyncGenerator<HistoryItem> {
  for await (const line of headLines(history.scan)) yield { event: line.event, dataText: line.dataText, lineBytes: line.bytes };
}

export function parentNotFound(ws: string, parentId: string, command = "pixir fork"): PixirError {
  return new PixirError("not_found", "parent session log was not found or is empty", {
    parent_session_id: parentId,
    log_path: logPath(ws, parentId).rel,
    next_actions: ["check the session id", `run ${command} from the workspace that owns the parent log`],
  });
}
