// archive/search/file-match.ts: `--file PATH` looked up among the argument paths' suffixes at their slashes
// is the GLOB rule it replaced (the path itself, `*/PATH`, `PATH/*`, `*/PATH/*`, GLOB's `*?[` taken
// literally), checked by SQLite itself on generated paths and PATHs: the same docs, every time.
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { fileCondition, fileRows } from "../../../src/archive/search/file-match.js";

/** The rule as it stood: a scan of every path with GLOBs. */
const globLiteral = (s: string): string => s.replace(/[*?[]/g, (c) => `[${c}]`);
function globCondition(file: string, params: unknown[]): string {
  const p = globLiteral(file.replace(/\/+$/, ""));
  params.push(file, `*/${p}`, `${p}/*`, `*/${p}/*`);
  return "d.doc IN (SELECT doc FROM paths WHERE path = ? OR path GLOB ? OR path GLOB ? OR path GLOB ?)";
}

/** A small deterministic generator (the same cases every run). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

const SEGMENTS = ["", "src", "lib", "a", "a.ts", "x*", "?", "[b]", "é", "😀", "README.md", "src0", "src.", ".", "..", "a b", "0"];

function pathOf(next: () => number): string {
  const n = 1 + Math.floor(next() * 5);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(SEGMENTS[Math.floor(next() * SEGMENTS.length)]!);
  return parts.join("/") + (next() < 0.1 ? "/" : "");
}

describe("--file by suffix lookup", () => {
  it("keeps a path whole and after each of its slashes", () => {
    expect(fileRows("/home/me/src/a.ts")).toEqual([
      { suffix: "/home/me/src/a.ts", whole: 1 },
      { suffix: "home/me/src/a.ts", whole: 0 },
      { suffix: "me/src/a.ts", whole: 0 },
      { suffix: "src/a.ts", whole: 0 },
      { suffix: "a.ts", whole: 0 },
    ]);
    expect(fileRows("a.ts")).toEqual([{ suffix: "a.ts", whole: 1 }]);
  });

  it("finds what the GLOB rule finds, on generated paths and PATHs", () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE docs (doc INTEGER PRIMARY KEY); CREATE TABLE paths (doc INTEGER, path TEXT); CREATE TABLE files (doc INTEGER, suffix TEXT, whole INTEGER); CREATE INDEX files_suffix ON files(suffix);");
    const next = random(38);
    const addDoc = db.prepare("INSERT INTO docs (doc) VALUES (?)");
    const addPath = db.prepare("INSERT INTO paths (doc, path) VALUES (?, ?)");
    const addRow = db.prepare("INSERT INTO files (doc, suffix, whole) VALUES (?, ?, ?)");
    for (let doc = 1; doc <= 600; doc++) {
      addDoc.run(doc);
      for (let k = Math.floor(next() * 3); k > 0; k--) {
        const path = pathOf(next);
        addPath.run(doc, path);
        for (const r of fileRows(path)) addRow.run(doc, r.suffix, r.whole);
      }
    }
    const docsOf = (condition: (file: string, params: unknown[]) => string, file: string): number[] => {
      const params: unknown[] = [];
      const where = condition(file, params);
      return (db.prepare(`SELECT d.doc FROM docs d WHERE ${where} ORDER BY d.doc`).pluck().all(...params) as number[]);
    };
    let found = 0;
    for (let i = 0; i < 800; i++) {
      const file = i % 4 === 0 ? SEGMENTS[i % SEGMENTS.length]! : pathOf(next).replace(/^\//, "");
      const expected = docsOf(globCondition, file);
      expect(docsOf(fileCondition, file), file).toEqual(expected);
      if (expected.length > 0) found++;
    }
    // Not vacuous: most PATHs find some docs.
    expect(found).toBeGreaterThan(400);
  });
});
