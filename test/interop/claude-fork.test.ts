// Forks (claude-interop.md §3.7, §5.3, §6 "Fork tests"): a fork file built from a real transcript, and a
// pixir fork of an imported session exported as a new Claude session that imports back.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { stampCopied } from "../../lib/envelope/src/interop/claude/export-fork.js";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { contextView, oracleItems, resumedRecords } from "../support/claude-oracle.js";

const SOURCE = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
const FORK = "00000000-0000-4000-8000-000000000001";
const sourceBytes = readFileSync(path.join(CLAUDE_FIXTURES, "claude-code-log", `${SOURCE}.jsonl`));
const sourceLines = sourceBytes.toString("utf8").split("\n");

/** §6: the oracle path records up to line 11, stamped by std(), then a user and an assistant record. */
function forkFile(): string {
  const uuids = new Set(resumedRecords(sourceBytes).map((r) => r.v.uuid));
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
    // The unchanged report says what the first one said of the fork file (§4.5), without reading it.
    expect(again.json.imports[1]).toMatchObject({ kind: "fork_session", forked_from: { session_id: SOURCE, shared: true }, records: fork.records });
    expect(again.json.imports[1].logs).toEqual([expect.objectContaining({ session_id: FORK, role: "fork_session", parent_session_id: SOURCE, forked_to_seq: line11, event_count: fork.logs[0].event_count })]);
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
    const again = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(again.json.imports[0]).toMatchObject({ status: "unchanged", kind: "fork_session", forked_from: { session_id: SOURCE, shared: false }, logs: [{ role: "primary" }] });
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

describe("native Events of a pixir fork, converted by the export (§5.3 step 6)", () => {
  it("become records chained in History order, in the table's shapes; the rest is pixir-event", () => {
    const ws = tempDir();
    const root = projectWith({ [`${SOURCE}.jsonl`]: sourceBytes });
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const cat = run("pixir-log", ["cat", SOURCE], { cwd: ws }).lines;
    // Cut right after the tool_use of line 9: its result is answered by a native tool_result.
    const seq = cat.filter((e: any) => e.data.claude?.line === 9 && e.type === "tool_call").at(-1).seq;
    expect(run("pixir", ["fork", SOURCE, "--to-seq", String(seq), "--child-id", "natives"], { cwd: ws }).code).toBe(0);
    const natives = [
      { type: "tool_result", data: { call_id: "toolu_014mfsGes3NjR4YGWt6qnPDN", ok: false, output: "it failed" } },
      { type: "user_message", data: { text: "and now?" } },
      { type: "reasoning", data: { item: { type: "thinking", thinking: "hmm", signature: "sig" } } },
      { type: "assistant_message", data: { text: "calling a tool", message_id: "m1", model: "claude-x" } },
      { type: "tool_call", data: { call_id: "call one/two", name: "Bash", args: { command: "ls" }, message_id: "m1" } },
      { type: "provider_usage", data: { input: 3, output: 4, cache_read: 5, cache_write: 6 } },
      { type: "tool_result", data: { call_id: "call one/two", ok: true, output: "a b c" } },
      { type: "reasoning", data: { item: { type: "reasoning", summary: [] } } },
      { type: "skill_activation", data: { name: "sample", source: "repo", path: "/tmp/s/SKILL.md", content_hash: "abc", content: "# Sample" } },
      { type: "subagent_event", data: { subagent_id: "sub_1", event: "finished", status: "completed", agent: "worker", summary: "found it" } },
      { type: "subagent_event", data: { subagent_id: "sub_1", event: "started", status: "running", agent: "worker" } },
      { type: "workflow_event", data: { event: "note" } },
      { type: "tool_result", data: { call_id: "never called", ok: true, output: "orphan" } },
    ];
    const input = natives.map((n) => JSON.stringify(n)).join("\n");
    expect(run("pixir", ["append", "natives"], { cwd: ws, input: `${input}\n` }).code).toBe(0);
    const exp = run("pixir", ["export", "claude", "natives", "--json", "--dry-run"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(exp.json).toMatchObject({ mode: "fork", converted_events: 8, pixir_events: 4 });
    const stream = run("pixir", ["export", "claude", "natives"], { cwd: ws });
    expect(stream.code, stream.stderr).toBe(0);
    const lines = stream.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const withUuid = lines.filter((r) => typeof r.uuid === "string");
    for (let i = 1; i < withUuid.length; i++) expect(withUuid[i].parentUuid).toBe(withUuid[i - 1].uuid);
    const copiedCall = lines.find((r) => r.message?.content?.[0]?.id === "toolu_014mfsGes3NjR4YGWt6qnPDN");
    const own = lines.filter((r) => r.forkedFrom === undefined);
    const [result, user, thinking, text, call, callResult, skill, subagent] = own.filter((r) => r.uuid);
    // A result for a call among the copied records is written, answering that record.
    expect(result).toMatchObject({ type: "user", sourceToolAssistantUUID: copiedCall.uuid, message: { content: [{ type: "tool_result", tool_use_id: "toolu_014mfsGes3NjR4YGWt6qnPDN", content: "it failed", is_error: true }] } });
    expect(Object.keys(user)).toEqual(["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "type", "message", "uuid", "timestamp"]);
    expect(user.message).toEqual({ role: "user", content: "and now?" });
    // One group: the signed thinking, the text and the call share a message id and get the usage after them.
    expect(thinking.message.content).toEqual([{ type: "thinking", thinking: "hmm", signature: "sig" }]);
    expect(text.message.id).toBe(thinking.message.id);
    expect(call.message.id).toBe(thinking.message.id);
    expect(call.message.content[0]).toMatchObject({ type: "tool_use", name: "Bash", input: { command: "ls" } });
    expect(call.message.content[0].id).toMatch(/^toolu_[0-9a-f]{24}$/);
    expect(call.message.usage).toEqual({ input_tokens: 3, output_tokens: 4, cache_read_input_tokens: 5, cache_creation_input_tokens: 6 });
    expect(callResult).toMatchObject({ sourceToolAssistantUUID: call.uuid, message: { content: [{ tool_use_id: call.message.content[0].id, content: "a b c", is_error: false }] } });
    // Skill activations and terminal subagent Events reach Claude as the fold shows them (spec README).
    expect(skill).toMatchObject({ type: "user", isMeta: true, message: { content: '<skill name="sample" source="repo" path="/tmp/s/SKILL.md" content_sha256="abc">\n# Sample\n</skill>' } });
    expect(subagent).toMatchObject({ type: "user", isMeta: true, message: { content: "Subagent sub_1 (worker) completed: found it" } });
    expect(own.filter((r) => r.type === "pixir-event").map((r) => r.event.type)).toEqual(["reasoning", "subagent_event", "workflow_event", "tool_result"]);
  });

  it("a checkpoint becomes a compact_boundary, the summary, and the records the fold keeps after it", () => {
    const ws = tempDir();
    const root = projectWith({ [`${SOURCE}.jsonl`]: sourceBytes });
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const seq = run("pixir-log", ["cat", SOURCE], { cwd: ws }).lines.filter((e: any) => e.data.claude?.line === 11).at(-1).seq;
    expect(run("pixir", ["fork", SOURCE, "--to-seq", String(seq), "--child-id", "compacted"], { cwd: ws }).code).toBe(0);
    const first = ['{"type":"user_message","data":{"text":"one"}}', '{"type":"assistant_message","data":{"text":"two"}}'].join("\n");
    expect(run("pixir", ["append", "compacted"], { cwd: ws, input: `${first}\n` }).code).toBe(0);
    const last = run("pixir-log", ["cat", "compacted"], { cwd: ws }).lines.at(-1).seq;
    const checkpoint = { type: "history_compaction", data: { strategy: "manual", summary: "all so far", range: { from_seq: 0, to_seq: last - 1 }, source_event_count: last } };
    expect(run("pixir", ["append", "compacted"], { cwd: ws, input: `${JSON.stringify(checkpoint)}\n` }).code).toBe(0);
    const stream = run("pixir", ["export", "claude", "compacted"], { cwd: ws });
    expect(stream.code, stream.stderr).toBe(0);
    const own = stream.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((r) => r.forkedFrom === undefined);
    const [one, two, boundary, summary, kept] = own;
    expect([one.message.content, two.message.content[0].text]).toEqual(["one", "two"]);
    expect(Object.keys(boundary)).toEqual(["parentUuid", "isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch", "type", "subtype", "logicalParentUuid", "content", "level", "compactMetadata", "uuid", "timestamp"]);
    expect(boundary).toMatchObject({ parentUuid: null, logicalParentUuid: two.uuid, subtype: "compact_boundary", compactMetadata: { trigger: "manual", preTokens: 0 } });
    expect(summary).toMatchObject({ parentUuid: boundary.uuid, isVisibleInTranscriptOnly: true, isCompactSummary: true });
    expect(summary.message.content).toContain("all so far");
    // The fold keeps what follows range.to_seq: the assistant answer, written again after the summary.
    expect(kept).toMatchObject({ parentUuid: summary.uuid, type: "assistant", message: { content: [{ type: "text", text: "two" }] } });
    expect(kept.uuid).not.toBe(two.uuid);
    expect(own).toHaveLength(5);
  });
});

describe("a rewind inside a shared fork file's copied records (§3.4 with §3.7)", () => {
  it("is a branch of the fork file's Log at the source record's last Event, and shows the oracle's context", () => {
    const text = forkFile();
    const copied = text.trim().split("\n").slice(0, -2).map((l) => JSON.parse(l));
    // Rewind to the third copied record: a new prompt and answer hang from it.
    const at = copied[2];
    const base = { isSidechain: false, userType: "external", cwd: at.cwd, sessionId: FORK, version: "1.0.128", gitBranch: "main" };
    const rewound = [
      { parentUuid: at.uuid, ...base, type: "user", message: { role: "user", content: "back to the start" }, uuid: "f0000000-0000-4000-8000-000000000003", timestamp: "2026-01-01T00:00:02.000Z" },
      { parentUuid: "f0000000-0000-4000-8000-000000000003", ...base, type: "assistant", message: { id: "msg_rw", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "from the start" }] }, uuid: "f0000000-0000-4000-8000-000000000004", timestamp: "2026-01-01T00:00:03.000Z" },
    ];
    const file = `${text}${rewound.map((r) => JSON.stringify(r)).join("\n")}\n`;
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", projectWith({ [`${FORK}.jsonl`]: file, [`${SOURCE}.jsonl`]: sourceBytes }), "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    const fork = res.json.imports[1];
    const branchId = `${FORK}.f0000000-0000-4000-8000-000000000003`;
    expect(fork.leaf_session_id).toBe(branchId);
    // The seq, in the fork file's History, of the last Event of the third copied record's source record.
    const inherited = run("pixir-log", ["cat", FORK], { cwd: ws }).lines.filter((e: any) => e.data.claude?.uuid === at.uuid);
    expect(fork.logs.find((l: any) => l.session_id === branchId)).toMatchObject({ role: "branch", parent_session_id: FORK, forked_to_seq: inherited.at(-1).seq });
    expect(contextView(ws, branchId)).toEqual(oracleItems(Buffer.from(file)));
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", FORK, "--out", out, "--json"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(readFileSync(path.join(out, exp.json.files[0].path), "utf8")).toBe(file);
  });
});

describe("a fork file whose source was imported by an earlier run (§3.7 'its Logs are in the Workspace')", () => {
  it("is shared with the source's Logs, grows by appends, and exports byte for byte", () => {
    const ws = tempDir();
    const root = projectWith({ [`${SOURCE}.jsonl`]: sourceBytes });
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const line11 = run("pixir-log", ["cat", SOURCE], { cwd: ws }).lines.filter((e: any) => e.data.claude?.line === 11).at(-1).seq;
    const text = forkFile();
    const lines = text.trim().split("\n");
    const dir = path.join(root, "-Users-dain-workspace-danieldemmel-me-next");
    // The fork file without its last record first, then grown by it.
    writeFileSync(path.join(dir, `${FORK}.jsonl`), `${lines.slice(0, -1).join("\n")}\n`);
    const first = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(first.code, first.stdout).toBe(0);
    const fork = first.json.imports.find((i: any) => i.session_id === FORK);
    expect(fork).toMatchObject({ kind: "fork_session", status: "created", forked_from: { session_id: SOURCE, shared: true } });
    expect(fork.logs).toEqual([expect.objectContaining({ role: "fork_session", parent_session_id: SOURCE, forked_to_seq: line11 })]);
    const before = readFileSync(path.join(ws, ".pixir/sessions", `${FORK}.ndjson`));
    writeFileSync(path.join(dir, `${FORK}.jsonl`), text);
    const grown = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(grown.code, grown.stdout).toBe(0);
    const entry = grown.json.imports.find((i: any) => i.session_id === FORK);
    expect(entry).toMatchObject({ status: "appended", new_records: 1, records: lines.length, leaf_session_id: FORK });
    expect(readFileSync(path.join(ws, ".pixir/sessions", `${FORK}.ndjson`)).subarray(0, before.length).equals(before)).toBe(true);
    expect(contextView(ws, FORK)).toEqual(oracleItems(Buffer.from(text)));
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", FORK, "--out", out, "--json"], { cwd: ws });
    expect(readFileSync(path.join(out, exp.json.files[0].path), "utf8")).toBe(text);
  });
});

describe("a fork file with new uuids (the Agent SDK's forkSession, §1.9)", () => {
  it("is shared with its source all the same: forkedFrom.messageUuid names the source record", () => {
    const text = forkFile();
    const fresh = new Map<string, string>();
    const renamed = text
      .trim()
      .split("\n")
      .map((l, i) => {
        const r = JSON.parse(l);
        if (r.forkedFrom === undefined) return r;
        fresh.set(r.uuid, `f1000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
        return r;
      })
      .map((r) => ({ ...r, uuid: fresh.get(r.uuid) ?? r.uuid, parentUuid: r.parentUuid === null ? null : (fresh.get(r.parentUuid) ?? r.parentUuid) }))
      .map((r) => JSON.stringify(r))
      .join("\n");
    const file = `${renamed}\n`;
    const ws = tempDir();
    const res = run("pixir", ["import", "claude", projectWith({ [`${FORK}.jsonl`]: file, [`${SOURCE}.jsonl`]: sourceBytes }), "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    const fork = res.json.imports.find((i: any) => i.session_id === FORK);
    expect(fork).toMatchObject({ kind: "fork_session", forked_from: { session_id: SOURCE, shared: true }, logs: [{ role: "fork_session", parent_session_id: SOURCE }] });
    // The context shows the source's records for the copies (by their source uuids), then the fork's own.
    const texts = contextView(ws, FORK).map((i) => i.fields.text ?? i.fields.output ?? i.fields.call_id);
    expect(texts).toEqual(oracleItems(Buffer.from(file)).map((i) => i.fields.text ?? i.fields.output ?? i.fields.call_id));
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", FORK, "--out", out, "--json"], { cwd: ws });
    expect(readFileSync(path.join(out, exp.json.files[0].path), "utf8")).toBe(file);
  });
});
