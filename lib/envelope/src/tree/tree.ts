// tree.md: the Session Tree, a read-only projection of lineage. Subagent children come from a node's
// `subagent_event`s, fork children from other Logs' first lines. Counts come from one fast byte scan
// of each Log (tree-scan.ts; a share_v1 child adds its parent's prefix, §2.7), and a broken Log only
// marks its own node. Building is synchronous; in forest mode worker threads scan Logs while it runs.
import { TREE_FORMATS, type TreeFormat } from "../event/vocabulary.js";
import path from "node:path";
import { CANONICAL_TYPES, isSeq, type JsonObject } from "../event/envelope.js";
import { asPixirError, PixirError, prefixMismatch, type ErrorKind } from "../event/errors.js";
import { MAX_FORK_DEPTH, notFoundError } from "../store/loader.js";
import { corruptLineError } from "../store/log-read.js";
import { listLogs, type LogListing } from "../store/ls.js";
import { inspectStatePath, isPresent, logPath } from "../store/paths.js";
import { assertSessionId, compareBytes, isValidSessionId } from "../event/session-id.js";
import { scanThreadCount } from "../store/threads.js";
import { batched } from "../lines/batched.js";
import {
  isBlank,
  readFirstLineOf,
  ScanPool,
  scanOwnLog,
  type FirstLine,
  type KeyedData,
  type ScanStream,
  type OwnScan,
  type ReplayItem,
} from "./tree-scan.js";

export const DEFAULT_TREE_MAX_DEPTH = 32;
export { TREE_FORMATS, type TreeFormat };

/** tree.md §2.1–§2.3: one node of the JSON contract. */
export interface TreeNode {
  session_id: string;
  workspace: string;
  log_path: string;
  log_exists: boolean;
  event_count: number;
  event_counts: Record<string, number>;
  first_event_ts: string | null;
  last_event_ts: string | null;
  cycle?: true;
  truncated?: true;
  truncated_reason?: "cycle" | "max_depth";
  parent_missing?: true;
  missing_parent_session_id?: string | null;
  parent_unreadable?: true;
  unreadable_parent_session_id?: string;
  cycle_root?: true;
  error?: { kind: ErrorKind; reason: unknown };
  subagents: SubagentRecord[];
  forks: ForkRecord[];
}

/** tree.md §2.4: one subagent run, folded from its `subagent_event`s. */
export interface SubagentRecord {
  subagent_id: string;
  [merged: string]: unknown;
  events: unknown[];
  first_seq: number | null;
  last_seq: number | null;
  session_id: unknown;
  session: TreeNode | null;
}

export type BranchSummaryPresence = { present: true; strategy: unknown; limitations: unknown } | { present: false };

/** tree.md §2.5: one fork child, found by its first-line `session_fork`. */
export interface ForkRecord {
  child_session_id: string;
  parent_session_id: string;
  fork_root_session_id: string | null;
  forked_to_seq: unknown;
  replay_event_count: unknown;
  from_seq: unknown;
  strategy: unknown;
  workspace: string;
  branch_summary: BranchSummaryPresence;
  session: TreeNode;
}

export interface TreeOptions {
  /** tree.md §2.6: nodes deeper than this (the root has depth 0) are truncated. */
  maxDepth?: number;
  /** Forest only: the environment that chooses how many threads scan Logs (scanThreadCount). */
  env?: NodeJS.ProcessEnv;
  /** Forest only: told how the Logs were read, when worker threads helped (for PIXIR_DEBUG). */
  onScanned?: (stats: ScanStats) => void;
}

export interface ScanStats {
  logs: number;
  /** Threads that started, this one included. */
  threads: number;
  /** First lines and scans delivered by workers (each Log counts twice: first line, then scan). */
  byWorkers: number;
}

const SUBAGENT_MERGED_KEYS = [
  "child_session_id",
  "agent",
  "status",
  "task",
  "depth",
  "max_depth",
  "workspace",
  "index",
  "parent_log_path",
  "child_log_path",
  "summary",
  "event",
  "timeout_ms",
  "deadline_at",
  "elapsed_ms",
  "reason",
  "next_actions",
] as const;

/** Sort key for "absent" seqs in §2.4 and §2.5. */
const LAST_KEY = 9999999999;



// ---------------------------------------------------------------------------------------------
// Discovery (tree.md §2.5): first lines only, one index per Workspace.

interface WorkspaceIndex {
  ws: string;
  ids: string[];
  idSet: Set<string>;
  first: Map<string, FirstLine>;
  /** Fork children by parent id, sorted by (forked_to_seq ?? LAST_KEY, child id). */
  children: Map<string, string[]>;
  /** Logs that share_v1 children inherit from: their scans keep replay items. */
  shareParents: Set<string>;
  /** Each Log's size when listed. */
  sizes: Map<string, number>;
}

