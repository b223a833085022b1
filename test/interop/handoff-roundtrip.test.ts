// archive.md §5: a real Claude session handed to Codex and back, a real Codex thread to Claude and back,
// under temporary agent homes: what a model sees stays the same text, the file resumes where the work is,
// and importing the hand-off again never makes a second copy.
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES, logIds } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";

const CLAUDE_ID = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
const CLAUDE_FILE = path.join(CLAUDE_FIXTURES, "claude-code-log", `${CLAUDE_ID}.jsonl`);
const CODEX_ID = "019e1625-789d-76c0-80ab-3724b5ddb799";
const CODEX_FILE = path.join(CODEX_FIXTURES_DIR, "codemie-code", `rollout-2026-05-11T11-26-55-${CODEX_ID}.jsonl`);
const PI_ID = "19460c51-3e55-4ee0-ba8f-b97bb5a88301";
const PI_FILE = path.join(ROOT, "test", "fixtures", "pi", "generated", "sessions", "--home-user-demo--", `2026-01-10T09-00-00-250Z_${PI_ID}.jsonl`);

const jsonl = (text: string): any[] =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

/** The user and assistant texts of what a model sees of a Log, in order. */
function texts(ws: string, id: string): string[] {
  const r = run("pixir", ["context", id], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return r.lines
    .filter((l) => l.type === "user_message" || l.type === "assistant_message")
    .map((l) => `${l.item.role}: ${(l.item.content as any[]).map((c) => c.text ?? "").join("")}`);
}

const only = (dir: string): string => {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(path.join(d, e.name)) : out.push(path.join(d, e.name));
  };
  walk(dir);
  expect(out).toHaveLength(1);
  return out[0]!;
};

function imported(agent: string, file: string, ws = tempDir("pixir-roundtrip-")): { ws: string; r: ReturnType<typeof run> } {
  const r = run("pixir", ["import", agent, file, "--json"], { cwd: ws });
  expect(r.code, r.stderr || r.stdout).toBe(0);
  return { ws, r };
}

describe("a real Claude session handed to Codex and back", () => {
  const { ws } = imported("claude", CLAUDE_FILE);
  const codexHome = tempDir("pixir-codex-home-");
  const claudeHome = tempDir("pixir-claude-home-");
  const cwd = jsonl(readFileSync(CLAUDE_FILE, "utf8")).find((r) => typeof r.cwd === "string").cwd;
  const original = texts(ws, CLAUDE_ID);

  const out = run("pixir", ["export", "codex", CLAUDE_ID, "--install", "--json"], { cwd: ws, env: { CODEX_HOME: codexHome } });
  const rollout = only(path.join(codexHome, "sessions"));
  const threadId = jsonl(readFileSync(rollout, "utf8"))[0].payload.id;

  it("Codex resumes it in the project: the rollout's cwd, and codex resume <thread id>", () => {
    expect(out.code, out.stderr).toBe(0);
    expect(jsonl(readFileSync(rollout, "utf8"))[0].payload.cwd).toBe(cwd);
    expect(out.json.resume_command).toBe(`codex resume ${threadId}`);
  });

  it("the user/assistant texts are the same after Codex and after Claude again", () => {
    expect(original.length).toBeGreaterThan(3);
    const viaCodex = imported("codex", rollout);
    expect(texts(viaCodex.ws, threadId)).toEqual(original);
    const back = run("pixir", ["export", "claude", threadId, "--install", "--json"], { cwd: viaCodex.ws, env: { CLAUDE_CONFIG_DIR: claudeHome } });
    expect(back.code, back.stderr).toBe(0);
    const file = only(path.join(claudeHome, "projects"));
    expect(path.basename(path.dirname(file))).toBe(cwd.replace(/[^A-Za-z0-9]/g, "-"));
    expect(back.json.resume_command).toBe(`cd ${cwd} && claude --resume ${path.basename(file, ".jsonl")}`);
    const again = imported("claude", file);
    expect(texts(again.ws, path.basename(file, ".jsonl"))).toEqual(original);
  });

  it("importing the rollout into the session's Workspace adds nothing; what Codex added becomes one fork, extended later", () => {
    const before = logIds(ws);
    const same = imported("codex", rollout, ws).r;
    expect(same.json.handed_back).toEqual([expect.objectContaining({ session_id: CLAUDE_ID, status: "unchanged" })]);
    expect(same.json.imports).toEqual([]);
    expect(logIds(ws)).toEqual(before);
    const line = (ts: string, role: string, text: string) =>
      `${JSON.stringify({ timestamp: ts, type: "response_item", payload: { type: "message", role, content: [{ type: role === "user" ? "input_text" : "output_text", text }] } })}\n`;
    appendFileSync(rollout, line("2026-06-01T10:00:00.000Z", "user", "go on in codex") + line("2026-06-01T10:00:05.000Z", "assistant", "went on"));
    const grown = imported("codex", rollout, ws).r;
    expect(grown.json.handed_back).toEqual([expect.objectContaining({ session_id: CLAUDE_ID, child_session_id: threadId, status: "created", appended_events: 2 })]);
    expect(logIds(ws)).toEqual([...before, threadId].sort());
    expect(texts(ws, threadId)).toEqual([...original, "user: go on in codex", "assistant: went on"]);
    expect(imported("codex", rollout, ws).r.json.handed_back[0].status).toBe("unchanged");
    appendFileSync(rollout, line("2026-06-01T10:01:00.000Z", "user", "and once more"));
    expect(imported("codex", rollout, ws).r.json.handed_back[0]).toMatchObject({ status: "appended", appended_events: 1 });
    expect(texts(ws, threadId).at(-1)).toBe("user: and once more");
    expect(logIds(ws)).toEqual([...before, threadId].sort());
  });
});

