#!/usr/bin/env node
// Benchmark of `pixir usage` (archive.md §3) beside ccusage, on the same archive: a generated Claude
// projects tree (bench/lib/claude-tree.mjs: the real transcripts, each copy with fresh ids) imported into
// a fresh Workspace. Measured:
//   1. `pixir usage` on the up-to-date Workspace (its catalog and usage index built by a first run):
//      target ≤ 0.5 s on ≥ 1 GiB of Logs;
//   2. `pixir import claude <tree> && pixir usage` on the unchanged tree, against
//      `ccusage daily --json --offline` reading the same tree (CLAUDE_CONFIG_DIR): target no slower.
// The token totals of both are printed, and per day where they differ.
//
//   node bench/usage.mjs                  # a tree whose Logs pass 1 GiB (760 MiB of transcripts)
//   node bench/usage.mjs --size 32MiB     # a smaller tree, for a shared machine
//   node bench/usage.mjs --keep           # leave the temp directories for a look
//
// ccusage@20.0.24 is installed here by npm into bench/.data/tools (never a dependency of the project).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generate } from "./lib/claude-tree.mjs";
import { parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const TOOLS = path.join(ROOT, "bench", ".data", "tools");
const CCUSAGE_VERSION = "20.0.24";
const CCUSAGE = path.join(TOOLS, "node_modules", ".bin", "ccusage");
const UP_TO_DATE_TARGET_MS = 500;
const RUNS = 3;

// Both tools group calls by local day: one time zone for both.
process.env.TZ ??= "UTC";

const args = process.argv.slice(2);
const sizeAt = args.indexOf("--size");
const size = parseSize(sizeAt === -1 ? "760MiB" : args[sizeAt + 1]);
const keep = args.includes("--keep");

function installCcusage() {
  if (existsSync(CCUSAGE)) return;
  mkdirSync(TOOLS, { recursive: true });
  const r = spawnSync("npm", ["install", "--prefix", TOOLS, `ccusage@${CCUSAGE_VERSION}`, "--no-audit", "--no-fund", "--no-save"], { encoding: "utf8" });
  if (r.status !== 0 || !existsSync(CCUSAGE)) {
    process.stderr.write(`could not install ccusage@${CCUSAGE_VERSION} with npm:\n${r.stderr}`);
    process.exit(2);
  }
}

/** One run of a command: wall ms, CPU ms (user + system, from GNU time) and its stdout. */
function timed(command, argv, env = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S", command, ...argv], { encoding: "utf8", maxBuffer: 1024 ** 3, env: { ...process.env, ...env } });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`${command} ${argv.slice(0, 4).join(" ")} … failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
    process.exit(2);
  }
  const [user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, cpuMs: (user + sys) * 1000, stdout: r.stdout };
}

/** The median of `RUNS` runs of `job` (wall and CPU apart), and the last run's output. */
function median(job) {
  const runs = Array.from({ length: RUNS }, job);
  const mid = (xs) => xs.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
  return { ms: mid(runs.map((r) => r.ms)), cpuMs: mid(runs.map((r) => r.cpuMs)), stdout: runs.at(-1).stdout };
}

const pixir = (ws, ...argv) => timed(process.execPath, [BIN, ...argv, "--workspace", ws]);
const ALL_DAYS = ["usage", "--by", "day", "--since", "2000-01-01"];

/** pixir's rows `{key, input, output, cache_read, cache_write, total}` and total, from `--json`. */
function pixirDays(stdout) {
  const lines = stdout.trim().split("\n").map((l) => JSON.parse(l));
  const total = lines.pop().total;
  return { days: new Map(lines.map((r) => [r.key, r])), total };
}

