#!/usr/bin/env node
// Benchmark of `pixir import claude` (claude-interop.md §4.6): a generated projects tree made of the real
// transcripts under test/fixtures/real-sessions/claude (each unit copied with fresh ids: its session,
// record and agent ids all new), in project directories of about 50 units, imported into a fresh Workspace,
// next to `cat`, `jq -c .` and a
// plain copy (`cp -r`) of the same bytes. Then the unchanged tree is imported again, and 1,000 small
// unchanged transcripts are imported again (the §4.3 target: ≤ 2 s).
//
//   node bench/claude-import.mjs                 # a 1 GiB tree (the size)
//   node bench/claude-import.mjs --size 128MiB   # smaller, for a shared machine
//   node bench/claude-import.mjs --keep          # leave the temp directories (and the projects tree) for a look
//   node bench/claude-import.mjs --one-session 76MB   # one huge session instead (bench/claude-one-session.mjs)
//
// Targets: pixir's import takes at most half jq's time (≥ 2× jq), and at most 256 MiB resident. Wall times are whole processes
// (process.hrtime around the child); the RSS is GNU time's maximum resident set size.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { FIXTURES, freshUuid, generate } from "./lib/claude-tree.mjs";
import { parseSize, sizeLabel, timed } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const JQ_RATIO_TARGET = 2;
const RSS_TARGET_KIB = 256 * 1024;
const UNCHANGED_TARGET_MS = 2000;

const args = process.argv.slice(2);
if (args.includes("--one-session")) {
  (await import("./claude-one-session.mjs")).main(args);
  process.exit();
}
const sizeAt = args.indexOf("--size");
const size = parseSize(sizeAt === -1 ? "1GiB" : args[sizeAt + 1]);
const keep = args.includes("--keep");


const tmp = mkdtempSync(path.join(os.tmpdir(), "pixir-claude-bench-"));
try {
  const projects = path.join(tmp, "projects");
  const { written, units, paths } = generate(projects, size);
  // The generated tree goes to the disk before the clock starts: the import's fsyncs would otherwise wait
  // behind the write-back of the whole tree, which is the generator's work, not the import's.
  spawnSync("sync");
  const ws = path.join(tmp, "ws");
  mkdirSync(ws);
  const cat = timed("cat", paths);
  const jq = timed("jq", ["-c", ".", ...paths]);
  const copy = timed("cp", ["-r", projects, path.join(tmp, "copy")]);
  // What the rows before wrote is on the disk before the import's clock starts (its fsyncs would wait
  // behind that write-back), and the copy is removed only after the imports: on ext4 without a journal,
  // files created within minutes of many deletions nearby are slow to allocate (the allocator skips
  // recently freed inodes), which would be charged to the import.
  spawnSync("sync");
  const fresh = timed(process.execPath, [BIN, "import", "claude", projects, "--workspace", ws]);
  const again = timed(process.execPath, [BIN, "import", "claude", projects, "--workspace", ws]);
  rmSync(path.join(tmp, "copy"), { recursive: true, force: true });
  // A run over an empty projects root: the start-up every run pays once, whatever the number of files.
  mkdirSync(path.join(tmp, "empty-projects"));
  const idle = timed(process.execPath, [BIN, "import", "claude", path.join(tmp, "empty-projects"), "--workspace", ws]);
  const logBytes = readdirSync(path.join(ws, ".pixir", "sessions")).reduce((s, n) => s + statSync(path.join(ws, ".pixir", "sessions", n)).size, 0);
  rmSync(ws, { recursive: true, force: true });
  if (!keep) rmSync(projects, { recursive: true, force: true });

  // 1,000 small transcripts, imported, then imported again unchanged.
  const small = path.join(tmp, "small");
  const one = readFileSync(path.join(FIXTURES, "agent-history", "session-01.jsonl")).toString("latin1");
  for (let i = 0; i < 1000; i++) {
    const id = freshUuid(`small:${i}`);
    const dir = path.join(small, `-small-${Math.floor(i / 100)}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${id}.jsonl`), one.replaceAll("06090cb1-3e64-433a-bc7e-a621c0f596d2", id), "latin1");
  }
  const ws2 = path.join(tmp, "ws2");
  mkdirSync(ws2);
  timed(process.execPath, [BIN, "import", "claude", small, "--workspace", ws2]);
  const unchanged = timed(process.execPath, [BIN, "import", "claude", small, "--workspace", ws2]);

  const mib = (b) => (b / 1024 / 1024).toFixed(1);
  const row = (label, t) =>
    `${label.padEnd(34)} ${t.ms.toFixed(0).padStart(7)} ms wall ${t.cpuMs.toFixed(0).padStart(7)} ms CPU  ${(written / 1024 / 1024 / (t.ms / 1000)).toFixed(1).padStart(7)} MiB/s  max RSS ${(t.rssKib / 1024).toFixed(0).padStart(4)} MiB`;
  const jqRatio = jq.ms / fresh.ms;
  const files = new Set(paths).size;
  const perThousand = idle.ms + ((again.ms - idle.ms) * 1000) / files;
  process.stdout.write(
    [
      `claude import benchmark: ${sizeLabel(size)} asked, ${mib(written)} MiB written (${units} units, ${files} files), Logs ${mib(logBytes)} MiB; node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`,
      row("cat (all files)", cat),
      row("jq -c . (all files)", jq),
      row("cp -r (plain copy)", copy),
      row("pixir import claude (fresh)", fresh),
      row("pixir import claude (unchanged)", again),
      `fresh import: ${(cat.ms / fresh.ms).toFixed(2)}× cat, ${jqRatio.toFixed(2)}× jq, ${(copy.ms / fresh.ms).toFixed(2)}× cp (wall-time ratios: above 1 is faster than the other)`,
      `CPU time: ${(jq.cpuMs / fresh.cpuMs).toFixed(2)}× jq (the rest of the wall time is waiting: every Log, lease and directory is fsynced)`,
      `target ≥ ${JQ_RATIO_TARGET}× jq: ${jqRatio >= JQ_RATIO_TARGET ? "met" : "MISSED"}; target ≤ 256 MiB RSS: ${fresh.rssKib <= RSS_TARGET_KIB ? "met" : "MISSED"}`,
      `1,000 small unchanged transcripts imported again: ${unchanged.ms.toFixed(0)} ms (target ≤ ${UNCHANGED_TARGET_MS} ms: ${unchanged.ms <= UNCHANGED_TARGET_MS ? "met" : "MISSED"})`,
      `the unchanged tree: ${files} files in ${again.ms.toFixed(0)} ms (start-up ${idle.ms.toFixed(0)} ms), so 1,000 such files in ${perThousand.toFixed(0)} ms (target ≤ ${UNCHANGED_TARGET_MS} ms: ${perThousand <= UNCHANGED_TARGET_MS ? "met" : "MISSED"})`,
      "",
    ].join("\n"),
  );
  const met = jqRatio >= JQ_RATIO_TARGET && fresh.rssKib <= RSS_TARGET_KIB && unchanged.ms <= UNCHANGED_TARGET_MS && perThousand <= UNCHANGED_TARGET_MS;
  if (!met) process.exitCode = 1;
} finally {
  if (keep) process.stderr.write(`kept ${tmp}\n`);
  else rmSync(tmp, { recursive: true, force: true });
}
