// claude-interop.md §1.1, §3.1, §4.1: which files a run imports, how they group into units, and the
// identities (Claude session id, source key, Log ids) each file gets.
import { createHash } from "node:crypto";
import { closeSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isJsonObject } from "../../event/envelope.js";
import { PixirError, mapOsRefusal } from "../../event/errors.js";
import { isValidSessionId, MAX_SESSION_ID_BYTES } from "../../event/session-id.js";
import { MAX_LINE_BYTES } from "../../lines/codec.js";

export const UUID_PATTERN = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const SAFE_AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_BASE_BYTES = 200;

export const sha256Hex = (s: string | Uint8Array): string => createHash("sha256").update(s).digest("hex");

export type SourceKind = "session" | "fork_session" | "subagent";
export type SourceLayout = "session" | "subagents_dir" | "project_dir";

export interface SourceFile {
  /** The real path read. */
  abs: string;
  /** §3.5 `file`: the path from the project directory's parent. */
  file: string;
  /** §3.5 `project_dir`: the name of the directory the session was read from. */
  projectDir: string;
  projectDirAbs: string;
  kind: SourceKind;
  layout: SourceLayout;
  /** The Claude session id of the session (of the parent session for a subagent file). */
  claudeSessionId: string;
  agentId: string | null;
  /** §2.4 source key. */
  sourceKey: string;
  /** §3.1 base id of the session. */
  base: string;
  /** §3.1 id of the file's root Log. */
  rootId: string;
  /** §3.7: for a fork file, the session its first chain record names in `forkedFrom` (set by the importer). */
  forkedFrom: string | null;
}

export interface ImportUnit {
  session: SourceFile | null;
  subagents: SourceFile[];
  /** Sort key (project directory, session file name). */
  sortKey: string;
}

/** §3.1 base id: the Claude session id when it can name a Log, else a hash of it. */
export function claudeBaseId(claudeSessionId: string): string {
  return isValidSessionId(claudeSessionId) && Buffer.byteLength(claudeSessionId, "utf8") <= MAX_BASE_BYTES
    ? claudeSessionId
    : `claude-${sha256Hex(claudeSessionId).slice(0, 32)}`;
}

/** §3.1: `<root>.<suffix>`, the suffix hashed when the id would be invalid or too long. */
export function childLogId(root: string, suffix: string): string {
  const plain = `${root}.${suffix}`;
  return isValidSessionId(plain) && Buffer.byteLength(plain, "utf8") <= MAX_SESSION_ID_BYTES ? plain : `${root}.${sha256Hex(suffix).slice(0, 16)}`;
}

/** §3.6: the `subagent_id` of an agent. */
export const subagentIdOf = (agentId: string): string => (SAFE_AGENT_ID.test(agentId) ? agentId : sha256Hex(agentId).slice(0, 16));

/** §1.1: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`. */
export function defaultProjectsRoot(env: NodeJS.ProcessEnv): string {
  const dir = env.CLAUDE_CONFIG_DIR;
  return dir !== undefined && dir !== "" ? path.join(dir, "projects") : path.join(env.HOME ?? os.homedir(), ".claude", "projects");
}

const LINE_CHUNK = 64 * 1024;

/**
 * Read a file line by line, from the start, until `pick` returns something for a line's parsed value
 * (lines that are not JSON are passed over); null at the end, or at a line longer than a Log line may
 * be (the import refuses that file: claude/import.ts readSource). Only as much of the file as needed is
 * read, and a line's chunks are joined once, at its newline.
 */
function firstLineWith<T>(abs: string, pick: (value: unknown) => T | undefined): T | null {
  let fd: number;
  try {
    fd = openSync(abs, "r");
  } catch {
    return null;
  }
  try {
    const parts: Buffer[] = [];
    let partBytes = 0;
    let pos = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(LINE_CHUNK);
      const n = readSync(fd, chunk, 0, chunk.length, pos);
      if (n <= 0) return null;
      pos += n;
      let rest = chunk.subarray(0, n);
      let nl: number;
      while ((nl = rest.indexOf(0x0a)) >= 0) {
        const line = Buffer.concat([...parts, rest.subarray(0, nl)]);
        parts.length = 0;
        partBytes = 0;
        rest = rest.subarray(nl + 1);
        const found = pickLine(line, pick);
        if (found !== undefined) return found;
      }
      parts.push(rest);
      partBytes += rest.length;
      if (partBytes > MAX_LINE_BYTES) return null;
    }
  } finally {
    closeSync(fd);
  }
}