function buildIndex(ws: string, listing: LogListing = listLogs(ws)): WorkspaceIndex {
  return indexFromFirstLines(ws, listing, listing.sessionIds.map((id) => readFirstLineOf(ws, id)));
}

/** The index of a listed Workspace from the first line of each Log (`firstLines[i]` of `sessionIds[i]`). */
function indexFromFirstLines(ws: string, listing: LogListing, firstLines: FirstLine[]): WorkspaceIndex {
  const { sessionIds, sizes } = listing;
  const first = new Map<string, FirstLine>();
  sessionIds.forEach((id, i) => first.set(id, firstLines[i]!));
  const children = new Map<string, string[]>();
  const shareParents = new Set<string>();
  for (const id of sessionIds) {
    const f = first.get(id)!;
    if (f.kind !== "fork" || f.parent === null || f.parent === id) continue;
    let list = children.get(f.parent);
    if (list === undefined) children.set(f.parent, (list = []));
    list.push(id);
    if (f.data.strategy === "share_v1") shareParents.add(f.parent);
  }
  const toSeqKey = (id: string) => {
    const v = (first.get(id) as Extract<FirstLine, { kind: "fork" }>).data.forked_to_seq;
    return typeof v === "number" ? v : LAST_KEY;
  };
  for (const list of children.values()) list.sort((a, b) => toSeqKey(a) - toSeqKey(b) || compareBytes(a, b));
  return { ws, ids: sessionIds, idSet: new Set(sessionIds), first, children, shareParents, sizes };
}

// ---------------------------------------------------------------------------------------------
// Resolution (fork.md §6 by the fast scan, tree.md §2.7). A share child's History is its header,
// the replay-type Events of its parent's resolved History with seq <= forked_to_seq (renumbered
// 1..N), then its own Events. The checks and their order are the loader's; the prefix is checked
// by count against replay_event_count, not by digest (`pixir-log check` and the loader do that).

/** The replay-type Events of a resolved History, visited in History order without building it. */
interface Replayable {
  /** Visit those with seq <= cut, at most `limit` of them; returns how many were visited. */
  visit(cut: number, limit: number, fn?: (item: ReplayItem, seq: number) => void): number;
}

interface ShareLink {
  parent: Replayable;
  n: number;
  cut: number;
}

