// pi-interop.md §2–§3: `pixir import pi`. A pi file's tree becomes a fork family of Logs: the branch pi
// would resume is the primary Log, every other leaf a share_v1 child holding only the entries its branch
// adds. Everything is planned and checked before anything is written.
import { createHash } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import path from "node:path";
import { isJsonObject, serializeEvent, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { acquireLease, type WriterLease } from "../../store/lease.js";
import { createLogAtomically } from "../../store/log-write.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { PayloadWrites, writePayload } from "../../store/resources.js";
import { isValidSessionId } from "../../event/session-id.js";
import { invalidPiSession, loadPiEntry, openPiFile, scanPiFile, type PiOrphan } from "./format.js";
import { PiEntryTableBuilder, type PiEntryTable } from "./entry-table.js";
import { LineDigest, planPiFamily, plannedEvents, sameDigest, type LogDigest, type PlannedPiFamily, type PlannedPiLog } from "./plan.js";
import { PiSourceLines } from "./source-lines.js";
import { REMOVE_ACTIONS, type AgentImportOptions, type SourcePath, type WriteReport } from "../../session/agent-files.js";

export { piBaseSessionId, piBranchSessionId, piEventId, type LogDigest, type PiForkKind, type PlannedPiFamily, type PlannedPiLog } from "./plan.js";

export type PiImportStatus = "created" | "unchanged" | "would_create";

/** Files at least this large report progress (when stderr is a terminal). */
export const PI_PROGRESS_BYTES = 1024 * 1024;

/** §3.2 step 1: no Log on disk, one with the planned bytes, or one with other content (read a block at a time). */
function diskMatch(ws: string, sessionId: string, digest: LogDigest): "absent" | "same" | "other" {
  const p = logPath(ws, sessionId);
  if (inspectStatePath(p) === "missing") return "absent";
  const fd = openSync(p.abs, "r");
  try {
    if (fstatSync(fd).size !== digest.size) return "other";
    const hash = createHash("sha256");
    const block = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = readSync(fd, block, 0, block.length, null)) > 0; ) hash.update(block.subarray(0, n));
    return hash.digest("hex") === digest.sha256 ? "same" : "other";
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------------
// §3: the command.

export interface PiImportOptions extends Omit<AgentImportOptions, "paths"> {
  files: SourcePath[];
  /** Progress lines for large files; the caller passes it only when stderr is a terminal. */
  progress?: (text: string) => void;
}

export interface PiImportSessionReport {
  session_id: string;
  role: "primary" | "branch";
  leaf_entry_id: string | null;
  parent_session_id: string | null;
  event_count: number;
  status: PiImportStatus;
  trivial: boolean;
}

export interface PiImportFileReport {
  file: string;
  header_id: string | null;
  source_version: number;
  sessions: PiImportSessionReport[];
  orphans: PiOrphan[];
  skipped_lines: number;
}

export interface PiImportResult extends WriteReport {
  imports: PiImportFileReport[];
  /** Not printed: line numbers skipped per file, for warnings. */
  skipped?: Array<{ file: string; lines: number[] }>;
}

/**
 * Read and scan one file a block at a time, keeping of each entry its place, id, type and parent (a
 * PiEntryTable); each entry is read and parsed again from the file when its Events are made.
 */
function readAndParse(f: SourcePath, options: PiImportOptions): { table: PiEntryTable; source: PiSourceLines; big: PiImportOptions["progress"] } {
  const { fd, size, ino } = openPiFile(f.path, f.display);
  try {
    const big = size >= PI_PROGRESS_BYTES ? options.progress : undefined;
    big?.(`${path.basename(f.display)}: read ${size} bytes`);
    const builder = new PiEntryTableBuilder();
    const table = builder.finish(scanPiFile(fd, { file: f.display, lenient: options.lenient }, builder));
    big?.(`${path.basename(f.display)}: parsed ${table.size} entries`);
    const changed = () => invalidPiSession("unreadable_file", null, f.display, { changed_while_importing: true });
    return { table, source: new PiSourceLines(f.path, ino, size, changed), big };
  } finally {
    closeSync(fd);
  }
}

/** One file planned; what only planning needs is garbage when this returns. */
function planFile(ws: string, f: SourcePath, options: PiImportOptions): PlannedPiFamily {
  const { table, source, big } = readAndParse(f, options);
  const load = (at: number): JsonObject => {
    let entry: JsonObject;
    try {
      entry = loadPiEntry(source.line(table.offset(at), table.length(at)), () => table.idsOf(at), table.sourceVersion);
    } catch (err) {
      throw err instanceof PixirError ? err : source.changed();
    }
    // The line read again is the entry parsed, or the file changed in place.
    if (!isJsonObject(entry) || entry.type !== table.type(at) || entry.id !== table.id(at) || entry.parentId !== table.parentId(at)) throw source.changed();
    return entry;
  };
  const family = planPiFamily(ws, table, f.display, load, source.changed);
  big?.(`${path.basename(f.display)}: planned ${family.logs.length} logs`);
  return family;
}

export async function importPiFiles(ws: string, options: PiImportOptions): Promise<PiImportResult> {
  const families: PlannedPiFamily[] = [];
  for (const f of options.files) {
    families.push(planFile(ws, f, options));
  }

  // The same Log planned twice (one file given twice) is written once, and reported as created once:
  // the later mentions are `unchanged`, which is what they find. Two different plans conflict.
  const planned = new Map<string, PlannedPiLog>();
  const status = new Map<string, PiImportStatus>();
  const conflicts: Array<{ session_id: string; log_path: string; file: string }> = [];
  for (const family of families) {
    for (const log of family.logs) {
      const seen = planned.get(log.sessionId);
      if (seen !== undefined) {
        if (!sameDigest(seen.digest, log.digest)) conflicts.push({ session_id: log.sessionId, log_path: logPath(ws, log.sessionId).rel, file: family.file });
        continue;
      }
      planned.set(log.sessionId, log);
      // §3.2 step 1: a Log on disk is the same as planned, or a conflict.
      const disk = diskMatch(ws, log.sessionId, log.digest);
      if (disk === "other") conflicts.push({ session_id: log.sessionId, log_path: logPath(ws, log.sessionId).rel, file: family.file });
      else status.set(log.sessionId, disk === "same" ? "unchanged" : options.dryRun ? "would_create" : "created");
    }
  }
  if (conflicts.length > 0) {
    // The refusal names the pi file whose Log differs, not only the Log.
    throw new PixirError("already_exists", "a Log this pi session gives exists already, with other content", {
      session_id: conflicts[0]!.session_id,
      log_path: conflicts[0]!.log_path,
      file: conflicts[0]!.file,
      conflicts,
      next_actions: REMOVE_ACTIONS,
    });
  }

  const toCreate = [...planned.values()].filter((l) => status.get(l.sessionId) === "created");
  if (!options.dryRun && toCreate.length > 0) await writeFamilies(ws, toCreate, options);

  return {
    ok: true,
    recorded: !options.dryRun && toCreate.length > 0,
    dry_run: Boolean(options.dryRun),
    imports: families.map((family) => ({
      file: family.file,
      header_id: isValidSessionId(family.headerId) ? family.headerId : null,
      source_version: family.sourceVersion,
      sessions: family.logs.map((log) => ({
        session_id: log.sessionId,
        role: log.role,
        leaf_entry_id: log.leafEntryId,
        parent_session_id: log.parent?.sessionId ?? null,
        event_count: log.eventCount,
        status: planned.get(log.sessionId) === log ? status.get(log.sessionId)! : "unchanged",
        trivial: log.trivial,
      })),
      orphans: family.orphans,
      skipped_lines: family.skippedLines.length,
    })),
    skipped: families.filter((f) => f.skippedLines.length > 0).map((f) => ({ file: f.file, lines: f.skippedLines })),
  };
}

/**
 * §3.2 step 2: take every new Log's lease, write the resources and all temp files, then rename the Logs,
 * parents before children. Each createLogAtomically runs the next one just before its own rename, so
 * the chain is built from the last child inwards and the primary (innermost) is renamed first.
 */
async function writeFamilies(ws: string, logs: PlannedPiLog[], options: PiImportOptions): Promise<void> {
  const leases: WriterLease[] = [];
  let wrote = false;
  const payloads = new PayloadWrites();
  let committed = 0;
  try {
    for (const log of logs) leases.push(await acquireLease(ws, log.sessionId, { program: options.program, env: options.env, signal: options.signal }));
    for (const log of logs) {
      for (const [, payload] of log.resources.payloads) {
        writePayload(payload.path, payload.bytes, payload.ref.sha256, payloads);
      }
    }
    const reversed = logs.map((log, i) => ({ log, lease: leases[i]! })).reverse();
    const create = async (i: number): Promise<void> => {
      const item = reversed[i];
      if (item === undefined) return;
      await createLogAtomically(
        ws,
        item.log.sessionId,
        async (emit) => {
          // The lines are made again from the file: they must be the ones planned (and compared with the disk).
          const digest = new LineDigest();
          for (const event of plannedEvents(item.log)) {
            const line = serializeEvent(event);
            digest.add(line);
            emit(line);
          }
          if (!sameDigest(digest.result(), item.log.digest)) throw item.log.maker.changed();
        },
        { lease: item.lease, signal: options.signal },
        () => create(i + 1),
      );
      committed++;
    };
    await create(0);
    wrote = true;
  } finally {
    if (committed === 0) payloads.undo(); // no Log appeared: neither do their resources
    // Last taken, first released: the first lease made the state directories the others sit in.
    for (const lease of leases.reverse()) lease.release(!wrote);
  }
}

