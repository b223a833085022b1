// archive.md §5: a file pixir exported to an agent, imported again, continues its Log: nothing new is
// `unchanged`; what the agent added after the exported lines becomes a fork of that Log (the file's own id),
// which a later import of a longer file extends. It never becomes a second, unrelated copy.
//
// A file is recognised as an export by the id pixir derived for it from the Log (Claude's session id, a new
// Codex rollout's thread id, a pi header id): each exporter names that rule, and it is checked against every
// Log of the Workspace. Exports that carry their own fork link (a Claude fork file, a Codex fork rollout)
// are left to the importers, which make them forks of the Log the link names.
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../event/envelope.js";
import { isCanonicalType } from "../event/vocabulary.js";
import { readFirstLine } from "../store/log-read.js";
import { openHistory } from "../store/loader.js";
import { listLogs } from "../store/ls.js";
import { inspectStatePath, logPath } from "../store/paths.js";
import { appendEvents } from "../store/append.js";
import type { WriterOptions } from "../store/lease.js";
import { runForkJob } from "../fork/fork-job.js";
import { claudeExportSessionId } from "../interop/claude/export-fork.js";
import { planClaudeExport } from "../interop/claude/export.js";
import { defaultProjectsRoot, discoverUnits } from "../interop/claude/discover.js";
import { importClaude } from "../interop/claude/import.js";
import { codexForkThreadId, planCodexExport } from "../interop/codex/export.js";
import { EPOCH } from "../interop/codex/format.js";
import { importCodexRollouts, listRolloutFiles } from "../interop/codex/import.js";
import { piExportHeaderId, planPiExport } from "../interop/pi/export.js";
import { importPiFiles } from "../interop/pi/import.js";
import type { SourcePath } from "../session/agent-files.js";
import type { HandoffAgent } from "./handoff.js";

/** A file given to an import that pixir exported from Log `sourceId` of this Workspace. */
export interface ExportedFile {
  path: string;
  display: string;
  agent: HandoffAgent;
  sourceId: string;
  /** The id pixir gave the file (its Claude session id, thread id or pi header id): the fork's Log id. */
  fileId: string;
}

export interface HandBackReport {
  file: string;
  session_id: string;
  child_session_id: string | null;
  status: "unchanged" | "created" | "appended" | "would_create" | "would_append" | "skipped";
  new_lines: number;
  appended_events: number;
  reason?: string;
}

const HEAD_BYTES = 256 * 1024;

/** The first JSON object lines of a file, read from its first 256 KiB only. */
function headRecords(file: string): JsonObject[] {
  const buf = Buffer.alloc(HEAD_BYTES);
  let n = 0;
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    n = readSync(fd, buf, 0, HEAD_BYTES, 0);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const out: JsonObject[] = [];
  for (const line of buf.toString("utf8", 0, n).split("\n").slice(0, -1)) {
    try {
      const v: unknown = JSON.parse(line);
      if (isJsonObject(v)) out.push(v);
    } catch {
      /* not a record: the importer judges it */
    }
  }
  return out;
}

/** The id pixir gave a file of `agent`, when the file has no fork link of its own; null otherwise. */
function exportedId(agent: HandoffAgent, file: string): string | null {
  const head = headRecords(file);
  if (agent === "claude") {
    const r = head.find((x) => typeof x.sessionId === "string");
    return r !== undefined && !head.some((x) => "forkedFrom" in x) ? (r.sessionId as string) : null;
  }
  const first = head[0];
  if (agent === "codex") {
    const p = first?.type === "session_meta" && isJsonObject(first.payload) ? first.payload : null;
    return p !== null && p.originator === "pixir" && p.forked_from_id === undefined && typeof p.id === "string" ? p.id : null;
  }
  return first?.type === "session" && typeof first.id === "string" ? first.id : null;
}

/** Every Log's export id for `agent` → the Log. */
async function exportIds(ws: string, agent: HandoffAgent): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  for (const id of listLogs(ws).sessionIds) {
    if (agent === "claude") ids.set(claudeExportSessionId(id), id);
    else if (agent === "pi") ids.set(piExportHeaderId(id), id);
    else {
      const first = await readFirstLine(logPath(ws, id));
      if (first === null || "problem" in first) continue;
      const e = first.line.event;
      ids.set(codexForkThreadId(id, e.id ?? "", e.ts ?? EPOCH), id);
    }
  }
  return ids;
}

