// envelope-and-log.md §10, cli.md §8.6: repair fixes only a torn final line (and rolls back a leftover
// append journal). Any other corruption is reported and left alone.
import { closeSync, fsyncSync, ftruncateSync, openSync, readdirSync, unlinkSync, constants as fsConstants } from "node:fs";
import { osWriteFault } from "../event/os-fault.js";
import { acquireLease, type WriterOptions, type WriterReport } from "./lease.js";
import { readJournal, scanLog } from "./log-read.js";
import { fsyncDir, recoverJournal } from "./log-write.js";
import { notFoundError } from "./loader.js";
import { inspectStatePath, logPath, logTempOwner, sessionsDir } from "./paths.js";
import { isValidSessionId } from "../event/session-id.js";

export interface RepairResult extends WriterReport {
  repaired: boolean;
  dropped_bytes: number;
  dropped_line: number | null;
  journal_rolled_back: boolean;
  /** Temp files of this Log left by an interrupted write (workspace-relative), removed (or, dry, to remove). */
  removed_temp_files: string[];
}

/**
 * The names in `.pixir/sessions` of this Log's temp files (`<id>.ndjson.tmp-<8 hex>`), each left by a
 * write that never committed. Under our own lease no other writer of the Session is running, so each is
 * a leftover of one that died (check's stale_temp_file).
 */
function staleTempFiles(ws: string, id: string): string[] {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(ws).abs);
  } catch {
    return [];
  }
  return names.filter((n) => logTempOwner(n) === id).sort();
}

/** Find a torn tail: the whole Log is checked, and only an unparseable unterminated last line is tolerated. */
async function findTornTail(ws: string, id: string): Promise<{ offset: number; line: number; byteLength: number } | null> {
  let torn: { offset: number; line: number } | null = null;
  const scan = await scanLog(ws, id, {
    onProblem: (problem, raw) => {
      if (problem.reason !== "torn_tail") return "throw";
      torn = { offset: raw.offset, line: raw.lineNo };
      return "skip";
    },
  });
  if (!scan.exists) throw notFoundError(id, ws, scan.path.rel, "pixir-log repair");
  const t = torn as { offset: number; line: number } | null;
  return t === null ? null : { ...t, byteLength: scan.byteLength };
}

export async function repairLog(ws: string, id: string, options: WriterOptions): Promise<RepairResult> {
  const log = logPath(ws, id);
  const result = (repaired: boolean, dropped: number, line: number | null, journal: boolean, temps: string[]): RepairResult => ({
    ok: true,
    recorded: !options.dryRun && (repaired || journal || temps.length > 0),
    dry_run: Boolean(options.dryRun),
    session_id: id,
    log_path: log.abs,
    repaired,
    dropped_bytes: dropped,
    dropped_line: line,
    journal_rolled_back: journal,
    removed_temp_files: temps,
  });
  // A write killed before its Log appeared leaves only a temp file: that is still something to repair.
  const missing = inspectStatePath(log) === "missing";
  if (missing && staleTempFiles(ws, id).length === 0) throw notFoundError(id, ws, log.rel, "pixir-log repair");
  if (options.dryRun) {
    const torn = missing ? null : await findTornTail(ws, id);
    const journal = readJournal(ws, id) !== null;
    return result(torn !== null, torn ? torn.byteLength - torn.offset : 0, torn?.line ?? null, journal, staleTempFiles(ws, id).map((n) => log.sibling(n).rel));
  }
  const lease = await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  let changed = false;
  try {
    const journal = recoverJournal(ws, id);
    changed = journal;
    // A borrower shares the lease with a writer that may have a temp file in flight: only an owner clears them.
    const temps = lease.owned ? removeTempFiles(ws, id) : [];
    changed ||= temps.length > 0;
    const torn = missing ? null : await findTornTail(ws, id);
    if (torn === null) return result(false, 0, null, journal, temps);
    lease.assertHeld();
    let fd: number;
    try {
      fd = openSync(log.abs, fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW);
    } catch (err) {
      throw osWriteFault(err, log.rel, "open");
    }
    try {
      ftruncateSync(fd, torn.offset);
      fsyncSync(fd);
    } catch (err) {
      throw osWriteFault(err, log.rel, "truncate");
    } finally {
      closeSync(fd);
    }
    changed = true;
    return result(true, torn.byteLength - torn.offset, torn.line, journal, temps);
  } finally {
    // A refused or empty repair leaves no lease directory behind (cli-contract.md: refused writes).
    lease.release(!changed);
  }
}

/**
 * The temp files of every Log left by a write that died (an import killed with -9, say), each Log's removed
 * under its own Writer Lease as repairLog does; a Log whose lease cannot be taken now is left alone. Run by
 * the importers before they write, so the next import cleans up after a killed one. Returns what went.
 */
export async function sweepStaleTempFiles(ws: string, options: Omit<WriterOptions, "dryRun">): Promise<string[]> {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(ws).abs);
  } catch {
    return [];
  }
  const owners = [...new Set(names.map(logTempOwner).filter((id): id is string => id !== null && isValidSessionId(id)))].sort();
  const removed: string[] = [];
  for (const id of owners) {
    let lease;
    try {
      lease = await acquireLease(ws, id, options);
    } catch {
      continue; // another writer's, or a dead one's: pixir-log check still names it
    }
    let temps: string[] = [];
    try {
      if (lease.owned) temps = removeTempFiles(ws, id);
    } finally {
      lease.release(temps.length === 0);
    }
    removed.push(...temps);
  }
  return removed;
}

function removeTempFiles(ws: string, id: string): string[] {
  const removed: string[] = [];
  for (const name of staleTempFiles(ws, id)) {
    const temp = logPath(ws, id).sibling(name);
    try {
      unlinkSync(temp.abs);
      removed.push(temp.rel);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  if (removed.length > 0) fsyncDir(sessionsDir(ws));
  return removed;
}
