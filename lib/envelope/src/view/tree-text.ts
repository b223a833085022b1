// archive.md §1 `pixir tree` text: the Session Tree for a person. The Workspace once, each subagent once
// (under its parent, never again as a root of the forest), children in the order they started, and each
// node as `id  title  (agent, kind, N events, date)`, ids as their shortest unique prefix. The details of
// every node (tree.md §4) are `--verbose`; the JSON contract is unchanged.
import { oneLine } from "../event/injected.js";
import type { SessionFacts } from "../archive/facts.js";
import { shortestUniquePrefixes } from "../archive/resolve.js";
import type { TreeNode } from "../tree/tree.js";
import { cutToWidth, displayWidth, localMinute } from "./ls-text.js";

export interface TreeTextOptions {
  workspace: string;
  /** The catalog of `workspace`: titles, agents, kinds and times. */
  facts: readonly SessionFacts[];
  /** The Workspace's roots of the forest, or one tree: a tree's root keeps its place even when it is a subagent. */
  forest: boolean;
  /** stdout is a terminal this wide: titles are cut so that each line fits. */
  columns?: number;
}

interface Child {
  node: TreeNode | null;
  /** A subagent run without a Log in reach: its id and agent. */
  label: string;
  started: string;
}

/** The lines of the readable tree, ending in `\n` (or "" for an empty forest). */
export function renderReadableTree(roots: readonly TreeNode[], o: TreeTextOptions): string {
  if (roots.length === 0) return "";
  const byId = new Map(o.facts.map((f) => [f.session_id, f]));
  const prefixes = shortestUniquePrefixes(o.facts.map((f) => f.session_id));
  const shown = o.forest ? roots.filter((r) => !nestedElsewhere(r, roots)) : roots;
  const lines = [`workspace: ${oneLine(o.workspace, 4096)}`];
  const label = (n: TreeNode, indent: number) => nodeLabel(n, o, byId, prefixes, o.columns === undefined ? undefined : o.columns - indent);
  for (const root of shown) {
    lines.push(label(root, 0));
    childLines(root, "", lines, label, byId);
  }
  return `${lines.join("\n")}\n`;
}

/** A forest root that is also a subagent child placed under another root (tree.md §3 lists it twice). */
function nestedElsewhere(root: TreeNode, roots: readonly TreeNode[]): boolean {
  const isIt = (n: TreeNode | null) => n !== null && n.session_id === root.session_id && n.workspace === root.workspace;
  const within = (n: TreeNode): boolean => n.subagents.some((s) => isIt(s.session) || (s.session !== null && within(s.session))) || n.forks.some((f) => isIt(f.session) || within(f.session));
  return roots.some((r) => r !== root && within(r));
}

function childLines(node: TreeNode, indent: string, out: string[], label: (n: TreeNode, indent: number) => string, byId: Map<string, SessionFacts>): void {
  const kids = childrenOf(node, byId);
  kids.forEach((kid, i) => {
    const last = i === kids.length - 1;
    out.push(`${indent}${last ? "`-- " : "|-- "}${kid.node === null ? kid.label : label(kid.node, indent.length + 4)}`);
    if (kid.node !== null) childLines(kid.node, `${indent}${last ? "    " : "|   "}`, out, label, byId);
  });
}

/** Subagents and forks together, by when they started (their own first Event), then by id. */
function childrenOf(node: TreeNode, byId: Map<string, SessionFacts>): Child[] {
  const startedOf = (n: TreeNode) => byId.get(n.session_id)?.started ?? n.first_event_ts ?? "";
  const kids: Child[] = [
    ...node.subagents.map((s) => ({
      node: s.session,
      label: `subagent ${oneLine(String(s.subagent_id))}${typeof s.agent === "string" && s.agent !== "" ? ` (${oneLine(s.agent)})` : ""} (no Log)`,
      started: s.session === null ? "" : startedOf(s.session),
    })),
    ...node.forks.map((f) => ({ node: f.session, label: "", started: startedOf(f.session) })),
  ];
  const key = (c: Child) => c.node?.session_id ?? c.label;
  return kids.sort((a, b) => (a.started < b.started ? -1 : a.started > b.started ? 1 : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

/** `id  title  (agent, kind, N events, date)` and the markers of tree.md §4; the title cut to fit `room` columns. */
function nodeLabel(n: TreeNode, o: TreeTextOptions, byId: Map<string, SessionFacts>, prefixes: Map<string, string>, room: number | undefined): string {
  const here = n.workspace === o.workspace;
  const f = here ? byId.get(n.session_id) : undefined;
  const id = oneLine(here ? (prefixes.get(n.session_id) ?? n.session_id) : n.session_id, 4096);
  const about: string[] = [];
  if (f !== undefined) about.push(f.kind === "root" ? f.agent : `${f.agent}, ${f.kind}`);
  about.push(n.log_exists ? `${n.event_count} events` : "log missing");
  if (f?.updated) about.push(localMinute(f.updated));
  const elsewhere = here ? "" : `  [workspace: ${oneLine(n.workspace, 4096)}]`;
  const tail = `  (${about.join(", ")})${markers(n)}${elsewhere}`;
  if (f === undefined) return `${id}${tail}`;
  const title = f.title ?? "(no prompt)";
  const titleRoom = room === undefined ? Infinity : room - displayWidth(id) - displayWidth(tail) - 2;
  return `${id}  ${titleRoom >= 16 ? cutToWidth(title, titleRoom) : title}${tail}`;
}

function markers(n: TreeNode): string {
  let s = "";
  if (n.cycle) s += " [cycle]";
  if (n.truncated) s += " [max_depth]";
  if (n.parent_missing) s += ` [parent missing: ${String(n.missing_parent_session_id ?? "")}]`;
  if (n.parent_unreadable) s += ` [parent unreadable: ${n.unreadable_parent_session_id ?? ""}]`;
  if (n.cycle_root) s += " [cycle root]";
  if (n.error) s += ` [error: ${n.error.kind}]`;
  return s;
}