/** A Log's replayable Events: those of its share parent's prefix (`link`, a share child), then its own. */
function replayableOf(link: ShareLink | null, own: ReplayItem[]): Replayable {
  return {
    visit(cut, limit, fn) {
      let n = 0;
      const take = link === null ? 0 : Math.min(link.n, cut, limit); // the prefix holds seqs 1..N
      if (link !== null && take > 0) {
        link.parent.visit(link.cut, take, (item) => {
          n++;
          fn?.(item, n);
        });
      }
      for (const item of own) {
        if (item.seq > cut || n >= limit) break;
        n++;
        fn?.(item, item.seq);
      }
      return n;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// A node's summary: counts of the resolved History and its subagent Events.

interface NodeSummary {
  own: OwnScan;
  eventCount: number;
  typeCounts: number[];
  firstTs: string | null;
  lastTs: string | null;
  subagentEvents: KeyedData[];
  error: PixirError | null;
}

function countsObject(typeCounts: number[]): Record<string, number> {
  const out: Record<string, number> = {};
  const named = CANONICAL_TYPES.map((t, i) => [t, typeCounts[i]!] as const).filter(([, n]) => n > 0);
  named.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [t, n] of named) out[t] = n;
  return out;
}

function historyOrder(a: KeyedData, b: KeyedData): number {
  return a.key - b.key || a.order - b.order || 0;
}

// ---------------------------------------------------------------------------------------------
// Building nodes.

type NodeFlags = Pick<TreeNode, "parent_missing" | "missing_parent_session_id" | "parent_unreadable" | "unreadable_parent_session_id" | "cycle_root">;

const nodeKey = (ws: string, id: string) => `${ws}\0${id}`;

class TreeBuilder {
  private readonly scans = new Map<string, OwnScan>();
  private readonly summaries = new Map<string, NodeSummary>();
  private readonly indexes = new Map<string, WorkspaceIndex | PixirError>();
  private readonly replayables = new Map<string, Replayable>();
  private readonly countsChecked = new Set<string>();
  /** How each (workspace, id) was shown: forest mode places every Log from this. */
  readonly shown = new Map<string, "node" | "error" | "truncated" | "cycle">();

  constructor(private readonly maxDepth: number) {}

  index(ws: string): WorkspaceIndex {
    let index = this.indexes.get(ws);
    if (index === undefined) {
      try {
        index = buildIndex(ws);
      } catch (err) {
        index = asPixirError(err);
      }
      this.indexes.set(ws, index);
    }
    if (index instanceof PixirError) throw index;
    return index;
  }

  /** Scans that worker threads stream in (forest mode), for the Logs of `streamWs`. */
  private stream: ScanStream | null = null;
  private streamWs = "";

  /**
   * Forest mode shows every Log, so every first line is read and every Log scanned. When that pays
   * (scanThreadCount), worker threads read the first lines with this thread, then scan Logs from the
   * far end of the forest while this thread builds from its start (ScanStream). Returns the pool to
   * close once the forest is built, or null when this thread works alone.
   */
  async prepareForest(ws: string, env: NodeJS.ProcessEnv): Promise<ScanPool | null> {
    const listing = listLogs(ws);
    let total = 0;
    for (const size of listing.sizes.values()) total += size;
    const threads = scanThreadCount(env, total);
    if (threads <= 1) {
      this.indexes.set(ws, buildIndex(ws, listing));
      return null;
    }
    const pool = new ScanPool(threads);
    try {
      const index = indexFromFirstLines(ws, listing, await pool.firstLines(ws, listing.sessionIds));
      this.indexes.set(ws, index);
      this.stream = pool.stream(
        ws,
        forestOrder(index).map((id) => ({ id, keepReplay: index.shareParents.has(id), listed: true })),
      );
      this.streamWs = ws;
      return pool;
    } catch (err) {
      pool.close();
      throw err;
    }
  }

  /** The physical scan of a Log; share parents (known from discovery) keep their replay items. */
  ownScan(ws: string, id: string, keepReplay = false): OwnScan {
    const key = nodeKey(ws, id);
    let cached = this.scans.get(key);
    if (cached === undefined && this.stream !== null && ws === this.streamWs) {
      cached = this.stream.take(id);
      if (cached !== undefined) this.scans.set(key, cached);
    }
    if (cached !== undefined && (cached.replayItems !== null || !keepReplay)) return cached;
    const found = this.indexes.get(ws);
    const index = found instanceof PixirError || found === undefined ? null : found;
    const scan = scanOwnLog(ws, id, keepReplay || (index?.shareParents.has(id) ?? false), index?.idSet.has(id) ?? false);
    this.scans.set(key, scan);
    return scan;
  }

  /** fork.md §6's checks, in its order, for a share child at `depth` below the Session asked for. */
  private link(ws: string, id: string, own: OwnScan, depth: number, lineage: string[]): ShareLink {
    const { event: header, lineNo } = own.shareHeader!;
    const d = header.data;
    const parentId = d.parent_session_id;
    assertSessionId(parentId, "parent_session_id");
    const walked = [...lineage, id];
    if (parentId === id || lineage.includes(parentId)) {
      throw new PixirError("fork_cycle", undefined, { session_id: walked[0], lineage: [...walked, parentId] });
    }
    if (depth + 1 > MAX_FORK_DEPTH) throw new PixirError("fork_depth_exceeded", undefined, { session_id: walked[0], max_depth: MAX_FORK_DEPTH });
    const n = d.replay_event_count;
    const cut = d.forked_to_seq;
    const rel = logPath(ws, id).rel;
    if (!isSeq(n) || !isSeq(cut)) throw corruptLineError({ reason: "unexpected_shape", extra: { field: "session_fork.data" } }, lineNo, rel);
    if (own.conflict !== null) throw corruptLineError({ reason: "seq_conflicts_with_shared_prefix" }, own.conflict.lineNo, rel);
    const parentScan = this.ownScan(ws, parentId, true);
    if (!parentScan.exists && parentScan.problem === null) {
      throw new PixirError("fork_parent_missing", undefined, { session_id: id, parent_session_id: parentId, depth: depth + 1 });
    }
    const parent = this.replayable(ws, parentId, parentScan, depth + 1, walked);
    const key = nodeKey(ws, id);
    if (!this.countsChecked.has(key)) {
      const count = parent.visit(cut, Infinity);
      if (count !== n) {
        throw prefixMismatch(id, parentId, { digest: d.prefix_digest, count: n }, { digest: null, count });
      }
      this.countsChecked.add(key);
    }
    return { parent, n, cut };
  }

  private replayable(ws: string, id: string, scan: OwnScan, depth: number, lineage: string[]): Replayable {
    if (scan.problem !== null) throw scan.problem;
    const items = scan.replayItems ?? this.ownScan(ws, id, true).replayItems!;
    // The lineage checks depend on who asks; they run every time, the object is built once.
    const link = scan.shareHeader === null ? null : this.link(ws, id, scan, depth, lineage);
    const key = nodeKey(ws, id);
    let replayable = this.replayables.get(key);
    if (replayable === undefined) this.replayables.set(key, (replayable = replayableOf(link, items)));
    return replayable;
  }

  summary(ws: string, id: string): NodeSummary {
    const key = nodeKey(ws, id);
    const cached = this.summaries.get(key);
    if (cached !== undefined) return cached;
    const own = this.ownScan(ws, id);
    const summary: NodeSummary = {
      own,
      eventCount: own.eventCount,
      typeCounts: own.typeCounts,
      firstTs: own.firstTs,
      lastTs: own.lastTs,
      subagentEvents: [...own.subagentEvents].sort(historyOrder),
      error: own.problem,
    };
    this.summaries.set(key, summary);
    if (own.problem !== null || own.shareHeader === null) return summary;
    try {
      const link = this.link(ws, id, own, 0, []);
      const typeCounts = [...own.typeCounts];
      const inherited: KeyedData[] = [];
      let prefixLastTs: string | null = null;
      link.parent.visit(link.cut, link.n, (item, k) => {
        typeCounts[item.type]!++;
        prefixLastTs = item.ts;
        if (item.data !== null && !isBlank(item.data.subagent_id)) inherited.push({ key: k, order: -1, seq: k, data: item.data });
      });
      summary.eventCount = own.eventCount + link.n;
      summary.typeCounts = typeCounts;
      // History: the header (seq 0), the prefix renumbered 1..N, then the own Events (seq > N, or null).
      if (link.n > 0 && !(own.lastKey > 0)) summary.lastTs = prefixLastTs;
      summary.subagentEvents = [...inherited, ...summary.subagentEvents];
    } catch (err) {
      summary.error = asPixirError(err);
    }
    return summary;
  }

  hasError(ws: string, id: string): boolean {
    return this.shown.get(nodeKey(ws, id)) === "error";
  }

  private mark(ws: string, id: string, how: "node" | "error" | "truncated" | "cycle"): void {
    const key = nodeKey(ws, id);
    const was = this.shown.get(key);
    if (was === undefined || was === "truncated" || was === "cycle") this.shown.set(key, how);
  }

  /**
   * The node for `id` in `ws`. `strictRoot` is the single-mode root: its problems are the command's
   * errors; any other node shows them (§2.3).
   */
  node(ws: string, id: string, depth: number, ancestors: Set<string>, flags: NodeFlags, strictRoot = false): TreeNode {
    const p = logPath(ws, id);
    const node: TreeNode = {
      session_id: id,
      workspace: ws,
      log_path: p.abs,
      log_exists: false,
      event_count: 0,
      event_counts: {},
      first_event_ts: null,
      last_event_ts: null,
      ...flags,
      subagents: [],
      forks: [],
    };
    const key = nodeKey(ws, id);
    if (ancestors.has(key)) {
      node.log_exists = isPresent(p);
      this.mark(ws, id, "cycle");
      return withMarker(node, { cycle: true, truncated_reason: "cycle" });
    }
    if (depth > this.maxDepth) {
      node.log_exists = isPresent(p);
      this.mark(ws, id, "truncated");
      return withMarker(node, { truncated: true, truncated_reason: "max_depth" });
    }
    if (strictRoot && inspectStatePath(p) === "missing") throw notFoundError(id, ws, p.rel, "pixir tree");
    const failed = (err: PixirError): TreeNode => {
      if (strictRoot) throw err;
      this.mark(ws, id, "error");
      return withMarker(node, { error: { kind: err.kind, reason: err.details.reason ?? null } });
    };
    // Discovery first: it tells the scan whether share children will read this Log's prefix.
    let index: WorkspaceIndex;
    try {
      index = this.index(ws);
    } catch (err) {
      node.log_exists = isPresent(p);
      return failed(asPixirError(err));
    }
    const summary = this.summary(ws, id);
    node.log_exists = summary.own.exists;
    if (!node.log_exists && summary.error === null) {
      this.mark(ws, id, "node");
      return node;
    }
    node.event_count = summary.eventCount;
    node.event_counts = countsObject(summary.typeCounts);
    node.first_event_ts = summary.firstTs;
    node.last_event_ts = summary.lastTs;
    if (summary.error !== null) return failed(summary.error);
    const groups = foldSubagents(summary.subagentEvents);
    this.mark(ws, id, "node");
    ancestors.add(key);
    try {
      for (const record of groups) {
        const childId = record.child_session_id;
        const childWs = record.workspace;
        if (!isBlank(childId) && !isBlank(childWs)) {
          record.session = this.node(path.resolve(childWs as string), childId as string, depth + 1, ancestors, {});
        }
        node.subagents.push(record);
      }
      for (const childId of index.children.get(id) ?? []) {
        const data = (index.first.get(childId) as Extract<FirstLine, { kind: "fork" }>).data;
        const session = this.node(ws, childId, depth + 1, ancestors, {});
        node.forks.push(forkRecord(ws, id, childId, data, this.ownScan(ws, childId), session));
      }
    } finally {
      ancestors.delete(key);
    }
    return node;
  }
}


/** Put marker keys before `subagents` and `forks`, so every node reads in the same key order. */
function withMarker(node: TreeNode, marker: Partial<TreeNode>): TreeNode {
  const { subagents, forks, ...rest } = node;
  return { ...rest, ...marker, subagents, forks };
}

/**
 * tree.md §2.4: group by subagent_id, fold in History order. A child_session_id that fails the
 * grammar fails the whole projection, without echoing it.
 */
function foldSubagents(events: KeyedData[]): SubagentRecord[] {
  const groups = new Map<string, { record: SubagentRecord; merged: JsonObject }>();
  for (const item of events) {
    const d = item.data;
    const child = d.child_session_id;
    if (child !== undefined && child !== null && !(typeof child === "string" && child.trim() === "")) {
      assertSessionId(child, "child_session_id");
    }
    const sid = d.subagent_id as string;
    let group = groups.get(sid);
    if (group === undefined) {
      group = { record: { subagent_id: sid, events: [], first_seq: item.seq, last_seq: item.seq, session_id: null, session: null }, merged: {} };
      groups.set(sid, group);
    }
    for (const k of SUBAGENT_MERGED_KEYS) if (Object.hasOwn(d, k)) group.merged[k] = d[k];
    if (d.event !== undefined && d.event !== null) group.record.events.push(d.event);
    group.record.last_seq = item.seq;
  }
  const records: SubagentRecord[] = [];
  for (const { record, merged } of groups.values()) {
    records.push({
      subagent_id: record.subagent_id,
      ...merged,
      events: record.events,
      first_seq: record.first_seq,
      last_seq: record.last_seq,
      session_id: merged.child_session_id ?? null,
      session: null,
    });
  }
  records.sort((a, b) => (a.first_seq ?? LAST_KEY) - (b.first_seq ?? LAST_KEY) || compareBytes(a.subagent_id, b.subagent_id));
  return records;
}

function forkRecord(ws: string, parentId: string, childId: string, data: JsonObject, childScan: OwnScan, session: TreeNode): ForkRecord {
  const root = data.fork_root_session_id;
  const bs = childScan.branchSummary;
  return {
    child_session_id: childId,
    parent_session_id: parentId,
    // An id that fails the grammar is never echoed (envelope-and-log.md §5).
    fork_root_session_id: isValidSessionId(root) ? root : null,
    forked_to_seq: data.forked_to_seq ?? null,
    replay_event_count: data.replay_event_count ?? null,
    from_seq: data.from_seq ?? null,
    strategy: data.strategy ?? null,
    workspace: ws,
    branch_summary: bs === null ? { present: false } : { present: true, strategy: bs.data.strategy ?? null, limitations: bs.data.limitations ?? null },
    session,
  };
}

// ---------------------------------------------------------------------------------------------
// Entry points.

function maxDepthOf(options: TreeOptions): number {
  return options.maxDepth ?? DEFAULT_TREE_MAX_DEPTH;
}

/** tree.md §1: the tree below one root. */
export function buildSessionTree(ws: string, id: string, options: TreeOptions = {}): TreeNode {
  assertSessionId(id);
  const builder = new TreeBuilder(maxDepthOf(options));
  return builder.node(ws, id, 0, new Set(), {}, true);
}

/**
 * Trees of several Logs of one Workspace (a site of every family) that share one index of the Workspace
 * and one scan of each Log, where buildSessionTree per Log would read the Workspace again each time.
 */
export function sessionTreeMaker(options: TreeOptions = {}): (ws: string, id: string) => TreeNode {
  const builder = new TreeBuilder(maxDepthOf(options));
  return (ws, id) => {
    assertSessionId(id);
    return builder.node(ws, id, 0, new Set(), {}, true);
  };
}

/**
 * tree.md §3: every root Log of the Workspace, sorted by id. A Log hidden below a node that could
 * not be read (which is not recursed into) becomes a root of its own, flagged `parent_unreadable`,
 * so that no Log of the Workspace is missing from the forest; Logs left over after that sit on a
 * fork cycle and are flagged `cycle_root`.
 */
export async function buildSessionForest(ws: string, options: TreeOptions = {}): Promise<TreeNode[]> {
  const builder = new TreeBuilder(maxDepthOf(options));
  const pool = await builder.prepareForest(ws, options.env ?? {});
  try {
    const roots = forestRoots(builder, ws);
    if (pool !== null) options.onScanned?.({ logs: builder.index(ws).ids.length, threads: pool.threads, byWorkers: pool.deliveredByWorkers });
    return roots;
  } finally {
    pool?.close();
  }
}

/**
 * The order in which forestRoots asks for Logs: each root (in id order) and the fork children below it,
 * depth first, then any Log left over (on a cycle). Workers scan from the end of it.
 */
function forestOrder(index: WorkspaceIndex): string[] {
  const order: string[] = [];
  const seen = new Set<string>();
  const visit = (root: string) => {
    const stack = [root];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      order.push(id);
      const children = index.children.get(id) ?? [];
      for (let k = children.length - 1; k >= 0; k--) stack.push(children[k]!);
    }
  };
  for (const id of index.ids) {
    const f = index.first.get(id)!;
    if (f.kind !== "fork" || f.parent === null || f.parent === id || !index.idSet.has(f.parent)) visit(id);
  }
  for (const id of index.ids) visit(id);
  return order;
}

function forestRoots(builder: TreeBuilder, ws: string): TreeNode[] {
  const index = builder.index(ws);
  const roots: TreeNode[] = [];
  const addRoot = (id: string, flags: NodeFlags) => {
    const node = builder.node(ws, id, 0, new Set(), flags);
    const f = index.first.get(id);
    if (f?.kind === "unreadable" && node.error === undefined) {
      roots.push(withMarker(node, { error: { kind: f.error.kind, reason: f.error.details.reason ?? null } }));
    } else roots.push(node);
  };

  for (const id of index.ids) {
    const f = index.first.get(id)!;
    if (f.kind === "plain" || f.kind === "unreadable") addRoot(id, {});
    else if (f.parent === null || (f.parent !== id && !index.idSet.has(f.parent))) {
      addRoot(id, { parent_missing: true, missing_parent_session_id: f.parent });
    }
  }

  const placed = (id: string) => builder.shown.has(nodeKey(ws, id));
  // Logs below a max_depth cut are shown by their ancestors' truncated node: they are placed.
  const covered = new Set<string>();
  const cover = (id: string) => {
    const stack = [id];
    while (stack.length > 0) {
      const at = stack.pop()!;
      for (const child of index.children.get(at) ?? []) {
        if (covered.has(child)) continue;
        covered.add(child);
        stack.push(child);
      }
    }
  };
  const unplaced = () => {
    for (const [key, how] of builder.shown) if (how === "truncated" && key.startsWith(`${ws}\0`)) cover(key.slice(ws.length + 1));
    return index.ids.filter((id) => !placed(id) && !covered.has(id));
  };

  const parentOf = (id: string): string | null => {
    const f = index.first.get(id);
    return f?.kind === "fork" && f.parent !== null && index.idSet.has(f.parent) ? f.parent : null;
  };
  /** The lineage of `id`, walked by first lines, runs into a loop. */
  const loops = (id: string): boolean => {
    const seen = new Set<string>();
    for (let at: string | null = id; at !== null; at = parentOf(at)) {
      if (seen.has(at)) return true;
      seen.add(at);
    }
    return false;
  };

  for (let left = unplaced(); left.length > 0; left = unplaced()) {
    const belowError = left.filter((id) => {
      const parent = parentOf(id);
      return parent !== null && builder.hasError(ws, parent) && !loops(id);
    });
    if (belowError.length > 0) {
      for (const id of belowError) {
        if (placed(id)) continue;
        const parent = (index.first.get(id) as Extract<FirstLine, { kind: "fork" }>).parent!;
        addRoot(id, { parent_unreadable: true, unreadable_parent_session_id: parent });
      }
      continue;
    }
    addRoot(left.find(loops) ?? left[0]!, { cycle_root: true });
  }

  roots.sort((a, b) => compareBytes(a.session_id, b.session_id));
  return roots;
}

// ---------------------------------------------------------------------------------------------
// Text rendering (tree.md §4).

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const SHORT_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };
/**
 * A string as one piece of a text line: control characters (a newline or an escape sequence in a task,
 * a subagent id or a Workspace path) are shown as JSON escapes, so they can neither break the tree's
 * lines nor drive the terminal.
 */
