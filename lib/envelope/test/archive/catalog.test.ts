// archive.md §1: the catalog's rules on small Logs written here (title order per agent, times without
// provenance, a share child's inherited messages), its cache under .pixir/index/ (used while a Log is
// unchanged, rebuilt when stale or corrupt, skipped in a read-only Workspace), and id prefixes.
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CATALOG_VERSION, SCANS_VERSION, catalogPath, catalogScansPath, factsOfRows, readCatalog } from "../../src/archive/catalog.js";
import { factsToRow } from "../../src/archive/catalog-rows.js";
import { joinFacts, type ScannedLog } from "../../src/archive/facts.js";
import { emptyScan, type LogScan } from "../../src/archive/log-facts.js";
import { resolveExistingSessionId, resolveSessionId, shortestUniquePrefixes } from "../../src/archive/resolve.js";
import { parseDateFlag } from "../../src/archive/session-list.js";
import { tokensText } from "../../src/view/ls-text.js";

type Ev = { type: string; ts?: string; data: Record<string, unknown> };

function workspace(logs: Record<string, Ev[]>): string {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-catalog-"));
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  for (const [id, events] of Object.entries(logs)) writeLog(ws, id, events);
  return ws;
}

function writeLog(ws: string, id: string, events: Ev[]): void {
  const lines = events.map((e, seq) => JSON.stringify({ id: `E${seq}`, session_id: id, seq, ts: e.ts ?? `2026-01-01T00:00:0${seq % 10}.000Z`, type: e.type, data: e.data }));
  writeFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), `${lines.join("\n")}\n`);
}

const claudeRec = (record: Record<string, unknown>): Ev => ({ type: "workflow_event", data: { event: "claude_record", record_type: record.type, subtype: null, claude: { part: "rec", record } } });
const user = (text: string, record: Record<string, unknown> = {}): Ev => ({ type: "user_message", data: { text, claude: { record: { cwd: "/home/u/proj", ...record } } } });
const byId = async (ws: string) => new Map((await readCatalog(ws)).map((f) => [f.session_id, f]));

describe("titles (archive.md §1)", () => {
  it("Claude: the newest custom-title, else the newest ai-title, else the leaf's summary, else the first typed prompt", async () => {
    const transcript: Ev = { type: "workflow_event", ts: "2030-01-01T00:00:00.000Z", data: { event: "claude_transcript", claude: { kind: "session" } } };
    const imported: Ev = { type: "workflow_event", ts: "2031-01-01T00:00:00.000Z", data: { event: "claude_import", claude: { leaf_uuid: "u2" } } };
    const ws = workspace({
      custom: [transcript, claudeRec({ type: "ai-title", aiTitle: "ai" }), claudeRec({ type: "custom-title", customTitle: "old" }), claudeRec({ type: "custom-title", customTitle: "new" }), user("typed")],
      ai: [transcript, claudeRec({ type: "ai-title", aiTitle: "first ai" }), claudeRec({ type: "ai-title", aiTitle: "second ai" }), user("typed")],
      summary: [transcript, claudeRec({ type: "summary", summary: "of another leaf", leafUuid: "u9" }), claudeRec({ type: "summary", summary: "of the leaf", leafUuid: "u2" }), user("typed"), imported],
      prompt: [transcript, claudeRec({ type: "summary", summary: "of another leaf", leafUuid: "u9" }), user("<system-reminder>x</system-reminder>"), user("skill text", { isMeta: true }), user("  the\n real   one "), imported],
    });
    const f = await byId(ws);
    expect(f.get("custom")!.title).toBe("new");
    expect(f.get("ai")!.title).toBe("second ai");
    expect(f.get("summary")!.title).toBe("of the leaf");
    expect(f.get("prompt")).toMatchObject({ title: "the real one", first_prompt: "the real one", agent: "claude", cwd: "/home/u/proj", project: "proj", messages: 3 });
    // Provenance-only Events (the import's header and end) do not count as the session's times.
    expect(f.get("prompt")).toMatchObject({ started: "2026-01-01T00:00:01.000Z", updated: "2026-01-01T00:00:04.000Z" });
  });

  it("Codex and pi: the session name, else the first prompt; a Log of no import is pixir's", async () => {
    const codexMeta: Ev = { type: "workflow_event", data: { event: "codex_session_meta", cwd: "C:\\work\\api\\", codex: { record: { type: "session_meta" } } } };
    const named: Ev = { type: "workflow_event", data: { event: "codex_record", item_type: "thread_name_updated", codex: { record: { type: "event_msg", payload: { type: "thread_name_updated", thread_name: "Fix login" } } } } };
    const piHeader: Ev = { type: "workflow_event", data: { event: "pi_session_header", pi: { header: { cwd: "/w/site" } } } };
    const piName: Ev = { type: "workflow_event", data: { event: "pi_entry", entry_type: "session_info", pi: { fields: { name: "pi name" } } } };
    const ws = workspace({
      codex: [codexMeta, { type: "user_message", data: { text: "# AGENTS.md instructions for /x\n..." } }, { type: "user_message", data: { text: "do it" } }, named],
      pi: [piHeader, { type: "user_message", data: { text: "hello pi" } }, piName],
      mine: [{ type: "user_message", data: { text: "plain" } }, { type: "assistant_message", data: { text: "ok" } }],
    });
    const f = await byId(ws);
    expect(f.get("codex")).toMatchObject({ agent: "codex", title: "Fix login", first_prompt: "do it", cwd: "C:\\work\\api\\", project: "api" });
    expect(f.get("pi")).toMatchObject({ agent: "pi", title: "pi name", first_prompt: "hello pi", cwd: "/w/site", project: "site" });
    expect(f.get("mine")).toMatchObject({ agent: "pixir", kind: "root", title: "plain", cwd: null, project: null, messages: 2, tokens: null });
  });
});

