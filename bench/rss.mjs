#!/usr/bin/env node
// Peak RSS of every user-facing job as its input grows (issue 38 item 5: "peak RSS ≤ 256 MiB everywhere";
// the standards: "memory stays flat as Logs grow"). Each job runs once per size, as its own process under
// GNU time (`/usr/bin/time -f %M`); the table gives its peak RSS per size, the growth between the two largest
// sizes, and whether it stays within 256 MiB and flat (growth below a quarter of the input's).
//
//   node bench/rss.mjs                            # inputs of 16 and 64 MiB (pnpm bench:rss)
//   node bench/rss.mjs --sizes 16,64,128          # sizes in MiB
//   node bench/rss.mjs --only log-cat,import-pi-grown --sizes 64,128
//   node bench/rss.mjs --keep DIR                 # build the inputs and Workspaces in DIR and leave them
//   node bench/rss.mjs --list                     # the jobs and what each runs
//
// The inputs of each size (deterministic, generated before any job of that size is measured, each only if a
// chosen job needs it): a pixir Log of the size (bench/gen-log.mjs); a Claude projects tree of that many bytes
// of the real transcripts, every copy with fresh ids (bench/lib/claude-tree.mjs); one long Claude transcript
// (the same generator as bench:claude --one-session); a Codex sessions tree of the real rollouts, each copy
// with fresh ids (bench/lib/import-trees.mjs), and one rollout made of the real codemie-code one, its records
// repeated, and one of generated turns ending in 12 rollbacks (bench/lib/codex-rollbacks.mjs; turns of 20 KB,
// and of 50 bytes); one pi session file made of the real test/fixtures/pi/large-session.jsonl, its entries
// repeated;
// Gemini CLI and opencode archives
// (bench/lib/agent-archive.mjs). A "grown" import first imports the first half of the file, then the whole
// file (the same bytes with lines appended): the second import is the one measured. Exit 1 if a job fails
// or is over 256 MiB.
import { spawnSync } from "node:child_process";
import { appendFileSync, closeSync, createReadStream, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { generate as generateLog } from "./gen-log.mjs";
import { generateGemini, generateOpencode } from "./lib/agent-archive.mjs";
import { generateCodexTree } from "./lib/import-trees.mjs";
import { freshUuid, generate as generateClaudeTree, oneSession } from "./lib/claude-tree.mjs";
import { ROLLBACK_THREAD, rolledBackRollout, writeRollout } from "./lib/codex-rollbacks.mjs";
import { parseArgs } from "./lib/util.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = {
  pixir: path.join(ROOT, "tools", "pixir", "bin", "pixir.js"),
  "pixir-log": path.join(ROOT, "tools", "pixir-log", "bin", "pixir-log.js"),
  "pixir-fork": path.join(ROOT, "tools", "pixir-fork", "bin", "pixir-fork.js"),
  "pixir-summarize": path.join(ROOT, "tools", "pixir-summarize", "bin", "pixir-summarize.js"),
};
const LIMIT_MIB = 256;
const FLAT_SHARE = 0.25;
const MiB = 1024 ** 2;
const CLAUDE_SESSION = freshUuid("one-session");
const PI_FIXTURE = path.join(ROOT, "test", "fixtures", "pi", "large-session.jsonl");
const CODEX_THREAD = "019e1625-789d-76c0-80ab-3724b5ddb799";
const CODEX_FIXTURE = path.join(ROOT, "test", "fixtures", "real-sessions", "codex", "codemie-code", `rollout-2026-05-11T11-26-55-${CODEX_THREAD}.jsonl`);

/** A bad option ends the run with its reason (exit 2), not a stack trace. */
function usage(message) {
  process.stderr.write(`bench:rss: ${message}\n`);
  process.exit(2);
}

let opts;
try {
  opts = parseArgs(process.argv.slice(2), { sizes: { type: "string" }, only: { type: "string" }, keep: { type: "string" }, list: { type: "boolean" } });
} catch (err) {
  usage(err.message);
}

// ---------------------------------------------------------------------------------------------
// The inputs of one size, each built once on first use (ctx.input(name)).

/** A pi session file of about `size` bytes: the fixture's header, then its entries over and over. */
const piSession = (file, size) => repeated(PI_FIXTURE, file, size);
/** A Codex rollout of about `size` bytes: the real rollout's session_meta, then its records over and over. */
const codexRollout = (file, size) => repeated(CODEX_FIXTURE, file, size);

