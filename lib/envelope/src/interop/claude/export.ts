// claude-interop.md §5: `pixir export claude`. An imported session comes back as its original files,
// byte for byte: the held record Events of each source file's family, merged in line order (§5.2).
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, unlinkSync } from "node:fs";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { osWriteFault } from "../../event/os-fault.js";
import { randomHex } from "../../event/ids.js";
import { readFirstLine } from "../../store/log-read.js";
import { notFoundError, openHistory } from "../../store/loader.js";
import { listLogs } from "../../store/ls.js";
import { existingOutDir, inspectStatePath, logPath, writeWhole } from "../../store/paths.js";
import { assertSessionId } from "../../event/session-id.js";
import { storedPrefixCount } from "../../fork/fork.js";
import { planForkExport, type ForkExport } from "./export-fork.js";
import { rebuildCopied, type CopiedEntry } from "./fork-file.js";
import { readTranscriptBytes } from "./transcript.js";
import { heldLine, recordLineOf } from "./map.js";

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

/** One rebuilt source file. */
interface RebuiltFile {
  /** Relative to the projects root (`--out DIR`). */
  rel: string;
  kind: "session" | "subagent";
  bytes: Buffer;
  records: number;
  /** Holds the records of the Log named on the command line. */
  holdsTarget: boolean;
}

