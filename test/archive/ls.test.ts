// archive.md §1 on the real fixtures, black box: `pixir ls` (facts, order, filters, columns), unique id
// prefixes in the wrapper and the plumbing, the readable `pixir tree`, and the empty-Workspace note. The
// expected titles, agents, cwds and times are read from the source files here, not from the importer.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { binPath, tempDir, jsonRecords as records } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";

const UTC = { TZ: "UTC" };
const full = "0d3a8e6f-290f-4105-a327-a2496e5e2a83";

/** Whitespace collapsed, cut at 120 characters with `…` (archive.md §1). */
const titleOf = (text: string) => {
  const flat = Array.from(text.replace(/\s+/g, " ").trim());
  return flat.length <= 120 ? flat.join("") : `${flat.slice(0, 119).join("")}…`;
};
const iso = (t: string) => new Date(t).toISOString();
const timesOf = (rs: any[], at: (r: any) => unknown) => {
  const ts = rs.map(at).filter((t): t is string => typeof t === "string" && !Number.isNaN(Date.parse(t))).map(iso).sort();
  return { started: ts[0], updated: ts.at(-1) };
};

/** A Claude transcript's facts, from its records: the first typed prompt (no injected block, no meta record). */
function claudeSource(rel: string) {
  const rs = records(path.join(CLAUDE_FIXTURES, rel));
  const textOf = (c: unknown) => (typeof c === "string" ? c : Array.isArray(c) ? c.filter((b: any) => b?.type === "text").map((b: any) => b.text).join("\n") : "");
  const typed = rs.find((r) => r.type === "user" && !r.isMeta && !r.isCompactSummary && /^[^<\[]/.test(textOf(r.message?.content).trim()));
  return { cwd: rs.find((r) => typeof r.cwd === "string")?.cwd, title: titleOf(textOf(typed.message.content)), ...timesOf(rs, (r) => r.timestamp ?? r.snapshot?.timestamp) };
}

function codexSource(rel: string) {
  const rs = records(path.join(CODEX_FIXTURES_DIR, rel));
  const meta = rs.find((r) => r.type === "session_meta").payload;
  const prompt = rs.find((r) => r.type === "event_msg" && r.payload.type === "user_message").payload.message as string;
  const request = prompt.split("## My request for Codex:")[1] ?? prompt;
  return { id: meta.id, cwd: meta.cwd, title: titleOf(request), ...timesOf(rs, (r) => r.timestamp) };
}

let ws = "";
let facts = new Map<string, any>();
const pixir = (...args: string[]) => run("pixir", args, { cwd: ws, env: UTC });

beforeAll(() => {
  ws = tempDir("pixir-ls-");
  expect(run("pixir", ["import", "claude", CLAUDE_FIXTURES, "--json"], { cwd: ws }).code).toBe(0);
  const codex = ["codemie-code", "agent-sessions"].map((d) => path.join(CODEX_FIXTURES_DIR, d));
  expect(run("pixir", ["import", "codex", ...codex, "--json"], { cwd: ws, env: { CODEX_HOME: path.join(ws, "none") } }).code).toBe(0);
  facts = new Map(pixir("ls", "--all", "--json").lines.map((f: any) => [f.session_id, f]));
}, 120_000);

describe("session facts (archive.md §1)", () => {
  it.each([
    ["29ccd257-68b1-427f-ae5f-6524b7cb6f20", "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"],
    ["9eda1058-9706-484a-b992-d03f9cfa2546", "codemie-code/session-9eda1058.jsonl"],
    ["fe869ecb-c176-478f-9734-7e4b8ef12cff", "claude-code-log/fe869ecb-c176-478f-9734-7e4b8ef12cff.jsonl"],
  ])("Claude %s: agent, cwd, project, title and times from the transcript", (id, rel) => {
    const src = claudeSource(rel);
    expect(facts.get(id)).toMatchObject({ agent: "claude", kind: "root", cwd: src.cwd, project: path.basename(src.cwd), title: src.title, started: src.started, updated: src.updated, parent: null });
  });

  it("tokens: each model call once, counted from the source (Claude: one API response, its record with the most output; Codex: last_token_usage when the total grew)", () => {
    const claude = records(path.join(CLAUDE_FIXTURES, "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl"));
    const responses = new Map<string, any>();
    for (const r of claude.filter((x) => x.type === "assistant" && x.message?.usage && x.message.model !== "<synthetic>")) {
      const key = `${r.message.id}/${r.requestId}`;
      if ((responses.get(key)?.output_tokens ?? -1) < r.message.usage.output_tokens) responses.set(key, r.message.usage);
    }
    const claudeTotal = [...responses.values()].reduce((n, u) => n + u.input_tokens + u.output_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0), 0);
    expect(facts.get("29ccd257-68b1-427f-ae5f-6524b7cb6f20").tokens).toBe(claudeTotal);
    const codex = records(path.join(CODEX_FIXTURES_DIR, "codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"));
    let total = 0;
    let codexTotal = 0;
    for (const r of codex.filter((x) => x.type === "event_msg" && x.payload.type === "token_count" && x.payload.info)) {
      if (r.payload.info.total_token_usage.total_tokens <= total) continue;
      total = r.payload.info.total_token_usage.total_tokens;
      codexTotal += r.payload.info.last_token_usage.input_tokens + r.payload.info.last_token_usage.output_tokens;
    }
    expect(facts.get("019e1625-789d-76c0-80ab-3724b5ddb799").tokens).toBe(codexTotal);
  });

  it("Claude: a command a person typed is the title as its command line; an IDE selection before the words typed is not", () => {
    expect(facts.get("4379d1bf-ccb1-414e-a856-9791b73f3af2").title).toBe("/clear");
    expect(facts.get("cb2e607c-c758-415a-8b45-c49e4631906a").title).toBe("How can I make this possible to install as a library with `uv` so I can run from any directory?");
  });

  it.each(["codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl", "codemie-code/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl"])(
    "Codex %s: agent, session_meta.cwd, the first prompt and times from the rollout",
    (rel) => {
      const src = codexSource(rel);
      expect(facts.get(src.id)).toMatchObject({ agent: "codex", kind: "root", cwd: src.cwd, project: path.basename(src.cwd), title: src.title, started: src.started, updated: src.updated });
    },
  );

  it("Codex: the thread name is the title; Claude: the custom title", () => {
    const small = records(path.join(CODEX_FIXTURES_DIR, "agent-sessions/small.jsonl"));
    const name = small.filter((r) => r.payload?.type === "thread_name_updated").at(-1).payload.thread_name;
    const id = small.find((r) => r.type === "session_meta").payload.id;
    expect(facts.get(id)).toMatchObject({ agent: "codex", title: name });
    const custom = records(path.join(CLAUDE_FIXTURES, "agent-sessions/small.jsonl")).filter((r) => r.type === "custom-title").at(-1).customTitle;
    expect(facts.get("ses_stage0_small")).toMatchObject({ agent: "claude", title: custom });
  });

  it("lineage: branches and subagents name their parent, which lists them in the order they started", () => {
    const root = facts.get("0d3a8e6f-290f-4105-a327-a2496e5e2a83");
    expect(root.children).toEqual(["0d3a8e6f-290f-4105-a327-a2496e5e2a83.f714a687-f20e-481e-936b-3d7a92fbae31", "0d3a8e6f-290f-4105-a327-a2496e5e2a83.7dba8df7-c6f3-49d2-91d2-e09b9ed2598a"]);
    for (const c of root.children) expect(facts.get(c)).toMatchObject({ kind: "branch", parent: root.session_id, agent: "claude", cwd: root.cwd });
    const sub = facts.get("29ccd257-68b1-427f-ae5f-6524b7cb6f20.agent-a2271d1");
    expect(sub).toMatchObject({ kind: "subagent", parent: "29ccd257-68b1-427f-ae5f-6524b7cb6f20" });
    // A branch's History holds its parent's prefix: its messages include the inherited ones.
    const branch = facts.get(root.children[0]);
    expect(branch.messages).toBeGreaterThan(branch.events);
  });
});

