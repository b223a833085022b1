// codex-interop.md §3–§4: `pixir import codex`. Every rollout of a run is read and planned against the
// Workspace as the earlier rollouts leave it; every error is found before anything is written; then the
// new Logs are created and the grown ones appended to, under their Writer Leases.
import { closeSync, existsSync, lstatSync, openSync, readdirSync, readSync, realpathSync, rmdirSync, rmSync, statSync } from "node:fs";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { afterEarlierWrites } from "../../event/os-fault.js";
import { derivedUlid } from "../../event/ids.js";
import { acquireLease, leaseStatus, publicStatus, type WriterLease } from "../../store/lease.js";
import { appendJournaled, createLogAtomically, discardPreparedLog, fsyncDir, readTail, type PreparedLog } from "../../store/log-write.js";
import { sweepStaleTempFiles } from "../../store/repair.js";
import { readFirstLine } from "../../store/log-read.js";
import { inspectStatePath, logPath, removeCreatedDirs, sessionsDir } from "../../store/paths.js";
import { excerptOf, termOfJs } from "../../event/elixir.js";
import { compareBytes, isValidSessionId } from "../../event/session-id.js";
import {
  familyLeaf,
  familyMaxLine,
  lastTs,
  loadFamily,
  newLog,
  ownEvents,
  ownerOf,
  pushEvent,
  rolloutLines,
  shareChild,
  type Family,
  type PlannedLog,
} from "./family.js";
import {
  codexBaseId,
  EPOCH,
  lineText,
  readRollout,
  readRolloutHead,
  restAfterTimestamp,
  shownThreadId,
  validTimestamp,
  withTimestamp,
  type Rollout,
} from "./format.js";
import { sha256Hex } from "../../event/ids.js";
import { fileHolds, readDiskFamily, type EventLineOf } from "./disk-prefix.js";
import { planLean } from "./lean-plan.js";
import { streamGrown, type GrownStream } from "./grown-stream.js";
import { rolloutReport, rootLogReport, type CodexImportReport, type CodexImportResult, type CodexImportStatus, type ReadLines, type SkippedFile } from "./report.js";
import { indexDir, indexedUnchanged, recordImport, recordLink, type ReadFacts } from "./import-index.js";
import { receivedPrepared, sentPrepared, streamError, StreamPool, type CommitOutcome, type StreamOutcome, type StreamTask } from "./stream.js";
import { scanThreadCount } from "../../store/threads.js";
import { mapLine } from "./line-map.js";
import { FreshFamily, LineFeeder, Mapper, newRootFamily } from "./plan-lines.js";
import { DIVERGED_ACTIONS, REMOVE_ACTIONS, type AgentImportOptions, type SourcePath } from "../../session/agent-files.js";
import { codexOf, lineOf } from "./rebuild.js";
import { eventLine, forkedFromOf, lineOneCodex, parentThreadOf, stateOf, taskOfRecords } from "./line-events.js";

export type { CodexImportReport, CodexImportResult, CodexImportStatus, CodexSessionReport, SkippedFile } from "./report.js";

export interface CodexImportOptions extends AgentImportOptions {
  /** `[i/n] file` lines; the caller passes it only when stderr is a terminal. */
  progress?: (i: number, n: number, file: string) => void;
  /** archive.md §5: files another stage takes (a rollout pixir exported from a Log of this Workspace). */
  skipFile?: (abs: string) => boolean;
}

/** §4.1: the default directory. */
export function defaultCodexSessionsDir(env: NodeJS.ProcessEnv): string {
  const home = env.CODEX_HOME;
  if (home !== undefined && home !== "") return path.join(home, "sessions");
  return path.join(env.HOME ?? "", ".codex", "sessions");
}

const notFoundPath = (display: string): PixirError =>
  new PixirError("not_found", "codex rollout path was not found", { path: display, next_actions: ["check the path", "set CODEX_HOME or pass the sessions directory"] });

interface Input extends SourcePath {
  named: boolean;
}

/** §4.1: files and walked directories, in run order, each real file once; symbolic links met go to `links`. */
export function listRolloutFiles(paths: SourcePath[], links: string[] = []): Input[] {
  const out: Input[] = [];
  const seen = new Set<string>();
  const add = (p: string, display: string, named: boolean): void => {
    let real: string;
    try {
      real = realpathSync(p);
    } catch {
      real = p;
    }
    if (seen.has(real)) return;
    seen.add(real);
    out.push({ path: p, display, named });
  };
  const walk = (dir: string, display: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EACCES" || code === "EPERM") throw new PixirError("permission_denied", undefined, { path: display });
      throw notFoundPath(display);
    }
    names.sort(compareBytes);
    for (const name of names) {
      const abs = path.join(dir, name);
      const shown = path.join(display, name);
      let st;
      try {
        st = lstatSync(abs);
      } catch {
        continue; // gone since the directory was listed
      }
      if (st.isSymbolicLink()) links.push(shown);
      else if (st.isDirectory()) walk(abs, shown);
      else if (st.isFile() && name.endsWith(".jsonl")) add(abs, shown, false);
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p.path);
    } catch {
      throw notFoundPath(p.display);
    }
    if (st.isDirectory()) walk(p.path, p.display);
    else add(p.path, p.display, true);
  }
  return out;
}

/** §4.4 step 2: sources first, stable otherwise; a cycle's members stay where they are and import as roots. */
function runOrder<R extends { threadId: string; meta: JsonObject }>(rollouts: R[]): { order: R[]; cyclic: Set<string> } {
  const byThread = new Map(rollouts.map((r) => [r.threadId, r]));
  // A rollout is on a cycle when following forked_from_id through the run leads back to it; one that only
  // leads into a cycle is not, and comes after its source as usual.
  const cyclic = new Set<string>();
  for (const r of rollouts) {
    const seen = new Set<string>();
    for (let p = forkedFromOf(r.meta); p !== null && byThread.has(p) && !seen.has(p); p = forkedFromOf(byThread.get(p)!.meta)) {
      if (p === r.threadId) {
        cyclic.add(r.threadId);
        break;
      }
      seen.add(p);
    }
  }
  const order: R[] = [];
  const placed = new Set<string>();
  const place = (r: R): void => {
    if (placed.has(r.threadId)) return;
    placed.add(r.threadId);
    const p = forkedFromOf(r.meta);
    if (p !== null && !cyclic.has(r.threadId) && byThread.has(p)) place(byThread.get(p)!);
    order.push(r);
  };
  for (const r of rollouts) place(r);
  return { order, cyclic };
}

