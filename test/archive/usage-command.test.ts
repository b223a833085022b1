// pixir usage (archive.md §3) on the real fixtures, against a count written here from the source files
// themselves (records and rollout lines, not Logs): per session, per family, forks and subagents.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, jsonRecords as jsonLines } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { allFixtureFiles, CLAUDE_FIXTURES, projectsRoot } from "../support/claude.js";
import { CODEX_FIXTURES_DIR, HAS_LOCALPUSH, LOCALPUSH_DIR } from "../support/codex.js";
import { PI_DIR } from "../support/pi.js";

interface Count {
  calls: number;
  total: number;
}
const add = (a: Count, b: Count): Count => ({ calls: a.calls + b.calls, total: a.total + b.total });
const ZERO: Count = { calls: 0, total: 0 };

/** Claude: one call per API response (message.id + requestId), the usage of its record with the most output. */
function claudeResponses(file: string): Map<string, any> {
  const best = new Map<string, any>();
  let loose = 0;
  for (const r of jsonLines(file)) {
    const m = r.type === "assistant" ? r.message : null;
    if (m === null || typeof m !== "object" || typeof m.usage !== "object" || m.usage === null || m.model === "<synthetic>") continue;
    const key = typeof m.id === "string" ? `${m.id}|${r.requestId ?? ""}` : `loose-${loose++}`;
    const seen = best.get(key);
    if (seen === undefined || (m.usage.output_tokens ?? 0) > (seen.output_tokens ?? 0)) best.set(key, m.usage);
  }
  return best;
}
const claudeCount = (responses: Iterable<any>): Count => {
  let c = ZERO;
  for (const u of responses) c = add(c, { calls: 1, total: (u.input_tokens ?? 0) + (u.output_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) });
  return c;
};

/** The Log a Claude file's main records become: the session id, or `<session>.agent-<id>` for a subagent file. */
function claudeLogId(file: string): string {
  const r = jsonLines(file).find((x) => typeof x.sessionId === "string" && x.sessionId !== "[trimmed for fixture]");
  const agent = jsonLines(file).find((x) => x.isSidechain === true && typeof x.agentId === "string");
  const sub = path.basename(file).startsWith("agent-");
  return sub && agent ? `${r.sessionId}.agent-${agent.agentId}` : r.sessionId;
}

/** Codex: a call is the last_token_usage of a token_count whose running totals grew (a reset counts from 0). */
function codexCount(file: string): { id: string; count: Count } {
  const lines = jsonLines(file);
  const keys = ["input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"];
  let last: any = {};
  let count = ZERO;
  for (const l of lines) {
    const info = l.type === "event_msg" && l.payload?.type === "token_count" ? l.payload.info : null;
    if (info === null || typeof info?.total_token_usage !== "object") continue;
    const totals = info.total_token_usage;
    const num = (v: unknown) => (typeof v === "number" ? v : 0);
    let delta = keys.map((k) => num(totals[k]) - num(last[k]));
    if (delta.some((d) => d < 0)) delta = keys.map((k) => num(totals[k])); // the counters were reset
    last = totals;
    if (delta.every((d) => d === 0)) continue;
    const u = info.last_token_usage;
    count = add(count, { calls: 1, total: u.input_tokens + u.output_tokens + (u.cache_write_input_tokens ?? 0) });
  }
  return { id: lines[0].payload.id, count };
}

/** pi: one call per assistant message with usage. */
function piCount(file: string): { id: string; forked: boolean; count: Count } {
  const lines = jsonLines(file);
  let count = ZERO;
  for (const e of lines) {
    const u = e.type === "message" && e.message?.role === "assistant" ? e.message.usage : null;
    if (u && typeof u === "object") count = add(count, { calls: 1, total: (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0) });
  }
  return { id: lines[0].id, forked: typeof lines[0].parentSession === "string" || typeof lines[0].branchedFrom === "string", count };
}

const walk = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name)) : d.name.endsWith(".jsonl") ? [path.join(dir, d.name)] : []));

/** The rows of `pixir usage … --json`, by key, and the total. */
function usage(ws: string, args: string[]): { rows: Map<string, any>; total: any; list: any[] } {
  const res = run("pixir", ["usage", ...args, "--json"], { cwd: ws });
  expect(res.code, res.stderr).toBe(0);
  const lines = res.stdout.trim().split("\n").map((l) => JSON.parse(l));
  const total = lines.pop().total;
  return { rows: new Map(lines.map((r) => [r.key, r])), total, list: lines };
}

/** The `--by session` rows of a file's Logs: `id` and its branches and sidechains (not its subagent files' Logs). */
function fileLogs(rows: Map<string, any>, id: string): Count {
  let c = ZERO;
  for (const [key, row] of rows) if (key === id || (key.startsWith(`${id}.`) && !key.slice(id.length + 1).startsWith("agent-"))) c = add(c, { calls: row.calls, total: row.total });
  return c;
}

