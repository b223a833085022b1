// archive/search/time-order.ts: doc ids kept in (ts, order indexed) order, so that `--sort time` reads the
// full-text index newest first. Held to its twin: the same Logs, through the same histories (appends out of
// time order, ties, times Date cannot read, a Log rewritten shorter, a Log removed), indexed into an index
// whose ids are only the order indexed (what the index was before), must give the same hits in the same order
// for every query, filter and limit; and while the index says its ids are in time order, they are.
import type Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync, appendFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSearchIndex, setMeta, TIME_ORDERED_KEY } from "../../../src/archive/search/index-db.js";
import { parseQuery } from "../../../src/archive/search/query.js";
import { runSearch, type SearchFilters } from "../../../src/archive/search/search.js";
import { idBetween, isTimeOrdered, timeHint } from "../../../src/archive/search/time-order.js";
import { updateSearchIndex } from "../../../src/archive/search/update.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NO_FILTERS: SearchFilters = { sessions: null, session: null, types: null, tool: null, file: null, since: null, until: null };

function workspace(): string {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-time-order-"));
  dirs.push(ws);
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  return ws;
}

const logFile = (ws: string, id: string): string => path.join(ws, ".pixir", "sessions", `${id}.ndjson`);

/** A small deterministic generator (mulberry32): the same histories on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Few distinct times as the importers and pixir write them (many ties), neighbours one millisecond apart. */
const TIMES = ["2026-06-30T10:00:00.001Z", "2026-06-30T10:00:00.002Z", "2026-06-30T10:00:00.003Z", "2026-07-01T08:00:00.000Z", "2031-12-31T23:59:59.999Z", "1999-01-01T00:00:00.000Z"];
/** And times written otherwise: empty, unreadable, without milliseconds (sorting after those of its second), with an offset. */
const ODD_TIMES = [...TIMES, "", "not a time", "2026-06-30T10:00:00Z", "2025-01-01T00:00:00.000+02:00"];
const WORDS = ["alpha", "beta", "gamma", "delta"];

function eventLine(id: string, seq: number, rnd: () => number, times: readonly string[]): string {
  const text = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => WORDS[Math.floor(rnd() * WORDS.length)]).join(" ");
  const type = rnd() < 0.5 ? "user_message" : "assistant_message";
  return `${JSON.stringify({ id: `${id}-${seq}`, session_id: id, seq, ts: times[Math.floor(rnd() * times.length)], type, data: { text } })}\n`;
}

/** Two Workspaces with the same Logs: `ordered` keeps ids in time order, `twin` only in the order indexed. */
class Twins {
  readonly ordered = workspace();
  readonly twin = workspace();
  private readonly seqs = new Map<string, number>();

  constructor(private readonly times: readonly string[] = TIMES) {
    const index = openSearchIndex(this.twin);
    setMeta(index.db, TIME_ORDERED_KEY, "0");
    index.db.close();
  }

  write(id: string, text: string, append: boolean): void {
    for (const ws of [this.ordered, this.twin]) (append ? appendFileSync : writeFileSync)(logFile(ws, id), text);
  }

  append(id: string, n: number, rnd: () => number): void {
    const start = append(this.seqs, id, n);
    this.write(id, Array.from({ length: n }, (_, i) => eventLine(id, start + i, rnd, this.times)).join(""), true);
  }

  rewrite(id: string, n: number, rnd: () => number): void {
    this.seqs.delete(id);
    const start = append(this.seqs, id, n);
    this.write(id, Array.from({ length: n }, (_, i) => eventLine(id, start + i, rnd, this.times)).join(""), false);
  }

  remove(id: string): void {
    this.seqs.delete(id);
    for (const ws of [this.ordered, this.twin]) rmSync(logFile(ws, id));
  }

  logs(): string[] {
    return [...this.seqs.keys()];
  }
}

function append(seqs: Map<string, number>, id: string, n: number): number {
  const start = (seqs.get(id) ?? 0) + 1;
  seqs.set(id, start + n - 1);
  return start;
}

