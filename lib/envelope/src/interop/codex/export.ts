// codex-interop.md §5: `pixir export codex`. An imported Log gives back its rollout byte for byte; a Log
// with Events added by pixir gives a new rollout that Codex resumes as a fork of the imported thread.
//
// Streamed (docs/performance.md, "Round 9: export codex streamed"): the Log's Events are read one at a time
// and each rollout line goes to the output as it is made; a first read finds the export's kind and anchor,
// and checks a family's lines, so every error comes before the first byte is written.
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { notFoundError, openHistory, type History } from "../../store/loader.js";
import { existingOutDir, logPath } from "../../store/paths.js";
import { batchedBytes, compareWithFile, writeChunksAtomically } from "../../store/stream-file.js";
import { abortable } from "../../lines/abortable.js";
import { osWriteFault } from "../../event/os-fault.js";
import { codexBaseId, EPOCH, restAfterTimestamp, shownThreadId, withTimestamp } from "./format.js";
import { sha256Hex } from "../../event/ids.js";
import { codexOf, lineOf } from "./rebuild.js";
import { checkpointToSeqOf } from "../../session/context.js";
import type { WriteReport } from "../../session/agent-files.js";
import { eventsOf, openFamilyChain, streamRolloutLines, type FamilyChain, type RolloutLine } from "./export-family.js";
import { convertTail, type TailCheckpoint, type TailTally } from "./export-convert.js";

export type CodexExportKind = "original" | "fork" | "new";

/** What an export writes, known before it writes: its kind, thread, name, and the lines it cannot rebuild. */
export interface CodexExport {
  sessionId: string;
  kind: CodexExportKind;
  threadId: string;
  forkedFromId: string | null;
  /** session_meta.cwd: where Codex resumes the thread (archive.md §5); null when line 1 names none. */
  cwd: string | null;
  /** The rollout's name under DIR (§5.5). */
  name: string;
  missingLines: number[];
  /** Makes the rollout again (reading the Logs again); nothing is read until its chunks are. */
  make(): CodexExportRun;
}

export interface CodexExportCounts extends TailTally {
  copiedLineCount: number;
}

/** One making of the rollout: its bytes in batches as they are made, and its counts, whole once every chunk is read. */
export interface CodexExportRun {
  chunks: AsyncIterable<Buffer>;
  counts: CodexExportCounts;
}

/** Bytes per write, as the old line writer's: 1 MiB batches peaked 2–5 MiB higher (docs/performance.md, round 11). */
const BATCH = 64 * 1024;
const run = (lines: AsyncIterable<string>, counts: CodexExportCounts): CodexExportRun => ({ chunks: batchedBytes(lines, BATCH), counts });