/** What each refusal means, in words (the reason stays the spec's machine word). */
const REFUSAL_MESSAGES: Record<string, string> = {
  rollout_changed: "the Codex rollout changed after it was imported",
  not_a_codex_import: "the log was not made by pixir import codex",
  log_diverged: "the imported log has Events of its own after the rollout's lines",
};

function refused(ws: string, sessionId: string, reason: string, file: string, line: number | null): PixirError {
  return new PixirError("already_exists", REFUSAL_MESSAGES[reason] ?? "session log already exists", {
    session_id: sessionId,
    log_path: logPath(ws, sessionId).rel,
    reason,
    ...(line === null ? {} : { line }),
    file,
    next_actions: reason === "log_diverged" ? DIVERGED_ACTIONS : REMOVE_ACTIONS,
  });
}

export interface PlannedRollout {
  rollout: Rollout;
  family: Family;
  forkReport: CodexImportReport["fork"];
}

/** The run's view of the Workspace: families planned so far, or read once from disk. */
export class Families {
  private readonly map = new Map<string, Family | null>();
  constructor(private readonly ws: string) {}
  /** Read thread t's family (planned, or from disk); null when there is none, "foreign" for a Log that is not one. */
  async load(t: string): Promise<Family | null | "foreign"> {
    if (this.map.has(t)) return this.map.get(t)!;
    const disk = await loadFamily(this.ws, t);
    if (disk.kind === "foreign") return "foreign";
    const f = disk.kind === "family" ? disk.family : null;
    this.map.set(t, f);
    return f;
  }
  set(f: Family): void {
    this.map.set(f.threadId, f);
  }
  get = (t: string): Family | undefined => this.map.get(t) ?? undefined;
  /** Whether thread t's family was planned or read in this run (null: there was none). */
  has = (t: string): boolean => this.map.has(t);
  /** Forget a family no later step reads (§4.8: memory holds what is still needed). */
  evict(t: string): void {
    this.map.delete(t);
  }
  all(): Family[] {
    return [...this.map.values()].filter((f): f is Family => f !== null);
  }
  /** Make sure a fork's sources are loaded before rolloutLines walks them. */
  async loadChain(t: string): Promise<void> {
    for (let depth = 0, f = await this.load(t); f !== null && f !== "foreign" && f.fork !== null && depth < 40; depth++) f = await this.load(f.fork.sourceThread);
  }
}

/** §3.5 step 2: how many of the source's lines the fork copied. */
function copiedPrefix(r: Rollout, source: Array<string | null | undefined>): { k: number; timestamps: Array<[string, number]>; sha256: string } {
  const rests: string[] = [];
  const timestamps: Array<[string, number]> = [];
  let k = 0;
  for (; k < source.length && k + 1 < r.lines.length; k++) {
    const c = r.lines[k + 1]!;
    const s = source[k];
    const text = lineText(c);
    const mine = restAfterTimestamp(text);
    const theirs = s === null || s === undefined ? null : restAfterTimestamp(s);
    if (mine === null || theirs === null || c.record === null || withTimestamp(mine.timestamp, theirs.rest) !== text) break;
    rests.push(`${mine.rest}\n`);
    const last = timestamps.at(-1);
    if (last !== undefined && last[0] === mine.timestamp) last[1]++;
    else timestamps.push([mine.timestamp, 1]);
  }
  return { k, timestamps, sha256: sha256Hex(rests.join("")) };
}

/** Plan one rollout: a new family, or what a grown file adds to its family (§3, §4.5). */
export async function planRollout(ws: string, r: Rollout, families: Families, cyclic: boolean): Promise<PlannedRollout> {
  const t = r.threadId;
  const base = codexBaseId(t);
  if (!families.has(t) && forkedFromOf(r.meta) === null) {
    const replanned = replanGrown(ws, r);
    if (replanned !== null) {
      families.set(replanned.family);
      return replanned;
    }
  }
  const existing = await families.load(t);
  if (existing === "foreign") throw refused(ws, base, "not_a_codex_import", r.display, null);
  if (existing !== null) return planGrown(ws, r, existing, families);

  const p = forkedFromOf(r.meta);
  let forkStatus: string | null = null;
  let forkReport: CodexImportReport["fork"] = null;
  let family: Family | null = null;
  if (p !== null) {
    const source = cyclic ? null : await families.load(p);
    if (cyclic) forkStatus = "source_cycle";
    else if (source === null || source === "foreign") forkStatus = "source_missing";
    else if (r.lines[1]?.record?.type !== "session_meta") forkStatus = "no_copied_prefix";
    else {
      await families.loadChain(p);
      const copied = copiedPrefix(r, rolloutLines(families.get, p));
      if (copied.k === 0) forkStatus = "copied_prefix_mismatch";
      else {
        const { log: O, seq: F } = ownerOf(families.get, p, copied.k);
        const root = newLog(base, "fork", O.forkRoot);
        family = { threadId: t, baseId: base, logs: [root], fork: { sourceThread: p, copied: copied.k, timestamps: copied.timestamps, sha256: copied.sha256 }, lineOne: r.lines[0]!.record!, fromDisk: false };
        const line = r.lines[0]!;
        const codex = lineOneCodex(t, line, r.display);
        codex.fork = { source_thread: p, copied_lines: copied.k, copied_timestamps: copied.timestamps, copied_sha256: copied.sha256 };
        const ts = validTimestamp(line.record!.timestamp) ?? EPOCH;
        shareChild(ws, O, root, F, (data) => ({ id: derivedUlid(`codex:${t}:1`, ts), ts, type: "session_fork", data: { ...data, codex } }));
        forkReport = { source_thread_id: shownThreadId(p), shared: true, copied_lines: copied.k, fork_status: null };
      }
    }
    if (forkReport === null) forkReport = { source_thread_id: shownThreadId(p), shared: false, copied_lines: 0, fork_status: forkStatus };
  }
  if (family === null) family = newRootFamily(r, r.lines[0]!, forkStatus);
  const feeder = new LineFeeder(ws, family, stateOf(r.meta));
  for (let i = 1; i < r.lines.length; i++) feeder.feed(r.lines[i]!);
  families.set(family);
  return { rollout: r, family, forkReport };
}

/**
 * §4.5 without reading the family (disk-prefix.ts): rollout r planned as a new family, its links put back
 * where they stand on disk, taken when the Logs on disk are that plan as it stood after the last line they
 * hold; null sends r to planGrown.
 */
