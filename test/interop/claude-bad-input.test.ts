// pixir import claude on bad and hostile input (claude-interop.md §4.1–§4.2): malformed lines are named
// (or kept verbatim with --lenient), cycles and duplicate uuids import, a 64 MiB line is refused before
// anything is written, and hostile ids and paths are never echoed and never leave the Workspace.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { heldLines, logIds, nonBlankLines } from "../support/claude.js";

const SID = "11111111-2222-4333-8444-555555555555";
const rec = (uuid: string, parent: string | null, type: "user" | "assistant", text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    parentUuid: parent,
    isSidechain: false,
    userType: "external",
    cwd: "/home/u/p",
    sessionId: SID,
    version: "2.1.0",
    type,
    message: type === "user" ? { role: "user", content: text } : { id: `msg_${uuid}`, type: "message", role: "assistant", model: "m", content: [{ type: "text", text }], usage: { input_tokens: 1, output_tokens: 2 } },
    uuid,
    timestamp: "2026-01-01T00:00:00.000Z",
    ...extra,
  });

/** A projects root with one project directory holding `files` (name → content). */
function project(files: Record<string, string | Buffer>): string {
  const root = tempDir("pixir-claude-bad-");
  const dir = path.join(root, "-home-u-p");
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  return root;
}

const good = [rec("u1", null, "user", "hi"), rec("a1", "u1", "assistant", "hello")];

function roundTrip(ws: string, id: string, original: Buffer): void {
  const dir = tempDir();
  const out = run("pixir", ["export", "claude", id, "--out", dir, "--json"], { cwd: ws });
  expect(out.code, out.stdout).toBe(0);
  expect(readFileSync(path.join(dir, out.json.files[0].path)).equals(original)).toBe(true);
}

describe("malformed lines", () => {
  for (const [reason, line] of [
    ["malformed_line", "{not json"],
    ["malformed_line", "[1,2,3]"],
    ["invalid_record", JSON.stringify({ uuid: "x", parentUuid: null })],
  ] as const) {
    it(`${reason}: named by file and line; --lenient keeps it verbatim`, () => {
      const text = `${good[0]}\n${line}\n${good[1]}\n`;
      const root = project({ [`${SID}.jsonl`]: text });
      const ws = tempDir();
      const strict = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
      expect(strict.code).toBe(1);
      expect(strict.json.error).toMatchObject({ kind: "invalid_claude_session", details: { reason, file: `-home-u-p/${SID}.jsonl`, line: 2 } });
      expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
      const lenient = run("pixir", ["import", "claude", root, "--lenient", "--json"], { cwd: ws });
      expect(lenient.code, lenient.stdout).toBe(0);
      expect(lenient.json.imports[0]).toMatchObject({ status: "created", malformed_lines: 1, records: 3 });
      roundTrip(ws, SID, Buffer.from(text));
    });
  }

  it("a malformed line in a later file stops the run before an earlier file is written (§4.2)", () => {
    const other = "22222222-2222-4333-8444-555555555555";
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n`, [`${other}.jsonl`]: `${good[0]}\n{not json\n` });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "invalid_claude_session", details: { reason: "malformed_line", file: `-home-u-p/${other}.jsonl`, line: 2 } });
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
  });

  it("a line that is not UTF-8 is kept as raw_base64 with --lenient and exported back", () => {
    const bytes = Buffer.concat([Buffer.from(`${good[0]}\n`), Buffer.from([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), Buffer.from(`${good[1]}\n`)]);
    const root = project({ [`${SID}.jsonl`]: bytes });
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root, "--json"], { cwd: ws }).json.error.details).toMatchObject({ reason: "invalid_utf8", line: 2 });
    expect(run("pixir", ["import", "claude", root, "--lenient"], { cwd: ws }).code).toBe(0);
    roundTrip(ws, SID, bytes);
  });

  it("blank lines are skipped and counted, and a pending tail is left for a later run", () => {
    const text = `${good[0]}\n\n  \r\n${good[1]}\n{"parentUuid":"a1"`;
    const root = project({ [`${SID}.jsonl`]: text });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.json.imports[0]).toMatchObject({ records: 2, blank_lines: 2, pending_tail_bytes: Buffer.byteLength('{"parentUuid":"a1"') });
    roundTrip(ws, SID, Buffer.from(`${good[0]}\n${good[1]}\n`));
    // Unchanged, the file is not read again; the report still counts from the last checkpoint.
    const again = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(again.json.imports[0]).toMatchObject({ status: "unchanged", records: 2, new_records: 0, blank_lines: 2, pending_tail_bytes: Buffer.byteLength('{"parentUuid":"a1"') });
  });

  it("an empty file creates nothing", () => {
    const root = project({ [`${SID}.jsonl`]: "\n\n" });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(0);
    expect(res.json.imports[0]).toMatchObject({ status: "empty", blank_lines: 2 });
    expect(existsSync(path.join(ws, ".pixir", "sessions"))).toBe(false);
  });
});

describe("odd trees", () => {
  it("a parent cycle, a self-parent and duplicate uuids import, hold every line once and round trip", () => {
    const lines = [
      rec("c1", "c2", "user", "cycle one"),
      rec("c2", "c1", "assistant", "cycle two"),
      rec("s1", "s1", "user", "self parent"),
      rec("c1", "s1", "user", "a duplicate uuid"),
      rec("a9", "s1", "assistant", "the leaf"),
    ];
    const text = `${lines.join("\n")}\n`;
    const root = project({ [`${SID}.jsonl`]: text });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    const held = [...heldLines(ws, SID).values()].flat().sort((a, b) => a - b);
    expect(held).toEqual(nonBlankLines(Buffer.from(text)));
    expect(run("pixir-log", ["check"], { cwd: ws }).code).toBe(0);
    roundTrip(ws, SID, Buffer.from(text));
    const ctx = run("pixir", ["context", res.json.imports[0].leaf_session_id], { cwd: ws });
    expect(ctx.code).toBe(0);
  });
});

describe("a 64 MiB line", () => {
  it("is refused while planning, named, with nothing written", () => {
    const big = rec("big", "a1", "user", "x".repeat(64 * 1024 * 1024));
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n${big}\n` });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "log_encode_failed", details: { reason: "line_too_long", line: 3, file: `-home-u-p/${SID}.jsonl` } });
    expect(existsSync(path.join(ws, ".pixir", "sessions"))).toBe(false);
  });
});