function search(ws: string, words: string[], filters: Partial<SearchFilters>, limit: number, sort: "time" | "rank" = "time") {
  const index = openSearchIndex(ws);
  try {
    updateSearchIndex(index.db, ws);
    return runSearch(index.db, ws, { query: parseQuery(words), filters: { ...NO_FILTERS, ...filters }, sort, limit });
  } finally {
    index.db.close();
  }
}

/** Whether the index says its ids are in time order, the docs' times in id order, and the docs in the order indexed. */
function docTimes(ws: string): { ordered: boolean; times: string[]; indexed: string[]; byId: string[] } {
  const index = openSearchIndex(ws);
  try {
    const db: Database.Database = index.db;
    const docs = (order: string) => db.prepare(`SELECT l.session_id || '#' || d.seq FROM docs d JOIN logs l ON l.log = d.log ORDER BY ${order}`).pluck().all() as string[];
    return { ordered: isTimeOrdered(db), times: db.prepare("SELECT ts FROM docs ORDER BY doc").pluck().all() as string[], indexed: docs("d.ins"), byId: docs("d.doc") };
  } finally {
    index.db.close();
  }
}

const QUERIES: Array<[string[], Partial<SearchFilters>]> = [
  [["alpha"], {}],
  [["beta", "gamma"], {}],
  [["alpha", "-beta"], {}],
  [['"gamma delta"'], {}],
  [["del*"], {}],
  [["gamma"], { types: ["user_message"] }],
  [[], { types: ["assistant_message"] }],
  [["alpha"], { since: "2026-06-30T10:00:00.002Z", until: "2031-01-01" }],
  [[], { since: "2026-06-30T10:00:00.002Z" }],
  [[], { until: "2026-06-30T10:00:00.003Z" }],
  [["beta"], { until: "2000" }],
  [["gamma"], { since: "2099" }],
];

/** Each Workspace's index brought up to date once, then every query run on that one connection. */
function searcher(ws: string): { db: Database.Database; run: (words: string[], filters: Partial<SearchFilters>, limit: number, sort?: "time" | "rank") => ReturnType<typeof runSearch> } {
  const { db } = openSearchIndex(ws);
  updateSearchIndex(db, ws);
  return { db, run: (words, filters, limit, sort = "time") => runSearch(db, ws, { query: parseQuery(words), filters: { ...NO_FILTERS, ...filters }, sort, limit }) };
}

function expectTwinsAgree(t: Twins, step: string): void {
  const ordered = searcher(t.ordered);
  const twin = searcher(t.twin);
  try {
    for (const [words, filters] of QUERIES) {
      for (const limit of [1, 7, 1000]) {
        const label = `${step}: ${words.join(" ")} ${JSON.stringify(filters)} --limit ${limit}`;
        expect(ordered.run(words, filters, limit), label).toEqual(twin.run(words, filters, limit));
      }
    }
    // --sort rank gives ties in the order indexed: the twin's ids are that order, as every index's were.
    for (const words of [["alpha"], ["beta", "gamma"], ['"gamma delta"']]) for (const limit of [3, 1000]) expect(ordered.run(words, {}, limit, "rank"), `${step}: ${words.join(" ")} --sort rank`).toEqual(twin.run(words, {}, limit, "rank"));
  } finally {
    ordered.db.close();
    twin.db.close();
  }
  expectDocOrder(t, step);
}

function expectDocOrder(t: Twins, step: string): void {
  const ordered = docTimes(t.ordered);
  const twin = docTimes(t.twin);
  expect(twin.indexed, step).toEqual(twin.byId);
  expect(ordered.indexed, step).toEqual(twin.indexed);
  if (ordered.ordered) for (let i = 1; i < ordered.times.length; i++) expect(ordered.times[i - 1]! <= ordered.times[i]!, `${step}: doc ${i} out of time order`).toBe(true);
}

