// Every importer, exporter and archive command once as a real process (spawned bin: start-up, exit status,
// stdout and stderr as a user sees them). Most files run the tools on a thread for speed
// (test/support/thread.ts); this one, cli.test.ts, the golden cases (test/cases), the lease, crash and
// concurrency suites keep the process paths: each command's success and its not_found exit here.
import { readdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROOT, run, tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";
import { MAIN_FILE as GEMINI_FILE } from "../support/gemini.js";
import { buildOpencodeDb } from "../support/opencode.js";

const AGENTS = ["claude", "codex", "pi", "gemini", "opencode"] as const;
const codexFile = path.join(CODEX_FIXTURES_DIR, "agent-history", readdirSync(path.join(CODEX_FIXTURES_DIR, "agent-history")).find((n) => n.endsWith(".jsonl"))!);
const sources: Record<(typeof AGENTS)[number], () => string> = {
  claude: () => path.join(CLAUDE_FIXTURES, "agent-sessions/small.jsonl"),
  codex: () => codexFile,
  pi: () => path.join(ROOT, "test/fixtures/pi/before-compaction.jsonl"),
  gemini: () => GEMINI_FILE,
  opencode: () => buildOpencodeDb(tempDir("pixir-opencode-")),
};

let ws = "";
let rows: any[] = [];
const rootOf = (agent: string) => rows.find((r) => r.agent === agent && r.kind === "root")!.session_id as string;

beforeAll(() => {
  ws = tempDir();
  for (const agent of AGENTS) {
    const r = run("pixir", ["import", agent, sources[agent](), "--json"], { cwd: ws, env: { CODEX_HOME: path.join(ws, "no-codex-home") } });
    expect(r.code, `import ${agent}: ${r.stderr}`).toBe(0);
    expect(r.json).toMatchObject({ ok: true, recorded: true });
    expect(r.stderr).toBe("");
  }
  const ls = run("pixir", ["ls", "--json"], { cwd: ws });
  expect(ls.code, ls.stderr).toBe(0);
  rows = ls.lines;
});

describe("each importer's Logs, exported and read by real processes", () => {
  it.each(AGENTS)("%s: imported, exported to stdout, exit 0; an unknown id is not_found, exit 2", (agent) => {
    const id = rootOf(agent);
    const exp = run("pixir", ["export", agent, id], { cwd: ws });
    expect(exp.code, exp.stderr).toBe(0);
    expect(exp.stdout.length).toBeGreaterThan(0);
    const missing = run("pixir", ["export", agent, "no-such-session", "--json"], { cwd: ws });
    expect(missing.code).toBe(2);
    // A stream command: its --json error is the last line of stderr.
    expect(missing.errJson.error.kind).toBe("not_found");
  });

  it("context, search, index, usage and diff run and exit 0; a missing Session exits 2", () => {
    const id = rootOf("pi");
    const context = run("pixir", ["context", id], { cwd: ws });
    expect(context.code, context.stderr).toBe(0);
    expect(context.lines.length).toBeGreaterThan(0);
    const index = run("pixir", ["index", "--json"], { cwd: ws });
    expect(index.code, index.stderr).toBe(0);
    const search = run("pixir", ["search", "the", "--json"], { cwd: ws });
    expect(search.code, search.stderr).toBe(0);
    expect(search.lines.length).toBeGreaterThan(0);
    const usage = run("pixir", ["usage", "--by", "agent", "--json"], { cwd: ws });
    expect(usage.code, usage.stderr).toBe(0);
    const diff = run("pixir", ["diff", id, rootOf("gemini")], { cwd: ws });
    expect([0, 1], diff.stderr).toContain(diff.code);
    const missing = run("pixir", ["context", "no-such-session"], { cwd: ws });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: not_found: /m);
  });
});