/**
 * `source`'s first line, then its other lines over and over until `size` bytes (a prefix of any larger size),
 * written a batch at a time: the whole file as one string passes V8's longest string at 1 GiB.
 */
function repeated(source, file, size) {
  const [header, ...body] = readFileSync(source, "utf8").trimEnd().split("\n");
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, "w");
  let batch = [header];
  let bytes = header.length + 1;
  for (let i = 0; bytes < size; i++) {
    const line = body[i % body.length];
    batch.push(line);
    bytes += Buffer.byteLength(line) + 1;
    if (batch.length === 4096) (writeSync(fd, `${batch.join("\n")}\n`), (batch = []));
  }
  if (batch.length > 0) writeSync(fd, `${batch.join("\n")}\n`);
  closeSync(fd);
}

/** What `pixir-log append` takes: each Event of the Log as {type, data}, streamed. */
async function appendInput(log, out) {
  const fd = openSync(out, "w");
  let batch = "";
  for await (const line of readline.createInterface({ input: createReadStream(log), crlfDelay: Infinity })) {
    const { type, data } = JSON.parse(line);
    batch += `${JSON.stringify({ type, data })}\n`;
    if (batch.length > MiB) {
      appendFileSync(fd, batch);
      batch = "";
    }
  }
  appendFileSync(fd, batch);
  closeSync(fd);
}

const INPUTS = {
  /** A Workspace holding one generated pixir Log "big" of the size. */
  async native(ctx) {
    const ws = ctx.path("native");
    await generateLog({ out: path.join(ws, ".pixir", "sessions", "big.ndjson"), session: "big", bytes: ctx.bytes });
    return ws;
  },
  async appendStream(ctx) {
    const out = ctx.path("append.ndjson");
    await appendInput(path.join(await ctx.input("native"), ".pixir", "sessions", "big.ndjson"), out);
    return out;
  },
  /** The Workspace "write" holding a copy of "big" made by pixir-log write (the log-write job, or unmeasured). */
  async written(ctx) {
    const ws = ctx.path("write");
    mkdirSync(ws, { recursive: true });
    ctx.run(BIN["pixir-log"], ["write", "--workspace", ws], { stdin: path.join(await ctx.input("native"), ".pixir", "sessions", "big.ndjson") });
    return ws;
  },
  async replayStream(ctx) {
    const out = ctx.path("replay.ndjson");
    ctx.run(BIN["pixir-fork"], ["--parent", "big", "--child-id", "big-replay", "--workspace", await ctx.input("native")], { stdout: out });
    return out;
  },
  async shareStream(ctx) {
    const out = ctx.path("share.ndjson");
    ctx.run(BIN["pixir-fork"], ["--parent", "big", "--strategy", "share_v1", "--child-id", "big-share", "--workspace", await ctx.input("native")], { stdout: out });
    return out;
  },
  /** The share_v1 child "big-share" written into the native Workspace. */
  async shareChild(ctx) {
    const ws = await ctx.input("native");
    ctx.run(BIN["pixir-log"], ["write", "--workspace", ws], { stdin: await ctx.input("shareStream") });
    return "big-share";
  },
  /** The replay_v1 child "big-wrap" made by pixir fork (the pixir-fork job, or unmeasured). */
  async wrapChild(ctx) {
    ctx.run(BIN.pixir, ["fork", "big", "--child-id", "big-wrap", "--workspace", await ctx.input("native")]);
    return "big-wrap";
  },
  async claudeTree(ctx) {
    const root = ctx.path("claude-projects");
    generateClaudeTree(root, ctx.bytes);
    return root;
  },
  /** The Claude projects tree imported: the archive that ls, usage, index and search read. */
  async archive(ctx) {
    const ws = ctx.path("archive");
    mkdirSync(ws, { recursive: true });
    ctx.run(BIN.pixir, ["import", "claude", await ctx.input("claudeTree"), "--workspace", ws]);
    return ws;
  },
  async claudeSession(ctx) {
    const file = ctx.path("claude-one", "-proj", `${CLAUDE_SESSION}.jsonl`);
    oneSession(file, ctx.bytes);
    return file;
  },
  /** The long Claude transcript imported: the big Log the exports write back. */
  async claudeLog(ctx) {
    const ws = ctx.path("claude-one-ws");
    mkdirSync(ws, { recursive: true });
    ctx.run(BIN.pixir, ["import", "claude", await ctx.input("claudeSession"), "--workspace", ws]);
    return ws;
  },
  async codexTree(ctx) {
    const dir = ctx.path("codex");
    generateCodexTree(dir, ctx.bytes);
    return path.join(dir, "sessions");
  },
  async piFile(ctx) {
    const file = ctx.path("pi", "session.jsonl");
    piSession(file, ctx.bytes);
    return file;
  },
  async gemini(ctx) {
    return generateGemini(ctx.path("gemini"), ctx.bytes).input;
  },
  async opencode(ctx) {
    mkdirSync(ctx.path("opencode"), { recursive: true });
    return (await generateOpencode(ctx.path("opencode"), ctx.bytes)).input;
  },
};

