#!/usr/bin/env node
// Re-importing a grown family (docs/performance.md, "Round 7: the suite's time"): the CPU one import call
// costs in this process (process.cpuUsage), on the inputs of test/interop/long-lineage.test.ts.
//
//   node bench/lineage-import.mjs                   # Codex 80 → 120 rollbacks, Claude steps 1 and 40 of 40
//   node bench/lineage-import.mjs --rollbacks 40 --edits 10   # a smaller run
//   node bench/lineage-import.mjs --only codex      # or --only claude
//   node bench/lineage-import.mjs --dist lib/envelope/dist-before   # another build of the library (before/after)
//
// Codex rows: importing the nested rollout of --rollbacks rollbacks into an empty Workspace (at once), and
// importing it into a Workspace that already holds the same rollout at 2/3 of the rollbacks (grown), which
// reads the family back from disk first. Claude rows: each step of a session whose last prompt is edited
// and resent --edits times, imported after every step; the mean of the first five steps and of the last
// five are printed, and their ratio.
// Needs a build (node scripts/build.mjs): it loads lib/envelope/dist.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const opts = parseArgs(process.argv.slice(2), { rollbacks: { type: "string" }, edits: { type: "string" }, only: { type: "string" }, dist: { type: "string" } });
const { importClaude, importCodexRollouts } = await import(path.resolve(opts.dist ?? path.join(ROOT, "lib", "envelope", "dist"), "index.js"));
const ROLLBACKS = Number(opts.rollbacks ?? 120);
const EDITS = Number(opts.edits ?? 40);
const THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9";
const SESSION = "6f0c8a52-1d1e-4a3b-9c55-0d3b2a1e4f01";

const tmp = mkdtempSync(path.join(os.tmpdir(), "pixir-bench-lineage-"));
const dir = (name) => {
  const d = path.join(tmp, name);
  mkdirSync(d, { recursive: true });
  return d;
};

/** CPU seconds (user + system) of `fn` in this process. */
async function cpu(fn) {
  const start = process.cpuUsage();
  await fn();
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1e6;
}

/** The nested rollout of the long-lineage test: each rollback cuts inside the previous rollback's Log. */
function rollout(rollbacks) {
  let t = Date.parse("2026-03-01T10:00:00.000Z");
  const rec = (type, payload) => JSON.stringify({ timestamp: new Date((t += 1000)).toISOString(), type, payload });
  const U = (text) => rec("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
  const A = (text) => rec("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
  const lines = [rec("session_meta", { id: THREAD, timestamp: "2026-03-01T10:00:00.000Z", cwd: "/w", originator: "codex-tui", cli_version: "0.125.0", source: "cli", model_provider: "openai" })];
  lines.push(U("first"), A("first answer"), U("second"), A("second answer"));
  for (let k = 0; k < rollbacks; k++) {
    lines.push(rec("event_msg", { type: "thread_rolled_back", num_turns: 1 }), U(`retry ${k}`), A(`answer ${k}`), U(`more ${k}`), A(`more answer ${k}`));
  }
  return lines.map((l) => `${l}\n`).join("");
}

/** The Claude transcript of the long-lineage test after `edits` edits of the last prompt. */
function editedTranscript(edits) {
  let i = 0;
  const uuid = () => `00000000-0000-4000-8000-${String(++i).padStart(12, "0")}`;
  let t = Date.parse("2026-01-01T00:00:00.000Z");
  const lines = [];
  const record = (parent, type, message) => {
    const id = uuid();
    lines.push(JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd: "/tmp/p", sessionId: SESSION, version: "2.1.0", type, message, uuid: id, timestamp: new Date((t += 1000)).toISOString() }));
    return id;
  };
  const exchange = (parent, prompt) => {
    const u = record(parent, "user", { role: "user", content: prompt });
    return record(u, "assistant", { model: "m", id: `msg-${i}`, type: "message", role: "assistant", content: [{ type: "text", text: `answer to ${prompt}` }], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } });
  };
  let base = exchange(null, "first");
  exchange(base, "prompt 0");
  for (let k = 1; k <= edits; k++) {
    base = exchange(base, `prompt ${k - 1}, edited`);
    exchange(base, `prompt ${k}`);
  }
  return lines.map((l) => `${l}\n`).join("");
}

async function codexRows() {
  const file = path.join(dir("codex-in"), "rollout.jsonl");
  const importInto = (ws) => importCodexRollouts(ws, { paths: [{ path: file, display: file }], program: "pixir import codex", env: { CODEX_HOME: path.join(ws, "none") } });
  const from = Math.round((ROLLBACKS * 2) / 3);
  writeFileSync(file, rollout(ROLLBACKS));
  const atOnce = await cpu(() => importInto(dir("codex-once")));
  const grownWs = dir("codex-grown");
  writeFileSync(file, rollout(from));
  await importInto(grownWs);
  writeFileSync(file, rollout(ROLLBACKS));
  const grown = await cpu(() => importInto(grownWs));
  console.log(`codex, ${ROLLBACKS} rollbacks at once           ${atOnce.toFixed(2)} s CPU`);
  console.log(`codex, ${from} → ${ROLLBACKS} rollbacks (grown)      ${grown.toFixed(2)} s CPU  (${(grown / atOnce).toFixed(1)}× the import at once)`);
}

async function claudeRows() {
  const projects = dir("claude-in");
  mkdirSync(path.join(projects, "proj"));
  const file = path.join(projects, "proj", `${SESSION}.jsonl`);
  const ws = dir("claude-ws");
  const steps = [];
  for (let k = 0; k <= EDITS; k++) {
    writeFileSync(file, editedTranscript(k));
    steps.push(await cpu(() => importClaude(ws, { paths: [projects], program: "pixir import claude", env: {} })));
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  // One step is a few hundredths of a second: the first and the last five are averaged.
  const first = sum(steps.slice(1, 6)) / 5;
  const last = sum(steps.slice(-5)) / 5;
  console.log(`claude, steps 1–5 of ${EDITS} edits, each        ${first.toFixed(3)} s CPU`);
  console.log(`claude, steps ${EDITS - 4}–${EDITS} of ${EDITS} edits, each      ${last.toFixed(3)} s CPU  (${(last / first).toFixed(1)}× steps 1–5; all ${EDITS + 1} imports ${sum(steps).toFixed(2)} s)`);
}

try {
  if (opts.only !== "claude") await codexRows();
  if (opts.only !== "codex") await claudeRows();
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
