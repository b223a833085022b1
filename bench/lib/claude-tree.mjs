// The generated Claude projects trees of the benchmarks (bench/claude-import.mjs, bench/usage.mjs): copies
// of the real transcripts under test/fixtures/real-sessions/claude, each copy with fresh ids.
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
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


/**
 * One long Claude Code session of about `size` bytes in `file` (bench/claude-import.mjs --one-session): a
 * single chain of user and assistant records, a tool call and its result every fourth turn, text with
 * escapes as real transcripts have, timestamps a second apart. Deterministic: the same size gives the same
 * bytes. Returns the number of records.
 */
export function oneSession(file, size) {
  mkdirSync(path.dirname(file), { recursive: true });
  const sessionId = freshUuid("one-session");
  const common = `"isSidechain":false,"userType":"external","cwd":"/proj","sessionId":"${sessionId}","version":"2.0.0"`;
  const words = (seed, n) => {
    let s = "";
    for (let i = 0; s.length < n; i++) s += `${i % 13 === 0 ? "\n" : " "}w${(seed * 31 + i * 7) % 997}${i % 29 === 0 ? ' "quoted"' : ""}`;
    return JSON.stringify(s);
  };
  // Written in blocks: one string of the whole file passes V8's string limit past 512 MiB.
  const fd = openSync(file, "w");
  let block = [];
  let count = 0;
  let bytes = 0;
  let parent = null;
  for (let i = 0; bytes < size; i++) {
    const uuid = freshUuid(`one-session:${i}`);
    const ts = new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    const head = `{"parentUuid":${parent === null ? "null" : `"${parent}"`},${common}`;
    const call = `toolu_${String(i - 1).padStart(8, "0")}`;
    let message;
    if (i % 2 === 0 && i % 8 === 2) message = `"type":"user","message":{"role":"user","content":[{"tool_use_id":"${call}","type":"tool_result","content":${words(i, 1700)}}]}`;
    else if (i % 2 === 0) message = `"type":"user","message":{"role":"user","content":${words(i, 1700)}}`;
    else {
      const content = i % 8 === 1 ? `[{"type":"text","text":${words(i, 400)}},{"type":"tool_use","id":"toolu_${String(i).padStart(8, "0")}","name":"Bash","input":{"command":${words(i + 1, 1200)}}}]` : `[{"type":"text","text":${words(i, 1600)}}]`;
      message = `"type":"assistant","message":{"id":"msg_${i}","type":"message","role":"assistant","model":"claude-x","content":${content},"stop_reason":"end_turn","usage":{"input_tokens":${i},"output_tokens":${i % 500}}},"requestId":"req_${i}"`;
    }
    const line = `${head},${message},"uuid":"${uuid}","timestamp":"${ts}"}\n`;
    block.push(line);
    count++;
    bytes += Buffer.byteLength(line);
    parent = uuid;
    if (block.length === 4096) {
      writeSync(fd, block.join(""));
      block = [];
    }
  }
  writeSync(fd, block.join(""));
  closeSync(fd);
  return count;
}
