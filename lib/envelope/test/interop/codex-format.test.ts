// codex-interop.md §1.8, §2.2–§2.4, §3.1, §3.5, §5.3, §5.5: the Codex text rules, the line mapping and its
// rebuild, ids and names, held to the spec's own statements (the end-to-end tests hold them to the fixtures).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PixirEvent } from "../../src/event/envelope.js";
import { codexExportName, codexForkThreadId } from "../../src/interop/codex/export.js";
import { codexBaseId, contentText, dropTurnsCut, isBoundaryItem, isContextual, outputText, restAfterTimestamp, rolloutLine, validTimestamp, withTimestamp } from "../../src/interop/codex/format.js";
import { mapLine, RunningState } from "../../src/interop/codex/line-map.js";
import { rebuildLine } from "../../src/interop/codex/rebuild.js";

const text = (t: string) => [{ type: "input_text", text: t }];

describe("T, OT (§2.4.1, §2.4.5)", () => {
  it("T joins input, output and plain text parts with newlines and skips the rest", () => {
    expect(contentText("s")).toBe("s");
    expect(contentText([{ type: "input_text", text: "a" }, { type: "input_image", image_url: "data:" }, { type: "output_text", text: "b" }, { type: "text", text: "c" }, { type: "text", text: 5 }])).toBe("a\nb\nc");
    expect(contentText(null)).toBe("");
    expect(contentText({ text: "x" })).toBe("");
  });
  it("OT reads strings, lists, objects with text or content, and writes anything else as JSON", () => {
    expect(outputText("o")).toBe("o");
    expect(outputText([{ type: "input_text", text: "a" }, { text: "b" }, { type: "x" }])).toBe("a\nb");
    expect(outputText({ text: "t", content: "c" })).toBe("t");
    expect(outputText({ content: [{ text: "c" }], success: false })).toBe("c");
    expect(outputText(null)).toBe("");
    expect(outputText(undefined)).toBe("");
    expect(outputText(42)).toBe("42");
    expect(outputText({ success: true })).toBe('{"success":true}');
  });
});

describe("contextual content and turn boundaries (§1.8)", () => {
  it("a part wrapped in a marker pair, ignoring ASCII case and surrounding whitespace, is contextual", () => {
    expect(isContextual(text("  <environment_context>\n<cwd>/x</cwd>\n</environment_context>\n"))).toBe(true);
    expect(isContextual(text("# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nbe nice\n</INSTRUCTIONS>"))).toBe(true);
    expect(isContextual(text("# agents.md INSTRUCTIONS for /repo </instructions>"))).toBe(true);
    expect(isContextual([...text("plain"), ...text("<skill>x</skill>")])).toBe(true);
    expect(isContextual(text("<environment_context> but no end"))).toBe(false);
    expect(isContextual([{ type: "output_text", text: "<skill>x</skill>" }])).toBe(false);
    expect(isContextual("<skill>x</skill>")).toBe(false);
  });
  it("lowers only the ends of a text, as lowering the whole of it would decide (generated texts)", () => {
    // The rule as §1.8 words it, on the whole text: the oracle.
    const markers = [["# agents.md instructions for ", "</instructions>"], ["<environment_context>", "</environment_context>"], ["<skill>", "</skill>"]];
    const whole = (t: string): boolean => {
      const head = t.trimStart().replace(/[A-Z]/g, (c) => c.toLowerCase());
      return markers.some(([o, c]) => head.startsWith(o!) && head.trimEnd().endsWith(c!));
    };
    const piece = fc.constantFrom("# AGENTS.md instructions for ", "</INSTRUCTIONS>", "<Skill>", "</skill>", "<environment_context>", "</Environment_Context>", " ", "\n", "\u00a0", "x", "İ", "K");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }).map((p) => p.join("")), (t) => {
        expect(isContextual(text(t))).toBe(whole(t));
      }),
      { numRuns: 1000 },
    );
  });
  it("a boundary is a non-contextual user message or an agent_message", () => {
    expect(isBoundaryItem({ type: "message", role: "user", content: text("hi") })).toBe(true);
    expect(isBoundaryItem({ type: "message", role: "user", content: text("<turn_aborted>x</turn_aborted>") })).toBe(false);
    expect(isBoundaryItem({ type: "message", role: "developer", content: text("hi") })).toBe(false);
    expect(isBoundaryItem({ type: "agent_message", content: text("hi") })).toBe(true);
  });
  it("drop_turns keeps the items before the k-th boundary from the end, or the first, and ignores other k", () => {
    expect(dropTurnsCut([1, 4, 6], 1)).toBe(6);
    expect(dropTurnsCut([1, 4, 6], 2)).toBe(4);
    expect(dropTurnsCut([1, 4, 6], 3)).toBe(1);
    expect(dropTurnsCut([1, 4, 6], 9)).toBe(1);
    expect(dropTurnsCut([1, 4, 6], 0)).toBeNull();
    expect(dropTurnsCut([1, 4, 6], 1.5)).toBeNull();
    expect(dropTurnsCut([1, 4, 6], "1")).toBeNull();
    expect(dropTurnsCut([], 1)).toBeNull();
  });
});

