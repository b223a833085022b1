// The generated Claude projects trees of the benchmarks (bench/claude-import.mjs, bench/usage.mjs): copies
// of the real transcripts under test/fixtures/real-sessions/claude, each copy with fresh ids.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const FIXTURES = path.resolve(ROOT, "test/fixtures/real-sessions/claude");
const UNITS_PER_PROJECT = 50;
const RESPONSE_ID = /\b(?:msg|req)_[0-9A-Za-z_]{10,}/g;

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
export function generate(root, size, { freshResponses = false } = {}) {
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
      const agentsDone = agentPattern === null ? ids : ids.replace(agentPattern, (a) => createHash("sha256").update(`agent:${n}:${a}`).digest("hex").slice(0, a.length));
      // Each copy's API responses are new ones too (their message and request ids), for counters of calls.
      return freshResponses ? agentsDone.replace(RESPONSE_ID, (id) => `${id.slice(0, 4)}${createHash("sha256").update(`response:${n}:${id}`).digest("base64url").slice(0, id.length - 4)}`) : agentsDone;
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

