// docs/gemini-opencode-interop.md §3: `pixir import gemini [PATH…]`. Every file is read and planned, every
// Log compared with the disk, and every refusal found before anything is written. A Log on disk that is
// a prefix of its plan gets the rest appended; one that differs otherwise is refused.
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PixirError } from "../../event/errors.js";
import { compareBytes, isValidSessionId } from "../../event/session-id.js";
import { discardPreparedLog, prepareLog, type PreparedLog } from "../../store/log-write.js";
import { inspectStatePath, logPath } from "../../store/paths.js";
import { writePlannedLogs, type DiskState } from "../../store/planned-logs.js";
import { needsWrite as diskNeedsWrite, PlannedLineEncoder, plannedOnDisk, preparePlannedLog, plannedStatus, type AgentImportOptions, type ImportedLog, type ImportResult, type SourcePath } from "../../session/agent-files.js";
import { invalidGeminiSession, readGeminiSession, type ParsedGeminiFile } from "./format.js";
import { checkGeminiLog, geminiBaseSessionId, geminiLogBytes, geminiSourceLine, planGeminiFamily, type PlannedGeminiFamily, type PlannedGeminiLog } from "./plan.js";

export interface GeminiImportOptions extends AgentImportOptions {
  progress?: (text: string) => void;
  /** Planned bytes kept from the check to the write (default KEPT_BYTES_BUDGET); past it a file is planned again. */
  keptBytes?: number;
}

export interface GeminiImportSession extends ImportedLog<"root" | "branch"> {
  branch: string | null;
  forked_to_seq: number | null;
}

export interface GeminiImportFile {
  file: string;
  session_id: string | null;
  legacy: boolean;
  line_count: number;
  pending_tail: boolean;
  skipped_lines: number;
  message_count: number;
  sessions: GeminiImportSession[];
  leaf_session_id: string;
}

export interface GeminiImportResult extends ImportResult<GeminiImportFile> {
  skipped_files: Array<{ file: string; reason: string }>;
}

/** Gemini's data directory: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (Gemini's own rule). */
export function geminiHome(env: NodeJS.ProcessEnv): string {
  const home = env.GEMINI_CLI_HOME && env.GEMINI_CLI_HOME.trim() !== "" ? env.GEMINI_CLI_HOME : (env.HOME ?? os.homedir());
  return path.join(home, ".gemini");
}

const isSessionFile = (name: string): boolean => name.endsWith(".jsonl") || (name.startsWith("session-") && name.endsWith(".json"));

/** Walk a directory: names in byte order, symbolic links neither followed nor read. */
function walk(dir: string, display: string, out: SourcePath[]): void {
  const names = readdirSync(dir).sort(compareBytes);
  for (const name of names) {
    const abs = path.join(dir, name);
    const st = lstatSync(abs);
    if (st.isDirectory()) walk(abs, path.join(display, name), out);
    else if (st.isFile() && isSessionFile(name)) out.push({ path: abs, display: path.join(display, name) });
  }
}

