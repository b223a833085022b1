#!/usr/bin/env node
// Deterministic generator of realistic Session Logs for the benchmarks (docs/performance.md).
//
//   node bench/gen-log.mjs --bytes 1GiB --out bench/.data/ws/.pixir/sessions/big.ndjson --session big
//   node bench/gen-log.mjs --events 1000 --session demo --out -        # to stdout
//
// Every line is a valid six-key envelope {"id","session_id","seq","ts","type","data"} in exactly that
// key order, seqs 0..N-1, ULID-like ids, ISO ts. The content is a seeded mix of agent turns: user and
// assistant messages, reasoning, tool_call/tool_result pairs (outputs from a few bytes to tens of KB,
// with non-ASCII text and characters that JSON must escape), provider_usage, and now and then a
// subagent run. The same options always give the same bytes (no Math.random, no clock). Output is
// streamed in ~1 MiB batches, so memory stays flat whatever the size. A file target is written to
// `<out>.partial-<pid>`, fsynced and renamed into place, so a half-written Log never has the final name.
//
// Options:
//   --bytes SIZE     stop after the first Event that reaches SIZE bytes (1GiB, 64MiB, 500MB, 123456)
//   --events N       stop after N Events (one of --bytes / --events is required)
//   --out PATH|-     output file (parent directories are created) or "-" for stdout (default "-")
//   --session ID     session_id of every Event (default "big")
//   --seed TEXT      PRNG seed (default "pixir-bench-v1")
//   --progress       progress on stderr
// On success a one-line JSON summary ({events, bytes, counts, ...}) goes to stderr.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { once } from "node:events";
import path from "node:path";
import { parseArgs, parseSize, positiveInt } from "./lib/util.mjs";

export const GENERATOR_VERSION = 1;

// ---------------------------------------------------------------------------------------------
// Seeded PRNG: cyrb128 to seed sfc32 (public-domain small fast counter generator).

