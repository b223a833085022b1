// docs/gemini-opencode-interop.md §3: `pixir import gemini [PATH…]`. Every file is read and planned, every
// Log compared with the disk, and every refusal found before anything is written. A Log on disk that is
// a prefix of its plan gets the rest appended; one that differs otherwise is refused.
import { lstatSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PixirError } from "../../event/errors.js";
import { isValidSessionId } from "../../event/session-id.js";
import { logPath } from "../../store/paths.js";
import { diskState, writePlannedLogs, type DiskState } from "../../store/planned-logs.js";
import { parseGeminiFile, readGeminiFile, invalidGeminiSession } from "./format.js";
import { planGeminiFamily, type PlannedGeminiFamily, type PlannedGeminiLog } from "./plan.js";

export type ImportStatus = "created" | "appended" | "unchanged" | "would_create" | "would_append";

export interface GeminiImportOptions {
  /** Paths as given; none means Gemini's own home. */
  paths: Array<{ path: string; display: string }>;
  lenient?: boolean;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  progress?: (text: string) => void;
}

export interface GeminiImportSession {
  session_id: string;
  role: "root" | "branch";
  branch: string | null;
  parent_session_id: string | null;
  forked_to_seq: number | null;
  event_count: number;
  new_event_count: number;
  status: ImportStatus;
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

export interface GeminiImportResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  workspace: string;
  imports: GeminiImportFile[];
  skipped_files: Array<{ file: string; reason: string }>;
}

/** Gemini's data directory: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini` (Gemini's own rule). */
export function geminiHome(env: NodeJS.ProcessEnv): string {
  const home = env.GEMINI_CLI_HOME && env.GEMINI_CLI_HOME.trim() !== "" ? env.GEMINI_CLI_HOME : (env.HOME ?? os.homedir());
  return path.join(home, ".gemini");
}

const isSessionFile = (name: string): boolean => name.endsWith(".jsonl") || (name.startsWith("session-") && name.endsWith(".json"));

/** Walk a directory: names in byte order, symbolic links neither followed nor read. */
function walk(dir: string, display: string, out: Array<{ path: string; display: string }>): void {
  const names = readdirSync(dir).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const name of names) {
    const abs = path.join(dir, name);
    const st = lstatSync(abs);
    if (st.isDirectory()) walk(abs, path.join(display, name), out);
    else if (st.isFile() && isSessionFile(name)) out.push({ path: abs, display: path.join(display, name) });
  }
}

