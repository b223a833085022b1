#!/usr/bin/env node
// pixir benchmarks (docs/performance.md). The one command: `pnpm bench` (= node bench/run.mjs).
//
//   pnpm bench                       # 1 GiB Log, generated once into bench/.data/ and reused
//   pnpm bench -- --size 64MiB       # quick run
//   pnpm bench -- --json > out.json  # JSON document on stdout, the table on stderr
//
// Options:
//   --size SIZE          Log size (default 1GiB)
//   --repeat N           runs per throughput and codec row; the median is reported (default 3)
//   --startup-runs N     runs per start-up row; median (default 15, at least 10)
//   --append-runs N      appends measured; median (default 11)
//   --seed TEXT          generator seed (default pixir-bench-v1)
//   --regenerate         generate the Log even if a matching one exists
//   --skip-jq            leave out the jq row (slow on big Logs); ratios to jq are then omitted
//   --only LIST          run only these sections, comma-separated: throughput, append, startup, codec
//                        (e.g. `--only append --append-runs 31` checks the append target in about a minute)
//   --json               print the results as one JSON document on stdout (the table goes to stderr)
//
// Everything is measured in this run, side by side: cat and jq on the same file, with a warm page
// cache. Wall time comes from process.hrtime around each child; peak RSS from /usr/bin/time -f %M
// wrapped around the measured process only (not the shell, not the other side of a pipe).
// Exit status: 0 if every target is met, 1 if a target is missed, 2 if the benchmark itself failed.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cleanWriteState, dataDir, ensureLog, repoRoot } from "./lib/data.mjs";
import { MB, median, MiB, parseArgs, parseSize, positiveInt, sizeLabel } from "./lib/util.mjs";

const TOOLS = ["pixir-log", "pixir-fork", "pixir-summarize", "pixir-tree", "pixir"];
const APPEND_LINE = '{"type":"user_message","data":{"text":"x"}}\n';
const TARGETS = { catRssMiB: 128, appendMs: 50, startupRatio: 1.5 };
const SECTIONS = ["throughput", "append", "startup", "codec"];

const opts = parseOptions(process.argv.slice(2), {
  size: { default: parseSize("1GiB"), parse: parseSize },
  repeat: { default: 3, parse: positiveInt },
  "startup-runs": { default: 15, parse: positiveInt },
  "append-runs": { default: 11, parse: positiveInt },
  seed: { default: "pixir-bench-v1" },
  regenerate: { type: "boolean" },
  "skip-jq": { type: "boolean" },
  only: { default: SECTIONS, parse: parseSections },
  json: { type: "boolean" },
  help: { type: "boolean" },
});

/** parseArgs, with a bad option reported in one line and exit 2 (the benchmark itself failed). */
function parseOptions(argv, spec) {
  try {
    return parseArgs(argv, spec);
  } catch (err) {
    process.stderr.write(`bench: ${err.message}\n`);
    process.exit(2);
  }
}

/** --only: a comma-separated subset of SECTIONS; anything else is a usage error. */
function parseSections(value) {
  const list = String(value).split(",").map((x) => x.trim()).filter(Boolean);
  const unknown = list.filter((x) => !SECTIONS.includes(x));
  if (list.length === 0 || unknown.length > 0) throw new Error(`--only takes a comma-separated list of ${SECTIONS.join(", ")}`);
  return list;
}
const wants = (section) => opts.only.includes(section);
if (opts.help) {
  const lines = readFileSync(new URL(import.meta.url), "utf8").split("\n").slice(1);
  const text = lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).map((l) => l.slice(3)).join("\n");
  process.stdout.write(`${text}\n`);
  process.exit(0);
}
opts["startup-runs"] = Math.max(10, opts["startup-runs"]);

const say = (msg) => process.stderr.write(`bench: ${msg}\n`);
const tmpDir = mkdtempSync(path.join(os.tmpdir(), "pixir-bench-"));
const rssFile = path.join(tmpDir, "rss");
// The measured build is a snapshot copy (bench/.data/build/), so that a rebuild of the working tree
// during the run (scripts/build.mjs empties dist/ first) cannot disturb it.
const snapshotDir = path.join(dataDir, "build");
let snapshotTools = [];
const binOf = (tool) => path.join(snapshotDir, tool, "bin", `${tool}.js`);
const libDist = () => path.join(snapshotDir, "envelope", "dist", "index.js");
const q = (s) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${String(s).replaceAll("'", "'\\''")}'`);
const round = (x, d = 2) => (Number.isFinite(x) ? Math.round(x * 10 ** d) / 10 ** d : null);