describe("hostile ids and paths", () => {
  const HOSTILE = "../../etc/passwd\u0000\u202e";
  it("a session id outside the grammar is hashed, never echoed, and the Logs stay in the Workspace", () => {
    const line = (uuid: string, parent: string | null) => rec(uuid, parent, "user", "hi", { sessionId: HOSTILE, cwd: "/../../../tmp/evil\u0000" });
    const text = `${line("u1", null)}\n${line("u2", "u1")}\n`;
    const root = project({ "renamed.jsonl": text });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.stdout + res.stderr).not.toContain("passwd");
    expect(res.json.imports[0].session_id).toBeNull();
    const [id] = logIds(ws);
    expect(id).toMatch(/^claude-[0-9a-f]{32}$/);
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", id!, "--out", out, "--json"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(exp.stdout).not.toContain("passwd");
    // The escaped cwd is one directory name: nothing is written outside --out.
    const dirs = readdirSync(out);
    expect(dirs).toHaveLength(1);
    expect(dirs[0]).toMatch(/^[A-Za-z0-9-]+$/);
    expect(readFileSync(path.join(out, dirs[0]!, `${id}.jsonl`), "utf8")).toBe(text);
  });

  it("a subagent file whose agent id is outside the grammar gets a hashed Log id", () => {
    const sub = `${rec("s1", null, "user", "task", { isSidechain: true, agentId: "x y" })}\n`;
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n`, [`${SID}/subagents/agent-x y.jsonl`]: sub });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(logIds(ws).find((x) => x.startsWith(`${SID}.`))).toMatch(new RegExp(`^${SID}\\.[0-9a-f]{16}$`));
  });

  it("an invalid id given to export is refused without being echoed", () => {
    const ws = tempDir();
    const res = run("pixir", ["export", "claude", "../../etc/passwd", "--json"], { cwd: ws });
    expect(res.code).toBe(2);
    expect(res.stdout + res.stderr).not.toContain("passwd");
  });

  it("a missing path is not_found; --out must be an existing directory", () => {
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", path.join(ws, "nope"), "--json"], { cwd: ws });
    expect(res.code).toBe(2);
    expect(res.json.error).toMatchObject({ kind: "not_found" });
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n` });
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const exp = run("pixir", ["export", "claude", SID, "--out", path.join(ws, "missing"), "--json"], { cwd: ws });
    expect(exp.code).toBe(2);
    expect(exp.json.error).toMatchObject({ kind: "invalid_args", details: { field: "out", reason: "missing" } });
  });

  it("symbolic links met while listing are not followed", () => {
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n` });
    const secret = tempDir();
    writeFileSync(path.join(secret, "22222222-2222-4333-8444-555555555555.jsonl"), `${good.join("\n")}\n`);
    symlinkSync(path.join(secret, "22222222-2222-4333-8444-555555555555.jsonl"), path.join(root, "-home-u-p", "22222222-2222-4333-8444-555555555555.jsonl"));
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(0);
    expect(res.json.imports.map((i: any) => i.session_id)).toEqual([SID]);
  });
});

describe("the run as a whole", () => {
  it("--dry-run reports would_create and creates nothing, not even .pixir/", () => {
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n` });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--dry-run", "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.json).toMatchObject({ recorded: false, dry_run: true, imports: [{ status: "would_create", logs: [{ session_id: SID, status: "would_create" }] }] });
    expect(readdirSync(ws)).toEqual([]);
  });

  it("two files of one session are duplicate_session; --lenient skips the later one", () => {
    const root = project({ [`${SID}.jsonl`]: `${good.join("\n")}\n`, "renamed-copy.jsonl": `${good.join("\n")}\n` });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "invalid_claude_session", details: { reason: "duplicate_session", file: "-home-u-p/renamed-copy.jsonl" } });
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
    const lenient = run("pixir", ["import", "claude", root, "--lenient", "--json"], { cwd: ws });
    expect(lenient.code).toBe(0);
    expect(lenient.json.imports.map((i: any) => [i.file, i.status])).toEqual([
      [`-home-u-p/${SID}.jsonl`, "created"],
      ["-home-u-p/renamed-copy.jsonl", "skipped"],
    ]);
  });
});

