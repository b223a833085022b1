#!/usr/bin/env node
// The four-process fork pipeline, stage by stage (docs/performance.md, "Round 6: the pipeline"): runs
// `pixir-log cat big | pixir-fork | pixir-summarize | pixir-log write` in bash, with real pipes, and
// samples each stage's /proc/<pid>/stat and schedstat while it runs, so that a run prints what each
// stage spent (user and system CPU), when it ended, how long its main thread waited for a core, and, with
// --timeline, the CPU of every stage per interval: which stages work in which phase of the run. With
// --before DIR (another built checkout), the two builds alternate round by round on the same Log, and
// the medians of each stage's CPU are compared: on a shared machine, CPU per stage moves less than wall.
//
//   node bench/pipeline-stages.mjs                         # 1 GiB Log (generated once into bench/.data/)
//   node bench/pipeline-stages.mjs --size 64MiB --rounds 3
//   node bench/pipeline-stages.mjs --before ../other-checkout --rounds 5
//   node bench/pipeline-stages.mjs --timeline 500          # CPU of each stage per 500 ms
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { cleanWriteState, ensureLog, logFile, repoRoot } from "./lib/data.mjs";
import { median, parseArgs, parseSize, positiveInt } from "./lib/util.mjs";

const args = parseArgs(process.argv.slice(2), {
  size: { type: "string", default: 1024 ** 3, parse: parseSize },
  rounds: { type: "string", default: 1, parse: positiveInt },
  before: { type: "string" },
  timeline: { type: "string", parse: positiveInt },
  "skip-jq": { type: "boolean" },
});
const say = (m) => process.stderr.write(`${m}\n`);
const STAGES = ["cat", "fork", "summarize", "write"];
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

const builds = [{ name: "this", root: repoRoot }];
if (args.before) {
  const root = path.resolve(args.before);
  if (!existsSync(path.join(root, "tools", "pixir-fork", "dist", "main.cjs"))) {
    say(`pipeline-stages: ${root} is not a built checkout of this repository`);
    process.exit(2);
  }
  builds.unshift({ name: "before", root });
}

const { ws, log: file } = await ensureLog({ bytes: args.size, log: say });

/** Wall seconds of one command over the Log, its output to /dev/null (the benchmarks' `cat` and `jq` rows). */
function timed(cmd, argv) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status}): ${String(r.stderr).slice(0, 300)}`);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}
const floor = { cat: timed("cat", [file]), jq: args["skip-jq"] ? null : timed("jq", ["-c", ".", file]) };

/** user and system seconds of `pid` (all its threads), or null once it has exited. */
function cpuOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return { user: Number(f[11]) / TICKS, sys: Number(f[12]) / TICKS };
  } catch {
    return null;
  }
}

/** Seconds the main thread of `pid` ran and waited for a core (schedstat), or null. */
function schedOf(pid) {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, "utf8").trim().split(" ").map(Number);
    return { run: run / 1e9, wait: wait / 1e9 };
  } catch {
    return null;
  }
}

/** One run of the pipeline with `build`; each stage's last sample before it exited. */
async function runOnce(build, child, interval) {
  cleanWriteState(ws, child);
  rmSync(logFile(ws, child), { force: true });
  const bin = (t) => `'${process.execPath}' '${path.join(build.root, "tools", t, "bin", `${t}.js`)}'`;
  const w = `--workspace '${ws}'`;
  const script = `${bin("pixir-log")} cat big ${w} | ${bin("pixir-fork")} --child-id ${child} ${w} | ${bin("pixir-summarize")} ${w} | ${bin("pixir-log")} write ${w} > /dev/null`;
  const t0 = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - t0) / 1e9;
  const sh = spawn("bash", ["-o", "pipefail", "-c", script], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  sh.stderr.on("data", (d) => (stderr += d));
  let pids = null;
  const last = STAGES.map(() => ({ user: 0, sys: 0, run: 0, wait: 0, end: null }));
  const rows = [];
  const sample = () => {
    if (pids === null) {
      try {
        const kids = readFileSync(`/proc/${sh.pid}/task/${sh.pid}/children`, "utf8").trim().split(" ").map(Number);
        if (kids.length === STAGES.length) pids = kids;
      } catch {
        /* bash has not forked them all yet */
      }
      if (pids === null) return;
    }
    const row = pids.map((pid, i) => {
      const cpu = cpuOf(pid);
      const sched = schedOf(pid);
      const s = last[i];
      if (cpu === null || sched === null) {
        s.end ??= seconds();
        return null;
      }
      const step = cpu.user + cpu.sys - (s.user + s.sys);
      Object.assign(s, cpu, sched);
      return step;
    });
    rows.push([seconds(), row]);
  };
  const timer = setInterval(sample, interval);
  const code = await new Promise((resolve) => sh.on("exit", resolve));
  clearInterval(timer);
  const wall = seconds();
  rmSync(logFile(ws, child), { force: true });
  if (code !== 0) throw new Error(`the pipeline failed (${code}): ${stderr.slice(0, 500)}`);
  return { wall, stages: last, rows };
}

const fmt = (x) => x.toFixed(2);
const results = builds.map(() => []);
for (let r = 0; r < args.rounds; r++) {
  for (const [b, build] of builds.entries()) {
    say(`round ${r + 1}/${args.rounds}: ${build.name} (${build.root})`);
    const run = await runOnce(build, `stages-${b}-${r}`, args.timeline ?? 100);
    results[b].push(run);
    const parts = run.stages.map((s, i) => `${STAGES[i]} ${fmt(s.user + s.sys)} (sys ${fmt(s.sys)}, ended ${s.end === null ? "-" : fmt(s.end)} s, waited for a core ${fmt(s.wait)} s)`);
    say(`  wall ${fmt(run.wall)} s; ${parts.join("; ")}`);
    if (args.timeline) {
      say(`  ${"t".padStart(6)} ${STAGES.map((n) => n.padStart(9)).join(" ")}   (CPU s per ${args.timeline} ms)`);
      for (const [t, row] of run.rows) say(`  ${fmt(t).padStart(6)} ${row.map((x) => (x === null ? "-" : fmt(x)).padStart(9)).join(" ")}`);
    }
  }
}

console.log(`pipeline of ${path.basename(ws)}, ${args.rounds} round(s); medians. cat ${fmt(floor.cat)} s, jq -c . ${floor.jq === null ? "skipped" : `${fmt(floor.jq)} s`} (once, before the rounds)`);
console.log(`| build | wall s | x jq | ${STAGES.map((s) => `${s} CPU s`).join(" | ")} | all CPU s |`);
console.log(`|---|---:|---:|${STAGES.map(() => "---:").join("|")}|---:|`);
const medians = results.map((runs) => ({
  wall: median(runs.map((r) => r.wall)),
  stages: STAGES.map((_, i) => median(runs.map((r) => r.stages[i].user + r.stages[i].sys))),
  all: median(runs.map((r) => r.stages.reduce((n, s) => n + s.user + s.sys, 0))),
}));
const xJq = (wall) => (floor.jq === null ? "-" : fmt(floor.jq / wall));
for (const [b, m] of medians.entries()) console.log(`| ${builds[b].name} | ${fmt(m.wall)} | ${xJq(m.wall)} | ${m.stages.map(fmt).join(" | ")} | ${fmt(m.all)} |`);
if (medians.length === 2) {
  const [a, z] = medians;
  console.log(`| this / before | ${fmt(z.wall / a.wall)} | | ${z.stages.map((x, i) => fmt(x / a.stages[i])).join(" | ")} | ${fmt(z.all / a.all)} |`);
}
