// The command line of pixir import claude / pixir export claude (claude-interop.md §4.1, §4.5, §5.1,
// §5.4, §5.5): where the import looks, what a PATH names, the text and JSON reports, the stream export.
import { chmodSync, cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, toolCopyForAnyUser } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";

const SESSION = "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl";
const SUBAGENT = "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20/subagents/agent-a2271d1.jsonl";
const ID = "29ccd257-68b1-427f-ae5f-6524b7cb6f20";
const OLD = "claude-code-log/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl";
const OLD_AGENTS = ["agent-2b93909d.jsonl", "agent-645808c9.jsonl", "agent-ea02459f.jsonl"].map((n) => `claude-code-log/${n}`);

function tree(files: string[], under = tempDir("pixir-claude-cli-")): string {
  for (const f of files) {
    mkdirSync(path.dirname(path.join(under, f)), { recursive: true });
    cpSync(path.join(CLAUDE_FIXTURES, f), path.join(under, f));
  }
  return under;
}

describe("where pixir import claude looks (§1.1, §4.1)", () => {
  it("no PATH: $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects; a missing root is not_found", () => {
    const config = tempDir("pixir-claude-config-");
    tree([SESSION], path.join(config, "projects"));
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", "--json"], { cwd: ws, env: { CLAUDE_CONFIG_DIR: config } });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(res.json.imports.map((i: any) => i.file)).toEqual([SESSION]);

    const home = tempDir("pixir-claude-home-");
    tree([SESSION], path.join(home, ".claude", "projects"));
    const viaHome = run("pixir", ["import", "claude", "--json"], { cwd: tempDir(), env: { CLAUDE_CONFIG_DIR: "", HOME: home } });
    expect(viaHome.code, viaHome.stdout + viaHome.stderr).toBe(0);
    expect(viaHome.json.imports.map((i: any) => i.file)).toEqual([SESSION]);

    const none = run("pixir", ["import", "claude", "--json"], { cwd: tempDir(), env: { CLAUDE_CONFIG_DIR: tempDir() } });
    expect(none.code).toBe(2);
    expect(none.json.error).toMatchObject({ kind: "not_found", details: { next_actions: ["pass the path of a Claude Code projects directory", "set CLAUDE_CONFIG_DIR"] } });
  });

  it("a PATH that is a file imports its unit: a session with its subagents, or a subagent with its session", () => {
    const root = tree([SESSION, SUBAGENT, OLD, ...OLD_AGENTS]);
    const bySession = run("pixir", ["import", "claude", path.join(root, SESSION), "--dry-run", "--json"], { cwd: tempDir() });
    expect(bySession.json.imports.map((i: any) => i.file)).toEqual([SUBAGENT, SESSION]);
    const bySubagent = run("pixir", ["import", "claude", path.join(root, SUBAGENT), "--dry-run", "--json"], { cwd: tempDir() });
    expect(bySubagent.json.imports.map((i: any) => i.file)).toEqual([SUBAGENT, SESSION]);
    // 2.0.x: the agent files beside the session whose records name it.
    const old = run("pixir", ["import", "claude", path.join(root, OLD), "--dry-run", "--json"], { cwd: tempDir() });
    expect(old.json.imports.map((i: any) => i.file)).toEqual([...OLD_AGENTS, OLD]);
  });

  it("a file named twice, or named and listed, is read once; a PATH given as a symbolic link is followed", () => {
    const root = tree([SESSION, SUBAGENT]);
    const project = path.join(root, "claude-code-log");
    const link = path.join(tempDir(), "linked-project");
    symlinkSync(project, link);
    const res = run("pixir", ["import", "claude", path.join(root, SESSION), project, path.join(root, SESSION), "--dry-run", "--json"], { cwd: tempDir() });
    expect(res.json.imports.map((i: any) => i.file)).toEqual([SUBAGENT, SESSION]);
    const viaLink = run("pixir", ["import", "claude", link, "--json"], { cwd: tempDir() });
    expect(viaLink.code, viaLink.stdout).toBe(0);
    expect(viaLink.json.imports.map((i: any) => i.status)).toEqual(["created", "created"]);
  });
});

