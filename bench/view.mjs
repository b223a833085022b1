#!/usr/bin/env node
// Benchmark of `pixir export html` and `pixir export md` (view.md §1.3), and of the page in Chromium.
//
//   node bench/view.mjs                    # a 10 MiB Log, 3 runs; the page of 10,000 Events in Chromium
//   node bench/view.mjs --size 64MiB       # a larger Log
//   node bench/view.mjs --no-browser       # exports only
//
// Rows: `pixir export html LOG --out FILE` and `pixir export md LOG --out FILE` on a generated Log of
// --size (a coding session: messages with Markdown and code, reasoning, tool calls and their output),
// wall time and peak RSS from /usr/bin/time (median of --runs); the page's weight (its own script and
// style, which every page carries, and the whole file); and, with Chromium at /usr/bin/chromium, the
// time from navigation to the first paint with a card in it, on a page of --events Events opened from file:// (median of
// --runs). `cat` and `jq -c .` of the same Log are timed beside them. Targets: the 10 MiB export in
// ≤ 2 s with peak RSS ≤ 128 MiB; first cards in < 1 s. Exits 1 when a target is missed.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { median, parseArgs, parseSize, positiveInt, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const CHROMIUM = "/usr/bin/chromium";
const TARGET_EXPORT_MS = 2000;
const TARGET_RSS_MIB = 128;
const TARGET_FIRST_CARD_MS = 1000;

const opts = parseArgs(process.argv.slice(2), {
  size: { default: 10 * 1024 ** 2, parse: parseSize },
  events: { default: 10_000, parse: positiveInt },
  runs: { default: 3, parse: positiveInt },
  "no-browser": { type: "boolean" },
});

/** Event `i` of a generated coding session (four kinds in turn). */
function event(i) {
  const n = i >> 2;
  switch (i % 4) {
    case 0:
      return { type: "user_message", data: { text: `Step ${n}: why does \`parse(${n})\` fail on **UTC** input? ${"The report shows a one-day shift. ".repeat(4)}` } };
    case 1:
      return { type: "tool_call", data: { call_id: `call_${n}`, name: "bash", args: { command: `npm test -- --grep case-${n}` } } };
    case 2:
      return { type: "tool_result", data: { call_id: `call_${n}`, ok: n % 7 !== 0, output: Array.from({ length: 12 }, (_, k) => `  ✓ case ${n}.${k} parses 2026-07-${String((k % 28) + 1).padStart(2, "0")}`).join("\n") } };
    default:
      return { type: "assistant_message", data: { text: `The parser drops the zone. Fix:\n\n\`\`\`ts\nexport const parse${n} = (s: string) => new Date(\`\${s}T00:00:00Z\`);\n\`\`\`\n\n| case | before | after |\n| --- | --- | --- |\n| ${n} | shifted | ok |` } };
  }
}

