// pixir search when the index is damaged or raced (archive.md §2): whatever stands at .pixir/index/search.sqlite
// (nothing, zero bytes, a directory, a symbolic link, a foreign SQLite file, another version, damaged pages
// that only a query reads) and whatever happens around it (.pixir/index a file, a kill -9 during pixir index,
// searches racing an import and appends, a Log truncated or replaced between searches), each search gives
// the hits an index built from nothing gives, or a structured error; never SQLite's words or a stack; the
// Logs untouched.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { binPath, ROOT, tempDir, type RunResult } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES, storedEvents } from "../support/claude.js";

interface Sqlite {
  prepare(sql: string): { all(): unknown[]; run(...args: unknown[]): unknown };
  exec(sql: string): void;
  close(): void;
}
const Database = createRequire(path.join(ROOT, "lib/envelope/package.json"))("better-sqlite3") as new (file: string, options?: { readonly?: boolean }) => Sqlite;

const SPOTTER = "258c7280-ae70-4798-800f-63464d01a85d";
const QUERY = ["annotation", "--json", "--limit", "500"];
const SQLITE_WORDS = /SQLITE_|SqliteError|better-sqlite3|file is not a database|malformed|\n\s+at /i;

const search = (ws: string, args = QUERY): RunResult => run("pixir", ["search", ...args], { cwd: ws });
const indexFile = (ws: string) => path.join(ws, ".pixir", "index", "search.sqlite");

function digestOfLogs(ws: string): string {
  const h = createHash("sha256");
  const dir = path.join(ws, ".pixir", "sessions");
  for (const name of readdirSync(dir).sort()) if (name.endsWith(".ndjson")) h.update(name).update(readFileSync(path.join(dir, name)));
  return h.digest("hex");
}

/** A process of pixir (a kill or a race needs real processes). */
function start(ws: string, args: string[], input?: string): { done: Promise<RunResult>; kill: () => void } {
  const child = spawn(process.execPath, [binPath("pixir"), ...args], { cwd: ws, env: { ...process.env, NO_COLOR: "1" } });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  child.stdin.end(input ?? "");
  const done = new Promise<RunResult>((resolve) => child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), stdout: out, stderr: err } as RunResult)));
  return { done, kill: () => child.kill("SIGKILL") };
}

