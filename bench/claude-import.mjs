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
//
// Targets: pixir's import takes at most half jq's time (≥ 2× jq), and at most 256 MiB resident. Wall times are whole processes
// (process.hrtime around the child); the RSS is GNU time's maximum resident set size.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const FIXTURES = path.resolve(ROOT, "test/fixtures/real-sessions/claude");
const UNITS_PER_PROJECT = 50;
const JQ_RATIO_TARGET = 2;
const RSS_TARGET_KIB = 256 * 1024;
const UNCHANGED_TARGET_MS = 2000;

const args = process.argv.slice(2);
const sizeAt = args.indexOf("--size");
const size = parseSize(sizeAt === -1 ? "1GiB" : args[sizeAt + 1]);
const keep = args.includes("--keep");

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ANY_UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
const freshUuid = (seed) => {
  const h = createHash("sha256").update(seed).digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

/** A session file's Claude session id: its name when that is a UUID, else the first sessionId in it. */
function sessionIdOf(name, bytes) {
  const base = name.slice(0, -".jsonl".length);
  if (UUID.test(base)) return base;
  return /"sessionId":"([0-9a-f-]{36})"/.exec(bytes.toString("latin1"))?.[1] ?? null;
}

/**
 * The real units: every session file written by Claude Code (the hand-made agent-sessions/ composite left
 * out), under its session id, with its subagent files of both layouts.
 */
function realUnits() {
  const units = [];
  for (const folder of readdirSync(FIXTURES).sort()) {
    if (folder === "agent-sessions") continue;
    const dir = path.join(FIXTURES, folder);
    for (const name of readdirSync(dir).sort()) {
      if (!name.endsWith(".jsonl") || name.startsWith("agent-")) continue;
      const bytes = readFileSync(path.join(dir, name));
      const id = sessionIdOf(name, bytes);
      if (id === null) continue;
      const files = [{ rel: `${id}.jsonl`, bytes }];
      const sub = path.join(dir, name.slice(0, -".jsonl".length), "subagents");
      try {
        for (const n of readdirSync(sub)) files.push({ rel: `${id}/subagents/${n}`, bytes: readFileSync(path.join(sub, n)) });
      } catch {
        /* no subagents folder */
      }
      // 2.0.x subagent files beside the session name it in their records.
      for (const n of readdirSync(dir)) {
        if (!n.startsWith("agent-")) continue;
        const agent = readFileSync(path.join(dir, n));
        if (agent.includes(`"sessionId":"${id}"`)) files.push({ rel: n, bytes: agent });
      }
      units.push({ id, files });
    }
  }
  return units;
}

/**
 * Write copies of the units until `size` bytes are written. Each copy gets fresh ids: every UUID in its
 * files (session id, record uuids and parents, …) is replaced, the same way throughout the copy.
 */
function generate(root, size) {
  const units = realUnits();
  let written = 0;
  let n = 0;
  const paths = [];
  while (written < size) {
    const unit = units[n % units.length];
    const fresh = new Map();
    // Agent ids name files too (2.0.x subagents lie beside the sessions): each copy gets its own.
    const agents = unit.files
      .map((f) => /agent-(?:acompact-)?([0-9a-z]+)\.jsonl$/.exec(f.rel)?.[1])
      .filter((id) => id !== undefined);
    const agentPattern = agents.length > 0 ? new RegExp(agents.join("|"), "g") : null;
    const remap = (text) => {
      const ids = text.replace(ANY_UUID, (u) => {
        let v = fresh.get(u);
        if (v === undefined) fresh.set(u, (v = freshUuid(`unit:${n}:${u}`)));
        return v;
      });
      return agentPattern === null ? ids : ids.replace(agentPattern, (a) => createHash("sha256").update(`agent:${n}:${a}`).digest("hex").slice(0, a.length));
    };
    const project = path.join(root, `-bench-project-${Math.floor(n / UNITS_PER_PROJECT)}`);
    for (const f of unit.files) {
      const target = path.join(project, remap(f.rel));
      mkdirSync(path.dirname(target), { recursive: true });
      const bytes = Buffer.from(remap(f.bytes.toString("latin1")), "latin1");
      writeFileSync(target, bytes);
      paths.push(target);
      written += bytes.length;
    }
    n++;
  }
  return { written, units: n, paths };
}

function timed(command, argv, options = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M %U %S", command, ...argv], { encoding: "utf8", maxBuffer: 1024 * 1024 * 1024, stdio: ["ignore", options.stdout ?? "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`${command} ${argv.slice(0, 3).join(" ")} … failed (exit ${r.status}):\n${r.stderr.slice(-2000)}`);
    process.exit(2);
  }
  const [rss, user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, rssKib: rss, cpuMs: (user + sys) * 1000 };
}

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
