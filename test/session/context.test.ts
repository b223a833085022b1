// context-and-compaction.md §1, acceptance.md §I case 64: `pixir context`, the provider input items of a
// Session, against the built binary. Every vector of context-vectors.md is in context-vectors.test.ts;
// these are the acceptance example and pixir's own cases (§7: resources, symlinks, lossless values).
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, sh, tempDir, toolResult, user, workspace, writeRaw } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";

/** summarize.md §6: the golden branch_summary data and its provider rendering. */
const GOLDEN_SUMMARY = {
  strategy: "deterministic_operational_summary_v1",
  parent_session_id: "p1",
  forked_to_seq: 2,
  range: { from_seq: 0, to_seq: 2 },
  source_event_count: 3,
  event_counts: { user_message: 1, assistant_message: 1, tool_call: 1 },
  tool_calls: [{ seq: 3, call_id: "call-1", name: "read" }],
  files_touched: ["a.txt"],
  open_tasks: ["user: one", "assistant: two"],
  limitations: [
    "Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.",
    "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
  ],
  summary:
    "Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).\nRecent forked conversational facts:\n- user: one\n- assistant: two",
};
const GOLDEN_TEXT = `Branch summary from forked parent prefix
Parent: p1
Range: seq 0..2 (3 events)
Strategy: deterministic_operational_summary_v1

Summary:
Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).
Recent forked conversational facts:
- user: one
- assistant: two

Files touched:
- a.txt

Open tasks:
- user: one
- assistant: two

Limitations:
- Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.
- The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.`;

const checkpoint = (from: unknown, to: unknown, summary = "earlier work") =>
  ev("history_compaction", {
    strategy: "deterministic_operational_summary_v1",
    range: { from_seq: from, to_seq: to },
    source_event_count: 2,
    summary,
    files_touched: ["lib/a.ts"],
    open_tasks: ["user: old"],
    limitations: ["kept"],
  });

const context = (ws: string, id: string, ...flags: string[]) => run("pixir", ["context", id, ...flags], { cwd: ws });

const userText = (text: string) => ({ role: "user", content: [{ type: "input_text", text }] });
const textOf = (line: any): unknown => line.item.content?.[0]?.text ?? line.item.output;

describe("64. fold rules", () => {
  it("omits lineage, usage, failure, workflow and partial answers; renders finished subagents and summaries", () => {
    const ws = workspace({
      x: [
        user("u"),
        ev("provider_usage"),
        ev("workflow_event"),
        ev("assistant_message", { text: "p", metadata: { partial: true } }),
        ev("subagent_event", { subagent_id: "a", event: "started" }),
        ev("subagent_event", { subagent_id: "a", event: "finished", summary: "ok" }),
        ev("turn_failed"),
        ev("branch_summary", GOLDEN_SUMMARY),
        assistant("done"),
      ],
    });
    const r = context(ws, "x");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.lines).toEqual([
      { seq: 0, id: "x-0", type: "user_message", item: userText("u") },
      { seq: 5, id: "x-5", type: "subagent_event", item: userText("Subagent a () : ok") },
      { seq: 7, id: "x-7", type: "branch_summary", item: userText(GOLDEN_TEXT) },
      { seq: 8, id: "x-8", type: "assistant_message", item: { type: "message", role: "assistant", content: [{ type: "output_text", text: "done" }] } },
    ]);
    // One provider input item a line, in this key order: `jq -s 'map(.item)'` is Pixir's `input`.
    expect(Object.keys(r.lines[0])).toEqual(["seq", "id", "type", "item"]);
  });

  it("closes open calls with synthetic outputs; drops what the model never sees", () => {
    const ws = workspace({
      s: [
        user("go"),
        call("c2"),
        call("c1"),
        ev("permission_decision", { call_id: "c1", decision: "allow" }),
        ev("subagent_event", { event: "finished", subagent_id: "hidden" }),
        ev("reasoning", { item: { type: "reasoning" }, model: "m" }),
        toolResult("c1"),
        ev("skill_activation", { name: "lint", content: "Use <lint>.", source: "repo", path: "p", content_hash: "h" }),
        ev("assistant_message", { text: "partial false", metadata: { partial: false } }),
        ev("assistant_message", { metadata: {} }),
      ],
    });
    const r = context(ws, "s");
    expect(r.code).toBe(0);
    const orphan = (id: string) =>
      `{"error":{"details":{"call_id":"${id}","tool":"read"},"kind":"orphan_tool_call","message":"Pixir replay found a tool_call without a matching tool_result"},"ok":false}`;
    expect(r.lines.map((l) => [l.seq, l.type, l.item.type ?? l.item.role, textOf(l) ?? l.item.arguments])).toEqual([
      [0, "user_message", "user", "go"],
      [1, "tool_call", "function_call", '{"path":"a.txt"}'],
      [2, "tool_call", "function_call", '{"path":"a.txt"}'],
      // reasoning closes both calls, in call-id order; the late result of c1 is dropped.
      [2, "tool_call", "function_call_output", orphan("c1")],
      [1, "tool_call", "function_call_output", orphan("c2")],
      [7, "skill_activation", "user", '<skill name="lint" source="repo" path="p" content_sha256="h">\nUse <lint>.\n</skill>'],
      [8, "assistant_message", "message", "partial false"],
    ]);
  });
});

