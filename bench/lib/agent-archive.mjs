// The generated Gemini CLI and opencode archives of the benchmarks (bench/agent-import.mjs, bench/rss.mjs):
// sessions of TURNS turns (a user message; a tool call with its ~2 KiB result; its tokens), deterministic.
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const TURNS = 400;
const FILLER = "line of tool output that a shell command printed while the agent worked\n".repeat(28);
const ts = (s, n) => new Date(Date.UTC(2026, 0, 1) + s * 86400000 + n * 1000).toISOString();
const uuid = (s) => `0b000000-0000-4000-8000-${s.toString(16).padStart(12, "0")}`;

function geminiSession(s) {
  const id = uuid(s);
  const lines = [{ sessionId: id, projectHash: "f".repeat(64), startTime: ts(s, 0), lastUpdated: ts(s, 0), kind: "main" }];
  for (let t = 0; t < TURNS; t++) {
    lines.push({ id: `u${t}`, timestamp: ts(s, 4 * t + 1), type: "user", content: [{ text: `Turn ${t}: run the tests of module ${t}` }] });
    const call = { id: `c${t}`, name: "run_shell_command", args: { command: `npm test -- m${t}` }, status: "scheduled", timestamp: ts(s, 4 * t + 2) };
    const g = { id: `g${t}`, timestamp: ts(s, 4 * t + 2), type: "gemini", content: `Running the tests of module ${t}.`, thoughts: [], tokens: null, model: "gemini-2.5-pro" };
    lines.push({ ...g, toolCalls: [call] });
    const done = { ...call, status: "success", result: [{ functionResponse: { id: `c${t}`, name: "run_shell_command", response: { output: FILLER } } }] };
    lines.push({ ...g, toolCalls: [done] });
    lines.push({ ...g, toolCalls: [done], tokens: { input: 1000 + t, output: 20, cached: 500, thoughts: 5, tool: 0, total: 1525 + t } });
  }
  return `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`;
}

/** Gemini CLI session files of about `size` bytes under dir/.gemini/tmp/bench-project/chats. */
export function generateGemini(dir, size) {
  const chats = path.join(dir, ".gemini", "tmp", "bench-project", "chats");
  mkdirSync(chats, { recursive: true });
  let bytes = 0;
  let n = 0;
  while (bytes < size) {
    const text = geminiSession(n);
    writeFileSync(path.join(chats, `session-2026-01-01T00-00-${uuid(n).slice(0, 8)}${n}.jsonl`), text);
    bytes += Buffer.byteLength(text);
    n++;
  }
  return { input: path.join(dir, ".gemini", "tmp"), jqFiles: chats, bytes, count: n };
}

function opencodeRows(s) {
  const sid = `ses_bench${s}`;
  const messages = [];
  for (let t = 0; t < TURNS; t++) {
    const created = Date.UTC(2026, 0, 1) + s * 86400000 + t * 4000;
    messages.push({ id: `msg_${s}_${t}u`, data: { role: "user", time: { created }, agent: "build" }, parts: [{ id: `prt_${s}_${t}u`, type: "text", text: `Turn ${t}: run the tests of module ${t}` }] });
    messages.push({
      id: `msg_${s}_${t}a`,
      data: { role: "assistant", time: { created: created + 1000, completed: created + 2000 }, parentID: `msg_${s}_${t}u`, modelID: "claude-sonnet-4", providerID: "anthropic", mode: "build", agent: "build", path: { cwd: "/w", root: "/w" }, cost: 0.01, tokens: { input: 1000, output: 20, reasoning: 5, cache: { read: 500, write: 0 } } },
      parts: [
        { id: `prt_${s}_${t}a1`, type: "text", text: `Running the tests of module ${t}.` },
        { id: `prt_${s}_${t}a2`, type: "tool", callID: `call_${t}`, tool: "bash", state: { status: "completed", input: { command: `npm test -- m${t}` }, output: FILLER, title: "npm test", metadata: {}, time: { start: created, end: created + 900 } } },
        { id: `prt_${s}_${t}a3`, type: "step-finish", reason: "stop", cost: 0.01, tokens: { input: 1000, output: 20, reasoning: 5, cache: { read: 500, write: 0 } } },
      ],
    });
  }
  return { row: { id: sid, project_id: "prj_bench", slug: `s${s}`, directory: "/w", title: `Bench ${s}`, version: "1.2.10", time_created: Date.UTC(2026, 0, 1) + s * 86400000, time_updated: Date.UTC(2026, 0, 1) + s * 86400000 }, messages };
}

/** An opencode.db of about `size` bytes of records in dir (and the same records as dir/storage/*.jsonl). */
export async function generateOpencode(dir, size) {
  // The database is built from opencode's schema, the statements the tests use (bench/lib/opencode-schema.mjs).
  const Database = createRequire(path.join(ROOT, "lib/envelope/package.json"))("better-sqlite3");
  const { SCHEMA_SQL } = await import(path.join(ROOT, "bench/lib/opencode-schema.mjs"));
  const dbFile = path.join(dir, "opencode.db");
  const db = new Database(dbFile);
  db.exec(SCHEMA_SQL);
  const storage = path.join(dir, "storage");
  const addS = db.prepare("INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) VALUES (@id, @project_id, @slug, @directory, @title, @version, @time_created, @time_updated)");
  const addM = db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)");
  const addP = db.prepare("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)");
  let bytes = 0;
  let n = 0;
  while (bytes < size) {
    const { row, messages } = opencodeRows(n);
    const records = [];
    db.transaction(() => {
      addS.run(row);
      for (const m of messages) {
        const c = m.data.time.created;
        addM.run(m.id, row.id, c, c, JSON.stringify(m.data));
        records.push(JSON.stringify({ id: m.id, sessionID: row.id, ...m.data }));
        for (const { id, ...p } of m.parts) {
          addP.run(id, m.id, row.id, c, c, JSON.stringify(p));
          records.push(JSON.stringify({ id, sessionID: row.id, messageID: m.id, ...p }));
        }
      }
    })();
    mkdirSync(storage, { recursive: true });
    const text = `${records.join("\n")}\n`;
    writeFileSync(path.join(storage, `${row.id}.jsonl`), text);
    bytes += Buffer.byteLength(text);
    n++;
  }
  db.close();
  return { input: dbFile, jqFiles: storage, bytes, count: n };
}
