#!/usr/bin/env node
// Fork benchmark (docs/performance.md, "Fork pipeline"): on a generated Log, time `pixir fork` in one
// process and the four-process shell pipeline, next to `jq -c .` over the same file in the same run,
// and report every process's peak RSS.
//
//   node bench/fork.mjs                  # 1 GiB Log (generated once into bench/.data/)
//   node bench/fork.mjs --size 64MiB     # quick run
//   node bench/fork.mjs --json           # machine-readable results on stdout
//   node bench/fork.mjs --repeat 5       # runs per row (default 3); the median time is reported
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cleanWriteState, ensureLog, logFile, repoRoot } from "./lib/data.mjs";
import { MB, median, parseArgs, parseSize, positiveInt, sizeLabel } from "./lib/util.mjs";

const args = parseArgs(process.argv.slice(2), {
  size: { type: "string", default: 1024 ** 3, parse: parseSize },
  // Three runs a row, the median reported: one run of the pipeline moves by a tenth with the machine.
  repeat: { type: "string", default: 3, parse: positiveInt },
  json: { type: "boolean" },
  "skip-jq": { type: "boolean" },
});
const say = (m) => process.stderr.write(`${m}\n`);
const bin = (t) => path.join(repoRoot, "tools", t, "bin", `${t}.js`);
const TIME = "/usr/bin/time";

const { ws, log: file } = await ensureLog({ bytes: args.size, log: say });
const bytes = statSync(file).size;
const rssDir = mkdtempSync(path.join(os.tmpdir(), "pixir-fork-bench-"));

/** Remove a child Log and its write state so every run creates it afresh. */
function removeChild(child) {
  cleanWriteState(ws, child);
  rmSync(logFile(ws, child), { force: true });
}

/** Run `stages` (argv arrays) as one bash pipeline; each stage's peak RSS is taken by /usr/bin/time. */
function pipeline(name, stages, cwd) {
  const files = stages.map((_, i) => path.join(rssDir, `${name.replace(/\W+/g, "_")}-${i}.rss`));
  const quote = (a) => `'${String(a).replace(/'/g, `'\\''`)}'`;
  const script = stages.map((argv, i) => `${TIME} -f %M -o ${quote(files[i])} ${argv.map(quote).join(" ")}`).join(" | ") + " > /dev/null";
  const t0 = process.hrtime.bigint();
  const r = spawnSync("bash", ["-o", "pipefail", "-c", script], { cwd, encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stderr.slice(0, 500)}`);
  const rss = files.map((f) => Math.round(Number(readFileSync(f, "utf8").trim().split("\n").at(-1)) / 1024));
  return { seconds, rss };
}

const node = process.execPath;
const cases = [
  ["cat", () => [["cat", file]]],
  ["jq -c .", () => [["jq", "-c", ".", file]]],
  ["pixir fork (in-process)", (c) => [[node, bin("pixir"), "fork", "big", "--child-id", c, "--workspace", ws]]],
  ["pixir fork --summarize", (c) => [[node, bin("pixir"), "fork", "big", "--summarize", "--child-id", c, "--workspace", ws]]],
  [
    "cat | pixir-fork | pixir-summarize | pixir-log write",
    (c) => [
      [node, bin("pixir-log"), "cat", "big", "--workspace", ws],
      [node, bin("pixir-fork"), "--child-id", c, "--workspace", ws],
      [node, bin("pixir-summarize"), "--workspace", ws],
      [node, bin("pixir-log"), "write", "--workspace", ws],
    ],
  ],
  ["pixir fork --strategy share_v1", (c) => [[node, bin("pixir"), "fork", "big", "--strategy", "share_v1", "--child-id", c, "--workspace", ws]]],
];

const results = [];
for (const [name, make] of cases) {
  if (name.startsWith("jq") && args["skip-jq"]) continue;
  const runs = [];
  for (let i = 0; i < args.repeat; i++) {
    const child = `bench-child-${i}`;
    removeChild(child);
    say(`${name} (run ${i + 1}/${args.repeat})`);
    runs.push(pipeline(name, make(child), ws));
    say(`  ${runs.at(-1).seconds.toFixed(2)} s`);
    removeChild(child);
  }
  const seconds = median(runs.map((r) => r.seconds));
  results.push({ name, seconds, runs: runs.map((r) => r.seconds), mb_per_s: bytes / MB / seconds, rss_mib: runs.at(-1).rss });
}
rmSync(rssDir, { recursive: true, force: true });

// Ratios of throughput: "2.5× jq" means 2.5 times as fast as `jq -c .` over the same file.
const jq = results.find((r) => r.name.startsWith("jq"));
const cat = results.find((r) => r.name === "cat");
for (const r of results) {
  r.x_cat = cat.seconds / r.seconds;
  r.x_jq = jq ? jq.seconds / r.seconds : null;
}
// Targets: in-process ≥ 5× jq, the four-process pipeline ≥ 2.5× jq, every process ≤ 128 MiB.
const TARGETS = [
  ["pixir fork (in-process) ≥ 5× jq", () => results.find((r) => r.name === "pixir fork (in-process)").x_jq >= 5],
  ["pipeline ≥ 2.5× jq", () => results.find((r) => r.name.startsWith("cat |")).x_jq >= 2.5],
  ["peak RSS ≤ 128 MiB in every pixir process", () => results.filter((r) => r.name.includes("pixir")).every((r) => r.rss_mib.every((m) => m <= 128))],
];
const targets = TARGETS.filter(([name]) => jq || !name.includes("jq")).map(([name, met]) => ({ name, met: met() }));
if (args.json) {
  process.stdout.write(`${JSON.stringify({ bytes, size: sizeLabel(bytes), results, targets }, null, 2)}\n`);
} else {
  const rows = results.map((r) => [r.name, r.seconds.toFixed(2), r.mb_per_s.toFixed(1), `${r.x_cat.toFixed(3)}×`, r.x_jq === null ? "-" : `${r.x_jq.toFixed(2)}×`, r.rss_mib.join(" / ")]);
  const head = ["command", "wall s", "MB/s", "× cat", "× jq", "peak RSS MiB (per process)"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(`Fork benchmark: ${sizeLabel(bytes)} Log (${bytes} bytes), ${os.cpus().length} cores, node ${process.version}`);
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const t of targets) console.log(`target: ${t.name}: ${t.met ? "met" : "MISSED"}`);
}
process.exitCode = targets.every((t) => t.met) ? 0 : 1;