describe("reports (§4.5)", () => {
  it("text: a line per Log, +k events when appended; skipped and empty files by name", () => {
    const root = tree([SESSION, SUBAGENT]);
    const ws = tempDir();
    const first = run("pixir", ["import", "claude", root], { cwd: ws });
    expect(first.code).toBe(0);
    const json = run("pixir", ["import", "claude", root, "--dry-run", "--json"], { cwd: ws }).json;
    const count = (id: string) => json.imports.flatMap((i: any) => i.logs).find((l: any) => l.session_id === id).event_count;
    expect(first.stdout.trim().split("\n")).toEqual([`created ${ID}.agent-a2271d1 (subagent, ${count(`${ID}.agent-a2271d1`)} events)`, `created ${ID} (primary, ${count(ID)} events)`]);
    // Grown by one record; an empty file and a file --lenient skips.
    const line = readFileSync(path.join(root, SESSION), "utf8").split("\n")[1]!.replace(/"uuid":"[^"]+"/, '"uuid":"a0000000-0000-4000-8000-000000000009"');
    writeFileSync(path.join(root, SESSION), `${readFileSync(path.join(root, SESSION), "utf8")}${line}\n`);
    writeFileSync(path.join(root, "claude-code-log", "11111111-1111-4111-8111-111111111111.jsonl"), "\n");
    // A renamed copy of the session: the same identity, so --lenient skips it (duplicate_session).
    cpSync(path.join(CLAUDE_FIXTURES, SESSION), path.join(root, "claude-code-log", "zz-renamed.jsonl"));
    const grown = run("pixir", ["import", "claude", root, "--lenient"], { cwd: ws });
    expect(grown.code, grown.stderr).toBe(0);
    const lines = grown.stdout.trim().split("\n");
    expect(lines).toContain("empty claude-code-log/11111111-1111-4111-8111-111111111111.jsonl");
    expect(lines).toContain("skipped claude-code-log/zz-renamed.jsonl (invalid_claude_session: duplicate_session)");
    expect(lines).toContain(`unchanged ${ID}.agent-a2271d1 (subagent, ${count(`${ID}.agent-a2271d1`)} events)`);
    expect(lines.find((l) => l.startsWith(`appended ${ID} `))).toMatch(new RegExp(`^appended ${ID} \\(primary, \\+\\d+ events, \\d+ events\\)$`));
  });

  it("JSON: every field of §4.5 for a file and its Logs", () => {
    const root = tree([SESSION, SUBAGENT]);
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: tempDir() });
    expect(Object.keys(res.json).sort()).toEqual(["dry_run", "imports", "ok", "recorded", "workspace"]);
    const session = res.json.imports[1];
    expect(Object.keys(session).sort()).toEqual(
      ["agent_id", "blank_lines", "file", "forked_from", "kind", "leaf_session_id", "leaf_uuid", "logs", "malformed_lines", "new_records", "pending_tail_bytes", "records", "session_id", "status"].sort(),
    );
    expect(session).toMatchObject({ kind: "session", session_id: ID, agent_id: null, status: "created", records: 6, new_records: 6, forked_from: null, leaf_session_id: ID });
    expect(res.json.imports[0]).toMatchObject({ kind: "subagent", session_id: ID, agent_id: "a2271d1" });
    expect(session.logs).toEqual([{ session_id: ID, role: "primary", parent_session_id: null, forked_to_seq: null, event_count: expect.any(Number), status: "created" }]);
  });

  it("an unreadable file is permission_denied (exit 3); --lenient does not skip it", () => {
    if (process.getuid?.() !== 0) return; // as root, the tool runs as nobody, who may not read the file
    const root = tree([SESSION]);
    for (const d of [root, path.join(root, "claude-code-log")]) chmodSync(d, 0o755);
    chmodSync(path.join(root, SESSION), 0o000);
    const ws = tempDir();
    chmodSync(ws, 0o777);
    const asNobody = { cwd: ws, uid: 65534, gid: 65534, bin: toolCopyForAnyUser("pixir"), env: { HOME: ws } };
    for (const flags of [[], ["--lenient"]]) {
      const res = run("pixir", ["import", "claude", root, "--json", ...flags], asNobody);
      expect(res.code, res.stdout + res.stderr).toBe(3);
      expect(res.json.error).toMatchObject({ kind: "permission_denied", details: { path: SESSION, operation: "read" } });
    }
    expect(readdirSync(ws)).toEqual([]);
  });
});