export function replanGrown(ws: string, r: Rollout): PlannedRollout | null {
  const disk = readDiskFamily(ws, codexBaseId(r.threadId));
  if (disk === null || disk === "none") return null;
  const plan = new FreshFamily(ws, r, r.lines[0]!, disk);
  for (let i = 1; i < r.lines.length; i++) plan.feed(r.lines[i]!);
  const family = plan.finish(ws);
  return family === null ? null : { rollout: r, family, forkReport: null };
}

/** §4.5: a family already in the Workspace. Compare what it holds with the file, then map the new lines. */
export async function planGrown(ws: string, r: Rollout, family: Family, families: Families): Promise<PlannedRollout> {
  await families.loadChain(r.threadId);
  const held = rolloutLines(families.get, r.threadId);
  const L = familyMaxLine(family);
  for (let j = 1; j <= L; j++) {
    const mine = r.lines[j - 1];
    const stored = held[j - 1];
    if (mine === undefined) throw refused(ws, family.baseId, "rollout_changed", r.display, j);
    // A skipped line (null) stays the same while it is still unreadable; a line no Log holds (undefined,
    // a removed Log) is never the same.
    const same = stored === null ? mine.record === null : lineText(mine) === stored;
    if (!same) throw refused(ws, family.baseId, "rollout_changed", r.display, j);
  }
  const fork = family.fork;
  const forkReport: CodexImportReport["fork"] =
    forkedFromOf(r.meta) === null
      ? null
      : fork !== null
        ? { source_thread_id: shownThreadId(fork.sourceThread), shared: true, copied_lines: fork.copied, fork_status: null }
        : {
            source_thread_id: shownThreadId(forkedFromOf(r.meta)),
            shared: false,
            copied_lines: 0,
            fork_status: (family.logs[0]!.stored.at(0)?.data.lineage as JsonObject | undefined)?.fork_status as string | null,
          };
  if (r.lines.length > L) {
    const leaf = familyLeaf(family);
    const stored = Array.from(leaf.stored);
    let lastLine = -1;
    stored.forEach((e, i) => {
      if (lineOf(e) !== null) lastLine = i;
    });
    if (stored.slice(lastLine + 1).some((e) => codexOf(e) === null)) throw refused(ws, leaf.sessionId, "log_diverged", r.display, null);
    const state = stateOf(r.meta);
    const mapper = new Mapper(ws, family, state);
    for (const line of r.lines.slice(1)) {
      if (line.n <= L) mapLine(r.threadId, line, state);
      else mapper.place(line);
    }
  }
  families.set(family);
  return { rollout: r, family, forkReport };
}

// ---------------------------------------------------------------------------------------------------
// §3.6: subagent links, planned after every rollout of the run.

/** What a link needs of a subagent rollout; kept after its family leaves memory. */
export interface LinkSource {
  threadId: string;
  baseId: string;
  lineOne: JsonObject;
  parentThread: string;
  task: string | null;
}

interface LinkPlan {
  parent: PlannedLog;
  parentThread: string;
  event: Omit<PixirEvent, "seq" | "session_id">;
  childId: string;
  order: string;
  childThread: string;
}

const taskOfRollout = (r: Rollout): string | null => taskOfRecords(r.lines.map((l) => l.record));

/** The task of a family in the Workspace: from its Events, or for a Codex fork from its whole rollout (the copied lines count). */
async function taskOfFamily(f: Family, families: Families): Promise<string | null> {
  if (f.fork !== null) {
    await families.loadChain(f.threadId);
    return taskOfRecords(
      (function* () {
        for (const line of rolloutLines(families.get, f.threadId)) yield line === null || line === undefined ? null : (JSON.parse(line) as JsonObject);
      })(),
    );
  }
  let best: { line: number; text: unknown } | null = null;
  for (const log of f.logs) {
    for (const e of ownEvents(log)) {
      const c = codexOf(e);
      if (e.type !== "user_message" || e.data.origin === "context" || c === null || !isJsonObject(c.record) || c.record.type !== "response_item") continue;
      if (best === null || (c.line as number) < best.line) best = { line: c.line as number, text: e.data.text };
    }
  }
  return best === null ? null : excerptOf(termOfJs(best.text));
}

/** Subagent rollouts already in the Workspace whose parent is a rollout of the run (first-line discovery, tree.md §2.5). */
const FIRST_LINE_PEEK = 64 * 1024;
const PARENT_MARKERS = [Buffer.from('"subagent"'), Buffer.from('"parent_thread_id"')];

/**
 * Whether a Log's first line may name a parent thread (§3.6): false when its first bytes hold the whole
 * line and neither key is in it, so the thousands of Logs of an imported tree are not decoded for nothing.
 */
