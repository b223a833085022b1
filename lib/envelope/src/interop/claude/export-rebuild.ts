// claude-interop.md §5.2: one source file rebuilt from its family's held records, merged in line order,
// in two passes that never hold the file: the first keeps a few numbers per record (its line, length and
// Log), the second reads the Logs again side by side and yields each record's line in its place.
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { openHistory } from "../../store/loader.js";
import { batchedBytes } from "../../store/stream-file.js";
import { storedPrefixCount } from "../../fork/fork.js";
import { rebuildCopied, type CopiedEntry } from "./fork-file.js";
import { heldLine, recordLineOf } from "./map.js";
import { parseLine } from "./transcript.js";

/** The chain records of a source session's main file, by uuid, of the uuids asked for (§3.7). */
export type SourceRecords = (sessionId: string, uuids: ReadonlySet<string>) => Promise<Map<string, JsonObject> | null>;

/** Where one record of the file comes from: a Log (by its index among the file's Logs), or a copied record (-1). */
interface RecordPlace {
  line: number;
  length: number;
  log: number;
}

/** What the first pass learns of a file: enough to report it, and to write it in the second pass. */
export interface SurveyedFile {
  ids: string[];
  records: number;
  /** The file's size in bytes (each record's line and its `\n`). */
  size: number;
  /** §5.4: the cwd of the first record, in line order, that names one. */
  cwd: string | null;
  checkpointRecords: number;
  carrier: JsonObject | null;
  /** The records in line order. */
  places: RecordPlace[];
  /** How many own Events each Log gave, so that reading it again sees the same ones (a Log only grows). */
  counts: number[];
  /** A shared fork file's copied records, rebuilt from their source records (by line). */
  copied: Map<number, Buffer>;
}

/** A record's line (without its `\n`) and its line number. */
interface PlacedLine {
  line: number;
  bytes: Buffer;
}

/**
 * §4.3 step 4: the own Events of a Log (after a share header's inherited prefix), one at a time: an export
 * keeps only the record lines it writes, never the Log's parsed Events (a long session's Events are many
 * times its bytes).
 */
export async function* ownEvents(ws: string, id: string): AsyncGenerator<PixirEvent> {
  const history = await openHistory(ws, id);
  let skip = history.share ? history.share.replayEventCount + 1 : 0;
  let i = 0;
  for await (const item of history.items()) {
    if (i === 0 && skip === 0) skip = storedPrefixCount(item.event) + 1;
    if (i === 0 || i >= skip) yield item.event; // the header, or the Log's first own Event; then the own Events
    i++;
  }
}

/** The cwd a record names, if any. */
const cwdOf = (record: unknown): string | null => (isJsonObject(record) && typeof record.cwd === "string" ? record.cwd : null);

/** The first pass over a file's Logs (`ids`, root first). */
export async function surveyFile(ws: string, ids: string[], sourceRecords?: SourceRecords): Promise<SurveyedFile> {
  const places: RecordPlace[] = [];
  const counts: number[] = [];
  let cwd: { line: number; cwd: string } | null = null;
  let checkpointRecords = 0;
  let carrier: JsonObject | null = null;
  for (const [log, id] of ids.entries()) {
    let n = 0;
    for await (const e of ownEvents(ws, id)) {
      n++;
      const c = e.data.claude;
      if (!isJsonObject(c)) continue;
      if (e.data.event === "claude_transcript" && carrier === null) carrier = c;
      if (e.data.event === "claude_import" && typeof c.records === "number") checkpointRecords = c.records;
      const line = heldLine(e);
      if (line === null) continue;
      places.push({ line, length: recordLineOf(c)!.length, log });
      const named = cwdOf(c.record);
      if (named !== null && (cwd === null || line < cwd.line)) cwd = { line, cwd: named };
    }
    counts.push(n);
  }
  const copied = new Map<number, Buffer>();
  for (const r of await copiedRecords(carrier, sourceRecords)) {
    copied.set(r.line, r.bytes);
    places.push({ line: r.line, length: r.bytes.length, log: -1 });
    if (r.cwd !== null && (cwd === null || r.line < cwd.line)) cwd = { line: r.line, cwd: r.cwd };
  }
  places.sort((a, b) => a.line - b.line);
  const size = places.reduce((sum, p) => sum + p.length + 1, 0);
  return { ids, records: places.length, size, cwd: cwd?.cwd ?? null, checkpointRecords, carrier, places, counts, copied };
}

