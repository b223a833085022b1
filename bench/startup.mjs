#!/usr/bin/env node
// Start-up as users get it (docs/performance.md): the tools packed with `pnpm pack`, installed with
// plain `npm install` (offline, from the tarballs and their runtime dependency's), then each installed
// bin's `--version` against `node -e 0`, in interleaved rounds. The ratio of a round is the bin's time
// over node's in that round; the median of the rounds' ratios is reported, which cancels the machine's
// spells (other processes load it unevenly over a run).
//
//   pnpm bench:startup                 # 40 rounds
//   pnpm bench:startup -- --rounds 80  # more
//   pnpm bench:startup -- --json
//
// Exit status: 0 if every bin is within the target (1.5x), 1 if not, 2 if the benchmark itself failed.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { repoRoot } from "./lib/data.mjs";
import { median, parseArgs, positiveInt } from "./lib/util.mjs";
import { packRuntimeDependencies } from "../scripts/pack-deps.mjs";

const TOOLS = ["pixir-log", "pixir-fork", "pixir-summarize", "pixir-tree", "pixir"];
const TARGET_RATIO = 1.5;

let opts;
try {
  opts = parseArgs(process.argv.slice(2), { rounds: { default: 40, parse: positiveInt }, json: { type: "boolean" } });
} catch (err) {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(2);
}
const say = (msg) => process.stderr.write(`bench: ${msg}\n`);

const work = mkdtempSync(path.join(os.tmpdir(), "pixir-startup-"));
try {
  const packs = path.join(work, "packs");
  const app = path.join(work, "app");
  for (const dir of [packs, app]) execFileSync("mkdir", ["-p", dir]);
  say("packing the tools and their runtime dependencies");
  for (const t of TOOLS) execFileSync("pnpm", ["pack", "--pack-destination", packs, "--config.ignore-scripts=true"], { cwd: path.join(repoRoot, "tools", t), stdio: "ignore" });
  const tarballs = [...readdirSync(packs).map((f) => path.join(packs, f)), ...packRuntimeDependencies(packs)];
  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--cache", path.join(work, "cache"), ...new Set(tarballs)], { cwd: app, stdio: "ignore" });

  const bin = (t) => path.join(app, "node_modules", t, "bin", `${t}.js`);
  const timed = (args) => {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
    if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${r.stderr}`);
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const rows = [["node -e 0", ["-e", "0"]], ...TOOLS.map((t) => [`${t} --version`, [bin(t), "--version"]])];
  for (const [, args] of rows) timed(args); // warm the page cache
  const times = rows.map(() => []);
  for (let r = 0; r < opts.rounds; r++) {
    // A rotating order, so that no row always runs right after another.
    for (let k = 0; k < rows.length; k++) {
      const i = (k + r) % rows.length;
      times[i].push(timed(rows[i][1]));
    }
  }
  const result = rows.map(([name], i) => ({
    command: name,
    median_ms: Math.round(median(times[i]) * 10) / 10,
    ratio: Math.round(median(times[i].map((t, r) => t / times[0][r])) * 100) / 100,
  }));
  const met = result.slice(1).every((r) => r.ratio <= TARGET_RATIO);
  if (opts.json) process.stdout.write(`${JSON.stringify({ rounds: opts.rounds, node: process.version, target_ratio: TARGET_RATIO, met, rows: result })}\n`);
  else {
    process.stdout.write(`Start-up of the npm-installed bins, ${opts.rounds} interleaved rounds (ratio: median of each round's time over node -e 0's)\n`);
    for (const r of result) process.stdout.write(`  ${r.command.padEnd(28)} ${String(r.median_ms).padStart(7)} ms  ${r.ratio.toFixed(2)}x\n`);
    process.stdout.write(`target: every --version <= ${TARGET_RATIO}x node -e 0: ${met ? "met" : "MISSED"}\n`);
  }
  process.exitCode = met ? 0 : 1;
} catch (err) {
  say(err.message);
  process.exitCode = 2;
} finally {
  rmSync(work, { recursive: true, force: true });
}
