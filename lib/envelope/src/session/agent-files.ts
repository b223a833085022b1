// What the importers and exporters of other agents' files (interop/<agent>/) share, written once: a run's
// options, a planned Log held against the disk (refused when it differs otherwise), the status it reports,
// and an export's `--out` file.
import { statSync } from "node:fs";
import path from "node:path";
import { envelopeHead, isEncodable, type PixirEvent } from "../event/envelope.js";
import { PixirError } from "../event/errors.js";
import { assertOutDirectory, ExportFile } from "../store/export-file.js";
import { prepareLog, type PreparedLog } from "../store/log-write.js";
import { logPath } from "../store/paths.js";
import { diskState, type DiskState } from "../store/planned-logs.js";

/** A source path: where to read it, and how output and errors name it (the argument as given). */
export interface SourcePath {
  path: string;
  display: string;
}

/** The options every `pixir import <agent> [PATH…]` run takes. */
export interface AgentImportOptions {
  /** Paths as given (resolved against cwd by the caller into `path`); none means the agent's own home. */
  paths: SourcePath[];
  lenient?: boolean;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

export type ImportStatus = "created" | "appended" | "unchanged" | "would_create" | "would_append";

/** One Log in the report of an import run. */
export interface ImportedLog<Role = string> {
  session_id: string;
  role: Role;
  parent_session_id: string | null;
  event_count: number;
  new_event_count: number;
  status: ImportStatus;
}

/** The head of every import's and export's report: whether it wrote (`recorded`), or would have. */
export interface WriteReport {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
}

/** The report of an import run: what each source gave (`imports`), beside the agent's own lists. */
export interface ImportResult<Import> extends WriteReport {
  workspace: string;
  imports: Import[];
}

/** The one next action of a refusal, by its reason. */
export const REMOVE_ACTIONS = ["remove the existing logs with pixir-log rm, then import again"];
export const DIVERGED_ACTIONS = ["fork the imported Log before adding Events to it (pixir fork), then import again"];

/**
 * A planned Log compared with the disk, and how many of its Events the disk already holds. A Log on disk
 * that is neither absent, the same, nor a prefix of the plan refuses the run, naming `file`.
 */
export function plannedOnDisk(ws: string, log: { sessionId: string; bytes: Buffer; stored: readonly unknown[] }, file: string): { disk: DiskState; before: number } {
  const disk = diskState(ws, log.sessionId, log.bytes);
  if (disk.state === "changed" || disk.state === "diverged") {
    const reason = disk.state === "changed" ? "source_changed" : "log_diverged";
    throw new PixirError("already_exists", "session log already exists", {
      session_id: log.sessionId,
      log_path: logPath(ws, log.sessionId).rel,
      reason,
      file,
      next_actions: reason === "log_diverged" ? DIVERGED_ACTIONS : REMOVE_ACTIONS,
    });
  }
  const before = disk.state === "same" ? log.stored.length : disk.state === "prefix" ? newlines(log.bytes, disk.size) : 0;
  return { disk, before };
}

const newlines = (b: Buffer, end: number): number => {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1 && i < end; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
};

export const needsWrite = (disk: DiskState): boolean => disk.state === "absent" || disk.state === "prefix";

export function plannedStatus(disk: DiskState, dryRun: boolean): ImportStatus {
  if (disk.state === "same") return "unchanged";
  if (disk.state === "prefix") return dryRun ? "would_append" : "appended";
  return dryRun ? "would_create" : "created";
}

/**
 * A planned Log's bytes; a string that cannot be stored is refused naming the agent's `file` and, when
 * `lineOf` is given, the line of that file the Event came from.
 */
export function plannedLogBytes(events: Iterable<PixirEvent>, file: string, lineOf?: (e: PixirEvent) => unknown): Buffer {
  const blocks: Buffer[] = [];
  // Copied: the encoder reuses its block.
  encodePlannedLines(events, file, lineOf, (block) => blocks.push(Buffer.from(block)));
  return Buffer.concat(blocks);
}

/** One planned line as its two texts, `serializeEvent`'s envelope head and data, checked (log_encode_failed). */
function plannedLineParts(e: PixirEvent, file: string, lineOf: ((e: PixirEvent) => unknown) | undefined): { head: string; data: string } {
  const head = envelopeHead(e);
  const data = JSON.stringify(e.data);
  // isEncodable of the whole line, taken part by part (an escape never spans the two), so the line is never made.
  if (!isEncodable(head, e.data) || !isEncodable(data, e.data)) {
    throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type: e.type, ...(lineOf === undefined ? {} : { line: lineOf(e) }), file });
  }
  return { head, data };
}

