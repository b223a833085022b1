// The Events of each kind of record (claude-interop.md §2.1–§2.4, §3.5), on a small transcript written for
// the purpose: what every mapped field holds, the usage once per API response, lone surrogates, a line
// JSON.stringify would not give back, timestamps that are missing, and the ids, recomputed here with the
// derivedUlid of envelope-and-log.md §4 (test/support/fork.ts).
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { run, tempDir } from "../support/cli.js";
import { derivedUlid } from "../support/fork.js";
import { storedEvents } from "../support/claude.js";

const SID = "33333333-3333-4333-8333-333333333333";
const base = { isSidechain: false, userType: "external", cwd: "/p", sessionId: SID, version: "2.1.0" };
const t = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
const usage = { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 4 };
const lines: string[] = [
  // 1: metadata without a timestamp: the carrier's ts (the first timestamp of the file's lines).
  JSON.stringify({ type: "summary", summary: "a title", leafUuid: "elsewhere" }),
  // 2: a user prompt with text, an image, a tool_result for no known call, and text again.
  JSON.stringify({ parentUuid: null, ...base, type: "user", message: { role: "user", content: [{ type: "text", text: "look" }, { type: "image", source: {} }, { type: "text", text: "at this" }, { type: "tool_result", tool_use_id: "toolu_x", content: [{ type: "text", text: "a" }, { type: "text", text: "b" }], is_error: true }, { type: "text", text: "after" }] }, uuid: "u1", timestamp: t(1), isMeta: true }),
  // 3–5: one API response in three records (thinking, tool_use, server_tool_use), sharing message.id and requestId.
  JSON.stringify({ parentUuid: "u1", ...base, type: "assistant", requestId: "req_1", message: { id: "msg_1", model: "claude-x", content: [{ type: "thinking", thinking: "hmm", signature: "s" }], stop_reason: null, usage }, uuid: "a1", timestamp: t(2) }),
  JSON.stringify({ parentUuid: "a1", ...base, type: "assistant", requestId: "req_1", message: { id: "msg_1", model: "claude-x", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } }], stop_reason: "tool_use", usage }, uuid: "a2", timestamp: t(3) }),
  JSON.stringify({ parentUuid: "a2", ...base, type: "assistant", requestId: "req_1", message: { id: "msg_1", model: "claude-x", content: [{ type: "server_tool_use", id: "srv_1", name: "web_search", input: "not an object" }, { type: "web_search_tool_result", tool_use_id: "srv_1" }, { type: "mystery" }], stop_reason: null, usage }, uuid: "a3", timestamp: "yesterday" }),
  // 6: the result for toolu_1 (its tool_name from line 4).
  JSON.stringify({ parentUuid: "a2", ...base, type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "files" }] }, uuid: "r1", timestamp: t(4), toolUseResult: { stdout: "files" } }),
  // 7: a system record with a subtype; 8: progress (data.type).
  JSON.stringify({ parentUuid: "r1", ...base, type: "system", subtype: "stop_hook_summary", uuid: "y1", timestamp: t(5) }),
  JSON.stringify({ parentUuid: "y1", ...base, type: "progress", data: { type: "hook_progress" }, uuid: "p1", timestamp: t(6) }),
  // 9: an API error answer without usage, content a string; synthetic model.
  JSON.stringify({ parentUuid: "p1", ...base, type: "assistant", isApiErrorMessage: true, message: { id: "msg_2", model: "<synthetic>", content: "API Error", stop_reason: "stop_sequence", usage }, uuid: "a4", timestamp: t(7) }),
];
// 10: a line JSON.stringify would not give back (spaces), with a lone surrogate escape in its text.
lines.push(`{"parentUuid":"a4", "isSidechain":false,"userType":"external","cwd":"/p","sessionId":"${SID}","version":"2.1.0","type":"user","message":{"role":"user","content":"bad \\ud800 half"},"uuid":"u2","timestamp":"${t(8)}"}`);
// 11: a later record repeating the key of lines 3–5 gives no second usage; 12: no requestId, no usage repeated.
lines.push(JSON.stringify({ parentUuid: "u2", ...base, type: "assistant", requestId: "req_1", message: { id: "msg_1", model: "claude-x", content: [{ type: "text", text: "again" }], stop_reason: "end_turn", usage }, uuid: "a5", timestamp: t(9) }));
lines.push(JSON.stringify({ parentUuid: "a5", ...base, type: "assistant", message: { id: "msg_3", model: "claude-x", content: [], usage: { input_tokens: "x" } }, uuid: "a6", timestamp: t(10) }));
const FILE = `${lines.join("\n")}\n`;

let ws = "";
let events: any[] = [];
const of = (line: number) => events.filter((e) => e.data.claude?.line === line);
const strip = (e: any) => {
  const { claude: _c, ...data } = e.data;
  return { type: e.type, data };
};

beforeAll(() => {
  const root = tempDir("pixir-claude-map-");
  mkdirSync(path.join(root, "-p"), { recursive: true });
  writeFileSync(path.join(root, "-p", `${SID}.jsonl`), FILE);
  ws = tempDir();
  const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
  expect(res.code, res.stdout + res.stderr).toBe(0);
  events = storedEvents(ws, SID);
});

