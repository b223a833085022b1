#!/usr/bin/env node
// Two builds side by side (docs/performance.md, "Comparing two builds"): the fork and tree benchmarks of
// another checkout of this repository (BEFORE, built) and of this one, alternating round by round in one
// run on the same data, so that a machine that slows down mid-run slows both alike. Prints each row's
// median wall time for both builds and their ratio; exits 1 if a row of this build is more than
// --tolerance (default 10%) slower than the other.
//
//   node bench/compare-builds.mjs --before ../bench-before               # 200 MiB fork Log, 3 rounds
//   node bench/compare-builds.mjs --before DIR --size 64MiB --rounds 5
//
// The other checkout reads the same generated data (its bench/.data is pointed at this one's), so its
// benchmark scripts must share this one's generators (bench/gen-log.mjs and the tree Workspace's).
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import path from "node:path";
import { dataDir, repoRoot } from "./lib/data.mjs";
import { median, parseArgs, parseSize, positiveInt, sizeLabel } from "./lib/util.mjs";

const args = parseArgs(process.argv.slice(2), {
  before: { type: "string" },
  size: { type: "string", default: 200 * 1024 ** 2, parse: parseSize },
  rounds: { type: "string", default: 3, parse: positiveInt },
  tolerance: { type: "string", default: 0.1, parse: Number },
});
if (!args.before) {
  process.stderr.write("compare-builds: --before DIR (another built checkout of this repository) is required\n");
  process.exit(2);
}
const before = path.resolve(args.before);
if (!existsSync(path.join(before, "bench", "fork.mjs")) || !existsSync(path.join(before, "tools", "pixir", "dist"))) {
  process.stderr.write(`compare-builds: ${before} is not a built checkout of this repository (run pnpm install there)\n`);
  process.exit(2);
}
const say = (m) => process.stderr.write(`${m}\n`);

// The other checkout's data directory points at ours: one generated Log and one tree Workspace for both.
mkdirSync(dataDir, { recursive: true });
const theirData = path.join(before, "bench", ".data");
const link = lstatSync(theirData, { throwIfNoEntry: false });
if (link !== undefined && !link.isSymbolicLink()) {
  // Never removed here: it may hold that checkout's own generated data.
  process.stderr.write(`compare-builds: ${theirData} is a directory of its own; move it away (the other build reads this one's data through a link there)\n`);
  process.exit(2);
}
if (link === undefined || readlinkSync(theirData) !== dataDir) {
  rmSync(theirData, { force: true });
  symlinkSync(dataDir, theirData);
}

/** One run of a build's benchmark script; its JSON result. */
function run(root, script, extra) {
  const r = spawnSync(process.execPath, [path.join(root, "bench", script), ...extra], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "inherit"] });
  const start = r.stdout.indexOf("{");
  if (start === -1) throw new Error(`${root}/bench/${script} printed no result (exit ${r.status})`);
  return JSON.parse(r.stdout.slice(start));
}

/** The rows of one fork and one tree run: name -> wall seconds. */
function rowsOf(root) {
  const rows = new Map();
  const fork = run(root, "fork.mjs", ["--size", String(args.size), "--repeat", "1", "--skip-jq", "--json"]);
  for (const r of fork.results) if (r.name.includes("pixir")) rows.set(`fork: ${r.name}`, r.seconds);
  const tree = run(root, "tree.mjs", ["--runs", "1", "--skip-jq"]);
  rows.set("tree: pixir-tree --json", tree["pixir-tree --json"].median_s);
  rows.set("tree: pixir-tree --format dot", tree["pixir-tree --format dot"].median_s);
  return rows;
}

const times = { before: new Map(), after: new Map() };
const add = (into, rows) => rows.forEach((s, name) => into.set(name, [...(into.get(name) ?? []), s]));
for (let round = 1; round <= args.rounds; round++) {
  // Alternate which build goes first, so neither always runs on a warmer cache.
  const order = round % 2 === 1 ? ["before", "after"] : ["after", "before"];
  for (const which of order) {
    say(`round ${round}/${args.rounds}: ${which} (${which === "before" ? before : repoRoot})`);
    add(times[which], rowsOf(which === "before" ? before : repoRoot));
  }
}

say("");
console.log(`Two builds, ${sizeLabel(args.size)} fork Log, ${args.rounds} rounds alternating; median wall seconds`);
console.log(`before: ${before}\nafter:  ${repoRoot}`);
let slower = 0;
for (const [name, after] of times.after) {
  const was = median(times.before.get(name) ?? []);
  const now = median(after);
  const ratio = now / was;
  if (ratio > 1 + args.tolerance) slower++;
  console.log(`${name.padEnd(64)} ${was.toFixed(2).padStart(7)} s ${now.toFixed(2).padStart(7)} s  after/before ${ratio.toFixed(3)}${ratio > 1 + args.tolerance ? "  SLOWER" : ""}`);
}
process.exitCode = slower === 0 ? 0 : 1;