/** The files of a run: named files as they are, directories walked; a file reached twice is read once. */
export function geminiInputs(options: Pick<GeminiImportOptions, "paths" | "env">): Array<{ path: string; display: string }> {
  const roots = options.paths.length > 0 ? options.paths : [{ path: path.join(geminiHome(options.env), "tmp"), display: path.join(geminiHome(options.env), "tmp") }];
  const files: Array<{ path: string; display: string }> = [];
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

const NEXT_ACTIONS: Record<string, string[]> = {
  source_changed: ["remove the existing logs with pixir-log rm, then import again"],
  log_diverged: ["fork the imported Log before adding Events to it (pixir fork), then import again"],
};

interface Work {
  log: PlannedGeminiLog;
  family: PlannedGeminiFamily;
  disk: DiskState;
}

/** A duplicate session id across files: the `.jsonl` Gemini migrated a legacy `.json` into wins. */
function dropMigrated(families: PlannedGeminiFamily[], skipped: GeminiImportResult["skipped_files"], lenient: boolean): PlannedGeminiFamily[] {
  const bySession = new Map<string, PlannedGeminiFamily>();
  const out: PlannedGeminiFamily[] = [];
  for (const f of families) {
    const other = bySession.get(f.baseSessionId);
    if (other === undefined) {
      bySession.set(f.baseSessionId, f);
      out.push(f);
      continue;
    }
    const legacyOne = f.parsed.legacy && !other.parsed.legacy ? f : !f.parsed.legacy && other.parsed.legacy ? other : null;
    if (legacyOne !== null) {
      skipped.push({ file: legacyOne.file, reason: "superseded_by_jsonl" });
      if (legacyOne === other) out[out.indexOf(other)] = f;
      bySession.set(f.baseSessionId, legacyOne === other ? f : other);
      continue;
    }
    if (lenient) skipped.push({ file: f.file, reason: "duplicate_session_id" });
    else throw invalidGeminiSession("duplicate_session_id", 1, f.file, { other_file: other.file });
  }
  return out;
}

export async function importGeminiFiles(ws: string, options: GeminiImportOptions): Promise<GeminiImportResult> {
  const skipped: GeminiImportResult["skipped_files"] = [];
  let families: PlannedGeminiFamily[] = [];
  const inputs = geminiInputs(options);
  inputs.forEach((f, i) => {
    options.progress?.(`[${i + 1}/${inputs.length}] ${f.display}`);
    const bytes = readGeminiFile(f.path, f.display);
    if (bytes.length === 0) {
      skipped.push({ file: f.display, reason: "empty" });
      return;
    }
    const parsed = parseGeminiFile(bytes, { file: f.display, lenient: options.lenient });
    families.push(planGeminiFamily(ws, parsed, f.display));
  });
  families = dropMigrated(families, skipped, Boolean(options.lenient));

  const work: Work[] = [];
  for (const family of families) {
    for (const log of family.logs) {
      const disk = diskState(ws, log.sessionId, log.bytes);
      if (disk.state === "changed" || disk.state === "diverged") {
        const reason = disk.state === "changed" ? "source_changed" : "log_diverged";
        throw new PixirError("already_exists", "session log already exists", {
          session_id: log.sessionId,
          log_path: logPath(ws, log.sessionId).rel,
          reason,
          file: family.file,
          next_actions: NEXT_ACTIONS[reason],
        });
      }
      work.push({ log, family, disk });
    }
  }
  const toWrite = work.filter((w) => w.disk.state === "absent" || w.disk.state === "prefix");
  if (!options.dryRun && toWrite.length > 0) await writePlannedLogs(ws, toWrite, options);
  return report(ws, families, work, skipped, options);
}

function statusOf(w: Work, dryRun: boolean): ImportStatus {
  if (w.disk.state === "same") return "unchanged";
  if (w.disk.state === "prefix") return dryRun ? "would_append" : "appended";
  return dryRun ? "would_create" : "created";
}

function report(ws: string, families: PlannedGeminiFamily[], work: Work[], skipped: GeminiImportResult["skipped_files"], options: GeminiImportOptions): GeminiImportResult {
  const dryRun = Boolean(options.dryRun);
  const byLog = new Map(work.map((w) => [w.log, w]));
  const imports = families.map((family) => ({
    file: family.file,
    session_id: isValidSessionId(family.sessionIdRaw) ? family.sessionIdRaw : null,
    legacy: family.parsed.legacy,
    line_count: family.parsed.lines.length,
    pending_tail: family.parsed.pendingTail,
    skipped_lines: family.parsed.skippedLines.length,
    message_count: family.messages.length,
    sessions: family.logs.map((log) => {
      const w = byLog.get(log)!;
      const before = w.disk.state === "prefix" ? countLines(readFileSync(logPath(ws, log.sessionId).abs)) : w.disk.state === "same" ? log.stored.length : 0;
      return {
        session_id: log.sessionId,
        role: log.role,
        branch: log.branch,
        parent_session_id: log.parent?.sessionId ?? null,
        forked_to_seq: log.forkedToSeq,
        event_count: log.stored.length,
        new_event_count: log.stored.length - Math.min(before, log.stored.length),
        status: statusOf(w, dryRun),
      };
    }),
    leaf_session_id: family.leaf.sessionId,
  }));
  const recorded = !dryRun && work.some((w) => w.disk.state === "absent" || w.disk.state === "prefix");
  return { ok: true, recorded, dry_run: dryRun, workspace: ws, imports, skipped_files: skipped };
}

const countLines = (b: Buffer): number => {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
};

