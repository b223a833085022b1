// The import index of `pixir import codex` (cli-contract.md "unchanged rollouts are not read"):
// `.pixir/codex-imports/<root id>.json` remembers the size and modification time of each imported file and
// digests of its first and last bytes, so importing an unchanged tree again reads neither the rollouts nor
// the Logs (a rollout of 128 KiB or less is digested whole). It is a cache: the Logs are the record.
import { closeSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { JsonObject } from "../../event/envelope.js";
import { randomHex } from "../../event/ids.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { codexBaseId, edgeDigests, type EdgeDigests } from "./format.js";
import type { CodexImportReport } from "./report.js";

/** What the index keeps of a file as it was read. */
export interface ReadFacts {
  size: number;
  mtimeMs: number;
  edges: EdgeDigests;
}

interface IndexEntry {
  version: 2;
  thread_id: string;
  file_size: number;
  file_mtime_ms: number;
  /** format.ts EdgeDigests of the file as it was read. */
  head_sha256: string;
  tail_sha256: string;
  /** Line 1's record, kept for a subagent only (its link reads it, §3.6). */
  line_one: JsonObject | null;
  task: string | null;
  report: CodexImportReport;
}

const indexPath = (ws: string, base: string): string => path.join(ws, ".pixir", "codex-imports", `${base}.json`);

/** The edge digests of a file as it is now, or null when it cannot be read whole. */
function fileEdgeDigests(file: string, size: number): EdgeDigests | null {
  let fd: number | null = null;
  try {
    const handle = openSync(file, "r");
    fd = handle;
    return edgeDigests(size, (buf, position) => {
      if (readSync(handle, buf, 0, buf.length, position) !== buf.length) throw new Error("short read");
    });
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function readIndex(ws: string, base: string): IndexEntry | null {
  try {
    const v = JSON.parse(readFileSync(indexPath(ws, base), "utf8")) as IndexEntry;
    return v.version === 2 ? v : null;
  } catch {
    return null;
  }
}

/**
 * An unchanged rollout, known from the index: same size, time and edges, and every Log it made present.
 * Its report says `unchanged` for every Log.
 */
export function indexedUnchanged(ws: string, threadId: string, file: { path: string; display: string }): { report: CodexImportReport; lineOne: JsonObject | null; task: string | null } | null {
  const base = codexBaseId(threadId);
  const entry = readIndex(ws, base);
  if (entry === null || entry.thread_id !== threadId) return null;
  let size: number;
  let mtime: number;
  try {
    const st = statSync(file.path);
    size = st.size;
    mtime = st.mtimeMs;
  } catch {
    return null;
  }
  if (size !== entry.file_size || mtime !== entry.file_mtime_ms) return null;
  for (const s of entry.report.sessions) if (inspectStatePath(logPath(ws, s.session_id)) === "missing") return null;
  const digests = fileEdgeDigests(file.path, size);
  if (digests === null || digests.head !== entry.head_sha256 || digests.tail !== entry.tail_sha256) return null;
  const report: CodexImportReport = {
    ...entry.report,
    file: file.display,
    sessions: entry.report.sessions.map((s) => ({ ...s, new_event_count: 0, status: "unchanged" })),
  };
  return { report, lineOne: entry.line_one, task: entry.task };
}

/** The directory of the index, where an entry's temp file is made too. */
export const indexDir = (ws: string): string => path.join(ws, ".pixir", "codex-imports");

/**
 * The entry written to a temp file beside its place (`<root id>.json.tmp-<8 hex>`), returned by its path,
 * or null when that fails (a full disk): a write of the index fails nothing, and the next import reads
 * the rollout again. placeIndexEntry puts it in place.
 */
function prepareIndexEntry(ws: string, base: string, entry: IndexEntry): string | null {
  const tmp = `${indexPath(ws, base)}.tmp-${randomHex(4)}`;
  try {
    mkdirSync(indexDir(ws), { recursive: true });
    writeFileSync(tmp, JSON.stringify(entry), { flag: "wx" });
    return tmp;
  } catch {
    rmSync(tmp, { force: true });
    return null;
  }
}

/** A prepared entry put in place (or, when that fails, taken away). */
export function placeIndexEntry(ws: string, base: string, tmp: string): void {
  try {
    renameSync(tmp, indexPath(ws, base));
  } catch {
    rmSync(tmp, { force: true });
  }
}

function writeIndexEntry(ws: string, base: string, entry: IndexEntry): void {
  const tmp = prepareIndexEntry(ws, base, entry);
  if (tmp !== null) placeIndexEntry(ws, base, tmp);
}

function entryOf(threadId: string, file: ReadFacts, lineOne: JsonObject | null, report: CodexImportReport, task: string | null): IndexEntry {
  return { version: 2, thread_id: threadId, file_size: file.size, file_mtime_ms: file.mtimeMs, head_sha256: file.edges.head, tail_sha256: file.edges.tail, line_one: lineOne, task, report };
}

/** Remember a rollout whose family was just written. `lineOne` is kept only for a subagent's link. */
export function recordImport(ws: string, threadId: string, file: ReadFacts, lineOne: JsonObject | null, report: CodexImportReport, task: string | null): void {
  writeIndexEntry(ws, codexBaseId(threadId), entryOf(threadId, file, lineOne, report, task));
}

/**
 * The entry recordImport would write, prepared in a temp file before the family is written (a streamed
 * family, whose report is known when its Log is prepared): the writing pass only renames it into place,
 * and a run that fails removes it with the prepared Log. Null when it could not be written.
 */
export function prepareImportRecord(ws: string, threadId: string, file: ReadFacts, lineOne: JsonObject | null, report: CodexImportReport, task: string | null): string | null {
  return prepareIndexEntry(ws, codexBaseId(threadId), entryOf(threadId, file, lineOne, report, task));
}

/** A link appended to a family's leaf: its indexed event count grows by one. */
export function recordLink(ws: string, thread: string, sessionId: string): void {
  const base = codexBaseId(thread);
  const entry = readIndex(ws, base);
  if (entry === null) return;
  for (const s of entry.report.sessions) if (s.session_id === sessionId) s.event_count++;
  writeIndexEntry(ws, base, entry);
}