function mayNameAParent(file: string, head: Buffer): boolean {
  let n: number;
  try {
    const fd = openSync(file, "r");
    try {
      n = readSync(fd, head, 0, head.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch {
    return true; // readFirstLine names the problem, or passes over it
  }
  const line = head.subarray(0, n);
  const nl = line.indexOf(0x0a);
  if (nl === -1) return true;
  const first = line.subarray(0, nl);
  return PARENT_MARKERS.some((m) => first.includes(m));
}

async function workspaceSubagents(ws: string, runThreads: Set<string>): Promise<Array<{ thread: string; parent: string }>> {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(ws).abs).filter((n) => n.endsWith(".ndjson"));
  } catch {
    return [];
  }
  const found: Array<{ thread: string; parent: string }> = [];
  const head = Buffer.allocUnsafe(FIRST_LINE_PEEK);
  for (const name of names) {
    const id = name.slice(0, -".ndjson".length);
    if (!isValidSessionId(id) || !mayNameAParent(logPath(ws, id).abs, head)) continue;
    const first = await readFirstLine(logPath(ws, id)).catch(() => null);
    if (first === null || !("line" in first)) continue;
    const c = codexOf(first.line.event);
    if (c === null || c.line !== 1 || c.synthetic !== undefined || typeof c.thread !== "string" || !isJsonObject(c.record)) continue;
    const meta = c.record.payload;
    if (!isJsonObject(meta)) continue;
    const p = parentThreadOf(meta);
    if (p !== null && runThreads.has(p) && !runThreads.has(c.thread) && codexBaseId(c.thread) === id) found.push({ thread: c.thread, parent: p });
  }
  return found;
}

async function planLinks(ws: string, sources: LinkSource[], families: Families): Promise<LinkPlan[]> {
  const links: LinkPlan[] = [];
  for (const child of sources) {
    const meta = isJsonObject(child.lineOne.payload) ? child.lineOne.payload : {};
    const p = child.parentThread;
    if (p === child.threadId) continue;
    const parentFamily = await families.load(p);
    if (parentFamily === null || parentFamily === "foreign") continue;
    const childId = child.baseId;
    const linked = parentFamily.logs.some((log) =>
      Array.from(log.stored).some((e) => e.type === "subagent_event" && codexOf(e)?.synthetic === "subagent_link" && e.data.child_session_id === childId),
    );
    if (linked || links.some((l) => l.childId === childId)) continue;
    const leaf = familyLeaf(parentFamily);
    const spawn = isJsonObject(meta.source) && isJsonObject(meta.source.subagent) && isJsonObject(meta.source.subagent.thread_spawn) ? meta.source.subagent.thread_spawn : {};
    const agent = [spawn.agent_role, spawn.agent_nickname, meta.agent_role, meta.agent_nickname].find((v) => typeof v === "string");
    const line1Ts = typeof child.lineOne.timestamp === "string" ? child.lineOne.timestamp : "";
    const ts = validTimestamp(child.lineOne.timestamp) ?? lastTs(leaf, EPOCH);
    const data: JsonObject = { subagent_id: childId, child_session_id: childId, event: "spawned" };
    if (agent !== undefined) data.agent = agent;
    if (typeof spawn.depth === "number" && Number.isInteger(spawn.depth)) data.depth = spawn.depth;
    if (child.task !== null) data.task = child.task;
    data.workspace = ws;
    const codex: JsonObject = { synthetic: "subagent_link", parent_thread: p };
    for (const k of ["agent_nickname", "agent_role", "agent_path"]) {
      const v = spawn[k] ?? meta[k];
      if (typeof v === "string") codex[k] = v;
    }
    data.codex = codex;
    links.push({
      parent: leaf,
      parentThread: p,
      childId,
      childThread: child.threadId,
      order: line1Ts,
      event: { id: derivedUlid(`codex:${p}:link:${child.threadId}`, ts), ts, type: "subagent_event", data },
    });
  }
  links.sort((a, b) => compareBytes(a.order, b.order) || compareBytes(a.childThread, b.childThread));
  for (const l of links) pushEvent(l.parent, l.event);
  return links;
}

// ---------------------------------------------------------------------------------------------------
// §4.6–§4.7: the run, in two passes. The first reads and plans every rollout and link and finds every
// error, keeping in memory only the families that a later rollout or a link needs; the second plans each
// rollout that has something to write again, against the Workspace the earlier writes leave, and writes it.

/** The lines of a Log's Events from `from` on, made one at a time as the writer takes them. */
/** The lines of a Log's Events from `from` on, made as the writer takes them. */
function* serializedLines(log: PlannedLog, from: number, lineOf: EventLineOf = eventLine): Generator<string | Buffer> {
  for (let i = from; i < log.stored.length; i++) yield lineOf(log.stored.at(i)!);
}

const linesOfRollout = (r: Rollout): ReadLines & ReadFacts => ({ ...r, lineCount: r.lines.length, skippedLines: r.lines.filter((l) => l.record === null).length });

function reportOf(p: Pick<PlannedRollout, "family" | "forkReport">, r: ReadLines, dry: boolean): CodexImportReport {
  const sessions = p.family.logs.map((log) => ({
    session_id: log.sessionId,
    role: log.role,
    parent_session_id: log.parentId,
    forked_to_seq: log.forkedToSeq,
    event_count: log.stored.length,
    new_event_count: log.stored.length - log.diskCount,
    status: statusOf(log, dry),
  }));
  return rolloutReport(r, p.forkReport, sessions, familyLeaf(p.family).sessionId);
}

function statusOf(log: PlannedLog, dry: boolean): CodexImportStatus {
  if (log.stored.length === log.diskCount) return "unchanged";
  if (log.diskCount === 0) return dry ? "would_create" : "created";
  return dry ? "would_append" : "appended";
}

interface RunItem {
  input: Input;
  threadId: string;
  /** What line 1 says about lineage (lineageMeta): a run of thousands of rollouts keeps no more of it. */
  meta: JsonObject;
}

/** The members of line 1's payload that forkedFromOf and parentThreadOf read (§3.5, §3.6). */
function lineageMeta(meta: JsonObject): JsonObject {
  const kept: JsonObject = { id: meta.id };
  for (const k of ["forked_from_id", "source", "parent_thread_id"]) if (Object.hasOwn(meta, k)) kept[k] = meta[k];
  return kept;
}

/** README "Rules that hold across the two agent importers": what --lenient turns into a skipped file. */
function lenientSkip(err: unknown, lenient: boolean, file: string): SkippedFile | null {
  if (!lenient || !(err instanceof PixirError) || (err.kind !== "invalid_codex_session" && err.kind !== "already_exists")) return null;
  const reason = typeof err.details.reason === "string" ? err.details.reason : err.kind;
  return { file, reason, error: { kind: err.kind, message: err.message, details: err.details } };
}

export async function importCodexRollouts(ws: string, options: CodexImportOptions): Promise<CodexImportResult> {
  const lenient = Boolean(options.lenient);
  // A killed earlier import's temp files go first (under each Log's lease), so check finds none after this run.
  if (!options.dryRun) await sweepStaleTempFiles(ws, { program: options.program, env: options.env, signal: options.signal });
  const links: string[] = [];
  const inputs = listRolloutFiles(options.paths, links).filter((i) => options.skipFile?.(i.path) !== true);
  const items: RunItem[] = [];
  const skippedFiles: SkippedFile[] = links.map((file) => ({ file, reason: "symlink" }));
  const seenThreads = new Map<string, string>();
  for (const input of inputs) {
    let head: ReturnType<typeof readRolloutHead>;
    try {
      head = readRolloutHead(input, input.named);
      const other = head.kind === "rollout" ? seenThreads.get(head.threadId) : undefined;
      if (other !== undefined) throw new PixirError("invalid_codex_session", undefined, { reason: "duplicate_session_id", file: input.display, other_file: other });
    } catch (err) {
      const skip = lenientSkip(err, lenient, input.display);
      if (skip === null) throw err;
      skippedFiles.push(skip);
      continue;
    }
    if (head.kind === "skipped") {
      skippedFiles.push({ file: input.display, reason: head.reason });
      continue;
    }
    seenThreads.set(head.threadId, input.display);
    items.push({ input, threadId: head.threadId, meta: lineageMeta(head.meta) });
  }
  const { order, cyclic } = runOrder(items);
  const runThreads = new Set(items.map((i) => i.threadId));
  // The families a later step reads: fork sources of the run and the parents of its subagents.
  const wsSubagents = await workspaceSubagents(ws, runThreads);
  const keep = new Set<string>();
  for (const i of items) {
    const p = forkedFromOf(i.meta);
    if (p !== null) keep.add(p);
    const parent = parentThreadOf(i.meta);
    if (parent !== null) keep.add(parent);
  }
  for (const s of wsSubagents) keep.add(s.parent);
  const stateBefore: Array<[string, boolean]> = [indexDir(ws), sessionsDir(ws).abs, path.join(ws, ".pixir")].map((d) => [d, existsSync(d)]);
  // Threads are counted, and workers started, only when a rollout is streamed: an unchanged tree needs none.
  const made: { pool: StreamPool | null } = { pool: null };
  const run: Run = {
    ws,
    order,
    cyclic,
    keep,
    wsSubagents,
    options,
    existing: existingLogNames(ws),
    skipped: new Set(),
    streamed: new Map(),
    written: 0,
    threads: 1,
    get pool(): StreamPool {
      if (made.pool === null) {
        // Each worker holds some 45 MiB of its own: at most two unless PIXIR_SCAN_THREADS asks for more, so a
        // tree of any size imports within the 256 MiB of docs/performance.md.
        const asked = options.env.PIXIR_SCAN_THREADS !== undefined && options.env.PIXIR_SCAN_THREADS !== "";
        this.threads = Math.min(scanThreadCount(options.env, streamBytes(items)), asked ? Infinity : MAX_STREAM_THREADS);
        made.pool = StreamPool.open(this.threads, options.signal);
      }
      return made.pool;
    },
  };
  const stop = (): void => void made.pool?.close();
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    return await importRun(run, items, skippedFiles);
  } finally {
    options.signal?.removeEventListener("abort", stop);
    await made.pool?.close();
    // A run that stops before it commits a prepared Log leaves nothing of it behind, nor the directories
    // made for them (by whichever stream came first, on whichever thread), once their temp files are gone.
    const dirs = new Set<string>();
    for (const s of run.streamed.values()) {
      if (s.prepared === null) continue;
      for (const d of s.prepared.createdDirs) dirs.add(d);
      discardPreparedLog({ ...s.prepared, createdDirs: [] });
      if (s.indexTmp !== null) rmSync(s.indexTmp, { force: true });
    }
    removeCreatedDirs([...dirs].sort((a, b) => a.length - b.length));
    // A stream that failed on another thread took back only what it made, which its neighbours may still
    // have been using: state directories the run found absent go again if they are empty.
    for (const [dir, was] of stateBefore) {
      if (was) continue;
      try {
        rmdirSync(dir);
      } catch {
        /* not empty, or gone */
      }
    }
  }
}