// ---------------------------------------------------------------------------------------------
// Measuring primitives.

/** Run `script` under bash; `%RSS%` in it is replaced by a /usr/bin/time prefix for the measured process. */
function timedShell(script) {
  rmSync(rssFile, { force: true });
  const full = `set -o pipefail; ${script.replace("%RSS%", `/usr/bin/time -f %M -o ${q(rssFile)}`)}`;
  const t0 = process.hrtime.bigint();
  const r = spawnSync("bash", ["-c", full], { stdio: ["ignore", "ignore", "pipe"], maxBuffer: 64 * MiB });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`command failed (exit ${r.status ?? r.signal}): ${script}\n${r.stderr}`);
  let rssKiB = null;
  if (script.includes("%RSS%")) {
    const m = /(\d+)\s*$/.exec(readFileSync(rssFile, "utf8"));
    rssKiB = m ? Number(m[1]) : null;
  }
  return { seconds, rssKiB };
}

/** Wall time of one direct spawn (no shell), in ms. */
function timedSpawn(cmd, args, input) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { input, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.status ?? r.signal}): ${r.stderr}`);
  return { ms, stdout: r.stdout.toString() };
}

// ---------------------------------------------------------------------------------------------

/** Copy the built tools and lib/envelope/dist into bench/.data/build/ and check that each bin starts. */
async function snapshotBuild() {
  const live = (rel) => path.join(repoRoot, rel);
  const ready = () => existsSync(live("lib/envelope/dist/index.js")) && existsSync(live("tools/pixir-log/dist/main.cjs"));
  for (let attempt = 0; ; attempt++) {
    if (!ready()) {
      if (attempt === 0) say("no build found; waiting for a build in progress, else building");
      if (attempt < 10) {
        await new Promise((r) => setTimeout(r, 3000));
        continue;
      }
      const r = spawnSync(process.execPath, [live("scripts/build.mjs")], { stdio: "inherit" });
      if (r.status !== 0) throw new Error("build failed");
    }
    try {
      rmSync(snapshotDir, { recursive: true, force: true });
      const tools = TOOLS.filter((t) => existsSync(live(`tools/${t}/dist/main.cjs`)));
      for (const t of tools) {
        for (const part of ["bin", "dist", "package.json"]) cpSync(live(`tools/${t}/${part}`), path.join(snapshotDir, t, part), { recursive: true });
      }
      for (const part of ["dist", "package.json"]) cpSync(live(`lib/envelope/${part}`), path.join(snapshotDir, "envelope", part), { recursive: true });
      symlinkSync(live("lib/envelope/node_modules"), path.join(snapshotDir, "envelope", "node_modules"));
      for (const t of tools) timedSpawn(process.execPath, [binOf(t), "--version"]);
      await import(libDist());
      snapshotTools = tools;
      return;
    } catch (err) {
      if (attempt >= 12) throw err;
      say(`build snapshot failed (${String(err.message).split("\n")[0]}); retrying`);
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
}

function buildInfo() {
  const git = (...args) => spawnSync("git", args, { cwd: repoRoot }).stdout?.toString().trim() ?? "";
  const dirty = git("status", "--porcelain", "--", "lib", "tools").split("\n").filter(Boolean).length;
  return { commit: git("rev-parse", "--short", "HEAD"), uncommitted_files_in_lib_and_tools: dirty, snapshot: path.relative(repoRoot, snapshotDir), tools: snapshotTools };
}

async function main() {
  mkdirSync(dataDir, { recursive: true });
  await snapshotBuild();
  const results = {
    date: new Date().toISOString(),
    machine: machineInfo(),
    build: buildInfo(),
    log: null,
    throughput: [],
    append: null,
    startup: null,
    codec: [],
    targets: [],
  };

  const { ws, log, meta } = await ensureLog({ bytes: opts.size, seed: opts.seed, regenerate: opts.regenerate, log: say });
  const bytes = statSync(log).size;
  results.log = { path: path.relative(repoRoot, log), workspace: path.relative(repoRoot, ws), session: "big", bytes, events: meta.events, counts: meta.counts, seed: meta.seed };
  say(`Log: ${results.log.path}, ${bytes} bytes (${sizeLabel(bytes)}), ${meta.events} events`);

  if (!wants("throughput")) opts["skip-jq"] = true;
  if (!opts["skip-jq"] && spawnSync("jq", ["--version"]).status !== 0) {
    say("jq is not installed; leaving out the jq row (install jq to get the ratios to jq)");
    opts["skip-jq"] = true;
  }
  if (!existsSync("/usr/bin/time")) throw new Error("/usr/bin/time is needed for peak RSS (apt-get install time)");

  // Warm the page cache so that every row reads the same cached file.
  timedShell(`cat ${q(log)} > /dev/null`);

  // ---- throughput -----------------------------------------------------------------------------
  const PL = `${q(process.execPath)} ${q(binOf("pixir-log"))}`;
  const WS = `--workspace ${q(ws)}`;
  const rows = [
    { key: "cat", label: "cat FILE > /dev/null", script: `%RSS% cat ${q(log)} > /dev/null` },
    ...(opts["skip-jq"] ? [] : [{ key: "jq", label: "jq -c . FILE > /dev/null", script: `%RSS% jq -c . ${q(log)} > /dev/null` }]),
    { key: "pixir_cat", label: "pixir-log cat big > /dev/null", script: `%RSS% ${PL} cat big ${WS} > /dev/null`, pixir: true },
    { key: "pixir_cat_pipe", label: "pixir-log cat big | cat > /dev/null", script: `%RSS% ${PL} cat big ${WS} | cat > /dev/null`, pixir: true },
    { key: "pixir_cat_type", label: "pixir-log cat big --type user_message", script: `%RSS% ${PL} cat big ${WS} --type user_message > /dev/null`, pixir: true },
    { key: "pixir_check", label: "pixir-log check big", script: `%RSS% ${PL} check big ${WS} > /dev/null`, pixir: true },
  ];
  for (const row of wants("throughput") ? rows : []) {
    const runs = [];
    for (let i = 0; i < opts.repeat; i++) {
      runs.push(timedShell(row.script));
      say(`${row.label}: run ${i + 1}/${opts.repeat} ${runs[i].seconds.toFixed(2)} s, ${(runs[i].rssKiB / 1024).toFixed(1)} MiB`);
    }
    const seconds = median(runs.map((r) => r.seconds));
    results.throughput.push({
      key: row.key,
      command: row.label,
      shell: row.script.replace("%RSS% ", ""),
      pixir: Boolean(row.pixir),
      runs: runs.map((r) => round(r.seconds, 3)),
      seconds: round(seconds, 3),
      mb_per_s: round(bytes / MB / seconds, 1),
      peak_rss_mib: round(Math.max(...runs.map((r) => r.rssKiB)) / 1024, 1),
    });
  }
  const base = Object.fromEntries(results.throughput.map((r) => [r.key, r]));
  for (const r of results.throughput) {
    r.vs_cat = round(r.mb_per_s / base.cat.mb_per_s, 3);
    r.vs_jq = base.jq ? round(r.mb_per_s / base.jq.mb_per_s, 2) : null;
  }

  // ---- append ---------------------------------------------------------------------------------
  if (wants("append")) results.append = measureAppend(ws, log);

  // ---- start-up -------------------------------------------------------------------------------
  if (wants("startup")) results.startup = measureStartup();

  // ---- codec ----------------------------------------------------------------------------------
  const codecScript = path.join(repoRoot, "bench/lib/codec-bench.mjs");
  for (const impl of wants("codec") ? ["pixir", "pixir-decode", "split2", "ndjson"] : []) {
    const runs = [];
    for (let i = 0; i < opts.repeat; i++) {
      rmSync(rssFile, { force: true });
      const r = spawnSync("/usr/bin/time", ["-f", "%M", "-o", rssFile, process.execPath, codecScript, impl, log], {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, PIXIR_BENCH_ENVELOPE: libDist() },
      });
      if (r.status !== 0) throw new Error(`codec ${impl} failed: ${r.stderr}`);
      const out = JSON.parse(r.stdout.toString());
      out.rssKiB = Number(readFileSync(rssFile, "utf8").trim().split(/\s+/).pop());
      runs.push(out);
      say(`codec ${impl}: run ${i + 1}/${opts.repeat} ${out.seconds.toFixed(2)} s, ${out.events} events`);
    }
    const seconds = median(runs.map((r) => r.seconds));
    results.codec.push({
      impl,
      description: CODEC_DESCRIPTIONS[impl],
      events: runs[0].events,
      seconds: round(seconds, 3),
      mb_per_s: round(bytes / MB / seconds, 1),
      peak_rss_mib: round(Math.max(...runs.map((r) => r.rssKiB)) / 1024, 1),
    });
  }
  const codecEvents = new Set(results.codec.map((c) => c.events));
  if (wants("codec") && (codecEvents.size !== 1 || !codecEvents.has(meta.events))) throw new Error(`codec event counts disagree: ${[...codecEvents]} vs ${meta.events}`);
  const ours = results.codec.find((c) => c.impl === "pixir");
  for (const c of results.codec) c.vs_pixir = round(c.mb_per_s / ours.mb_per_s, 2);
  results.sections = opts.only;

  // ---- targets --------------------------------------------------------------------------------
  if (wants("throughput")) {
    const catRow = base.pixir_cat;
    results.targets.push({ target: `pixir-log cat peak RSS < ${TARGETS.catRssMiB} MiB`, value: `${catRow.peak_rss_mib} MiB`, met: catRow.peak_rss_mib < TARGETS.catRssMiB });
    const pipeRow = base.pixir_cat_pipe;
    results.targets.push({ target: `pixir-log cat | cat peak RSS < ${TARGETS.catRssMiB} MiB`, value: `${pipeRow.peak_rss_mib} MiB`, met: pipeRow.peak_rss_mib < TARGETS.catRssMiB });
  }
  if (results.append) {
    results.targets.push({ target: `append to the ${sizeLabel(bytes)} Log < ${TARGETS.appendMs} ms beyond start-up`, value: `${results.append.beyond_startup_ms} ms`, met: results.append.beyond_startup_ms < TARGETS.appendMs });
  }
  for (const s of results.startup?.bins ?? []) {
    results.targets.push({ target: `${s.bin} --version <= ${TARGETS.startupRatio}x node -e 0`, value: `${s.ratio}x`, met: s.ratio <= TARGETS.startupRatio });
  }

  results.load_average_at_end = os.loadavg().map((x) => round(x, 2));
  const table = renderTable(results);
  if (opts.json) {
    process.stderr.write(table);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } else {
    process.stdout.write(table);
  }
  return results.targets.every((t) => t.met) ? 0 : 1;
}

const CODEC_DESCRIPTIONS = {
  pixir: "splitLines (lib/envelope, raw bytes) + JSON.parse per line",
  "pixir-decode": "splitLines + decodeLogLine (the full §7 line check)",
  split2: "split2(JSON.parse)",
  ndjson: "ndjson.parse()",
};

/**
 * The append's cost beyond start-up. Each round runs `--version`, then the appends, back to back, so the
 * median of the per-round differences (paired) cancels the machine's slow and fast spells, which on a
 * shared VM move start-up by tens of milliseconds between minutes; the difference of the two medians
 * (unpaired) is reported next to it. The Log is restored after each append.
 */
function measureAppend(ws, log) {
  const bin = binOf("pixir-log");
  const original = statSync(log).size;
  // A one-Event Log in the same Workspace: the same command where the Log size cannot matter.
  const tinyLog = path.join(ws, ".pixir", "sessions", "tiny.ndjson");
  const restore = () => {
    if (statSync(log).size !== original) truncateSync(log, original);
  };
  const onSignal = () => {
    restore();
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return appendRuns();
  } finally {
    restore();
    rmSync(tinyLog, { force: true });
    cleanWriteState(ws, "tiny");
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }

  function appendRuns() {
    const version = [];
    const big = [];
    const tiny = [];
    const dry = [];
    let tinySize = 0;
    const makeTiny = () => {
      rmSync(tinyLog, { force: true });
      const r = spawnSync(process.execPath, [path.join(repoRoot, "bench/gen-log.mjs"), "--events", "1", "--session", "tiny", "--out", tinyLog], { stdio: "ignore" });
      if (r.status !== 0) throw new Error("could not create the tiny Log");
      tinySize = statSync(tinyLog).size;
    };
    makeTiny();
    timedSpawn(process.execPath, [bin, "--version"]); // warm-up
    for (let i = 0; i < opts["append-runs"]; i++) {
      version.push(timedSpawn(process.execPath, [bin, "--version"]).ms);
      const a = timedSpawn(process.execPath, [bin, "append", "big", "--workspace", ws], APPEND_LINE);
      const grew = statSync(log).size - original;
      restore();
      if (grew <= 0) throw new Error(`append did not grow the Log: ${a.stdout}`);
      big.push(a.ms);
      const t = timedSpawn(process.execPath, [bin, "append", "tiny", "--workspace", ws], APPEND_LINE);
      if (statSync(tinyLog).size <= tinySize) throw new Error("append did not grow the tiny Log");
      truncateSync(tinyLog, tinySize);
      tiny.push(t.ms);
      // The same command without writing: no lease, no journal, no fsync.
      dry.push(timedSpawn(process.execPath, [bin, "append", "big", "--workspace", ws, "--dry-run"], APPEND_LINE).ms);
      if (statSync(log).size !== original) throw new Error("append --dry-run changed the Log");
    }
    const v = median(version);
    const b = median(big);
    const t = median(tiny);
    const d = median(dry);
    const paired = (runs) => median(runs.map((ms, i) => ms - version[i]));
    say(`append: version ${v.toFixed(1)} ms, append big ${b.toFixed(1)} ms, append tiny ${t.toFixed(1)} ms, dry run ${d.toFixed(1)} ms; beyond start-up (paired) ${paired(big).toFixed(1)} ms`);
    return {
      command: `echo '${APPEND_LINE.trim()}' | pixir-log append big`,
      runs: opts["append-runs"],
      log_bytes: original,
      version_ms: round(v, 1),
      append_big_ms: round(b, 1),
      append_tiny_ms: round(t, 1),
      dry_run_ms: round(d, 1),
      dry_run_beyond_startup_ms: round(paired(dry), 1),
      beyond_startup_ms: round(paired(big), 1),
      tiny_beyond_startup_ms: round(paired(tiny), 1),
      unpaired: { beyond_startup_ms: round(b - v, 1), tiny_beyond_startup_ms: round(t - v, 1), dry_run_beyond_startup_ms: round(d - v, 1) },
      restored: statSync(log).size === original,
    };
  }
}

/** node -e 0 vs each built bin's --version, in interleaved rounds; medians. */
function measureStartup() {
  const n = opts["startup-runs"];
  const bins = snapshotTools;
  const node = [];
  const per = Object.fromEntries(bins.map((b) => [b, []]));
  const shim = [];
  const shimPath = path.join(repoRoot, "node_modules", ".bin", "pixir-log");
  const haveShim = existsSync(shimPath);
  timedSpawn(process.execPath, ["-e", "0"]);
  for (const b of bins) timedSpawn(process.execPath, [binOf(b), "--version"]);
  for (let i = 0; i < n; i++) {
    node.push(timedSpawn(process.execPath, ["-e", "0"]).ms);
    for (const b of bins) per[b].push(timedSpawn(process.execPath, [binOf(b), "--version"]).ms);
    if (haveShim) {
      try {
        shim.push(timedSpawn(shimPath, ["--version"]).ms); // the live tree, not the snapshot
      } catch {
        /* a rebuild was in progress; this row is informational */
      }
    }
  }
  const nodeMs = median(node);
  say(`start-up: node -e 0 ${nodeMs.toFixed(1)} ms; ${bins.map((b) => `${b} ${median(per[b]).toFixed(1)} ms`).join(", ")}`);
  return {
    runs: n,
    node_ms: round(nodeMs, 1),
    bins: bins.map((b) => ({ bin: b, ms: round(median(per[b]), 1), ratio: round(median(per[b]) / nodeMs, 2) })),
    not_built: TOOLS.filter((t) => !bins.includes(t)),
    pnpm_shim: haveShim && shim.length > 0 ? { bin: "node_modules/.bin/pixir-log (sh shim)", ms: round(median(shim), 1), ratio: round(median(shim) / nodeMs, 2) } : null,
  };
}

function machineInfo() {
  const cpus = os.cpus();
  const jq = spawnSync("jq", ["--version"]).stdout?.toString().trim() ?? null;
  const cat = spawnSync("cat", ["--version"]).stdout?.toString().split("\n")[0] ?? null;
  return {
    node: process.version,
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memory_gib: round(os.totalmem() / 1024 ** 3, 1),
    load_average_at_start: os.loadavg().map((x) => round(x, 2)),
    os: `${os.type()} ${os.release()}`,
    jq,
    cat,
  };
}

// ---------------------------------------------------------------------------------------------
// Text output.

function grid(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join(" | ")} |`;
  return [line(headers), `|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`, ...rows.map(line)].join("\n");
}