describe("pixir export claude to stdout (§5.4)", () => {
  it("writes the session file, and warns that its subagent files are not written", () => {
    const root = tree([SESSION, SUBAGENT]);
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const res = run("pixir", ["export", "claude", ID], { cwd: ws });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(readFileSync(path.join(CLAUDE_FIXTURES, SESSION), "utf8"));
    expect(res.stderr).toBe("warning: claude_subagents_not_written: 1 subagent file was not written: stdout holds the session file only (--out DIR writes them too)\n");
    // A subagent Log alone gives its own file.
    const sub = run("pixir", ["export", "claude", `${ID}.agent-a2271d1`], { cwd: ws });
    expect(sub.stdout).toBe(readFileSync(path.join(CLAUDE_FIXTURES, SUBAGENT), "utf8"));
    const missing = run("pixir", ["export", "claude", "no-such-log", "--json"], { cwd: ws });
    expect(missing.code).toBe(2);
    expect(missing.errJson?.error ?? missing.json?.error).toMatchObject({ kind: "not_found" });
  });

  it("--out: the report names each file with its status; an existing different file is already_exists and nothing is written", () => {
    const root = tree([SESSION, SUBAGENT]);
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const out = tempDir();
    const dry = run("pixir", ["export", "claude", ID, "--out", out, "--dry-run", "--json"], { cwd: ws });
    expect(dry.json).toMatchObject({ ok: true, recorded: false, dry_run: true, mode: "original", session_id: ID, project_dir: "-src-experiments-claude-p", forked_from: null, copied_records: 0, converted_events: 0, pixir_events: 0, warnings: [] });
    expect(dry.json.files.map((f: any) => [f.path, f.kind, f.status])).toEqual([
      [`-src-experiments-claude-p/${ID}.jsonl`, "session", "would_write"],
      [`-src-experiments-claude-p/${ID}/subagents/agent-a2271d1.jsonl`, "subagent", "would_write"],
    ]);
    expect(readdirSync(out)).toEqual([]);
    const text = run("pixir", ["export", "claude", ID, "--out", out], { cwd: ws });
    expect(text.stdout.trim().split("\n")).toEqual([
      `written -src-experiments-claude-p/${ID}.jsonl (6 records)`,
      `written -src-experiments-claude-p/${ID}/subagents/agent-a2271d1.jsonl (59 records)`,
      // archive.md §5: the command that resumes it, in the directory the session recorded.
      expect.stringMatching(new RegExp(`^resume: cd \\S+ && claude --resume ${ID}$`)),
    ]);
    const again = run("pixir", ["export", "claude", ID, "--out", out, "--json"], { cwd: ws });
    expect(again.json.files.map((f: any) => f.status)).toEqual(["unchanged", "unchanged"]);
    writeFileSync(path.join(out, "-src-experiments-claude-p", `${ID}.jsonl`), "other\n");
    const refused = run("pixir", ["export", "claude", ID, "--out", out, "--json"], { cwd: ws });
    expect(refused.code).toBe(1);
    expect(refused.json.error).toMatchObject({ kind: "already_exists", details: { path: `-src-experiments-claude-p/${ID}.jsonl` } });
  });
});

describe("the projects root is only read; dry runs of a grown file (§1.1, §4.4)", () => {
  it("nothing under the projects root changes; a grown file's dry run says would_append and writes nothing", () => {
    const root = tree([SESSION, SUBAGENT, OLD, ...OLD_AGENTS]);
    const listing = () =>
      [SESSION, SUBAGENT, OLD, ...OLD_AGENTS].map((f) => readFileSync(path.join(root, f)).toString("base64")).join(",") + readdirSync(path.join(root, "claude-code-log")).join(",");
    const before = listing();
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["export", "claude", ID, "--out", tempDir()], { cwd: ws }).code).toBe(0);
    expect(listing()).toBe(before);
    const line = readFileSync(path.join(root, SESSION), "utf8").split("\n")[1]!.replace(/"uuid":"[^"]+"/, '"uuid":"a0000000-0000-4000-8000-000000000008"');
    writeFileSync(path.join(root, SESSION), `${readFileSync(path.join(root, SESSION), "utf8")}${line}\n`);
    const logs = () => readdirSync(path.join(ws, ".pixir", "sessions")).map((n) => readFileSync(path.join(ws, ".pixir", "sessions", n)).toString("base64")).join(",");
    const held = logs();
    const dry = run("pixir", ["import", "claude", root, "--dry-run", "--json"], { cwd: ws });
    expect(dry.json.imports.find((i: any) => i.file === SESSION)).toMatchObject({ status: "would_append", new_records: 1, logs: [{ session_id: ID, status: "would_append", appended_events: expect.any(Number) }] });
    expect(dry.json.recorded).toBe(false);
    expect(logs()).toBe(held);
  });
});