/** A Log of about `bytes` (or exactly `count` Events), written straight into a Workspace. */
function generate(ws, id, { bytes = Infinity, count = Infinity }) {
  const dir = path.join(ws, ".pixir", "sessions");
  mkdirSync(dir, { recursive: true });
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes && i < count; i++) {
    const ts = new Date(Date.UTC(2026, 6, 20) + i * 1000).toISOString();
    const line = `${JSON.stringify({ id: `ev-${String(i).padStart(8, "0")}`, session_id: id, seq: i, ts, ...event(i) })}\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  writeFileSync(path.join(dir, `${id}.ndjson`), lines.join(""));
  return { bytes: size, events: lines.length };
}

/** One run under /usr/bin/time: wall ms and peak RSS in MiB (`pixir ARGV`, or a shell command). */
function timed(argv, shell = null) {
  const start = process.hrtime.bigint();
  const command = shell === null ? [process.execPath, BIN, ...argv] : ["bash", "-c", shell];
  const r = spawnSync("/usr/bin/time", ["-f", "%M", ...command], { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`${shell ?? `pixir ${argv.join(" ")}`} failed (exit ${r.status}):\n${r.stderr}`);
    process.exit(2);
  }
  return { ms, rssMiB: Number(r.stderr.trim().split("\n").at(-1)) / 1024 };
}

function exportRuns(ws, format, id, out) {
  const runs = [];
  for (let i = 0; i < opts.runs; i++) {
    rmSync(out, { force: true });
    runs.push(timed(["export", format, id, "--out", out, "--workspace", ws]));
  }
  return { ms: median(runs.map((r) => r.ms)), rssMiB: Math.max(...runs.map((r) => r.rssMiB)), bytes: statSync(out).size };
}

async function firstCardMs(file) {
  const { chromium } = await import("playwright-core");
  const profile = mkdtempSync(path.join(os.tmpdir(), "pixir-bench-chromium-"));
  const args = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
  const browser = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args, viewport: { width: 1280, height: 900 } });
  try {
    const times = [];
    for (let i = 0; i < opts.runs; i++) {
      const page = await browser.newPage();
      // What a person sees: the first paint with a card in the page (test/view/view-speed.test.ts measures the same).
      await page.addInitScript(() => {
        new MutationObserver((_, observer) => {
          if (document.querySelector(".card") === null) return;
          observer.disconnect();
          requestAnimationFrame(() => (window.__frameAt = performance.now()));
        }).observe(document, { childList: true, subtree: true });
      });
      await page.goto(pathToFileURL(file).href, { waitUntil: "commit" });
      await page.waitForFunction(() => window.__frameAt !== undefined && performance.getEntriesByName("first-contentful-paint").length > 0, undefined, { polling: 10 });
      times.push(await page.evaluate(() => Math.max(window.__frameAt, performance.getEntriesByName("first-contentful-paint")[0].startTime)));
      await page.close();
    }
    return median(times);
  } finally {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

const base = mkdtempSync(path.join(os.tmpdir(), "pixir-view-bench-"));
const results = {};
try {
  const ws = path.join(base, "ws");
  const log = generate(ws, "big", { bytes: opts.size });
  const html = exportRuns(ws, "html", "big", path.join(base, "big.html"));
  const md = exportRuns(ws, "md", "big", path.join(base, "big.md"));
  // The weight every page carries: the page of a Log of one Event, less that Event.
  generate(ws, "one", { count: 1 });
  const tiny = exportRuns(ws, "html", "one", path.join(base, "one.html"));
  const file = path.join(ws, ".pixir", "sessions", "big.ndjson");
  const floor = (shell) => median(Array.from({ length: opts.runs }, () => timed([], shell).ms));
  const cat = floor(`cat '${file}' > /dev/null`);
  const jq = floor(`jq -c . '${file}' > /dev/null`);
  const mibps = (ms) => `${(log.bytes / 1024 ** 2 / (ms / 1000)).toFixed(1)} MiB/s`;
  const ratio = (ms) => `${(ms / cat).toFixed(0)}× cat time, ${(jq / ms).toFixed(2)}× jq speed`;
  console.log(`Log: ${sizeLabel(log.bytes)} (${log.events.toLocaleString("en-US")} Events), median of ${opts.runs} runs`);
  console.log(`export html  ${html.ms.toFixed(0).padStart(6)} ms  ${mibps(html.ms).padStart(11)}  peak RSS ${html.rssMiB.toFixed(0)} MiB  page ${sizeLabel(html.bytes)}  (${ratio(html.ms)})`);
  console.log(`export md    ${md.ms.toFixed(0).padStart(6)} ms  ${mibps(md.ms).padStart(11)}  peak RSS ${md.rssMiB.toFixed(0)} MiB  file ${sizeLabel(md.bytes)}  (${ratio(md.ms)})`);
  console.log(`cat          ${cat.toFixed(0).padStart(6)} ms  ${mibps(cat).padStart(11)}`);
  console.log(`jq -c .      ${jq.toFixed(0).padStart(6)} ms  ${mibps(jq).padStart(11)}`);
  console.log(`page weight  ${(tiny.bytes / 1024).toFixed(0)} KiB of script, style and frame in every page`);
  results.export = html.ms <= TARGET_EXPORT_MS || log.bytes > 10 * 1024 ** 2;
  results.rss = html.rssMiB <= TARGET_RSS_MIB;
  if (!opts["no-browser"]) {
    if (!existsSync(CHROMIUM)) console.log(`first cards  skipped: ${CHROMIUM} is missing`);
    else {
      generate(ws, "page", { count: opts.events });
      const file = path.join(base, "page.html");
      rmSync(file, { force: true });
      timed(["export", "html", "page", "--out", file, "--workspace", ws]);
      const ms = await firstCardMs(file);
      console.log(`first cards  ${ms.toFixed(0).padStart(6)} ms  in Chromium, page of ${opts.events.toLocaleString("en-US")} Events (${sizeLabel(statSync(file).size)}), from navigation`);
      results.firstCard = ms < TARGET_FIRST_CARD_MS;
    }
  }
  const verdict = (ok) => (ok === undefined ? "not measured" : ok ? "met" : "MISSED");
  console.log(
    `targets: 10 MiB export ≤ ${TARGET_EXPORT_MS} ms: ${verdict(results.export)}; peak RSS ≤ ${TARGET_RSS_MIB} MiB: ${verdict(results.rss)}; first cards < ${TARGET_FIRST_CARD_MS} ms: ${verdict(results.firstCard)}`,
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
if (Object.values(results).some((ok) => ok === false)) process.exit(1);
