#!/usr/bin/env node
// Runs the whole vitest suite and ends with one plain closing line, "tests: N passed, N failed",
// that CI logs and humans can read at a glance. Exit status is vitest's.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const report = path.join(root, ".tmp", "vitest-report.json");
mkdirSync(path.dirname(report), { recursive: true });
const vitest = path.join(root, "node_modules", "vitest", "vitest.mjs");
const r = spawnSync(process.execPath, [vitest, "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
});
let summary = null;
try {
  summary = JSON.parse(readFileSync(report, "utf8"));
} catch {
  /* vitest failed before writing a report */
}
if (summary) {
  const skipped = summary.numPendingTests + summary.numTodoTests;
  console.log(`tests: ${summary.numPassedTests} passed, ${summary.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ""}`);
  if (summary.numTotalTests === 0) {
    console.error("no tests ran");
    process.exit(1);
  }
}
process.exit(r.status ?? 1);