// ---------------------------------------------------------------------------------------------
// The jobs: each returns what to measure ({bin, argv, stdin?, stdout?}); anything it prepares is not measured.

const ws = (dir) => ["--workspace", dir];
const freshDir = (ctx, name) => {
  const dir = ctx.path(name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return dir;
};
/** A grown import: the first half of the file imported (unmeasured), then the whole file, measured. */
async function grownImport(ctx, agent, make, name) {
  const dir = freshDir(ctx, name);
  const file = path.join(dir, "input", ...{ claude: ["-proj", `${CLAUDE_SESSION}.jsonl`], codex: [path.basename(CODEX_FIXTURE)], pi: ["session.jsonl"] }[agent]);
  const target = path.join(dir, "ws");
  mkdirSync(target);
  make(file, Math.floor(ctx.bytes / 2));
  ctx.run(BIN.pixir, ["import", agent, file, ...ws(target)]);
  make(file, ctx.bytes);
  // pi-interop.md §3.2: a pi file whose Logs differ from those on disk is refused (already_exists, exit 1),
  // after the whole file is read and planned; that refusal is what a cron re-import of a grown pi file costs.
  return { bin: BIN.pixir, argv: ["import", agent, file, ...ws(target)], status: agent === "pi" ? 1 : 0 };
}
/**
 * A rollout the planner plans whole (bench/lib/codex-rollbacks.mjs), of turns of about `turnBytes`: its first
 * half of lines imported, then all of it, measured.
 */
function rolledBackImport(ctx, turnBytes = 20000) {
  const dir = freshDir(ctx, `codex-rollback-${turnBytes}`);
  const file = path.join(dir, "input", `rollout-2026-03-01T10-00-00-${ROLLBACK_THREAD}.jsonl`);
  const target = path.join(dir, "ws");
  mkdirSync(target);
  const lines = rolledBackRollout(ctx.bytes, { turnBytes });
  writeRollout(file, lines, Math.floor(lines.length / 2));
  ctx.run(BIN.pixir, ["import", "codex", file, ...ws(target)]);
  writeRollout(file, lines);
  return { bin: BIN.pixir, argv: ["import", "codex", file, ...ws(target)] };
}
const coldIndex = (dir) => rmSync(path.join(dir, ".pixir", "index"), { recursive: true, force: true });

const JOBS = [
  { name: "log-cat", what: "pixir-log cat big", run: async (c) => ({ bin: BIN["pixir-log"], argv: ["cat", "big", ...ws(await c.input("native"))] }) },
  { name: "log-check", what: "pixir-log check big", run: async (c) => ({ bin: BIN["pixir-log"], argv: ["check", "big", ...ws(await c.input("native"))] }) },
  {
    name: "log-write",
    what: "pixir-log write < big.ndjson (a new Log)",
    run: async (c) => ({ bin: BIN["pixir-log"], argv: ["write", ...ws(freshDir(c, "write"))], stdin: path.join(await c.input("native"), ".pixir", "sessions", "big.ndjson"), after: () => c.done("written", c.path("write")) }),
  },
  {
    name: "log-append",
    what: "pixir-log append big < the Log's Events as {type, data} (the Log doubles)",
    run: async (c) => ({ bin: BIN["pixir-log"], argv: ["append", "big", ...ws(await c.input("written"))], stdin: await c.input("appendStream") }),
  },
  {
    name: "fork-replay",
    what: "pixir-fork --parent big (replay_v1 stream)",
    run: async (c) => ({ bin: BIN["pixir-fork"], argv: ["--parent", "big", "--child-id", "big-replay", ...ws(await c.input("native"))], stdout: c.path("replay.ndjson"), after: () => c.done("replayStream", c.path("replay.ndjson")) }),
  },
  {
    name: "fork-write",
    what: "pixir-log write < the replay_v1 stream (the child Log)",
    run: async (c) => ({ bin: BIN["pixir-log"], argv: ["write", ...ws(await c.input("native"))], stdin: await c.input("replayStream") }),
  },
  {
    name: "fork-share",
    what: "pixir-fork --parent big --strategy share_v1",
    run: async (c) => ({ bin: BIN["pixir-fork"], argv: ["--parent", "big", "--strategy", "share_v1", "--child-id", "big-share", ...ws(await c.input("native"))], stdout: c.path("share.ndjson"), after: () => c.done("shareStream", c.path("share.ndjson")) }),
  },
  { name: "pixir-fork", what: "pixir fork big --child-id big-wrap (replay_v1, one process)", run: async (c) => ({ bin: BIN.pixir, argv: ["fork", "big", "--child-id", "big-wrap", ...ws(await c.input("native"))], after: () => c.done("wrapChild", "big-wrap") }) },
  {
    name: "materialize",
    what: "pixir-log materialize big-share",
    run: async (c) => {
      const dir = await c.input("native");
      return { bin: BIN["pixir-log"], argv: ["materialize", await c.input("shareChild"), ...ws(dir)] };
    },
  },
  { name: "summarize", what: "pixir-summarize < the replay_v1 stream", run: async (c) => ({ bin: BIN["pixir-summarize"], argv: ws(await c.input("native")), stdin: await c.input("replayStream") }) },
  { name: "summarize-share", what: "pixir-summarize < the share_v1 stream (prefix from the parent)", run: async (c) => ({ bin: BIN["pixir-summarize"], argv: ws(await c.input("native")), stdin: await c.input("shareStream") }) },
  { name: "context", what: "pixir context big", run: async (c) => ({ bin: BIN.pixir, argv: ["context", "big", ...ws(await c.input("native"))] }) },
  { name: "diff", what: "pixir diff big big-wrap", run: async (c) => ({ bin: BIN.pixir, argv: ["diff", "big", await c.input("wrapChild"), ...ws(await c.input("native"))] }) },
  { name: "tree", what: "pixir tree (the native Workspace)", run: async (c) => ({ bin: BIN.pixir, argv: ["tree", ...ws(await c.input("native"))] }) },
  { name: "export-html", what: "pixir export html big --out FILE", run: async (c) => ({ bin: BIN.pixir, argv: ["export", "html", "big", "--out", c.path(`big-${process.pid}.html`), ...ws(await c.input("native"))] }) },
  { name: "export-md", what: "pixir export md big", run: async (c) => ({ bin: BIN.pixir, argv: ["export", "md", "big", ...ws(await c.input("native"))] }) },
  {
    name: "import-claude",
    what: "pixir import claude <projects tree> (fresh)",
    run: async (c) => ({ bin: BIN.pixir, argv: ["import", "claude", await c.input("claudeTree"), ...ws(freshDir(c, "archive"))], after: () => c.done("archive", c.path("archive")) }),
  },
  { name: "import-claude-session", what: "pixir import claude <one long transcript> (fresh)", run: async (c) => ({ bin: BIN.pixir, argv: ["import", "claude", await c.input("claudeSession"), ...ws(freshDir(c, "claude-one-ws"))], after: () => c.done("claudeLog", c.path("claude-one-ws")) }) },
  { name: "import-claude-grown", what: "pixir import claude <the transcript at 1/2, then whole> (the second)", run: (c) => grownImport(c, "claude", oneSession, "claude-grown") },
  { name: "import-codex", what: "pixir import codex <sessions tree> (fresh)", run: async (c) => ({ bin: BIN.pixir, argv: ["import", "codex", await c.input("codexTree"), ...ws(freshDir(c, "codex-ws"))] }) },
  { name: "import-codex-grown", what: "pixir import codex <one rollout at 1/2, then whole> (the second)", run: (c) => grownImport(c, "codex", codexRollout, "codex-grown") },
  { name: "import-codex-rollback", what: "pixir import codex <one rollout, 12 rollbacks at its end: 1/2 of its lines, then whole> (the second)", run: (c) => rolledBackImport(c) },
  { name: "import-codex-rollback-short", what: "the same, of turns of 50 bytes: about 80× the lines and Events per MiB", run: (c) => rolledBackImport(c, 50) },
  { name: "import-pi", what: "pixir import pi <one session file> (fresh)", run: async (c) => ({ bin: BIN.pixir, argv: ["import", "pi", await c.input("piFile"), ...ws(freshDir(c, "pi-ws"))] }) },
  { name: "import-pi-grown", what: "pixir import pi <the file at 1/2, then whole> (the second: refused, §3.2)", run: (c) => grownImport(c, "pi", piSession, "pi-grown") },
  { name: "import-gemini", what: "pixir import gemini <chats> (fresh)", run: async (c) => ({ bin: BIN.pixir, argv: ["import", "gemini", await c.input("gemini"), ...ws(freshDir(c, "gemini-ws"))] }) },
  { name: "import-opencode", what: "pixir import opencode <opencode.db> (fresh)", run: async (c) => ({ bin: BIN.pixir, argv: ["import", "opencode", await c.input("opencode"), ...ws(freshDir(c, "opencode-ws"))] }) },
  { name: "export-claude", what: "pixir export claude <the long transcript's Log>", run: async (c) => ({ bin: BIN.pixir, argv: ["export", "claude", CLAUDE_SESSION, ...ws(await c.input("claudeLog"))] }) },
  { name: "export-codex", what: "pixir export codex <the long transcript's Log>", run: async (c) => ({ bin: BIN.pixir, argv: ["export", "codex", CLAUDE_SESSION, ...ws(await c.input("claudeLog"))] }) },
  { name: "export-pi", what: "pixir export pi <the long transcript's Log>", run: async (c) => ({ bin: BIN.pixir, argv: ["export", "pi", CLAUDE_SESSION, ...ws(await c.input("claudeLog"))] }) },
  {
    name: "ls",
    what: "pixir ls --all (the imported tree; .pixir/index removed first)",
    run: async (c) => {
      const dir = await c.input("archive");
      coldIndex(dir);
      return { bin: BIN.pixir, argv: ["ls", "--all", ...ws(dir)] };
    },
  },
  {
    name: "usage",
    what: "pixir usage --by session (the imported tree; .pixir/index removed first)",
    run: async (c) => {
      const dir = await c.input("archive");
      coldIndex(dir);
      return { bin: BIN.pixir, argv: ["usage", "--by", "session", ...ws(dir)] };
    },
  },
  {
    name: "search-index",
    what: "pixir index (the search index built from nothing)",
    run: async (c) => {
      const dir = await c.input("archive");
      coldIndex(dir);
      return { bin: BIN.pixir, argv: ["index", ...ws(dir)] };
    },
  },
  { name: "search", what: "pixir search function (index up to date)", run: async (c) => ({ bin: BIN.pixir, argv: ["search", "function", ...ws(await c.input("archive"))] }) },
];

// Asked for by the issue and not run here, with the reason (printed with the table).
const NOT_RUN = [
  ["pixir show", "no such command: the page is pixir export html (and Markdown export md), both measured"],
  ["pixir check", "no such command in pixir: the check is pixir-log check (pixir log check), measured as log-check"],
];

// ---------------------------------------------------------------------------------------------

/** One process under GNU time: its peak RSS (KiB) and wall ms; a failure is returned, not thrown. */
function measure({ bin, argv, stdin, stdout, status = 0 }) {
  const inFd = stdin ? openSync(stdin, "r") : "ignore";
  const outFd = stdout ? openSync(stdout, "w") : "ignore";
  const start = process.hrtime.bigint();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, bin, ...argv], { stdio: [inFd, outFd, "pipe"], encoding: "utf8", maxBuffer: 64 * MiB });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (typeof inFd === "number") closeSync(inFd);
  if (typeof outFd === "number") closeSync(outFd);
  const rssKib = Number(r.stderr.trim().split("\n").at(-1));
  if (r.status !== status) return { error: `exit ${r.status}: ${r.stderr.trim().split("\n").slice(-3, -1).join(" ").slice(0, 300)}`, ms };
  return { rssKib, ms };
}

