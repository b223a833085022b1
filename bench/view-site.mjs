#!/usr/bin/env node
// Benchmark of `pixir export html --all` (archive.md §4): the static site of a whole imported archive of
// real transcripts, in one process, against what a user would run instead today: one
// `pixir export html <root> --out FILE` per root family (a process each), on the same Workspace.
//
//   node bench/view-site.mjs                 # an archive of ≥ 200 MiB of Logs
//   node bench/view-site.mjs --size 20MiB    # a small one, to check the script
//
// The archive: the real Claude and Codex fixtures (test/fixtures/real-sessions) copied --size / 15 MB
// times, each copy's session ids changed in file names and records alike (so every copy is a session of
// its own), then imported with `pixir import claude` and `pixir import codex`. Rows: the first
// `export html --all` (every page written), a rerun with nothing changed, and the per-family loop. Targets:
// first run ≤ 30 s for ≥ 200 MiB, rerun ≤ 2 s. Each row also gives its CPU seconds (user + sys of all
// threads, /usr/bin/time), and the load average is printed before and after: on a shared machine the CPU
// seconds are the figure that depends least on the load. claude-code-log is a Python tool and pip is not
// reachable here, so it is not timed (docs/performance.md says so). Exits 1 when a target is missed.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const FIXTURES = path.join(ROOT, "test", "fixtures", "real-sessions");
const TARGET_FIRST_MS = 30_000;
const TARGET_RERUN_MS = 2_000;
const TARGET_MIN_BYTES = 200 * 1024 ** 2;

const opts = parseArgs(process.argv.slice(2), { size: { default: 200 * 1024 ** 2, parse: parseSize }, "no-loop": { type: "boolean" } });

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Copy `n` of the fixture tree: every UUID (session and thread ids) gets the copy's number in its last digits. */
function copyFixtures(dir, n) {
  const renamed = (text) => text.replace(UUID, (u) => `${u.slice(0, 28)}${n.toString(16).padStart(8, "0")}`);
  const walk = (from, to) => {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) {
      const src = path.join(from, name);
      const dst = path.join(to, renamed(name));
      if (statSync(src).isDirectory()) walk(src, dst);
      else if (name.endsWith(".jsonl")) writeFileSync(dst, renamed(readFileSync(src, "utf8")));
    }
  };
  walk(path.join(FIXTURES, "claude"), path.join(dir, "claude", `copy-${n}`));
  walk(path.join(FIXTURES, "codex"), path.join(dir, "codex", `copy-${n}`));
}

const TIME = "/usr/bin/time";

/** One run: wall ms, and CPU seconds (user + sys, all threads) from /usr/bin/time when it is there. */
function pixir(ws, ...args) {
  const withTime = existsSync(TIME);
  const argv = withTime ? [TIME, "-f", "pixir-cpu %U %S", process.execPath, BIN, ...args] : [process.execPath, BIN, ...args];
  const start = process.hrtime.bigint();
  const r = spawnSync(argv[0], argv.slice(1), { cwd: ws, encoding: "utf8", maxBuffer: 1 << 28 });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`pixir ${args.join(" ")} failed (exit ${r.status}):\n${r.stderr}`);
    process.exit(2);
  }
  const cpu = /pixir-cpu (\S+) (\S+)\s*$/.exec(r.stderr);
  return { ms, cpu: cpu === null ? null : Number(cpu[1]) + Number(cpu[2]), stdout: r.stdout };
}

const cpuText = (run) => (run.cpu === null ? "" : `  ${run.cpu.toFixed(2)} s CPU`);

const logBytes = (ws) => readdirSync(path.join(ws, ".pixir", "sessions")).reduce((n, f) => n + statSync(path.join(ws, ".pixir", "sessions", f)).size, 0);

const work = mkdtempSync(path.join(os.tmpdir(), "pixir-bench-site-"));
try {
  const ws = path.join(work, "archive");
  mkdirSync(ws);
  const sources = path.join(work, "sources");
  const fixtureBytes = 15 * 1024 ** 2;
  const copies = Math.max(1, Math.ceil(opts.size / fixtureBytes));
  for (let n = 0; n < copies; n++) copyFixtures(sources, n);
  process.stderr.write(`importing ${copies} copies of the real fixtures…\n`);
  // Each copy is a projects folder of its own (its source folders are the projects).
  const copiesOf = (agent) => readdirSync(path.join(sources, agent)).map((d) => path.join(sources, agent, d));
  // Ids that are not UUIDs (the hand-made stage0 files) repeat across copies: --lenient skips them.
  pixir(ws, "import", "claude", "--lenient", ...copiesOf("claude"));
  pixir(ws, "import", "codex", "--lenient", ...copiesOf("codex"));
  const bytes = logBytes(ws);
  const loadBefore = os.loadavg()[0];
  const site = path.join(work, "site");
  const first = pixir(ws, "export", "html", "--all", "--out", site, "--json");
  const report = JSON.parse(first.stdout);
  const rerun = pixir(ws, "export", "html", "--all", "--out", site, "--json");
  const again = JSON.parse(rerun.stdout);
  let loopMs = null;
  if (!opts["no-loop"]) {
    // What a user runs today for the same pages: one export per root family, a process each.
    const roots = readdirSync(path.join(site, "sessions")).map((f) => f.replace(/\.html$/, ""));
    const out = path.join(work, "loop");
    mkdirSync(out);
    const start = process.hrtime.bigint();
    for (const id of roots) pixir(ws, "export", "html", id, "--out", path.join(out, `${id}.html`));
    loopMs = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const line = (label, ms, extra = "") => `${label.padEnd(28)} ${String(Math.round(ms)).padStart(7)} ms${extra}`;
  const lines = [
    `archive: ${sizeLabel(bytes)} of Logs, ${report.sessions} sessions, ${report.pages} root families (${copies} copies of the real fixtures)`,
    line("export html --all (first)", first.ms, `${cpuText(first)}  ${report.written} pages, ${sizeLabel(report.bytes)} written, ${(bytes / 1024 ** 2 / (first.ms / 1000)).toFixed(1)} MiB/s`),
    line("export html --all (rerun)", rerun.ms, `${cpuText(rerun)}  ${again.written} pages written, ${again.unchanged} unchanged`),
  ];
  if (loopMs !== null) lines.push(line("per-family loop", loopMs, `  ${report.pages} processes  (--all is ${(loopMs / first.ms).toFixed(1)}× faster)`));
  lines.push(`load average (1 min): ${loadBefore.toFixed(1)} before the exports, ${os.loadavg()[0].toFixed(1)} after`);
  lines.push("claude-code-log: not timed (a Python tool; pip is not reachable on this machine)");
  const met = { size: bytes >= TARGET_MIN_BYTES, first: first.ms <= TARGET_FIRST_MS, rerun: rerun.ms <= TARGET_RERUN_MS && again.written === 0 };
  const verdict = (ok) => (ok ? "met" : "MISSED");
  lines.push(`targets: archive ≥ 200 MiB: ${met.size ? "yes" : "no (a smaller run)"}; first run ≤ 30 s: ${verdict(met.first)}; rerun ≤ 2 s with nothing written: ${verdict(met.rerun)}`);
  process.stdout.write(`${lines.join("\n")}\n`);
  if (!met.first || !met.rerun) process.exitCode = 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