const fmt = (x, d = 1) => (x === null || x === undefined ? "–" : Number(x).toFixed(d));

function renderTable(r) {
  const out = [];
  const m = r.machine;
  out.push(`pixir benchmarks, ${r.date}`);
  out.push(`machine: ${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, ${m.os}, node ${m.node}, ${m.jq}`);
  out.push(`load average (1/5/15 min): ${m.load_average_at_start.join(" ")} at start, ${r.load_average_at_end.join(" ")} at end`);
  out.push(`build: ${r.build.commit}${r.build.uncommitted_files_in_lib_and_tools ? ` + ${r.build.uncommitted_files_in_lib_and_tools} uncommitted files in lib/ and tools/` : ""}, measured from the snapshot ${r.build.snapshot}/`);
  out.push(`Log: ${r.log.path}: ${r.log.bytes} bytes (${sizeLabel(r.log.bytes)}), ${r.log.events} events; warm page cache; median of ${opts.repeat} runs`);
  out.push(`pixir-log runs as: node ${r.build.snapshot}/pixir-log/bin/pixir-log.js ... --workspace ${r.log.workspace}`);
  if (r.sections.length < SECTIONS.length) out.push(`sections: ${r.sections.join(", ")} (--only)`);
  out.push("");
  if (r.throughput.length > 0) {
    out.push("Throughput (ratios: throughput relative to cat / to jq -c . in this run)");
    out.push(
      grid(
        ["command", "wall s", "MB/s", "peak RSS MiB", "x cat", "x jq"],
        r.throughput.map((t) => [t.command, fmt(t.seconds, 2), fmt(t.mb_per_s), fmt(t.peak_rss_mib), fmt(t.vs_cat, 3), fmt(t.vs_jq, 2)]),
      ),
    );
    out.push("");
  }
  if (r.append) appendTable(r.append, out);
  if (r.startup) startupTable(r.startup, out);
  if (r.codec.length > 0) {
    out.push(`Codec: parse every line of the same file (median of ${opts.repeat})`);
    out.push(grid(["codec", "s", "MB/s", "peak RSS MiB", "x ours"], r.codec.map((c) => [`${c.impl}: ${c.description}`, fmt(c.seconds, 2), fmt(c.mb_per_s), fmt(c.peak_rss_mib), fmt(c.vs_pixir, 2)])));
    out.push("");
  }
  out.push("Targets");
  out.push(grid(["target", "measured", "met"], r.targets.map((t) => [t.target, t.value, t.met ? "yes" : "NO"])));
  return `${out.join("\n")}\n`;
}

