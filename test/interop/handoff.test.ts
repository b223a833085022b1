// archive.md §5: a real session handed to another agent under temporary agent homes: the cwd the source
// recorded (read here from the source file itself), --cwd, --install, the resume command.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";

const CLAUDE_ID = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
const CLAUDE_FILE = path.join(CLAUDE_FIXTURES, "claude-code-log", `${CLAUDE_ID}.jsonl`);
const CODEX_ID = "019e1625-789d-76c0-80ab-3724b5ddb799";
const CODEX_FILE = path.join(CODEX_FIXTURES_DIR, "codemie-code", `rollout-2026-05-11T11-26-55-${CODEX_ID}.jsonl`);

const jsonl = (text: string): any[] =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

/** The cwd each source recorded, read from the files (not from pixir). */
const claudeCwd = (): string => jsonl(readFileSync(CLAUDE_FILE, "utf8")).find((r) => typeof r.cwd === "string").cwd;
const codexCwd = (): string => jsonl(readFileSync(CODEX_FILE, "utf8"))[0].payload.cwd;

function workspace(): string {
  const ws = tempDir("pixir-handoff-ws-");
  expect(run("pixir", ["import", "claude", CLAUDE_FILE], { cwd: ws }).code).toBe(0);
  expect(run("pixir", ["import", "codex", CODEX_FILE], { cwd: ws }).code).toBe(0);
  return ws;
}

function files(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, name.name);
      if (name.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  if (existsSync(dir)) walk(dir);
  return out.sort();
}

