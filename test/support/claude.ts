// Test support for pixir import/export claude (claude-interop.md §6): the real transcripts copied into
// a temporary projects root (each source folder one project directory), and readers of the Logs made.
import { createHash } from "node:crypto";
import { closeSync, cpSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from "node:fs";
import path from "node:path";
import { ROOT, tempDir } from "./cli.js";
import type { Facts } from "../../lib/envelope/src/interop/claude/record-facts.js";

/** The licensed real transcripts, in the repository (test/fixtures/real-sessions/README.md). */
export const CLAUDE_FIXTURES = path.resolve(ROOT, "test/fixtures/real-sessions/claude");

/** Every `.jsonl` file under the fixture folder, relative to it. */
export function allFixtureFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (name.endsWith(".jsonl")) out.push(path.relative(CLAUDE_FIXTURES, abs));
    }
  };
  walk(CLAUDE_FIXTURES);
  return out;
}

/** Session files (not subagent transcripts). */
export const sessionFixtures = (): string[] => allFixtureFiles().filter((f) => !path.basename(f).startsWith("agent-") && !f.includes("/subagents/"));

/** A temporary projects root holding a copy of the fixture folders (or of `only`). */
export function projectsRoot(only?: string[]): string {
  const root = tempDir("pixir-claude-projects-");
  for (const rel of only ?? allFixtureFiles()) cpSync(path.join(CLAUDE_FIXTURES, rel), path.join(root, rel));
  return root;
}

export interface StoredEvent {
  id: string;
  session_id: string;
  seq: number;
  ts: string;
  type: string;
  data: any;
}

export const logsDir = (ws: string) => path.join(ws, ".pixir", "sessions");

export function logIds(ws: string): string[] {
  return readdirSync(logsDir(ws))
    .filter((n) => n.endsWith(".ndjson"))
    .map((n) => n.slice(0, -".ndjson".length))
    .sort();
}

export const storedEvents = (ws: string, id: string): StoredEvent[] =>
  readFileSync(path.join(logsDir(ws), `${id}.ndjson`), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

/** A Log's own Events (claude-interop.md §4.3 step 4). */
export function ownEvents(ws: string, id: string): StoredEvent[] {
  const all = storedEvents(ws, id);
  const first = all[0]!;
  return first.type === "session_fork" ? all.filter((e) => e.seq > first.data.replay_event_count) : all;
}

/** A Log's first Event, without reading the rest of it. */
function firstEvent(ws: string, id: string): StoredEvent {
  const fd = openSync(path.join(logsDir(ws), `${id}.ndjson`), "r");
  try {
    const chunks: Buffer[] = [];
    for (let at = 0; ; ) {
      const chunk = Buffer.alloc(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, at);
      const end = chunk.subarray(0, n).indexOf(0x0a);
      chunks.push(chunk.subarray(0, end < 0 ? n : end));
      if (end >= 0 || n === 0) return JSON.parse(Buffer.concat(chunks).toString("utf8"));
      at += n;
    }
  } finally {
    closeSync(fd);
  }
}

/** Lines held by each Log of a source (by `data.claude.source` of the Log's first Event). */
export function heldLines(ws: string, source: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const id of logIds(ws)) {
    if (firstEvent(ws, id).data.claude?.source !== source) continue;
    const lines: number[] = [];
    for (const e of ownEvents(ws, id)) {
      const c = e.data.claude;
      if (c && typeof c.line === "number" && ("record" in c || "raw_line" in c || "raw_base64" in c)) lines.push(c.line);
    }
    out.set(id, lines);
  }
  return out;
}

/** The non-blank line numbers of a file's complete lines. */
export function nonBlankLines(bytes: Buffer): number[] {
  const text = bytes.toString("latin1");
  const end = text.lastIndexOf("\n");
  return text
    .slice(0, end + 1)
    .split("\n")
    .slice(0, -1)
    .map((l, i) => (/^[ \t\r]*$/.test(l) ? 0 : i + 1))
    .filter((n) => n > 0);
}

/** Line ranges as numbers: r(1, 3) = [1, 2, 3]. */
export const r = (a: number, b: number): number[] => Array.from({ length: b - a + 1 }, (_, i) => a + i);

const UUID_TEXT = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;

