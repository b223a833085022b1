// archive/search: the query language, what an Event gives the index, snippets, file arguments, and the
// index itself on small generated Workspaces (the real transcripts are in test/archive/search.test.ts).
import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, rmSync, appendFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { patchPaths, toolFilePaths } from "../../../src/event/file-args.js";
import { PixirError } from "../../../src/event/errors.js";
import { openSearchIndex } from "../../../src/archive/search/index-db.js";
import { ftsAll, indexedText, parseQuery, piecesOf, termPattern, textMatches } from "../../../src/archive/search/query.js";
import { runSearch, snippetOf, type SearchFilters } from "../../../src/archive/search/search.js";
import { searchableOf } from "../../../src/archive/search/searchable.js";
import { updateSearchIndex } from "../../../src/archive/search/update.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const NO_FILTERS: SearchFilters = { sessions: null, session: null, types: null, tool: null, file: null, since: null, until: null };

function workspace(): string {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-search-unit-"));
  dirs.push(ws);
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  return ws;
}

const line = (id: string, seq: number, type: string, data: Record<string, unknown>): string =>
  `${JSON.stringify({ id: `${id}-${seq}`, session_id: id, seq, ts: `2026-06-30T10:00:${String(seq % 60).padStart(2, "0")}Z`, type, data })}\n`;

function writeLog(ws: string, id: string, lines: string[]): string {
  const file = path.join(ws, ".pixir", "sessions", `${id}.ndjson`);
  writeFileSync(file, lines.join(""));
  return file;
}

function searchIn(ws: string, words: string[], filters: Partial<SearchFilters> = {}) {
  const index = openSearchIndex(ws);
  try {
    updateSearchIndex(index.db, ws);
    return runSearch(index.db, ws, { query: parseQuery(words), filters: { ...NO_FILTERS, ...filters }, sort: "time", limit: 100 });
  } finally {
    index.db.close();
  }
}

