#!/usr/bin/env node
// Benchmark of `pixir import codex` (codex-interop.md §4) on a generated tree of rollouts: the real Codex
// rollouts of test/fixtures/real-sessions/codex (and ../shared's localpush ones when present), renamed (a new thread id each) and repeated until the
// tree holds --size bytes, laid out as $CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl.
//
//   node bench/codex-import.mjs                 # 1GiB tree (the issue's size)
//   node bench/codex-import.mjs --size 128MiB   # a smaller tree on a shared machine
//   node bench/codex-import.mjs --check         # exit 1 when a target is missed
//
// Rows: one import of the whole tree into an empty Workspace (wall time and peak RSS from /usr/bin/time),
// the same import again (every rollout unchanged), and over the same bytes `cat`, `jq -c .` and a plain
// copy (`cp -r`). Targets: the import at least 2× the throughput of jq, peak RSS at most 256 MiB, and
// the unchanged import at most 2 s per 1,000 rollouts.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateCodexTree } from "./lib/import-trees.mjs";
import { parseArgs, parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const TARGET_JQ_RATIO = 2;
const TARGET_RSS_MIB = 256;
const TARGET_UNCHANGED_MS_PER_1000 = 2000;

const opts = parseArgs(process.argv.slice(2), { size: { type: "string" }, check: { type: "boolean" }, keep: { type: "boolean" } });
const size = parseSize(opts.size ?? "1GiB");

/** Run a command under /usr/bin/time: wall ms and peak RSS in KiB. */
function timed(command, argv, shell = false) {
  const start = process.hrtime.bigint();
  const r = shell
    ? spawnSync("/usr/bin/time", ["-f", "%M", "bash", "-c", command], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "ignore", "pipe"] })
    : spawnSync("/usr/bin/time", ["-f", "%M", command, ...argv], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const lines = r.stderr.trim().split("\n");
  if (r.status !== 0) {
    process.stderr.write(`${command} ${argv.join(" ")} failed (exit ${r.status}):\n${r.stderr}`);
    process.exit(2);
  }
  return { ms, rssKiB: Number(lines.at(-1)) };
}

const base = mkdtempSync(path.join(os.tmpdir(), "pixir-codex-bench-"));
try {
  const home = path.join(base, "codex");
  const { bytes, count } = generateCodexTree(home, size);
  // The generated tree goes to the disk before the clock starts: the import's fsyncs would otherwise wait
  // behind the write-back of the whole tree, which is the generator's work, not the import's.
  spawnSync("sync");
  const sessions = path.join(home, "sessions");
  const ws = path.join(base, "ws");
  mkdirSync(ws);
  const imp = timed(process.execPath, [BIN, "import", "codex", sessions, "--workspace", ws]);
  const again = timed(process.execPath, [BIN, "import", "codex", sessions, "--workspace", ws]);
  const cat = timed(`find ${sessions} -name '*.jsonl' -print0 | sort -z | xargs -0 cat > /dev/null`, [], true);
  const jq = timed(`find ${sessions} -name '*.jsonl' -print0 | sort -z | xargs -0 cat | jq -c . > /dev/null`, [], true);
  const cp = timed("cp", ["-r", sessions, path.join(base, "copy")]);
  const mib = bytes / 1024 ** 2;
  const rate = (t) => `${(mib / (t.ms / 1000)).toFixed(1)} MiB/s`;
  const row = (label, t, rss = false) => `${label.padEnd(30)} ${t.ms.toFixed(0).padStart(7)} ms  ${rate(t).padStart(13)}${rss ? `  peak RSS ${(t.rssKiB / 1024).toFixed(0)} MiB` : ""}`;
  const jqRatio = jq.ms / imp.ms;
  const perThousand = (again.ms / count) * 1000;
  const met = {
    jq: jqRatio >= TARGET_JQ_RATIO,
    rss: imp.rssKiB / 1024 <= TARGET_RSS_MIB,
    unchanged: perThousand <= TARGET_UNCHANGED_MS_PER_1000,
  };
  process.stdout.write(
    [
      `codex import benchmark: ${count} rollouts, ${sizeLabel(bytes)} (${bytes} bytes; --size ${sizeLabel(size)}), node ${process.version}, ${os.cpus().length} cores`,
      row("pixir import codex", imp, true),
      row("pixir import codex (unchanged)", again, true),
      row("cat", cat),
      row("jq -c .", jq),
      row("cp -r", cp),
      `import: ${(cat.ms / imp.ms).toFixed(2)}× cat, ${jqRatio.toFixed(2)}× jq, ${(cp.ms / imp.ms).toFixed(2)}× cp (throughput ratios)`,
      `target ≥ ${TARGET_JQ_RATIO}× jq: ${met.jq ? "met" : "MISSED"}; peak RSS ≤ ${TARGET_RSS_MIB} MiB: ${met.rss ? "met" : "MISSED"}; unchanged ≤ ${TARGET_UNCHANGED_MS_PER_1000} ms per 1,000 rollouts (${perThousand.toFixed(0)} ms): ${met.unchanged ? "met" : "MISSED"}`,
      "",
    ].join("\n"),
  );
  if (opts.check && !(met.jq && met.rss && met.unchanged)) process.exitCode = 1;
} finally {
  if (!opts.keep) rmSync(base, { recursive: true, force: true });
  else process.stderr.write(`kept ${base}\n`);
}
