// codex-interop.md §3–§4: `pixir import codex`. Every rollout of a run is read and planned against the
// Workspace as the earlier rollouts leave it; every error is found before anything is written; then the
// new Logs are created and the grown ones appended to, under their Writer Leases.
import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isEncodable, isJsonObject, serializeEvent, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { afterEarlierWrites } from "../../event/os-fault.js";
import { derivedUlid } from "../../event/ids.js";
import { acquireLease, leaseStatus, publicStatus, type WriterLease } from "../../store/lease.js";
import { appendJournaled, createLogAtomically, readTail } from "../../store/log-write.js";
import { readFirstLine } from "../../store/log-read.js";
import { inspectStatePath, logPath, sessionsDir } from "../../store/paths.js";
import { excerptOf, termOfJs } from "../../event/elixir.js";
import { isValidSessionId } from "../../event/session-id.js";
import { checkpointToSeqOf } from "../../session/context.js";
import {
  familyLeaf,
  familyMaxLine,
  lastTs,
  latestCheckpointOf,
  loadFamily,
  newLog,
  ownerOf,
  pushEvent,
  rolloutLines,
  shareChild,
  type CodexLogRole,
  type Family,
  type PlannedLog,
} from "./family.js";
import {
  codexBaseId,
  contentText,
  dropTurnsCut,
  EPOCH,
  isBoundaryItem,
  readRollout,
  readRolloutHead,
  restAfterTimestamp,
  sha256Hex,
  shownThreadId,
  validTimestamp,
  withTimestamp,
  type Rollout,
  type RolloutLine,
} from "./format.js";
import { carriesItem, mapLine, RunningState, verbatimCodexText } from "./line-map.js";
import { codexOf, lineOf } from "./rebuild.js";

export type CodexImportStatus = "created" | "appended" | "unchanged" | "would_create" | "would_append";

export interface CodexImportOptions {
  /** Paths as given (resolved against cwd by the caller into `path`), or none for the default directory. */
  paths: Array<{ path: string; display: string }>;
  lenient?: boolean;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** `[i/n] file` lines; the caller passes it only when stderr is a terminal. */
  progress?: (i: number, n: number, file: string) => void;
}

export interface CodexSessionReport {
  session_id: string;
  role: CodexLogRole;
  parent_session_id: string | null;
  forked_to_seq: number | null;
  event_count: number;
  new_event_count: number;
  status: CodexImportStatus;
}

export interface CodexImportReport {
  file: string;
  thread_id: string | null;
  cli_version: string | null;
  line_count: number;
  pending_tail: boolean;
  skipped_lines: number;
  fork: { source_thread_id: string | null; shared: boolean; copied_lines: number; fork_status: string | null } | null;
  sessions: CodexSessionReport[];
  leaf_session_id: string;
}

export interface CodexImportResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  workspace: string;
  imports: CodexImportReport[];
  links: Array<{ parent_session_id: string; child_session_id: string; status: "created" | "would_create" }>;
  skipped_files: Array<{ file: string; reason: string }>;
}

/** §4.1: the default directory. */
export function defaultCodexSessionsDir(env: NodeJS.ProcessEnv): string {
  const home = env.CODEX_HOME;
  if (home !== undefined && home !== "") return path.join(home, "sessions");
  return path.join(env.HOME ?? "", ".codex", "sessions");
}

const notFoundPath = (display: string): PixirError =>
  new PixirError("not_found", "codex rollout path was not found", { path: display, next_actions: ["check the path", "set CODEX_HOME or pass the sessions directory"] });

interface Input {
  path: string;
  display: string;
  named: boolean;
}