function oneLine(s: string): string {
  return s.replace(CONTROL, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function plain(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "string") return oneLine(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}

const present = (v: unknown) => v !== null && v !== undefined && v !== "";

const SUBAGENT_DETAILS: Array<[string, string]> = [
  ["index", "index"],
  ["child_session_id", "child_session"],
  ["child_log_path", "child_log"],
  ["task", "task"],
  ["summary", "summary"],
  ["reason", "reason"],
  ["elapsed_ms", "elapsed_ms"],
  ["timeout_ms", "timeout_ms"],
  ["deadline_at", "deadline_at"],
];

function nodeSuffix(node: TreeNode): string {
  let s = "";
  if (node.cycle) s += " [cycle]";
  if (node.truncated) s += " [max_depth]";
  if (node.parent_missing) s += ` [parent missing: ${plain(node.missing_parent_session_id)}]`;
  if (node.parent_unreadable) s += ` [parent unreadable: ${plain(node.unreadable_parent_session_id)}]`;
  if (node.cycle_root) s += " [cycle root]";
  if (node.error) s += ` [error: ${node.error.kind}]`;
  return s;
}

function nodeLines(node: TreeNode, root: boolean, out: string[], indent: string): void {
  const count = node.log_exists ? `(events=${node.event_count})` : "(log=missing)";
  out.push(`${indent}${root ? "session" : "child session"} ${node.session_id} ${count}${nodeSuffix(node)}`);
  out.push(`${indent}  workspace: ${oneLine(node.workspace)}`);
  const total = node.subagents.length + node.forks.length;
  let i = 0;
  const inner = `${indent}    `;
  for (const sub of node.subagents) {
    const branch = ++i === total ? "`-- " : "|-- ";
    const agent = present(sub.agent) ? ` (${plain(sub.agent)})` : "";
    const status = present(sub.status) ? ` status=${plain(sub.status)}` : "";
    out.push(`${indent}${branch}subagent ${plain(sub.subagent_id)}${agent}${status}`);
    for (const [key, label] of SUBAGENT_DETAILS) if (present(sub[key])) out.push(`${inner}${label}: ${plain(sub[key])}`);
    if (sub.events.length > 0) out.push(`${inner}events: ${sub.events.map(plain).join(" -> ")}`);
    if (sub.session !== null) nodeLines(sub.session, false, out, inner);
  }
  for (const fork of node.forks) {
    const branch = ++i === total ? "`-- " : "|-- ";
    out.push(`${indent}${branch}fork ${fork.child_session_id} (forked_to_seq=${plain(fork.forked_to_seq)})`);
    out.push(`${inner}fork_root: ${plain(fork.fork_root_session_id)}`);
    out.push(`${inner}replay_events: ${plain(fork.replay_event_count)}`);
    out.push(`${inner}strategy: ${plain(fork.strategy)}`);
    out.push(`${inner}branch_summary: ${fork.branch_summary.present ? "present" : "none"}`);
    nodeLines(fork.session, false, out, inner);
  }
}

/** The text picture of one tree or of a forest (roots separated by an empty line). */
export function renderTreeText(roots: TreeNode[]): string {
  if (roots.length === 0) return "";
  const blocks = roots.map((root) => {
    const lines: string[] = [];
    nodeLines(root, true, lines, "");
    return lines.join("\n");
  });
  return `${blocks.join("\n\n")}\n`;
}

// ---------------------------------------------------------------------------------------------
// Graphs (tree.md §5): one node per distinct (session_id, workspace), in depth-first text order.

interface GraphNode {
  id: string;
  parts: string[];
  missing: boolean;
}

interface GraphEdge {
  from: string;
  to: string;
  label: string;
  subagent: boolean;
  cycle: boolean;
}

function graphOf(roots: TreeNode[]): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const nodes: GraphNode[] = [];
  const edges: GraphEdge[] = [];
  const seenEdges = new Map<string, GraphEdge>();
  /** Each Session's node, and whether it was drawn from a truncated appearance (a full one met later redraws it). */
  const drawn = new Map<string, { node: GraphNode; truncated: boolean }>();
  const visit = (node: TreeNode, from: string | null, label: string, subagent: boolean) => {
    const key = nodeKey(node.workspace, node.session_id);
    let d = drawn.get(key);
    if (d === undefined || (d.truncated && !node.truncated)) {
      const parts = [node.session_id, node.log_exists ? `events=${node.event_count}` : "log=missing"];
      if (node.parent_missing) parts.push(`parent missing: ${plain(node.missing_parent_session_id)}`);
      if (node.parent_unreadable) parts.push(`parent unreadable: ${plain(node.unreadable_parent_session_id)}`);
      if (node.cycle_root) parts.push("cycle root");
      if (node.error) parts.push(`error: ${node.error.kind}`);
      if (node.truncated) parts.push("max_depth");
      if (d === undefined) {
        d = { node: { id: `n${drawn.size}`, parts, missing: !node.log_exists }, truncated: node.truncated === true };
        drawn.set(key, d);
        nodes.push(d.node);
      } else {
        d.node.parts = parts;
        d.node.missing = !node.log_exists;
        d.truncated = false;
      }
    }
    const id = d.node.id;
    if (from !== null) {
      // One edge per relation: met again from another root (where it may close a cycle), it is drawn once.
      const edgeKey = JSON.stringify([from, id, label, subagent]);
      const seen = seenEdges.get(edgeKey);
      if (seen === undefined) {
        const edge = { from, to: id, label, subagent, cycle: node.cycle === true };
        seenEdges.set(edgeKey, edge);
        edges.push(edge);
      } else if (node.cycle) seen.cycle = true;
    }
    if (node.cycle) return;
    for (const sub of node.subagents) if (sub.session !== null) visit(sub.session, id, `subagent ${sub.subagent_id}`, true);
    for (const fork of node.forks) visit(fork.session, id, `fork @${plain(fork.forked_to_seq)}`, false);
  };
  for (const root of roots) visit(root, null, "", false);
  return { nodes, edges };
}

const dotEscape = (s: string) => s.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\r?\n|\r/g, "\\n");