/** §3.7: a shared fork file's copied records, rebuilt from their source records, with the cwd each names. */
async function copiedRecords(carrier: JsonObject | null, sourceRecords?: SourceRecords): Promise<Array<PlacedLine & { cwd: string | null }>> {
  const out: Array<PlacedLine & { cwd: string | null }> = [];
  const ff = carrier?.forked_from;
  if (carrier === null || !Array.isArray(carrier.copied) || !isJsonObject(ff) || ff.shared !== true || typeof ff.session_id !== "string") return out;
  const source = ff.session_id;
  const entries = carrier.copied as CopiedEntry[];
  const records = sourceRecords ? await sourceRecords(source, new Set(entries.map((e) => e.source_uuid))) : null;
  let parent: string | null = null;
  for (const entry of entries) {
    const r = records?.get(entry.source_uuid);
    if (typeof entry.raw_line !== "string" && r === undefined) continue; // counted as missing by the caller
    const text = rebuildCopied(entry, r ?? {}, String(carrier.session_id), source, parent);
    const value: unknown = r === undefined ? null : JSON.parse(text);
    out.push({ line: entry.line, bytes: Buffer.from(text, "utf8"), cwd: cwdOf(value) });
    if (!(isJsonObject(value) && value.type === "progress")) parent = entry.uuid;
  }
  return out;
}

/** The held records of a Log, in its order, up to the own Events the first pass counted. */
async function* heldRecords(ws: string, id: string, count: number): AsyncGenerator<PlacedLine> {
  let n = 0;
  for await (const e of ownEvents(ws, id)) {
    if (n++ >= count) return;
    const c = e.data.claude;
    const line = heldLine(e);
    if (isJsonObject(c) && line !== null) yield { line, bytes: recordLineOf(c)! };
  }
}

const NEWLINE = Buffer.from("\n");

/**
 * The second pass: each record's line, in line order. Each Log is read once, alongside the
 * others; a record met before its turn (a Log whose records are not in line order) waits in `early`.
 */
async function* recordLines(ws: string, file: SurveyedFile): AsyncGenerator<PlacedLine> {
  const logs = file.ids.map((id, j) => heldRecords(ws, id, file.counts[j]!));
  const early = new Map<number, Buffer>(file.copied);
  try {
    for (const place of file.places) {
      let bytes = early.get(place.line);
      if (bytes !== undefined) early.delete(place.line);
      else bytes = await nextUntil(logs[place.log], place.line, early);
      // A Log only grows, so its first Events read the same again; a record of another length means it was replaced.
      if (bytes === undefined || bytes.length !== place.length) throw changedWhileExporting(file.ids[Math.max(place.log, 0)]!);
      yield { line: place.line, bytes };
    }
  } finally {
    for (const log of logs) await log.return(undefined);
  }
}

/** Read a Log on to the record of `line`, keeping those met before it in `early`. */
async function nextUntil(log: AsyncGenerator<PlacedLine> | undefined, line: number, early: Map<number, Buffer>): Promise<Buffer | undefined> {
  if (log === undefined) return undefined;
  for (let r = await log.next(); !r.done; r = await log.next()) {
    if (r.value.line === line) return r.value.bytes;
    early.set(r.value.line, r.value.bytes);
  }
  return undefined;
}

const changedWhileExporting = (id: string): PixirError => new PixirError("log_read_failed", undefined, { session_id: id, changed_while_exporting: true });

/** The rebuilt file's bytes, in batches of about 1 MiB. */
export const fileChunks = (ws: string, file: SurveyedFile): AsyncGenerator<Buffer> => batchedBytes(withNewlines(recordLines(ws, file)));

async function* withNewlines(lines: AsyncIterable<PlacedLine>): AsyncGenerator<Buffer> {
  for await (const l of lines) {
    yield l.bytes;
    yield NEWLINE;
  }
}

/** The chain records of a rebuilt file whose uuid is asked for, read line by line (the first of each uuid). */
export async function chainRecords(ws: string, file: SurveyedFile, uuids: ReadonlySet<string>): Promise<Map<string, JsonObject>> {
  const map = new Map<string, JsonObject>();
  for await (const l of recordLines(ws, file)) {
    const r = parseLine(l.bytes, 0, l.bytes.length, l.line);
    if (r.chain && r.value !== null && uuids.has(r.uuid!) && !map.has(r.uuid!)) map.set(r.uuid!, r.value);
  }
  return map;
}
