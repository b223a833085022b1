// Test support for the opencode interop: an opencode.db built from opencode's schema (session.sql.ts) with
// the HAND-MADE rows of test/fixtures/opencode/sessions.json, and an oracle of what opencode sends next,
// computed from those rows alone (revert, then everything from the last completed compaction on).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { ROOT } from "./cli.js";

interface Statement {
  run(...args: unknown[]): unknown;
}
interface Db {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}
/** better-sqlite3 is a dependency of @pixir/envelope, resolved from there (the root has no copy). */
export const Database = createRequire(path.join(ROOT, "lib/envelope/package.json"))("better-sqlite3") as new (file: string) => Db;

export const OPENCODE_FIXTURES = path.join(ROOT, "test/fixtures/opencode");
export const LEGACY_STORAGE = path.join(OPENCODE_FIXTURES, "legacy/storage");
export const SESSIONS = JSON.parse(readFileSync(path.join(OPENCODE_FIXTURES, "sessions.json"), "utf8")).sessions as any[];

// @ts-expect-error: a plain .mjs module shared with the benchmark
import { SCHEMA_SQL } from "../../bench/lib/opencode-schema.mjs";
const SCHEMA: string = SCHEMA_SQL;

/** Write `dir/opencode.db` holding `sessions` (the fixture's by default), as opencode stores them. */
export function buildOpencodeDb(dir: string, sessions: any[] = SESSIONS): string {
  const file = path.join(dir, "opencode.db");
  const db = new Database(file);
  db.exec(SCHEMA);
  const addSession = db.prepare(
    "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, revert, time_created, time_updated) VALUES (@id, @project_id, @parent_id, @slug, @directory, @title, @version, @revert, @time_created, @time_updated)",
  );
  const addMessage = db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)");
  const addPart = db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)");
  for (const s of sessions) {
    addSession.run({ parent_id: null, revert: null, ...s.row });
    for (const m of s.messages) {
      const created = m.data.time.created;
      addMessage.run(m.id, s.row.id, created, created, JSON.stringify(m.data));
      for (const p of m.parts) {
        const { id, ...data } = p;
        addPart.run(id, m.id, s.row.id, created, created, JSON.stringify(data));
      }
    }
  }
  db.close();
  return file;
}

export type OracleItem = ["user", string] | ["assistant", string] | ["call", string, string, unknown] | ["output", string, string] | ["checkpoint", string];

/** What opencode sends next for a session's rows: reverted messages out, the last compaction as its summary. */
export function opencodeOracle(session: any): OracleItem[] {
  let messages = session.messages as any[];
  const revert = session.row.revert ? JSON.parse(session.row.revert).messageID : null;
  if (revert !== null) messages = messages.slice(0, messages.findIndex((m) => m.id === revert));
  const summaryAt = messages.map((m) => m.data.summary === true).lastIndexOf(true);
  const out: OracleItem[] = [];
  if (summaryAt >= 0) {
    out.push(["checkpoint", messages[summaryAt].parts.map((p: any) => p.text).join("\n")]);
    messages = messages.slice(summaryAt + 1);
  }
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.type === "text") out.push([m.data.role === "user" ? "user" : "assistant", p.text]);
      if (p.type === "tool") {
        out.push(["call", p.callID, p.tool, p.state.input]);
        if (p.state.status === "completed") out.push(["output", p.callID, p.state.output]);
      }
    }
  }
  return out;
}

/** `pixir context --format ndjson` items in the oracle's shape (a checkpoint shows as its summary). */
export function contextAsOracle(lines: any[]): OracleItem[] {
  return lines.map(({ type, item }) => {
    // The checkpoint is rendered as pixir's "Compressed session memory" layout around the summary.
    if (type === "history_compaction") return ["checkpoint", /\nSummary:\n([\s\S]*?)\n\nFiles touched:/.exec(item.content[0].text)?.[1] ?? item.content[0].text] as OracleItem;
    if (typeof item.role === "string") return [item.role === "user" ? "user" : "assistant", item.content.map((p: any) => p.text).join("\n")] as OracleItem;
    if (item.type === "function_call") return ["call", item.call_id, item.name, JSON.parse(item.arguments)] as OracleItem;
    return ["output", item.call_id, item.output] as OracleItem;
  });
}
