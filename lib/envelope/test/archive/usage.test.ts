// archive.md §3: grouping, counting once across Logs, prices (table, --prices, unpriced models), modes.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { ModelCall } from "../../src/archive/model-calls.js";
import { callCost, computedCost, loadPrices, priceOf } from "../../src/archive/prices.js";
import { PRICE_TABLE } from "../../src/archive/price-table.js";
import { CallTable } from "../../src/archive/usage-columns.js";
import { countedCall, isoWeek, parseDay, usageReport as reportOf, type CountedCall, type UsageQuery, type UsageSession } from "../../src/archive/usage.js";
import { usageText } from "../../src/archive/usage-text.js";

const call = (session_id: string, over: Partial<ModelCall> = {}): CountedCall => countedCall({
  session_id,
  seq: 1,
  ts: "2026-03-02T12:00:00.000Z",
  model: "claude-sonnet-4-5-20250929",
  input: 10,
  output: 20,
  cache_read: 1000,
  cache_write: 100,
  cache_write_5m: null,
  cache_write_1h: null,
  reasoning: null,
  recorded_cost_usd: null,
  dedupe_key: null,
  ...over,
});

/** The report of calls held in a CallTable, as the Workspace's are. */
function usageReport(sessions: UsageSession[], calls: ReadonlyMap<string, CountedCall[]>, q: UsageQuery) {
  const table = new CallTable();
  for (const [id, held] of calls) table.add(id, { size: 0, mtime_ms: 0, agent: "claude" }, held);
  return reportOf(sessions, table, q);
}

const session = (session_id: string, over: Partial<UsageSession> = {}): UsageSession => ({ session_id, agent: "claude", kind: "root", project: "demo", parent: null, started: "2026-03-01T00:00:00.000Z", ...over });
const query = (over: Partial<UsageQuery> = {}): UsageQuery => ({ by: "session", since: null, until: null, session: null, agent: null, project: null, mode: "auto", prices: loadPrices(null), ...over });

describe("usageReport", () => {
  const sessions = [
    session("root"),
    session("root.fork", { kind: "fork", parent: "root", started: "2026-03-02T00:00:00.000Z" }),
    session("root.agent-1", { kind: "subagent", parent: "root", started: "2026-03-01T01:00:00.000Z" }),
    session("root.abandoned", { kind: "branch", parent: "root", started: "2026-03-03T00:00:00.000Z" }),
    session("other", { agent: "codex", project: "elsewhere" }),
  ];
  const calls = new Map<string, CountedCall[]>([
    ["root", [call("root"), call("root", { seq: 2, dedupe_key: "m1", output: 5 })]],
    // A copy of root's response m1 (a file imported as a session of its own): counted once, at root, with the most output.
    ["root.fork", [call("root.fork", { seq: 9, ts: "2026-03-02T12:00:00.000Z", dedupe_key: "m1", output: 50 }), call("root.fork", { ts: "2026-03-04T00:00:00.000Z" })]],
    ["root.agent-1", [call("root.agent-1", { model: "claude-haiku-4-5" })]],
    ["other", [call("other", { model: "gpt-5.3-codex", cache_write: null, reasoning: 7 })]],
  ]);

  it("counts a response held by two Logs once, at the Log that holds it first", () => {
    const r = usageReport(sessions, calls, query());
    const row = (k: string) => r.rows.find((x) => x.key === k)!;
    expect(row("root").calls).toBe(2);
    expect(row("root").output).toBe(20 + 50);
    expect(row("root.fork").calls).toBe(1);
    expect(r.total.calls).toBe(5);
    expect(r.rows.find((x) => x.key === "root.abandoned")).toBeUndefined();
  });

  it("gives --session one row per member below it, those without calls too, depth first", () => {
    const r = usageReport(sessions, calls, query({ session: "root" }));
    expect(r.rows.map((x) => [x.key, x.kind, x.depth, x.calls])).toEqual([
      ["root", "root", 0, 2],
      ["root.agent-1", "subagent", 1, 1],
      ["root.fork", "fork", 1, 1],
      ["root.abandoned", "branch", 1, 0],
    ]);
    expect(r.total.calls).toBe(4);
    expect(r.total.total).toBe(r.rows.reduce((s, x) => s + x.total, 0));
  });

  it("rolls a family into its root and groups by model, agent, project and time", () => {
    expect(usageReport(sessions, calls, query({ by: "family" })).rows.map((x) => [x.key, x.calls])).toEqual([
      ["root", 4],
      ["other", 1],
    ]);
    expect(usageReport(sessions, calls, query({ by: "agent" })).rows.map((x) => x.key).sort()).toEqual(["claude", "codex"]);
    expect(usageReport(sessions, calls, query({ by: "project", project: "else" })).rows.map((x) => x.key)).toEqual(["elsewhere"]);
    const days = usageReport(sessions, calls, query({ by: "day", since: "2026-03-03" })).rows;
    expect(days.map((x) => x.calls)).toEqual([1]);
    expect(usageReport(sessions, calls, query({ by: "month" })).rows.map((x) => x.key)).toEqual(["2026-03"]);
  });

  it("keeps a count no call gave null, and a count some call gave a number", () => {
    const r = usageReport(sessions, calls, query({ by: "agent" }));
    const codex = r.rows.find((x) => x.key === "codex")!;
    expect(codex.cache_write).toBeNull();
    expect(codex.reasoning).toBe(7);
    expect(r.rows.find((x) => x.key === "claude")!.reasoning).toBeNull();
    expect(r.total.reasoning).toBe(7);
  });

  it("counts an unpriced model's tokens, costs it null, and counts it", () => {
    const only = new Map([["root", [call("root", { model: "claude-unheard-of-9" })]]]);
    const r = usageReport([session("root")], only, query());
    expect(r.rows[0]).toMatchObject({ calls: 1, total: 10 + 20 + 1000 + 100, cost_usd: null, unpriced_calls: 1 });
    expect(usageText(r, "session")).toContain("unknown");
    const mixed = new Map([["root", [call("root", { model: "claude-unheard-of-9" }), call("root")]]]);
    const m = usageReport([session("root")], mixed, query()).total;
    expect(m.unpriced_calls).toBe(1);
    expect(m.cost_usd).toBeCloseTo((10 * 3 + 20 * 15 + 1000 * 0.3 + 100 * 3.75) / 1e6, 12);
  });
});

