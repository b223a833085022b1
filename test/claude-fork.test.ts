// Forks (claude-interop.md §3.7, §5.3, §6 "Fork tests"): a fork file built from a real transcript, and a
// pixir fork of an imported session exported as a new Claude session that imports back.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stampCopied } from "../lib/envelope/src/interop/claude/export-fork.js";
import { claudeOracle } from "../lib/envelope/src/interop/claude/oracle.js";
import { run, tempDir } from "./support/cli.js";
import { CLAUDE_FIXTURES } from "./support/claude.js";

const SOURCE = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
const FORK = "00000000-0000-4000-8000-000000000001";
const sourceBytes = readFileSync(path.join(CLAUDE_FIXTURES, "claude-code-log", `${SOURCE}.jsonl`));
const sourceLines = sourceBytes.toString("utf8").split("\n");

/** §6: the oracle path records up to line 11, stamped by std(), then a user and an assistant record. */
function forkFile(): string {
  const uuids = new Set(claudeOracle(sourceBytes).map((i) => i.uuid));
  const copied = sourceLines.slice(0, 11).map((l) => JSON.parse(l)).filter((r) => uuids.has(r.uuid));
  const out: string[] = [];
  let parent: string | null = null;
  for (const r of copied) {
    out.push(JSON.stringify(stampCopied(r, FORK, SOURCE, parent)));
    parent = r.uuid;
  }
  const base = { isSidechain: false, userType: "external", cwd: copied[0].cwd, sessionId: FORK, version: "1.0.128", gitBranch: "main" };
  out.push(JSON.stringify({ parentUuid: parent, ...base, type: "user", message: { role: "user", content: "a new question" }, uuid: "f0000000-0000-4000-8000-000000000001", timestamp: "2026-01-01T00:00:00.000Z" }));
  out.push(
    JSON.stringify({
      parentUuid: "f0000000-0000-4000-8000-000000000001",
      ...base,
      type: "assistant",
      message: { id: "msg_fork", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "a new answer" }] },
      uuid: "f0000000-0000-4000-8000-000000000002",
      timestamp: "2026-01-01T00:00:01.000Z",
    }),
  );
  return `${out.join("\n")}\n`;
}

function projectWith(files: Record<string, string | Buffer>): string {
  const root = tempDir("pixir-claude-fork-");
  const dir = path.join(root, "-Users-dain-workspace-danieldemmel-me-next");
  mkdirSync(dir, { recursive: true });
  for (const [name, bytes] of Object.entries(files)) writeFileSync(path.join(dir, name), bytes);
  return root;
}

