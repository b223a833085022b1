// archive.md §3: each model call counted exactly once, per agent, from a Log's own Events.
import { describe, expect, it } from "vitest";
import type { PixirEvent } from "../../src/event/envelope.js";
import { callTotal, modelCallsOf } from "../../src/archive/model-calls.js";

let seq = 0;
const ev = (type: PixirEvent["type"], data: Record<string, unknown>): PixirEvent => ({
  id: `e${seq}`,
  session_id: "s1",
  seq: seq++,
  ts: `2026-01-01T00:00:0${seq % 10}.000Z`,
  type,
  data,
});

/** The Event a Claude import makes of one assistant record (claude-interop.md §2.3). */
const claudeRecord = (id: string | null, requestId: string | null, output: number, extra: Record<string, unknown> = {}) =>
  ev("assistant_message", {
    text: "",
    claude: {
      line: seq + 1,
      record: {
        type: "assistant",
        ...(requestId === null ? {} : { requestId }),
        message: {
          ...(id === null ? {} : { id }),
          model: "claude-opus-4-6",
          usage: { input_tokens: 3, output_tokens: output, cache_read_input_tokens: 100, cache_creation_input_tokens: 50 },
        },
        ...extra,
      },
    },
  });

describe("modelCallsOf: Claude", () => {
  it("counts a response split over three records once, with the record of the most output tokens", () => {
    const events = [claudeRecord("msg_1", "req_1", 1), ev("workflow_event", { event: "x" }), claudeRecord("msg_1", "req_1", 40), claudeRecord("msg_1", "req_1", 12)];
    const calls = modelCallsOf(events, "claude");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ seq: events[0]!.seq, input: 3, output: 40, cache_read: 100, cache_write: 50, cache_write_5m: null, reasoning: null });
    expect(callTotal(calls[0]!)).toBe(3 + 40 + 100 + 50);
  });

  it("tells responses apart by message id and request id, and counts a record without an id alone", () => {
    const calls = modelCallsOf([claudeRecord("msg_1", "req_1", 5), claudeRecord("msg_1", "req_2", 6), claudeRecord(null, null, 7), claudeRecord(null, null, 8)], "claude");
    expect(calls.map((c) => c.output)).toEqual([5, 6, 7, 8]);
  });

  it("skips synthetic messages and reads costUSD, the 5m/1h split and a raw_line record", () => {
    const synthetic = ev("assistant_message", { claude: { line: 1, record: { type: "assistant", message: { id: "m", model: "<synthetic>", usage: { output_tokens: 9 } } } } });
    const raw = ev("assistant_message", {
      claude: {
        line: 2,
        raw_line: JSON.stringify({ type: "assistant", requestId: "r", costUSD: 0.25, message: { id: "m2", model: "claude-sonnet-4-5", usage: { input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 30, cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 } } } }),
      },
    });
    const calls = modelCallsOf([synthetic, raw], "claude");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ model: "claude-sonnet-4-5", recorded_cost_usd: 0.25, cache_write: 30, cache_write_5m: 10, cache_write_1h: 20 });
    expect(calls[0]!.dedupe_key).not.toBeNull();
  });

  it("ignores provider_usage Events of a Claude Log (the records are the source)", () => {
    expect(modelCallsOf([ev("provider_usage", { input: 5, output: 5 })], "claude")).toEqual([]);
  });
});

describe("modelCallsOf: Codex, pi, Pixir", () => {
  it("takes a Codex call from last_token_usage, input without the cached part", () => {
    const last = { input_tokens: 1000, cached_input_tokens: 800, output_tokens: 50, reasoning_output_tokens: 20, total_tokens: 1050 };
    const e = ev("provider_usage", { model: "gpt-5.5", input: 1, cache_read: 1, cache_write: 0, output: 1, reasoning: 1, codex: { record: { type: "event_msg", payload: { type: "token_count", info: { last_token_usage: last } } } } });
    const [call] = modelCallsOf([e], "codex");
    expect(call).toMatchObject({ model: "gpt-5.5", input: 200, cache_read: 800, output: 50, reasoning: 20, cache_write: null });
    expect(callTotal(call!)).toBe(1050);
  });

  it("falls back to the Codex delta when the record has no last_token_usage", () => {
    const [call] = modelCallsOf([ev("provider_usage", { model: "gpt-5", input: 7, cache_read: 3, cache_write: 0, output: 2, reasoning: 1, codex: {} })], "codex");
    expect(call).toMatchObject({ input: 7, cache_read: 3, output: 2, reasoning: 1 });
  });

  it("reads pi usage and its recorded cost", () => {
    const e = ev("provider_usage", { model: "claude-sonnet-4-5", input: 30, output: 40, cache_read: 9000, cache_write: 200, total_tokens: 9270, cost: { total: 0.00414 }, pi: { entry_id: "a6d89f85", entry_ts: "2026-01-10T09:02:16.700Z" } });
    expect(modelCallsOf([e], "pi")[0]).toMatchObject({ input: 30, output: 40, cache_read: 9000, cache_write: 200, recorded_cost_usd: 0.00414, dedupe_key: "pi:a6d89f85\u00002026-01-10T09:02:16.700Z" });
  });

  it("leaves a count Pixir did not record null, never 0", () => {
    const [call] = modelCallsOf([ev("provider_usage", { model: "m", input_tokens: 4, output_tokens: 6 }), ev("assistant_message", { text: "x" })], "pixir");
    expect(call).toMatchObject({ input: 4, output: 6, cache_read: null, cache_write: null, reasoning: null, recorded_cost_usd: null });
  });
});
