// What makes a search fast changes none of its answers (archive.md §2). A hit's agent, project and title,
// and what --agent and --project select, are the catalog's facts (archive.md §1) as the search index keeps
// them (session-cards.ts): on the real fixtures the index's cards equal the catalog's facts computed anew,
// after `pixir index`, after an append, after a Log is removed (its fork then inherits nothing) and after a
// rebuild, and a search whose Logs did not change answers without reading the catalog. The newest hits of
// a common word, found by walking the time index, are the first of all its hits sorted by time.
import { appendFileSync, existsSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { catalogPath, catalogScansPath, readCatalog } from "../../lib/envelope/src/archive/catalog.js";
import { openSearchIndex, searchIndexPath } from "../../lib/envelope/src/archive/search/index-db.js";
import { ftsAll, parseQuery } from "../../lib/envelope/src/archive/search/query.js";
import { newestFirstWalk } from "../../lib/envelope/src/archive/search/search.js";
import { indexWorkspace } from "../../lib/envelope/src/archive/search/job.js";
import { searchSessions } from "../../lib/envelope/src/archive/search/run.js";
import { listingKey } from "../../lib/envelope/src/archive/search/update.js";
import { listLogs } from "../../lib/envelope/src/store/ls.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { ROOT, run, tempDir } from "../support/cli.js";

interface ReadOnlyDb {
  prepare(sql: string): { all(): unknown[]; get(): unknown };
  close(): void;
}
/** better-sqlite3 is a dependency of @pixir/envelope, resolved from there (the root has no copy). */
const Database = createRequire(path.join(ROOT, "lib/envelope/package.json"))("better-sqlite3") as new (file: string, options: { readonly: boolean }) => ReadOnlyDb;

const SPOTTER = "258c7280-ae70-4798-800f-63464d01a85d";
const FORK = "spotter-fork";

interface Card {
  session_id: string;
  agent: string;
  project: string | null;
  title: string | null;
}

/** The cards and the key of the listing they were joined from, read straight from the index's file. */
function indexCards(ws: string): { cards: Card[]; listing: Buffer | undefined } {
  const db = new Database(searchIndexPath(ws).abs, { readonly: true });
  try {
    const cards = db.prepare("SELECT session_id, agent, project, title FROM cards ORDER BY session_id").all() as Card[];
    const listing = (db.prepare("SELECT value FROM meta WHERE key = 'cards_listing'").get() as { value: Buffer } | undefined)?.value;
    return { cards, listing };
  } finally {
    db.close();
  }
}

/** The catalog's facts with nothing cached: every Log scanned and joined anew. */
async function catalogCards(ws: string): Promise<Card[]> {
  rmSync(catalogPath(ws).abs, { force: true });
  rmSync(catalogScansPath(ws).abs, { force: true });
  const facts = await readCatalog(ws);
  return facts.map((f) => ({ session_id: f.session_id, agent: f.agent, project: f.project, title: f.title })).sort((a, b) => (a.session_id < b.session_id ? -1 : 1));
}

async function expectCardsCurrent(ws: string): Promise<void> {
  const stored = indexCards(ws);
  expect(stored.listing).toEqual(listingKey(listLogs(ws)));
  expect(stored.cards).toEqual(await catalogCards(ws));
}

const search = (ws: string, query: string[], more: Partial<Parameters<typeof searchSessions>[1]> = {}) => searchSessions(ws, { query, sort: "time", limit: 100_000, ...more });

let ws = "";

describe("session cards in the search index, on the real Claude transcripts", () => {
  beforeAll(() => {
    ws = tempDir("pixir-search-cards-");
    const r = run("pixir", ["import", "claude", CLAUDE_FIXTURES, "--json"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    const f = run("pixir", ["fork", SPOTTER, "--to-seq", "80", "--strategy", "share_v1", "--child-id", FORK], { cwd: ws });
    expect(f.code, f.stderr).toBe(0);
  }, 120_000);

  it("pixir index copies the catalog's facts: every session's agent, project and title", async () => {
    await indexWorkspace(ws, false);
    const stored = indexCards(ws);
    expect(stored.cards.length).toBe(listLogs(ws).sessionIds.length);
    await expectCardsCurrent(ws);
    // The share fork holds no copies: it has no agent or cwd of its own and inherits its parent's.
    const spotter = stored.cards.find((c) => c.session_id === SPOTTER)!;
    expect(stored.cards.find((c) => c.session_id === FORK)).toMatchObject({ agent: "claude", project: spotter.project });
  });

  it("a search whose Logs did not change reads the cards, not the catalog; --agent and --project select on them", async () => {
    await indexWorkspace(ws, false);
    const facts = await readCatalog(ws);
    rmSync(catalogPath(ws).abs);
    rmSync(catalogScansPath(ws).abs);
    const all = await search(ws, ["the"]);
    expect(existsSync(catalogPath(ws).abs)).toBe(false);
    expect(all.hits.length).toBeGreaterThan(100);
    const byId = new Map(facts.map((f) => [f.session_id, f]));
    for (const h of all.hits) expect([h.agent, h.project, h.title]).toEqual([byId.get(h.session_id)!.agent, byId.get(h.session_id)!.project, byId.get(h.session_id)!.title]);
    const project = byId.get(SPOTTER)!.project!;
    const inProject = await search(ws, ["the"], { project: project.slice(1, -1).toUpperCase(), agent: "claude" });
    const expected = all.hits.filter((h) => byId.get(h.session_id)!.project?.toLowerCase().includes(project.slice(1, -1).toLowerCase()) && byId.get(h.session_id)!.agent === "claude");
    expect(inProject.hits.map((h) => `${h.session_id}#${h.seq}`)).toEqual(expected.map((h) => `${h.session_id}#${h.seq}`));
    expect(inProject.hits.length).toBeGreaterThan(0);
    expect((await search(ws, ["the"], { agent: "codex" })).hits).toEqual([]);
    expect(existsSync(catalogPath(ws).abs)).toBe(false);
  });

  it("after an append the next search copies the changed facts", async () => {
    const line = { type: "user_message", data: { text: "a first prompt for a session started after the import" } };
    const a = run("pixir", ["append", "later-session"], { cwd: ws, input: `${JSON.stringify(line)}\n` });
    expect(a.code, a.stderr).toBe(0);
    const hits = (await search(ws, ["import"], { session: "later-session" })).hits;
    expect(hits.map((h) => [h.session_id, h.title, h.agent])).toEqual([["later-session", line.data.text, "pixir"]]);
    // A grown Log: its updated time and its title come from the Log as it is now.
    const spotterLog = path.join(ws, ".pixir", "sessions", `${SPOTTER}.ndjson`);
    appendFileSync(spotterLog, `${JSON.stringify({ id: "x", session_id: SPOTTER, seq: 1_000_000, ts: "2099-01-01T00:00:00.000Z", type: "assistant_message", data: { text: "zanzibarquokka later" } })}\n`);
    expect((await search(ws, ["zanzibarquokka"])).hits.map((h) => h.session_id)).toEqual([SPOTTER]);
    await expectCardsCurrent(ws);
  });

  it("after a Log is removed its fork's cards lose what they inherited; after a rebuild they are the catalog's again", async () => {
    const own = { type: "user_message", data: { text: "the fork's own words" } };
    expect(run("pixir", ["append", FORK], { cwd: ws, input: `${JSON.stringify(own)}\n` }).code).toBe(0);
    rmSync(path.join(ws, ".pixir", "sessions", `${SPOTTER}.ndjson`));
    const hits = (await search(ws, ["the"], { session: FORK })).hits;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.map((h) => [h.session_id, h.agent, h.project])).toEqual(hits.map(() => [FORK, "pixir", null]));
    await expectCardsCurrent(ws);
    expect(indexCards(ws).cards.some((c) => c.session_id === SPOTTER)).toBe(false);
    await indexWorkspace(ws, true);
    await expectCardsCurrent(ws);
  });
});

describe("the newest hits of a common word", () => {
  it("are the first of all its hits in time order, with and without filters", async () => {
    // The walk of the time index for the newest 20 of "the"; each match fetched and sorted for all.
    const index = openSearchIndex(ws);
    try {
      expect(newestFirstWalk(index.db, parseQuery(["the"]), ftsAll(["the"])!, 20)).toBe(true);
      expect(newestFirstWalk(index.db, parseQuery(["the"]), ftsAll(["the"])!, 100_000)).toBe(false);
    } finally {
      index.db.close();
    }
    for (const [words, more] of [[["the"], {}], [["file"], {}], [["the"], { types: ["assistant_message"] }], [["the"], { tool: "Bash" }], [["the", "-file"], {}], [["the"], { since: "2025-09-01", until: "2025-12-01" }]] as const) {
      const all = (await search(ws, [...words], more)).hits;
      expect(all.length, words.join(" ")).toBeGreaterThan(50);
      for (const limit of [1, 20, 50]) {
        const newest = (await searchSessions(ws, { query: [...words], sort: "time", limit, ...more })).hits;
        expect(newest, `${words.join(" ")} --limit ${limit}`).toEqual(all.slice(0, limit));
      }
    }
  });
});