describe("the search index damaged, raced or pulled away", () => {
  let base = "";
  let good = "";
  beforeAll(() => {
    base = tempDir("pixir-search-faults-");
    const root = tempDir("pixir-search-faults-src-");
    mkdirSync(path.join(root, "spotter"));
    cpSync(path.join(CLAUDE_FIXTURES, "spotter", `${SPOTTER}.jsonl`), path.join(root, "spotter", `${SPOTTER}.jsonl`));
    expect(run("pixir", ["import", "claude", root], { cwd: base }).code).toBe(0);
    const r = search(copy());
    expect(r.code, r.stderr).toBe(0);
    good = r.stdout;
    expect(good.split("\n").length).toBeGreaterThan(10);
  });

  /** A fresh Workspace holding a copy of the Logs (no index). */
  function copy(): string {
    const ws = tempDir("pixir-search-faults-ws-");
    cpSync(path.join(base, ".pixir", "sessions"), path.join(ws, ".pixir", "sessions"), { recursive: true });
    return ws;
  }

  /** The search answers as an index built from nothing does, in pixir's words, the Logs untouched. */
  function answers(ws: string, note?: RegExp): RunResult {
    const before = digestOfLogs(ws);
    const r = search(ws);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(good);
    expect(r.stderr).not.toMatch(SQLITE_WORDS);
    if (note !== undefined) expect(r.stderr).toMatch(note);
    expect(digestOfLogs(ws)).toBe(before);
    return r;
  }

  it("zero bytes, a foreign SQLite file, another version: rebuilt, each with its note", () => {
    const ws = copy();
    mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
    writeFileSync(indexFile(ws), "");
    answers(ws);
    expect(search(ws).stderr).toBe("");
    rmSync(indexFile(ws));
    const foreign = new Database(indexFile(ws));
    foreign.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
    foreign.close();
    answers(ws, /index_rebuilt.*not a pixir search index/);
    const other = new Database(indexFile(ws));
    other.prepare("UPDATE meta SET value = 'pixir-search-0' WHERE key = 'version'").run();
    other.close();
    answers(ws, /index_rebuilt.*another version/);
  });

  it("a directory at its path, or .pixir/index a file: the Logs indexed in memory, saying why (not 'read-only')", () => {
    const ws = copy();
    mkdirSync(indexFile(ws), { recursive: true });
    writeFileSync(path.join(indexFile(ws), "keep"), "a user's file");
    const r = answers(ws, /index_in_memory.*search\.sqlite is a directory/);
    expect(r.stderr).not.toMatch(/read-only/);
    expect(readFileSync(path.join(indexFile(ws), "keep"), "utf8")).toBe("a user's file");
    const ws2 = copy();
    writeFileSync(path.join(ws2, ".pixir", "index"), "not a directory");
    answers(ws2, /index_in_memory.*\.pixir\/index is not a plain directory/);
    expect(readFileSync(path.join(ws2, ".pixir", "index"), "utf8")).toBe("not a directory");
  });

  it("a symbolic link at its path is replaced, never written through", () => {
    const ws = copy();
    const outside = path.join(tempDir("pixir-search-outside-"), "elsewhere.sqlite");
    mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
    symlinkSync(outside, indexFile(ws));
    answers(ws, /index_rebuilt.*symbolic link/);
    expect(existsSync(outside)).toBe(false);
    // Linked to a Log: the Log is left as it was (answers() compares every Log's bytes).
    rmSync(indexFile(ws), { force: true });
    symlinkSync(path.join(ws, ".pixir", "sessions", `${SPOTTER}.ndjson`), indexFile(ws));
    answers(ws, /index_rebuilt/);
  });

  it("damaged pages that only a query reads: rebuilt at that search, with a note; the next search is quiet", () => {
    const ws = copy();
    answers(ws);
    const db = new Database(indexFile(ws), { readonly: true });
    const pages = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'fts_data'").all() as Array<{ pageno: number }>).map((p) => p.pageno);
    db.close();
    expect(pages.length).toBeGreaterThan(10);
    const bytes = readFileSync(indexFile(ws));
    for (const p of pages.slice(2)) bytes.fill(0x5a, (p - 1) * 4096, p * 4096);
    writeFileSync(indexFile(ws), bytes);
    answers(ws, /index_rebuilt.*corrupt/);
    expect(search(ws).stderr).toBe("");
  });

  it("a kill -9 during pixir index, at several moments: the next search answers as a fresh index does", async () => {
    for (const ms of [30, 120, 300]) {
      const ws = copy();
      const job = start(ws, ["index"]);
      await new Promise((r) => setTimeout(r, ms));
      job.kill();
      await job.done;
      answers(ws);
    }
  });

  it("two searches racing an import and appends to two sessions: every run succeeds; then the index holds what a fresh one does", async () => {
    const ws = copy();
    const root = tempDir("pixir-search-race-src-");
    mkdirSync(path.join(root, "p"));
    cpSync(path.join(CLAUDE_FIXTURES, "claude-code-log", "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"), path.join(root, "p", "0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl"));
    const line = (word: string) => `${JSON.stringify({ type: "user_message", data: { text: `racing ${word}` } })}\n`;
    const runs = [
      start(ws, ["search", "racing", "--json"]),
      start(ws, ["import", "claude", root]),
      start(ws, ["append", SPOTTER], line("quokkaone")),
      start(ws, ["search", "annotation", "--json"]),
      start(ws, ["append", "racing-new-session"], line("quokkatwo")),
    ];
    for (const r of await Promise.all(runs.map((x) => x.done))) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(SQLITE_WORDS);
    }
    const fresh = tempDir("pixir-search-race-fresh-");
    cpSync(path.join(ws, ".pixir", "sessions"), path.join(fresh, ".pixir", "sessions"), { recursive: true });
    for (const q of [["racing", "--json"], ["refactoring", "--json", "--limit", "1000"], QUERY]) expect(search(ws, q).stdout, q[0]).toBe(search(fresh, q).stdout);
    expect(search(ws, ["quokkaone", "--json"]).stdout.split("\n").filter(Boolean)).toHaveLength(1);
  });

  it("a Log truncated at a line, then replaced by another file, between searches", () => {
    const ws = copy();
    answers(ws);
    const file = path.join(ws, ".pixir", "sessions", `${SPOTTER}.ndjson`);
    const lines = readFileSync(file, "utf8").split("\n");
    writeFileSync(file, `${lines.slice(0, 300).join("\n")}\n`);
    const kept = new Set(storedEvents(ws, SPOTTER).map((e) => e.seq));
    const cut = search(ws);
    expect(cut.code, cut.stderr).toBe(0);
    const seqs = cut.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l).seq as number);
    expect(seqs.length).toBeGreaterThan(0);
    for (const s of seqs) expect(kept.has(s)).toBe(true);
    expect(seqs).toEqual(good.split("\n").filter(Boolean).map((l) => JSON.parse(l).seq as number).filter((s) => kept.has(s)));
    // Replaced (a new file renamed over it): the whole Log as it was, with a word of its own appended.
    const replacement = `${file}.new`;
    writeFileSync(replacement, `${lines.filter((l) => l !== "").join("\n")}\n`);
    const last = JSON.parse(lines.filter((l) => l !== "").at(-1)!);
    appendFileSync(replacement, `${JSON.stringify({ ...last, seq: last.seq + 1, type: "user_message", data: { text: "replaced zanzibarquokka" } })}\n`);
    renameSync(replacement, file);
    const r = search(ws, ["zanzibarquokka", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l).seq)).toEqual([last.seq + 1]);
    expect(search(ws).stdout).toBe(good);
  });
});
