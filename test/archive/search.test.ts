// pixir search and pixir index (archive.md §2) on the real Claude transcripts, imported: every expected
// answer is computed here from the source .jsonl files (records, not Logs) and then located in the Logs by
// the record's uuid or tool_use id, never by asking the index.
import { spawn } from "node:child_process";
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { binPath, tempDir, type RunResult } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { allFixtureFiles, CLAUDE_FIXTURES, logIds, storedEvents, type StoredEvent } from "../support/claude.js";

const SPOTTER = "258c7280-ae70-4798-800f-63464d01a85d";
const SPOTTER_FILE = `spotter/${SPOTTER}.jsonl`;
const spotterText = (): string => readFileSync(path.join(CLAUDE_FIXTURES, SPOTTER_FILE), "utf8").toLowerCase();

interface SourceRecord {
  uuid: string;
  file: string;
  message?: { role?: string; content?: unknown };
}

/** Every record of every fixture transcript. */
function sourceRecords(only?: (rel: string) => boolean): SourceRecord[] {
  const out: SourceRecord[] = [];
  for (const rel of allFixtureFiles().filter(only ?? (() => true))) {
    for (const line of readFileSync(path.join(CLAUDE_FIXTURES, rel), "utf8").split("\n")) {
      if (line.trim() === "") continue;
      try {
        const r = JSON.parse(line) as SourceRecord;
        if (typeof r.uuid === "string") out.push({ ...r, file: rel });
      } catch {
        // a malformed line holds no record to find
      }
    }
  }
  return out;
}

const allSourceText = (): string => allFixtureFiles().map((rel) => readFileSync(path.join(CLAUDE_FIXTURES, rel), "utf8").toLowerCase()).join("\n");

const countOf = (hay: string, needle: string): number => hay.split(needle).length - 1;

/** Letter runs of the text, lower-cased, with how often each occurs. */
function letterRuns(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const w of text.match(/[a-z]+/g) ?? []) m.set(w, (m.get(w) ?? 0) + 1);
  return m;
}

/**
 * Words (letters only, at least 10) of the records' assistant text blocks that occur nowhere else in any
 * fixture file, not even inside a longer word: up to `max` of them, with their record's uuid.
 */
function uniqueAssistantWords(records: readonly SourceRecord[], everything: string, accept: (r: SourceRecord) => boolean, max = 12): Array<{ word: string; uuid: string }> {
  const runs = letterRuns(everything);
  const out: Array<{ word: string; uuid: string }> = [];
  for (const r of records) {
    if (r.message?.role !== "assistant" || !Array.isArray(r.message.content) || !accept(r)) continue;
    for (const block of r.message.content as Array<{ type?: string; text?: string }>) {
      if (block.type !== "text" || typeof block.text !== "string") continue;
      for (const word of block.text.match(/[\p{L}\p{N}]+/gu) ?? []) {
        if (out.length >= max) return out;
        const lower = word.toLowerCase();
        if (word.length >= 10 && /^[a-z]+$/.test(lower) && runs.get(lower) === 1 && countOf(everything, lower) === 1) out.push({ word, uuid: r.uuid });
      }
    }
  }
  return out;
}

interface JsonHit {
  session_id: string;
  seq: number;
  type: string;
  in_context: boolean;
  inherited_by: number;
  snippet: string;
  title: string | null;
  agent: string | null;
}

const hitsOf = (r: RunResult): JsonHit[] =>
  r.stdout
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as JsonHit);

/** Every Event of every Log of the Workspace, by session. */
function allEvents(ws: string): Map<string, StoredEvent[]> {
  return new Map(logIds(ws).map((id) => [id, storedEvents(ws, id)]));
}

function findEvent(events: Map<string, StoredEvent[]>, pred: (e: StoredEvent) => boolean): Array<{ session_id: string; seq: number }> {
  const out: Array<{ session_id: string; seq: number }> = [];
  for (const [id, list] of events) for (const e of list) if (pred(e)) out.push({ session_id: id, seq: e.seq });
  return out;
}

const search = (ws: string, args: string[]): RunResult => run("pixir", ["search", ...args], { cwd: ws });