async function importRun(run: Run, items: RunItem[], skippedFiles: SkippedFile[]): Promise<CodexImportResult> {
  const { ws } = run;
  const dry = Boolean(run.options.dryRun);
  const first = await runPass(run, null);
  skippedFiles.push(...first.skippedFiles);
  const toWrite = new Set(first.reports.filter((r) => r.report.sessions.some((s) => s.status !== "unchanged")).map((r) => r.threadId));
  for (const t of first.deferred) toWrite.add(t);
  const anything = toWrite.size > 0 || first.links.length > 0;
  const reports = new Map(first.reports.map((r) => [r.threadId, r.report]));
  if (!dry && anything) {
    // Nothing is written while a Log the run writes is held by another writer (§4.6 step 2).
    for (const r of first.reports) for (const s of r.report.sessions) if (s.status !== "unchanged") assertLeaseFree(ws, s.session_id);
    for (const t of first.deferred) assertLeaseFree(ws, codexBaseId(t));
    for (const l of first.links) assertLeaseFree(ws, l.parent_session_id);
    const second = await runPass(run, toWrite);
    for (const r of second.reports) if (first.deferred.has(r.threadId)) reports.set(r.threadId, r.report);
  }
  // A link is an Event of its parent's leaf: count it there.
  for (const l of first.links) {
    for (const r of first.reports) {
      for (const s of r.report.sessions) {
        if (s.session_id !== l.parent_session_id) continue;
        s.event_count++;
        s.new_event_count++;
        if (s.status === "unchanged") s.status = dry ? "would_append" : "appended";
      }
    }
  }
  return {
    ok: true,
    recorded: !dry && anything,
    dry_run: dry,
    workspace: ws,
    imports: items.filter((i) => !run.skipped.has(i.threadId)).map((i) => reports.get(i.threadId)!),
    links: first.links.map((l) => ({ ...l, status: dry ? "would_create" : "created" })),
    skipped_files: skippedFiles,
  };
}

function assertLeaseFree(ws: string, id: string): void {
  const st = leaseStatus(ws, id);
  if (st.state === "available") return;
  const kind = st.state === "active" ? "session_writer_active" : st.state === "stale" ? "session_writer_stale" : "session_writer_ambiguous";
  throw new PixirError(kind, undefined, { session_id: id, ...publicStatus(st) });
}

/** What both passes of a run share. */
interface Run {
  ws: string;
  order: RunItem[];
  cyclic: Set<string>;
  keep: Set<string>;
  wsSubagents: Array<{ thread: string; parent: string }>;
  options: CodexImportOptions;
  /** The Log files of the Workspace when the run began. */
  existing: Set<string>;
  /** Threads the first pass skipped under --lenient; the writing pass leaves them alone. */
  skipped: Set<string>;
  /** New families the first pass streamed (§4.8), by thread: prepared Logs the writing pass commits. */
  streamed: Map<string, Streamed>;
  /** Logs this run has created or appended to: an error after one says what stays (§4.6). */
  written: number;
  /** Where the first pass streams them (made when first asked for), and on how many threads. */
  readonly pool: StreamPool;
  threads: number;
}

/** A new root family streamed by the first pass, its Log written to a temp file (none in a dry run). */
interface Streamed {
  report: CodexImportReport;
  facts: ReadFacts;
  /** Line 1's record, for a subagent (its link reads it); null otherwise. */
  lineOne: JsonObject | null;
  task: string | null;
  prepared: PreparedLog | null;
  /** Its import index entry, prepared in a temp file (null when none was written); placed with the commit. */
  indexTmp: string | null;
}

/** Worker threads that stream new families when PIXIR_SCAN_THREADS does not say (see Run.pool). */
const MAX_STREAM_THREADS = 2;

/** Streams in flight per thread: queued for or running on a worker, or in this thread finishing their writes. */
const PREPARING_AT_ONCE = 5;

interface PassResult {
  reports: Array<{ threadId: string; report: CodexImportReport }>;
  /** Rollouts the pass only parsed (their reports come from the writing pass). */
  deferred: Set<string>;
  links: Array<{ parent_session_id: string; child_session_id: string }>;
  skippedFiles: SkippedFile[];
}