function appendTable(a, out) {
  out.push(`Append one Event (median of ${a.runs}; the Log is truncated back after each run; beyond start-up: the median of each round's difference to --version, and the difference of the medians)`);
  out.push(
    grid(
      ["command", "ms", "beyond start-up ms", "difference of medians"],
      [
        ["pixir-log --version (start-up)", fmt(a.version_ms), "–", "–"],
        [`${a.command} (${sizeLabel(a.log_bytes)} Log)`, fmt(a.append_big_ms), fmt(a.beyond_startup_ms), fmt(a.unpaired.beyond_startup_ms)],
        ["... | pixir-log append tiny (1-Event Log)", fmt(a.append_tiny_ms), fmt(a.tiny_beyond_startup_ms), fmt(a.unpaired.tiny_beyond_startup_ms)],
        ["... | pixir-log append big --dry-run (no lease, no fsync)", fmt(a.dry_run_ms), fmt(a.dry_run_beyond_startup_ms), fmt(a.unpaired.dry_run_beyond_startup_ms)],
      ],
    ),
  );
  out.push("");
}

function startupTable(s, out) {
  out.push(`Start-up (median of ${s.runs})`);
  out.push(
    grid(
      ["command", "ms", "x node -e 0"],
      [
        ["node -e 0", fmt(s.node_ms), "1.00"],
        ...s.bins.map((b) => [`${b.bin} --version`, fmt(b.ms), fmt(b.ratio, 2)]),
        ...(s.pnpm_shim ? [[`${s.pnpm_shim.bin} --version`, fmt(s.pnpm_shim.ms), fmt(s.pnpm_shim.ratio, 2)]] : []),
      ],
    ),
  );
  if (s.not_built.length) out.push(`(not built yet, not measured: ${s.not_built.join(", ")})`);
  out.push("");
}

main()
  .then((code) => {
    rmSync(tmpDir, { recursive: true, force: true });
    process.exitCode = code;
  })
  .catch((err) => {
    rmSync(tmpDir, { recursive: true, force: true });
    say(`failed: ${err.stack ?? err.message}`);
    process.exitCode = 2;
  });
