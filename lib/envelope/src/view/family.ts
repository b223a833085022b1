// view.md §1 `--family`: the Logs a page shows. The root is found by walking session_fork parents up
// (tree/fork-family.ts, the walk `pixir export pi` uses); below it, the Session Tree gives every fork
// descendant of both strategies and the subagent children `pixir tree` shows, to --max-depth. Each Log
// is listed once, parents before children (the sidebar's order).
import path from "node:path";
import { inspectStatePath, logPath } from "../store/paths.js";
import { notFoundError } from "../store/loader.js";
import { forkRootOf, readForkLinks, type ForkLink } from "../tree/fork-family.js";
import { buildSessionTree, DEFAULT_TREE_MAX_DEPTH, type TreeNode } from "../tree/tree.js";
import type { PageRelation } from "./page-index.js";

export interface FamilyMember {
  id: string;
  /** The Workspace that holds the Log (a subagent's may be another one, as in `pixir tree`). */
  ws: string;
  parent: number | null;
  relation: PageRelation;
  forkedToSeq: number | null;
  strategy: string | null;
  /** A subagent child whose Log is not there: listed, with nothing to show. */
  missing: boolean;
  subagent: { agent: string | null; status: string | null; task: string | null } | null;
}

export interface FamilyOptions {
  /** false: only the named Log (`--no-family`). */
  family: boolean;
  maxDepth?: number;
  /** The Workspace's fork links and a tree maker, shared by the pages of a site (read once, not per page). */
  shared?: { links: ReadonlyMap<string, ForkLink | null>; tree: (ws: string, id: string) => TreeNode };
}

const textOrNull = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** The Logs of the page for Session `id` of Workspace `ws`; `command` names the reader in a not_found hint. */
export async function familyMembers(ws: string, id: string, options: FamilyOptions, command: string): Promise<FamilyMember[]> {
  const p = logPath(ws, id);
  if (inspectStatePath(p) === "missing") throw notFoundError(id, ws, p.rel, command);
  const lone: FamilyMember = { id, ws, parent: null, relation: "root", forkedToSeq: null, strategy: null, missing: false, subagent: null };
  if (!options.family) return [lone];
  const root = forkRootOf(options.shared?.links ?? (await readForkLinks(ws)), id);
  const tree = options.shared !== undefined ? options.shared.tree(ws, root) : buildSessionTree(ws, root, { maxDepth: options.maxDepth ?? DEFAULT_TREE_MAX_DEPTH });
  const members: FamilyMember[] = [];
  const seen = new Set<string>();
  const add = (node: TreeNode, member: Omit<FamilyMember, "id" | "ws" | "missing">): void => {
    const key = `${node.workspace}\0${node.session_id}`;
    // A node past --max-depth is where the tree stops; a cycle's node is a Log met before.
    if (seen.has(key) || node.truncated || node.cycle) return;
    seen.add(key);
    const index = members.length;
    members.push({ id: node.session_id, ws: node.workspace, missing: !node.log_exists, ...member });
    if (!node.log_exists) return;
    // Children in the order they happened in this Log: fork points and first subagent Events by seq.
    const children: Array<{ at: number; visit: () => void }> = [];
    for (const fork of node.forks) {
      const at = typeof fork.forked_to_seq === "number" ? fork.forked_to_seq : Number.MAX_SAFE_INTEGER;
      children.push({
        at,
        visit: () => add(fork.session, { parent: index, relation: "fork", forkedToSeq: typeof fork.forked_to_seq === "number" ? fork.forked_to_seq : null, strategy: textOrNull(fork.strategy), subagent: null }),
      });
    }
    for (const run of node.subagents) {
      if (run.session === null) continue;
      const session = run.session;
      children.push({
        at: run.first_seq ?? Number.MAX_SAFE_INTEGER,
        visit: () => add(session, { parent: index, relation: "subagent", forkedToSeq: null, strategy: null, subagent: { agent: textOrNull(run.agent), status: textOrNull(run.status), task: textOrNull(run.task) } }),
      });
    }
    children.sort((a, b) => a.at - b.at);
    for (const child of children) child.visit();
  };
  add(tree, { parent: null, relation: "root", forkedToSeq: null, strategy: null, subagent: null });
  // The named Log is in its own family unless --max-depth cut it off: then it is shown alone.
  if (!members.some((m) => m.id === id && path.resolve(m.ws) === path.resolve(ws))) return [lone];
  return members;
}