/**
 * One pass over the run. Without `writing` it plans and reports; with it, it plans again each rollout
 * named there and writes its family, then the links.
 */
async function runPass(run: Run, writing: Set<string> | null): Promise<PassResult> {
  const { ws, order, options } = run;
  const families = new Families(ws);
  const reports: PassResult["reports"] = [];
  const deferred = new Set<string>();
  const skippedFiles: SkippedFile[] = [];
  const linkSources: LinkSource[] = [];
  const into: PassInto = { reports, deferred, linkSources, preparing: [], committing: [], commitFailure: null };
  /** A rollout that fails: under --lenient (in the checking pass) it is skipped, else the run fails. */
  const failed = (item: RunItem, err: unknown): void => {
    // Only the checking pass decides what --lenient skips; the writing pass meets what it checked.
    const skip = writing === null ? lenientSkip(err, Boolean(options.lenient), item.input.display) : null;
    // §4.6: the Logs already written stay; the error says so rather than "nothing was changed".
    if (skip === null) throw writing !== null && run.written > 0 ? afterEarlierWrites(err, ws) : err;
    skippedFiles.push(skip);
    run.skipped.add(item.threadId);
    // Planning may have added Events to a family read from disk: read it again when something needs it.
    families.evict(item.threadId);
  };
  /** The outcome of a streamed rollout, taken in run order. */
  const settle = async (p: Preparing): Promise<void> => {
    const outcome = await p.done;
    const t = p.item.threadId;
    if (outcome.kind === "done") {
      const prepared = outcome.prepared === null ? null : receivedPrepared(ws, outcome.prepared);
      run.streamed.set(t, { report: outcome.report, facts: outcome.facts, lineOne: outcome.lineOne, task: outcome.task, prepared, indexTmp: outcome.prepared?.indexTmp ?? null });
      reports.push({ threadId: t, report: outcome.report });
      const parent = parentThreadOf(p.item.meta);
      if (parent !== null && outcome.lineOne !== null) linkSources.push({ threadId: t, baseId: codexBaseId(t), lineOne: outcome.lineOne, parentThread: parent, task: outcome.task });
    } else if (outcome.kind === "needs_plan") {
      // A real run plans the family in its writing pass; a dry run plans it now.
      if (!options.dryRun) deferred.add(t);
      else {
        try {
          await planInMemory(run, p.item, families, null, into);
        } catch (err) {
          failed(p.item, err);
        }
      }
    } else if (outcome.kind === "error") failed(p.item, streamError(outcome.error));
  };
  let i = 0;
  let committed = false;
  try {
    for (const item of order) {
      i++;
      if (run.skipped.has(item.threadId)) continue;
      if (writing === null) options.progress?.(i, order.length, item.input.display);
      try {
        committed = (await passItem(run, item, families, writing, into)) || committed;
      } catch (err) {
        failed(item, err);
      }
      while (into.preparing.length > PREPARING_AT_ONCE * Math.max(1, run.threads)) await settle(into.preparing.shift()!);
      while (into.committing.length > COMMITS_AT_ONCE * Math.max(1, run.threads)) await settleCommit(run, into, into.committing.shift()!);
      if (into.commitFailure !== null) break;
    }
    while (into.preparing.length > 0) await settle(into.preparing.shift()!);
    await settleCommits(run, into);
  } catch (err) {
    // Every Log still being prepared is known, and so discarded with the others, before the run fails.
    for (const p of into.preparing.splice(0)) {
      const outcome = await p.done;
      if (outcome.kind === "done") run.streamed.set(p.item.threadId, { ...outcome, prepared: outcome.prepared === null ? null : receivedPrepared(ws, outcome.prepared), indexTmp: outcome.prepared?.indexTmp ?? null });
    }
    // §4.6: the error says whether Logs were written before it, once the commits under way are made.
    const before = run.written;
    for (const c of into.committing.splice(0)) await settleCommit(run, into, c);
    throw writing !== null && run.written > before ? afterEarlierWrites(err, ws) : err;
  }
  // The renames of the committed Logs are made durable together (envelope-and-log.md §8.2).
  if (committed) fsyncDir(sessionsDir(ws));
  for (const s of run.wsSubagents) {
    const f = await families.load(s.thread);
    if (f === null || f === "foreign") continue;
    linkSources.push({ threadId: s.thread, baseId: f.baseId, lineOne: f.lineOne, parentThread: s.parent, task: await taskOfFamily(f, families) });
  }
  const links = await planLinks(ws, linkSources, families);
  if (writing !== null) {
    const parents = new Map<string, PlannedLog>();
    for (const l of links) parents.set(l.parent.sessionId, l.parent);
    for (const log of parents.values()) await writeLogs(run, [{ log, lines: () => serializedLines(log, log.diskCount) }]);
    for (const l of links) recordLink(ws, l.parentThread, l.parent.sessionId);
  }
  return { reports, deferred, skippedFiles, links: links.map((l) => ({ parent_session_id: l.parent.sessionId, child_session_id: l.childId })) };
}

/** A streamed rollout (stream.ts), in flight. */
interface Preparing {
  item: RunItem;
  done: Promise<StreamOutcome>;
}

/** A streamed family's commit (stream.ts commitStreamed), in flight. */
interface Committing {
  streamed: Streamed;
  done: Promise<CommitOutcome>;
}

/** What one pass gathers, and its work in flight. */
interface PassInto {
  reports: PassResult["reports"];
  deferred: Set<string>;
  linkSources: LinkSource[];
  preparing: Preparing[];
  committing: Committing[];
  /** The first commit that failed: the pass stops, and fails once the commits under way are made. */
  commitFailure: unknown;
}

/** Commits in flight per thread in the writing pass; the threads overlap their leases' fsyncs. */
const COMMITS_AT_ONCE = 2;

async function settleCommit(run: Run, into: PassInto, c: Committing): Promise<void> {
  const outcome = await c.done;
  if (outcome.kind === "done") {
    run.written++;
    c.streamed.prepared = null;
    c.streamed.indexTmp = null;
  } else if (into.commitFailure === null) into.commitFailure = streamError(outcome.error);
}

/**
 * Every commit under way made (the writing pass does this before anything else is written, so Logs are
 * written in run order but for the streamed families committed side by side); the first failure thrown.
 */
async function settleCommits(run: Run, into: PassInto): Promise<void> {
  const before = run.written;
  while (into.committing.length > 0) await settleCommit(run, into, into.committing.shift()!);
  const failure = into.commitFailure;
  if (failure !== null) {
    into.commitFailure = null;
    throw run.written > 0 || before > 0 ? afterEarlierWrites(failure, run.ws) : failure;
  }
}

