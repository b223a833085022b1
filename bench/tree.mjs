#!/usr/bin/env node
// Benchmark of the Session Tree (tree.md): `pixir-tree --json` over the forest of a large Workspace.
//
//   node bench/tree.mjs                 # generate (once) and measure
//   node bench/tree.mjs --runs 5        # more timed runs
//   node bench/tree.mjs --check         # exit 1 if the targets (3 s, 256 MiB) are missed
//   node bench/tree.mjs --regenerate    # rebuild the Workspace even if it is up to date
//   node bench/tree.mjs --skip-jq       # leave out the jq pass over every Log (about a minute)
//   node bench/tree.mjs --generate-only # generate (once) and print the Workspace's path (bench/ls.mjs)
//
// The Workspace (bench/.data/tree-ws, git-ignored) holds 10,000 Logs, 1 GiB in all, generated
// deterministically (seeded PRNG, no clock): 2,500 root Sessions, 7,500 fork children chained up to
// depth 6 (80% replay_v1 carrying a copy of their inherited prefix, 20% share_v1 resolved from the
// parent), branch summaries on some children, and subagent runs whose child Sessions are other roots.
// Every Log is valid: fork headers carry the real prefix_digest, so share children resolve through
// the loader. A manifest next to it records the parameters; a matching manifest skips generation.
//
// Each timed run is `pixir-tree --json --workspace WS > /dev/null`, after one warm-up run, measured
// with /usr/bin/time (elapsed seconds, user+sys CPU seconds, peak RSS); the target is judged on the
// median elapsed time. `cat` and `jq -c .` of every Log (10,000 files, 1 GiB) are timed alongside, and the 1-minute load
// average is recorded, since a busy machine inflates elapsed times.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const DATA = path.join(ROOT, "bench", ".data");
const WS = path.join(DATA, "tree-ws");
const MANIFEST = path.join(DATA, "tree-ws.json");
const BIN = path.join(ROOT, "tools", "pixir-tree", "bin", "pixir-tree.js");

const PARAMS = {
  generator: 1,
  seed: "pixir-tree-bench-v1",
  logs: 10_000,
  roots: 2_500,
  bytes: 1024 ** 3,
  maxForkDepth: 6,
  shareFraction: 0.2,
};
const TARGET_SECONDS = 3;
const TARGET_RSS_MIB = 256;

const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const runsIndex = argv.indexOf("--runs");
const RUNS = runsIndex === -1 ? 3 : Number(argv[runsIndex + 1]);

// ---------------------------------------------------------------------------------------------
// Seeded PRNG: cyrb128 seeds sfc32 (public domain).

function cyrb128(str) {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < str.length; i++) {
    const k = str.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  return [(h1 ^ h2 ^ h3 ^ h4) >>> 0, (h2 ^ h1) >>> 0, (h3 ^ h1) >>> 0, (h4 ^ h1) >>> 0];
}

function prng(seed) {
  let [a, b, c, d] = cyrb128(seed);
  const next = () => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  return {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (list) => list[Math.floor(next() * list.length)],
  };
}

// ---------------------------------------------------------------------------------------------
// Content. Every data object is built with its keys in sorted order, so JSON.stringify of
// [type, ts, data] is already fork.md's canonicalJson and the prefix digest is cheap.

const WORDS = (
  "session log fork replay share prefix digest tool call result reasoning summary workspace lease " +
  "branch history event seq agent subagent context model token usage file path read write check " +
  "acción naïve 你好 données grün — “quoted” tab\there newline\nthere back\\slash {brace} [bracket]"
).split(" ");

function text(r, bytes) {
  const parts = [];
  let n = 0;
  while (n < bytes) {
    const w = r.pick(WORDS);
    parts.push(w);
    n += w.length + 1;
  }
  return parts.join(" ");
}

const BASE_TS = Date.UTC(2026, 0, 1);
const tsOf = (ms) => new Date(ms).toISOString();