describe("prices", () => {
  it("match exactly, then by the longest listed prefix ending at a separator", () => {
    const t = loadPrices(null);
    expect(priceOf(t, "claude-sonnet-4-5-20250929")).toBe(PRICE_TABLE["claude-sonnet-4-5"]);
    expect(priceOf(t, "claude-sonnet-4-20250514")).toBe(PRICE_TABLE["claude-sonnet-4"]);
    expect(priceOf(t, "claude-opus-4-6")).toBe(PRICE_TABLE["claude-opus-4-6"]);
    expect(priceOf(t, "gpt-5.3-codex")).toBe(PRICE_TABLE["gpt-5.3-codex"]);
    expect(priceOf(t, "gpt-5.6-sol")).toBeNull(); // "gpt-5" is listed, but ".6-sol" is another model
    expect(priceOf(t, null)).toBeNull();
  });

  it("price 5m and 1h cache writes apart, and an unsplit write as 5m", () => {
    const p = PRICE_TABLE["claude-opus-4-6"]!;
    expect(computedCost(call("s", { input: 1e6, output: 0, cache_read: 0, cache_write: 3e6, cache_write_5m: 1e6, cache_write_1h: 2e6 }), p)).toBeCloseTo(5 + 6.25 + 20, 9);
    expect(computedCost(call("s", { input: 0, output: 0, cache_read: 0, cache_write: 1e6 }), p)).toBeCloseTo(6.25, 9);
  });

  it("--prices replaces one model and adds another; the rest of the table stays", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "pixir-prices-"));
    const file = path.join(dir, "prices.json");
    const row = { input: 1, output: 2, cache_read: 0.5, cache_write_5m: 1.5, cache_write_1h: 3 };
    writeFileSync(file, JSON.stringify({ "claude-sonnet-4-5": row, "my-local-model": row }));
    const t = loadPrices(file);
    expect(priceOf(t, "claude-sonnet-4-5-20250929")).toEqual(row);
    expect(priceOf(t, "my-local-model")).toEqual(row);
    expect(priceOf(t, "claude-opus-4-6")).toBe(PRICE_TABLE["claude-opus-4-6"]);
    writeFileSync(file, JSON.stringify({ m: { input: 1 } }));
    expect(() => loadPrices(file)).toThrow(/bad_price/);
    writeFileSync(file, "{");
    expect(() => loadPrices(file)).toThrow(/not_json/);
  });

  it("recorded mode uses the source's cost only; auto falls back to the table", () => {
    const t = loadPrices(null);
    const recorded = call("s", { recorded_cost_usd: 0.5 });
    const plain = call("s");
    expect(callCost(recorded, t, "recorded")).toBe(0.5);
    expect(callCost(plain, t, "recorded")).toBeNull();
    expect(callCost(recorded, t, "auto")).toBe(0.5);
    expect(callCost(plain, t, "auto")).toBe(callCost(plain, t, "calculate"));
    expect(callCost(recorded, t, "calculate")).not.toBe(0.5);
  });
});

describe("dates", () => {
  it("read YYYY-MM-DD and YYYYMMDD, refuse impossible dates, and name ISO weeks", () => {
    expect(parseDay("20260302")).toBe("2026-03-02");
    expect(parseDay("2026-02-30")).toBeNull();
    expect(parseDay("yesterday")).toBeNull();
    expect(isoWeek("2026-01-01")).toBe("2026-W01");
    expect(isoWeek("2027-01-01")).toBe("2026-W53");
    expect(isoWeek("2025-12-29")).toBe("2026-W01");
    expect(isoWeek("2026-11-28")).toBe("2026-W48");
  });
});
