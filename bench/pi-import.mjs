#!/usr/bin/env node
// Benchmark of `pixir import pi` (pi-interop.md §3) on the real 2.4 MB pi session
// (test/fixtures/pi/before-compaction.jsonl: 1,003 lines, v1, migrated in memory).
//
//   node bench/pi-import.mjs              # 5 timed runs, each into a fresh empty Workspace
//   node bench/pi-import.mjs --runs 9     # more runs
//   node bench/pi-import.mjs --check      # exit 1 if the median misses the target (2 s)
//
// Each run is the whole process: `pixir import pi FILE --workspace WS`, wall time from
// process.hrtime around the child. A second import of the same file (every Log `unchanged`) and an
// export of the primary back to pi are timed alongside.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { median } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const FILE = path.join(ROOT, "test", "fixtures", "pi", "before-compaction.jsonl");
const PRIMARY = "ffae836b-9420-4060-ac13-7745215f90ff";
const TARGET_MS = 2000;

const args = process.argv.slice(2);
const runsAt = args.indexOf("--runs");
const runs = runsAt === -1 ? 5 : Number(args[runsAt + 1]);
if (!Number.isInteger(runs) || runs < 1) {
  process.stderr.write("--runs must be a positive integer\n");
  process.exit(2);
}

function timed(argv) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [BIN, ...argv], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`pixir ${argv.join(" ")} failed (exit ${r.status}):\n${r.stderr}`);
    process.exit(2);
  }
  return ms;
}

const fresh = [];
const again = [];
const exports = [];
for (let i = 0; i < runs; i++) {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-pi-bench-"));
  try {
    fresh.push(timed(["import", "pi", FILE, "--workspace", ws]));
    again.push(timed(["import", "pi", FILE, "--workspace", ws]));
    exports.push(timed(["export", "pi", PRIMARY, "--workspace", ws]));
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

/** The same file through cat and jq -c ., timed the same way, so the import reads as a ratio to both. */
function floor(command, argv) {
  const start = process.hrtime.bigint();
  const r = spawnSync(command, argv, { stdio: ["ignore", "ignore", "pipe"] });
  if (r.status !== 0) throw new Error(`${command} failed: ${r.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}
const cats = Array.from({ length: runs }, () => floor("cat", [FILE]));
const jqs = Array.from({ length: runs }, () => floor("jq", ["-c", ".", FILE]));
const ratio = (base, values) => (median(base) / median(values)).toFixed(2);

const row = (label, values) => `${label.padEnd(28)} median ${median(values).toFixed(0).padStart(5)} ms   (${values.map((v) => v.toFixed(0)).join(", ")})`;
process.stdout.write(
  [
    `pi import benchmark: ${path.relative(ROOT, FILE)} (${(statSync(FILE).size / 1e6).toFixed(2)} MB), ${runs} runs, node ${process.version}`,
    row("import (fresh Workspace)", fresh),
    row("import again (unchanged)", again),
    row("export pi (to stdout)", exports),
    row("cat FILE", cats),
    row("jq -c . FILE", jqs),
    `fresh import: ${ratio(cats, fresh)}× cat, ${ratio(jqs, fresh)}× jq (throughput ratios; process start-up included in every row)`,
    `target: fresh import under ${TARGET_MS} ms: ${median(fresh) < TARGET_MS ? "met" : "MISSED"}`,
    "",
  ].join("\n"),
);
if (args.includes("--check") && !(median(fresh) < TARGET_MS)) process.exit(1);