/** The own Events of a Log, regenerated on demand from its seed and scale. */
function* ownEvents(log) {
  const r = prng(`${PARAMS.seed}:${log.id}`);
  let ms = BASE_TS + log.index * 60_000;
  let call = 0;
  const size = (base) => Math.max(8, Math.round(base * log.scale * (0.3 + r.next() * 1.4)));
  if (log.summary) {
    ms += 1000;
    yield {
      type: "branch_summary",
      ts: tsOf(ms),
      data: {
        limitations: ["deterministic summary of the inherited prefix"],
        parent_session_id: log.parent,
        strategy: "deterministic_operational_summary_v1",
        summary: text(r, size(600)),
      },
    };
  }
  for (const run of log.subagents) {
    ms += 1000;
    yield {
      type: "subagent_event",
      ts: tsOf(ms),
      data: { agent: "explorer", child_session_id: run.child, event: "started", status: "running", subagent_id: run.id, task: text(r, 60), workspace: WS },
    };
  }
  for (let k = 0; k < log.own; k++) {
    ms += r.int(200, 20_000);
    const ts = tsOf(ms);
    const roll = r.next();
    if (roll < 0.15) yield { type: "user_message", ts, data: { text: text(r, size(400)) } };
    else if (roll < 0.35) yield { type: "assistant_message", ts, data: { text: text(r, size(900)) } };
    else if (roll < 0.45) yield { type: "reasoning", ts, data: { item: text(r, size(700)), model: "bench-model" } };
    else if (roll < 0.65) {
      call++;
      yield { type: "tool_call", ts, data: { args: { path: `src/${text(r, 12).replace(/\W+/g, "_")}.ts` }, call_id: `c${call}`, name: "read" } };
      ms += r.int(50, 3000);
      const big = r.next() < 0.1 ? 12 : 1;
      yield { type: "tool_result", ts: tsOf(ms), data: { call_id: `c${call}`, ok: true, output: text(r, size(700 * big)) } };
    } else if (roll < 0.75) yield { type: "provider_usage", ts, data: { input_tokens: r.int(100, 90000), model: "bench-model", output_tokens: r.int(10, 4000) } };
    else if (roll < 0.8) yield { type: "workflow_event", ts, data: { event: "step", name: text(r, 20) } };
    else yield { type: "assistant_message", ts, data: { text: text(r, size(300)) } };
  }
  for (const run of log.subagents) {
    ms += 1000;
    yield {
      type: "subagent_event",
      ts: tsOf(ms),
      data: { elapsed_ms: r.int(100, 90000), event: "finished", reason: "finished", status: "completed", subagent_id: run.id, summary: text(r, 80) },
    };
  }
}

const REPLAY = new Set(["user_message", "assistant_message", "reasoning", "skill_activation", "subagent_event", "workflow_event", "tool_call", "tool_result", "permission_decision"]);

/** The resolved History of a Log (header, inherited prefix, own Events), as {seq, type, ts, data}. */
function* history(byId, log) {
  let seq = 0;
  if (log.parent !== null) {
    yield { seq: seq++, type: "session_fork", ts: log.headerTs, data: {} };
    for (const e of history(byId, byId.get(log.parent))) {
      if (e.seq > log.toSeq) break;
      if (!REPLAY.has(e.type)) continue;
      yield { seq: seq++, type: e.type, ts: e.ts, data: e.data };
    }
  }
  for (const e of ownEvents(log)) yield { seq: seq++, ...e };
}

const line = (id, sessionId, seq, e) => `${JSON.stringify({ id, session_id: sessionId, seq, ts: e.ts, type: e.type, data: e.data })}\n`;
const eventId = (sessionId, seq) => createHash("sha256").update(`${sessionId}:${seq}`).digest("hex").slice(0, 16).toUpperCase();

// ---------------------------------------------------------------------------------------------
// Plan and write.

function plan() {
  const r = prng(`${PARAMS.seed}:plan`);
  const logs = [];
  const pad = (n) => String(n).padStart(5, "0");
  for (let i = 0; i < PARAMS.roots; i++) logs.push({ id: `root-${pad(i)}`, index: i, parent: null, depth: 0, own: r.int(40, 260), subagents: [] });
  // Subagent runs: about one root in ten starts one to three, each child being a later root.
  for (const log of logs.slice(0, PARAMS.roots - 10)) {
    if (r.next() >= 0.1) continue;
    const runs = r.int(1, 3);
    for (let k = 0; k < runs; k++) log.subagents.push({ id: `sub_${log.index}_${k}`, child: logs[r.int(log.index + 1, PARAMS.roots - 1)].id });
  }
  for (let i = PARAMS.roots; i < PARAMS.logs; i++) {
    // Half pick a recent Log (which builds deep chains), half any earlier Log; depth stays <= 6.
    let parent;
    do parent = r.next() < 0.5 ? logs[r.int(Math.max(0, i - 150), i - 1)] : logs[r.int(0, i - 1)];
    while (parent.depth >= PARAMS.maxForkDepth);
    logs.push({
      id: `fork-${pad(i - PARAMS.roots)}`,
      index: i,
      parent: parent.id,
      depth: parent.depth + 1,
      strategy: r.next() < PARAMS.shareFraction ? "share_v1" : "replay_v1",
      cut: 0.3 + r.next() * 0.7,
      summary: r.next() < 0.4,
      own: r.int(5, 80),
      subagents: [],
    });
  }
  return logs;
}