describe("checkpoints in the fold (§1.1)", () => {
  it("the worked example (§1.7): the checkpoint replaces seq 0..1", () => {
    const ws = workspace({ c: [user("old"), assistant("older"), checkpoint(0, 1), user("recent")] });
    const r = context(ws, "c");
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      {
        seq: 2,
        id: "c-2",
        type: "history_compaction",
        item: userText(
          [
            "Compressed session memory",
            "Range: seq 0..1 (2 events)",
            "Strategy: deterministic_operational_summary_v1",
            "",
            "Summary:",
            "earlier work",
            "",
            "Files touched:",
            "- lib/a.ts",
            "",
            "Open tasks:",
            "- user: old",
            "",
            "Limitations:",
            "- kept",
          ].join("\n"),
        ),
      },
      { seq: 3, id: "c-3", type: "user_message", item: userText("recent") },
    ]);
  });

  it("the checkpoint with the greatest seq wins, well formed or not; a malformed one hides every Event with a seq", () => {
    const ws = workspace({
      c: [user("zero"), checkpoint(0, 0, "first"), user("two"), checkpoint(0, "not an integer", "broken"), user("four"), { ...user("no seq"), seq: null }],
    });
    expect(context(ws, "c").lines.map((l) => [l.seq, l.type])).toEqual([
      [3, "history_compaction"],
      [null, "user_message"],
    ]);
    const fine = workspace({ c: [user("zero"), checkpoint(0, 0, "first"), user("two"), checkpoint(0, 2, "second"), user("four")] });
    const r = context(fine, "c");
    expect(r.lines.map((l) => [l.seq, l.type])).toEqual([
      [3, "history_compaction"],
      [4, "user_message"],
    ]);
    expect(textOf(r.lines[0])).toContain("\nsecond\n");
  });

  it("a null-seq checkpoint counts as seq −1; of two, the first in History order wins", () => {
    const ws = workspace({
      c: [user("zero"), user("one"), { ...checkpoint(0, 0, "A"), seq: null }, { ...checkpoint(0, 1, "B"), seq: null }, { ...user("late"), seq: null }],
    });
    const r = context(ws, "c");
    expect(r.lines.map((l) => [l.seq, l.type])).toEqual([
      [null, "history_compaction"],
      [1, "user_message"],
      [null, "user_message"],
    ]);
    expect(textOf(r.lines[0])).toContain("\nA\n");
  });

  it("renders null and missing checkpoint fields as empty strings and empty lists as '- none'", () => {
    const ws = workspace({ c: [user("a"), ev("history_compaction", { range: { to_seq: 0 } }), user("b")] });
    const r = context(ws, "c");
    expect(textOf(r.lines[0])).toBe(
      ["Compressed session memory", "Range: seq ..0 ( events)", "Strategy: ", "", "Summary:", "", "", "Files touched:", "- none", "", "Open tasks:", "- none", "", "Limitations:", "- none"].join("\n"),
    );
  });
});

describe("--format text (§1.6)", () => {
  it("prints a header line, the body and an empty line per item", () => {
    const ws = workspace({ t: [user("hello\nworld"), call("c1"), toolResult("c1"), ev("user_message", { text: 7 }), ev("provider_usage"), ev("branch_summary", GOLDEN_SUMMARY)] });
    const r = context(ws, "t", "--format", "text");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      "[0] user user_message\nhello\nworld\n\n" +
        '[1] function_call tool_call\n{"arguments":"{\\"path\\":\\"a.txt\\"}","call_id":"c1","name":"read","type":"function_call"}\n\n' +
        "[2] function_call_output tool_result\nx\n\n" +
        '[3] user user_message\n{"text":7,"type":"input_text"}\n\n' +
        `[5] user branch_summary\n${GOLDEN_TEXT}\n\n`,
    );
  });

  it("--format=ndjson is the default; another format is a usage error that is not echoed", () => {
    const ws = workspace({ t: [user("x")] });
    expect(context(ws, "t", "--format=ndjson").stdout).toBe(context(ws, "t").stdout);
    const bad = context(ws, "t", "--format", "yaml-please", "--json");
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe("");
    expect(bad.errJson.error.kind).toBe("usage");
    expect(bad.stderr).not.toContain("yaml-please");
  });
});

