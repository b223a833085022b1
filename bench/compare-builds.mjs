#!/usr/bin/env node
// Two builds side by side (docs/performance.md, "Comparing two builds"): the fork and tree benchmarks and
// the Claude, Codex and pi imports of another checkout of this repository (BEFORE, built) and of this one,
// alternating round by round in one run on the same data, so that a machine that slows down mid-run slows
// both alike. Prints each row's median wall time for both builds and their ratio, and each import's peak
// RSS; exits 1 if a row of this build is more than --tolerance (default 10%) slower than the other, or an
// import of this build peaks above 256 MiB.
//
//   node bench/compare-builds.mjs --before ../bench-before               # 200 MiB fork Log, 64 MiB trees, 3 rounds
//   node bench/compare-builds.mjs --before DIR --size 64MiB --rounds 5
//   node bench/compare-builds.mjs --before DIR --only imports --import-size 16MiB
//
// The imports run this checkout's generators once (bench/lib/import-trees.mjs: the real Claude and Codex
// sessions, each copy with fresh ids, until a tree holds --import-size bytes; pi: the real 2.4 MB session)
// and time `pixir import <kind>` of each build into a fresh Workspace under /usr/bin/time.
//
// The other checkout reads the same generated data (its bench/.data is pointed at this one's), so its
// benchmark scripts must share this one's generators (bench/gen-log.mjs and the tree Workspace's).
import { spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { dataDir, repoRoot } from "./lib/data.mjs";
import { generateClaudeTree, generateCodexTree } from "./lib/import-trees.mjs";
import { median, parseArgs, parseSize, positiveInt, sizeLabel } from "./lib/util.mjs";

const args = parseArgs(process.argv.slice(2), {
  before: { type: "string" },
  size: { type: "string", default: 200 * 1024 ** 2, parse: parseSize },
  rounds: { type: "string", default: 3, parse: positiveInt },
  tolerance: { type: "string", default: 0.1, parse: Number },
  "import-size": { type: "string", default: 64 * 1024 ** 2, parse: parseSize },
  only: { type: "string", default: "fork,tree,imports" },
});
const parts = new Set(args.only.split(","));
const unknownPart = [...parts].find((p) => !["fork", "tree", "imports"].includes(p));
if (unknownPart !== undefined) {
  process.stderr.write(`compare-builds: --only takes fork, tree and imports (comma-separated), not ${unknownPart}\n`);
  process.exit(2);
}
/** The peak RSS every import must stay within (docs/performance.md, "Targets"). */
const RSS_BOUND_KIB = 256 * 1024;
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

/** The import sources both builds read, made once. */
function importSources() {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-compare-imports-"));
  const claude = path.join(dir, "claude-projects");
  generateClaudeTree(claude, args["import-size"]);
  const codexHome = path.join(dir, "codex");
  generateCodexTree(codexHome, args["import-size"]);
  // On the disk before any clock starts: an import's fsyncs would otherwise wait behind the tree's write-back.
  spawnSync("sync");
  return {
    dir,
    sources: [
      ["claude", claude],
      ["codex", path.join(codexHome, "sessions")],
      ["pi", path.join(repoRoot, "test", "fixtures", "pi", "before-compaction.jsonl")],
    ],
  };
}

/** One `pixir import <kind> <source>` of a build into a fresh Workspace: wall seconds and peak RSS (KiB). */
function timedImport(root, kind, source) {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-compare-ws-"));
  try {
    const start = process.hrtime.bigint();
    const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, path.join(root, "tools", "pixir", "bin", "pixir.js"), "import", kind, source, "--workspace", ws], { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    if (r.status !== 0) throw new Error(`${root}: pixir import ${kind} failed (exit ${r.status}): ${r.stderr.slice(-2000)}`);
    return { seconds, rssKib: Number(r.stderr.trim().split("\n").at(-1)) };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

const imports = parts.has("imports") ? importSources() : null;
/** Peak RSS of each import row and build: name -> KiB, the highest of the rounds. */
const peaks = { before: new Map(), after: new Map() };

/** The rows of one build's runs: name -> wall seconds. */
function rowsOf(root, which) {
  const rows = new Map();
  if (parts.has("fork")) {
    const fork = run(root, "fork.mjs", ["--size", String(args.size), "--repeat", "1", "--skip-jq", "--json"]);
    for (const r of fork.results) if (r.name.includes("pixir")) rows.set(`fork: ${r.name}`, r.seconds);
  }
  if (parts.has("tree")) {
    const tree = run(root, "tree.mjs", ["--runs", "1", "--skip-jq"]);
    rows.set("tree: pixir-tree --json", tree["pixir-tree --json"].median_s);
    rows.set("tree: pixir-tree --format dot", tree["pixir-tree --format dot"].median_s);
  }
  for (const [kind, source] of imports?.sources ?? []) {
    const name = `import: pixir import ${kind}`;
    const t = timedImport(root, kind, source);
    rows.set(name, t.seconds);
    peaks[which].set(name, Math.max(peaks[which].get(name) ?? 0, t.rssKib));
  }
  return rows;
}

const times = { before: new Map(), after: new Map() };
const add = (into, rows) => rows.forEach((s, name) => into.set(name, [...(into.get(name) ?? []), s]));
for (let round = 1; round <= args.rounds; round++) {
  // Alternate which build goes first, so neither always runs on a warmer cache.
  const order = round % 2 === 1 ? ["before", "after"] : ["after", "before"];
  for (const which of order) {
    say(`round ${round}/${args.rounds}: ${which} (${which === "before" ? before : repoRoot})`);
    add(times[which], rowsOf(which === "before" ? before : repoRoot, which));
  }
}
if (imports !== null) rmSync(imports.dir, { recursive: true, force: true });

say("");
console.log(`Two builds, ${[...parts].join(", ")}: ${sizeLabel(args.size)} fork Log, ${sizeLabel(args["import-size"])} import trees, ${args.rounds} rounds alternating; median wall seconds (load ${os.loadavg()[0].toFixed(1)} at the end)`);
console.log(`before: ${before}\nafter:  ${repoRoot}`);
let slower = 0;
for (const [name, after] of times.after) {
  const was = median(times.before.get(name) ?? []);
  const now = median(after);
  const ratio = now / was;
  if (ratio > 1 + args.tolerance) slower++;
  const peak = peaks.after.get(name);
  if (peak !== undefined && peak > RSS_BOUND_KIB) slower++;
  const rss = peak === undefined ? "" : `  peak RSS ${(peaks.before.get(name) / 1024).toFixed(0)} → ${(peak / 1024).toFixed(0)} MiB${peak > RSS_BOUND_KIB ? " OVER 256" : ""}`;
  console.log(`${name.padEnd(64)} ${was.toFixed(2).padStart(7)} s ${now.toFixed(2).padStart(7)} s  after/before ${ratio.toFixed(3)}${ratio > 1 + args.tolerance ? "  SLOWER" : ""}${rss}`);
  // Every round's figure too: on a shared machine the spread says how far a median can be trusted.
  console.log(`${"".padEnd(64)} rounds: ${(times.before.get(name) ?? []).map((t) => t.toFixed(2)).join(", ")} / ${after.map((t) => t.toFixed(2)).join(", ")}`);
}
process.exitCode = slower === 0 ? 0 : 1;