/** The session files an import of `paths` reads, as the importer finds them. */
function importedFiles(agent: HandoffAgent, paths: SourcePath[]): SourcePath[] {
  if (agent === "codex") return listRolloutFiles(paths);
  if (agent === "pi") return paths;
  return discoverUnits(paths.map((p) => p.path)).flatMap((u) => (u.session === null ? [] : [{ path: u.session.abs, display: u.session.abs }]));
}

/** archive.md §5: which of the files an import reads pixir exported from Logs of this Workspace. */
export async function findExportedFiles(ws: string, agent: HandoffAgent, paths: SourcePath[]): Promise<ExportedFile[]> {
  if (listLogs(ws).sessionIds.length === 0) return [];
  let files: SourcePath[];
  try {
    files = importedFiles(agent, paths);
  } catch {
    return []; // a missing path: the importer names it
  }
  const found: ExportedFile[] = [];
  const ids = await exportIds(ws, agent);
  for (const f of files) {
    // An export is named by its id as the agent names files: only such a file is opened.
    if (!ids.has(idInName(agent, path.basename(f.path)))) continue;
    const fileId = exportedId(agent, f.path);
    const sourceId = fileId === null ? undefined : ids.get(fileId);
    if (sourceId !== undefined) found.push({ ...f, agent, sourceId, fileId: fileId! });
  }
  return found;
}

/** The id in an agent's file name: Claude `<id>.jsonl`, Codex `rollout-<time>-<id>.jsonl`, pi `<time>_<id>.jsonl`. */
function idInName(agent: HandoffAgent, name: string): string {
  const base = name.endsWith(".jsonl") ? name.slice(0, -".jsonl".length) : name;
  if (agent === "claude") return base;
  if (agent === "pi") return base.slice(base.indexOf("_") + 1);
  return base.slice(-36);
}

const linesOf = (text: string): string[] => text.split("\n").filter((l) => l.trim() !== "");

/** The working directory the file records: where the export put its agent. */
function fileCwd(agent: HandoffAgent, lines: string[]): string | undefined {
  for (const l of lines.slice(0, 64)) {
    const v = JSON.parse(l) as JsonObject;
    const cwd = agent === "codex" ? (isJsonObject(v.payload) ? v.payload.cwd : undefined) : v.cwd;
    if (typeof cwd === "string") return cwd;
  }
  return undefined;
}

/** The export of the source Log now, for the cwd the file records: the lines the file must start with. */
async function exportedLines(ws: string, f: ExportedFile, cwd: string | undefined, version: string): Promise<string[]> {
  if (f.agent === "claude") return linesOf((await planClaudeExport(ws, f.sourceId, { cwd })).main.bytes.toString("utf8"));
  if (f.agent === "codex") return linesOf((await planCodexExport(ws, f.sourceId, version, { cwd })).text);
  return linesOf((await planPiExport(ws, f.sourceId, { cwd })).text);
}

/**
 * Import a file pixir exported, as archive.md §5 says: unchanged when it holds nothing the Log lacks; the
 * lines an agent added after the export go to a fork of the Log named by the file's own id.
 */
export async function handBack(ws: string, f: ExportedFile, options: WriterOptions): Promise<HandBackReport> {
  const got = linesOf(readFileSync(f.path, "utf8"));
  const report = (status: HandBackReport["status"], child: string | null, added = 0, appended = 0, reason?: string): HandBackReport => ({
    file: f.display,
    session_id: f.sourceId,
    child_session_id: child,
    status,
    new_lines: added,
    appended_events: appended,
    ...(reason === undefined ? {} : { reason }),
  });
  const version = f.agent === "codex" ? String((JSON.parse(got[0]!) as { payload: JsonObject }).payload.cli_version ?? "") : "";
  const expected = await exportedLines(ws, f, fileCwd(f.agent, got), version);
  let k = 0;
  while (k < got.length && k < expected.length && got[k] === expected[k]) k++;
  if (k === got.length) return report("unchanged", null);
  if (k < expected.length) return report("skipped", null, 0, 0, "source_changed");
  const events = await addedEvents(f, got, k, options);
  return continueFork(ws, f, events, got.length - k, options, report);
}

