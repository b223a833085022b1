// archive.md §1: the session facts of a Workspace, joined from each Log's own scan (log-facts.ts): the
// lineage (parent, children, kind), what a child inherits (messages of a shared prefix, agent, cwd), and
// the title's fallback to the first prompt.
import path from "node:path";
import { SESSION_KINDS } from "../event/vocabulary.js";
import type { AgentName } from "./agents.js";
import type { LogScan } from "./log-facts.js";

export type { AgentName } from "./agents.js";
export type SessionKind = (typeof SESSION_KINDS)[number];

export interface SessionFacts {
  session_id: string;
  agent: AgentName;
  kind: SessionKind;
  cwd: string | null;
  project: string | null;
  title: string | null;
  first_prompt: string | null;
  /** ISO strings, from Events' ts, never file times. */
  started: string | null;
  updated: string | null;
  messages: number;
  tokens: number | null;
  parent: string | null;
  children: string[];
  /** The Log file's own Events and bytes. */
  events: number;
  log_bytes: number;
  /** A problem met while reading the Log (its facts cover what could be read); absent when none. */
  error?: string;
}

export { SESSION_KINDS };

export interface ScannedLog {
  id: string;
  bytes: number;
  scan: LogScan;
}

/** The facts of every Log, in the order given. */
export function joinFacts(logs: readonly ScannedLog[]): SessionFacts[] {
  const byId = new Map(logs.map((l) => [l.id, l]));
  const subagentParent = new Map<string, string>();
  for (const l of logs) for (const child of l.scan.subagents) if (byId.has(child) && child !== l.id && !subagentParent.has(child)) subagentParent.set(child, l.id);
  const parentOf = (l: ScannedLog): string | null => (l.scan.fork !== null && byId.has(l.scan.fork.parent) ? l.scan.fork.parent : (subagentParent.get(l.id) ?? null));
  const children = new Map<string, ScannedLog[]>();
  for (const l of logs) {
    const p = parentOf(l);
    if (p !== null && p !== l.id) (children.get(p) ?? children.set(p, []).get(p)!).push(l);
  }
  // A Log's own value, else the nearest one up its lineage. Each walk stops at a Log already answered, and
  // answers every Log it passed: a family's Logs are walked once, not once per Log below them.
  const answered = { agent: new Map<string, string | null>(), cwd: new Map<string, string | null>() };
  const inherited = (l: ScannedLog, key: "agent" | "cwd"): string | null => {
    const memo = answered[key];
    const passed: string[] = [];
    const seen = new Set<string>();
    let found: string | null = null;
    for (let at: ScannedLog | undefined = l; at !== undefined && !seen.has(at.id); at = byId.get(parentOf(at) ?? "")) {
      const known = memo.get(at.id);
      if (known !== undefined) {
        found = known;
        break;
      }
      seen.add(at.id);
      passed.push(at.id);
      if (at.scan[key] !== null) {
        found = at.scan[key];
        break;
      }
    }
    for (const id of passed) memo.set(id, found);
    return found;
  };
  return logs.map((l) => {
    const cwd = inherited(l, "cwd");
    const kids = (children.get(l.id) ?? []).sort(byStarted).map((c) => c.id);
    const facts: SessionFacts = {
      session_id: l.id,
      agent: (inherited(l, "agent") as AgentName | null) ?? "pixir",
      kind: kindOf(l, subagentParent),
      cwd,
      project: projectOf(cwd),
      title: l.scan.named_title ?? l.scan.first_prompt,
      first_prompt: l.scan.first_prompt,
      started: l.scan.started,
      updated: l.scan.updated,
      messages: l.scan.messages + inheritedMessages(l, byId),
      tokens: l.scan.tokens,
      parent: parentOf(l),
      children: kids,
      events: l.scan.events,
      log_bytes: l.bytes,
    };
    if (l.scan.problem !== null) facts.error = l.scan.problem;
    return facts;
  });
}

function kindOf(l: ScannedLog, subagentParent: Map<string, string>): SessionKind {
  if (l.scan.fork !== null) return l.scan.fork.branch ? "branch" : "fork";
  return subagentParent.has(l.id) ? "subagent" : "root";
}

/** The last path segment of the directory the agent ran in (either separator: a Windows cwd too). */
export function projectOf(cwd: string | null): string | null {
  if (cwd === null) return null;
  const segment = cwd.replace(/[\\/]+$/, "").split(/[\\/]/).pop() ?? "";
  return segment === "" ? (path.isAbsolute(cwd) ? null : cwd) : segment;
}

/** Whether a fork's History starts with its parent's messages (share_v1, up to a known fork point): the child counts them. */
export function sharesParentMessages(fork: NonNullable<LogScan["fork"]>): boolean {
  return fork.strategy === "share_v1" && fork.forked_to_seq !== null;
}

/** A share_v1 child's History starts with its parent's, up to the fork point: those messages are its too. */
function inheritedMessages(l: ScannedLog, byId: Map<string, ScannedLog>): number {
  let total = 0;
  let upTo = Number.POSITIVE_INFINITY;
  const seen = new Set<string>([l.id]);
  for (let fork = l.scan.fork; fork !== null && sharesParentMessages(fork); ) {
    const parent = byId.get(fork.parent);
    if (parent === undefined || seen.has(parent.id)) break;
    seen.add(parent.id);
    upTo = Math.min(upTo, fork.forked_to_seq!);
    total += countAtMost(parent.scan.message_seqs ?? [], upTo);
    fork = parent.scan.fork;
  }
  return total;
}

function countAtMost(seqs: readonly number[], limit: number): number {
  let n = 0;
  for (const s of seqs) if (s <= limit) n++;
  return n;
}

function byStarted(a: ScannedLog, b: ScannedLog): number {
  const x = a.scan.started ?? "";
  const y = b.scan.started ?? "";
  return x < y ? -1 : x > y ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
