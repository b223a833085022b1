// The generated import sources the import benchmarks share (bench/claude-import.mjs,
// bench/codex-import.mjs) with the comparison of two builds (bench/compare-builds.mjs): copies of the
// real sessions of test/fixtures/real-sessions (and ../shared's unlicensed Codex localpush rollouts when
// that directory is beside the checkout), each with fresh ids, until a tree holds `size` bytes.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { repoRoot } from "./data.mjs";

export const CLAUDE_FIXTURES = path.resolve(repoRoot, "test/fixtures/real-sessions/claude");
const FIXTURES = CLAUDE_FIXTURES;
const CODEX_FIXTURES = path.resolve(repoRoot, "test/fixtures/real-sessions/codex");
const CODEX_LOCALPUSH = path.resolve(repoRoot, "../shared/fixtures/real-sessions/codex/localpush");
const UNITS_PER_PROJECT = 50;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ANY_UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
export const freshUuid = (seed) => {
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
export function generateClaudeTree(root, size) {
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