export interface ClaudeExportPlan {
  mode: "original" | "fork";
  sessionId: string;
  projectDir: string;
  /** The working directory Claude runs the session in (archive.md §5). */
  cwd: string;
  /** The id `claude --resume` takes: the main file's name. */
  claudeSessionId: string;
  files: RebuiltFile[];
  /** The file that goes to stdout without --out. */
  main: RebuiltFile;
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

/**
 * §4.3 step 4: the own Events of a Log (after a share header's inherited prefix), one at a time: an export
 * keeps only the record lines it writes, never the Log's parsed Events (a long session's Events are many
 * times its bytes).
 */
async function* ownEvents(ws: string, id: string): AsyncGenerator<PixirEvent> {
  const history = await openHistory(ws, id);
  let skip = history.share ? history.share.replayEventCount + 1 : 0;
  let i = 0;
  for await (const item of history.items()) {
    if (i === 0 && skip === 0) skip = storedPrefixCount(item.event) + 1;
    if (i === 0 || i >= skip) yield item.event; // the header, or the Log's first own Event; then the own Events
    i++;
  }
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

/** §5.2: rebuild one source file from its family's held records. */
type SourceRecords = (sessionId: string) => Promise<Map<string, JsonObject> | null>;

/**
 * One record of the rebuilt file: its line there, its bytes' length and the cwd it names; `at`, where it
 * goes in the file. A Log's record keeps no bytes (they are read again from the Log into their place); a
 * shared fork file's copied record keeps the bytes it was rebuilt as.
 */
interface HeldRecord {
  line: number;
  length: number;
  cwd: string | null;
  bytes: Buffer | null;
  at: number;
}

async function rebuild(ws: string, ids: string[], sourceRecords?: SourceRecords): Promise<{ bytes: Buffer; records: number; cwd: string | null; checkpointRecords: number; carrier: JsonObject | null }> {
  const held: HeldRecord[] = [];
  /** How many own Events each Log gave, so that reading it again sees the same ones (a Log only grows). */
  const counts: number[] = [];
  let checkpointRecords = 0;
  let carrier: JsonObject | null = null;
  for (const id of ids) {
    let n = 0;
    for await (const e of ownEvents(ws, id)) {
      n++;
      const c = e.data.claude;
      if (!isJsonObject(c)) continue;
      if (e.data.event === "claude_transcript" && carrier === null && isJsonObject(c)) carrier = c;
      if (e.data.event === "claude_import" && typeof c.records === "number") checkpointRecords = c.records;
      const line = heldLine(e);
      if (line === null) continue;
      held.push({ line, length: recordLineOf(c)!.length, cwd: cwdOf(c.record), bytes: null, at: 0 });
    }
    counts.push(n);
  }
  // §3.7: a shared fork file's copied records, rebuilt from their source records.
  const ff = carrier?.forked_from;
  if (carrier !== null && Array.isArray(carrier.copied) && isJsonObject(ff) && ff.shared === true && typeof ff.session_id === "string") {
    const source = ff.session_id;
    const records = sourceRecords ? await sourceRecords(source) : null;
    let parent: string | null = null;
    for (const entry of carrier.copied as CopiedEntry[]) {
      const r = records?.get(entry.source_uuid);
      if (typeof entry.raw_line !== "string" && r === undefined) continue; // counted as missing below
      const text = rebuildCopied(entry, r ?? {}, String(carrier.session_id), source, parent);
      const value: unknown = r === undefined ? null : JSON.parse(text);
      const bytes = Buffer.from(text, "utf8");
      held.push({ line: entry.line, length: bytes.length, cwd: cwdOf(value), bytes, at: 0 });
      if (!(isJsonObject(value) && value.type === "progress")) parent = entry.uuid;
    }
  }
  const inOrder = [...held].sort((a, b) => a.line - b.line);
  let size = 0;
  for (const h of inOrder) {
    h.at = size;
    size += h.length + 1;
  }
  const out = Buffer.allocUnsafe(size);
  await placeAgain(ws, ids, counts, held, out);
  for (const h of held) if (h.bytes !== null) place(out, h, h.bytes);
  return { bytes: out, records: held.length, cwd: inOrder.find((h) => h.cwd !== null)?.cwd ?? null, checkpointRecords, carrier };
}

/** The Logs' records read again, in the order they were first read, each copied to its place in `out`. */
async function placeAgain(ws: string, ids: string[], counts: number[], held: HeldRecord[], out: Buffer): Promise<void> {
  let k = 0;
  for (const [j, id] of ids.entries()) {
    let n = 0;
    for await (const e of ownEvents(ws, id)) {
      if (n++ >= counts[j]!) break;
      const c = e.data.claude;
      if (!isJsonObject(c) || heldLine(e) === null) continue;
      const h = held[k++]!;
      const bytes = recordLineOf(c)!;
      // A Log only grows, so its first Events read the same again; a record of another length means it was replaced.
      if (bytes.length !== h.length) throw new PixirError("log_read_failed", undefined, { session_id: id, changed_while_exporting: true });
      place(out, h, bytes);
    }
  }
}

function place(out: Buffer, h: HeldRecord, bytes: Buffer): void {
  bytes.copy(out, h.at);
  out[h.at + h.length] = 0x0a;
}

/** The cwd a record names, if any. */
const cwdOf = (record: unknown): string | null => (isJsonObject(record) && typeof record.cwd === "string" ? record.cwd : null);

/** An agent id that can be part of a file name (never a path). */
const SAFE_NAME = /^(?!\.\.?$)[^/\\\u0000]{1,200}$/;

export interface ClaudeExportOptions {
  /** archive.md §5: the working directory to record (--cwd, or the cwd another agent recorded). */
  cwd?: string;
}

export async function planClaudeExport(ws: string, id: string, options: ClaudeExportOptions = {}): Promise<ClaudeExportPlan> {
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

  const rebuilt: Array<Awaited<ReturnType<typeof rebuild>> & { source: string; ids: string[] }> = [];
  const sourceRecords: SourceRecords = async (sessionId) => {
    const ids = sources.get(sessionId);
    if (ids === undefined) return null;
    const map = new Map<string, JsonObject>();
    for (const r of readTranscriptBytes((await rebuild(ws, ids, sourceRecords)).bytes, "source", true).records) {
      if (r.chain && r.value !== null && !map.has(r.uuid!)) map.set(r.uuid!, r.value);
    }
    return map;
  };
  for (const s of unitSources) {
    const ids = sources.get(s)!;
    const r = await rebuild(ws, ids, sourceRecords);
    if (r.records < r.checkpointRecords) {
      throw new PixirError("claude_export_incomplete", undefined, { session_id: id, expected_records: r.checkpointRecords, found_records: r.records });
    }
    rebuilt.push({ ...r, source: s, ids });
  }
  const session = rebuilt[0]!;
  const cwd = options.cwd ?? session.cwd ?? ws;
  const projectDir = projectDirFor(session.carrier?.project_dir, cwd);
  const files: RebuiltFile[] = rebuilt.map((r) => {
    const c = r.carrier ?? {};
    const isSub = c.kind === "subagent";
    const rootId = r.ids[0]!;
    const agentId = typeof c.agent_id === "string" && SAFE_NAME.test(c.agent_id) ? c.agent_id : null;
    if (isSub && agentId === null) throw new PixirError("invalid_args", "the subagent Log names no usable agent id", { field: "id", reason: "invalid_agent_id" });
    // A subagent's session folder is its session's base id: its root Log id before `.agent-…`.
    const sessionName = rootId.slice(0, rootId.lastIndexOf("."));
    const rel = isSub
      ? c.layout === "subagents_dir"
        ? path.join(projectDir, sessionName, "subagents", `agent-${agentId}.jsonl`)
        : path.join(projectDir, `agent-${agentId}.jsonl`)
      : path.join(projectDir, `${rootId}.jsonl`);
    return { rel, kind: isSub ? "subagent" : "session", bytes: r.bytes, records: r.records, holdsTarget: r.source === source };
  });
  const main = files.find((f) => f.holdsTarget)!;
  const claudeSessionId = path.basename(main.rel, ".jsonl");
  return { mode: "original", sessionId: id, projectDir, cwd, claudeSessionId, files, main, subagentFiles: files.filter((f) => f.kind === "subagent").length, fork: null };
}

/** §5.3: a new session file for a Log that is not purely import-made. */
async function forkPlan(ws: string, id: string, sources: Map<string, string[]>, cwd: string | undefined): Promise<ClaudeExportPlan> {
  const cache = new Map<string, { bytes: Buffer; projectDir: unknown } | null>();
  const fork = await planForkExport({
    ws,
    id,
    cwd,
    sourceFile: async (sessionId) => {
      if (!cache.has(sessionId)) {
        const ids = sources.get(sessionId);
        const r = ids ? await rebuild(ws, ids) : null;
        cache.set(sessionId, r && { bytes: r.bytes, projectDir: r.carrier?.project_dir });
      }
      return cache.get(sessionId)!;
    },
  });
  const projectDir = projectDirFor(fork.recordedProjectDir, fork.cwd);
  const bytes = Buffer.from(fork.lines.map((l) => `${l}\n`).join(""), "utf8");
  const file: RebuiltFile = { rel: path.join(projectDir, `${fork.forkId}.jsonl`), kind: "session", bytes, records: fork.lines.length, holdsTarget: true };
  return { mode: "fork", sessionId: id, projectDir, cwd: fork.cwd, claudeSessionId: fork.forkId, files: [file], main: file, subagentFiles: 0, fork };
}

function existing(p: string): Buffer | null {
  try {
    if (!lstatSync(p).isFile()) return Buffer.alloc(0);
    return readFileSync(p);
  } catch {
    return null;
  }
}

/** §5.5: plan every target, refuse a different existing file, then write with temp + rename. */
export function finishClaudeExport(plan: ClaudeExportPlan, options: { out: string | undefined; cwd: string; dryRun: boolean }): ClaudeExportReport {
  const files: ClaudeExportFile[] = [];
  let recorded = false;
  if (options.out !== undefined) {
    const dir = existingOutDir(options.cwd, options.out);
    const status = plan.files.map((f) => {
      const have = existing(path.join(dir, f.rel));
      if (have === null) return options.dryRun ? "would_write" : "written";
      if (have.equals(f.bytes)) return "unchanged";
      throw new PixirError("already_exists", "an exported file already exists with other contents", { path: f.rel, next_actions: ["remove the file or export to another directory"] });
    });
    // A failed write (a full or read-only disk) takes back the files and directories this run made: the
    // export is whole or absent (cli-contract.md "Operating-system faults").
    const made: string[] = [];
    try {
      plan.files.forEach((f, i) => {
        if (status[i] === "written") {
          writeAtomically(dir, f.rel, f.bytes, made, path.join(options.out!, f.rel));
          recorded = true;
        }
        files.push({ path: f.rel, kind: f.kind, records: f.records, bytes: f.bytes.length, status: status[i] as ClaudeExportFile["status"] });
      });
    } catch (err) {
      for (const p of made.reverse()) takeBack(p);
      throw err;
    }
  } else {
    for (const f of plan.files) files.push({ path: f.rel, kind: f.kind, records: f.records, bytes: f.bytes.length, status: "would_write" });
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
 * Directories below `dir` are created 0700; the file appears whole (temp + rename), mode 0600. What it
 * makes is pushed on `made` (directories, then the file) so a later failure can take it back; a
 * failure here is named after `shown`, the file as the user's --out names it.
 */
function writeAtomically(dir: string, rel: string, bytes: Buffer, made: string[], shown: string): void {
  const target = path.join(dir, rel);
  const fault = (err: unknown, operation: string) => osWriteFault(err, shown, operation, "the exported Claude file");
  const parts = path.dirname(rel).split(path.sep).filter((x) => x !== "" && x !== ".");
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
  const tmp = `${target}.tmp-${randomHex(4)}`;
  let fd: number | undefined;
  let renamed = false;
  try {
    fd = openSync(tmp, "wx", 0o600);
    writeWhole(fd, bytes);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    renameSync(tmp, target);
    renamed = true;
    made.push(target);
  } catch (err) {
    throw fault(err, "write");
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (!renamed) {
      try {
        unlinkSync(tmp);
      } catch {
        /* never created */
      }
    }
  }
}