function cyrb128(str) {
  let h1 = 1779033703, h2 = 3144134277, h3 = 1013904242, h4 = 2773480762;
  for (let i = 0; i < str.length; i++) {
    const k = str.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

export function makeRng(seed) {
  let [a, b, c, d] = cyrb128(String(seed));
  const u32 = () => {
    a |= 0; b |= 0; c |= 0; d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 15; i++) u32();
  const float = () => u32() / 4294967296;
  const int = (lo, hi) => lo + Math.floor(float() * (hi - lo + 1)); // inclusive
  const pick = (arr) => arr[Math.floor(float() * arr.length)];
  const chance = (p) => float() < p;
  /** Log-uniform integer in [lo, hi]: many small values, a long tail of big ones. */
  const logInt = (lo, hi) => Math.round(Math.exp(Math.log(lo) + float() * (Math.log(hi) - Math.log(lo))));
  return { u32, float, int, pick, chance, logInt };
}

// ---------------------------------------------------------------------------------------------
// Ids and timestamps.

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const HEX = "0123456789abcdef";

function ulid(rng, ms) {
  let time = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  let rand = "";
  for (let i = 0; i < 16; i++) rand += CROCKFORD[rng.u32() & 31];
  return time + rand;
}

function token(rng, alphabet, n) {
  let s = "";
  for (let i = 0; i < n; i++) s += alphabet[rng.u32() % alphabet.length];
  return s;
}

// ---------------------------------------------------------------------------------------------
// Text pools, built once from the seed. Content mixes ASCII code, prose, non-ASCII scripts, emoji
// (valid surrogate pairs) and characters JSON must escape: quotes, backslashes, tabs, newlines, \r,
// ANSI escape sequences (\u001b) and other control characters.

const WORDS = (
  "session event log stream buffer parse write read append fork summary tree node index offset " +
  "value result error config option handler request response client server worker queue cache " +
  "token model prompt context history tool call output input file path directory module package " +
  "build test check lint format deploy commit branch merge review patch diff hunk line column " +
  "user agent assistant message reason plan task status start finish cancel retry timeout limit " +
  "schema field record entry header footer chunk batch page cursor filter map reduce sort group " +
  "async await promise future thread lock lease writer reader journal atomic rename fsync signal"
).split(" ");

const INTL = [
  "café", "naïve", "Zürich", "São Paulo", "crème brûlée", "façade", "Ærø", "Łódź", "İstanbul",
  "日本語のテキスト", "你好，世界", "中文字符", "한국어", "Привет, мир", "Ελληνικά", "עברית", "العربية",
  "हिन्दी", "ไทย", "Tiếng Việt", "emoji 🚀", "✅ done", "⚠️ warning", "→", "—", "½", "€42", "µs", "±0.5",
  "🙂", "👩‍💻", "∑ᵢ xᵢ", "≤ 2×", "«quoted»", "„Anführung“", "‘single’", "¿qué?", "ß", "ﬁ",
];

const EXT = ["ts", "js", "mjs", "json", "md", "py", "rs", "go", "ex", "yaml", "toml", "sh", "css", "html"];
const TOOLS = [
  ["read_file", 30],
  ["bash", 25],
  ["grep", 12],
  ["edit_file", 15],
  ["write_file", 6],
  ["list_dir", 7],
  ["web_fetch", 5],
];
const MODELS = ["gpt-5.1-codex", "claude-sonnet-4.5", "gemini-2.5-pro", "o4-mini"];
const PROVIDERS = { "gpt-5.1-codex": "openai", "claude-sonnet-4.5": "anthropic", "gemini-2.5-pro": "google", "o4-mini": "openai" };

function buildPools(rng) {
  const w = () => rng.pick(WORDS);
  const intl = () => rng.pick(INTL);
  const Cap = (s) => s[0].toUpperCase() + s.slice(1);
  const ident = () => w() + Cap(w());
  const sentence = () => {
    const n = rng.int(5, 18);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(rng.chance(0.06) ? intl() : w());
    let s = Cap(parts.join(" "));
    if (rng.chance(0.2)) s += ` (see \`${w()}.${rng.pick(EXT)}\`)`;
    if (rng.chance(0.1)) s += ` "${w()} ${w()}"`;
    return s + rng.pick([".", ".", ".", "!", "?", ":"]);
  };
  const filePath = () => {
    const depth = rng.int(1, 4);
    const dirs = [];
    for (let i = 0; i < depth; i++) dirs.push(rng.chance(0.03) ? rng.pick(["résumé", "données", "日本", "tëst"]) : w());
    return `${dirs.join("/")}/${w()}${rng.chance(0.3) ? "-" + w() : ""}.${rng.pick(EXT)}`;
  };

  const codeTemplates = [
    () => `import { ${ident()}, ${ident()} } from "./${w()}.js";`,
    () => `export async function ${ident()}(${w()}: string, ${w()}?: number): Promise<void> {`,
    () => `  const ${ident()} = await ${ident()}(${w()}, "${w()}-${w()}");`,
    () => `  if (${w()} === null) throw new Error("${w()} ${w()}: \\"${w()}\\" not found");`,
    () => `  return \`\${${w()}}\\n\${${w()}}\`;`,
    () => `\tcase "${w()}": return ${rng.int(0, 9999)};`,
    () => `  // ${sentence()}`,
    () => `  const re = /^[a-z${rng.pick(["", "0-9", "_\\-"])}]+\\d*\\.${rng.pick(EXT)}$/u;`,
    () => `  const ${w()}Path = "C:\\\\Users\\\\${w()}\\\\${w()}.${rng.pick(EXT)}";`,
    () => `  ${w()}.${w()}({ ${w()}: ${rng.int(0, 100)}, ${w()}: "${intl()}" });`,
    () => `}`,
    () => ``,
    () => `    ${w()}: ${rng.chance(0.5) ? "true" : "false"},`,
    () => `def ${w()}_${w()}(self, ${w()}=None):`,
    () => `    """${sentence()}"""`,
    () => `  defp ${w()}(%{${w()}: ${w()}} = ${w()}), do: {:ok, ${w()}}`,
    () => `# ${sentence()}`,
  ];
  const testTemplates = [
    () => ` \u001b[32m✓\u001b[39m ${filePath()} (${rng.int(1, 60)} tests) ${rng.int(3, 900)}ms`,
    () => ` \u001b[31m✗\u001b[39m ${w()} ${w()} > ${sentence()}`,
    () => `   → expected "${w()}" to equal "${w()}"`,
    () => `-rw-r--r--  1 dev  staff  ${rng.int(10, 99999)} Jul 20 10:${String(rng.int(0, 59)).padStart(2, "0")} ${filePath()}`,
    () => `${filePath()}:${rng.int(1, 900)}:${rng.int(1, 80)}: ${rng.pick(["error", "warning"])} TS${rng.int(1000, 7999)}: ${sentence()}`,
    () => `diff --git a/${filePath()} b/${filePath()}`,
    () => `@@ -${rng.int(1, 500)},${rng.int(1, 30)} +${rng.int(1, 500)},${rng.int(1, 30)} @@`,
    () => `+  ${w()}(${w()});`,
    () => `-  ${w()}(${w()}, ${w()});`,
    () => `npm WARN ${w()} ${sentence()}`,
    () => `progress\r${rng.int(0, 100)}%\r${rng.int(0, 100)}%`,
    () => `\u0007bell \u0000nul \u001fus \u007fdel in ${w()}`,
    () => `Traceback (most recent call last):\n  File "${filePath()}", line ${rng.int(1, 400)}, in ${w()}`,
    () => `${intl()} ${intl()} ${sentence()}`,
  ];
  const pool = (templates, n) => Array.from({ length: n }, () => rng.pick(templates)());
  return {
    word: w,
    intl,
    sentence,
    filePath,
    ident,
    code: pool(codeTemplates, 4096),
    test: pool(testTemplates, 2048),
    prose: Array.from({ length: 2048 }, sentence),
  };
}

/** Lines from `pool` joined by \n until about `size` UTF-16 units. */
function fill(rng, pool, size, numbered = false) {
  const out = [];
  let n = 0;
  let lineNo = rng.int(1, 400);
  while (n < size) {
    let line = pool[rng.u32() % pool.length];
    if (numbered) line = `${String(lineNo++).padStart(5, " ")}\t${line}`;
    out.push(line);
    n += line.length + 1;
  }
  return out.join("\n");
}

/** tool_result output size in characters: mostly small, a long tail up to ~64 KB. */
function outputSize(rng) {
  const r = rng.float();
  if (r < 0.45) return rng.logInt(20, 1000);
  if (r < 0.8) return rng.logInt(1000, 8000);
  if (r < 0.95) return rng.logInt(8000, 24000);
  return rng.logInt(24000, 64000);
}

// ---------------------------------------------------------------------------------------------
// The Event stream: an endless sequence of agent turns.

export function* generateEvents({ session, seed }) {
  const rng = makeRng(`${seed}`);
  const P = buildPools(rng);
  let seq = 0;
  let ms = Date.UTC(2026, 6, 20, 10, 0, 0, 0);
  let callNo = 0;
  let subNo = 0;
  const toolTotal = TOOLS.reduce((s, [, weight]) => s + weight, 0);
  const pickTool = () => {
    let r = rng.float() * toolTotal;
    for (const [name, weight] of TOOLS) if ((r -= weight) < 0) return name;
    return TOOLS[0][0];
  };
  const ev = (type, data, advanceMs) => {
    ms += advanceMs;
    const e = { id: ulid(rng, ms), session_id: session, seq: seq++, ts: new Date(ms).toISOString(), type, data };
    return e;
  };

  const userText = () => {
    const r = rng.float();
    if (r < 0.6) return Array.from({ length: rng.int(1, 3) }, P.sentence).join(" ");
    if (r < 0.85) return `${P.sentence()}\n\n\`\`\`\n${fill(rng, P.code, rng.logInt(100, 3000))}\n\`\`\`\n${P.sentence()}`;
    return `${P.sentence()}\n\n${fill(rng, P.test, rng.logInt(200, 4000))}`;
  };
  const assistantText = () => {
    const paras = [];
    for (let i = rng.int(1, 6); i > 0; i--) {
      const r = rng.float();
      if (r < 0.6) paras.push(Array.from({ length: rng.int(1, 5) }, P.sentence).join(" "));
      else if (r < 0.85) paras.push(Array.from({ length: rng.int(2, 6) }, () => `- ${P.sentence()}`).join("\n"));
      else paras.push(`\`\`\`${rng.pick(EXT)}\n${fill(rng, P.code, rng.logInt(80, 2500))}\n\`\`\``);
    }
    return paras.join("\n\n");
  };
  const argsFor = (name) => {
    const p = P.filePath();
    switch (name) {
      case "read_file":
        return rng.chance(0.3) ? { path: p, offset: rng.int(1, 400), limit: rng.pick([50, 100, 200, 400]) } : { path: p };
      case "bash":
        return { path: p.split("/")[0], command: rng.pick([`npm test -- ${P.word()}`, `git diff --stat`, `ls -la ${p}`, `rg -n "${P.word()}" .`, `cat ${p} | head -50`]), timeout_ms: rng.pick([30000, 120000]) };
      case "grep":
        return { path: p.split("/")[0], pattern: `${P.word()}\\(${rng.chance(0.5) ? "[a-z]+" : "\\s*"}`, glob: `**/*.${rng.pick(EXT)}` };
      case "edit_file":
        return { path: p, old_string: fill(rng, P.code, rng.logInt(20, 600)), new_string: fill(rng, P.code, rng.logInt(20, 900)) };
      case "write_file":
        return { path: p, content: fill(rng, P.code, rng.logInt(100, 6000)) };
      case "list_dir":
        return { path: p.split("/").slice(0, -1).join("/") || ".", depth: rng.int(1, 3) };
      default:
        return { path: `https://example.com/${P.word()}/${P.word()}?q=${P.intl()}`, max_bytes: 100000 };
    }
  };
  const outputFor = (name, args) => {
    const size = outputSize(rng);
    switch (name) {
      case "read_file":
        return fill(rng, P.code, size, true);
      case "bash":
      case "list_dir":
        return fill(rng, P.test, size);
      case "grep":
        return fill(rng, P.code, size).split("\n").map((l, i) => `${args.path}/${P.filePath()}:${i + 1}:${l}`).join("\n");
      case "edit_file":
        return `Applied 1 edit to ${args.path}: replaced ${args.old_string.length} characters.`;
      case "write_file":
        return `Wrote ${args.content.length} characters to ${args.path}.`;
      default:
        return fill(rng, P.prose, size);
    }
  };
  const usage = (model) => {
    const input = rng.int(2000, 180000);
    const output = rng.int(20, 6000);
    const cacheRead = rng.chance(0.7) ? rng.int(0, input) : 0;
    return { provider: PROVIDERS[model], model, input, output, cache_read: cacheRead, cache_write: rng.int(0, 4000), total_tokens: input + output };
  };

  // A Pixir root Session starts with its permission posture record.
  yield ev("subagent_event", { event: "permission_posture", scope: "session", lineage: "root", source: "root_session_start" }, 0);
  const model = rng.pick(MODELS);
  for (;;) {
    yield ev("user_message", { text: userText() }, rng.int(5000, 180000));
    for (let step = rng.pick([0, 1, 1, 2, 2, 3, 3, 4, 5, 6, 8]); step >= 0; step--) {
      if (rng.chance(0.6)) {
        const text = Array.from({ length: rng.int(1, 4) }, P.sentence).join(" ");
        yield ev("reasoning", { item: { type: "reasoning", id: `rs_${token(rng, HEX, 32)}`, summary: [{ type: "summary_text", text }] }, model, dialect: "openai-responses" }, rng.int(300, 4000));
      }
      if (step === 0) break;
      // One or (sometimes) a few parallel calls, then their results.
      const calls = [];
      for (let k = rng.chance(0.2) ? rng.int(2, 3) : 1; k > 0; k--) {
        const name = pickTool();
        const args = argsFor(name);
        const call_id = `call_${token(rng, ALNUM, 24)}`;
        calls.push({ call_id, name, args });
        callNo++;
        yield ev("tool_call", { call_id, name, args }, rng.int(200, 3000));
      }
      for (const c of calls) {
        if (rng.chance(0.05)) {
          yield ev("tool_result", { call_id: c.call_id, ok: false, output: `error: ${P.sentence()}\n${fill(rng, P.test, rng.logInt(40, 800))}` }, rng.int(10, 20000));
        } else {
          yield ev("tool_result", { call_id: c.call_id, ok: true, output: outputFor(c.name, c.args) }, rng.int(10, 20000));
        }
      }
      if (rng.chance(0.03)) {
        // A subagent run: started ... finished, with its own child session id.
        subNo++;
        const subagent_id = `sub_${subNo}`;
        const base = { subagent_id, child_session_id: `${session}-sub-${subNo}`, agent: rng.pick(["explorer", "reviewer", "tester"]), task: P.sentence(), depth: 1, workspace: `.pixir/subagents/${subagent_id}/workspace` };
        yield ev("subagent_event", { ...base, event: "started", status: "running", timeout_ms: 600000 }, rng.int(100, 2000));
        const elapsed = rng.int(2000, 300000);
        yield ev("subagent_event", { ...base, event: "finished", status: "completed", summary: P.sentence(), reason: "finished", elapsed_ms: elapsed, next_actions: ["inspect_child_session_log"] }, elapsed);
      }
    }
    yield ev("assistant_message", { text: assistantText() }, rng.int(500, 30000));
    yield ev("provider_usage", usage(model), rng.int(1, 50));
  }
}

// ---------------------------------------------------------------------------------------------
// Output.

const BATCH = 1024 * 1024;

export async function generate({ out = "-", session = "big", seed = "pixir-bench-v1", bytes, events, progress = false }) {
  if (bytes === undefined && events === undefined) throw new Error("give --bytes or --events");
  const toStdout = out === "-";
  const tmp = toStdout ? null : `${out}.partial-${process.pid}`;
  let fd = null;
  if (!toStdout) {
    mkdirSync(path.dirname(path.resolve(out)), { recursive: true });
    fd = openSync(tmp, "w");
  }
  const writeBuf = async (buf) => {
    if (toStdout) {
      if (!process.stdout.write(buf)) await once(process.stdout, "drain");
      return;
    }
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
  };
  const counts = {};
  let total = 0;
  let n = 0;
  let batch = [];
  let batchBytes = 0;
  let nextReport = 64 * 1024 * 1024;
  const started = process.hrtime.bigint();
  try {
    for (const e of generateEvents({ session, seed })) {
      const line = JSON.stringify(e) + "\n";
      const len = Buffer.byteLength(line);
      batch.push(line);
      batchBytes += len;
      total += len;
      n++;
      counts[e.type] = (counts[e.type] ?? 0) + 1;
      const done = (bytes !== undefined && total >= bytes) || (events !== undefined && n >= events);
      if (batchBytes >= BATCH || done) {
        await writeBuf(Buffer.from(batch.join(""), "utf8"));
        batch = [];
        batchBytes = 0;
      }
      if (progress && total >= nextReport) {
        const s = Number(process.hrtime.bigint() - started) / 1e9;
        process.stderr.write(`gen-log: ${(total / 1024 ** 2).toFixed(0)} MiB, ${n} events, ${(total / 1e6 / s).toFixed(0)} MB/s\n`);
        nextReport += 64 * 1024 * 1024;
      }
      if (done) break;
    }
    if (fd !== null) {
      fsyncSync(fd);
      closeSync(fd);
      fd = null;
      renameSync(tmp, out);
    }
  } catch (err) {
    if (fd !== null) closeSync(fd);
    if (tmp) rmSync(tmp, { force: true });
    throw err;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { generator_version: GENERATOR_VERSION, session, seed, events: n, bytes: total, counts, seconds: Math.round(seconds * 100) / 100 };
}

async function main() {
  const opts = parseArgs(process.argv.slice(2), {
    bytes: { parse: parseSize },
    events: { parse: positiveInt },
    out: { default: "-" },
    session: { default: "big" },
    seed: { default: "pixir-bench-v1" },
    progress: { type: "boolean" },
    help: { type: "boolean" },
  });
  if (opts.help) {
    process.stdout.write("usage: node bench/gen-log.mjs (--bytes SIZE | --events N) [--out PATH|-] [--session ID] [--seed TEXT] [--progress]\n");
    return;
  }
  const summary = await generate(opts);
  process.stderr.write(`${JSON.stringify(summary)}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  main().catch((err) => {
    process.stderr.write(`gen-log: ${err.message}\n`);
    process.exit(1);
  });
}