describe("pixir usage on the real fixtures", () => {
  let ws: string;
  let bySession: Map<string, any>;
  const codexFiles = [...walk(CODEX_FIXTURES_DIR), ...(HAS_LOCALPUSH ? walk(LOCALPUSH_DIR) : [])];
  const piFiles = walk(PI_DIR);

  beforeAll(() => {
    ws = tempDir();
    for (const args of [["claude", projectsRoot()], ["codex", ...codexFiles], ["pi", ...piFiles]]) {
      const res = run("pixir", ["import", ...args], { cwd: ws });
      expect(res.code, res.stderr).toBe(0);
    }
    bySession = usage(ws, ["--by", "session"]).rows;
  }, 120_000);

  it("equals an independent count of every Claude transcript's responses, per Log", () => {
    const files = allFixtureFiles();
    expect(files.length).toBeGreaterThan(20);
    for (const rel of files) {
      const file = path.join(CLAUDE_FIXTURES, rel);
      const want = claudeCount(claudeResponses(file).values());
      expect(fileLogs(bySession, claudeLogId(file)), rel).toEqual(want);
    }
  });

  it("equals an independent count of every Codex rollout's token_count lines", () => {
    for (const file of codexFiles) {
      const { id, count } = codexCount(file);
      expect(fileLogs(bySession, id), file).toEqual(count);
    }
  });

  it("equals an independent count of every pi file that is not a fork", () => {
    for (const file of piFiles) {
      const { id, forked, count } = piCount(file);
      if (!forked) expect(fileLogs(bySession, id), file).toEqual(count);
    }
  });

  it("counts what a pi /fork file copied once: the whole archive is the distinct entries", () => {
    const distinct = new Map<string, number>();
    for (const file of piFiles) {
      for (const e of jsonLines(file)) {
        const u = e.type === "message" && e.message?.role === "assistant" ? e.message.usage : null;
        if (u && typeof u === "object") distinct.set(`${e.id}|${e.timestamp}`, (u.input ?? 0) + (u.output ?? 0) + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0));
      }
    }
    const { total } = usage(ws, ["--by", "agent", "--agent", "pi"]);
    expect(total.calls).toBe(distinct.size);
    expect(total.total).toBe([...distinct.values()].reduce((a, b) => a + b, 0));
  });

  it("rolls subagents into their parent's family: --session gives each member and the family total", () => {
    const parent = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    const dir = path.join(CLAUDE_FIXTURES, "claude-code-log");
    const files = [path.join(dir, `${parent}.jsonl`), ...walk(path.join(dir, parent))];
    const want = files.map((f) => claudeCount(claudeResponses(f).values())).reduce(add, ZERO);
    const fam = usage(ws, ["--session", parent]);
    expect(fam.list.map((r) => r.key)).toEqual([parent, ...fam.list.slice(1).map((r) => r.key)]);
    expect(fam.list.length).toBe(files.length);
    expect(fam.list.filter((r) => r.kind === "subagent").length).toBe(files.length - 1);
    expect({ calls: fam.total.calls, total: fam.total.total }).toEqual(want);
    expect(usage(ws, ["--by", "family"]).rows.get(parent)).toMatchObject({ calls: want.calls, total: want.total });
  });

  it("shows a rewind's abandoned branch as a row of its family", () => {
    const id = "03eb5929-52b3-4b13-ada3-b93ae35806b8";
    const fam = usage(ws, ["--session", id]);
    expect(fam.list.map((r) => r.kind)).toEqual(["root", "branch"]);
    expect(fam.list.every((r) => r.calls > 0)).toBe(true);
    expect(fam.total.calls).toBe(claudeCount(claudeResponses(path.join(CLAUDE_FIXTURES, "claude-code-log", `${id}.jsonl`)).values()).calls);
  });

  it("gives every row the fields of §3 and a total equal to the sum of the rows", () => {
    const all = usage(ws, ["--by", "model"]);
    const fields = ["key", "calls", "input", "output", "cache_read", "cache_write", "cache_write_5m", "cache_write_1h", "reasoning", "total", "cost_usd", "unpriced_calls", "models"];
    for (const r of all.list) expect(Object.keys(r).sort()).toEqual([...fields].sort());
    expect(all.total.calls).toBe(all.list.reduce((s, r) => s + r.calls, 0));
    expect(all.total.total).toBe(all.list.reduce((s, r) => s + r.total, 0));
    expect(all.total.calls).toBe([...bySession.values()].reduce((s, r) => s + r.calls, 0));
    // The hand-made fixtures name models no table lists: counted, cost unknown, never 0.
    const unknown = all.list.filter((r) => r.unpriced_calls > 0);
    expect(unknown.length).toBeGreaterThan(0);
    for (const r of unknown) expect(r.cost_usd).toBeNull();
    expect(all.total.unpriced_calls).toBe(unknown.reduce((s, r) => s + r.unpriced_calls, 0));
  });
});