/** The Events of the lines after the first `k`, read by the agent's own importer in a scratch Workspace. */
async function addedEvents(f: ExportedFile, got: string[], k: number, options: WriterOptions): Promise<PixirEvent[]> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "pixir-handback-"));
  try {
    const common = { program: options.program, env: options.env, signal: options.signal };
    if (f.agent === "claude") await importClaude(scratch, { ...common, paths: [f.path] });
    else if (f.agent === "codex") await importCodexRollouts(scratch, { ...common, paths: [{ path: f.path, display: f.display }] });
    else await importPiFiles(scratch, { ...common, files: [{ path: f.path, display: f.display }] });
    const newEntries = new Set(got.slice(k).map((l) => (JSON.parse(l) as JsonObject).id));
    const isNew = (e: PixirEvent): boolean => {
      const d = e.data;
      if (isJsonObject(d.claude)) return typeof d.claude.line === "number" && d.claude.line > k;
      if (isJsonObject(d.codex)) return typeof d.codex.line === "number" && d.codex.line > k;
      return isJsonObject(d.pi) && newEntries.has(d.pi.entry_id);
    };
    const out: PixirEvent[] = [];
    for (const id of listLogs(scratch).sessionIds) {
      for await (const item of (await openHistory(scratch, id)).items()) if (isNew(item.event)) out.push(item.event);
    }
    return out.filter((e) => e.type !== "workflow_event" && e.type !== "session_fork" && isCanonicalType(e.type)).map(nativeEvent);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The Event as pixir's own: the agent's record it came from stays in the agent's file. */
function nativeEvent(e: PixirEvent): PixirEvent {
  const { claude: _c, codex: _x, pi: _p, ...data } = e.data;
  return { ...e, data };
}

/** Create the fork of the source Log (or extend it) with the Events it does not hold yet. */
async function continueFork(
  ws: string,
  f: ExportedFile,
  events: PixirEvent[],
  added: number,
  options: WriterOptions,
  report: (status: HandBackReport["status"], child: string | null, added?: number, appended?: number, reason?: string) => HandBackReport,
): Promise<HandBackReport> {
  const child = f.fileId;
  const exists = inspectStatePath(logPath(ws, child)) !== "missing";
  let held = 0;
  if (exists) {
    const history = await openHistory(ws, child);
    if (history.share?.header.data.parent_session_id !== f.sourceId) return report("skipped", child, added, 0, "id_taken");
    held = -history.share.replayEventCount - 1;
    for await (const _ of history.items()) held++;
  }
  const fresh = events.slice(held);
  if (fresh.length === 0) return report("unchanged", child, added);
  if (options.dryRun) return report(exists ? "would_append" : "would_create", child, added, fresh.length);
  if (!exists) await runForkJob(ws, { parentId: f.sourceId, childId: child, strategy: "share_v1", program: options.program, env: options.env, signal: options.signal });
  const lines = fresh.map((e) => Buffer.from(`${JSON.stringify({ ts: e.ts, type: e.type, data: e.data })}\n`));
  await appendEvents(ws, child, (async function* () {
    yield* lines;
  })(), { program: options.program, env: options.env, signal: options.signal });
  return report(exists ? "appended" : "created", child, added, fresh.length);
}

/**
 * The stage before an import: every file of `paths` that pixir exported from a Log of this Workspace is
 * handed back (handBack) and then skipped by the importer (`skipFile`); the rest import as usual.
 */
export async function handBackFiles(
  ws: string,
  agent: HandoffAgent,
  paths: SourcePath[],
  options: WriterOptions,
): Promise<{ reports: HandBackReport[]; skipFile: (abs: string) => boolean }> {
  const given = paths.length > 0 || agent !== "claude" ? paths : [{ path: defaultProjectsRoot(options.env), display: defaultProjectsRoot(options.env) }];
  const found = await findExportedFiles(ws, agent, given);
  const reports: HandBackReport[] = [];
  for (const f of found) reports.push(await handBack(ws, f, options));
  const taken = new Set(found.map((f) => f.path));
  return { reports, skipFile: (abs) => taken.has(abs) };
}

/** One line of text per handed-back file. */
export function handBackLine(r: HandBackReport): string {
  const what = r.child_session_id === null ? r.session_id : `${r.child_session_id} (fork of ${r.session_id}, +${r.appended_events} events)`;
  return `${r.status} ${what}: ${r.file} is pixir's export of ${r.session_id}${r.reason === undefined ? "" : ` (${r.reason})`}`;
}