describe("values as Jason reads them (§6)", () => {
  it("keeps floats, big integers and text that is not a string as Pixir would send them", () => {
    const ws = workspace();
    writeRaw(
      ws,
      "b",
      '{"id":"b-0","session_id":"b","seq":0,"ts":"2026-06-30T00:00:00Z","type":"tool_call","data":{"call_id":"c1","name":"n","args":{"z":1.50,"a":12345678901234567890,"e":1e3}}}\n' +
        '{"id":"b-1","session_id":"b","seq":1,"ts":"2026-06-30T00:00:00Z","type":"tool_result","data":{"call_id":"c1","n":1.0,"big":-98765432109876543210}}\n' +
        '{"id":"b-2","session_id":"b","seq":2,"ts":"2026-06-30T00:00:00Z","type":"user_message","data":{"text":2.0}}\n',
    );
    const r = context(ws, "b");
    expect(r.stdout.split("\n")).toEqual([
      '{"seq":0,"id":"b-0","type":"tool_call","item":{"arguments":"{\\"a\\":12345678901234567890,\\"e\\":1.0e3,\\"z\\":1.5}","call_id":"c1","name":"n","type":"function_call"}}',
      '{"seq":1,"id":"b-1","type":"tool_result","item":{"call_id":"c1","output":"{\\"big\\":-98765432109876543210,\\"n\\":1.0}","type":"function_call_output"}}',
      '{"seq":2,"id":"b-2","type":"user_message","item":{"content":[{"text":2.0,"type":"input_text"}],"role":"user"}}',
      "",
    ]);
  });
});

describe("Session resources (§1.5, §7 D5)", () => {
  const PNG = Buffer.from("png bytes");
  const SHA = createHash("sha256").update(PNG).digest("hex");
  const image = (extra: Record<string, unknown> = {}) => ({ kind: "image", resource_id: "r1", content_sha256: SHA, extension: "png", mime_type: "image/png", name: "a.png", size_bytes: 9, ...extra });
  const payload = (ws: string, session: string, bytes = PNG) => {
    const dir = path.join(ws, ".pixir", "sessions", session, "resources", "r1");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, `${SHA}.png`), bytes);
  };
  const parts = (ws: string, id: string) => context(ws, id).lines.at(-1).item.content;
  const errorOf = (part: any) => JSON.parse(part.text.replace(/^Image resource [^ ]* could not be rehydrated: /, "")).error.error;

  it("the current turn carries its images as data URLs; replayed turns only describe them", () => {
    const ws = workspace({ s: [ev("user_message", { text: "old", resources: [image()] }), ev("user_message", { text: "now", resources: [image({ detail: "high" }), { kind: "file", resource_id: "f1", name: "n.txt" }] })] });
    payload(ws, "s");
    const r = context(ws, "s");
    expect(textOf(r.lines[0])).toMatch(/^old\n\nAttached resources:\nImage resource r1: name=a\.png mime=image\/png size_bytes=9 sha256=/);
    expect(r.lines[0].item.content).toHaveLength(1);
    expect(r.lines[1].item.content).toEqual([
      { type: "input_text", text: "now\n\nAttached resources:\nFile resource f1: name=n.txt mime=unknown size_bytes=unknown sha256=unknown. Pixir stored the original bytes locally, but this resource kind is not yet projected to the Provider by default." },
      { type: "input_image", image_url: `data:image/png;base64,${PNG.toString("base64")}`, detail: "high" },
    ]);
  });

  it("a share_v1 child finds the payload along its share lineage", () => {
    const ws = workspace({ p: [ev("user_message", { text: "see", resources: [image()] })] });
    payload(ws, "p");
    expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "k"], { cwd: ws }).code).toBe(0);
    expect(parts(ws, "k")[1]).toMatchObject({ type: "input_image", detail: "auto" });
  });

  it("checks the descriptor before it names a path, and refuses symlinks and checksum mismatches", () => {
    const bad = workspace({ s: [ev("user_message", { text: "x", resources: [image({ resource_id: "../../etc" })] })] });
    expect(errorOf(parts(bad, "s")[1])).toEqual({ kind: "invalid_args", message: "resource descriptor is invalid", details: { key: "resource_id" } });
    const missing = workspace({ s: [ev("user_message", { text: "x", resources: [image({ extension: "" })] })] });
    expect(errorOf(parts(missing, "s")[1])).toEqual({ kind: "invalid_args", message: "resource descriptor is missing extension", details: { key: "extension" } });

    const linked = workspace({ s: [ev("user_message", { text: "x", resources: [image()] })] });
    const outside = tempDir();
    writeFileSync(path.join(outside, `${SHA}.png`), PNG);
    mkdirSync(path.join(linked, ".pixir", "sessions", "s", "resources"), { recursive: true });
    symlinkSync(outside, path.join(linked, ".pixir", "sessions", "s", "resources", "r1"));
    expect(errorOf(parts(linked, "s")[1])).toEqual({ kind: "unsafe_state_path", message: "Pixir state path is unsafe", details: { resource_id: "r1" } });

    const changed = workspace({ s: [ev("user_message", { text: "x", resources: [image()] })] });
    payload(changed, "s", Buffer.from("other bytes"));
    expect(errorOf(parts(changed, "s")[1])).toEqual({
      kind: "resource_missing",
      message: "session resource checksum mismatch",
      details: { actual_sha256: createHash("sha256").update("other bytes").digest("hex"), expected_sha256: SHA, resource_id: "r1" },
    });
  });

  it("a resource_view result rehydrates its image only in the active turn", () => {
    const view = ev("tool_result", { call_id: "v1", ok: true, output: "ok", resource_view: { descriptor: image(), resource_id: "r1" } });
    const early = workspace({ s: [call("v1", "resource_view"), view, user("after")] });
    payload(early, "s");
    expect(context(early, "s").lines.map((l) => l.item.type ?? l.item.role)).toEqual(["function_call", "function_call_output", "user"]);
    const active = workspace({ s: [user("look"), call("v1", "resource_view"), view] });
    payload(active, "s");
    const r = context(active, "s");
    expect(r.lines.at(-1)).toMatchObject({ seq: 2, type: "tool_result", item: { role: "user", content: [{ type: "input_text" }, { type: "input_image" }] } });
    expect(textOf(r.lines.at(-1))).toMatch(/^Resource view requested:\nImage resource r1: /);
  });
});