function context(base, mib) {
  const dir = path.join(base, `${mib}MiB`);
  mkdirSync(dir, { recursive: true });
  const built = new Map();
  const ctx = {
    bytes: mib * MiB,
    path: (...parts) => path.join(dir, ...parts),
    done: (name, value) => built.set(name, Promise.resolve(value)),
    input(name) {
      if (!built.has(name)) built.set(name, INPUTS[name](ctx));
      return built.get(name);
    },
    /** A preparing step (not measured): fails the bench if it fails. */
    run(bin, argv, io = {}) {
      const r = measure({ bin, argv, ...io });
      if (r.error) throw new Error(`preparing: ${path.basename(bin)} ${argv.slice(0, 3).join(" ")} … ${r.error}`);
    },
  };
  return ctx;
}

function table(rows, sizes) {
  const head = ["job", ...sizes.map((s) => `${s} MiB`), "growth", "of input growth", `≤ ${LIMIT_MIB} MiB`, "flat"];
  const lines = [head];
  for (const [name, bySize] of rows) {
    const rss = sizes.map((s) => bySize.get(s));
    const ok = rss.filter((r) => r && r.rssKib !== undefined).map((r) => r.rssKib / 1024);
    const cells = rss.map((r) => (r === undefined ? "-" : r.error ? "FAILED" : (r.rssKib / 1024).toFixed(0)));
    // Growth between the two largest sizes: at the smallest, V8's heap is still growing to its working size.
    const complete = ok.length === sizes.length && sizes.length > 1;
    const growth = complete ? ok.at(-1) - ok.at(-2) : NaN;
    const share = growth / (sizes.at(-1) - sizes.at(-2));
    const within = ok.length === rss.length ? (Math.max(...ok) <= LIMIT_MIB ? "yes" : "NO") : "-";
    lines.push([name, ...cells, complete ? `${growth >= 0 ? "+" : ""}${growth.toFixed(0)} MiB` : "-", complete ? `${(share * 100).toFixed(0)}%` : "-", within, complete ? (share < FLAT_SHARE ? "yes" : "NO") : "-"]);
  }
  const widths = head.map((_, i) => Math.max(...lines.map((l) => String(l[i]).length)));
  return lines.map((l) => `| ${l.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`).map((l, i) => (i === 1 ? `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |\n${l}` : l)).join("\n");
}

