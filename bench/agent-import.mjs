#!/usr/bin/env node
// Benchmark of `pixir import gemini` and `pixir import opencode` (docs/gemini-opencode-interop.md) on a
// generated archive of --size bytes, next to `jq -c .` over the same records.
//
//   node bench/agent-import.mjs --agent gemini                # 200MiB of Gemini CLI session files
//   node bench/agent-import.mjs --agent opencode --size 16MiB # a small opencode.db on a shared machine
//
// Gemini: sessions of 400 turns (a user message; a model message appended three times as Gemini does:
// a scheduled tool call, its ~2 KiB result, its tokens), laid out as ~/.gemini/tmp/<project>/chats. opencode:
// the same turns as rows of an opencode.db built from its schema (bench/lib/opencode-schema.mjs, shared with the tests), and the same
// records as a storage/ JSON tree for jq. Rows: one import into an empty Workspace (wall time and peak RSS
// from /usr/bin/time), the same import again (every session unchanged), `cat` and `jq -c .` over the bytes.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { generateGemini, generateOpencode, TURNS } from "./lib/agent-archive.mjs";
import { parseArgs, parseSize, sizeLabel } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const opts = parseArgs(process.argv.slice(2), { agent: { type: "string" }, size: { type: "string" }, keep: { type: "boolean" } });
const agent = opts.agent ?? "gemini";
if (agent !== "gemini" && agent !== "opencode") throw new Error("--agent gemini|opencode");
const size = parseSize(opts.size ?? "200MiB");

function timed(command, argv, shell = false) {
  const start = process.hrtime.bigint();
  const r = shell
    ? spawnSync("/usr/bin/time", ["-f", "%M %U %S", "bash", "-c", command], { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] })
    : spawnSync("/usr/bin/time", ["-f", "%M %U %S", command, ...argv], { encoding: "utf8", stdio: ["ignore", "ignore", "pipe"] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.status !== 0) {
    process.stderr.write(`${command} ${argv.join(" ")} failed (exit ${r.status}):\n${r.stderr}`);
    process.exit(2);
  }
  // Peak RSS, and the CPU seconds (user + system) of the command and its children: on a loaded machine the
  // wall time includes waiting for a core, the CPU time much less so.
  const [rss, user, sys] = r.stderr.trim().split("\n").at(-1).split(" ").map(Number);
  return { ms, rssKiB: rss, cpuMs: (user + sys) * 1000 };
}

const base = mkdtempSync(path.join(os.tmpdir(), `pixir-${agent}-bench-`));
try {
  const gen = agent === "gemini" ? generateGemini(base, size) : await generateOpencode(base, size);
  spawnSync("sync");
  const ws = path.join(base, "ws");
  mkdirSync(ws);
  const imp = timed(process.execPath, [BIN, "import", agent, gen.input, "--workspace", ws]);
  const again = timed(process.execPath, [BIN, "import", agent, gen.input, "--workspace", ws]);
  const files = `find ${gen.jqFiles} -type f -print0 | sort -z | xargs -0 cat`;
  const cat = timed(`${files} > /dev/null`, [], true);
  const jq = timed(`${files} | jq -c . > /dev/null`, [], true);
  const mib = gen.bytes / 1024 ** 2;
  const rate = (t) => `${(mib / (t.ms / 1000)).toFixed(1)} MiB/s`;
  const row = (label, t, rss = false) =>
    `${label.padEnd(34)} ${t.ms.toFixed(0).padStart(7)} ms  ${rate(t).padStart(13)}  cpu ${t.cpuMs.toFixed(0).padStart(7)} ms${rss ? `  peak RSS ${(t.rssKiB / 1024).toFixed(0)} MiB` : ""}`;
  process.stdout.write(
    [
      `${agent} import benchmark: ${gen.count} sessions of ${TURNS} turns, ${sizeLabel(gen.bytes)} of records (--size ${sizeLabel(size)}), node ${process.version}, ${os.cpus().length} cores`,
      row(`pixir import ${agent}`, imp, true),
      row(`pixir import ${agent} (unchanged)`, again, true),
      row("cat", cat),
      row("jq -c .", jq),
      `import: ${(jq.ms / imp.ms).toFixed(2)}× jq, ${(cat.ms / imp.ms).toFixed(2)}× cat (throughput ratios); unchanged re-import ${(again.ms / imp.ms).toFixed(2)}× the first import`,
      `CPU time: import ${(jq.cpuMs / imp.cpuMs).toFixed(2)}× jq; unchanged re-import ${(jq.cpuMs / again.cpuMs).toFixed(2)}× jq`,
      "",
    ].join("\n"),
  );
} finally {
  if (!opts.keep) rmSync(base, { recursive: true, force: true });
  else process.stderr.write(`kept ${base}\n`);
}
