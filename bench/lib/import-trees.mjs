// The generated import sources the import benchmarks (bench/claude-import.mjs through claude-tree.mjs,
// bench/codex-import.mjs) share with the comparison of two builds (bench/compare-builds.mjs): copies of the
// real sessions of test/fixtures/real-sessions (and ../shared's unlicensed Codex localpush rollouts when
// that directory is beside the checkout), each with fresh ids, until a tree holds `size` bytes.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { generate as generateClaude } from "./claude-tree.mjs";
import { repoRoot } from "./data.mjs";

/** The Claude projects tree of bench:claude (bench/lib/claude-tree.mjs). */
export const generateClaudeTree = (root, size) => generateClaude(root, size);

const CODEX_FIXTURES = path.resolve(repoRoot, "test/fixtures/real-sessions/codex");
const CODEX_LOCALPUSH = path.resolve(repoRoot, "../shared/fixtures/real-sessions/codex/localpush");

/** The real rollouts that are written by Codex (the hand-made composite is left out). */
function codexSources() {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (name.endsWith(".jsonl") && !abs.includes("agent-sessions")) out.push(abs);
    }
  };
  walk(CODEX_FIXTURES);
  if (existsSync(CODEX_LOCALPUSH)) walk(CODEX_LOCALPUSH);
  return out.map((file) => {
    const text = readFileSync(file, "utf8");
    const id = JSON.parse(text.slice(0, text.indexOf("\n"))).payload.id;
    return { text, id };
  });
}

/** A UUID whose last 12 hex digits count the copies. */
const copyId = (n) => `019f0000-0000-7000-8000-${n.toString(16).padStart(12, "0")}`;

export function generateCodexTree(dir, size) {
  const src = codexSources();
  let bytes = 0;
  let n = 0;
  while (bytes < size) {
    const s = src[n % src.length];
    const id = copyId(n);
    const day = 1 + (n % 28);
    const sub = path.join(dir, "sessions", "2026", "01", String(day).padStart(2, "0"));
    mkdirSync(sub, { recursive: true });
    const text = s.text.split(s.id).join(id);
    writeFileSync(path.join(sub, `rollout-2026-01-${String(day).padStart(2, "0")}T10-00-00-${id}.jsonl`), text);
    bytes += Buffer.byteLength(text);
    n++;
  }
  return { bytes, count: n };
}