async function main() {
  if (opts.list) {
    for (const j of JOBS) process.stdout.write(`${j.name.padEnd(22)} ${j.what}\n`);
    return;
  }
  const sizes = (opts.sizes ?? "16,64").split(",").map(Number);
  if (sizes.some((s) => !Number.isSafeInteger(s) || s <= 0)) usage("--sizes takes MiB counts: --sizes 16,64");
  sizes.sort((a, b) => a - b);
  const only = opts.only ? new Set(opts.only.split(",")) : null;
  const unknown = only ? [...only].filter((n) => !JOBS.some((j) => j.name === n)) : [];
  if (unknown.length > 0) usage(`unknown job ${unknown.join(", ")} (see --list)`);
  const jobs = JOBS.filter((j) => !only || only.has(j.name));
  const base = opts.keep ? path.resolve(opts.keep) : mkdtempSync(path.join(os.tmpdir(), "pixir-rss-"));
  const rows = new Map(jobs.map((j) => [j.name, new Map()]));
  const started = Date.now();
  try {
    for (const mib of sizes) {
      const ctx = context(base, mib);
      for (const job of jobs) {
        const spec = await job.run(ctx);
        const r = measure(spec);
        spec.after?.();
        rows.get(job.name).set(mib, r);
        process.stderr.write(`${String(mib).padStart(4)} MiB  ${job.name.padEnd(22)} ${r.error ? `FAILED ${r.error}` : `${(r.rssKib / 1024).toFixed(0).padStart(4)} MiB peak RSS`}  ${(r.ms / 1000).toFixed(1)} s\n`);
      }
      if (!opts.keep) rmSync(path.join(base, `${mib}MiB`), { recursive: true, force: true });
    }
  } finally {
    if (!opts.keep) rmSync(base, { recursive: true, force: true });
    else process.stderr.write(`kept ${base}\n`);
  }
  const failed = [...rows.values()].some((m) => [...m.values()].some((r) => r.error || r.rssKib > LIMIT_MIB * 1024));
  process.stdout.write(
    [
      `peak RSS of each job (MiB, GNU time %M of the one process) by input size; node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, ${((Date.now() - started) / 1000).toFixed(0)} s`,
      sizes.length > 1 ? `growth: from ${sizes.at(-2)} to ${sizes.at(-1)} MiB of input; flat: below ${FLAT_SHARE * 100}% of the input's growth (${sizes.at(-1) - sizes.at(-2)} MiB)` : "flat: needs two sizes",
      "",
      table(rows, sizes),
      "",
      ...(only ? [] : ["not run here:", ...NOT_RUN.map(([job, why]) => `  ${job}: ${why}`)]),
      "",
    ].join("\n"),
  );
  if (failed) process.exitCode = 1;
}

await main();