/** A Workspace with every Claude fixture imported. */
function importedWorkspace(): string {
  const ws = tempDir("pixir-search-");
  const r = run("pixir", ["import", "claude", CLAUDE_FIXTURES, "--json"], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return ws;
}

/** A copy of a Workspace's Logs in a fresh Workspace (no index). */
function copyOfLogs(ws: string): string {
  const copy = tempDir("pixir-search-copy-");
  cpSync(path.join(ws, ".pixir", "sessions"), path.join(copy, ".pixir", "sessions"), { recursive: true });
  return copy;
}

describe("pixir search on the real Claude transcripts", () => {
  let ws = "";
  let events = new Map<string, StoredEvent[]>();
  let records: SourceRecord[] = [];
  let everything = "";
  beforeAll(() => {
    ws = importedWorkspace();
    events = allEvents(ws);
    records = sourceRecords();
    everything = allSourceText();
  });

  it("a word that occurs once in the transcripts is one hit, at the session and seq that hold its record", () => {
    const words = uniqueAssistantWords(records, everything, () => true);
    expect(words.length).toBeGreaterThan(5);
    // The Logs know each record by its uuid: the word is found where the importer put that record.
    for (const { word, uuid } of [words[0]!, words[Math.floor(words.length / 2)]!, words.at(-1)!]) {
      const expected = findEvent(events, (e) => e.type === "assistant_message" && e.data?.claude?.uuid === uuid && String(e.data.text).includes(word));
      expect(expected.length).toBe(1);
      const r = search(ws, [word.toUpperCase(), "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect(hitsOf(r).map((h) => ({ session_id: h.session_id, seq: h.seq }))).toEqual(expected);
      expect(hitsOf(r)[0]!.snippet.toLowerCase()).toContain(word.toLowerCase());
    }
  });

  it("--file finds exactly the tool calls whose file argument names the path (a real Edit among them)", () => {
    const edit = records.flatMap((r) => (Array.isArray(r.message?.content) ? (r.message.content as Array<{ type?: string; name?: string; id?: string; input?: Record<string, unknown> }>) : [])).find((b) => b.type === "tool_use" && b.name === "Edit" && typeof b.input?.file_path === "string");
    expect(edit).toBeDefined();
    const suffix = String(edit!.input!.file_path).split("/").slice(-2).join("/");
    // Independently: every tool_use of the sources whose file argument is that path or ends in /suffix.
    const callIds = new Set<string>();
    for (const r of records) {
      for (const b of Array.isArray(r.message?.content) ? (r.message.content as Array<{ type?: string; id?: string; input?: Record<string, unknown> }>) : []) {
        if (b.type !== "tool_use" || typeof b.id !== "string") continue;
        const named = ["file_path", "notebook_path", "path"].map((k) => b.input?.[k]).filter((v): v is string => typeof v === "string");
        if (named.some((p) => p === suffix || p.endsWith(`/${suffix}`))) callIds.add(b.id);
      }
    }
    const expected = findEvent(events, (e) => e.type === "tool_call" && callIds.has(String(e.data?.call_id)));
    const r = search(ws, ["--file", suffix, "--limit", "10000", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const got = hitsOf(r);
    const key = (h: { session_id: string; seq: number }) => `${h.session_id}#${h.seq}`;
    expect(got.map(key).sort()).toEqual(expected.map(key).sort());
    expect(got.map(key)).toContain(key(findEvent(events, (e) => e.type === "tool_call" && e.data?.call_id === edit!.id)[0]!));
  });

  it("a real auto-compaction: hits at or before its to_seq are not in context, later ones are", () => {
    const own = events.get(SPOTTER)!;
    const checkpoint = own.filter((e) => e.type === "history_compaction").at(-1)!;
    const to = checkpoint.data.range.to_seq as number;
    const r = search(ws, ["the", "--session", SPOTTER, "--type", "assistant_message", "--limit", "100000", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const hits = hitsOf(r);
    expect(hits.some((h) => h.seq <= to)).toBe(true);
    expect(hits.some((h) => h.seq > to)).toBe(true);
    for (const h of hits) expect(h.in_context, `seq ${h.seq}`).toBe(h.seq > to);
  });

  it("each hit says its session's title and agent; the text groups hits and ends with the commands that open them", () => {
    const [{ word }] = uniqueAssistantWords(records, spotterText(), (rec) => rec.file === SPOTTER_FILE);
    const j = hitsOf(search(ws, [word, "--json", "--session", SPOTTER]));
    expect(j[0]).toMatchObject({ session_id: SPOTTER, agent: "claude" });
    expect(typeof j[0]!.title).toBe("string");
    const t = search(ws, [word, "--session", SPOTTER]);
    expect(t.code).toBe(0);
    expect(t.stdout).toContain(`«${word}»`);
    expect(t.stdout).toContain(`pixir context ${SPOTTER}`);
    expect(t.stdout).toContain(`pixir export html ${SPOTTER} --out`);
    expect(t.stdout).toContain(`pixir fork ${SPOTTER} --to-seq ${j[0]!.seq}`);
  });

  it("an unparseable query is exit 2 in pixir's words", () => {
    for (const q of ['"unclosed phrase', "-", '""']) {
      const r = search(ws, ["--", q]);
      expect(r.code, q).toBe(2);
      expect(r.stderr).not.toMatch(/sqlite|fts5|syntax error/i);
      expect(r.stderr).toMatch(/query/);
    }
    expect(search(ws, []).code).toBe(2);
  });

  it("bad flags are errors, never an empty answer: a session that is not there, an unknown agent, a day not on the calendar", () => {
    for (const [args, kind] of [
      [["--session", "zzzzzz"], "not_found"],
      [["--session", "258"], "not_found"],
      [["--agent", "cluade"], "usage"],
      [["--until", "2026-13-45"], "invalid_args"],
      [["--since", "2026-02-30"], "invalid_args"],
      [["--since", "2026-02-30T10:00"], "invalid_args"],
    ] as const) {
      const r = search(ws, ["the", ...args, "--json"]);
      expect(r.code, args.join(" ")).toBe(2);
      expect(JSON.parse(r.stderr.trim().split("\n").at(-1)!).error.kind, args.join(" ")).toBe(kind);
    }
    // `./` before a path is the same path.
    const plain = search(ws, ["--file", "templates/transcript.html", "--json", "--limit", "1000"]);
    expect(hitsOf(plain).length).toBeGreaterThan(0);
    expect(search(ws, ["--file", "./templates/transcript.html", "--json", "--limit", "1000"]).stdout).toBe(plain.stdout);
  });

  it("a fork of a real session: an inherited Event is one hit at the parent, inherited_by counting the forks", () => {
    const own = events.get(SPOTTER)!;
    const early = new Set(own.filter((e) => e.seq <= 60).map((e) => e.data?.claude?.uuid));
    // Unique in the session's own transcript (its compaction subagent holds a copy, a Log of its own).
    const [{ word, uuid }] = uniqueAssistantWords(records, spotterText(), (rec) => rec.file === SPOTTER_FILE && early.has(rec.uuid));
    const at = own.find((e) => e.type === "assistant_message" && e.data?.claude?.uuid === uuid)!.seq;
    for (const [child, strategy] of [["fork-share", "share_v1"], ["fork-replay", "replay_v1"]]) {
      const f = run("pixir", ["fork", SPOTTER, "--to-seq", "80", "--strategy", strategy, "--child-id", child], { cwd: ws });
      expect(f.code, f.stderr).toBe(0);
    }
    const f2 = run("pixir", ["fork", "fork-share", "--to-seq", "70", "--strategy", "share_v1", "--child-id", "fork-of-fork"], { cwd: ws });
    expect(f2.code, f2.stderr).toBe(0);
    const family = new Set([SPOTTER, "fork-share", "fork-replay", "fork-of-fork"]);
    const hits = hitsOf(search(ws, [word, "--json"])).filter((h) => family.has(h.session_id));
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ session_id: SPOTTER, seq: at });
    // Both forks hold seq ≤ 80; the fork of the share fork kept its first 70 Events, which hold it when its
    // place among the replayed Events is ≤ 70.
    const place = own.filter((e) => e.seq <= at && !["provider_usage", "history_compaction", "session_fork", "branch_summary", "turn_failed"].includes(e.type)).length;
    expect(hits[0]!.inherited_by).toBe(2 + (place <= 70 ? 1 : 0));
    // --session of a fork searches the prefix it inherits, found at the parent.
    expect(hitsOf(search(ws, [word, "--session", "fork-share", "--json"]))).toHaveLength(1);
  });
});

describe("the index follows the Logs", () => {
  let base = "";
  beforeAll(() => {
    base = tempDir("pixir-search-base-");
    const src = path.join(CLAUDE_FIXTURES, "spotter", `${SPOTTER}.jsonl`);
    const root = tempDir("pixir-search-src-");
    mkdirSync(path.join(root, "spotter"));
    cpSync(src, path.join(root, "spotter", `${SPOTTER}.jsonl`));
    expect(run("pixir", ["import", "claude", root], { cwd: base }).code).toBe(0);
  });

  it("an append is found by the next search, without pixir index", () => {
    const ws = copyOfLogs(base);
    expect(search(ws, ["spotter", "--limit", "1"]).code).toBe(0);
    const a = run("pixir", ["append", SPOTTER], { cwd: ws, input: `${JSON.stringify({ type: "user_message", data: { text: "please check the zanzibarquokka module" } })}\n` });
    expect(a.code, a.stderr).toBe(0);
    const last = storedEvents(ws, SPOTTER).at(-1)!;
    const hits = hitsOf(search(ws, ["zanzibarquokka", "--json"]));
    expect(hits.map((h) => [h.session_id, h.seq, h.in_context])).toEqual([[SPOTTER, last.seq, true]]);
  });

  it("a Log changed before its old length is read again; a removed Log is dropped", () => {
    const ws = copyOfLogs(base);
    expect(hitsOf(search(ws, ["zanzibarquokka", "--json"]))).toEqual([]);
    const file = path.join(ws, ".pixir", "sessions", `${SPOTTER}.ndjson`);
    const lines = readFileSync(file, "utf8").split("\n");
    const i = lines.findIndex((l) => l.includes('"type":"assistant_message"') && l.includes('"text":"'));
    lines[i] = lines[i]!.replace('"text":"', '"text":"zanzibarquokka ');
    writeFileSync(file, lines.join("\n"));
    const seq = JSON.parse(lines[i]!).seq as number;
    expect(hitsOf(search(ws, ["zanzibarquokka", "--json"])).map((h) => h.seq)).toEqual([seq]);
    rmSync(file);
    expect(hitsOf(search(ws, ["zanzibarquokka", "--json"]))).toEqual([]);
    const idx = run("pixir", ["index", "--json"], { cwd: ws });
    expect(JSON.parse(idx.stdout)).toMatchObject({ logs: 0, documents: 0 });
  });

  it("a Log overwritten in its middle, its length kept (with or without an append after), is read again", () => {
    const ws = copyOfLogs(base);
    const file = path.join(ws, ".pixir", "sessions", `${SPOTTER}.ndjson`);
    const seqOf = (bytes: Buffer, at: number) => JSON.parse(bytes.subarray(bytes.lastIndexOf(0x0a, at) + 1, bytes.indexOf(0x0a, at)).toString("utf8")).seq as number;
    for (const append of [false, true]) {
      expect(search(ws, ["annotation", "--limit", "1"]).code).toBe(0);
      const bytes = readFileSync(file);
      // A word in a line far from the first and the last, overwritten by one of the same length.
      const at = bytes.indexOf("annotation", Math.floor(bytes.length / 3));
      expect(at).toBeGreaterThan(0);
      const word = append ? "quokkazanb" : "zanzibarqu";
      bytes.write(word, at);
      writeFileSync(file, bytes);
      if (append) appendFileSync(file, `${JSON.stringify({ ...storedEvents(ws, SPOTTER).at(-1)!, seq: storedEvents(ws, SPOTTER).at(-1)!.seq + 1 })}\n`);
      expect(hitsOf(search(ws, [word, "--json"])).map((h) => h.seq), word).toEqual([seqOf(bytes, at)]);
    }
  });

  it("an append is read from the old length on, not the whole Log again: the indexed bytes' digest holds across batches", () => {
    // A Log of more than one batch of 8 MiB (the digest is carried from one batch to the next): the real
    // session's assistant texts, again and again.
    const ws = tempDir("pixir-search-big-");
    const texts = storedEvents(base, SPOTTER).filter((e) => e.type === "assistant_message").map((e) => String(e.data.text));
    const lines: string[] = [];
    for (let seq = 0, bytes = 0; bytes < 9 << 20; seq++) {
      const line = JSON.stringify({ id: `e${seq}`, session_id: "big", seq, ts: "2026-02-11T21:00:00.000Z", type: "assistant_message", data: { text: `${texts[seq % texts.length]} ${"pad ".repeat(200)}` } });
      lines.push(line);
      bytes += line.length + 1;
    }
    mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
    const file = path.join(ws, ".pixir", "sessions", "big.ndjson");
    writeFileSync(file, `${lines.join("\n")}\n`);
    expect(JSON.parse(run("pixir", ["index", "--json"], { cwd: ws }).stdout)).toMatchObject({ added: 1, reindexed: 0 });
    appendFileSync(file, `${JSON.stringify({ id: "last", session_id: "big", seq: lines.length, ts: "2026-02-11T22:00:00.000Z", type: "user_message", data: { text: "digestquokka" } })}\n`);
    expect(JSON.parse(run("pixir", ["index", "--json"], { cwd: ws }).stdout)).toMatchObject({ grown: 1, reindexed: 0, indexed_events: 1 });
    expect(hitsOf(search(ws, ["digestquokka", "--json"])).map((h) => h.seq)).toEqual([lines.length]);
  });

  it("two searches racing on a fresh index give the same hits", async () => {
    const ws = copyOfLogs(base);
    const once = () =>
      new Promise<RunResult>((resolve) => {
        const child = spawn(process.execPath, [binPath("pixir"), "search", "annotation", "--json", "--limit", "500"], { cwd: ws, env: { ...process.env, NO_COLOR: "1" } });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("close", (code) => resolve({ code: code ?? 1, stdout: out, stderr: err, json: null } as unknown as RunResult));
      });
    const [a, b] = await Promise.all([once(), once()]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(hitsOf(a).length).toBeGreaterThan(10);
    expect(a.stdout).toBe(b.stdout);
    expect(search(ws, ["annotation", "--json", "--limit", "500"]).stdout).toBe(a.stdout);
  });

  it("a corrupt or other-version index is rebuilt with a note, and the search answers", () => {
    const ws = copyOfLogs(base);
    const good = search(ws, ["annotation", "--json", "--limit", "500"]);
    const file = path.join(ws, ".pixir", "index", "search.sqlite");
    for (const f of readdirSync(path.dirname(file))) if (f.startsWith("search.sqlite-")) rmSync(path.join(path.dirname(file), f));
    writeFileSync(file, "this is not a database, just some bytes ".repeat(200));
    const r = search(ws, ["annotation", "--json", "--limit", "500"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(good.stdout);
    expect(r.stderr).toMatch(/index_rebuilt/);
    expect(r.stderr).not.toMatch(/sqlite_|SqliteError|file is not a database/i);
    const again = search(ws, ["annotation", "--json", "--limit", "500"]);
    expect(again.stderr).toBe("");
    // Truncated in the middle: still rebuilt.
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 3)));
    appendFileSync(file, Buffer.alloc(4096, 0x55));
    const cut = search(ws, ["annotation", "--json", "--limit", "500"]);
    expect(cut.code, cut.stderr).toBe(0);
    expect(cut.stdout).toBe(good.stdout);
    expect(existsSync(file)).toBe(true);
  });

  it("pixir index reports counts and sizes; --rebuild starts over", () => {
    const ws = copyOfLogs(base);
    const first = JSON.parse(run("pixir", ["index", "--json"], { cwd: ws }).stdout);
    expect(first).toMatchObject({ logs: logIds(ws).length, added: logIds(ws).length, unchanged: 0, index_path: ".pixir/index/search.sqlite" });
    expect(first.documents).toBeGreaterThan(100);
    expect(first.index_bytes).toBeLessThan(2 * first.log_bytes);
    const second = JSON.parse(run("pixir", ["index", "--json"], { cwd: ws }).stdout);
    expect(second).toMatchObject({ added: 0, unchanged: logIds(ws).length, indexed_bytes: 0, documents: first.documents });
    const rebuilt = JSON.parse(run("pixir", ["index", "--rebuild", "--json"], { cwd: ws }).stdout);
    expect(rebuilt).toMatchObject({ rebuilt: true, added: logIds(ws).length, documents: first.documents });
  });
});