/**
 * One rollout of a pass: reported from the index, streamed, deferred, or planned (and in the writing pass
 * written or committed). Returns true when it committed a prepared Log whose directory entry awaits its fsync.
 */
async function passItem(
  run: Run,
  item: RunItem,
  families: Families,
  writing: Set<string> | null,
  into: PassInto,
): Promise<boolean> {
  const { ws, options } = run;
  const dry = Boolean(options.dryRun);
  const parentThread = parentThreadOf(item.meta);
  if (writing !== null) {
    const streamed = run.streamed.get(item.threadId);
    if (streamed !== undefined) {
      if (streamed.prepared !== null) {
        // Two threads of the run whose Logs have the same name (a thread id that is another's hashed id,
        // §3.1): the earlier one is committed first, as one at a time would.
        if (into.committing.some((c) => c.streamed.prepared?.id === streamed.prepared!.id)) await settleCommits(run, into);
        const { program, env } = options;
        const task = { ws, program, env, threadId: item.threadId, prepared: sentPrepared(streamed.prepared, streamed.indexTmp), facts: streamed.facts, lineOne: streamed.lineOne, report: streamed.report, task: streamed.task };
        into.committing.push({ streamed, done: run.pool.commit(task) });
      }
      if (parentThread !== null && streamed.lineOne !== null) into.linkSources.push({ threadId: item.threadId, baseId: codexBaseId(item.threadId), lineOne: streamed.lineOne, parentThread, task: streamed.task });
      return true;
    }
    // Anything else this pass writes comes after the commits under way, in run order.
    await settleCommits(run, into);
  }
  if (writing !== null && !writing.has(item.threadId)) {
    // Nothing to write for it, but it may still be linked from its parent in this run.
    if (parentThread !== null) {
      const f = await families.load(item.threadId);
      if (f !== null && f !== "foreign") into.linkSources.push({ threadId: item.threadId, baseId: f.baseId, lineOne: f.lineOne, parentThread, task: await taskOfFamily(f, families) });
      if (!run.keep.has(item.threadId)) families.evict(item.threadId);
    }
    return false;
  }
  if (writing === null) {
    const fast = indexedUnchanged(ws, item.threadId, item.input);
    if (fast !== null) {
      into.reports.push({ threadId: item.threadId, report: fast.report });
      if (parentThread !== null && fast.lineOne !== null) into.linkSources.push({ threadId: item.threadId, baseId: codexBaseId(item.threadId), lineOne: fast.lineOne, parentThread, task: fast.task });
      return false;
    }
    if (streamable(run, item)) {
      const task: StreamTask = { ws, path: item.input.path, display: item.input.display, named: item.input.named, lenient: Boolean(options.lenient), threadId: item.threadId, write: !dry };
      into.preparing.push({ item, done: run.pool.run(task) });
      return false;
    }
  }
  if (growsOneLog(run, item) && (await streamGrownItem(run, item, writing, into))) return false;
  return planInMemory(run, item, families, writing, into);
}

/** A rollout whose family may be one Log to append to (grown-stream.ts): no later step reads it, not a fork. */
function growsOneLog(run: Run, item: RunItem): boolean {
  return !run.keep.has(item.threadId) && forkedFromOf(item.meta) === null && inspectStatePath(logPath(run.ws, codexBaseId(item.threadId))) !== "missing";
}

/**
 * A grown rollout of a one-Log family streamed (grown-stream.ts): reported, and in the writing pass appended
 * under the Log's lease. False when the planner must plan it (nothing was written).
 */
async function streamGrownItem(run: Run, item: RunItem, writing: Set<string> | null, into: PassInto): Promise<boolean> {
  const { ws, options } = run;
  const t = item.threadId;
  const stream = (emit: ((line: string) => void) | null): GrownStream => streamGrown(ws, item.input, item.input.named, Boolean(options.lenient), t, emit);
  const result = writing === null ? stream(null) : await appendStreamed(run, codexBaseId(t), stream);
  if (result.kind === "plan") return false;
  const status: CodexImportStatus = result.newEvents === 0 ? "unchanged" : options.dryRun ? "would_append" : "appended";
  const report = rootLogReport({ ...result.scan, display: item.input.display }, result.eventCount, result.newEvents, status);
  into.reports.push({ threadId: t, report });
  const parentThread = parentThreadOf(item.meta);
  if (parentThread !== null) into.linkSources.push({ threadId: t, baseId: codexBaseId(t), lineOne: result.lineOne, parentThread, task: result.task });
  if (writing !== null) recordImport(ws, t, result.scan, parentThread !== null ? result.lineOne : null, report, result.task);
  return true;
}

/** Thrown inside an append whose rollout turned out to need the planner: nothing is written. */
const PLAN_INSTEAD = new Error("plan in memory");

/** §4.6 for one Log: its lease taken, the stream's new lines appended (all or nothing), the lease released. */
async function appendStreamed(run: Run, id: string, stream: (emit: (line: string) => void) => GrownStream): Promise<GrownStream> {
  const { ws, options } = run;
  const lease = await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  let result: GrownStream = { kind: "plan" };
  let ok = false;
  try {
    await appendJournaled(ws, id, readTail(ws, id), async (emit) => {
      result = stream(emit);
      if (result.kind === "plan") throw PLAN_INSTEAD;
    }, { lease, signal: options.signal });
    run.written++;
    ok = true;
  } catch (err) {
    if (err !== PLAN_INSTEAD) throw run.written > 0 ? afterEarlierWrites(err, ws) : err;
  } finally {
    lease.release(!ok);
  }
  return result;
}

/** One rollout planned with its family in memory (§3, §4.5), and in the writing pass written. */
async function planInMemory(run: Run, item: RunItem, families: Families, writing: Set<string> | null, into: { reports: PassResult["reports"]; linkSources: LinkSource[] }): Promise<boolean> {
  const lean = leanFits(run, item, families) ? await planLeanItem(run, item, writing, into) : "plain";
  if (lean !== "plain") return false;
  const read = readRollout(item.input, item.input.named, Boolean(run.options.lenient));
  if (read.kind !== "rollout") return false; // the file changed since its first line was read
  const planned = await planRollout(run.ws, read.rollout, families, run.cyclic.has(item.threadId));
  await finishPlanned(run, item, writing, into, planned, { ...linesOfRollout(read.rollout), task: () => taskOfRollout(read.rollout) });
  if (!run.keep.has(item.threadId)) families.evict(item.threadId);
  return false;
}