const tmp = mkdtempSync(path.join(os.tmpdir(), "pixir-usage-bench-"));
try {
  installCcusage();
  const config = path.join(tmp, "claude");
  const projects = path.join(config, "projects");
  const { written, units, paths } = generate(projects, size, { freshResponses: true });
  const ws = path.join(tmp, "ws");
  mkdirSync(ws);
  const imported = pixir(ws, "import", "claude", projects);
  const logBytes = readdirSync(path.join(ws, ".pixir", "sessions")).reduce((s, n) => (n.endsWith(".ndjson") ? s + statSync(path.join(ws, ".pixir", "sessions", n)).size : s), 0);
  const first = pixir(ws, ...ALL_DAYS, "--json");
  const upToDate = median(() => pixir(ws, ...ALL_DAYS, "--json"));
  const upToDateDefault = median(() => pixir(ws, "usage"));
  const importAndUsage = median(() => {
    const a = pixir(ws, "import", "claude", projects);
    const b = pixir(ws, ...ALL_DAYS, "--json");
    return { ms: a.ms + b.ms, cpuMs: a.cpuMs + b.cpuMs, stdout: b.stdout };
  });
  const cc = median(() => timed(CCUSAGE, ["daily", "--json", "--offline"], { CLAUDE_CONFIG_DIR: config }));
  // Per process, Node's own start and the command's module are a floor no Workspace changes: the same
  // report on an empty Workspace and `node -e 0`, in the same run, so the work for this archive is apart.
  const empty = path.join(tmp, "empty");
  mkdirSync(empty);
  const floor = median(() => pixir(empty, ...ALL_DAYS, "--json"));
  const node = median(() => timed(process.execPath, ["-e", "0"]));

  const mine = pixirDays(importAndUsage.stdout);
  const theirs = JSON.parse(cc.stdout);
  const ccTotal = theirs.totals;
  const mib = (b) => (b / 1024 / 1024).toFixed(1);
  const t = (r) => `${r.ms.toFixed(0).padStart(7)} ms wall ${r.cpuMs.toFixed(0).padStart(7)} ms CPU`;
  const n = (x) => (x ?? 0).toLocaleString("en-US");
  const lines = [
    `usage benchmark: ${sizeLabel(size)} of transcripts asked, ${mib(written)} MiB written (${units} sessions, ${paths.length} files), Logs ${mib(logBytes)} MiB; node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`,
    `pixir import claude (fresh, not compared)       ${t(imported)}`,
    `pixir usage, first run (builds the index)       ${t(first)}`,
    `pixir usage, up to date (all days, --json)      ${t(upToDate)}  median of ${RUNS}`,
    `pixir usage, up to date (default report)        ${t(upToDateDefault)}  median of ${RUNS}`,
    `pixir import claude && pixir usage (unchanged)  ${t(importAndUsage)}  median of ${RUNS}`,
    `start-up floor: pixir usage, empty Workspace    ${t(floor)}  median of ${RUNS}; node -e 0 ${t(node)}`,
    `pixir usage up to date, less the floor (CPU): ${(upToDate.cpuMs - floor.cpuMs).toFixed(0)} ms all days --json, ${(upToDateDefault.cpuMs - floor.cpuMs).toFixed(0)} ms the default report`,
    `ccusage daily --json --offline                  ${t(cc)}  median of ${RUNS}`,
    `import && usage: ${(cc.ms / importAndUsage.ms).toFixed(2)}× ccusage wall, ${(cc.cpuMs / importAndUsage.cpuMs).toFixed(2)}× CPU (above 1 is faster)`,
    `target up to date ≤ ${UP_TO_DATE_TARGET_MS} ms on ≥ 1 GiB of Logs: ${logBytes < 1024 ** 3 ? "not measured at this size" : upToDate.ms <= UP_TO_DATE_TARGET_MS ? "met" : "MISSED"}; target import && usage no slower than ccusage: ${importAndUsage.ms <= cc.ms ? "met" : "MISSED"}`,
    "",
    "tokens            pixir (each call once)        ccusage 20.0.24",
    `input             ${n(mine.total.input).padStart(22)}  ${n(ccTotal.inputTokens).padStart(22)}`,
    `output            ${n(mine.total.output).padStart(22)}  ${n(ccTotal.outputTokens).padStart(22)}`,
    `cache read        ${n(mine.total.cache_read).padStart(22)}  ${n(ccTotal.cacheReadTokens).padStart(22)}`,
    `cache write       ${n(mine.total.cache_write).padStart(22)}  ${n(ccTotal.cacheCreationTokens).padStart(22)}`,
    `total             ${n(mine.total.total).padStart(22)}  ${n(ccTotal.totalTokens).padStart(22)}`,
    `model calls       ${n(mine.total.calls).padStart(22)}`,
  ];
  const differing = theirs.daily.filter((d) => (mine.days.get(d.period)?.total ?? 0) !== d.totalTokens);
  const onlyMine = [...mine.days.keys()].filter((k) => !theirs.daily.some((d) => d.period === k));
  if (differing.length === 0 && onlyMine.length === 0) lines.push("every day's total is the same in both");
  else {
    lines.push(`days whose totals differ (${differing.length + onlyMine.length}):`);
    for (const d of differing) lines.push(`  ${d.period}  pixir ${n(mine.days.get(d.period)?.total)}  ccusage ${n(d.totalTokens)}  (ccusage − pixir: ${n(d.totalTokens - (mine.days.get(d.period)?.total ?? 0))})`);
    for (const k of onlyMine) lines.push(`  ${k}  pixir ${n(mine.days.get(k).total)}  ccusage –`);
  }
  lines.push("");
  process.stdout.write(lines.join("\n"));
  if ((logBytes >= 1024 ** 3 && upToDate.ms > UP_TO_DATE_TARGET_MS) || importAndUsage.ms > cc.ms) process.exitCode = 1;
} finally {
  if (keep) process.stderr.write(`kept ${tmp}\n`);
  else rmSync(tmp, { recursive: true, force: true });
}