/** §4.1: files and walked directories, in run order, each real file once. */
export function listRolloutFiles(paths: Array<{ path: string; display: string }>): Input[] {
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
    names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    for (const name of names) {
      const abs = path.join(dir, name);
      const shown = path.join(display, name);
      const st = lstatSync(abs);
      if (st.isSymbolicLink()) continue;
      if (st.isDirectory()) walk(abs, shown);
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

/** §3.5 and §3.6: what line 1 says about lineage. */
const forkedFromOf = (meta: JsonObject): string | null => (typeof meta.forked_from_id === "string" ? meta.forked_from_id : null);

export function parentThreadOf(meta: JsonObject): string | null {
  const source = meta.source;
  if (isJsonObject(source) && isJsonObject(source.subagent) && isJsonObject(source.subagent.thread_spawn)) {
    const p = source.subagent.thread_spawn.parent_thread_id;
    if (typeof p === "string") return p;
  }
  return typeof meta.parent_thread_id === "string" ? meta.parent_thread_id : null;
}

/** §4.4 step 2: sources first, stable otherwise; a cycle's members stay where they are and import as roots. */
function runOrder<R extends { threadId: string; meta: JsonObject }>(rollouts: R[]): { order: R[]; cyclic: Set<string> } {
  const byThread = new Map(rollouts.map((r) => [r.threadId, r]));
  const cyclic = new Set<string>();
  for (const r of rollouts) {
    const seen = new Set<string>([r.threadId]);
    for (let p = forkedFromOf(r.meta); p !== null && byThread.has(p); p = forkedFromOf(byThread.get(p)!.meta)) {
      if (seen.has(p)) {
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

const REMOVE_ACTIONS = ["remove the existing logs with pixir-log rm, then import again"];
const DIVERGED_ACTIONS = ["fork the imported Log before adding Events to it (pixir fork), then import again"];

function refused(ws: string, sessionId: string, reason: string, file: string, line: number | null): PixirError {
  return new PixirError("already_exists", "session log already exists", {
    session_id: sessionId,
    log_path: logPath(ws, sessionId).rel,
    reason,
    ...(line === null ? {} : { line }),
    file,
    next_actions: reason === "log_diverged" ? DIVERGED_ACTIONS : REMOVE_ACTIONS,
  });
}

interface PlannedRollout {
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

/** Maps the lines of one rollout into a family, one line at a time (§2, §3.3). */
class Mapper {
  current: PlannedLog;
  constructor(
    private readonly ws: string,
    private readonly family: Family,
    readonly state: RunningState,
  ) {
    this.current = familyLeaf(family);
  }

  /** §2.6: the ts of a line Event in the current Log. */
  private tsOf(line: RolloutLine, log: PlannedLog): string {
    return validTimestamp(line.record?.timestamp) ?? lastTs(log, EPOCH);
  }

  place(line: RolloutLine): void {
    const drafts = mapLine(this.family.threadId, line, this.state);
    const p = line.record?.payload;
    if (line.record?.type === "event_msg" && isJsonObject(p) && p.type === "thread_rolled_back") this.rollback(line, p.num_turns);
    const log = this.current;
    const ts = this.tsOf(line, log);
    for (const d of drafts) {
      const key = `codex:${this.family.threadId}:${line.n}${d.part === null ? "" : `#${d.part}`}`;
      if (d.type === "history_compaction") {
        const s = log.resolved.length;
        d.data.range = { from_seq: 0, to_seq: s - 1 };
        d.data.source_event_count = s;
      }
      pushEvent(log, { id: derivedUlid(key, ts), ts, type: d.type, data: d.data });
    }
  }

  /** §3.3: a rollback that drops turns continues the thread in a share_v1 child of the current Log. */
  private rollback(line: RolloutLine, k: unknown): void {
    const L = this.current;
    const cp = latestCheckpointOf(L.resolved);
    const T = cp === null ? null : checkpointToSeqOf(cp);
    const history = L.resolved.filter((e) => carriesItem(e.data) && (T === null || e.seq! > T));
    const boundaries: number[] = [];
    history.forEach((e, i) => {
      if (e.type === "user_message" && e.data.origin !== "context") boundaries.push(i);
    });
    const cut = dropTurnsCut(boundaries, k);
    if (cut === null) return;
    const F = cut === 0 ? 0 : history[cut - 1]!.seq!;
    const child = newLog(`${this.family.baseId}.rollback-${line.n}`, "rollback", L.forkRoot);
    const ts = this.tsOf(line, L);
    shareChild(this.ws, L, child, F, (data) => ({
      id: derivedUlid(`codex:${this.family.threadId}:rollback:${line.n}`, ts),
      ts,
      type: "session_fork",
      data: { ...data, codex: { synthetic: "rollback_fork", thread: this.family.threadId, line: line.n, num_turns: k } },
    }));
    this.family.logs.push(child);
    this.current = child;
  }
}

/** §3.2: the root header of line 1. */
function rootHeader(r: Rollout, lineage: JsonObject | null): Omit<PixirEvent, "seq" | "session_id"> {
  const line = r.lines[0]!;
  const m = r.meta;
  const pick = (k: string): unknown => (Object.hasOwn(m, k) ? m[k] : null);
  const codex: JsonObject = { thread: r.threadId, line: 1, record: line.record };
  if (JSON.stringify(line.record) !== line.text) codex.raw = line.text;
  codex.file = path.basename(r.display);
  const data: JsonObject = {
    event: "codex_session_meta",
    thread_id: m.id,
    cwd: pick("cwd"),
    cli_version: pick("cli_version"),
    originator: pick("originator"),
    source: pick("source"),
    model_provider: pick("model_provider"),
  };
  if (lineage !== null) data.lineage = lineage;
  data.codex = codex;
  const ts = validTimestamp(line.record!.timestamp) ?? EPOCH;
  return { id: derivedUlid(`codex:${r.threadId}:1`, ts), ts, type: "workflow_event", data };
}

/** §3.5 step 2: how many of the source's lines the fork copied. */
function copiedPrefix(r: Rollout, source: Array<string | null>): { k: number; timestamps: Array<[string, number]>; sha256: string } {
  const rests: string[] = [];
  const timestamps: Array<[string, number]> = [];
  let k = 0;
  for (; k < source.length && k + 1 < r.lines.length; k++) {
    const c = r.lines[k + 1]!;
    const s = source[k];
    const mine = restAfterTimestamp(c.text);
    const theirs = s === null || s === undefined ? null : restAfterTimestamp(s);
    if (mine === null || theirs === null || c.record === null || withTimestamp(mine.timestamp, theirs.rest) !== c.text) break;
    rests.push(`${mine.rest}\n`);
    const last = timestamps.at(-1);
    if (last !== undefined && last[0] === mine.timestamp) last[1]++;
    else timestamps.push([mine.timestamp, 1]);
  }
  return { k, timestamps, sha256: sha256Hex(rests.join("")) };
}

/** Plan one rollout: a new family, or what a grown file adds to its family (§3, §4.5). */
async function planRollout(ws: string, r: Rollout, families: Families, cyclic: boolean): Promise<PlannedRollout> {
  const t = r.threadId;
  const base = codexBaseId(t);
  const existing = await families.load(t);
  if (existing === "foreign") throw refused(ws, base, "not_a_codex_import", r.display, null);
  const provider = typeof r.meta.model_provider === "string" ? r.meta.model_provider : null;
  const state = new RunningState(provider);
  if (existing !== null) return planGrown(ws, r, existing, families, state);

  const p = forkedFromOf(r.meta);
  const parentThread = parentThreadOf(r.meta);
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
        const codex: JsonObject = { thread: t, line: 1, record: line.record };
        if (JSON.stringify(line.record) !== line.text) codex.raw = line.text;
        codex.file = path.basename(r.display);
        codex.fork = { source_thread: p, copied_lines: copied.k, copied_timestamps: copied.timestamps, copied_sha256: copied.sha256 };
        const ts = validTimestamp(line.record!.timestamp) ?? EPOCH;
        shareChild(ws, O, root, F, (data) => ({ id: derivedUlid(`codex:${t}:1`, ts), ts, type: "session_fork", data: { ...data, codex } }));
        forkReport = { source_thread_id: shownThreadId(p), shared: true, copied_lines: copied.k, fork_status: null };
      }
    }
    if (forkReport === null) forkReport = { source_thread_id: shownThreadId(p), shared: false, copied_lines: 0, fork_status: forkStatus };
  }
  if (family === null) {
    const lineage: JsonObject = {};
    if (p !== null) {
      lineage.forked_from_id = p;
      lineage.fork_status = forkStatus;
    }
    if (parentThread !== null) lineage.parent_thread_id = parentThread;
    const root = newLog(base, "root", base);
    pushEvent(root, rootHeader(r, Object.keys(lineage).length > 0 ? lineage : null));
    family = { threadId: t, baseId: base, logs: [root], fork: null, lineOne: r.lines[0]!.record!, fromDisk: false };
  }
  const mapper = new Mapper(ws, family, state);
  const copied = family.fork?.copied ?? 0;
  for (const line of r.lines.slice(1)) {
    if (line.n <= copied + 1) mapLine(t, line, state); // §3.5 step 5: copied lines feed the running state only
    else mapper.place(line);
  }
  families.set(family);
  return { rollout: r, family, forkReport };
}

/** §4.5: a family already in the Workspace. Compare what it holds with the file, then map the new lines. */
async function planGrown(ws: string, r: Rollout, family: Family, families: Families, state: RunningState): Promise<PlannedRollout> {
  await families.loadChain(r.threadId);
  const held = rolloutLines(families.get, r.threadId);
  const L = familyMaxLine(family);
  for (let j = 1; j <= L; j++) {
    const mine = r.lines[j - 1];
    const stored = held[j - 1];
    if (mine === undefined) throw refused(ws, family.baseId, "rollout_changed", r.display, j);
    const same = stored === null || stored === undefined ? mine.record === null : mine.text === stored;
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
            fork_status: (family.logs[0]!.stored[0]?.data.lineage as JsonObject | undefined)?.fork_status as string | null,
          };
  if (r.lines.length > L) {
    const leaf = familyLeaf(family);
    let lastLine = -1;
    leaf.stored.forEach((e, i) => {
      if (lineOf(e) !== null) lastLine = i;
    });
    if (leaf.stored.slice(lastLine + 1).some((e) => codexOf(e) === null)) throw refused(ws, leaf.sessionId, "log_diverged", r.display, null);
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

/** The first boundary item's text among a subagent's response_item lines (§3.6 `task`). */
function taskOfRollout(r: Rollout): string | null {
  for (const line of r.lines) {
    if (line.record?.type === "response_item" && isBoundaryItem(line.record.payload)) return excerptOf(contentText((line.record.payload as JsonObject).content));
  }
  return null;
}

function taskOfFamily(f: Family): string | null {
  let best: { line: number; text: unknown } | null = null;
  for (const log of f.logs) {
    for (const e of log.stored) {
      const c = codexOf(e);
      if (e.type !== "user_message" || e.data.origin === "context" || c === null || !isJsonObject(c.record) || c.record.type !== "response_item") continue;
      if (best === null || (c.line as number) < best.line) best = { line: c.line as number, text: e.data.text };
    }
  }
  return best === null ? null : excerptOf(termOfJs(best.text));
}

/** Subagent rollouts already in the Workspace whose parent is a rollout of the run (first-line discovery, tree.md §2.5). */
async function workspaceSubagents(ws: string, runThreads: Set<string>): Promise<Array<{ thread: string; parent: string }>> {
  let names: string[];
  try {
    names = readdirSync(sessionsDir(ws).abs).filter((n) => n.endsWith(".ndjson"));
  } catch {
    return [];
  }
  const found: Array<{ thread: string; parent: string }> = [];
  for (const name of names) {
    const id = name.slice(0, -".ndjson".length);
    if (!isValidSessionId(id)) continue;
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
      log.stored.some((e) => e.type === "subagent_event" && codexOf(e)?.synthetic === "subagent_link" && e.data.child_session_id === childId),
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
  links.sort((a, b) => Buffer.compare(Buffer.from(a.order), Buffer.from(b.order)) || Buffer.compare(Buffer.from(a.childThread), Buffer.from(b.childThread)));
  for (const l of links) pushEvent(l.parent, l.event);
  return links;
}

// ---------------------------------------------------------------------------------------------------
// §4.6–§4.7: the run, in two passes. The first reads and plans every rollout and link and finds every
// error, keeping in memory only the families that a later rollout or a link needs; the second plans each
// rollout that has something to write again, against the Workspace the earlier writes leave, and writes it.

/** An Event's data text, with its line spliced in rather than serialised again (line-map.ts). */
function dataTextOf(e: PixirEvent): string | undefined {
  const codexText = verbatimCodexText(e.data.codex);
  if (codexText === undefined) return undefined;
  const keys = Object.keys(e.data);
  if (keys[keys.length - 1] !== "codex") return undefined;
  const { codex: _codex, ...rest } = e.data;
  const head = JSON.stringify(rest);
  return head === "{}" ? `{"codex":${codexText}}` : `${head.slice(0, -1)},"codex":${codexText}}`;
}

/** The lines of a Log's Events from `from` on, made one at a time as the writer takes them. */
function* serializedLines(log: PlannedLog, from: number, file: string): Generator<string> {
  for (let i = from; i < log.stored.length; i++) {
    const e = log.stored[i]!;
    const text = serializeEvent(e, dataTextOf(e));
    // Strings were checked when their line was read (invalid_record), so this never fires after a write began.
    if (!isEncodable(text, e.data)) throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type: e.type, line: lineOf(e), file });
    yield text;
  }
}

function reportOf(p: PlannedRollout, dry: boolean): CodexImportReport {
  const r = p.rollout;
  const f = p.family;
  return {
    file: r.display,
    thread_id: shownThreadId(r.threadId),
    cli_version: typeof r.meta.cli_version === "string" ? r.meta.cli_version : null,
    line_count: r.lines.length,
    pending_tail: r.pendingTail,
    skipped_lines: r.lines.filter((l) => l.record === null).length,
    fork: p.forkReport,
    sessions: f.logs.map((log) => ({
      session_id: log.sessionId,
      role: log.role,
      parent_session_id: log.parentId,
      forked_to_seq: log.forkedToSeq,
      event_count: log.stored.length,
      new_event_count: log.stored.length - log.diskCount,
      status: statusOf(log, dry),
    })),
    leaf_session_id: familyLeaf(f).sessionId,
  };
}

function statusOf(log: PlannedLog, dry: boolean): CodexImportStatus {
  if (log.stored.length === log.diskCount) return "unchanged";
  if (log.diskCount === 0) return dry ? "would_create" : "created";
  return dry ? "would_append" : "appended";
}

interface RunItem {
  input: Input;
  threadId: string;
  meta: JsonObject;
}

export async function importCodexRollouts(ws: string, options: CodexImportOptions): Promise<CodexImportResult> {
  const inputs = listRolloutFiles(options.paths);
  const items: RunItem[] = [];
  const skippedFiles: CodexImportResult["skipped_files"] = [];
  const seenThreads = new Map<string, string>();
  for (const input of inputs) {
    const head = readRolloutHead(input, input.named);
    if (head.kind === "skipped") {
      skippedFiles.push({ file: input.display, reason: head.reason });
      continue;
    }
    const other = seenThreads.get(head.threadId);
    if (other !== undefined) throw new PixirError("invalid_codex_session", undefined, { reason: "duplicate_session_id", file: input.display, other_file: other });
    seenThreads.set(head.threadId, input.display);
    items.push({ input, threadId: head.threadId, meta: head.meta });
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
  const dry = Boolean(options.dryRun);

  const first = await runPass(ws, order, cyclic, keep, wsSubagents, options, null);
  const toWrite = new Set(first.reports.filter((r) => r.report.sessions.some((s) => s.status !== "unchanged")).map((r) => r.threadId));
  for (const t of first.deferred) toWrite.add(t);
  const anything = toWrite.size > 0 || first.links.length > 0;
  const reports = new Map(first.reports.map((r) => [r.threadId, r.report]));
  if (!dry && anything) {
    // Nothing is written while a Log the run writes is held by another writer (§4.6 step 2).
    for (const r of first.reports) for (const s of r.report.sessions) if (s.status !== "unchanged") assertLeaseFree(ws, s.session_id);
    for (const t of first.deferred) assertLeaseFree(ws, codexBaseId(t));
    for (const l of first.links) assertLeaseFree(ws, l.parent_session_id);
    const second = await runPass(ws, order, cyclic, keep, wsSubagents, options, toWrite);
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
    imports: items.map((i) => reports.get(i.threadId)!),
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

interface PassResult {
  reports: Array<{ threadId: string; report: CodexImportReport }>;
  /** Rollouts the pass only parsed (their reports come from the writing pass). */
  deferred: Set<string>;
  links: Array<{ parent_session_id: string; child_session_id: string }>;
}

/**
 * One pass over the run. Without `writing` it plans and reports; with it, it plans again each rollout
 * named there and writes its family, then the links.
 */
async function runPass(
  ws: string,
  order: RunItem[],
  cyclic: Set<string>,
  keep: Set<string>,
  wsSubagents: Array<{ thread: string; parent: string }>,
  options: CodexImportOptions,
  writing: Set<string> | null,
): Promise<PassResult> {
  const families = new Families(ws);
  const dry = Boolean(options.dryRun);
  const reports: PassResult["reports"] = [];
  const deferred = new Set<string>();
  const linkSources: LinkSource[] = [];
  let wroteFamilies = false;
  let i = 0;
  for (const item of order) {
    i++;
    if (writing === null) options.progress?.(i, order.length, item.input.display);
    const parentThread = parentThreadOf(item.meta);
    if (writing !== null && !writing.has(item.threadId)) {
      // Nothing to write for it, but it may still be linked from its parent in this run.
      if (parentThread !== null) {
        const f = await families.load(item.threadId);
        if (f !== null && f !== "foreign") linkSources.push({ threadId: item.threadId, baseId: f.baseId, lineOne: f.lineOne, parentThread, task: taskOfFamily(f) });
        if (!keep.has(item.threadId)) families.evict(item.threadId);
      }
      continue;
    }
    if (writing === null) {
      const fast = unchangedFromIndex(ws, item);
      if (fast !== null) {
        reports.push({ threadId: item.threadId, report: fast.report });
        if (parentThread !== null) linkSources.push({ threadId: item.threadId, baseId: codexBaseId(item.threadId), lineOne: fast.lineOne, parentThread, task: fast.task });
        continue;
      }
    }
    const read = readRollout(item.input, item.input.named, Boolean(options.lenient));
    if (read.kind !== "rollout") continue; // the file changed since its first line was read
    if (writing === null && !dry && deferrable(ws, item, keep)) {
      // A new family that nothing else reads cannot be refused once its lines parse: the writing pass
      // plans it (once) and reports it.
      deferred.add(item.threadId);
      if (parentThread !== null) linkSources.push({ threadId: item.threadId, baseId: codexBaseId(item.threadId), lineOne: read.rollout.lines[0]!.record!, parentThread, task: taskOfRollout(read.rollout) });
      continue;
    }
    const planned = await planRollout(ws, read.rollout, families, cyclic.has(item.threadId));
    const report = reportOf(planned, dry);
    const task = parentThread !== null ? taskOfRollout(read.rollout) : null;
    reports.push({ threadId: item.threadId, report });
    if (parentThread !== null) linkSources.push({ threadId: item.threadId, baseId: planned.family.baseId, lineOne: planned.family.lineOne, parentThread, task });
    if (writing !== null) {
      try {
        await writeFamily(ws, planned.family, read.rollout.display, options);
      } catch (err) {
        // §4.6: the Logs already written stay; the error says so rather than "nothing was changed".
        throw wroteFamilies ? afterEarlierWrites(err, ws) : err;
      }
      wroteFamilies = true;
      writeIndex(ws, read.rollout, report, task);
    }
    if (!keep.has(item.threadId)) families.evict(item.threadId);
  }
  for (const s of wsSubagents) {
    const f = await families.load(s.thread);
    if (f === null || f === "foreign") continue;
    linkSources.push({ threadId: s.thread, baseId: f.baseId, lineOne: f.lineOne, parentThread: s.parent, task: taskOfFamily(f) });
  }
  const links = await planLinks(ws, linkSources, families);
  if (writing !== null) {
    const parents = new Map<string, PlannedLog>();
    for (const l of links) parents.set(l.parent.sessionId, l.parent);
    for (const log of parents.values()) await writeLogs(ws, [{ log, lines: () => serializedLines(log, log.diskCount, "") }], options);
    for (const l of links) bumpIndex(ws, l.parentThread, l.parent.sessionId);
  }
  return { reports, deferred, links: links.map((l) => ({ parent_session_id: l.parent.sessionId, child_session_id: l.childId })) };
}

/** A rollout the first pass only parses: a new family, no fork, and no later step reads it. */
function deferrable(ws: string, item: RunItem, keep: Set<string>): boolean {
  return !keep.has(item.threadId) && forkedFromOf(item.meta) === null && inspectStatePath(logPath(ws, codexBaseId(item.threadId))) === "missing";
}

/** Write the new Events of one family: appends, then new Logs parent before child, each under its lease. */
async function writeFamily(ws: string, family: Family, file: string, options: CodexImportOptions): Promise<void> {
  const items = family.logs.filter((log) => log.stored.length > log.diskCount).map((log) => ({ log, lines: () => serializedLines(log, log.diskCount, file) }));
  if (items.length > 0) await writeLogs(ws, items, options);
  for (const log of family.logs) log.diskCount = log.stored.length;
}

/** §4.6 steps 2–4 for some Logs: leases in byte order of session id; appends and creations in the given order. */
async function writeLogs(ws: string, items: Array<{ log: PlannedLog; lines: () => Iterable<string> }>, options: CodexImportOptions): Promise<void> {
  const leases = new Map<string, WriterLease>();
  const ids = items.map((i) => i.log.sessionId).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  let ok = false;
  let written = 0;
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
        if (tail.last?.seq !== log.stored[log.diskCount - 1]!.seq) {
          throw new PixirError("log_write_failed", undefined, { reason: "log_changed_during_import", path: logPath(ws, log.sessionId).rel });
        }
        await appendJournaled(ws, log.sessionId, tail, async (emit) => {
          for (const line of lines()) emit(line);
        }, { lease, signal: options.signal });
      }
      written++;
    }
    ok = true;
  } catch (err) {
    // §4.6: a Log already written stays (a rerun completes the family): the error must not say "nothing was changed".
    throw written > 0 ? afterEarlierWrites(err, ws) : err;
  } finally {
    // Last taken, first released: the first lease made the state directories the others sit in.
    for (const lease of [...leases.values()].reverse()) lease.release(!ok);
  }
}

// ---------------------------------------------------------------------------------------------------
// The import index: `.pixir/codex-imports/<root id>.json` remembers the size of each imported file and a
// digest of its last bytes, so importing an unchanged tree again reads neither the rollouts nor the Logs.

const INDEX_TAIL_BYTES = 64 * 1024;

interface IndexEntry {
  version: 1;
  thread_id: string;
  file_size: number;
  file_mtime_ms: number;
  tail_sha256: string;
  line_one: JsonObject;
  task: string | null;
  report: CodexImportReport;
}

const indexPath = (ws: string, base: string): string => path.join(ws, ".pixir", "codex-imports", `${base}.json`);

function tailDigest(file: string, size: number): string | null {
  let fd: number | null = null;
  try {
    fd = openSync(file, "r");
    const n = Math.min(size, INDEX_TAIL_BYTES);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    return sha256Hex(buf);
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

function readIndex(ws: string, base: string): IndexEntry | null {
  try {
    const v = JSON.parse(readFileSync(indexPath(ws, base), "utf8")) as IndexEntry;
    return v.version === 1 ? v : null;
  } catch {
    return null;
  }
}

/** An unchanged rollout, known from the index: same size, same last bytes, its root Log present. */
function unchangedFromIndex(ws: string, item: RunItem): { report: CodexImportReport; lineOne: JsonObject; task: string | null } | null {
  const base = codexBaseId(item.threadId);
  const entry = readIndex(ws, base);
  if (entry === null || entry.thread_id !== item.threadId || inspectStatePath(logPath(ws, base)) === "missing") return null;
  let size: number;
  let mtime: number;
  try {
    const st = statSync(item.input.path);
    size = st.size;
    mtime = st.mtimeMs;
  } catch {
    return null;
  }
  if (size !== entry.file_size || mtime !== entry.file_mtime_ms || tailDigest(item.input.path, size) !== entry.tail_sha256) return null;
  const report: CodexImportReport = {
    ...entry.report,
    file: item.input.display,
    sessions: entry.report.sessions.map((s) => ({ ...s, new_event_count: 0, status: "unchanged" })),
  };
  return { report, lineOne: entry.line_one, task: entry.task };
}

/**
 * The index is a cache of what was imported (the Logs are the record): a write of it that fails (a full
 * disk) leaves no temp file and fails nothing; the next import reads the rollout again.
 */
function writeIndexEntry(ws: string, base: string, entry: IndexEntry): void {
  const target = indexPath(ws, base);
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(tmp, JSON.stringify(entry));
    renameSync(tmp, target);
  } catch {
    rmSync(tmp, { force: true });
  }
}

function writeIndex(ws: string, r: Rollout, report: CodexImportReport, task: string | null): void {
  const digest = tailDigest(r.path, r.size);
  let mtime: number;
  try {
    mtime = statSync(r.path).mtimeMs;
  } catch {
    return;
  }
  if (digest === null) return;
  writeIndexEntry(ws, codexBaseId(r.threadId), { version: 1, thread_id: r.threadId, file_size: r.size, file_mtime_ms: mtime, tail_sha256: digest, line_one: r.lines[0]!.record!, task, report });
}

/** A link appended to a family's leaf: its indexed event count grows by one. */
function bumpIndex(ws: string, thread: string, sessionId: string): void {
  const base = codexBaseId(thread);
  const entry = readIndex(ws, base);
  if (entry === null) return;
  for (const s of entry.report.sessions) if (s.session_id === sessionId) s.event_count++;
  writeIndexEntry(ws, base, entry);
}