describe("timestamps and copied lines (§2.6, §3.5)", () => {
  it("takes only UTC timestamps Date.parse accepts", () => {
    expect(validTimestamp("2026-05-11T08:26:55.042Z")).toBe("2026-05-11T08:26:55.042Z");
    expect(validTimestamp("2026-05-11T08:26:55Z")).toBe("2026-05-11T08:26:55Z");
    expect(validTimestamp("[trimmed for fixture]")).toBeNull();
    expect(validTimestamp("2026-13-45T08:26:55Z")).toBeNull();
    expect(validTimestamp("2026-05-11T08:26:55+03:00")).toBeNull();
  });
  it("rest() is what follows the leading timestamp string, escapes included; a line without one has none", () => {
    const line = '{"timestamp":"a\\"b","type":"x","payload":{}}';
    expect(restAfterTimestamp(line)).toEqual({ timestamp: 'a"b', rest: ',"type":"x","payload":{}}' });
    expect(withTimestamp("t", ',"type":"x"}')).toBe('{"timestamp":"t","type":"x"}');
    expect(restAfterTimestamp('{"type":"x","timestamp":"t"}')).toBeNull();
    expect(restAfterTimestamp('{"timestamp":5}')).toBeNull();
    expect(restAfterTimestamp('{"timestamp":"unterminated')).toBeNull();
  });
});

describe("session ids, thread ids and names (§3.1, §5.3, §5.5)", () => {
  it("base(t) is t when valid and at most 200 bytes, else a hash that never echoes t", () => {
    expect(codexBaseId("019e1625-789d-76c0-80ab-3724b5ddb799")).toBe("019e1625-789d-76c0-80ab-3724b5ddb799");
    expect(codexBaseId("a/b")).toMatch(/^codex-[0-9a-f]{32}$/);
    expect(codexBaseId("x".repeat(201))).toMatch(/^codex-[0-9a-f]{32}$/);
  });
  it("a fork's thread id is a v7-layout UUID from the time and a hash of the Log and anchor", () => {
    const id = codexForkThreadId("c1", "01ANCHOR", "2026-03-01T10:00:05.000Z");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(id.replace(/-/g, "").slice(0, 12)).toBe(Date.parse("2026-03-01T10:00:05.000Z").toString(16).padStart(12, "0"));
    expect(codexForkThreadId("c1", "01ANCHOR", "2026-03-01T10:00:05.000Z")).toBe(id);
    expect(codexForkThreadId("c2", "01ANCHOR", "2026-03-01T10:00:05.000Z")).not.toBe(id);
    expect(codexForkThreadId("c1", "01ANCHOR", "not a time").slice(0, 13)).toBe("00000000-0000");
  });
  it("keeps a stored rollout name of the thread, else names the file by UTC time", () => {
    const t = "019e1625-789d-76c0-80ab-3724b5ddb799";
    const line1 = { timestamp: "2026-05-11T08:26:55.100Z", payload: { timestamp: "2026-05-11T08:26:55.042Z" } };
    expect(codexExportName(t, `rollout-2026-05-11T11-26-55-${t}.jsonl`, line1)).toBe(`2026/05/11/rollout-2026-05-11T11-26-55-${t}.jsonl`);
    expect(codexExportName(t, "session-01.jsonl", line1)).toBe(`2026/05/11/rollout-2026-05-11T08-26-55-${t}.jsonl`);
    expect(codexExportName(t, `rollout-2026-05-11T11-26-55-other.jsonl`, line1)).toBe(`2026/05/11/rollout-2026-05-11T08-26-55-${t}.jsonl`);
    expect(codexExportName("a/b", "rollout-2026-05-11T11-26-55-a/b.jsonl", { payload: {} })).toBe(`1970/01/01/rollout-1970-01-01T00-00-00-${codexBaseId("a/b")}.jsonl`);
  });
});

/** Map one line (n ≥ 2) and rebuild it from the Events, as an import and an export do. */
function roundTrip(text: string, state = new RunningState("openai")): { events: Array<Pick<PixirEvent, "type" | "data">>; back: string | null } {
  const drafts = mapLine("T", rolloutLine(2, text, JSON.parse(text)), state);
  const events = drafts.map((d) => ({ type: d.type, data: d.data }));
  return { events, back: rebuildLine(events) };
}