function generate() {
  const started = Date.now();
  rmSync(WS, { recursive: true, force: true });
  rmSync(MANIFEST, { force: true });
  const sessions = path.join(WS, ".pixir", "sessions");
  mkdirSync(sessions, { recursive: true });
  const logs = plan();
  const byId = new Map(logs.map((l) => [l.id, l]));
  const lengths = new Map();
  let written = 0;
  for (const [i, log] of logs.entries()) {
    // Own content is scaled so the running total tracks i/N of the byte budget.
    const due = (PARAMS.bytes * i) / PARAMS.logs;
    log.scale = Math.min(6, Math.max(0.15, i === 0 ? 1 : 1 + (due - written) / (PARAMS.bytes / PARAMS.logs) / 2));
    const out = [];
    if (log.parent !== null) {
      const parentLength = lengths.get(log.parent);
      log.toSeq = Math.max(0, Math.floor((parentLength - 1) * log.cut));
      log.headerTs = tsOf(BASE_TS + log.index * 60_000);
      const digest = createHash("sha256");
      const inherited = [];
      for (const e of history(byId, byId.get(log.parent))) {
        if (e.seq > log.toSeq) break;
        if (!REPLAY.has(e.type)) continue;
        digest.update(`${JSON.stringify([e.type, e.ts, e.data])}\n`);
        inherited.push(e);
      }
      const header = {
        ts: log.headerTs,
        type: "session_fork",
        data: {
          parent_session_id: log.parent,
          fork_root_session_id: rootOf(byId, log),
          forked_to_seq: log.toSeq,
          parent_workspace: WS,
          child_workspace: WS,
          replay_event_count: inherited.length,
          from_seq: inherited[0]?.seq ?? null,
          strategy: log.strategy,
          limitations: ["bench fixture"],
          prefix_digest: `sha256:${digest.digest("hex")}`,
          open_tool_calls: [],
        },
      };
      out.push(line(eventId(log.id, 0), log.id, 0, header));
      let seq = 1;
      if (log.strategy === "replay_v1") for (const e of inherited) out.push(line(eventId(log.id, seq), log.id, seq++, e));
      else seq += inherited.length;
      for (const e of ownEvents(log)) out.push(line(eventId(log.id, seq), log.id, seq++, e));
      lengths.set(log.id, seq);
    } else {
      let seq = 0;
      for (const e of ownEvents(log)) out.push(line(eventId(log.id, seq), log.id, seq++, e));
      lengths.set(log.id, seq);
    }
    const body = out.join("");
    const file = path.join(sessions, `${log.id}.ndjson`);
    const fd = openSync(`${file}.partial`, "w");
    writeSync(fd, body);
    closeSync(fd);
    renameSync(`${file}.partial`, file);
    written += Buffer.byteLength(body);
    if (process.stderr.isTTY && i % 500 === 0) process.stderr.write(`\rgenerating ${i}/${logs.length} logs, ${(written / 1024 ** 2).toFixed(0)} MiB`);
  }
  if (process.stderr.isTTY) process.stderr.write("\n");
  const maxDepth = Math.max(...logs.map((l) => l.depth));
  const manifest = { ...PARAMS, total_bytes: written, max_depth: maxDepth, share_children: logs.filter((l) => l.strategy === "share_v1").length, seconds: (Date.now() - started) / 1000 };
  writeFileSync(MANIFEST, `${JSON.stringify(manifest)}\n`);
  return manifest;
}

function rootOf(byId, log) {
  let at = log;
  while (at.parent !== null) at = byId.get(at.parent);
  return at.id;
}