describe("pixir ls (archive.md §1)", () => {
  it("lists roots and forks newest first, tab-separated off a terminal, with full ids and the family on the parent's row", () => {
    const r = pixir("ls");
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout.slice(0, -1).split("\n").map((l) => l.split("\t"));
    for (const row of rows) expect(row).toHaveLength(8);
    const ids = rows.map((row) => row[0]);
    const expected = [...facts.values()].filter((f) => f.kind === "root" || f.kind === "fork");
    expect(ids.sort()).toEqual(expected.map((f) => f.session_id).sort());
    const updated = r.stdout.trimEnd().split("\n").map((l) => facts.get(l.split("\t")[0]!).updated);
    expect(updated).toEqual([...updated].sort().reverse());
    const row = (id: string) => rows.find((x) => x[0] === id)!;
    expect(row("0d3a8e6f-290f-4105-a327-a2496e5e2a83")[7]).toBe("+2 branches");
    expect(row("ef958aa1-0e93-49f0-bb71-150f63befcd1")[7]).toBe("+6 subagents");
    expect(row("29ccd257-68b1-427f-ae5f-6524b7cb6f20").slice(1, 7)).toEqual(["claude", "claude_p", "2026-01-23 17:36", "2", "44.0k", facts.get("29ccd257-68b1-427f-ae5f-6524b7cb6f20").title]);
  });

  it("--json gives every fact of each row", () => {
    const lines = pixir("ls", "--json").lines;
    const keys = ["session_id", "agent", "kind", "cwd", "project", "title", "first_prompt", "started", "updated", "messages", "tokens", "parent", "children", "events", "log_bytes"];
    for (const l of lines) expect(Object.keys(l).filter((k) => k !== "error")).toEqual(keys);
  });

  it("selects with --all, --kind, --agent, --project, --since, --until and --limit", () => {
    const ids = (...args: string[]) => pixir("ls", "--json", ...args).lines.map((l: any) => l.session_id);
    expect(ids("--all")).toHaveLength(facts.size);
    expect(ids("--kind", "subagent").every((id: string) => facts.get(id).kind === "subagent")).toBe(true);
    expect(ids("--kind", "branch,subagent")).toHaveLength([...facts.values()].filter((f) => f.kind === "branch" || f.kind === "subagent").length);
    expect(ids("--agent", "codex").sort()).toEqual([...facts.values()].filter((f) => f.agent === "codex").map((f) => f.session_id).sort());
    expect(ids("--project", "CLAUDE-CODE").sort()).toEqual(["0d3a8e6f-290f-4105-a327-a2496e5e2a83", "71c9afe9-d9cc-4583-86b3-e62ba682b83a", "fe869ecb-c176-478f-9734-7e4b8ef12cff"]);
    expect(ids("--limit", "2")).toEqual(ids().slice(0, 2));
    const window = ids("--since", "2025-09-01", "--until", "2025-09-30");
    expect(window.sort()).toEqual(["4379d1bf-ccb1-414e-a856-9791b73f3af2", "5c0375b4-57a5-4f26-b12d-d022ee4e51b7", "fe5e1c67-53e7-4862-81ae-d0e013e3270b"]);
    for (const bad of [["--kind", "leaf"], ["--since", "yesterday"], ["--limit", "0"]]) expect(pixir("ls", ...bad).code).toBe(2);
  });

  it("on a terminal: a header, ids cut to their shortest unique prefix, rows cut to the width", () => {
    const command = [process.execPath, binPath("pixir"), "ls"].map((a) => JSON.stringify(a)).join(" ");
    const r = spawnSync("script", ["-qec", `stty cols 110; ${command}`, "/dev/null"], { cwd: ws, encoding: "utf8", env: { ...process.env, ...UTC } });
    const lines = r.stdout.replace(/\r/g, "").trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID +AGENT +PROJECT +UPDATED +MSGS +TOKENS +TITLE$/);
    for (const l of lines) expect(Array.from(l).length).toBeLessThanOrEqual(110);
    expect(lines.some((l) => l.startsWith("0d3a8e6f  claude"))).toBe(true);
    expect(lines.find((l) => l.startsWith("0d3a8e6f"))).toMatch(/… {2}\(\+2 branches\)$/);
  });

  it("an empty Workspace says so on stderr and exits 0 (ls, tree and pixir-log ls on a terminal)", () => {
    const empty = tempDir("pixir-ls-empty-");
    const r = run("pixir", ["ls"], { cwd: empty });
    expect([r.code, r.stdout]).toEqual([0, ""]);
    expect(r.stderr).toContain(`no Logs in ${empty}\nhint: pass --workspace DIR`);
    expect(run("pixir", ["tree"], { cwd: empty }).stderr).toBe(""); // not a terminal
    const onTerminal = (args: string[]) => spawnSync("script", ["-qec", [process.execPath, ...args].map((a) => JSON.stringify(a)).join(" "), "/dev/null"], { cwd: empty, encoding: "utf8" });
    expect(onTerminal([binPath("pixir"), "tree"]).stdout).toContain(`no Logs in ${empty}`);
    expect(onTerminal([binPath("pixir-log"), "ls"]).stdout).toContain(`no Logs in ${empty}`);
    const none = run("pixir", ["import", "claude", empty], { cwd: empty });
    expect([none.code, none.stderr]).toEqual([0, `no Claude Code sessions found in ${empty}\nhint: pass the files or directories that hold them, e.g. pixir import claude ~/.claude/projects\n`]);
  });
});