describe("lineage", () => {
  it("a share child counts its parent's messages up to the fork point; a subagent names its parent", async () => {
    const ws = workspace({
      p: [user("one"), { type: "assistant_message", data: { text: "a" } }, user("two"), { type: "subagent_event", data: { subagent_id: "s", child_session_id: "sub" } }],
      sub: [user("task")],
    });
    writeLog(ws, "p.b", [{ type: "session_fork", data: { parent_session_id: "p", forked_to_seq: 1, strategy: "share_v1", claude: { fork_kind: "claude_branch" } } }, user("again")]);
    writeLog(ws, "f", [{ type: "session_fork", data: { parent_session_id: "p.b", forked_to_seq: 2, strategy: "share_v1" } }]);
    const f = await byId(ws);
    expect(f.get("p.b")).toMatchObject({ kind: "branch", parent: "p", messages: 3, agent: "claude", events: 2 });
    expect(f.get("f")).toMatchObject({ kind: "fork", parent: "p.b", messages: 3 });
    expect(f.get("sub")).toMatchObject({ kind: "subagent", parent: "p" });
    expect(f.get("p")!.children).toEqual(["p.b", "sub"]);
  });
});

describe("the cache under .pixir/index/", () => {
  it("is used while a Log's size and mtime are unchanged, and rebuilt when the Log grows or the cache is corrupt", async () => {
    const ws = workspace({ a: [user("first")], b: [user("second")] });
    await readCatalog(ws);
    // No Log changed: the joined facts of catalog.json are the answer as read.
    const joined = JSON.parse(readFileSync(catalogPath(ws).abs, "utf8"));
    const facts = factsOfRows(joined.rows)!;
    facts.find((f) => f.session_id === "a")!.title = "from the facts";
    joined.rows = facts.map(factsToRow);
    writeFileSync(catalogPath(ws).abs, JSON.stringify(joined));
    expect((await byId(ws)).get("a")!.title).toBe("from the facts");
    // Without them, each unchanged Log's scan comes from catalog-scans.json and is joined again.
    writeFileSync(catalogPath(ws).abs, "{not json");
    const scans = JSON.parse(readFileSync(catalogScansPath(ws).abs, "utf8"));
    scans.logs.a.scan.first_prompt = "from the scans";
    writeFileSync(catalogScansPath(ws).abs, JSON.stringify(scans));
    expect((await byId(ws)).get("a")!.title).toBe("from the scans");
    // A Log that grew is scanned again; the other keeps its cached scan.
    appendFileSync(path.join(ws, ".pixir", "sessions", "a.ndjson"), `${JSON.stringify({ id: "E9", session_id: "a", seq: 1, ts: "2026-02-01T00:00:00.000Z", type: "assistant_message", data: { text: "ok" } })}\n`);
    const grown = await byId(ws);
    expect(grown.get("a")).toMatchObject({ title: "first", messages: 2, updated: "2026-02-01T00:00:00.000Z" });
    expect(grown.get("b")!.title).toBe("second");
    writeFileSync(catalogPath(ws).abs, "{not json");
    writeFileSync(catalogScansPath(ws).abs, "[]");
    expect((await byId(ws)).get("a")!.title).toBe("first");
    expect(JSON.parse(readFileSync(catalogPath(ws).abs, "utf8")).version).toBe(CATALOG_VERSION);
    expect(JSON.parse(readFileSync(catalogScansPath(ws).abs, "utf8")).version).toBe(SCANS_VERSION);
  });

  it("keeps message seqs only for a share child's parent, and scans a parent again when a share child turns up", async () => {
    const ws = workspace({ p: [user("one"), { type: "assistant_message", data: { text: "a" } }, user("two")], q: [user("alone")] });
    await readCatalog(ws);
    const seqs = () => JSON.parse(readFileSync(catalogScansPath(ws).abs, "utf8")).logs as Record<string, { scan: { message_seqs: number[] | null } }>;
    expect(seqs().p!.scan.message_seqs).toBeNull();
    writeLog(ws, "f", [{ type: "session_fork", data: { parent_session_id: "p", forked_to_seq: 1, strategy: "share_v1" } }, user("more")]);
    const withChild = await byId(ws);
    expect(withChild.get("f")).toMatchObject({ kind: "fork", messages: 3 });
    expect(seqs().p!.scan.message_seqs).toEqual([0, 1, 2]);
    expect(seqs().q!.scan.message_seqs).toBeNull();
    rmSync(path.join(ws, ".pixir", "index"), { recursive: true });
    expect(await byId(ws)).toEqual(withChild);
  });

  it("a Log added or removed is seen though no other Log changed", async () => {
    const ws = workspace({ a: [user("first")] });
    expect((await readCatalog(ws)).map((f) => f.session_id)).toEqual(["a"]);
    writeLog(ws, "b", [user("second")]);
    expect((await readCatalog(ws)).map((f) => f.session_id).sort()).toEqual(["a", "b"]);
    rmSync(path.join(ws, ".pixir", "sessions", "a.ndjson"));
    expect((await readCatalog(ws)).map((f) => f.session_id)).toEqual(["b"]);
  });

  it.skipIf(process.getuid?.() === 0)("a read-only Workspace still lists", async () => {
    const ws = workspace({ a: [user("first")] });
    chmodSync(path.join(ws, ".pixir"), 0o555);
    try {
      expect((await byId(ws)).get("a")!.title).toBe("first");
    } finally {
      chmodSync(path.join(ws, ".pixir"), 0o755);
    }
  });

  it("an index path that is not a directory is left alone", async () => {
    const ws = workspace({ a: [user("first")] });
    writeFileSync(path.join(ws, ".pixir", "index"), "mine");
    expect((await byId(ws)).get("a")!.title).toBe("first");
    expect(readFileSync(path.join(ws, ".pixir", "index"), "utf8")).toBe("mine");
  });
});