describe("a fork file (§3.7)", () => {
  it("imported with its source in one run, is a share child of the source storing only its own records; it exports byte for byte", () => {
    const text = forkFile();
    const root = projectWith({ [`${FORK}.jsonl`]: text, [`${SOURCE}.jsonl`]: sourceBytes });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    // The source is planned first, whatever the byte order of the names.
    expect(res.json.imports.map((i: any) => i.session_id)).toEqual([SOURCE, FORK]);
    const line11 = run("pixir-log", ["cat", SOURCE], { cwd: ws }).lines.filter((e: any) => e.data.claude?.line === 11).at(-1).seq;
    const fork = res.json.imports[1];
    expect(fork).toMatchObject({ kind: "fork_session", status: "created", forked_from: { session_id: SOURCE, shared: true } });
    expect(fork.logs).toEqual([expect.objectContaining({ session_id: FORK, role: "fork_session", parent_session_id: SOURCE, forked_to_seq: line11 })]);
    const stored = readFileSync(path.join(ws, ".pixir/sessions", `${FORK}.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(stored.map((e) => e.type)).toEqual(["session_fork", "workflow_event", "user_message", "assistant_message", "workflow_event"]);
    expect(stored[1].data.claude.copied.length).toBe(text.split("\n").length - 3);
    const ctx = run("pixir", ["context", FORK], { cwd: ws });
    expect(ctx.lines.at(-1)).toMatchObject({ type: "assistant_message" });
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", FORK, "--out", out, "--json"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(readFileSync(path.join(out, exp.json.files[0].path), "utf8")).toBe(text);
    // Importing again changes nothing.
    const again = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(again.json.imports.every((i: any) => i.status === "unchanged")).toBe(true);
  });

  it("imported alone first, is a root Log that stores every record (forked_from.shared false)", () => {
    const text = forkFile();
    const root = projectWith({ [`${FORK}.jsonl`]: text });
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.json.imports[0]).toMatchObject({ kind: "fork_session", forked_from: { session_id: SOURCE, shared: false }, logs: [{ role: "primary" }] });
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", FORK, "--out", out, "--json"], { cwd: ws });
    expect(readFileSync(path.join(out, exp.json.files[0].path), "utf8")).toBe(text);
  });
});

describe("a pixir fork exported to Claude (§5.3)", () => {
  it("writes a native skill and a finished subagent as the text the model reads (spec README, as codex-interop.md §5.4)", () => {
    const ws = tempDir();
    const root = projectWith({ [`${SOURCE}.jsonl`]: sourceBytes });
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["fork", SOURCE, "--child-id", "skilled"], { cwd: ws }).code).toBe(0);
    const input = [
      { type: "skill_activation", data: { name: "sample", scope: "repo", path: "/tmp/sample/SKILL.md", content_hash: "abc123", content: "# Sample skill\n\nUse this skill." } },
      { type: "subagent_event", data: { subagent_id: "sub_1", agent: "worker", event: "started", status: "running" } },
      { type: "subagent_event", data: { subagent_id: "sub_1", agent: "worker", event: "timed_out", status: "timed_out", summary: "Timed out." } },
    ];
    expect(run("pixir", ["append", "skilled"], { cwd: ws, input: input.map((e) => `${JSON.stringify(e)}\n`).join("") }).code).toBe(0);
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", "skilled", "--out", out, "--json"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(exp.json).toMatchObject({ mode: "fork", converted_events: 2, pixir_events: 1 });
    const lines = readFileSync(path.join(out, exp.json.files[0].path), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const tail = lines.slice(-3);
    expect(tail[0]).toMatchObject({ type: "user", isMeta: true, message: { role: "user", content: '<skill name="sample" source="repo" path="/tmp/sample/SKILL.md" content_sha256="abc123">\n# Sample skill\n\nUse this skill.\n</skill>' } });
    expect(tail[1]).toMatchObject({ type: "pixir-event", event: { type: "subagent_event", data: { event: "started" } } });
    expect(tail[2]).toMatchObject({ type: "user", isMeta: true, message: { role: "user", content: "Subagent sub_1 (worker) timed_out: Timed out." } });
  });

  it("is a new session: copied records with forkedFrom, then the native Events; it imports back with the same texts", () => {
    const ws = tempDir();
    const root = projectWith({ [`${SOURCE}.jsonl`]: sourceBytes });
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const cat = run("pixir-log", ["cat", SOURCE], { cwd: ws });
    const seq = cat.lines.filter((e: any) => e.data.claude?.line === 11).at(-1).seq;
    expect(run("pixir", ["fork", SOURCE, "--to-seq", String(seq), "--child-id", "retry"], { cwd: ws }).code).toBe(0);
    const input = ['{"type":"user_message","data":{"text":"try another way"}}', '{"type":"assistant_message","data":{"text":"here is another way"}}'].join("\n");
    expect(run("pixir", ["append", "retry"], { cwd: ws, input: `${input}\n` }).code).toBe(0);

    const out = tempDir();
    const exp = run("pixir", ["export", "claude", "retry", "--out", out, "--json"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(exp.json).toMatchObject({ mode: "fork", forked_from: { session_id: SOURCE }, converted_events: 2, pixir_events: 0, warnings: [] });
    const file = path.join(out, exp.json.files[0].path);
    const records = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const forkId = path.basename(file, ".jsonl");
    expect(records[0].parentUuid).toBeNull();
    expect(records.slice(0, -2).every((r) => r.forkedFrom?.sessionId === SOURCE && r.sessionId === forkId)).toBe(true);
    expect(records.slice(-2).map((r) => [r.type, r.message.content[0]?.text ?? r.message.content])).toEqual([
      ["user", "try another way"],
      ["assistant", "here is another way"],
    ]);
    for (let i = 1; i < records.length; i++) expect(records[i].parentUuid).toBe(records[i - 1].uuid);
    // Exporting again gives the same bytes (unchanged).
    const again = run("pixir", ["export", "claude", "retry", "--out", out, "--json"], { cwd: ws });
    expect(again.json.files[0].status).toBe("unchanged");

    // Imported back with its source present: a fork_session whose context has the fork's texts.
    const back = run("pixir", ["import", "claude", path.dirname(file), "--json"], { cwd: ws });
    expect(back.code, back.stdout).toBe(0);
    const entry = back.json.imports.find((i: any) => i.session_id === forkId);
    expect(entry).toMatchObject({ kind: "fork_session" });
    const texts = (id: string) =>
      run("pixir", ["context", id], { cwd: ws })
        .lines.filter((l: any) => l.type === "user_message" || l.type === "assistant_message")
        .map((l: any) => l.item.content[0].text);
    expect(texts("retry")).toContain("try another way");
    expect(texts(entry.leaf_session_id)).toEqual(texts("retry"));
    expect(readdirSync(out)).toHaveLength(1);
  });
});
