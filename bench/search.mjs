#!/usr/bin/env node
// Benchmark of `pixir search` (archive.md §2) on an imported archive of copies of the real Claude
// transcripts (bench/lib/claude-tree.mjs: every copy with fresh ids), next to what a user runs instead:
// `rg -c -i` over the raw archive (the Logs under .pixir/sessions), in the same run.
//
//   node bench/search.mjs                  # a 1 GiB archive (the issue's size)
//   node bench/search.mjs --size 100MiB    # smaller, for a shared machine
//   node bench/search.mjs --runs 5         # timed runs per query (default 5)
//   node bench/search.mjs --keep           # leave the temp directory for a look
//   node bench/search.mjs --bin FILE       # time another build's bin/pixir.js (before/after a change)
//   node bench/search.mjs --reuse DIR      # the archive in DIR: generated and imported there the first time,
//                                          # reused as it is after (the index rebuilt; each run appends 1 MB)
//
// Needs ripgrep (`apt-get install -y ripgrep`, `brew install ripgrep`) and GNU time (/usr/bin/time).
// Targets: index build ≥ 25 MB/s of Log bytes at ≤ 256 MiB RSS; queries p50 ≤ 100 ms and p95 ≤ 300 ms
// (whole processes, start-up included), faster than rg at p50; the search after appending 1 MB ≤ 1 s;
// the index ≤ 2× the Log bytes.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generate } from "./lib/claude-tree.mjs";
import { parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
// --bin FILE: another build of pixir (a copy of tools/pixir made before a change), for a before/after.
const BIN = path.resolve(opt("--bin", path.join(ROOT, "tools", "pixir", "bin", "pixir.js")));
const size = parseSize(opt("--size", "1GiB"));
const runs = Number(opt("--runs", "5"));
const reuse = opt("--reuse", null);
const keep = args.includes("--keep") || reuse !== null;

/** The representative queries: words (rare and common), phrases, paths, code identifiers, --file. */
const QUERIES = [
  { label: "word", pixir: ["annotation"], rg: "annotation" },
  { label: "word (common)", pixir: ["function"], rg: "function" },
  { label: "word (rare)", pixir: ["crashpad"], rg: "crashpad" },
  { label: "two words", pixir: ["migration", "sqlite"], rg: null },
  { label: "word minus word", pixir: ["--", "migration", "-sqlite"], rg: null },
  { label: "phrase", pixir: ['"working tree clean"'], rg: "working tree clean" },
  { label: "phrase (long)", pixir: ['"nothing to commit"'], rg: "nothing to commit" },
  { label: "path", pixir: ["lib/spotter/transcripts"], rg: "lib/spotter/transcripts" },
  { label: "path (file)", pixir: ["deep_manifest.py"], rg: "deep_manifest\\.py" },
  { label: "code identifier", pixir: ["handle_event"], rg: "handle_event" },
  { label: "code identifier (camel)", pixir: ["TranscriptRenderer"], rg: "TranscriptRenderer" },
  { label: "code identifier (snake)", pixir: ["selected_text"], rg: "selected_text" },
  { label: "prefix", pixir: ["annot*"], rg: "annot" },
  { label: "hex literal", pixir: ["0x1f"], rg: "0x1f" },
  { label: "--file (suffix)", pixir: ["--file", "deep_manifest/deep_manifest.py"], rg: "deep_manifest/deep_manifest\\.py" },
  { label: "--file (directory)", pixir: ["--file", "src/providers"], rg: "src/providers" },
  { label: "--file + word", pixir: ["--file", "README.md", "coderabbit"], rg: null },
  { label: "word --type user_message", pixir: ["review", "--type", "user_message"], rg: null },
  { label: "word --tool Bash", pixir: ["mix", "--tool", "Bash"], rg: null },
  { label: "word --sort rank", pixir: ["annotation", "--sort", "rank"], rg: "annotation" },
];

function timed(command, argv, options = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", command, ...argv], { encoding: "utf8", maxBuffer: 1024 * 1024 * 1024, cwd: options.cwd, input: options.input, stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  // rg exits 1 when it finds nothing: not a failure here.
  if (r.status !== 0 && !(command === "rg" && r.status === 1)) {
    process.stderr.write(`${command} ${argv.slice(0, 4).join(" ")} … failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
    process.exit(2);
  }
  const [rss, user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, rssKib: rss, cpuMs: (user + sys) * 1000, stdout: r.stdout };
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

function dirBytes(dir) {
  return readdirSync(dir).reduce((n, name) => n + statSync(path.join(dir, name)).size, 0);
}

if (spawnSync("rg", ["--version"]).status !== 0) {
  process.stderr.write("ripgrep (rg) is needed: apt-get install -y ripgrep (or brew install ripgrep)\n");
  process.exit(2);
}

/** A fresh archive of `size` bytes of transcript copies, imported into `tmp/ws`; or the one `--reuse` left there. */
function archive(tmp) {
  const ws = path.join(tmp, "ws");
  const made = path.join(tmp, "made.json");
  if (reuse !== null && existsSync(made)) return { ws, ...JSON.parse(readFileSync(made, "utf8")), imported: null };
  const projects = path.join(tmp, "projects");
  const { written, units } = generate(projects, size);
  mkdirSync(ws);
  const imported = timed(process.execPath, [BIN, "import", "claude", projects, "--workspace", ws]);
  if (reuse !== null || !args.includes("--keep")) rmSync(projects, { recursive: true, force: true });
  if (reuse !== null) writeFileSync(made, JSON.stringify({ written, units }));
  return { ws, written, units, imported };
}

const tmp = reuse === null ? mkdtempSync(path.join(os.tmpdir(), "pixir-search-bench-")) : (mkdirSync(reuse, { recursive: true }), path.resolve(reuse));
try {
  const { ws, written, units, imported } = archive(tmp);
  spawnSync("sync");
  const sessions = path.join(ws, ".pixir", "sessions");
  const logBytes = dirBytes(sessions);
  const logs = readdirSync(sessions).length;

  const build = timed(process.execPath, [BIN, "index", "--rebuild", "--workspace", ws, "--json"]);
  const report = JSON.parse(build.stdout);
  const mbps = logBytes / 1e6 / (build.ms / 1000);
  // `pixir index` also copied the session facts (the catalog's) into the index; one search before the timed ones.
  timed(process.execPath, [BIN, "search", "warmup", "--workspace", ws, "--json"]);

  const rows = [];
  const pixirP50s = [];
  const pixirAll = [];
  const pixirCpu = [];
  const rgCpu = [];
  let fasterAtP50 = 0;
  let compared = 0;
  for (const q of QUERIES) {
    const argv = [BIN, "search", "--workspace", ws, "--json", "--limit", "20", ...q.pixir];
    const times = [];
    const cpu = [];
    let hits = 0;
    for (let i = 0; i < runs; i++) {
      const t = timed(process.execPath, argv);
      times.push(t.ms);
      cpu.push(t.cpuMs);
      hits = t.stdout.split("\n").filter((l) => l !== "").length;
    }
    pixirAll.push(...times);
    pixirCpu.push(...cpu);
    const p50 = quantile(times, 0.5);
    pixirP50s.push(p50);
    let rgP50 = null;
    let rgLines = null;
    let rgCpuP50 = null;
    if (q.rg !== null) {
      const rgTimes = [];
      const rgCpuTimes = [];
      for (let i = 0; i < runs; i++) {
        const t = timed("rg", ["-c", "-i", "--no-filename", q.rg, sessions]);
        rgTimes.push(t.ms);
        rgCpuTimes.push(t.cpuMs);
        rgLines = t.stdout.split("\n").filter((l) => l !== "").reduce((n, l) => n + Number(l), 0);
      }
      rgP50 = quantile(rgTimes, 0.5);
      rgCpuP50 = quantile(rgCpuTimes, 0.5);
      rgCpu.push(...rgCpuTimes);
      compared++;
      if (p50 < rgP50) fasterAtP50++;
    }
    const cpuP50 = quantile(cpu, 0.5);
    const rgText = rgP50 === null ? "    —" : `${rgP50.toFixed(0).padStart(5)} ms (CPU ${rgCpuP50.toFixed(0).padStart(5)} ms, ${rgLines} matching lines: Events and their raw records)`;
    rows.push(`${q.label.padEnd(26)} pixir p50 ${p50.toFixed(0).padStart(5)} ms (CPU ${cpuP50.toFixed(0).padStart(4)} ms, ${String(hits).padStart(2)} hits shown)   rg -c ${rgText}`);
  }

  // 1 MB appended to one Log, then the next search.
  const target = readdirSync(sessions).find((n) => statSync(path.join(sessions, n)).size > 1e6)?.slice(0, -".ndjson".length);
  const line = `${JSON.stringify({ type: "user_message", data: { text: `${"lorem ipsum dolor sit amet ".repeat(37)}zanzibarquokka` } })}\n`;
  const input = line.repeat(Math.ceil(1e6 / line.length));
  timed(process.execPath, [BIN, "append", target, "--workspace", ws], { input });
  const afterAppend = timed(process.execPath, [BIN, "search", "zanzibarquokka", "--workspace", ws, "--json", "--limit", "1"]);
  const indexBytes = statSync(path.join(ws, ".pixir", "index", "search.sqlite")).size;

  // Per process, Node's own start and the command's module are a floor no index changes: `pixir search` on
  // an empty Workspace and `node -e 0`, timed in the same run, so the work of a search is reported apart.
  const empty = path.join(tmp, "empty");
  rmSync(empty, { recursive: true, force: true });
  mkdirSync(empty);
  const floorCpu = [];
  const nodeCpu = [];
  for (let i = 0; i < Math.max(runs, 5); i++) {
    floorCpu.push(timed(process.execPath, [BIN, "search", "annotation", "--workspace", empty, "--json"]).cpuMs);
    nodeCpu.push(timed(process.execPath, ["-e", "0"]).cpuMs);
  }
  const floorP50 = quantile(floorCpu, 0.5);
  const workCpu = pixirCpu.map((c) => Math.max(0, c - floorP50));

  const p50 = quantile(pixirAll, 0.5);
  const p95 = quantile(pixirAll, 0.95);
  const mib = (b) => (b / 1024 / 1024).toFixed(1);
  const ok = (b) => (b ? "met" : "MISSED");
  const lines = [
    `search benchmark (${path.relative(ROOT, BIN) || BIN}): ${sizeLabel(size)} asked, ${mib(written)} MiB of transcripts (${units} units), ${logs} Logs of ${mib(logBytes)} MiB; node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`,
    `import (not part of the targets): ${imported === null ? `reused ${tmp}` : `${(imported.ms / 1000).toFixed(1)} s`}`,
    `index build: ${(build.ms / 1000).toFixed(1)} s wall, ${(build.cpuMs / 1000).toFixed(1)} s CPU: ${mbps.toFixed(1)} MB/s of Log bytes (${(logBytes / 1e6 / (build.cpuMs / 1000)).toFixed(1)} MB per CPU second), max RSS ${(build.rssKib / 1024).toFixed(0)} MiB, ${report.documents} Events searchable`,
    ...rows,
    `queries (${QUERIES.length} × ${runs} runs, whole processes): p50 ${p50.toFixed(0)} ms, p95 ${p95.toFixed(0)} ms wall; CPU p50 ${quantile(pixirCpu, 0.5).toFixed(0)} ms, p95 ${quantile(pixirCpu, 0.95).toFixed(0)} ms (rg -c CPU p50 ${quantile(rgCpu, 0.5).toFixed(0)} ms); faster than rg at p50 on ${fasterAtP50} of ${compared}`,
    `start-up floor (CPU p50): pixir search on an empty Workspace ${floorP50.toFixed(0)} ms, node -e 0 ${quantile(nodeCpu, 0.5).toFixed(0)} ms; the searches' own work (CPU minus the floor): p50 ${quantile(workCpu, 0.5).toFixed(0)} ms, p95 ${quantile(workCpu, 0.95).toFixed(0)} ms`,
    `search after appending 1 MB: ${afterAppend.ms.toFixed(0)} ms wall, ${afterAppend.cpuMs.toFixed(0)} ms CPU`,
    `index ${mib(indexBytes)} MiB for ${mib(logBytes)} MiB of Logs: ${(indexBytes / logBytes).toFixed(2)}×`,
    `targets: build ≥ 25 MB/s ${ok(mbps >= 25)}; build ≤ 256 MiB ${ok(build.rssKib <= 256 * 1024)}; p50 ≤ 100 ms ${ok(p50 <= 100)}; p95 ≤ 300 ms ${ok(p95 <= 300)}; faster than rg at p50 ${ok(fasterAtP50 === compared)}; after append ≤ 1 s ${ok(afterAppend.ms <= 1000)}; index ≤ 2× ${ok(indexBytes <= 2 * logBytes)}`,
    "",
  ];
  process.stdout.write(lines.join("\n"));
} finally {
  if (keep) process.stderr.write(`kept ${tmp}\n`);
  else rmSync(tmp, { recursive: true, force: true });
}