describe("id prefixes", () => {
  const ws = workspace({ "0d3a8e6f-1": [user("root")], "0d3a8e6f-1.aa": [user("b1")], "0d3a8e6f-1.ab": [user("b2")], "0d3b": [user("x")], abcd: [user("y")], abcdef: [user("z")] });

  it("resolves a unique prefix, prefers a full id, and names a session over the Logs named under it", async () => {
    expect(await resolveSessionId(ws, "0d3a")).toBe("0d3a8e6f-1");
    expect(await resolveSessionId(ws, "abcd")).toBe("abcd");
    expect(await resolveSessionId(ws, "abcde")).toBe("abcdef");
    expect(await resolveSessionId(ws, "0d3a8e6f-1.aa")).toBe("0d3a8e6f-1.aa");
  });

  it("refuses an ambiguous prefix with its candidates, and a missing one", async () => {
    await expect(resolveSessionId(ws, "0d3a8e6f-1.a")).rejects.toMatchObject({ kind: "ambiguous_session_id", details: { candidates: [{ session_id: "0d3a8e6f-1.aa", title: "b1" }, { session_id: "0d3a8e6f-1.ab", title: "b2" }] } });
    await expect(resolveSessionId(ws, "0d3")).rejects.toMatchObject({ kind: "not_found" });
    expect(await resolveExistingSessionId(ws, "zzzz")).toBe("zzzz");
  });

  it("shows each id by the shortest prefix that resolves to it", () => {
    const ids = ["0d3a8e6f-1", "0d3a8e6f-1.aa", "0d3a8e6f-1.ab", "0d3b0000", "abcd", "abcdefghij"];
    const p = shortestUniquePrefixes(ids, 4);
    expect(Object.fromEntries(p)).toEqual({ "0d3a8e6f-1": "0d3a", "0d3a8e6f-1.aa": "0d3a8e6f-1.aa", "0d3a8e6f-1.ab": "0d3a8e6f-1.ab", "0d3b0000": "0d3b", abcd: "abcd", abcdefghij: "abcde" });
  });
});