describe("§2.1 the Events of each record", () => {
  it("a user record: text runs joined, image count, meta, a tool_result with output from its text blocks", () => {
    expect(of(2).map(strip)).toEqual([
      { type: "user_message", data: { text: "look\nat this", images: 1, meta: true } },
      { type: "tool_result", data: { call_id: "toolu_x", ok: false, output: "a\nb" } },
      { type: "user_message", data: { text: "after", meta: true } },
    ]);
    expect(of(2).map((e) => e.data.claude.part)).toEqual(["b0", "b3", "b4"]);
    expect(of(6).map(strip)).toEqual([{ type: "tool_result", data: { call_id: "toolu_1", tool_name: "Bash", ok: true, output: "files" } }]);
  });

  it("assistant records: one Event per block, server calls and results, other blocks, then the usage once per response", () => {
    const common = { message_id: "msg_1", model: "claude-x" };
    expect(of(3).map(strip)).toEqual([
      { type: "reasoning", data: { ...common, item: { type: "thinking", thinking: "hmm", signature: "s" }, dialect: "claude" } },
      { type: "provider_usage", data: { provider: "anthropic", model: "claude-x", message_id: "msg_1", request_id: "req_1", input: 1, output: 2, cache_read: 3, cache_write: 4, total_tokens: 10 } },
    ]);
    expect(of(4).map(strip)).toEqual([{ type: "tool_call", data: { ...common, call_id: "toolu_1", name: "Bash", args: { command: "ls" } } }]);
    expect(of(5).map(strip)).toEqual([
      { type: "tool_call", data: { ...common, call_id: "srv_1", name: "web_search", args: {}, server: true } },
      { type: "tool_result", data: { ...common, call_id: "srv_1", ok: true, output: "", server: true } },
      { type: "assistant_message", data: { ...common, text: "", block_type: "mystery" } },
    ]);
    expect(of(9).map(strip)).toEqual([{ type: "assistant_message", data: { message_id: "msg_2", model: "<synthetic>", text: "API Error", stop_reason: "stop_sequence", api_error: true } }]);
    expect(of(11).map((e) => e.type)).toEqual(["assistant_message"]);
    expect(of(12).map(strip)).toEqual([
      { type: "assistant_message", data: { message_id: "msg_3", model: "claude-x", text: "" } },
      { type: "provider_usage", data: { provider: "anthropic", model: "claude-x", message_id: "msg_3", request_id: null, input: 0, output: 0, cache_read: 0, cache_write: 0, total_tokens: 0 } },
    ]);
    expect(of(12)[0].data.claude.part).toBe("msg");
  });

  it("other records are workflow_events with record_type and the first string subtype", () => {
    expect(of(1).map(strip)).toEqual([{ type: "workflow_event", data: { event: "claude_record", record_type: "summary", subtype: null } }]);
    expect(of(7).map(strip)).toEqual([{ type: "workflow_event", data: { event: "claude_record", record_type: "system", subtype: "stop_hook_summary" } }]);
    expect(of(8).map(strip)).toEqual([{ type: "workflow_event", data: { event: "claude_record", record_type: "progress", subtype: "hook_progress" } }]);
  });
});

describe("§2.3 reproduction", () => {
  it("a canonical line is its record; another line is raw_line, and a lone surrogate is U+FFFD in mapped text", () => {
    expect(of(2)[0].data.claude.record).toEqual(JSON.parse(lines[1]!));
    expect("record" in of(2)[1].data.claude).toBe(false);
    expect(of(10)[0].data).toMatchObject({ text: "bad \ufffd half", claude: { raw_line: lines[9], path: true } });
    expect("record" in of(10)[0].data.claude).toBe(false);
    const exp = run("pixir", ["export", "claude", SID], { cwd: ws });
    expect(exp.stdout).toBe(FILE);
  });
});

describe("§2.4 ids and timestamps, §3.5 carrier and checkpoint", () => {
  it("each Event's id is derivedUlid(claude:<source>:<uuid or L<line>>#<part>, ts); a missing or bad timestamp takes the line before's", () => {
    for (const e of events) {
      const c = e.data.claude;
      if (typeof c?.line !== "number") continue;
      const key = c.uuid ?? `L${c.line}`;
      expect(e.id, `line ${c.line} ${c.part}`).toBe(derivedUlid(`claude:${SID}:${key}#${c.part}`, e.ts));
    }
    expect(of(1)[0].ts).toBe(t(1));
    expect(of(5)[0].ts).toBe(t(3));
  });

  it("the carrier opens the Log; the checkpoint closes the batch with the imported prefix's size, lines, records and SHA-256", () => {
    const carrier = events[0];
    expect(carrier).toMatchObject({ seq: 0, ts: t(1), type: "workflow_event", id: derivedUlid(`claude:${SID}:transcript`, t(1)) });
    expect(carrier.data).toEqual({ event: "claude_transcript", claude: { source: SID, kind: "session", session_id: SID, agent_id: null, file: `-p/${SID}.jsonl`, project_dir: "-p", layout: "session", forked_from: null } });
    const checkpoint = events.at(-1);
    expect(checkpoint).toMatchObject({ type: "workflow_event", ts: events.at(-2).ts, id: derivedUlid(`claude:${SID}:import:1`, events.at(-2).ts) });
    expect(checkpoint.data).toEqual({
      event: "claude_import",
      claude: { source: SID, bytes: Buffer.byteLength(FILE), lines: 12, records: 12, sha256: createHash("sha256").update(FILE).digest("hex"), leaf_uuid: "a6", leaf_session_id: SID },
    });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  });
});