/** The files of a run: named files as they are, directories walked; a file reached twice is read once. */
export function geminiInputs(options: Pick<GeminiImportOptions, "paths" | "env">): SourcePath[] {
  const roots = options.paths.length > 0 ? options.paths : [{ path: path.join(geminiHome(options.env), "tmp"), display: path.join(geminiHome(options.env), "tmp") }];
  const files: SourcePath[] = [];
  for (const r of roots) {
    let st;
    try {
      st = lstatSync(r.path);
    } catch {
      throw new PixirError("not_found", "Gemini CLI session path was not found", { path: r.display, next_actions: ["check the path", "set GEMINI_CLI_HOME or pass the chats directory"] });
    }
    if (st.isDirectory()) walk(r.path, r.display, files);
    else files.push(r);
  }
  const seen = new Set<string>();
  return files.filter((f) => {
    const real = realpathSync(f.path);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}

/** What a run keeps of a planned Log between its passes: no Events, no bytes (memory stays per file). */
interface Work {
  sessionId: string;
  report: Omit<GeminiImportSession, "status" | "new_event_count">;
  disk: DiskState;
  before: number;
}

/** What a run keeps of a file between its passes. */
interface FileWork {
  input: SourcePath;
  baseSessionId: string;
  legacy: boolean;
  report: Omit<GeminiImportFile, "sessions">;
  work: Work[];
  /** The planned bytes of the Logs to write when some are appended to, kept from pass 1 while the run's budget allows. */
  kept: Buffer[] | null;
  /** The temp files of its Logs when they are all new, made in pass 1. */
  prepared: PreparedLog[] | null;
}

/**
 * Planned bytes a run keeps from its check to its write for files with Logs to append to (new Logs go to
 * temp files at once); past it such a file is planned again to be written.
 */
export const KEPT_BYTES_BUDGET = 8 * 1024 * 1024;

/** A duplicate session id across files: the `.jsonl` Gemini migrated a legacy `.json` into wins. */
function dropMigrated(files: FileWork[], skipped: GeminiImportResult["skipped_files"], lenient: boolean): FileWork[] {
  const bySession = new Map<string, FileWork>();
  const out: FileWork[] = [];
  for (const f of files) {
    const other = bySession.get(f.baseSessionId);
    if (other === undefined) {
      bySession.set(f.baseSessionId, f);
      out.push(f);
      continue;
    }
    const legacyOne = f.legacy && !other.legacy ? f : !f.legacy && other.legacy ? other : null;
    if (legacyOne !== null) {
      skipped.push({ file: legacyOne.input.display, reason: "superseded_by_jsonl" });
      if (legacyOne === other) out[out.indexOf(other)] = f;
      bySession.set(f.baseSessionId, legacyOne === other ? f : other);
      continue;
    }
    if (lenient) skipped.push({ file: f.input.display, reason: "duplicate_session_id" });
    else throw invalidGeminiSession("duplicate_session_id", 1, f.input.display, { other_file: other.input.display });
  }
  return out;
}

/** Read, parse and plan one file (null: empty). */
function planFile(ws: string, input: SourcePath, lenient: boolean): PlannedGeminiFamily | null {
  const parsed = readGeminiSession(input.path, input.display, lenient);
  if (parsed === null) return null;
  try {
    return planGeminiFamily(ws, parsed, input.display);
  } finally {
    parsed.close();
  }
}

/** What checkLogs finds of a file's Logs: each one's report and disk state, and their bytes when they were made. */
interface Checked {
  work: Work[];
  /** Made when a Log of the file is on disk (to compare with it); null when every Log is new. */
  bytes: Buffer[] | null;
}

const logReport = (log: PlannedGeminiLog): Work["report"] => ({ session_id: log.sessionId, role: log.role, branch: log.branch, parent_session_id: log.parent?.sessionId ?? null, forked_to_seq: log.forkedToSeq, event_count: log.eventCount });

/** True when none of these Logs is on disk (a path that cannot be inspected is left to diskState to report). */
function allAbsent(ws: string, sessionIds: string[]): boolean {
  try {
    return sessionIds.every((id) => inspectStatePath(logPath(ws, id)) === "missing");
  } catch {
    return false;
  }
}

/**
 * A file's plan compared with the disk; a refusal is thrown before anything is written. The bytes of its
 * Logs are made only to compare them with Logs on disk (or when `withBytes`); when every Log is new their
 * lines are checked (`log_encode_failed`) when they are written, or now in a dry run.
 */
function checkLogs(ws: string, family: PlannedGeminiFamily, options: { dryRun: boolean; withBytes: boolean }): Checked {
  if (!options.withBytes && allAbsent(ws, family.logs.map((log) => log.sessionId))) {
    if (options.dryRun) for (const log of family.logs) checkGeminiLog(log, family.file);
    return { work: family.logs.map((log) => ({ sessionId: log.sessionId, report: logReport(log), disk: { state: "absent" }, before: 0 })), bytes: null };
  }
  // Every Log's lines are checked before any is compared with the disk.
  const bytes = family.logs.map((log) => geminiLogBytes(log, family.file));
  const work = family.logs.map((log, j): Work => ({ sessionId: log.sessionId, report: logReport(log), ...plannedOnDisk(ws, { sessionId: log.sessionId, bytes: bytes[j]!, stored: log.stored }, family.file) }));
  return { work, bytes };
}

/** What a run keeps of a file between its passes: its report and the disk states of its Logs. */
function fileWork(input: SourcePath, family: PlannedGeminiFamily, work: Work[]): FileWork {
  const parsed = family.parsed;
  return {
    input,
    baseSessionId: family.baseSessionId,
    legacy: parsed.legacy,
    report: {
      file: family.file,
      session_id: isValidSessionId(family.sessionIdRaw) ? family.sessionIdRaw : null,
      legacy: parsed.legacy,
      line_count: parsed.lineCount,
      pending_tail: parsed.pendingTail,
      skipped_lines: parsed.skippedLines.length,
      message_count: family.messageCount,
      leaf_session_id: family.leaf.sessionId,
    },
    work,
    kept: null,
    prepared: null,
  };
}

const needsWrite = (w: Work): boolean => diskNeedsWrite(w.disk);

/**
 * Pass 1: plan every file and compare it with the disk, keeping its report and its Logs' disk states. A
 * file whose Logs are all new has their temp files made now (it is planned once and its bytes never held);
 * a file with Logs to append to keeps the bytes within the run's budget, and past it is planned again in
 * pass 2. Every refusal of the run is found here, before a Log is written.
 */
async function checkFiles(ws: string, inputs: SourcePath[], options: GeminiImportOptions, out: FileWork[], skipped: GeminiImportResult["skipped_files"]): Promise<void> {
  const budget = { left: options.keptBytes ?? KEPT_BYTES_BUDGET };
  for (const [i, input] of inputs.entries()) {
    options.progress?.(`[${i + 1}/${inputs.length}] ${input.display}`);
    const f = await checkFile(ws, input, options, budget, out);
    if (f === null) skipped.push({ file: input.display, reason: "empty" });
  }
}

/**
 * One file of pass 1, pushed to `out` (null: empty). Its plan lives only in this call, so it is garbage
 * before the next file is planned (a plan kept in the loop's frame overlapped the next one's).
 */
async function checkFile(ws: string, input: SourcePath, options: GeminiImportOptions, budget: { left: number }, out: FileWork[]): Promise<FileWork | null> {
  const dryRun = Boolean(options.dryRun);
  const streamed = dryRun ? undefined : await streamFile(ws, input, options);
  if (streamed !== undefined) {
    if (streamed === null) return null;
    // Its one Log was found absent before its temp file was made (committing it checks again).
    const log = streamed.family.logs[0]!;
    const f = fileWork(input, streamed.family, [{ sessionId: log.sessionId, report: logReport(log), disk: { state: "absent" }, before: 0 }]);
    f.prepared = [streamed.prepared];
    out.push(f);
    return f;
  }
  const family = planFile(ws, input, Boolean(options.lenient));
  if (family === null) return null;
  const { work, bytes } = checkLogs(ws, family, { dryRun, withBytes: false });
  const f = fileWork(input, family, work);
  out.push(f);
  if (dryRun || !work.some(needsWrite)) return f;
  if (bytes === null || work.filter(needsWrite).every((w) => w.disk.state === "absent")) {
    f.prepared = [];
    for (const [j, log] of family.logs.entries()) if (needsWrite(work[j]!)) f.prepared.push(await preparePlannedLog(ws, log.sessionId, log.stored, family.file, geminiSourceLine, options.signal));
    return f;
  }
  const toKeep = bytes.filter((_, j) => needsWrite(work[j]!));
  const size = toKeep.reduce((n, b) => n + b.length, 0);
  if (size <= budget.left) {
    budget.left -= size;
    f.kept = toKeep;
  }
  return f;
}

/**
 * A file whose one Log is new, planned and written to its temp file as it is read: its Events go to the
 * file as they are made and the plan holds none (a file's Events, kept until it was planned, were most of
 * what each file left for the garbage collector). Undefined when it cannot be streamed, and nothing is left
 * on disk: a legacy file, a Log on disk, a branch (its child reads its parent's History), or any failure
 * (a planning error, a line that cannot be stored, a failed write), which planning the file whole meets
 * again in the order it reports them. Null: an empty file.
 */
async function streamFile(ws: string, input: SourcePath, options: GeminiImportOptions): Promise<{ family: PlannedGeminiFamily; prepared: PreparedLog } | null | undefined> {
  let parsed: ParsedGeminiFile | null;
  try {
    parsed = readGeminiSession(input.path, input.display, Boolean(options.lenient));
  } catch {
    return undefined;
  }
  if (parsed === null) return null;
  const root = geminiBaseSessionId(parsed.metadata.sessionId as string);
  let family: PlannedGeminiFamily | null = null;
  try {
    if (parsed.legacy || !allAbsent(ws, [root])) return undefined;
    const produce = async (emit: (block: Buffer) => void): Promise<void> => {
      const encoder = new PlannedLineEncoder(input.display, geminiSourceLine, emit);
      family = planGeminiFamily(ws, parsed!, input.display, (e) => encoder.add(e));
      encoder.flush();
    };
    const prepared = await prepareLog(ws, root, produce, { lease: null, signal: options.signal });
    return { family: family!, prepared };
  } catch (err) {
    if (options.signal?.aborted) throw err;
    return undefined;
  } finally {
    parsed.close();
  }
}

/** Pass 2: one file at a time, write what pass 1 found missing: temp files renamed, bytes kept, or planned again. */
async function writeFiles(ws: string, files: FileWork[], options: GeminiImportOptions): Promise<void> {
  for (const f of files) {
    const work = f.work.filter(needsWrite);
    if (work.length === 0) continue;
    if (f.prepared !== null || f.kept !== null) {
      const { prepared, kept } = f;
      await writePlannedLogs(ws, work.map((w, j) => ({ log: { sessionId: w.sessionId, bytes: kept?.[j] ?? EMPTY }, disk: w.disk, ...(prepared !== null ? { prepared: prepared[j]! } : {}) })), options);
      // In place now (until here a failure leaves the ones not renamed for the caller to take back).
      f.prepared = null;
      f.kept = null;
      continue;
    }
    await writeReplanned(ws, f, options);
  }
}

/** A file whose bytes were not kept, planned and checked again (the file may have grown meanwhile: then more is written, never something else). */
async function writeReplanned(ws: string, f: FileWork, options: GeminiImportOptions): Promise<void> {
  const family = planFile(ws, f.input, Boolean(options.lenient))!;
  const now = checkLogs(ws, family, { dryRun: false, withBytes: true });
  const toWrite = family.logs.flatMap((log, i) => (needsWrite(now.work[i]!) ? [{ log: { sessionId: log.sessionId, bytes: now.bytes![i]! }, disk: now.work[i]!.disk }] : []));
  await writePlannedLogs(ws, toWrite, options);
}

const EMPTY = Buffer.alloc(0);

export async function importGeminiFiles(ws: string, options: GeminiImportOptions): Promise<GeminiImportResult> {
  const skipped: GeminiImportResult["skipped_files"] = [];
  const inputs = geminiInputs(options);
  const lenient = Boolean(options.lenient);
  const checked: FileWork[] = [];
  let files: FileWork[];
  try {
    await checkFiles(ws, inputs, options, checked, skipped);
    files = dropMigrated(checked, skipped, lenient);
    if (!options.dryRun) await writeFiles(ws, files, options);
  } finally {
    // A refusal, a failure, or a file dropped as migrated: the temp files not renamed into place go.
    for (const f of [...checked].reverse()) for (const p of [...(f.prepared ?? [])].reverse()) discardPreparedLog(p);
  }
  const dryRun = Boolean(options.dryRun);
  return {
    ok: true,
    recorded: !dryRun && files.some((f) => f.work.some(needsWrite)),
    dry_run: dryRun,
    workspace: ws,
    imports: files.map((f) => ({
      ...f.report,
      sessions: f.work.map((w) => ({ ...w.report, new_event_count: w.report.event_count - w.before, status: plannedStatus(w.disk, dryRun) })),
    })),
    skipped_files: skipped,
  };
}