describe("the query language", () => {
  it("splits words, phrases, exclusions and prefixes", () => {
    expect(parseQuery(['parse_line "working tree" -docker', "src/lib*"])).toEqual({ include: ["parse_line", "working tree", "src/lib"], exclude: ["docker"] });
    expect(parseQuery(['-"two words"'])).toEqual({ include: [], exclude: ["two words"] });
  });
  it("refuses what it cannot run, in its own words", () => {
    for (const q of ['"open', '""', "-", "*"]) {
      const err = (() => {
        try {
          parseQuery([q]);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err, q).toBeInstanceOf(PixirError);
      expect((err as PixirError).kind).toBe("usage");
      expect((err as PixirError).details.field).toBe("query");
    }
  });
  it("hands every word to FTS5 as a quoted phrase of its pieces, so nothing is read as syntax", () => {
    expect(ftsAll(["parse_line", 'a"b', "NEAR(x)", "->"])).toBe('"parse line"* AND "a b"* AND "NEAR x"*');
    const db = new Database(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(body)");
    for (const q of ["AND", "OR NOT", "x:y", "^a", "(b", "c)", "{d}", "e*f", "col:g", "+h"]) expect(() => db.prepare("SELECT * FROM t WHERE t MATCH ?").all(ftsAll([q]))).not.toThrow();
    db.close();
  });
  it("checks words without letters or digits on the text", () => {
    expect(textMatches("a -> b", { include: ["->"], exclude: [] })).toBe(true);
    expect(textMatches("a => b", { include: ["->"], exclude: [] })).toBe(false);
    expect(textMatches("a -> b", { include: [], exclude: ["->"] })).toBe(false);
  });
  it("marks what the index matched: pieces in order, any separators between", () => {
    const p = termPattern(["parse_line"])!;
    expect("call parse-lines() here".match(p)?.[0]).toBe("parse-line");
  });
});

describe("pieces of an ASCII word", () => {
  it("are the pieces the Unicode rule finds (a fast path without the Unicode tables)", () => {
    const unicodePieces = (t: string) => t.match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? [];
    let seed = 11;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let i = 0; i < 3000; i++) {
      const term = Array.from({ length: 1 + next(16) }, () => String.fromCharCode(next(128))).join("");
      expect(piecesOf(term), JSON.stringify(term)).toEqual(unicodePieces(term));
    }
    expect(piecesOf("0x1F src/lib_a-b")).toEqual(["0x1F", "src", "lib", "a", "b"]);
    expect(piecesOf("café_x")).toEqual(["café", "x"]);
  });
});

describe("scripts without spaces between words", () => {
  it("make each Han, kana or Hangul character a piece, a supplementary ideograph whole", () => {
    expect(piecesOf("CLAUDE.mdファイルを最新")).toEqual(["CLAUDE", "md", "フ", "ァ", "イ", "ル", "を", "最", "新"]);
    expect(piecesOf("𠮷野家")).toEqual(["𠮷", "野", "家"]);
    expect(piecesOf("안녕하세요")).toEqual(["안", "녕", "하", "세", "요"]);
    expect(indexedText("a𠮷b").replace(/ /g, "")).toBe("a𠮷b");
    expect(indexedText("plain ASCII → arrows")).toBe("plain ASCII → arrows");
    const m = termPattern(["最新"])!.exec("を最新の");
    expect(m?.[0]).toBe("最新");
  });
});

describe("snippets", () => {
  it("are about 160 characters around the first match, whitespace collapsed, with the matches' places", () => {
    const text = `${"lorem ipsum ".repeat(30)}the NEEDLE\n\nis here ${"dolor sit ".repeat(30)}`;
    const s = snippetOf(text, termPattern(["needle"]));
    expect(s.snippet.startsWith("…")).toBe(true);
    expect(s.snippet.endsWith("…")).toBe(true);
    expect(s.snippet.length).toBeLessThanOrEqual(162);
    expect(s.match_offsets).toHaveLength(1);
    const [a, b] = s.match_offsets[0]!;
    expect(s.snippet.slice(a, b)).toBe("NEEDLE");
    expect(s.snippet).toContain("NEEDLE is here");
  });
});

describe("what an Event gives the index", () => {
  it("reads messages, reasoning, tool calls and results, summaries; never import records", () => {
    expect(searchableOf("user_message", { text: "hi", claude: { record: { secret: "raw" } } })?.text).toBe("hi");
    expect(searchableOf("assistant_message", { content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })?.text).toBe("a\nb");
    expect(searchableOf("reasoning", { item: { type: "reasoning", summary: [{ type: "summary_text", text: "why" }] } })?.text).toBe("why");
    const call = searchableOf("tool_call", { name: "Edit", args: { file_path: "/r/src/a.ts", old_string: "x", replace_all: false }, codex: { raw: "no" } });
    expect(call).toMatchObject({ text: "Edit\n/r/src/a.ts\nx", tool: "Edit", paths: ["/r/src/a.ts"] });
    expect(searchableOf("tool_result", { tool_name: "Bash", output: "done" })).toMatchObject({ text: "done", tool: "Bash", role: "tool" });
    expect(searchableOf("history_compaction", { summary: "compacted" })?.role).toBe("system");
    expect(searchableOf("workflow_event", { event: "claude_transcript" })).toBeNull();
    expect(searchableOf("provider_usage", { input: 3 })).toBeNull();
    expect(searchableOf("user_message", { text: "   " })).toBeNull();
  });
  it("finds the file arguments of Claude, Codex and pi tools", () => {
    expect(toolFilePaths("Read", { file_path: "/a/b.ts", limit: 5 })).toEqual(["/a/b.ts"]);
    expect(toolFilePaths("NotebookEdit", { notebook_path: "/n.ipynb" })).toEqual(["/n.ipynb"]);
    expect(toolFilePaths("Bash", { command: "cat /etc/hosts" })).toEqual([]);
    const patch = "*** Begin Patch\n*** Update File: src/x.rs\n@@\n-a\n+b\n*** Add File: src/y.rs\n+c\n*** End Patch";
    expect(toolFilePaths("apply_patch", { input: patch })).toEqual(["src/x.rs", "src/y.rs"]);
    expect(toolFilePaths("shell", { command: ["apply_patch", patch] })).toEqual(["src/x.rs", "src/y.rs"]);
    expect(toolFilePaths("apply_patch", patch)).toEqual(["src/x.rs", "src/y.rs"]);
    // Codex exec_command: the patch in a heredoc of its command line, one string.
    expect(toolFilePaths("exec_command", { cmd: `apply_patch <<'PATCH'\n${patch}\nPATCH`, workdir: "/w" })).toEqual(["src/x.rs", "src/y.rs"]);
    expect(toolFilePaths("shell_command", { command: `apply_patch <<'EOF'\n${patch}\nEOF` })).toEqual(["src/x.rs", "src/y.rs"]);
    expect(patchPaths("*** Move to: b.txt")).toEqual(["b.txt"]);
    expect(toolFilePaths("edit", { path: "notes.md" })).toEqual(["notes.md"]);
  });
});

describe("opening the index", () => {
  it("notes a missing index it builds, a corrupt or foreign one it replaces; --rebuild says nothing", () => {
    const ws = workspace();
    const codes = (rebuild = false) => {
      const index = openSearchIndex(ws, rebuild);
      index.db.close();
      return index.notes.map((n) => n.code);
    };
    expect(codes()).toEqual(["index_created"]);
    expect(codes()).toEqual([]);
    expect(codes(true)).toEqual([]);
    const file = path.join(ws, ".pixir", "index", "search.sqlite");
    writeFileSync(file, "x".repeat(5000));
    expect(codes()).toEqual(["index_rebuilt"]);
    const db = new Database(file);
    db.prepare("UPDATE meta SET value = 'pixir-search-0' WHERE key = 'version'").run();
    db.close();
    expect(codes()).toEqual(["index_rebuilt"]);
    expect(codes()).toEqual([]);
  });
});

describe("the index on generated Logs", () => {
  it("finds words case-insensitively across punctuation, with filters", () => {
    const ws = workspace();
    writeLog(ws, "s1", [
      line("s1", 0, "workflow_event", { event: "claude_transcript", note: "provenanceword" }),
      line("s1", 1, "user_message", { text: "Please fix Parse_Line in src/lib/reader.ts" }),
      line("s1", 2, "tool_call", { call_id: "c1", name: "Edit", args: { file_path: "/home/u/p/src/lib/reader.ts", new_string: "0x1F" } }),
      line("s1", 3, "tool_result", { call_id: "c1", tool_name: "Edit", output: "ok edited" }),
    ]);
    expect(searchIn(ws, ["parse-line"]).map((h) => h.seq)).toEqual([1]);
    expect(searchIn(ws, ["SRC/LIB"]).map((h) => h.seq)).toEqual([2, 1]);
    expect(searchIn(ws, ["0x1f"]).map((h) => h.seq)).toEqual([2]);
    expect(searchIn(ws, ["provenanceword"])).toEqual([]);
    expect(searchIn(ws, [], { file: "lib/reader.ts" }).map((h) => h.seq)).toEqual([2]);
    expect(searchIn(ws, [], { file: "src/lib" }).map((h) => h.seq)).toEqual([2]);
    expect(searchIn(ws, [], { file: "reader.ts.bak" })).toEqual([]);
    expect(searchIn(ws, ["edit"], { tool: "edit", types: ["tool_result"] }).map((h) => h.seq)).toEqual([3]);
    expect(searchIn(ws, ["src", "-edit"]).map((h) => h.seq)).toEqual([1]);
  });

  it("follows appends, rewrites, torn tails and removals", () => {
    const ws = workspace();
    const file = writeLog(ws, "s1", [line("s1", 1, "user_message", { text: "alpha" })]);
    expect(searchIn(ws, ["alpha"]).map((h) => h.seq)).toEqual([1]);
    appendFileSync(file, line("s1", 2, "assistant_message", { text: "beta" }));
    // A torn tail waits for its newline.
    appendFileSync(file, line("s1", 3, "user_message", { text: "gamma" }).slice(0, 40));
    expect(searchIn(ws, ["beta"]).map((h) => h.seq)).toEqual([2]);
    expect(searchIn(ws, ["gamma"])).toEqual([]);
    writeLog(ws, "s1", [line("s1", 1, "user_message", { text: "delta" }), line("s1", 2, "assistant_message", { text: "beta" }), line("s1", 3, "user_message", { text: "gamma" })]);
    expect(searchIn(ws, ["alpha"])).toEqual([]);
    expect(searchIn(ws, ["delta"]).map((h) => h.seq)).toEqual([1]);
    expect(searchIn(ws, ["gamma"]).map((h) => h.seq)).toEqual([3]);
    rmSync(file);
    expect(searchIn(ws, ["beta"])).toEqual([]);
  });

  it("keeps in_context and inherited_by from the Logs' own records", () => {
    const ws = workspace();
    writeLog(ws, "p", [
      line("p", 1, "user_message", { text: "early word" }),
      line("p", 2, "assistant_message", { text: "early reply" }),
      line("p", 3, "history_compaction", { summary: "word summary", range: { from_seq: 0, to_seq: 2 } }),
      line("p", 4, "user_message", { text: "late word" }),
    ]);
    const fork = (child: string, parent: string, to: number, n: number, strategy: string) =>
      line(child, 0, "session_fork", { parent_session_id: parent, forked_to_seq: to, replay_event_count: n, strategy });
    writeLog(ws, "c1", [fork("c1", "p", 1, 1, "share_v1"), line("c1", 2, "user_message", { text: "child word" })]);
    writeLog(ws, "c2", [fork("c2", "p", 4, 3, "replay_v1"), line("c2", 1, "user_message", { text: "early word" }), line("c2", 2, "assistant_message", { text: "early reply" }), line("c2", 3, "user_message", { text: "late word" })]);
    writeLog(ws, "g", [fork("g", "c2", 1, 1, "share_v1")]);
    const hits = searchIn(ws, ["word"]);
    const at = (s: string, seq: number) => hits.find((h) => h.session_id === s && h.seq === seq);
    expect(hits.filter((h) => h.session_id === "c2")).toEqual([]);
    expect(at("p", 1)).toMatchObject({ in_context: false, inherited_by: 3 });
    expect(at("p", 3)).toMatchObject({ in_context: true, inherited_by: 0 });
    expect(at("p", 4)).toMatchObject({ in_context: true, inherited_by: 1 });
    expect(at("c1", 2)).toMatchObject({ in_context: true, inherited_by: 0 });
    // --session of a fork: its own Events and the prefix it holds, at their owners.
    expect(searchIn(ws, ["word"], { session: "g" }).map((h) => `${h.session_id}#${h.seq}`)).toEqual(["p#1"]);
    expect(searchIn(ws, ["word"], { session: "c1" }).map((h) => `${h.session_id}#${h.seq}`).sort()).toEqual(["c1#2", "p#1"]);
  });
});