describe("subagent links (§3.6)", () => {
  // A Task call and its result, as 2.1.x writes them, in a session or a subagent transcript.
  const task = (prefix: string, agentId: string, parent: string, extra: Record<string, unknown> = {}, isError = false) => [
    rec(`${prefix}-call`, parent, "assistant", "", { message: { id: `msg_${prefix}`, type: "message", role: "assistant", model: "m", content: [{ type: "tool_use", id: `toolu_${prefix}`, name: "Task", input: { description: `task ${prefix}`, prompt: "go", subagent_type: "Explore" } }] }, ...extra }),
    rec(`${prefix}-result`, `${prefix}-call`, "user", "", {
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: `toolu_${prefix}`, content: "done", ...(isError ? { is_error: true } : {}) }] },
      toolUseResult: { agentId, status: isError ? undefined : "completed", totalDurationMs: 1234 },
      ...extra,
    }),
  ];

  it("a link from a subagent transcript names its child (depth 2); no child is also detected, in this run or a later one", () => {
    const side = { isSidechain: true };
    const session = [good[0], ...task("s", "aaa1111", "u1")];
    const a = [rec("a1", null, "user", "go", { ...side, agentId: "aaa1111" }), ...task("a", "bbb2222", "a1", { ...side, agentId: "aaa1111" }, true)];
    const b = [rec("b1", null, "user", "go", { ...side, agentId: "bbb2222" }), rec("b2", "b1", "assistant", "found", { ...side, agentId: "bbb2222" })];
    const root = project({
      [`${SID}.jsonl`]: `${session.join("\n")}\n`,
      [`${SID}/subagents/agent-aaa1111.jsonl`]: `${a.join("\n")}\n`,
      [`${SID}/subagents/agent-bbb2222.jsonl`]: `${b.join("\n")}\n`,
    });
    const ws = tempDir();
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const links = (id: string) => storedLinks(ws, id);
    expect(links(SID)).toEqual([{ subagent_id: "aaa1111", child_session_id: `${SID}.agent-aaa1111`, event: "returned", status: "completed", agent: "Explore", task: "task s", depth: 1, workspace: ws, elapsed_ms: 1234 }]);
    expect(links(`${SID}.agent-aaa1111`)).toEqual([{ subagent_id: "bbb2222", child_session_id: `${SID}.agent-bbb2222`, event: "returned", status: "failed", agent: "Explore", task: "task a", depth: 2, workspace: ws, elapsed_ms: 1234 }]);
    const tree = run("pixir", ["tree", SID, "--format", "json"], { cwd: ws });
    expect(JSON.stringify(tree.json)).toContain(`${SID}.agent-bbb2222`);
    // The session grows; its subagents are unchanged: still no detected link.
    writeFileSync(path.join(root, "-home-u-p", `${SID}.jsonl`), `${[...session, rec("s9", "s-result", "assistant", "thanks")].join("\n")}\n`);
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    expect(links(SID).map((l: any) => l.event)).toEqual(["returned"]);
  });
});

function storedLinks(ws: string, id: string): any[] {
  return readFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "subagent_event")
    .map((e) => {
      const { claude: _claude, ...data } = e.data;
      return data;
    });
}
