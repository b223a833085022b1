// claude-interop.md §5: `pixir export claude`. An imported session comes back as its original files,
// byte for byte: the held record Events of each source file's family, merged in line order (§5.2).
import { lstatSync, mkdirSync, rmdirSync, unlinkSync } from "node:fs";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { osWriteFault } from "../../event/os-fault.js";
import { readFirstLine } from "../../store/log-read.js";
import { notFoundError } from "../../store/loader.js";
import { listLogs } from "../../store/ls.js";
import { existingOutDir, inspectStatePath, logPath } from "../../store/paths.js";
import { batchedBytes, sameAsFile, writeChunksAtomically } from "../../store/stream-file.js";
import { abortable } from "../../lines/abortable.js";
import { assertSessionId } from "../../event/session-id.js";
import { planForkExport, type ForkExport } from "./export-fork.js";
import { chainRecords, fileChunks, ownEvents, surveyFile, type SourceRecords, type SurveyedFile } from "./export-rebuild.js";

export interface ClaudeExportFile {
  path: string;
  kind: "session" | "subagent";
  records: number;
  bytes: number;
  status: "written" | "unchanged" | "would_write";
}

export interface ClaudeExportReport {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  mode: "original" | "fork";
  session_id: string;
  out: string | null;
  project_dir: string;
  /** archive.md §5: the working directory the file's records name, and the session id Claude resumes. */
  cwd: string;
  claude_session_id: string;
  files: ClaudeExportFile[];
  forked_from: { session_id: string; message_uuid: string } | null;
  copied_records: number;
  converted_events: number;
  pixir_events: number;
  warnings: string[];
}

/** One rebuilt source file: its facts, and its bytes made again each time they are asked for. */
export interface RebuiltFile {
  /** Relative to the projects root (`--out DIR`). */
  rel: string;
  kind: "session" | "subagent";
  /** Its size in bytes. */
  size: number;
  records: number;
  /** Holds the records of the Log named on the command line. */
  holdsTarget: boolean;
  /** The file's bytes in batches, read from the Logs as they are written (never the whole file). */
  chunks(): AsyncIterable<Buffer>;
}

/** A rebuilt file with its bytes held (planClaudeExport: a caller that wants the file's text). */
export interface HeldFile extends RebuiltFile {
  bytes: Buffer;
}

export interface ClaudeExportPlan<F extends RebuiltFile = RebuiltFile> {
  mode: "original" | "fork";
  sessionId: string;
  projectDir: string;
  /** The working directory Claude runs the session in (archive.md §5). */
  cwd: string;
  /** The id `claude --resume` takes: the main file's name. */
  claudeSessionId: string;
  files: F[];
  /** The file that goes to stdout without --out. */
  main: F;
  /** Subagent files of the unit: not written when the session goes to stdout (§5.4). */
  subagentFiles: number;
  /** Mode fork: what the conversion did. */
  fork: ForkExport | null;
}

interface FamilyLog {
  id: string;
  first: PixirEvent;
}

/** §5.4 escape(p): Claude's project directory name for a cwd. */
export function escapeCwd(p: string): string {
  let out = "";
  for (let i = 0; i < p.length; i++) {
    const c = p.charCodeAt(i);
    const ok = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
    out += ok ? p[i] : "-";
  }
  if (out.length <= 200) return out;
  let h = 0;
  for (let i = 0; i < p.length; i++) h = ((h << 5) - h + p.charCodeAt(i)) | 0;
  return `${out.slice(0, 200)}-${Math.abs(h).toString(36)}`;
}

/** §5.4: the recorded project directory when it fits the cwd, else escape(cwd). */
export function projectDirFor(recorded: unknown, cwd: string): string {
  const escaped = escapeCwd(cwd);
  if (typeof recorded !== "string") return escaped;
  if (recorded === escaped) return recorded;
  const raw = [...cwd].map((ch) => (/^[A-Za-z0-9]$/.test(ch) ? ch : "-".repeat(ch.length))).join("");
  if (raw.length > 200 && recorded.startsWith(`${raw.slice(0, 200)}-`)) return recorded;
  return escaped;
}