function pickLine<T>(line: Buffer, pick: (value: unknown) => T | undefined): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    return undefined;
  }
  return pick(value);
}

/** The `sessionId` of the first line of a file that has a string one (§3.1). */
export function firstSessionId(abs: string): string | null {
  return firstLineWith(abs, (v) => (isJsonObject(v) && typeof v.sessionId === "string" ? v.sessionId : undefined));
}

const isJsonl = (name: string) => name.endsWith(".jsonl");
const isAgentFile = (name: string) => name.startsWith("agent-") && isJsonl(name);

/** §3.1: a session file's Claude session id. */
export function sessionFileId(abs: string): string {
  const name = path.basename(abs, ".jsonl");
  if (UUID_PATTERN.test(name)) return name;
  return firstSessionId(abs) ?? name;
}

function notFound(p: string): PixirError {
  return new PixirError("not_found", "path was not found", {
    path: p,
    next_actions: ["pass the path of a Claude Code projects directory", "set CLAUDE_CONFIG_DIR"],
  });
}

/** A directory entry's kind without following a symlink (listing never follows them). */
function entryKind(abs: string): "file" | "dir" | "symlink" | "other" {
  try {
    const st = lstatSync(abs);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : st.isSymbolicLink() ? "symlink" : "other";
  } catch {
    return "other";
  }
}

/** Symbolic links met while listing (§4.1): not followed, reported so the user can name them instead. */
export type MetSymlinks = string[];

const sortedNames = (dir: string): string[] => {
  try {
    return readdirSync(dir).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  } catch (err) {
    throw mapOsRefusal(err) as Error;
  }
};

interface Found {
  abs: string;
  projectDirAbs: string;
  /** Set for `<sessionId>/subagents/agent-*.jsonl`. */
  subagentsOf: string | null;
}

/** §4.1: the files of one project directory (symbolic links met go to `links` when given). */
function projectFiles(dir: string, out: Found[], links?: MetSymlinks): void {
  for (const name of sortedNames(dir)) {
    const abs = path.join(dir, name);
    const kind = entryKind(abs);
    if (kind === "file" && isJsonl(name)) out.push({ abs, projectDirAbs: dir, subagentsOf: null });
    else if (kind === "symlink") links?.push(abs);
    else if (kind === "dir") {
      const sub = path.join(abs, "subagents");
      const subKind = entryKind(sub);
      if (subKind === "symlink") links?.push(sub);
      if (subKind !== "dir") continue;
      for (const n of sortedNames(sub)) {
        const f = path.join(sub, n);
        const k = entryKind(f);
        if (isAgentFile(n) && k === "file") out.push({ abs: f, projectDirAbs: dir, subagentsOf: name });
        else if (k === "symlink") links?.push(f);
      }
    }
  }
}

/** A file named on the command line: its project directory and its place in it. */
function namedFile(abs: string): Found {
  const dir = path.dirname(abs);
  if (isAgentFile(path.basename(abs)) && path.basename(dir) === "subagents") {
    const sessionDir = path.dirname(dir);
    return { abs, projectDirAbs: path.dirname(sessionDir), subagentsOf: path.basename(sessionDir) };
  }
  return { abs, projectDirAbs: dir, subagentsOf: null };
}