/**
 * The lines of plannedLogBytes one at a time, each checked as it is made: an importer that keeps only a
 * digest of its plan (pi) hashes them, and makes them again when it writes the Log.
 */
export function forEachPlannedLine(events: Iterable<PixirEvent>, file: string, lineOf: ((e: PixirEvent) => unknown) | undefined, sink: (line: string) => void): void {
  for (const e of events) {
    const { head, data } = plannedLineParts(e, file, lineOf);
    sink(`${head}${data}}\n`);
  }
}

/** Every line of a planned Log checked as plannedLogBytes checks it, none kept (a dry run). */
export function checkPlannedLines(events: Iterable<PixirEvent>, file: string, lineOf: ((e: PixirEvent) => unknown) | undefined): void {
  for (const e of events) plannedLineParts(e, file, lineOf);
}

/** Bytes of planned lines gathered into one block before it goes out. */
const PLANNED_BLOCK_BYTES = 192 * 1024;

/**
 * The bytes of a planned Log's lines, checked as they are made, in blocks of whole lines: each line's head
 * and data are written as UTF-8 straight into one reused block (`emit` copies what it keeps), so no line is
 * made as one text and no block is joined (the churn a large import's heap grew with).
 */
export class PlannedLineEncoder {
  private readonly block = Buffer.allocUnsafe(PLANNED_BLOCK_BYTES);
  private used = 0;
  constructor(
    private readonly file: string,
    private readonly lineOf: ((e: PixirEvent) => unknown) | undefined,
    private readonly emit: (block: Buffer) => void,
  ) {}
  add(e: PixirEvent): void {
    const { head, data } = plannedLineParts(e, this.file, this.lineOf);
    // A UTF-16 unit takes at most 3 bytes in UTF-8, so this much room always holds the line.
    const room = (head.length + data.length) * 3 + 2;
    if (room > this.block.length - this.used) this.flush();
    if (room > this.block.length) {
      this.emit(Buffer.from(`${head}${data}}\n`, "utf8"));
      return;
    }
    this.used += this.block.write(head, this.used, "utf8");
    this.used += this.block.write(data, this.used, "utf8");
    this.block[this.used++] = 0x7d; // }
    this.block[this.used++] = 0x0a; // \n
  }
  /** The lines added since the last flush go out (call it after the last). */
  flush(): void {
    if (this.used > 0) this.emit(this.block.subarray(0, this.used));
    this.used = 0;
  }
}

/** PlannedLineEncoder over a planned Log's Events. */
export function encodePlannedLines(events: Iterable<PixirEvent>, file: string, lineOf: ((e: PixirEvent) => unknown) | undefined, emit: (block: Buffer) => void): void {
  const encoder = new PlannedLineEncoder(file, lineOf, emit);
  for (const e of events) encoder.add(e);
  encoder.flush();
}

/**
 * A new planned Log's temp file (prepareLog, before the lease), its lines written as they are made, checked
 * as plannedLogBytes checks them, in blocks of bytes as the whole Log's bytes were written: its bytes are
 * never held whole.
 */
export function preparePlannedLog(ws: string, sessionId: string, events: Iterable<PixirEvent>, file: string, lineOf: ((e: PixirEvent) => unknown) | undefined, signal: AbortSignal | undefined): Promise<PreparedLog> {
  // The writer copies each block as it takes it.
  const produce = async (emit: (block: Buffer) => void): Promise<void> => encodePlannedLines(events, file, lineOf, emit);
  return prepareLog(ws, sessionId, produce, { lease: null, signal });
}

/** `pixir export <agent> ID` of an agent with an install store: `--out`, or `--install` to the agent's own place. */
export interface AgentExportOptions {
  out?: string;
  install?: boolean;
  dryRun?: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Where `--out` writes: FILE as given, or `fileName` inside an existing DIR. A path that ends in a
 * separator (`exported/`) names a directory, so it must exist; it never becomes a file of that name.
 */
export function exportTarget(out: string, cwd: string, fileName: string): string {
  const abs = path.resolve(cwd, out);
  let isDir = out.endsWith("/") || out.endsWith(path.sep);
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    /* absent: a file path, unless written as a directory */
  }
  const target = isDir ? path.join(abs, fileName) : abs;
  assertOutDirectory(target);
  return target;
}

/**
 * Write an exported file whole (temp + rename); an existing target is refused, never replaced. A failed
 * write (a full disk) leaves nothing and says so. `what` names it in errors ("the exported pi file").
 */
export function writeExportFile(target: string, display: string, what: string, bytes: Buffer): void {
  const file = new ExportFile(target, display, what);
  try {
    file.write(bytes);
    file.commit();
  } finally {
    file.discard();
  }
}

/** A tool call's arguments text as JSON, or {} when it is not JSON. */
export function jsonOrEmpty(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}