/** The claude object of a Log's first Event, when it is import-made (a carrier or a session_fork). */
const claudeOf = (e: PixirEvent): JsonObject | null => (isJsonObject(e.data.claude) && (e.type === "session_fork" || e.data.event === "claude_transcript") ? e.data.claude : null);

async function firstEvents(ws: string): Promise<FamilyLog[]> {
  const out: FamilyLog[] = [];
  for (const id of listLogs(ws).sessionIds) {
    const first = await readFirstLine(logPath(ws, id));
    if (first !== null && !("problem" in first)) out.push({ id, first: first.line.event });
  }
  return out;
}

/** §5.1: a Log's first own Event, and whether every own Event is import-made (it carries data.claude). */
async function ownKind(ws: string, id: string): Promise<{ first: PixirEvent | undefined; importMade: boolean }> {
  let first: PixirEvent | undefined;
  let importMade = true;
  for await (const e of ownEvents(ws, id)) {
    first ??= e;
    if (!isJsonObject(e.data.claude)) importMade = false;
  }
  return { first, importMade };
}

/** An agent id that can be part of a file name (never a path). */
const SAFE_NAME = /^(?!\.\.?$)[^/\\\u0000]{1,200}$/;

export interface ClaudeExportOptions {
  /** archive.md §5: the working directory to record (--cwd, or the cwd another agent recorded). */
  cwd?: string;
}

/** §5.1–§5.4: the files of the export and their facts; their bytes are read from the Logs when written. */
export async function planClaudeExportStreamed(ws: string, id: string, options: ClaudeExportOptions = {}): Promise<ClaudeExportPlan> {
  assertSessionId(id);
  const p = logPath(ws, id);
  if (inspectStatePath(p) === "missing") throw notFoundError(id, ws, p.rel, "pixir export claude");
  const { first, importMade } = await ownKind(ws, id);
  const claude = first ? claudeOf(first) : null;
  const all = await firstEvents(ws);
  const sources = new Map<string, string[]>();
  for (const l of all) {
    const c = claudeOf(l.first);
    if (c === null || typeof c.source !== "string") continue;
    const list = sources.get(c.source);
    if (list) list.push(l.id);
    else sources.set(c.source, [l.id]);
  }
  // The file's root Log first (every other Log of a family is `<root>.<suffix>`, §3.1): its carrier speaks for the file.
  for (const ids of sources.values()) ids.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  // §5.1: mode fork for anything that is not purely import-made.
  if (claude === null || typeof claude.source !== "string" || !importMade) {
    return forkPlan(ws, id, sources, options.cwd);
  }
  const source = claude.source;
  // §5.2: the unit of the source (a subagent's session, when its Logs are here).
  const slash = source.indexOf("/agent-");
  const sessionSource = slash >= 0 && sources.has(source.slice(0, slash)) ? source.slice(0, slash) : slash >= 0 ? null : source;
  const unitSources = sessionSource === null ? [source] : [...sources.keys()].filter((s) => s === sessionSource || s.startsWith(`${sessionSource}/agent-`)).sort();
  if (sessionSource !== null) unitSources.sort((a, b) => (a === sessionSource ? -1 : b === sessionSource ? 1 : a < b ? -1 : 1));

  const rebuilt: Array<SurveyedFile & { source: string }> = [];
  const sourceRecords: SourceRecords = async (sessionId, uuids) => {
    const ids = sources.get(sessionId);
    return ids === undefined ? null : chainRecords(ws, await surveyFile(ws, ids, sourceRecords), uuids);
  };
  for (const s of unitSources) {
    const r = await surveyFile(ws, sources.get(s)!, sourceRecords);
    if (r.records < r.checkpointRecords) {
      throw new PixirError("claude_export_incomplete", undefined, { session_id: id, expected_records: r.checkpointRecords, found_records: r.records });
    }
    rebuilt.push({ ...r, source: s });
  }
  const session = rebuilt[0]!;
  const cwd = options.cwd ?? session.cwd ?? ws;
  const projectDir = projectDirFor(session.carrier?.project_dir, cwd);
  const files: RebuiltFile[] = rebuilt.map((r) => ({
    rel: fileRel(r, projectDir),
    kind: r.carrier?.kind === "subagent" ? "subagent" : "session",
    size: r.size,
    records: r.records,
    holdsTarget: r.source === source,
    chunks: () => fileChunks(ws, r),
  }));
  const main = files.find((f) => f.holdsTarget)!;
  const claudeSessionId = path.basename(main.rel, ".jsonl");
  return { mode: "original", sessionId: id, projectDir, cwd, claudeSessionId, files, main, subagentFiles: files.filter((f) => f.kind === "subagent").length, fork: null };
}