describe("a line's Events and its rebuild (§2.2–§2.4)", () => {
  it("stores a reasoning item once and a replacement history by count, and gives both back", () => {
    const reasoning = JSON.stringify({ timestamp: "t", type: "response_item", payload: { type: "reasoning", summary: [{ type: "summary_text", text: "s" }], content: null, encrypted_content: "E" } });
    const r = roundTrip(reasoning);
    expect(r.events[0]!.data.codex).toMatchObject({ record: { payload: "$item" } });
    expect(r.events[0]!.data).toMatchObject({ dialect: "codex", kind: "reasoning", text: "s" });
    expect(r.back).toBe(reasoning);
    const compacted = JSON.stringify({
      timestamp: "t",
      type: "compacted",
      payload: { message: "", replacement_history: [{ type: "message", role: "user", content: text("u") }, { type: "compaction", encrypted_content: "E" }, "odd"] },
    });
    const c = roundTrip(compacted);
    expect(c.events.map((e) => [e.type, e.data.codex])).toEqual([
      ["history_compaction", expect.objectContaining({ part: "compacted", record: expect.objectContaining({ payload: { message: "", replacement_history: 3 } }) })],
      ["user_message", { thread: "T", line: 2, part: "rh0", item: { type: "message", role: "user", content: text("u") } }],
      ["reasoning", { thread: "T", line: 2, part: "rh1" }],
      ["workflow_event", { thread: "T", line: 2, part: "rh2", item: "odd" }],
    ]);
    expect(c.back).toBe(compacted);
  });
  it("a replacement_history that is not an array is kept as it is", () => {
    for (const rh of [5, "x", null]) {
      const line = JSON.stringify({ timestamp: "t", type: "compacted", payload: { message: "m", replacement_history: rh } });
      const r = roundTrip(line);
      expect(r.events).toHaveLength(1);
      expect(r.events[0]!.data.replacement_item_count).toBeNull();
      expect(r.back).toBe(line);
    }
  });
  it("keeps raw only when JSON.stringify does not give the line back", () => {
    const float = '{"timestamp":"t","type":"event_msg","payload":{"type":"x","used_percent":15.0}}';
    expect(roundTrip(float).events[0]!.data.codex).toMatchObject({ raw: float });
    expect(roundTrip(float).back).toBe(float);
    const crlf = '{"timestamp":"t","type":"event_msg","payload":{"type":"x"}}\r';
    expect(roundTrip(crlf).back).toBe(crlf);
    const plain = '{"timestamp":"t","type":"event_msg","payload":{"type":"x"}}';
    expect(roundTrip(plain).events[0]!.data.codex).not.toHaveProperty("raw");
  });
  it("usage is the difference of the totals; a repeat is a record; a drop is a reset (§2.4.7)", () => {
    const state = new RunningState("openai");
    const tc = (total: number, cached = 0) =>
      JSON.stringify({ timestamp: "t", type: "event_msg", payload: { type: "token_count", info: { total_token_usage: { input_tokens: total - 1, cached_input_tokens: cached, output_tokens: 1, total_tokens: total } } } });
    expect(roundTrip(JSON.stringify({ timestamp: "t", type: "turn_context", payload: { model: "m1", turn_id: "t1" } }), state).events[0]!.type).toBe("workflow_event");
    expect(roundTrip(tc(10, 4), state).events[0]!.data).toMatchObject({ provider: "openai", model: "m1", turn_id: "t1", input: 5, cache_read: 4, output: 1, total_tokens: 10 });
    expect(roundTrip(tc(10, 4), state).events[0]!.data).toMatchObject({ event: "codex_record", item_type: "token_count" });
    expect(roundTrip(tc(25, 4), state).events[0]!.data).toMatchObject({ input: 15, cache_read: 0, total_tokens: 15 });
    expect(roundTrip(tc(7), state).events[0]!.data).toMatchObject({ input: 6, total_tokens: 7, reset: true });
  });
  it("calls carry their arguments and outputs the name of the latest call with their id (§2.4.5)", () => {
    const state = new RunningState(null);
    const call = roundTrip(JSON.stringify({ timestamp: "t", type: "response_item", payload: { type: "function_call", name: "exec", arguments: "[1]", call_id: "c" } }), state);
    expect(call.events[0]!.data).toMatchObject({ call_id: "c", name: "exec", args: {}, args_invalid: true, kind: "function" });
    const shell = roundTrip(JSON.stringify({ timestamp: "t", type: "response_item", payload: { type: "local_shell_call", id: "s1", status: "x", action: { type: "exec" } } }), state);
    expect(shell.events[0]!.data).toMatchObject({ call_id: "s1", name: "local_shell", args: { type: "exec" }, kind: "local_shell" });
    const out = roundTrip(JSON.stringify({ timestamp: "t", type: "response_item", payload: { type: "function_call_output", call_id: "c", output: { content: "done", success: false } } }), state);
    expect(out.events[0]!.data).toMatchObject({ call_id: "c", ok: false, output: "done", tool_name: "exec", kind: "function" });
    const search = roundTrip(JSON.stringify({ timestamp: "t", type: "response_item", payload: { type: "tool_search_output", call_id: "z", tools: [{ n: 1 }] } }), state);
    expect(search.events[0]!.data).toEqual(expect.objectContaining({ output: '[{"n":1}]', kind: "tool_search" }));
    expect(search.events[0]!.data).not.toHaveProperty("tool_name");
  });
});