describe("flags and figures", () => {
  const now = new Date("2026-05-10T12:00:00Z");
  it("parses --since and --until", () => {
    expect(parseDateFlag("7d", "since", now, "u")).toBe("2026-05-03T12:00:00.000Z");
    expect(parseDateFlag("2026-05-01", "until", now, "u")).toBe(new Date(2026, 4, 2).toISOString());
    expect(parseDateFlag("2026-05-01T14:00Z", "since", now, "u")).toBe("2026-05-01T14:00:00.000Z");
    for (const bad of ["2026-02-30", "soon", "7y"]) expect(() => parseDateFlag(bad, "since", now, "u")).toThrow(/--since takes/);
  });
  it("writes token counts as 950, 12.3k, 1.2M", () => {
    expect([null, 950, 12_345, 999_999, 1_234_567].map(tokensText)).toEqual(["-", "950", "12.3k", "1.0M", "1.2M"]);
  });
});

describe("inherited agent and cwd (joinFacts)", () => {
  it("come from the nearest Log up the lineage, through a fork cycle too, whatever order the Logs are joined in", () => {
    const scan = (over: Partial<LogScan>): LogScan => ({ ...emptyScan(), ...over });
    const fork = (parent: string) => ({ parent, forked_to_seq: null, strategy: "copy_v1", branch: false });
    const logs: ScannedLog[] = [
      { id: "c", bytes: 1, scan: scan({ fork: fork("b") }) },
      { id: "b", bytes: 1, scan: scan({ fork: fork("a"), agent: "codex" }) },
      { id: "a", bytes: 1, scan: scan({ fork: fork("b"), cwd: "/w/x" }) },
      { id: "d", bytes: 1, scan: scan({ fork: fork("e") }) },
      { id: "e", bytes: 1, scan: scan({ fork: fork("d") }) },
      { id: "g", bytes: 1, scan: scan({ fork: fork("c"), cwd: "/w/own" }) },
    ];
    const expected = { a: ["codex", "/w/x"], b: ["codex", "/w/x"], c: ["codex", "/w/x"], d: ["pixir", null], e: ["pixir", null], g: ["codex", "/w/own"] };
    for (const order of [logs, [...logs].reverse()]) {
      const got = Object.fromEntries(joinFacts(order).map((f) => [f.session_id, [f.agent, f.cwd]]));
      expect(got).toEqual(expected);
    }
  });
});