/** §5.4: where a rebuilt file goes under `--out DIR`. */
function fileRel(r: SurveyedFile, projectDir: string): string {
  const c = r.carrier ?? {};
  const isSub = c.kind === "subagent";
  const rootId = r.ids[0]!;
  const agentId = typeof c.agent_id === "string" && SAFE_NAME.test(c.agent_id) ? c.agent_id : null;
  if (isSub && agentId === null) throw new PixirError("invalid_args", "the subagent Log names no usable agent id", { field: "id", reason: "invalid_agent_id" });
  // A subagent's session folder is its session's base id: its root Log id before `.agent-…`.
  const sessionName = rootId.slice(0, rootId.lastIndexOf("."));
  if (!isSub) return path.join(projectDir, `${rootId}.jsonl`);
  return c.layout === "subagents_dir" ? path.join(projectDir, sessionName, "subagents", `agent-${agentId}.jsonl`) : path.join(projectDir, `agent-${agentId}.jsonl`);
}

/** planClaudeExportStreamed with every file's bytes held: for a caller that reads the file's text (a re-import's check). */
export async function planClaudeExport(ws: string, id: string, options: ClaudeExportOptions = {}): Promise<ClaudeExportPlan<HeldFile>> {
  const plan = await planClaudeExportStreamed(ws, id, options);
  const files: HeldFile[] = [];
  for (const f of plan.files) files.push({ ...f, bytes: await collect(f.chunks()) });
  return { ...plan, files, main: files[plan.files.indexOf(plan.main)]! };
}

async function collect(chunks: AsyncIterable<Buffer>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(c);
  return Buffer.concat(parts);
}

/** §5.3: a new session file for a Log that is not purely import-made (made in memory: §5.3 reads its whole History). */
async function forkPlan(ws: string, id: string, sources: Map<string, string[]>, cwd: string | undefined): Promise<ClaudeExportPlan> {
  const cache = new Map<string, { bytes: Buffer; projectDir: unknown } | null>();
  const fork = await planForkExport({
    ws,
    id,
    cwd,
    sourceFile: async (sessionId) => {
      if (!cache.has(sessionId)) {
        const ids = sources.get(sessionId);
        const r = ids ? await surveyFile(ws, ids) : null;
        cache.set(sessionId, r && { bytes: await collect(fileChunks(ws, r)), projectDir: r.carrier?.project_dir });
      }
      return cache.get(sessionId)!;
    },
  });
  const projectDir = projectDirFor(fork.recordedProjectDir, fork.cwd);
  const bytes = Buffer.from(fork.lines.map((l) => `${l}\n`).join(""), "utf8");
  const file: RebuiltFile = {
    rel: path.join(projectDir, `${fork.forkId}.jsonl`),
    kind: "session",
    size: bytes.length,
    records: fork.lines.length,
    holdsTarget: true,
    chunks: () => batchedBytes([bytes]),
  };
  return { mode: "fork", sessionId: id, projectDir, cwd: fork.cwd, claudeSessionId: fork.forkId, files: [file], main: file, subagentFiles: 0, fork };
}

/**
 * §5.5: what an existing target means: absent, the same bytes (`unchanged`), or other bytes (refused). It is
 * compared as the file is made again, never read whole; a target that is not a regular file reads as empty.
 */