/**
 * A planned family (§3, §4.5) settled against the Logs it would create, reported, its link source kept
 * (§3.6), and in the writing pass written with its import index entry. `lineOf` gives an Event's line.
 */
async function finishPlanned(
  run: Run,
  item: RunItem,
  writing: Set<string> | null,
  into: { reports: PassResult["reports"]; linkSources: LinkSource[] },
  p: Pick<PlannedRollout, "family" | "forkReport">,
  read: ReadLines & ReadFacts & { task: () => string | null },
  lineOf: EventLineOf = eventLine,
): Promise<void> {
  const { ws } = run;
  const family = p.family;
  settleExistingLogs(ws, family, item.input.display, lineOf);
  const report = reportOf(p, read, Boolean(run.options.dryRun));
  const parentThread = parentThreadOf(item.meta);
  const task = parentThread !== null ? read.task() : null;
  into.reports.push({ threadId: item.threadId, report });
  if (parentThread !== null) into.linkSources.push({ threadId: item.threadId, baseId: family.baseId, lineOne: family.lineOne, parentThread, task });
  if (writing === null) return;
  await writeFamily(run, family, lineOf);
  recordImport(ws, item.threadId, read, parentThread !== null ? family.lineOne : null, report, task);
}

/**
 * A rollout the lean planner takes (lean-plan.ts): no later step reads its family (a fork's source, a
 * subagent's parent keep their Events whole), and it is no fork (its copied lines are checked against its
 * source's Events).
 */
function leanFits(run: Run, item: RunItem, families: Families): boolean {
  return !run.keep.has(item.threadId) && forkedFromOf(item.meta) === null && !families.has(item.threadId);
}

/**
 * One rollout planned by the lean planner, reported, and in the writing pass written from its spill. "plain"
 * when the plain planner must plan it (a grown family that is not the plan of its first lines): nothing
 * was reported.
 */
async function planLeanItem(run: Run, item: RunItem, writing: Set<string> | null, into: { reports: PassResult["reports"]; linkSources: LinkSource[] }): Promise<"planned" | "plain"> {
  const { ws, options } = run;
  const plan = planLean(ws, item.input, item.input.named, Boolean(options.lenient), item.threadId);
  if (plan === null) return "plain";
  if (plan === "skipped") return "planned"; // the file changed since its first line was read
  const keeper = plan.keeper;
  try {
    await finishPlanned(run, item, writing, into, { family: plan.family, forkReport: null }, { ...plan.scan, display: item.input.display, task: () => plan.task }, (e) => keeper.line(e));
  } finally {
    keeper.close();
  }
  return "planned";
}

/** The bytes of the rollouts of a run, which decide whether streaming them on worker threads pays. */
function streamBytes(items: RunItem[]): number {
  let total = 0;
  for (const i of items) {
    try {
      total += statSync(i.input.path).size;
    } catch {
      /* read (and reported) later */
    }
  }
  return total;
}

/** The Log files of a Workspace, by session id. */
function existingLogNames(ws: string): Set<string> {
  try {
    return new Set(
      readdirSync(sessionsDir(ws).abs)
        .filter((n) => n.endsWith(".ndjson"))
        .map((n) => n.slice(0, -".ndjson".length)),
    );
  } catch {
    return new Set();
  }
}

/**
 * A rollout the first pass streams: a new family, no fork, no later step reads it, and no Log it could
 * create exists already (its root, or a rollback child a Log of that name would meet, §3.1).
 */
function streamable(run: Run, item: RunItem): boolean {
  if (run.keep.has(item.threadId) || forkedFromOf(item.meta) !== null) return false;
  const base = codexBaseId(item.threadId);
  if (inspectStatePath(logPath(run.ws, base)) !== "missing") return false;
  const prefix = `${base}.rollback-`;
  for (const name of run.existing) if (name.startsWith(prefix)) return false;
  return true;
}

/**
 * README "Rules that hold across the two agent importers": a Log the run would create that exists already
 * is unchanged when its bytes are those planned, else already_exists with reason log_differs.
 */
function settleExistingLogs(ws: string, family: Family, file: string, lineOf: EventLineOf): void {
  for (const log of family.logs) {
    if (log.diskCount !== 0) continue;
    const where = logPath(ws, log.sessionId);
    if (inspectStatePath(where) === "missing") continue;
    // Compared one line at a time (a lean plan's as they are read from its spill).
    if (!fileHolds(where.abs, log.stored, log.stored.length, lineOf)) throw refused(ws, log.sessionId, "log_differs", file, null);
    log.diskCount = log.stored.length;
  }
}

/** Write the new Events of one family: appends, then new Logs parent before child, each under its lease. */
async function writeFamily(run: Run, family: Family, lineOf: EventLineOf): Promise<void> {
  const items = family.logs.filter((log) => log.stored.length > log.diskCount).map((log) => ({ log, lines: () => serializedLines(log, log.diskCount, lineOf) }));
  if (items.length > 0) await writeLogs(run, items);
  for (const log of family.logs) log.diskCount = log.stored.length;
}

/** §4.6 steps 2–4 for some Logs: leases in byte order of session id; appends and creations in the given order. */
async function writeLogs(run: Run, items: Array<{ log: PlannedLog; lines: () => Iterable<string | Buffer> }>): Promise<void> {
  const { ws, options } = run;
  const leases = new Map<string, WriterLease>();
  const ids = items.map((i) => i.log.sessionId).sort(compareBytes);
  let ok = false;
  try {
    for (const id of ids) leases.set(id, await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal }));
    for (const { log, lines } of items) {
      const lease = leases.get(log.sessionId)!;
      if (log.diskCount === 0) {
        await createLogAtomically(ws, log.sessionId, async (emit) => {
          for (const line of lines()) emit(line);
        }, { lease, signal: options.signal });
      } else {
        const tail = readTail(ws, log.sessionId);
        if (tail.last?.seq !== log.stored.at(log.diskCount - 1)!.seq) {
          throw new PixirError("log_write_failed", undefined, { reason: "log_changed_during_import", path: logPath(ws, log.sessionId).rel });
        }
        await appendJournaled(ws, log.sessionId, tail, async (emit) => {
          for (const line of lines()) emit(line);
        }, { lease, signal: options.signal });
      }
      run.written++;
    }
    ok = true;
  } catch (err) {
    // §4.6: a Log already written stays (a rerun completes the family): the error must not say "nothing was changed".
    throw run.written > 0 ? afterEarlierWrites(err, ws) : err;
  } finally {
    // Last taken, first released: the first lease made the state directories the others sit in.
    for (const lease of [...leases.values()].reverse()) lease.release(!ok);
  }
}