describe("doc ids in time order", () => {
  it("an id between the neighbours: the hint when it lies between, else a few after the lower one, or halfway", () => {
    expect(idBetween(10, 100, 50)).toBe(50);
    expect(idBetween(10, 100, 5)).toBe(18);
    expect(idBetween(10, 14, 10)).toBe(12);
    expect(idBetween(10, 100, null)).toBe(55);
    expect(idBetween(10, 100, 200)).toBe(55);
    expect(idBetween(10, 12, 10)).toBe(11);
    expect(idBetween(10, 11, 10)).toBe(null);
    expect(idBetween(null, null, 7)).toBe(7);
    expect(idBetween(null, 5, null)).toBeLessThan(5);
    expect(idBetween(7, null, null)).toBe(7 + 4096 * 1000);
    const a = timeHint("2026-06-30T10:00:00.001Z")!;
    expect(timeHint("2026-06-30T10:00:00.002Z")! - a).toBe(4096);
    expect(timeHint("not a time")).toBe(null);
    expect(Number.isSafeInteger(timeHint("9999-12-31T23:59:59.999Z"))).toBe(true);
  });

  it("give the hits of an index ordered by time only, through random histories", () => {
    for (const [seed, times] of [[1, TIMES], [2, TIMES], [3, ODD_TIMES], [4, ODD_TIMES]] as const) {
      const rnd = random(seed);
      const t = new Twins(times);
      for (let step = 0; step < 12; step++) {
        const logs = t.logs();
        const r = rnd();
        if (logs.length === 0 || r < 0.5) t.append(logs.length === 0 || rnd() < 0.4 ? `s${seed}-${step}` : logs[Math.floor(rnd() * logs.length)]!, 1 + Math.floor(rnd() * 30), rnd);
        else if (r < 0.7) t.rewrite(logs[Math.floor(rnd() * logs.length)]!, 1 + Math.floor(rnd() * 10), rnd);
        else if (r < 0.8) t.remove(logs[Math.floor(rnd() * logs.length)]!);
        else for (const id of logs.slice(0, 3)) t.append(id, 1 + Math.floor(rnd() * 5), rnd);
        expectTwinsAgree(t, `seed ${seed} step ${step}`);
      }
      // Times as the importers write them never run out of ids; odd ones may (then searches sort, as the twin).
      if (times === TIMES) expect(docTimes(t.ordered).ordered, `seed ${seed}`).toBe(true);
    }
  });

  it("when no id is left between two neighbours, the index says so and searches sort by time as before", () => {
    const t = new Twins();
    const at = (seq: number, ts: string) => `${JSON.stringify({ id: `a-${seq}`, session_id: "a", seq, ts, type: "user_message", data: { text: `alpha ${seq}` } })}\n`;
    t.write("a", [at(1, "2026-06-30T10:00:00.001Z"), at(2, "2026-06-30T10:00:00.002Z")].join(""), false);
    expectTwinsAgree(t, "neighbours");
    // 514 more Events of the first millisecond fill the ids up to the second's (8 apart, then 4, 2, 1); the next has none left.
    t.write("b", Array.from({ length: 514 }, (_, i) => `${JSON.stringify({ id: `b-${i + 1}`, session_id: "b", seq: i + 1, ts: "2026-06-30T10:00:00.001Z", type: "user_message", data: { text: "alpha beta" } })}\n`).join(""), false);
    search(t.ordered, ["alpha"], {}, 1);
    expect(docTimes(t.ordered).ordered).toBe(true);
    t.write("c", `${JSON.stringify({ id: "c-1", session_id: "c", seq: 1, ts: "2026-06-30T10:00:00.001Z", type: "user_message", data: { text: "alpha gamma" } })}\n`, false);
    search(t.ordered, ["alpha"], {}, 1);
    expect(docTimes(t.ordered).ordered).toBe(false);
    expectTwinsAgree(t, "full");
    t.write("a", at(3, "2026-06-30T10:00:00.000Z"), true);
    expectTwinsAgree(t, "after");
  });
});