describe("hand-off: the working directory the source recorded", () => {
  const ws = workspace();

  it("a Claude session exported to Codex records Claude's cwd, installs under $CODEX_HOME, and names codex resume", () => {
    const home = tempDir("pixir-codex-home-");
    const env = { CODEX_HOME: home, HOME: tempDir("pixir-home-") };
    const r = run("pixir", ["export", "codex", CLAUDE_ID, "--install", "--json"], { cwd: ws, env });
    expect(r.code, r.stderr).toBe(0);
    const [file] = files(path.join(home, "sessions"));
    expect(file).toBe(r.json.path);
    expect(path.relative(path.join(home, "sessions"), file!)).toMatch(/^\d{4}\/\d{2}\/\d{2}\/rollout-.*\.jsonl$/);
    const meta = jsonl(readFileSync(file!, "utf8"))[0];
    expect(meta.payload.cwd).toBe(claudeCwd());
    expect(r.json.cwd).toBe(claudeCwd());
    expect(r.json.resume_command).toBe(`codex resume ${meta.payload.id}`);
    expect(r.json.status).toBe("created");
    const again = run("pixir", ["export", "codex", CLAUDE_ID, "--install", "--json"], { cwd: ws, env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.status).toBe("unchanged");
    const text = run("pixir", ["export", "codex", CLAUDE_ID, "--install"], { cwd: ws, env });
    expect(text.stdout).toContain(`resume: codex resume ${meta.payload.id}`);
  });

  it("a Codex thread exported to Claude lands in the project directory of Codex's cwd, resumed from there", () => {
    const config = tempDir("pixir-claude-home-");
    const r = run("pixir", ["export", "claude", CODEX_ID, "--install", "--json"], { cwd: ws, env: { CLAUDE_CONFIG_DIR: config } });
    expect(r.code, r.stderr).toBe(0);
    const cwd = codexCwd();
    const escaped = cwd.replace(/[^A-Za-z0-9]/g, "-");
    const [file] = files(path.join(config, "projects"));
    expect(path.dirname(file!)).toBe(path.join(config, "projects", escaped));
    const id = path.basename(file!, ".jsonl");
    const records = jsonl(readFileSync(file!, "utf8")).filter((x) => typeof x.cwd === "string");
    expect(records.length).toBeGreaterThan(0);
    for (const x of records) expect(x.cwd).toBe(cwd);
    expect(r.json.resume_command).toBe(`cd ${cwd} && claude --resume ${id}`);
    expect(r.json.files[0].status).toBe("written");
    const again = run("pixir", ["export", "claude", CODEX_ID, "--install", "--json"], { cwd: ws, env: { CLAUDE_CONFIG_DIR: config } });
    expect(again.json.files[0].status).toBe("unchanged");
  });

  it("a Codex thread exported to pi goes to pi's directory for that cwd; an existing different file is refused", () => {
    const agentDir = tempDir("pixir-pi-home-");
    const env = { PI_CODING_AGENT_DIR: agentDir };
    const r = run("pixir", ["export", "pi", CODEX_ID, "--install", "--json"], { cwd: ws, env });
    expect(r.code, r.stderr).toBe(0);
    const encoded = `--${codexCwd().replace(/^\//, "").replace(/[/\\:]/g, "-")}--`;
    const [file] = files(path.join(agentDir, "sessions"));
    expect(path.dirname(file!)).toBe(path.join(agentDir, "sessions", encoded));
    expect(jsonl(readFileSync(file!, "utf8"))[0].cwd).toBe(codexCwd());
    expect(r.json.resume_command).toBe(`pi --session ${file}`);
    expect(run("pixir", ["export", "pi", CODEX_ID, "--install", "--json"], { cwd: ws, env }).json.status).toBe("unchanged");
    writeFileSync(file!, "{}\n");
    const refused = run("pixir", ["export", "pi", CODEX_ID, "--install", "--json"], { cwd: ws, env });
    expect(refused.code).toBe(1);
    expect((refused.json ?? refused.errJson).error.kind).toBe("already_exists");
    expect(readFileSync(file!, "utf8")).toBe("{}\n");
  });

  it("--cwd DIR wins over the recorded cwd, resolved against the shell's directory", () => {
    const r = run("pixir", ["export", "claude", CODEX_ID, "--cwd", "project", "--dry-run", "--json"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.cwd).toBe(path.join(ws, "project"));
    expect(r.json.resume_command).toBe(`cd ${path.join(ws, "project")} && claude --resume ${r.json.claude_session_id}`);
    const stream = run("pixir", ["export", "codex", CLAUDE_ID, "--cwd", "/srv/app"], { cwd: ws });
    expect(jsonl(stream.stdout)[0].payload.cwd).toBe("/srv/app");
  });

  it("--out and --install together are a usage error", () => {
    const r = run("pixir", ["export", "codex", CLAUDE_ID, "--install", "--out", ws, "--json"], { cwd: ws, env: { CODEX_HOME: tempDir() } });
    expect(r.code).toBe(2);
    expect((r.json ?? r.errJson).error.kind).toBe("usage");
  });
});

describe("hand-off: a session that recorded no cwd", () => {
  it("stops with exit 2 asking for --cwd, and writes nothing", () => {
    const dir = tempDir();
    const id = "01990000-0000-7000-8000-000000000001";
    const rollout = [
      { timestamp: "2026-01-01T00:00:00.000Z", type: "session_meta", payload: { id, timestamp: "2026-01-01T00:00:00.000Z", originator: "codex_cli_rs", cli_version: "0.1.0" } },
      { timestamp: "2026-01-01T00:00:01.000Z", type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "hello" }] } },
    ];
    const file = path.join(dir, `rollout-2026-01-01T00-00-00-${id}.jsonl`);
    writeFileSync(file, rollout.map((x) => JSON.stringify(x)).join("\n") + "\n");
    const ws = tempDir();
    expect(run("pixir", ["import", "codex", file], { cwd: ws }).code).toBe(0);
    const config = tempDir();
    const r = run("pixir", ["export", "claude", id, "--install", "--json"], { cwd: ws, env: { CLAUDE_CONFIG_DIR: config } });
    expect(r.code).toBe(2);
    expect((r.json ?? r.errJson).error.kind).toBe("invalid_args");
    expect((r.json ?? r.errJson).error.details).toMatchObject({ field: "cwd", reason: "cwd_unknown" });
    expect((r.json ?? r.errJson).error.message).toContain("--cwd");
    expect(files(config)).toEqual([]);
    const given = run("pixir", ["export", "claude", id, "--install", "--cwd", "/srv/app", "--json"], { cwd: ws, env: { CLAUDE_CONFIG_DIR: config } });
    expect(given.code, given.stderr).toBe(0);
    expect(given.json.project_dir).toBe("-srv-app");
  });
});