async function targetStatus(target: string, f: RebuiltFile, dryRun: boolean, signal?: AbortSignal): Promise<ClaudeExportFile["status"]> {
  let isFile: boolean;
  try {
    isFile = lstatSync(target).isFile();
  } catch {
    return dryRun ? "would_write" : "written";
  }
  if (isFile ? await sameAsFile(target, abortable(f.chunks(), signal)) : f.size === 0) return "unchanged";
  throw new PixirError("already_exists", "an exported file already exists with other contents", { path: f.rel, next_actions: ["remove the file or export to another directory"] });
}

/** §5.5: plan every target, refuse a different existing file, then write with temp + rename. */
export async function finishClaudeExport(
  plan: ClaudeExportPlan,
  /** `signal`: an interrupted run stops between batches, its temp file removed (exit 130). */
  options: { out: string | undefined; cwd: string; dryRun: boolean; signal?: AbortSignal },
): Promise<ClaudeExportReport> {
  const files: ClaudeExportFile[] = [];
  let recorded = false;
  if (options.out !== undefined) {
    const dir = existingOutDir(options.cwd, options.out);
    const status: Array<ClaudeExportFile["status"]> = [];
    for (const f of plan.files) status.push(await targetStatus(path.join(dir, f.rel), f, options.dryRun, options.signal));
    // A failed write (a full or read-only disk) takes back the files and directories this run made: the
    // export is whole or absent (cli-contract.md "Operating-system faults").
    const made: string[] = [];
    try {
      for (const [i, f] of plan.files.entries()) {
        if (status[i] === "written") {
          await writeAtomically(dir, f, made, path.join(options.out, f.rel), options.signal);
          recorded = true;
        }
        files.push({ path: f.rel, kind: f.kind, records: f.records, bytes: f.size, status: status[i]! });
      }
    } catch (err) {
      for (const p of made.reverse()) takeBack(p);
      throw err;
    }
  } else {
    for (const f of plan.files) files.push({ path: f.rel, kind: f.kind, records: f.records, bytes: f.size, status: "would_write" });
  }
  return {
    ok: true,
    recorded,
    dry_run: options.dryRun,
    mode: plan.mode,
    session_id: plan.sessionId,
    out: options.out ?? null,
    project_dir: plan.projectDir,
    cwd: plan.cwd,
    claude_session_id: plan.claudeSessionId,
    files,
    forked_from: plan.fork?.forkedFrom ?? null,
    copied_records: plan.fork?.copied ?? 0,
    converted_events: plan.fork?.converted ?? 0,
    pixir_events: plan.fork?.pixirEvents ?? 0,
    warnings: plan.fork?.warnings ?? [],
  };
}

/** Remove a file or an (empty) directory this export made; one already gone is fine. */
function takeBack(p: string): void {
  try {
    if (lstatSync(p).isDirectory()) rmdirSync(p);
    else unlinkSync(p);
  } catch {
    /* gone, or not ours to force */
  }
}

/**
 * Directories below `dir` are created 0700; the file appears whole (temp + rename), mode 0600, written as
 * it is made. What it makes is pushed on `made` (directories, then the file) so a later failure can take it
 * back; a failure here is named after `shown`, the file as the user's --out names it.
 */
async function writeAtomically(dir: string, f: RebuiltFile, made: string[], shown: string, signal?: AbortSignal): Promise<void> {
  const target = path.join(dir, f.rel);
  const fault = (err: unknown, operation: string) => osWriteFault(err, shown, operation, "the exported Claude file");
  const parts = path.dirname(f.rel).split(path.sep).filter((x) => x !== "" && x !== ".");
  let at = dir;
  for (const part of parts) {
    at = path.join(at, part);
    try {
      mkdirSync(at, { mode: 0o700 });
      made.push(at);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw fault(err, "mkdir");
      if (!lstatSync(at).isDirectory()) throw fault(err, "mkdir");
    }
  }
  await writeChunksAtomically(target, abortable(f.chunks(), signal), { mode: 0o600, fault: (err) => fault(err, "write") });
  made.push(target);
}