describe("id prefixes (archive.md §1)", () => {
  it("a unique prefix names the session in the wrapper and the plumbing (its own branches do not make it ambiguous)", () => {
    expect(pixir("context", "0d3a8e6f", "--format", "text").stdout).toBe(pixir("context", full, "--format", "text").stdout);
    expect(run("pixir-log", ["cat", "0d3a"], { cwd: ws }).stdout).toBe(run("pixir-log", ["cat", full], { cwd: ws }).stdout);
    expect(run("pixir-tree", ["0d3a8e6f", "--json"], { cwd: ws }).json.tree.session_id).toBe(full);
    expect(pixir("export", "md", "0d3a8e6f-290f-4105-a327-a2496e5e2a83.f7").code).toBe(0);
  });

  it("an ambiguous prefix is ambiguous_session_id (exit 2) with the candidates and their titles", () => {
    const r = pixir("context", "019e", "--json");
    expect(r.code).toBe(2);
    const err = r.errJson.error;
    expect(err.kind).toBe("ambiguous_session_id");
    const candidates = [...facts.keys()].filter((id) => id.startsWith("019e")).sort();
    expect(err.details.candidates).toEqual(candidates.map((id) => ({ session_id: id, title: facts.get(id).title })));
    const text = run("pixir-log", ["cat", "ses_stage0_small.s"], { cwd: ws });
    expect([text.code, text.stderr]).toEqual([2, expect.stringContaining("error: ambiguous_session_id: session id prefix ses_stage0_small.s matches")]);
  });

  it("a full id wins over the longer ids it is a prefix of; shorter than 4 characters is never a prefix", () => {
    expect(run("pixir-log", ["cat", "ses_stage0_small"], { cwd: ws }).lines[0].session_id).toBe("ses_stage0_small");
    expect(run("pixir-log", ["cat", "ses_stage0_small.si"], { cwd: ws }).lines[0].session_id).toBe("ses_stage0_small.sidechain-sys1");
    expect(pixir("context", "0d3", "--json").errJson.error.kind).toBe("not_found");
  });

  it("writers take a new id literally: append never completes a prefix", () => {
    const own = tempDir("pixir-prefix-write-");
    const line = '{"type":"user_message","data":{"text":"hi"}}\n';
    expect(run("pixir-log", ["append", "abcd1234-long"], { cwd: own, input: line }).code).toBe(0);
    expect(run("pixir-log", ["append", "abcd"], { cwd: own, input: line }).code).toBe(0);
    expect(run("pixir-log", ["ls"], { cwd: own }).stdout).toBe("abcd\nabcd1234-long\n");
    expect(run("pixir-log", ["cat", "abcd1234-long"], { cwd: own }).lines).toHaveLength(1);
  });
});

