// Test support for pixir import/export claude (claude-interop.md §6): the real transcripts copied into
// a temporary projects root (each source folder one project directory), and readers of the Logs made.
import { cpSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { ROOT, tempDir } from "./cli.js";

export const CLAUDE_FIXTURES = path.resolve(ROOT, "../shared/fixtures/real-sessions/claude");

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

/** Lines held by each Log of a source (by `data.claude.source` of the Log's first Event). */
export function heldLines(ws: string, source: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const id of logIds(ws)) {
    const first = storedEvents(ws, id)[0]!;
    if (first.data.claude?.source !== source) continue;
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
