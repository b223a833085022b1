#!/usr/bin/env node
// Benchmark of `pixir import gemini` and `pixir import opencode` (docs/gemini-opencode-interop.md) on a
// generated archive of --size bytes, next to `jq -c .` over the same records.
//
//   node bench/agent-import.mjs --agent gemini                # 200MiB of Gemini CLI session files
//   node bench/agent-import.mjs --agent opencode --size 16MiB # a small opencode.db on a shared machine
//
// Gemini: sessions of 400 turns (a user message; a model message appended three times as Gemini does:
// a scheduled tool call, its ~2 KiB result, its tokens), laid out as ~/.gemini/tmp/<project>/chats. opencode:
// the same turns as rows of an opencode.db built from its schema (bench/lib/opencode-schema.mjs, shared with the tests), and the same
// records as a storage/ JSON tree for jq. Rows: one import into an empty Workspace (wall time and peak RSS
// from /usr/bin/time), the same import again (every session unchanged), `cat` and `jq -c .` over the bytes.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const opts = parseArgs(process.argv.slice(2), { agent: { type: "string" }, size: { type: "string" }, keep: { type: "boolean" } });
const agent = opts.agent ?? "gemini";
if (agent !== "gemini" && agent !== "opencode") throw new Error("--agent gemini|opencode");
const size = parseSize(opts.size ?? "200MiB");
const TURNS = 400;
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

function generateGemini(dir) {
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

async function generateOpencode(dir) {
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

function timed(command, argv, shell = false) {
  const start = process.hrtime.bigint();
  const r = shell
    ? spawnSync("/usr/bin/time", ["-f", "%M %U %S", "bash", "-c", command], { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] })
    : spawnSync("/usr/bin/time", ["-f", "%M %U %S", command, ...argv], { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`${command} ${argv.join(" ")} failed (exit ${r.status}):\n${r.stderr}`);
    process.exit(2);
  }
  // Peak RSS, and the CPU seconds (user + system) of the command and its children: on a loaded machine the
  // wall time includes waiting for a core, the CPU time much less so.
  const [rss, user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, rssKiB: rss, cpuMs: (user + sys) * 1000 };
}

const base = mkdtempSync(path.join(os.tmpdir(), `pixir-${agent}-bench-`));
try {
  const gen = agent === "gemini" ? generateGemini(base) : await generateOpencode(base);
  spawnSync("sync");
  const ws = path.join(base, "ws");
  mkdirSync(ws);
  const imp = timed(process.execPath, [BIN, "import", agent, gen.input, "--workspace", ws]);
  const again = timed(process.execPath, [BIN, "import", agent, gen.input, "--workspace", ws]);
  const files = `find ${gen.jqFiles} -type f -print0 | sort -z | xargs -0 cat`;
  const cat = timed(`${files} > /dev/null`, [], true);
  const jq = timed(`${files} | jq -c . > /dev/null`, [], true);
  const mib = gen.bytes / 1024 ** 2;
  const rate = (t) => `${(mib / (t.ms / 1000)).toFixed(1)} MiB/s`;
  const row = (label, t, rss = false) =>
    `${label.padEnd(34)} ${t.ms.toFixed(0).padStart(7)} ms  ${rate(t).padStart(13)}  cpu ${t.cpuMs.toFixed(0).padStart(7)} ms${rss ? `  peak RSS ${(t.rssKiB / 1024).toFixed(0)} MiB` : ""}`;
  process.stdout.write(
    [
      `${agent} import benchmark: ${gen.count} sessions of ${TURNS} turns, ${sizeLabel(gen.bytes)} of records (--size ${sizeLabel(size)}), node ${process.version}, ${os.cpus().length} cores`,
      row(`pixir import ${agent}`, imp, true),
      row(`pixir import ${agent} (unchanged)`, again, true),
      row("cat", cat),
      row("jq -c .", jq),
      `import: ${(jq.ms / imp.ms).toFixed(2)}× jq, ${(cat.ms / imp.ms).toFixed(2)}× cat (throughput ratios); unchanged re-import ${(again.ms / imp.ms).toFixed(2)}× the first import`,
      `CPU time: import ${(jq.cpuMs / imp.cpuMs).toFixed(2)}× jq; unchanged re-import ${(jq.cpuMs / again.cpuMs).toFixed(2)}× jq`,
      "",
    ].join("\n"),
  );
} finally {
  if (!opts.keep) rmSync(base, { recursive: true, force: true });
  else process.stderr.write(`kept ${base}\n`);
}