describe("record_in_two_logs (§4.3 step 4)", () => {
  it("a record held by two Logs of the family refuses the file", () => {
    const rel = "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl";
    const id = "71c9afe9-d9cc-4583-86b3-e62ba682b83a";
    const branch = `${id}.e042a3e0-d31a-49e0-b181-3e34674017b2`;
    const root = tree([rel]);
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    // The branch Log gains a copy of the root's Event for line 1 (as a bad merge of two Workspaces might).
    const rootEvents = readFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const branchFile = path.join(ws, ".pixir", "sessions", `${branch}.ndjson`);
    const last = JSON.parse(readFileSync(branchFile, "utf8").trim().split("\n").at(-1)!);
    const copy = { ...rootEvents.find((e) => e.data.claude?.line === 1), id: "01KZZZZZZZZZZZZZZZZZZZZZZZ", session_id: branch, seq: last.seq + 1 };
    writeFileSync(branchFile, `${readFileSync(branchFile, "utf8")}${JSON.stringify(copy)}\n`);
    // The transcript grows, so the family is read (an unchanged one is not).
    const more = readFileSync(path.join(root, rel), "utf8").split("\n")[0]!.replace(/"uuid":"[^"]+"/, '"uuid":"a0000000-0000-4000-8000-000000000007"');
    writeFileSync(path.join(root, rel), `${readFileSync(path.join(root, rel), "utf8")}${more}\n`);
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "record_in_two_logs", line: 1, file: rel } });
  });
});

describe("pixir export claude of Logs the import did not make (§5.1, §5.3)", () => {
  it("a Log never imported becomes a session of its converted Events, with no copied records", () => {
    const ws = tempDir();
    const input = ['{"type":"user_message","data":{"text":"hello"}}', '{"type":"assistant_message","data":{"text":"hi"}}'].join("\n");
    expect(run("pixir", ["append", "plain"], { cwd: ws, input: `${input}\n` }).code).toBe(0);
    const res = run("pixir", ["export", "claude", "plain", "--dry-run", "--json"], { cwd: ws });
    expect(res.json).toMatchObject({ mode: "fork", forked_from: null, copied_records: 0, converted_events: 2 });
    const out = run("pixir", ["export", "claude", "plain"], { cwd: ws }).stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(out.map((r) => [r.type, r.parentUuid === null])).toEqual([
      ["user", true],
      ["assistant", false],
    ]);
  });

  it("a replay fork whose source Logs are gone copies its own Claude prefix and warns claude_source_unavailable", () => {
    const root = tree([SESSION]);
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["fork", ID, "--child-id", "alone"], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["append", "alone"], { cwd: ws, input: '{"type":"user_message","data":{"text":"more"}}\n' }).code).toBe(0);
    expect(run("pixir-log", ["rm", ID], { cwd: ws }).code).toBe(0);
    const res = run("pixir", ["export", "claude", "alone", "--dry-run", "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.json).toMatchObject({ mode: "fork", warnings: ["claude_source_unavailable"], forked_from: { session_id: ID }, converted_events: 1 });
    const text = run("pixir", ["export", "claude", "alone"], { cwd: ws });
    expect(text.stderr).toContain("warning: claude_source_unavailable");
    const records = text.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(records.slice(0, -1).every((r) => r.forkedFrom?.sessionId === ID)).toBe(true);
    expect(records.at(-1)).toMatchObject({ type: "user", message: { content: "more" } });
  });
});