describe("pixir tree text (archive.md §1)", () => {
  it("golden: a real family, the Workspace once, children by start, `id  title  (agent, kind, N events, date)`", () => {
    const r = pixir("tree", "0d3a8e6f");
    expect(r.stdout.split(ws).join("<ws>")).toBe(
      [
        "workspace: <ws>",
        "0d3a8e6f  Hey Claude, I'd like your help with refactoring the timeline filtering so that we hide the group instead of all items t…  (claude, 81 events, 2025-07-05 20:05)",
        "|-- 0d3a8e6f-290f-4105-a327-a2496e5e2a83.f714a687  /doctor  (claude, branch, 66 events, 2025-07-05 20:04)",
        "`-- 0d3a8e6f-290f-4105-a327-a2496e5e2a83.7dba8df7  /status  (claude, branch, 66 events, 2025-07-05 20:05)",
        "",
      ].join("\n"),
    );
  });

  it("the forest lists each subagent once, under its parent, and --verbose keeps tree.md §4's details", () => {
    const text = pixir("tree").stdout;
    expect(text.split("\n").filter((l) => l.startsWith("workspace: "))).toHaveLength(1);
    const shownIds = text.split("\n").map((l) => l.replace(/^[|`\- ]*/, "").split("  ")[0]!);
    for (const id of [...facts.keys()].filter((i) => facts.get(i).kind === "subagent")) {
      const parent: string = facts.get(id).parent;
      expect(shownIds.filter((t) => t.length > parent.length && id.startsWith(t)), id).toHaveLength(1);
    }
    expect(text.split("\n").filter((l) => l !== "").length).toBeLessThanOrEqual(facts.size + 3);
    expect(pixir("tree", "0d3a8e6f", "--verbose").stdout).toContain(`session ${full} (events=81)\n  workspace: ${ws}\n`);
  });
});