/** Graphviz dot: `pixir-tree --format dot | dot -Tsvg > tree.svg`. */
export function renderTreeDot(roots: TreeNode[]): string {
  const { nodes, edges } = graphOf(roots);
  const out = ["digraph pixir {", "  rankdir=LR;", "  node [shape=box];"];
  for (const n of nodes) out.push(`  ${n.id} [label="${n.parts.map(dotEscape).join("\\n")}"${n.missing ? ", style=dashed" : ""}];`);
  for (const e of edges) {
    const attrs = [`label="${dotEscape(e.label)}"`];
    if (e.subagent) attrs.push("style=dashed");
    if (e.cycle) attrs.push("color=red");
    out.push(`  ${e.from} -> ${e.to} [${attrs.join(", ")}];`);
  }
  out.push("}");
  return `${out.join("\n")}\n`;
}

const mermaidText = (s: string) => s.replace(/#/g, "#35;").replace(/"/g, "#quot;").replace(/\r?\n|\r/g, " ");

/** Mermaid flowchart, e.g. for Markdown that renders Mermaid blocks. */
export function renderTreeMermaid(roots: TreeNode[]): string {
  const { nodes, edges } = graphOf(roots);
  const out = ["graph TD"];
  for (const n of nodes) out.push(`  ${n.id}["${n.parts.map(mermaidText).join("<br/>")}"]`);
  for (const e of edges) {
    const label = mermaidText(e.label).replace(/\|/g, "#124;");
    out.push(`  ${e.from} ${e.subagent ? "-.->" : "-->"}|${label}| ${e.to}`);
  }
  return `${out.join("\n")}\n`;
}

/** One renderer per non-JSON format. */
export function renderTree(roots: TreeNode[], format: Exclude<TreeFormat, "json">): string {
  if (format === "dot") return renderTreeDot(roots);
  if (format === "mermaid") return renderTreeMermaid(roots);
  return renderTreeText(roots);
}

// ---------------------------------------------------------------------------------------------
// Output in pieces: a forest of 10,000 Logs is tens of MB of JSON, so the document is produced
// node by node, never as one string. The bytes equal JSON.stringify's, with a final newline.

export type TreeDocument = { ok: true; tree: TreeNode } | { ok: true; forest: TreeNode[] };

/** Keys whose values hold nodes; they are always an object's last keys. */
const NESTED_KEYS = new Set(["subagents", "forks", "session", "forest", "tree"]);

/** An array, or an object's nested keys, being written: its items, the next index, its closing bracket. */
interface OpenValue {
  items: unknown[];
  keys: string[] | null;
  next: number;
  close: string;
}

/**
 * The JSON of `root` in pieces. An explicit stack instead of recursive generators: with `yield*`, every
 * piece would pass through one generator per level of nesting.
 */
function* jsonValue(root: unknown): Generator<string> {
  const open: OpenValue[] = [];
  let value: unknown = root;
  for (;;) {
    if (Array.isArray(value)) {
      yield "[";
      open.push({ items: value, keys: null, next: 0, close: "]" });
    } else if (value === null || typeof value !== "object") {
      yield JSON.stringify(value) ?? "null";
    } else if (open.length >= 2) {
      // Below the document and its top node or array, a whole value (a node and everything under it)
      // is one native stringify: bounded by that subtree, and many times faster than piece by piece.
      yield JSON.stringify(value);
    } else {
      // A node, a record or the document: the flat keys in one stringify, then the nested ones.
      const flat: Record<string, unknown> = {};
      const keys: string[] = [];
      const items: unknown[] = [];
      for (const [k, v] of Object.entries(value)) {
        if (NESTED_KEYS.has(k)) {
          keys.push(k);
          items.push(v);
        } else if (keys.length > 0) throw new Error(`tree JSON: key ${k} follows a nested key`);
        else flat[k] = v;
      }
      const head = JSON.stringify(flat);
      if (keys.length === 0) yield head;
      else {
        yield head.length > 2 ? `${head.slice(0, -1)},` : "{";
        open.push({ items, keys, next: 0, close: "}" });
      }
    }
    // The next item of the innermost open value, closing those that are done.
    let top = open.at(-1);
    while (top !== undefined && top.next === top.items.length) {
      open.pop();
      yield top.close;
      top = open.at(-1);
    }
    if (top === undefined) return;
    const i = top.next++;
    if (top.keys !== null) yield `${i > 0 ? "," : ""}${JSON.stringify(top.keys[i])}:`;
    else if (i > 0) yield ",";
    value = top.items[i];
    if (top.keys !== null && value === undefined) value = null;
  }
}


/** The JSON document (one line, ending in `\n`) in chunks. */
export function treeJsonChunks(document: TreeDocument): Iterable<string> {
  return batched(
    (function* () {
      yield* jsonValue(document);
      yield "\n";
    })(),
  );
}

/** The text picture in chunks, one root at a time. */
function* textChunks(roots: TreeNode[]): Generator<string> {
  for (const [i, root] of roots.entries()) yield `${i > 0 ? "\n" : ""}${renderTreeText([root])}`;
}

/** Any output format in chunks, for writing with backpressure. */
export function treeOutputChunks(roots: TreeNode[], format: TreeFormat, single: boolean): Iterable<string> {
  if (format === "json") return treeJsonChunks(single ? { ok: true, tree: roots[0]! } : { ok: true, forest: roots });
  if (format === "text") return batched(textChunks(roots));
  return [renderTree(roots, format)];
}