/** A version-4 UUID made from a seed (the shape Claude writes). */
export function seededUuid(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${"89ab"[parseInt(h[16]!, 16) % 4]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Every UUID in `text` replaced by a fresh one (the same one each time it occurs), except those in `keep`. */
export function remapUuids(text: string, seed: string, keep: ReadonlySet<string> = new Set()): string {
  return text.replace(UUID_TEXT, (u) => (keep.has(u) ? u : seededUuid(`${seed}:${u}`)));
}

/** The complete lines of a file with their 1-based numbers (blank ones included). */
export function numberedLines(bytes: Buffer): Array<{ n: number; text: string }> {
  const text = bytes.toString("utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .slice(0, -1)
    .map((t, i) => ({ n: i + 1, text: t }));
}

const API_ID_TEXT = /\b(msg|req|toolu)_[A-Za-z0-9]+/g;

export interface Rewound {
  bytes: Buffer;
  /** The line of the abandoned prompt (the original), and of its re-sent copy. */
  abandonedLine: number;
  liveLine: number;
  /** The last message record of the original file, now on the abandoned branch. */
  originalLeafLine: number;
}

/**
 * A rewind made from a real transcript, as Claude writes one (FORMAT-NOTES.md §1.4: Esc Esc, then a new
 * prompt): a prompt P on the path Claude resumes is sent again, edited, with P's parent as its parent, and the
 * conversation after it is written again with fresh uuids. The original lines stay in the file (the
 * abandoned branch); the copies are the live branch. Null when the path has no prompt to rewind to.
 */
export function rewindOf(bytes: Buffer, resumed: Array<{ line: number; v: Record<string, any> }>, which: "middle" | "last" = "middle"): Rewound | null {
  const isPrompt = (v: Record<string, any>) => {
    const c = v.message?.content;
    return typeof c === "string" || (Array.isArray(c) && c.some((b) => b?.type === "text") && !c.some((b) => b?.type === "tool_result"));
  };
  const prompts = resumed.filter((r) => r.v.type === "user" && isPrompt(r.v) && r.v.isMeta !== true && r.v.isCompactSummary !== true);
  if (prompts.length === 0) return null;
  const p = prompts[which === "last" ? prompts.length - 1 : Math.floor(prompts.length / 2)]!;
  const lines = numberedLines(bytes);
  const keep = new Set<string>();
  for (const { n, text } of lines) {
    let v: any;
    try {
      v = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof v?.sessionId === "string") keep.add(v.sessionId);
    if (n < p.line && typeof v?.uuid === "string") keep.add(v.uuid);
  }
  const copies = lines
    .filter(({ n, text }) => n >= p.line && !/^[ \t\r]*$/.test(text))
    .map(({ n, text }) => {
      // A new API response: new message, request and tool-call ids too (some fixtures redact them).
      const again = JSON.parse(remapUuids(text, "rewind", keep).replace(API_ID_TEXT, (id, kind: string) => `${kind}_rw${seededUuid(`rewind:${id}`).replaceAll("-", "").slice(0, 20)}`));
      if (again.type === "assistant" && typeof again.message?.id === "string") again.message.id = `msg_rw${seededUuid(`rewind:${again.message.id}`).slice(0, 8)}`;
      if (n === p.line) {
        const c = again.message.content;
        if (typeof c === "string") again.message.content = `(sent again, edited) ${c}`;
        else {
          const t = c.find((b: any) => b?.type === "text");
          t.text = `(sent again, edited) ${t.text}`;
        }
      }
      return JSON.stringify(again);
    });
  const original = Buffer.from(lines.map((l) => `${l.text}\n`).join(""), "utf8");
  return {
    bytes: Buffer.concat([original, Buffer.from(copies.map((l) => `${l}\n`).join(""), "utf8")]),
    abandonedLine: p.line,
    liveLine: lines.length + 1,
    originalLeafLine: resumed.at(-1)!.line,
  };
}

/** A seeded choice of cut points: line boundaries (byte offsets just after a `\n`). */
export function lineCuts(bytes: Buffer, count: number, seed: number): number[] {
  const ends: number[] = [];
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < bytes.length - 1; i = bytes.indexOf(0x0a, i + 1)) ends.push(i + 1);
  // xorshift32: exact in 32-bit integers (a multiplicative step in doubles loses its low bits and can cycle).
  let x = seed >>> 0 || 1;
  const out = new Set<number>();
  while (out.size < Math.min(count, ends.length)) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out.add(ends[x % ends.length]!);
  }
  return [...out].sort((a, b) => a - b);
}

/** The subagent files of a session fixture, relative to the fixture folder. */
export function unitFiles(rel: string): string[] {
  const dir = path.dirname(rel);
  const id = path.basename(rel, ".jsonl");
  const out: string[] = [];
  const sub = path.join(CLAUDE_FIXTURES, dir, id, "subagents");
  if (existsSync(sub)) for (const n of readdirSync(sub)) out.push(path.join(dir, id, "subagents", n));
  return out;
}

export function snapshot(ws: string): Map<string, Buffer> {
  return new Map(logIds(ws).map((id) => [id, readFileSync(path.join(logsDir(ws), `${id}.ndjson`))]));
}

/** A record's facts as a plain object (tests compare facts read in different ways). */
export const factsView = (f: Facts | null) =>
  f === null
    ? null
    : {
        chain: f.chain,
        sidechain: f.sidechain,
        compactBoundary: f.compactBoundary,
        uuid: f.uuid,
        parentUuid: f.parentUuid,
        timestamp: f.timestamp,
        messageId: f.messageId,
        requestId: f.requestId,
        toolUses: f.toolUses,
        toolResults: f.toolResults,
        logicalParentUuid: f.logicalParentUuid,
        subtype: f.subtype,
        snapshotTimestamp: f.snapshotTimestamp,
        toolUseResult: f.toolUseResult,
      };