/** §4.1: the units of a run, in import order; symbolic links met while listing a directory go to `links`. */
export function discoverUnits(paths: string[], links: MetSymlinks = []): ImportUnit[] {
  const found: Found[] = [];
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      throw notFound(p);
    }
    const abs = realpathSync(p);
    if (st.isFile()) {
      const f = namedFile(abs);
      found.push(f);
      // A file's unit: its session's subagent files, or, for a subagent file, its session file.
      const siblings: Found[] = [];
      projectFiles(f.projectDirAbs, siblings);
      const sid = f.subagentsOf ?? (isAgentFile(path.basename(abs)) ? firstSessionId(abs) : sessionFileId(abs));
      for (const s of siblings) {
        if (s.abs === abs) continue;
        const name = path.basename(s.abs);
        if (s.subagentsOf !== null ? s.subagentsOf === sid : isAgentFile(name) ? firstSessionId(s.abs) === sid : sessionFileId(s.abs) === sid) found.push(s);
      }
    } else if (st.isDirectory()) {
      const names = sortedNames(abs);
      if (names.some((n) => isJsonl(n) && entryKind(path.join(abs, n)) === "file")) projectFiles(abs, found, links);
      else
        for (const n of names) {
          const kind = entryKind(path.join(abs, n));
          if (kind === "dir") projectFiles(path.join(abs, n), found, links);
          else if (kind === "symlink") links.push(path.join(abs, n));
        }
    } else throw notFound(p);
  }
  const unique = new Map<string, Found>();
  for (const f of found) if (!unique.has(f.abs)) unique.set(f.abs, f);
  return buildUnits([...unique.values()]);
}

function buildUnits(found: Found[]): ImportUnit[] {
  const sessions = new Map<string, ImportUnit>();
  const units: ImportUnit[] = [];
  const agents: Found[] = [];
  for (const f of found) {
    const name = path.basename(f.abs);
    if (f.subagentsOf !== null || isAgentFile(name)) {
      agents.push(f);
      continue;
    }
    const claudeId = sessionFileId(f.abs);
    const base = claudeBaseId(claudeId);
    const unit: ImportUnit = {
      session: source(f, "session", "session", claudeId, null, claudeId, base, base),
      subagents: [],
      sortKey: `${f.projectDirAbs}\u0000${name}`,
    };
    units.push(unit);
    const key = `${f.projectDirAbs}\u0000${claudeId}`;
    if (!sessions.has(key)) sessions.set(key, unit);
  }
  for (const f of agents) {
    const name = path.basename(f.abs);
    const agentId = name.slice("agent-".length, -".jsonl".length);
    const parentId = f.subagentsOf ?? firstSessionId(f.abs) ?? "";
    const base = claudeBaseId(parentId);
    const sf = source(f, "subagent", f.subagentsOf !== null ? "subagents_dir" : "project_dir", parentId, agentId, `${parentId}/agent-${agentId}`, base, childLogId(base, `agent-${agentId}`));
    const owner = sessions.get(`${f.projectDirAbs}\u0000${parentId}`);
    if (owner) owner.subagents.push(sf);
    else units.push({ session: null, subagents: [sf], sortKey: `${f.projectDirAbs}\u0000${name}` });
  }
  for (const u of units) u.subagents.sort((a, b) => Buffer.compare(Buffer.from(path.basename(a.abs)), Buffer.from(path.basename(b.abs))));
  return units.sort((a, b) => Buffer.compare(Buffer.from(a.sortKey), Buffer.from(b.sortKey)));
}

function source(f: Found, kind: SourceKind, layout: SourceLayout, claudeId: string, agentId: string | null, sourceKey: string, base: string, rootId: string): SourceFile {
  const parentOfProject = path.dirname(f.projectDirAbs);
  return {
    abs: f.abs,
    file: path.relative(parentOfProject, f.abs).split(path.sep).join("/"),
    projectDir: path.basename(f.projectDirAbs),
    projectDirAbs: f.projectDirAbs,
    kind,
    layout,
    claudeSessionId: claudeId,
    agentId,
    sourceKey,
    base,
    rootId,
    forkedFrom: null,
  };
}

/** §3.7: the session a fork file was forked from: its first chain record's `forkedFrom.sessionId`. */
export function forkedFromSession(abs: string, claudeId: string): string | null {
  return firstLineWith(abs, (v) => {
    if (!isJsonObject(v) || typeof v.uuid !== "string" || !(typeof v.parentUuid === "string" || v.parentUuid === null)) return undefined;
    const ff = v.forkedFrom;
    return isJsonObject(ff) && typeof ff.sessionId === "string" && ff.sessionId !== claudeId ? ff.sessionId : null;
  });
}