describe("forks (fork.md §2, §6)", () => {
  it("a share_v1 child shows the parent's raw prefix, not the parent's checkpoint", () => {
    const ws = workspace({ p: [user("m0"), assistant("m1"), user("m2"), assistant("m3"), user("m4")] });
    expect(run("pixir", ["compact", "p", "--tail-events", "2"], { cwd: ws }).code).toBe(0);
    expect(context(ws, "p").lines.map((i) => i.type)).toEqual(["history_compaction", "assistant_message", "user_message"]);
    expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "k"], { cwd: ws }).code).toBe(0);
    expect(run("pixir-log", ["append", "k"], { cwd: ws, input: '{"type":"user_message","data":{"text":"own"}}\n' }).code).toBe(0);
    const r = context(ws, "k");
    expect(r.code).toBe(0);
    expect(r.lines.map((i) => [i.seq, textOf(i)])).toEqual([
      [1, "m0"],
      [2, "m1"],
      [3, "m2"],
      [4, "m3"],
      [5, "m4"],
      [6, "own"],
    ]);
  });

  it("reports loader errors as they are: a share child whose parent is gone", () => {
    const ws = workspace({ p: [user("a")] });
    expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "k"], { cwd: ws }).code).toBe(0);
    writeRaw(ws, "p", [user("rewritten")]);
    const r = context(ws, "k", "--json");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.errJson.error.kind).toBe("fork_prefix_mismatch");
  });
});

describe("errors and pipes", () => {
  it("a missing Log is not_found (exit 2) and creates nothing; an empty one prints nothing", () => {
    const ws = workspace();
    const r = context(ws, "never", "--json");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.errJson.error).toMatchObject({ kind: "not_found", details: { session_id: "never", log_path: ".pixir/sessions/never.ndjson" } });
    expect(listTree(ws)).toEqual([]);
    const text = context(ws, "never");
    expect(text.stderr).toBe("error: not_found: session log was not found\nhint: check the session id\nhint: run pixir context from the workspace that owns the session log\n");
    writeRaw(ws, "empty", "");
    expect(context(ws, "empty")).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("an invalid id is invalid_args and never echoed", () => {
    const ws = workspace();
    const r = context(ws, "bad/../id", "--json");
    expect(r.code).toBe(2);
    expect(r.errJson.error.kind).toBe("invalid_args");
    expect(r.stderr).not.toContain("bad/../id");
  });

  it("a corrupt Log prints nothing", () => {
    const ws = workspace();
    writeRaw(ws, "s", `${JSON.stringify({ id: "s-0", session_id: "s", seq: 0, ts: "2026-06-30T00:00:00Z", type: "user_message", data: { text: "a" } })}\n{not json}\n`);
    const r = context(ws, "s");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("error: corrupt_log_line: could not decode a log line (.pixir/sessions/s.ndjson:2: invalid_json)\nhint: run pixir-log check to list every problem in this log\n");
  });

  it("ends quietly with exit 0 when the reader goes away", () => {
    const ws = workspace({ big: Array.from({ length: 30000 }, (_, i) => user(`message ${i} ${"x".repeat(40)}`)) });
    const r = sh("pixir context big | head -1", { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toMatchObject({ seq: 0, item: userText(`message 0 ${"x".repeat(40)}`) });
  });
});
