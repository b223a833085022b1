#!/usr/bin/env node
// Benchmark of `pixir import claude` on one very large session (docs/performance.md, "Claude import",
// "Round 4: one huge session"): one generated transcript of `--one-session` bytes (a single chain of
// records, bench/lib/claude-tree.mjs oneSession), which is one unit of the importer, imported fresh with
// the default threads and with one thread, next to `jq -c .` over the same file. The import is one unit
// whatever its size, so its peak RSS tells whether a unit is held whole.
//
//   node bench/claude-import.mjs --one-session 76MB
//   node bench/claude-import.mjs --one-session 76MB --against /work/main   # the same rows for another build, same run
//   node bench/claude-import.mjs --one-session 76MB --grown 10   # imported, grown by 10% (the same chain, longer), imported again: the second import timed
//
// Target: peak RSS ≤ 256 MiB (GNU time's maximum resident set size); wall and CPU time are printed with the
// ratio against jq.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { oneSession } from "./lib/claude-tree.mjs";
import { parseSize, timed } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const RSS_TARGET_KIB = 256 * 1024;


export function main(args) {
  const size = parseSize(args[args.indexOf("--one-session") + 1]);
  const againstAt = args.indexOf("--against");
  const builds = [["this build", ROOT], ...(againstAt === -1 ? [] : [[args[againstAt + 1], path.resolve(args[againstAt + 1])]])];
  const keep = args.includes("--keep");
  const grownAt = args.indexOf("--grown");
  const grown = grownAt === -1 ? null : Number(args[grownAt + 1]);
  const tmp = mkdtempSync(path.join(os.tmpdir(), "pixir-claude-one-"));
  try {
    const projects = path.join(tmp, "projects");
    const file = path.join(projects, "-proj", "00000000-0000-4000-8000-000000000001.jsonl");
    const records = oneSession(file, size);
    spawnSync("sync");
    const jq = timed("jq", ["-c", ".", file]);
    const rows = [["jq -c .", jq]];
    for (const [label, root] of builds) {
      const bin = path.join(root, "tools", "pixir", "bin", "pixir.js");
      for (const [mode, env] of [["threads", {}], ["one thread", { PIXIR_SCAN_THREADS: "1" }]]) {
        const ws = path.join(tmp, "ws");
        mkdirSync(ws);
        const argv = [bin, "import", "claude", projects, "--workspace", ws];
        if (grown !== null) {
          // The first import untimed; the file then grows (the same records first) and is imported again.
          oneSession(file, size);
          timed(process.execPath, argv, { env });
          oneSession(file, size * (1 + grown / 100));
        }
        spawnSync("sync");
        rows.push([`pixir import claude (${label}, ${mode}${grown === null ? "" : `, grown ${grown}%`})`, timed(process.execPath, argv, { env })]);
        rmSync(ws, { recursive: true, force: true });
      }
    }
    const mib = (kib) => (kib / 1024).toFixed(0);
    const lines = [`claude import of one session: ${(statSync(file).size / 1e6).toFixed(1)} MB, ${records} records${grown === null ? "" : ` before it grew by ${grown}% (the size given is the grown file)`}; node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`];
    for (const [label, t] of rows) lines.push(`${label.padEnd(52)} ${t.ms.toFixed(0).padStart(7)} ms wall ${t.cpuMs.toFixed(0).padStart(7)} ms CPU  max RSS ${mib(t.rssKib).padStart(4)} MiB  ${label === "jq -c ." ? "" : `${(jq.ms / t.ms).toFixed(2)}× jq wall, ${(jq.cpuMs / t.cpuMs).toFixed(2)}× jq CPU`}`);
    const ours = rows.filter(([label]) => label.includes("this build"));
    const met = ours.every(([, t]) => t.rssKib <= RSS_TARGET_KIB);
    lines.push(`target ≤ 256 MiB RSS (this build, both modes): ${met ? "met" : "MISSED"}`, "");
    process.stdout.write(lines.join("\n"));
    if (!met) process.exitCode = 1;
  } finally {
    if (keep) process.stderr.write(`kept ${tmp}\n`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) main(process.argv.slice(2));
