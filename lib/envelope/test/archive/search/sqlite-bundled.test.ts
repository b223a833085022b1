// index-db.ts bundledOf: a tool's bundle uses its own copy of better-sqlite3's JavaScript only with an
// installed package (whose addon it loads) of the same version; the library itself has no copy.
import Database from "better-sqlite3";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundledOf } from "../../../src/archive/search/index-db.js";
import { bundledSqlite } from "../../../src/archive/search/sqlite-bundled.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-sqlite-bundled-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function manifestOf(version: string): string {
  const file = path.join(dir, `package-${version}.json`);
  writeFileSync(file, JSON.stringify({ name: "better-sqlite3", version }));
  return file;
}

describe("the bundle's better-sqlite3", () => {
  let loads = 0;
  const bundle = { version: "12.11.1", load: () => (loads++, Database) };

  it("is used when the installed package is of its version", () => {
    expect(bundledOf(manifestOf("12.11.1"), bundle)).toBe(Database);
    expect(loads).toBe(1);
  });

  it("is not loaded at all when the installed package is of another version: the installed one is used", () => {
    expect(bundledOf(manifestOf("12.12.0"), bundle)).toBeNull();
    expect(bundledOf(manifestOf("11.10.0"), bundle)).toBeNull();
    expect(loads).toBe(1);
  });

  it("is absent from the library, which loads the installed package", () => {
    expect(bundledSqlite).toBeNull();
    expect(bundledOf(manifestOf("12.11.1"))).toBeNull();
  });
});