/** The whole export in memory: for a caller that needs the text itself (`pixir import` of a handed-back file). */
export interface CodexExportPlan extends Omit<CodexExport, "make">, CodexExportCounts {
  text: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/**
 * §5.5: `YYYY/MM/DD/rollout-…-<thread id>.jsonl`. The stored name is kept when it is a rollout name of this
 * thread (Codex names files by local time, which cannot be derived again); a thread id that is not a UUID
 * is written as base(thread id), so a name never holds a `/`.
 */
export function codexExportName(threadId: string, storedFile: unknown, lineOne: JsonObject): string {
  const shown = UUID.test(threadId) ? threadId : codexBaseId(threadId);
  if (typeof storedFile === "string" && shown === threadId) {
    const m = /^rollout-(\d{4})-(\d{2})-(\d{2})T\d{2}-\d{2}-\d{2}-(.+)\.jsonl$/.exec(storedFile);
    if (m !== null && m[4] === threadId) return `${m[1]}/${m[2]}/${m[3]}/${storedFile}`;
  }
  const payload = isJsonObject(lineOne.payload) ? lineOne.payload : {};
  let ms = typeof payload.timestamp === "string" ? Date.parse(payload.timestamp) : NaN;
  if (Number.isNaN(ms)) ms = typeof lineOne.timestamp === "string" ? Date.parse(lineOne.timestamp) : NaN;
  const d = new Date(Number.isNaN(ms) ? 0 : ms);
  const day = `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}`;
  const time = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}`;
  return `${day}/rollout-${time}-${shown}.jsonl`;
}

/** §5.3: the new thread id, a UUID in the v7 layout that depends only on the Log and the anchor. */
export function codexForkThreadId(sessionId: string, anchorId: string, t0: string): string {
  let m = Date.parse(t0);
  if (Number.isNaN(m)) m = 0;
  m = Math.min(Math.max(m, 0), 2 ** 48 - 1);
  const h = sha256Hex(`pixir-codex:${sessionId}:${anchorId}`);
  const hex = `${m.toString(16).padStart(12, "0")}7${h.slice(0, 3)}${"89ab"[parseInt(h[3]!, 16) & 3]}${h.slice(4, 19)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export interface CodexExportOptions {
  /** archive.md §5: the working directory a new rollout records (--cwd, or the cwd another agent recorded). */
  cwd?: string;
}

const cwdOf = (meta: JsonObject): string | null => (typeof meta.cwd === "string" ? meta.cwd : null);

/** What the first read of E keeps: its size, its first Event, its last line Event, and its native tail's anchor. */
interface HistoryShape {
  count: number;
  first: PixirEvent | undefined;
  /** The index in E of e*, the last line Event (§5.1), or -1. */
  last: number;
  lastEvent: PixirEvent | null;
  /** The first Event of the native tail (after e*, not synthetic), or null when the tail is empty. */
  tailFirst: PixirEvent | null;
  /** E's seqs rise (an Event without a seq aside), and its checkpoints, for the conversion (export-convert.ts). */
  rising: boolean;
  checkpoints: TailCheckpoint[];
}

/** §5.1: read E once, keeping what decides the export; a line Event after a native Event is `mixed_history`. */
async function shapeOf(history: History): Promise<HistoryShape> {
  const shape: HistoryShape = { count: history.eventCount, first: undefined, last: -1, lastEvent: null, tailFirst: null, rising: true, checkpoints: [] };
  let firstNative = -1;
  let i = 0;
  let seq = -Infinity;
  for await (const e of eventsOf(history, history.eventCount)) {
    if (i === 0) shape.first = e;
    const c = codexOf(e);
    if (e.seq !== null) {
      if (e.seq <= seq) shape.rising = false;
      seq = e.seq;
    }
    const to = e.type === "history_compaction" && e.seq !== null ? checkpointToSeqOf(e) : null;
    if (to !== null) shape.checkpoints.push({ index: i, seq: e.seq!, to, native: c === null });
    if (c === null) {
      if (firstNative === -1 && (i > 0 || e.type !== "session_fork")) firstNative = i;
      // For the new export (no line Event) the tail is E after its first Event, as `last` stays -1.
      if (shape.tailFirst === null && i > shape.last && (shape.last !== -1 || i > 0)) shape.tailFirst = e;
    } else if (lineOf(e) !== null) {
      if (firstNative !== -1) throw new PixirError("invalid_args", "the History mixes imported and native Events", { field: "session_id", reason: "mixed_history" });
      shape.last = i;
      shape.lastEvent = e;
      shape.tailFirst = null;
    }
    i++;
  }
  shape.count = i;
  return shape;
}

/** §5.1–§5.4: what `pixir export codex <id>` writes, checked, to be written by `write` (or `finishCodexExport`). */
export async function openCodexExport(ws: string, id: string, version: string, options: CodexExportOptions = {}): Promise<CodexExport> {
  const history = await openHistory(ws, id, { notFound: () => notFoundError(id, ws, logPath(ws, id).rel, "pixir export codex") });
  const shape = await shapeOf(history);
  if (shape.lastEvent === null) return newExport(ws, id, history, shape, version, options);
  const t = String(codexOf(shape.lastEvent)!.thread);
  const { chain, family } = await openFamilyChain(ws, t);
  if (family === null || family === "foreign") throw new PixirError("fork_parent_missing", undefined, { session_id: id, parent_session_id: codexBaseId(t) });
  const own = shape.first === undefined ? null : codexOf(shape.first);
  const inFamily = own !== null && ((own.line === 1 && own.synthetic === undefined) || own.synthetic === "rollback_fork");
  if (shape.tailFirst === null && inFamily) {
    const { kept, missing } = await checkFamilyLines(id, streamRolloutLines(chain, t), Infinity);
    return {
      sessionId: id,
      kind: "original",
      threadId: t,
      forkedFromId: null,
      cwd: isJsonObject(family.lineOne.payload) ? cwdOf(family.lineOne.payload) : null,
      name: codexExportName(t, family.header.file, family.lineOne),
      missingLines: missing,
      make: () => run(keptLines(streamRolloutLines(chain, t, 0, false), Infinity), { lineCount: kept, copiedLineCount: 0, convertedEventCount: 0, omitted: {} }),
    };
  }
  return forkExport(id, history, shape, chain, t, options);
}

/** §5.3 fork: Codex's own fork layout (line 1, the copies of lines 2 … x), then the native tail. */
async function forkExport(id: string, history: History, shape: HistoryShape, chain: FamilyChain, t: string, options: CodexExportOptions): Promise<CodexExport> {
  const lineOne = chain.get(t)!.lineOne;
  const x = lineOf(shape.lastEvent!)!;
  const anchor = shape.tailFirst ?? shape.first!;
  const t0 = anchor.ts ?? EPOCH;
  const newId = codexForkThreadId(id, anchor.id ?? "", t0);
  const payload = isJsonObject(lineOne.payload) ? lineOne.payload : {};
  const meta: JsonObject = {};
  for (const [k, v] of Object.entries(payload)) {
    if (k === "forked_from_id") continue;
    meta[k] = v;
    if (k === "id") {
      meta.id = newId;
      meta.forked_from_id = t;
    }
  }
  meta.timestamp = t0;
  if (options.cwd !== undefined) meta.cwd = options.cwd;
  const { missing } = await checkFamilyLines(id, streamRolloutLines(chain, t), x);
  // A line without a leading timestamp is copied as it is: Codex's fork writes every record's time, but
  // this one had none to replace.
  const atT0 = (l: string): string => {
    const r = restAfterTimestamp(l);
    return r === null ? l : withTimestamp(t0, r.rest);
  };
  const copies = () => keptLines(streamRolloutLines(chain, t, 0, false), x, atT0);
  return newRollout(id, "fork", t, meta, missing, history, shape, copies);
}

/** §5.3 new: a rollout without a source, every Event of E converted. */
function newExport(ws: string, id: string, history: History, shape: HistoryShape, version: string, options: CodexExportOptions): CodexExport {
  const anchor = shape.first!;
  const t0 = anchor.ts ?? EPOCH;
  const newId = codexForkThreadId(id, anchor.id ?? "", t0);
  const meta: JsonObject = { id: newId, timestamp: t0, cwd: options.cwd ?? ws, originator: "pixir", cli_version: version, source: "cli" };
  return newRollout(id, "new", null, meta, [], history, shape, null);
}

/**
 * §5.3: a new rollout: line 1 (`meta`), a fork's copied lines, then the native tail converted (for a new
 * rollout, every Event of E).
 */
function newRollout(id: string, kind: "fork" | "new", forkedFromId: string | null, meta: JsonObject, missing: number[], history: History, shape: HistoryShape, copies: (() => AsyncIterable<string>) | null): CodexExport {
  const threadId = meta.id as string;
  const events = () => eventsOf(history, shape.count);
  return {
    sessionId: id,
    kind,
    threadId,
    forkedFromId,
    cwd: cwdOf(meta),
    name: codexExportName(threadId, null, { timestamp: meta.timestamp, payload: meta }),
    missingLines: missing,
    make: () => {
      const counts: CodexExportCounts = { lineCount: 1, copiedLineCount: 0, convertedEventCount: 0, omitted: {} };
      const tail = { last: kind === "new" ? -1 : shape.last, all: kind === "new", rising: shape.rising, checkpoints: shape.checkpoints };
      async function* lines(): AsyncGenerator<string> {
        yield `${JSON.stringify({ timestamp: meta.timestamp, type: "session_meta", payload: meta })}\n`;
        if (copies !== null) {
          for await (const l of copies()) {
            counts.lineCount++;
            counts.copiedLineCount++;
            yield l;
          }
        }
        yield* convertTail(events, tail, counts);
      }
      return run(lines(), counts);
    },
  };
}

/**
 * Lines 1 … x of a family's rollout (§5.2, §5.3), checked before any is written, the whole rollout read as
 * `rolloutLines` reads it. A line a --lenient import skipped cannot be rebuilt: it is left out and named. A
 * line no family Log holds (a removed Log) fails the export: the README's rule for `codex_export_incomplete`.
 */
async function checkFamilyLines(id: string, lines: AsyncIterable<RolloutLine>, x: number): Promise<{ kept: number; missing: number[] }> {
  let kept = 0;
  let n = 0;
  const missing: number[] = [];
  const absent: number[] = [];
  for await (const l of lines) {
    if (++n > x) continue;
    if (l === undefined) absent.push(n);
    else if (l === null) missing.push(n);
    else kept++;
  }
  // Lines past the family's greatest one, up to a fork's x, are held by no Log.
  if (Number.isFinite(x)) for (n++; n <= x; n++) absent.push(n);
  if (absent.length > 0) throw new PixirError("codex_export_incomplete", undefined, { session_id: id, missing_lines: absent });
  return { kept, missing };
}

/** The lines among the first x that can be written (checked by `checkFamilyLines`), `edit`ed, each with its newline. */
async function* keptLines(lines: AsyncIterable<RolloutLine>, x: number, edit = (l: string): string => l): AsyncGenerator<string> {
  let n = 0;
  for await (const l of lines) {
    if (++n > x) return;
    if (typeof l === "string") yield `${edit(l)}\n`;
  }
}

/** The whole export as text, for a caller that needs it in memory; the streamed export is `openCodexExport`. */
export async function planCodexExport(ws: string, id: string, version: string, options: CodexExportOptions = {}): Promise<CodexExportPlan> {
  const exp = await openCodexExport(ws, id, version, options);
  const { chunks, counts } = exp.make();
  const parts: Buffer[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  const { make: _make, ...shape } = exp;
  return { ...shape, ...counts, text: Buffer.concat(parts).toString("utf8") };
}

export interface CodexExportReport extends WriteReport {
  session_id: string;
  export: CodexExportKind;
  thread_id: string | null;
  forked_from_id: string | null;
  /** archive.md §5: session_meta.cwd of the rollout. */
  cwd: string | null;
  file: string;
  path: string | null;
  line_count: number;
  copied_line_count: number;
  converted_event_count: number;
  omitted: Record<string, number>;
  missing_lines: number[];
  status: "created" | "unchanged" | "would_create";
}

/**
 * §5.5: write the rollout under DIR (temp plus rename, the date directories made), never over another file:
 * an existing one is compared with the export as it is made, never read whole. `signal`: an interrupted
 * run stops between batches, its temp file removed.
 */
export async function finishCodexExport(exp: CodexExport, options: { out?: string; cwd: string; dryRun?: boolean; signal?: AbortSignal }): Promise<CodexExportReport> {
  const target = options.out === undefined ? null : path.join(existingOutDir(options.cwd, options.out), exp.name);
  const { chunks, counts } = exp.make();
  const bytes = abortable(chunks, options.signal);
  // An absent target takes no chunk: the same run then writes the file, or is only counted.
  const state = target === null ? "absent" : await compareWithFile(target, bytes);
  if (state === "different") {
    throw new PixirError("already_exists", "the export file already exists with other contents", { path: target, next_actions: ["remove the file or export to another directory"] });
  }
  let status: CodexExportReport["status"] = state === "same" ? "unchanged" : "would_create";
  if (state === "absent" && target !== null && !options.dryRun) {
    await writeChunksAtomically(target, bytes, { mode: 0o644, parents: true, fault: (err) => osWriteFault(err, target, "write", "the exported Codex file") });
    status = "created";
  } else if (state === "absent") {
    for await (const _counted of bytes);
  }
  return {
    ok: true,
    recorded: status === "created",
    dry_run: Boolean(options.dryRun),
    session_id: exp.sessionId,
    export: exp.kind,
    thread_id: shownThreadId(exp.threadId),
    forked_from_id: exp.forkedFromId === null ? null : shownThreadId(exp.forkedFromId),
    cwd: exp.cwd,
    file: exp.name,
    path: target,
    line_count: counts.lineCount,
    copied_line_count: counts.copiedLineCount,
    converted_event_count: counts.convertedEventCount,
    omitted: counts.omitted,
    missing_lines: exp.missingLines,
    status,
  };
}