function upToDate() {
  if (!existsSync(MANIFEST) || !existsSync(WS)) return null;
  try {
    const m = JSON.parse(readFileSync(MANIFEST, "utf8"));
    for (const [k, v] of Object.entries(PARAMS)) if (m[k] !== v) return null;
    if (readdirSync(path.join(WS, ".pixir", "sessions")).length !== PARAMS.logs) return null;
    return m;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Measure.

const TIME = "/usr/bin/time";

function timed(command, args) {
  const haveTime = existsSync(TIME);
  const r = haveTime
    ? spawnSync(TIME, ["-f", "%e %U %S %M", command, ...args], { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
    : spawnSync(command, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.status !== 0) throw new Error(`${path.basename(command)} failed (${r.status}): ${r.stderr.slice(0, 500)}`);
  if (!haveTime) return { seconds: Number.NaN, cpu: Number.NaN, rssMiB: Number.NaN };
  const [seconds, user, sys, kb] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { seconds, cpu: user + sys, rssMiB: kb / 1024 };
}

function measureTree(args) {
  timed(process.execPath, [BIN, ...args]); // warm-up: page cache, code cache
  const runs = [];
  for (let i = 0; i < RUNS; i++) runs.push(timed(process.execPath, [BIN, ...args]));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const secs = runs.map((r) => r.seconds);
  return {
    median_s: median(secs),
    min_s: Math.min(...secs),
    max_s: Math.max(...secs),
    median_cpu_s: Number(median(runs.map((r) => r.cpu)).toFixed(2)),
    peak_rss_mib: Number(Math.max(...runs.map((r) => r.rssMiB)).toFixed(1)),
  };
}

if (!existsSync(BIN) || !existsSync(path.join(ROOT, "tools", "pixir-tree", "dist", "main.cjs"))) {
  console.error("pixir-tree is not built: run `node scripts/build.mjs` first");
  process.exit(2);
}
let manifest = flag("--regenerate") ? null : upToDate();
if (manifest === null) manifest = generate();
// bench/ls.mjs measures `pixir ls` over the same Workspace: it asks for the Workspace only.
if (flag("--generate-only")) {
  console.log(WS);
  process.exit(0);
}

const sessions = path.join(WS, ".pixir", "sessions");
const files = readdirSync(sessions).map((f) => path.join(sessions, f));
const bytes = files.reduce((n, f) => n + statSync(f).size, 0);
/** Seconds for `command` over every Log file at once (the floors we compare with, same run). */
const overAllLogs = (command) => {
  const r = spawnSync("bash", ["-c", `cd ${JSON.stringify(sessions)} && ${existsSync(TIME) ? `${TIME} -f "%e %M" ` : ""}${command} -- * > /dev/null`], { encoding: "utf8" });
  const [seconds] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return seconds;
};
const catFloor = overAllLogs("cat");
const jqFloor = flag("--skip-jq") ? null : overAllLogs("jq -c .");
// The machine may be shared: the load average says how far wall-clock times can be trusted.
const loadBefore = os.loadavg()[0];
const forest = measureTree(["--json", "--workspace", WS]);
const dot = measureTree(["--format", "dot", "--workspace", WS]);
const result = {
  machine: `${os.cpus().length}x ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB RAM, node ${process.version}`,
  load_average_1m: { before: Number(loadBefore.toFixed(2)), after: Number(os.loadavg()[0].toFixed(2)) },
  workspace: { logs: files.length, bytes, mib: Math.round(bytes / 1024 ** 2), max_fork_depth: manifest.max_depth, share_children: manifest.share_children },
  cat_all_logs_s: catFloor,
  jq_all_logs_s: jqFloor,
  // Throughput ratios: how many times as fast as cat (or jq -c .) over the same bytes.
  ratios: {
    "pixir-tree --json": { x_cat: Number((catFloor / forest.median_s).toFixed(3)), x_jq: jqFloor === null ? null : Number((jqFloor / forest.median_s).toFixed(2)) },
    "pixir-tree --format dot": { x_cat: Number((catFloor / dot.median_s).toFixed(3)), x_jq: jqFloor === null ? null : Number((jqFloor / dot.median_s).toFixed(2)) },
  },
  "pixir-tree --json": forest,
  "pixir-tree --format dot": dot,
  target: { seconds: TARGET_SECONDS, rss_mib: TARGET_RSS_MIB },
  met: forest.median_s <= TARGET_SECONDS && forest.peak_rss_mib <= TARGET_RSS_MIB,
};
console.log(JSON.stringify(result, null, 2));
if (flag("--check") && !result.met) process.exit(1);