describe("a real Codex thread handed to Claude and back", () => {
  const { ws } = imported("codex", CODEX_FILE);
  const claudeHome = tempDir("pixir-claude-home-");
  const codexHome = tempDir("pixir-codex-home-");
  const cwd = jsonl(readFileSync(CODEX_FILE, "utf8"))[0].payload.cwd;
  const original = texts(ws, CODEX_ID);
  const out = run("pixir", ["export", "claude", CODEX_ID, "--install", "--json"], { cwd: ws, env: { CLAUDE_CONFIG_DIR: claudeHome } });
  const file = only(path.join(claudeHome, "projects"));
  const claudeId = path.basename(file, ".jsonl");

  it("Claude resumes it in the project directory Codex recorded", () => {
    expect(out.code, out.stderr).toBe(0);
    expect(path.basename(path.dirname(file))).toBe(cwd.replace(/[^A-Za-z0-9]/g, "-"));
    expect(out.json.resume_command).toBe(`cd ${cwd} && claude --resume ${claudeId}`);
    for (const r of jsonl(readFileSync(file, "utf8"))) if (typeof r.cwd === "string") expect(r.cwd).toBe(cwd);
  });

  it("the user/assistant texts are the same after Claude and after Codex again", () => {
    expect(original.length).toBeGreaterThan(3);
    const viaClaude = imported("claude", file);
    expect(texts(viaClaude.ws, claudeId)).toEqual(original);
    const back = run("pixir", ["export", "codex", claudeId, "--install", "--json"], { cwd: viaClaude.ws, env: { CODEX_HOME: codexHome } });
    expect(back.code, back.stderr).toBe(0);
    const rollout = only(path.join(codexHome, "sessions"));
    expect(jsonl(readFileSync(rollout, "utf8"))[0].payload.cwd).toBe(cwd);
    const again = imported("codex", rollout);
    expect(texts(again.ws, back.json.thread_id)).toEqual(original);
  });

  it("importing the Claude file into the thread's Workspace adds nothing; what Claude added becomes one fork", () => {
    const before = logIds(ws);
    const same = imported("claude", file, ws).r;
    expect(same.json.handed_back).toEqual([expect.objectContaining({ session_id: CODEX_ID, status: "unchanged" })]);
    expect(logIds(ws)).toEqual(before);
    const last = jsonl(readFileSync(file, "utf8")).filter((r) => typeof r.uuid === "string").at(-1);
    const user = { parentUuid: last.uuid, isSidechain: false, userType: "external", cwd, sessionId: claudeId, version: "2.0.0", type: "user", message: { role: "user", content: "and now in claude" }, uuid: "11111111-1111-4111-8111-111111111111", timestamp: "2026-06-01T10:00:00.000Z" };
    appendFileSync(file, `${JSON.stringify(user)}\n`);
    const grown = imported("claude", file, ws).r;
    expect(grown.json.handed_back).toEqual([expect.objectContaining({ child_session_id: claudeId, status: "created", appended_events: 1 })]);
    expect(logIds(ws)).toEqual([...before, claudeId].sort());
    expect(texts(ws, claudeId)).toEqual([...original, "user: and now in claude"]);
    expect(imported("claude", file, ws).r.json.handed_back[0].status).toBe("unchanged");
  });
});

describe("pi in both directions", () => {
  it("a Claude session handed to pi, imported again, is unchanged; a pi session handed to Claude too", () => {
    const { ws } = imported("claude", CLAUDE_FILE);
    const piHome = tempDir("pixir-pi-home-");
    const out = run("pixir", ["export", "pi", CLAUDE_ID, "--install", "--json"], { cwd: ws, env: { PI_CODING_AGENT_DIR: piHome } });
    expect(out.code, out.stderr).toBe(0);
    const file = only(path.join(piHome, "sessions"));
    expect(out.json.resume_command).toBe(`pi --session ${file}`);
    const before = logIds(ws);
    expect(imported("pi", file, ws).r.json.handed_back).toEqual([expect.objectContaining({ session_id: CLAUDE_ID, status: "unchanged" })]);
    expect(logIds(ws)).toEqual(before);

    const piWs = imported("pi", PI_FILE).ws;
    const claudeHome = tempDir("pixir-claude-home-");
    const toClaude = run("pixir", ["export", "claude", PI_ID, "--install", "--json"], { cwd: piWs, env: { CLAUDE_CONFIG_DIR: claudeHome } });
    expect(toClaude.code, toClaude.stderr).toBe(0);
    const claudeFile = only(path.join(claudeHome, "projects"));
    expect(path.basename(path.dirname(claudeFile))).toBe("-home-user-demo");
    const piLogs = logIds(piWs);
    expect(imported("claude", claudeFile, piWs).r.json.handed_back[0]).toMatchObject({ session_id: PI_ID, status: "unchanged" });
    expect(logIds(piWs)).toEqual(piLogs);
  });
});
