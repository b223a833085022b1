// pixir export pi (pi-interop.md §4; acceptance.md §J 66), against the built binaries.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, sh, tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { jsonl, MAIN_ID, MAIN_TREE, oracleOf, piFixture, rawEvents, resumedPath } from "../support/pi.js";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const exportPi = (ws: string, ...args: string[]) => run("pixir", ["export", "pi", ...args], { cwd: ws });

function importedMainTree(): string {
  const ws = tempDir();
  const r = run("pixir", ["import", "pi", piFixture(MAIN_TREE)], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return ws;
}

const append = (ws: string, id: string, events: object[]) => {
  const r = run("pixir-log", ["append", id], { cwd: ws, input: events.map((e) => JSON.stringify(e)).join("\n") + "\n" });
  expect(r.code, r.stderr).toBe(0);
};

describe("acceptance 66: round trip of the main tree", () => {
  const ws = importedMainTree();
  const original = jsonl(readFileSync(piFixture(MAIN_TREE), "utf8"));

  it("gives back the original header and the same 33 entries, with 723e727b on the last line", () => {
    const r = exportPi(ws, MAIN_ID);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    const lines = jsonl(r.stdout);
    expect(lines[0]).toEqual(original[0]);
    expect(lines).toHaveLength(34);
    const byId = new Map(lines.slice(1).map((e) => [e.id, e]));
    for (const entry of original.slice(1)) expect(byId.get(entry.id)).toEqual(entry);
    expect(lines.at(-1).id).toBe("723e727b");
    // The branch (a descendant of the named Log) comes first, the named Log last.
    expect(lines[1].id).toBe("77b22af0");
  });

  it("puts the branch Log last when the branch is named, so pi resumes a9bcedc7", () => {
    const r = exportPi(ws, `${MAIN_ID}.a9bcedc7`);
    const lines = jsonl(r.stdout);
    expect(lines.at(-1).id).toBe("a9bcedc7");
    expect(lines[1].id).toBe("1f6d33e6");
    expect(oracleOf(r.stdout).piDefaultLeafId).toBe("a9bcedc7");
  });

  it("--out FILE writes the same bytes atomically and refuses to replace them", () => {
    const dir = tempDir();
    const file = path.join(dir, "out.jsonl");
    const r = run("pixir", ["export", "pi", MAIN_ID, "--out", file, "--json", "--workspace", ws], { cwd: dir });
    expect(r.code, r.stdout).toBe(0);
    expect(r.json).toEqual({
      ok: true,
      recorded: true,
      dry_run: false,
      file,
      header_id: MAIN_ID,
      entry_count: 33,
      sessions: [
        { session_id: `${MAIN_ID}.a9bcedc7`, parent_session_id: MAIN_ID, strategy: "share_v1", entry_count: 14 },
        { session_id: MAIN_ID, parent_session_id: null, strategy: null, entry_count: 19 },
      ],
      leaf_entry_id: "723e727b",
      // archive.md §5: the header's cwd, and the command that resumes the file.
      cwd: "/home/user/demo",
      status: "written",
      resume_command: `pi --session ${file}`,
    });
    expect(readFileSync(file, "utf8")).toBe(exportPi(ws, MAIN_ID).stdout);
    expect(readdirSync(dir)).toEqual(["out.jsonl"]);
    const again = run("pixir", ["export", "pi", MAIN_ID, "--out", file, "--json", "--workspace", ws], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.json.error).toMatchObject({ kind: "already_exists", details: { file } });
    const text = run("pixir", ["export", "pi", MAIN_ID, "--out", path.join(dir, "t.jsonl"), "--workspace", ws], { cwd: dir });
    expect(text.stdout).toBe(`Exported 33 entries of 2 sessions to ${path.join(dir, "t.jsonl")}; pi resumes 723e727b.\nresume: pi --session ${path.join(dir, "t.jsonl")}\n`);
  });

  it("--out FILE that cannot be written whole (a file-size limit, as a full disk) fails and leaves nothing", () => {
    const dir = tempDir();
    const size = Buffer.byteLength(exportPi(ws, MAIN_ID).stdout);
    expect(size).toBeGreaterThan(8 * 1024);
    // ulimit -f counts 1 KiB blocks: the write takes what fits, then fails (EFBIG, as ENOSPC would).
    const r = sh(`ulimit -f 8; pixir export pi ${MAIN_ID} --out out.jsonl --json --workspace ${JSON.stringify(ws)}`, { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "log_write_failed", details: { reason: "efbig", path: "out.jsonl" } });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("--out DIR uses pi's own file name, which is the original's", () => {
    const dir = tempDir();
    const r = run("pixir", ["export", "pi", MAIN_ID, "--out", dir, "--json", "--workspace", ws], { cwd: dir });
    expect(r.code, r.stdout).toBe(0);
    expect(readdirSync(dir)).toEqual([path.basename(MAIN_TREE)]);
    expect(r.json.file).toBe(path.join(dir, path.basename(MAIN_TREE)));
  });

  it("--out DIR/ that does not exist is a missing directory, never a file named DIR", () => {
    const dir = tempDir();
    const r = run("pixir", ["export", "pi", MAIN_ID, "--out", "exported/", "--json", "--workspace", ws], { cwd: dir });
    expect(r.code, r.stdout).toBe(2);
    expect(r.json.error.details).toMatchObject({ field: "out", reason: "missing_directory" });
    expect(readdirSync(dir)).toEqual([]);
  });

  it("--dry-run reports and writes nothing; a missing --out directory is invalid_args", () => {
    const dir = tempDir();
    const dry = run("pixir", ["export", "pi", MAIN_ID, "--out", path.join(dir, "x.jsonl"), "--dry-run", "--json", "--workspace", ws], { cwd: dir });
    expect(dry.code).toBe(0);
    expect(dry.json).toMatchObject({ ok: true, recorded: false, dry_run: true, entry_count: 33, leaf_entry_id: "723e727b" });
    const plain = run("pixir", ["export", "pi", MAIN_ID, "--dry-run", "--workspace", ws], { cwd: dir });
    expect(plain.stdout).toBe("Would export 33 entries of 2 sessions to stdout.\nresume: pi --session FILE\n");
    expect(readdirSync(dir)).toEqual([]);
    const missing = run("pixir", ["export", "pi", MAIN_ID, "--out", path.join(dir, "no", "x.jsonl"), "--json", "--workspace", ws], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.json.error.details).toMatchObject({ field: "out", reason: "missing_directory" });
  });

  it("a missing image payload is resource_missing and prints nothing", () => {
    const copy = importedMainTree();
    rmSync(path.join(copy, ".pixir", "sessions", `${MAIN_ID}.a9bcedc7`), { recursive: true });
    const r = exportPi(copy, MAIN_ID);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^error: resource_missing: session resource payload is missing \(\.pixir\/sessions\/[^/]+\/resources\/img-[0-9a-f]+\/[0-9a-f]{64}\.png\)\nhint: restore the resource payload in the parent session\nhint: fork at a seq before the event that references it\n$/);
  });
});

describe("native Events", () => {
  const usage = { input: 10, output: 5, cache_read: 1, cache_write: 0, total_tokens: 16, cost: { input: 0.1, output: 0.2, cache_read: 0, cache_write: 0, total: 0.3 } };

  function nativeFamily(): string {
    const ws = tempDir();
    append(ws, "s1", [
      { type: "user_message", data: { text: "hello" } },
      { type: "reasoning", data: { item: { type: "reasoning", text: "think first" }, model: "m1" } },
      { type: "assistant_message", data: { text: "reading", provider: "prov", model: "m1", api: "api1" } },
      { type: "tool_call", data: { call_id: "c1", name: "read", args: { path: "a.txt" } } },
      { type: "provider_usage", data: { provider: "prov", model: "m1", ...usage } },
      { type: "tool_result", data: { call_id: "c1", ok: true, output: "file text" } },
      { type: "tool_result", data: { call_id: "nowhere", ok: false, output: "?" } },
      { type: "workflow_event", data: { event: "checkpointed" } },
      { type: "user_message", data: { text: "a note", origin: "extension", custom_type: "note" } },
      { type: "history_compaction", data: { range: { from_seq: 0, to_seq: 2 }, summary: "earlier work", tokens_before: 50 } },
      { type: "branch_summary", data: { summary: "what happened", files_touched: ["a.txt"] } },
    ]);
    const fork = run("pixir", ["fork", "s1", "--to-seq", "5", "--strategy", "share_v1", "--child-id", "s1-kid"], { cwd: ws });
    expect(fork.code, fork.stderr).toBe(0);
    append(ws, "s1-kid", [{ type: "user_message", data: { text: "from the kid" } }]);
    return ws;
  }

  it("become pi entries with derived ids, linked by parentId, the named Log last", () => {
    const ws = nativeFamily();
    const r = exportPi(ws, "s1-kid");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("warning: orphan_tool_result: s1 seq 6: tool_result has no tool call on its path; exported as a custom entry\n");
    const [header, ...entries] = jsonl(r.stdout);
    const events = rawEvents(ws, "s1");
    const hex = sha256("pixir:s1");
    expect(header).toEqual({
      type: "session",
      version: 3,
      id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`,
      timestamp: events[0].ts,
      cwd: ws,
    });
    const idOf = (seq: number) => sha256(`pixir:${events[seq].id}`).slice(0, 8);
    expect(entries.map((e) => [e.type, e.message?.role ?? null])).toEqual([
      ["message", "user"],
      ["message", "assistant"],
      ["message", "toolResult"],
      ["custom", null],
      ["custom", null],
      ["custom_message", null],
      ["compaction", null],
      ["branch_summary", null],
      ["message", "user"],
    ]);
    const [user, assistant, result, orphan, workflow, note, compaction, summary, kid] = entries;
    expect(user).toMatchObject({ id: idOf(0), parentId: null, timestamp: events[0].ts });
    expect(user.message).toEqual({ role: "user", content: [{ type: "text", text: "hello" }], timestamp: Date.parse(events[0].ts) });
    expect(assistant).toMatchObject({ id: idOf(1), parentId: user.id });
    expect(assistant.message).toMatchObject({
      content: [
        { type: "thinking", thinking: "think first" },
        { type: "text", text: "reading" },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } },
      ],
      api: "api1",
      provider: "prov",
      model: "m1",
      usage: { input: 10, output: 5, cacheRead: 1, cacheWrite: 0, totalTokens: 16, cost: { input: 0.1, output: 0.2, cacheRead: 0, cacheWrite: 0, total: 0.3 } },
      stopReason: "toolUse",
    });
    expect(result).toMatchObject({ id: idOf(5), parentId: assistant.id });
    expect(result.message).toMatchObject({ role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "file text" }], isError: false });
    expect(orphan).toMatchObject({ customType: "pixir", parentId: result.id });
    expect(orphan.data.event).toEqual(events[6]);
    expect(workflow.data.event.data).toEqual({ event: "checkpointed" });
    expect(note).toMatchObject({ customType: "note", content: [{ type: "text", text: "a note" }], display: true });
    expect(compaction).toMatchObject({ summary: "earlier work", tokensBefore: 50, firstKeptEntryId: assistant.id });
    expect(summary).toMatchObject({ fromId: compaction.id, parentId: compaction.id, summary: "what happened", details: { readFiles: [], modifiedFiles: ["a.txt"] } });
    // The child's first own entry hangs from the entry holding the parent's Event at forked_to_seq (5).
    expect(kid).toMatchObject({ parentId: result.id });
    expect(kid.message.content).toEqual([{ type: "text", text: "from the kid" }]);
    expect(resumedPath(r.stdout).pathIds).toEqual([user.id, assistant.id, result.id, kid.id]);
  });

  describe("a fork point inside an assistant run", () => {
    // seq 0 user, 1-3 one assistant run (text, tool call, usage), 4 tool result, 5-6 another run (usage, text), 7 user.
    const parentEvents = [
      { type: "user_message", data: { text: "hello" } },
      { type: "assistant_message", data: { text: "reading" } },
      { type: "tool_call", data: { call_id: "c1", name: "read", args: { path: "a.txt" } } },
      { type: "provider_usage", data: usage },
      { type: "tool_result", data: { call_id: "c1", ok: true, output: "file text" } },
      { type: "provider_usage", data: usage },
      { type: "assistant_message", data: { text: "done" } },
      { type: "user_message", data: { text: "thanks" } },
    ];
    /** What pi shows the model along the resumed path: user and assistant texts, tool calls and results. */
    const piPieces = (text: string): string[] => {
      const parsed = jsonl(text);
      const byId = new Map(parsed.slice(1).map((e) => [e.id, e]));
      return resumedPath(text).pathIds.flatMap((id) => {
        const m = byId.get(id).message;
        if (m === undefined) return [];
        if (m.role === "toolResult") return [`result ${m.toolCallId}`];
        return m.content.map((b: any) => (b.type === "toolCall" ? `call ${b.id}` : `${m.role} ${b.text}`));
      });
    };
    /** The same pieces from a Log's History. */
    const historyPieces = (ws: string, id: string): string[] =>
      run("pixir-log", ["cat", id], { cwd: ws }).lines.flatMap((e: any) =>
        e.type === "user_message" ? [`user ${e.data.text}`] : e.type === "assistant_message" ? [`assistant ${e.data.text}`] : e.type === "tool_call" ? [`call ${e.data.call_id}`] : e.type === "tool_result" ? [`result ${e.data.call_id}`] : [],
      );

    it.each(["replay_v1", "share_v1"])("a %s child resumes in pi with exactly its History, wherever it was cut", (strategy) => {
      const ws = tempDir();
      append(ws, "p", parentEvents);
      for (let to = 0; to < parentEvents.length; to++) {
        const fork = run("pixir", ["fork", "p", "--to-seq", String(to), "--strategy", strategy, "--child-id", `k${to}`], { cwd: ws });
        expect(fork.code, fork.stderr).toBe(0);
        append(ws, `k${to}`, [{ type: "user_message", data: { text: `own ${to}` } }]);
      }
      for (let to = 0; to < parentEvents.length; to++) {
        const r = exportPi(ws, `k${to}`);
        expect(r.code, r.stderr).toBe(0);
        expect(piPieces(r.stdout), `cut at ${to}`).toEqual(historyPieces(ws, `k${to}`));
      }
      // The parent itself still resumes with all of it, its runs now cut at the fork points.
      expect(piPieces(exportPi(ws, "p").stdout)).toEqual(historyPieces(ws, "p"));
    });

    it("a grandchild cut inside its parent's inherited prefix, or at its parent's session_fork", () => {
      const ws = tempDir();
      append(ws, "p", parentEvents);
      expect(run("pixir", ["fork", "p", "--to-seq", "4", "--child-id", "c"], { cwd: ws }).code).toBe(0);
      // c's seq 2 is p's seq 1 (the run's text); c's seq 0 is its session_fork: nothing inherited.
      for (const [to, id] of [[2, "g2"], [0, "g0"]] as const) {
        expect(run("pixir", ["fork", "c", "--to-seq", String(to), "--child-id", id], { cwd: ws }).code).toBe(0);
        append(ws, id, [{ type: "user_message", data: { text: `own ${id}` } }]);
      }
      const g2 = exportPi(ws, "g2");
      expect(piPieces(g2.stdout)).toEqual(["user hello", "assistant reading", "user own g2"]);
      expect(piPieces(g2.stdout)).toEqual(historyPieces(ws, "g2"));
      const g0 = exportPi(ws, "g0");
      expect(jsonl(g0.stdout).at(-1)).toMatchObject({ parentId: null });
      expect(piPieces(g0.stdout)).toEqual(["user own g0"]);
    });
  });

  it("export and import again: pi's file becomes a valid family", () => {
    const ws = nativeFamily();
    const file = path.join(ws, "family.jsonl");
    expect(run("pixir", ["export", "pi", "s1-kid", "--out", file], { cwd: ws }).code).toBe(0);
    const dir = tempDir();
    const r = run("pixir", ["import", "pi", file, "--json"], { cwd: dir });
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.imports[0].sessions).toHaveLength(2);
    expect(run("pixir-log", ["check"], { cwd: dir }).code).toBe(0);
    // The same lines come back (in the importer's family order), with the same resumed leaf last.
    const back = run("pixir", ["export", "pi", r.json.imports[0].sessions[0].session_id], { cwd: dir });
    const sorted = (text: string) => text.split("\n").filter((l) => l !== "").sort();
    expect(sorted(back.stdout)).toEqual(sorted(readFileSync(file, "utf8")));
    expect(jsonl(back.stdout).at(-1)).toEqual(jsonl(readFileSync(file, "utf8")).at(-1));
  });

  it("Events appended to an imported Log continue its pi path", () => {
    const ws = importedMainTree();
    const a = run("pixir", ["append", MAIN_ID], { cwd: ws, input: '{"type":"user_message","data":{"text":"one more thing"}}\n' });
    expect(a.code, a.stderr).toBe(0);
    const lines = jsonl(exportPi(ws, MAIN_ID).stdout);
    expect(lines).toHaveLength(35);
    expect(lines.at(-1)).toMatchObject({ type: "message", parentId: "723e727b", message: { role: "user", content: [{ type: "text", text: "one more thing" }] } });
  });

  it.each(["replay_v1", "share_v1"])("a %s fork of an imported Log hangs from the fork point and copies nothing twice", (strategy) => {
    const ws = importedMainTree();
    const point = rawEvents(ws, MAIN_ID).filter((e) => e.data.pi?.entry_id === "6bba58bd").at(-1);
    const fork = run("pixir", ["fork", MAIN_ID, "--to-seq", String(point.seq), "--strategy", strategy, "--child-id", "k"], { cwd: ws });
    expect(fork.code, fork.stderr).toBe(0);
    // Without Events of its own, the fork still ends the file: its session_fork as a custom entry.
    const bare = jsonl(exportPi(ws, "k").stdout);
    expect(bare).toHaveLength(35);
    expect(bare.at(-1)).toMatchObject({ type: "custom", customType: "pixir", parentId: "6bba58bd" });
    expect(bare.at(-1).data.event).toMatchObject({ type: "session_fork", session_id: "k" });
    append(ws, "k", [{ type: "user_message", data: { text: "try another way" } }]);
    const r = exportPi(ws, "k");
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonl(r.stdout);
    expect(lines).toHaveLength(35);
    expect(lines.at(-1)).toMatchObject({ parentId: "6bba58bd" });
    const expectedPath = ["1f6d33e6", "39eec5a8", "d388c56d", "8aea780e", "bf4cd484", "1cf9c8b3", "e13b56f9", "6bba58bd", lines.at(-1).id];
    expect(resumedPath(r.stdout).pathIds).toEqual(expectedPath);
  });
});

describe("odd input survives the round trip byte for byte", () => {
  // Hand-made: unknown entry types, roles and block types, non-array and string content, a toolCall
  // without arguments, non-canonical base64, missing timestamps and parentIds, extra keys at every level
  // (a "__proto__" key too), pi's unusual key orders, an empty branch summary, a label that clears, and
  // an image block that already carries a resource_id.
  const file = path.join(ROOT, "test", "fixtures", "pi-extra", "odd-entries.jsonl");

  it("imports into a family that passes check and exports every original line again", () => {
    const ws = tempDir();
    const r = run("pixir", ["import", "pi", file, "--json"], { cwd: ws });
    expect(r.code, r.stdout).toBe(0);
    expect(r.json.imports[0].sessions.map((s: any) => s.session_id)).toEqual(["odd-1", "odd-1.e11", "odd-1.e12"]);
    expect(run("pixir-log", ["check"], { cwd: ws }).code).toBe(0);
    const exported = exportPi(ws, "odd-1");
    expect(exported.code, exported.stderr).toBe(0);
    const original = readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
    const back = exported.stdout.split("\n").filter((l) => l !== "");
    expect(back[0]).toBe(original[0]);
    expect(back.slice(1).sort()).toEqual(original.slice(1).sort());
    expect(back.at(-1)).toBe(original.at(-1));
  });
});

describe("the assistant mapping (assistant-message-with-thinking-code.json)", () => {
  it("maps thinking, text and usage to Events and back to the same message", () => {
    const message = JSON.parse(readFileSync(piFixture("assistant-message-with-thinking-code.json"), "utf8"));
    const dir = tempDir();
    const lines = [
      { type: "session", version: 3, id: "one-message", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" },
      { type: "message", id: "u0000001", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "explain", timestamp: 1767225601000 } },
      { type: "message", id: "a0000001", parentId: "u0000001", timestamp: "2026-01-01T00:00:02.000Z", message },
    ].map((l) => JSON.stringify(l));
    const file = path.join(dir, "one.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const r = run("pixir", ["import", "pi", file], { cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    const events = rawEvents(dir, "one-message").filter((e) => e.data.pi?.entry_id === "a0000001");
    const thinking = message.content.filter((b: any) => b.type === "thinking");
    expect(events.map((e) => e.type)).toEqual([...thinking.map(() => "reasoning"), "assistant_message", "provider_usage"]);
    const msgEvent = events.find((e) => e.type === "assistant_message");
    for (const e of events) expect(e.data.message_id).toBe(msgEvent.id);
    expect(events[0].data).toMatchObject({ item: thinking[0], model: message.model, dialect: "pi" });
    expect(msgEvent.data).toMatchObject({ stop_reason: message.stopReason, provider: message.provider, model: message.model, api: message.api });
    expect(msgEvent.data.pi.block_order).toEqual(message.content.map((b: any) => b.type));
    const usage = events.at(-1).data;
    expect(usage).toMatchObject({ input: message.usage.input, output: message.usage.output, total_tokens: message.usage.totalTokens });
    expect(usage.pi.usage).toEqual(message.usage);
    const exported = exportPi(dir, "one-message");
    expect(exported.stdout.split("\n")[2]).toBe(lines[2]);
  });
});

describe("arguments and errors", () => {
  it("a missing Log is not_found on stderr; an invalid id is never echoed", () => {
    const ws = tempDir();
    const missing = exportPi(ws, "nope");
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe("error: not_found: session log was not found\nhint: check the session id\nhint: run pixir export pi from the workspace that owns the session log\n");
    const json = run("pixir", ["export", "pi", "nope", "--json"], { cwd: ws });
    expect(json.errJson.error.details).toMatchObject({ session_id: "nope", log_path: ".pixir/sessions/nope.ndjson" });
    const bad = run("pixir", ["export", "pi", "a;b$HOME", "--json"], { cwd: ws });
    expect(bad.code).toBe(2);
    expect(bad.errJson.error.kind).toBe("invalid_args");
    expect(bad.stderr + bad.stdout).not.toContain("$HOME");
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
  });

  it.each([
    [["export", "pi"], "pixir export pi <id> [--out FILE|DIR] [--cwd DIR] [--install] [--dry-run]"],
    [["export", "pi", "a", "b"], "pixir export pi <id> [--out FILE|DIR] [--cwd DIR] [--install] [--dry-run]"],
  ])("%j is a usage error", (args, synopsis) => {
    const r = run("pixir", args, { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: usage: ${synopsis}\nhint: run the command with --help\n`);
  });

  it("an unknown export format is named, with the nearest one", () => {
    expect(run("pixir", ["export", "tar", "x"], { cwd: tempDir() }).stderr).toBe('error: usage: unknown export format "tar"\nhint: run the command with --help\n');
    expect(run("pixir", ["export", "pii", "x"], { cwd: tempDir() }).stderr).toBe('error: usage: unknown export format "pii"; did you mean "pi"?\nhint: run the command with --help\n');
  });

  it("help names both commands with real examples", () => {
    const ws = tempDir();
    for (const cmd of ["import", "export"]) {
      const group = run("pixir", [cmd, "--help"], { cwd: ws });
      expect(group.code).toBe(0);
      for (const format of ["pi", "codex", "claude"]) expect(group.stdout).toMatch(new RegExp(`^  pixir ${cmd} ${format} `, "m"));
    }
    expect(run("pixir", ["import", "pi", "--help"], { cwd: ws }).stdout).toMatch(/^Usage: pixir import pi <file>\.\.\. \[--lenient\] \[--dry-run\]/);
    const exportPi = run("pixir", ["export", "pi", "--help"], { cwd: ws }).stdout;
    expect(exportPi).toMatch(/^Usage: pixir export pi <id> \[--out FILE\|DIR\] \[--cwd DIR\] \[--install\] \[--dry-run\]/);
    expect(exportPi).toContain("Examples:");
  });
});