describe("pixir usage: forks count the shared prefix once", () => {
  const SOURCE = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
  const FORK = "00000000-0000-4000-8000-000000000001";
  const sourceFile = path.join(CLAUDE_FIXTURES, "claude-code-log", `${SOURCE}.jsonl`);
  const sourceLines = readFileSync(sourceFile, "utf8").split("\n").filter((l) => l !== "");
  const newAnswer = { id: "msg_fork_1", type: "message", role: "assistant", model: "claude-opus-4-6", content: [{ type: "text", text: "a new answer" }], usage: { input_tokens: 7, output_tokens: 11, cache_read_input_tokens: 13, cache_creation_input_tokens: 17 } };

  /** `claude --resume <id> --fork-session`: the records copied with the new session id, then new ones. */
  function forkSession(stampForkedFrom: boolean): string {
    const copied = sourceLines.slice(0, 11).map((l) => JSON.parse(l));
    const out = copied.map((r) => JSON.stringify({ ...r, sessionId: FORK, ...(stampForkedFrom && typeof r.uuid === "string" ? { forkedFrom: { sessionId: SOURCE, messageUuid: r.uuid } } : {}) }));
    const last = copied.filter((r) => typeof r.uuid === "string").at(-1);
    const base = { isSidechain: false, userType: "external", cwd: last.cwd, sessionId: FORK, version: last.version, gitBranch: last.gitBranch };
    out.push(JSON.stringify({ parentUuid: last.uuid, ...base, type: "user", message: { role: "user", content: "a new question" }, uuid: "f0000000-0000-4000-8000-000000000001", timestamp: "2026-01-01T00:00:00.000Z" }));
    out.push(JSON.stringify({ parentUuid: "f0000000-0000-4000-8000-000000000001", ...base, type: "assistant", requestId: "req_fork_1", message: newAnswer, uuid: "f0000000-0000-4000-8000-000000000002", timestamp: "2026-01-01T00:00:01.000Z" }));
    return `${out.join("\n")}\n`;
  }

  function importPair(fork: string): string {
    const root = tempDir("pixir-usage-fork-");
    const dir = path.join(root, "-Users-dain-workspace-danieldemmel-me-next");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${SOURCE}.jsonl`), readFileSync(sourceFile));
    writeFileSync(path.join(dir, `${FORK}.jsonl`), fork);
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root], { cwd: ws });
    expect(res.code, res.stderr).toBe(0);
    return ws;
  }

  const distinct = () => {
    const responses = claudeResponses(sourceFile);
    responses.set("fork", newAnswer.usage);
    return claudeCount(responses.values());
  };

  it("a Claude --fork-session file with forkedFrom: the family total is the distinct calls; the fork's row only its own", () => {
    const ws = importPair(forkSession(true));
    expect(run("pixir", ["tree", SOURCE, "--json"], { cwd: ws }).stdout).toContain(FORK);
    const fam = usage(ws, ["--session", SOURCE]);
    expect(fam.list.find((r) => r.key === FORK)).toMatchObject({ kind: "fork", calls: 1, total: 7 + 11 + 13 + 17 });
    expect({ calls: fam.total.calls, total: fam.total.total }).toEqual(distinct());
  });

  it("a Claude --fork-session file without forkedFrom (two roots): the archive's total is still the distinct calls", () => {
    const ws = importPair(forkSession(false));
    const all = usage(ws, ["--by", "session"]);
    expect({ calls: all.total.calls, total: all.total.total }).toEqual(distinct());
    // Each copied response is in both Logs; it is counted in one of them.
    const held = claudeCount(claudeResponses(sourceFile).values()).calls;
    expect([...all.rows.values()].reduce((s, r) => s + r.calls, 0)).toBe(held + 1);
  });

  it("a Codex fork: the copied token_count lines are the source's, the fork's row its new call only", () => {
    const rel = "codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";
    const parentFile = path.join(CODEX_FIXTURES_DIR, rel);
    const lines = readFileSync(parentFile, "utf8").split("\n").filter((l) => l !== "");
    const parent = JSON.parse(lines[0]!).payload.id;
    const child = "019e1625-0000-7000-8000-00000000c0de";
    const k = 120;
    const copied = lines.slice(0, k);
    const lastTotals = copied.map((l) => JSON.parse(l)).filter((l) => l.payload?.type === "token_count" && l.payload.info).at(-1).payload.info.total_token_usage;
    const ts = "2026-05-12T00:00:00.000Z";
    const meta = JSON.parse(lines[0]!);
    const call = { input_tokens: 1000, cached_input_tokens: 600, output_tokens: 50, reasoning_output_tokens: 10, total_tokens: 1050 };
    const grown = Object.fromEntries(Object.entries(lastTotals).map(([key, v]) => [key, (v as number) + ((call as any)[key] ?? 0)]));
    const fork = [
      JSON.stringify({ timestamp: ts, type: "session_meta", payload: { ...meta.payload, id: child, forked_from_id: parent, timestamp: ts } }),
      ...copied,
      JSON.stringify({ timestamp: ts, type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "and now?" }] } }),
      JSON.stringify({ timestamp: ts, type: "event_msg", payload: { type: "token_count", info: { total_token_usage: grown, last_token_usage: call, model_context_window: 258400 }, rate_limits: null } }),
    ];
    const dir = tempDir("pixir-usage-codex-");
    const forkFile = path.join(dir, `rollout-2026-05-12T00-00-00-${child}.jsonl`);
    writeFileSync(forkFile, `${fork.join("\n")}\n`);
    const ws = tempDir();
    const res = run("pixir", ["import", "codex", parentFile, forkFile, "--json"], { cwd: ws });
    expect(res.code, res.stderr).toBe(0);
    const fam = usage(ws, ["--session", parent]);
    expect(fam.list.map((r) => r.key)).toEqual([parent, child]);
    expect(fam.list[1]).toMatchObject({ kind: "fork", calls: 1, total: 1050, input: 400, cache_read: 600, output: 50, reasoning: 10 });
    const own = codexCount(parentFile).count;
    expect({ calls: fam.total.calls, total: fam.total.total }).toEqual(add(own, { calls: 1, total: 1050 }));
  });
});

describe("pixir usage: prices", () => {
  const file = "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl";
  let ws: string;
  beforeAll(() => {
    ws = tempDir();
    expect(run("pixir", ["import", "claude", projectsRoot([file])], { cwd: ws }).code).toBe(0);
  });

  it("--prices overrides one model: the cost follows the file's row", () => {
    const responses = [...claudeResponses(path.join(CLAUDE_FIXTURES, file)).values()];
    const dir = tempDir("pixir-prices-");
    const prices = path.join(dir, "prices.json");
    const row = { input: 1, output: 2, cache_read: 3, cache_write_5m: 4, cache_write_1h: 5 };
    const models = new Set(jsonLines(path.join(CLAUDE_FIXTURES, file)).filter((r) => r.type === "assistant").map((r) => r.message.model));
    writeFileSync(prices, JSON.stringify(Object.fromEntries([...models].map((m) => [m, row]))));
    const want = responses.reduce((s, u) => s + (u.input_tokens * 1 + u.output_tokens * 2 + u.cache_read_input_tokens * 3 + u.cache_creation_input_tokens * 4) / 1e6, 0);
    const got = usage(ws, ["--by", "session", "--prices", prices]).total;
    expect(got.cost_usd).toBeCloseTo(want, 6);
    expect(got.unpriced_calls).toBe(0);
    const builtIn = usage(ws, ["--by", "session"]).total;
    expect(builtIn.cost_usd).not.toBeCloseTo(want, 6);
  });

  it("an unreadable or malformed price file is a structured error, exit 2", () => {
    const res = run("pixir", ["usage", "--prices", "/nonexistent/prices.json", "--json"], { cwd: ws });
    expect(res.code).toBe(2);
    expect(res.errJson.error).toMatchObject({ kind: "invalid_args" });
    const bad = path.join(tempDir("pixir-prices-"), "p.json");
    writeFileSync(bad, JSON.stringify({ m: { input: "cheap" } }));
    const r2 = run("pixir", ["usage", "--prices", bad], { cwd: ws });
    expect(r2.code).toBe(2);
    expect(r2.stderr).toContain("bad_price");
  });

  it("--mode recorded costs null where the source wrote no cost; bad flags are usage errors", () => {
    const rec = usage(ws, ["--by", "session", "--mode", "recorded"]).total;
    expect(rec.cost_usd).toBeNull();
    expect(rec.unpriced_calls).toBe(rec.calls);
    expect(run("pixir", ["usage", "--since", "yesterday"], { cwd: ws }).code).toBe(2);
    expect(run("pixir", ["usage", "--by", "hour"], { cwd: ws }).code).toBe(2);
  });

  it("prints a table with a total, and the 30-day default says so on stderr", () => {
    const res = run("pixir", ["usage", "--by", "session"], { cwd: ws });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^session\s+kind\s+calls/);
    expect(res.stdout).toMatch(/\ntotal\s/);
    const def = run("pixir", ["usage"], { cwd: ws });
    expect(def.code).toBe(0);
    expect(def.stdout).toBe("");
    expect(def.stderr).toContain("hint: no model calls in the last 30 days");
    expect(run("pixir", ["usage", "--agent", "claud"], { cwd: ws }).code).toBe(2);
  });
});
