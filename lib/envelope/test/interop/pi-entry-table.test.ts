// The compact plan of `pixir import pi` (docs/performance.md "Round 10: import pi within the bound"): the
// entry table and its tree must say what parsePiSession and PiTree say of the same file, an entry's line
// read again must migrate to the entry the parse made, and planning reads each entry's line once.
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PixirError } from "../../src/event/errors.js";
import { loadPiEntry, parsePiSession, PiTree, scanPiFile } from "../../src/interop/pi/format.js";
import { IdColumn, PiEntryTableBuilder, PiEntryTree, type PiEntryTable } from "../../src/interop/pi/entry-table.js";
import { planPiFamily, plannedEvents } from "../../src/interop/pi/plan.js";

const FIXTURES = path.resolve(__dirname, "../../../../test/fixtures");

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) return n === "expected" ? [] : jsonlFiles(p);
    return n.endsWith(".jsonl") ? [p] : [];
  });
}

function tableOf(file: string, lenient = false): PiEntryTable {
  const fd = openSync(file, "r");
  try {
    const builder = new PiEntryTableBuilder();
    return builder.finish(scanPiFile(fd, { file, lenient }, builder));
  } finally {
    closeSync(fd);
  }
}

const lineOf = (bytes: Buffer, t: PiEntryTable, i: number): string => bytes.toString("utf8", t.offset(i), t.offset(i) + t.length(i));

/** Files the fixtures lack: v1 ids after skipped and blank lines, parents below their children, a self-parented root. */
function handMadeFiles(): string[] {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-table-hand-"));
  const msg = (extra: object) => JSON.stringify({ type: "message", timestamp: "t", ...extra, message: { role: "user", content: "x" } });
  const files: Record<string, string[]> = {
    "v1-skipped": [
      JSON.stringify({ type: "session", id: "s-v1", timestamp: "t" }),
      msg({}),
      "{broken",
      "",
      msg({}),
      JSON.stringify({ type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 2, tokensBefore: 1 }),
      JSON.stringify({ type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 3, tokensBefore: 1 }),
      JSON.stringify({ type: "compaction", timestamp: "t", summary: "s", firstKeptEntryIndex: 1e21, tokensBefore: 1 }),
      JSON.stringify({ type: "branch_summary", timestamp: "t", fromId: "l3", summary: "b" }),
    ],
    "v3-parents": [
      JSON.stringify({ type: "session", version: 3, id: "s-3", timestamp: "t" }),
      msg({ id: "child", parentId: "later" }),
      msg({ id: "later", parentId: null }),
      msg({ id: "self", parentId: "self" }),
      msg({ id: "under-self", parentId: "self" }),
      msg({ id: "orphan", parentId: "ghost" }),
      msg({ id: "numeric", parentId: 5 }),
    ],
  };
  return Object.entries(files).map(([name, lines]) => {
    const file = path.join(dir, `${name}.jsonl`);
    writeFileSync(file, `${lines.join("\n")}\n`);
    return file;
  });
}

const PI_FILES = [...jsonlFiles(path.join(FIXTURES, "pi")), ...jsonlFiles(path.join(FIXTURES, "pi-extra")), ...handMadeFiles()];

describe.each(PI_FILES.map((f) => path.relative(FIXTURES, f)))("the entry table of %s", (rel) => {
  const file = path.resolve(FIXTURES, rel);
  const bytes = readFileSync(file);
  const parsed = parsePiSession(bytes, { file, lenient: true });
  const tree = new PiTree(parsed.entries, file);
  const t = tableOf(file, true);

  it("has every entry of the parse: its id, type, line, parent and migrated value", () => {
    expect(t.size).toBe(parsed.entries.length);
    expect(t.header).toEqual(parsed.header);
    expect(t.sourceVersion).toBe(parsed.sourceVersion);
    expect(t.skippedLines).toEqual(parsed.skippedLines);
    parsed.entries.forEach((fe, i) => {
      expect([t.id(i), t.type(i), t.lineNo(i), t.parentId(i), t.originalRole(i)]).toEqual([fe.id, fe.type, fe.lineNo, fe.entry.parentId, fe.originalRole]);
      expect(loadPiEntry(lineOf(bytes, t, i), () => t.idsOf(i), t.sourceVersion)).toEqual(fe.entry);
    });
  });

  it("finds each entry by its id, and nothing by another string", () => {
    parsed.entries.forEach((fe, i) => expect(t.rowOf(fe.id)).toBe(i));
    const ids = new Set(parsed.entries.map((fe) => fe.id));
    for (const other of ["l0", "l01", "l1.0", "l", "lx", "1", "", "ghost", `l${parsed.entries.length + 5}`, "l1e+21"]) {
      if (!ids.has(other)) expect(t.rowOf(other)).toBeUndefined();
    }
  });

  it("has PiTree's parents, leaves, orphans, default leaf and paths", () => {
    const et = new PiEntryTree(t, file);
    const at = (e: { index: number } | null) => (e === null ? -1 : e.index);
    parsed.entries.forEach((fe, i) => expect(et.parent(i)).toBe(at(tree.parentOf(fe))));
    expect(et.leaves).toEqual(tree.leaves.map(at));
    expect(et.orphans).toEqual(tree.orphans);
    expect(et.defaultLeaf).toBe(at(tree.defaultLeaf));
    for (const leaf of tree.leaves) {
      const p = tree.path(leaf);
      expect([...et.path(leaf.index)]).toEqual(p.map(at));
      p.forEach((e, d) => expect(et.depth[e.index]).toBe(d));
    }
  });
});

describe("the scan's errors, in the parse's order", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pi-table-"));
  const header = JSON.stringify({ type: "session", version: 3, id: "s-1", timestamp: "2026-01-01T00:00:00.000Z" });
  const entry = (id: string, parentId: string | null) => JSON.stringify({ type: "message", id, parentId, timestamp: "t", message: { role: "user", content: "x" } });
  const cases: Array<[string, string[], string, number | null]> = [
    ["a broken line after an invalid entry", [header, "{}", entry("a", null), "{bad"], "malformed_line", 4],
    ["a broken line after a bad header", [JSON.stringify({ type: "session", version: 9, id: "s" }), "{bad"], "malformed_line", 2],
    ["a bad version before an invalid entry", [JSON.stringify({ type: "session", version: 9, id: "s" }), "{}"], "unsupported_version", 1],
    ["an invalid entry after a duplicate id", [header, entry("a", null), entry("a", "a"), '{"type":1}'], "invalid_entry", 4],
    ["a duplicate id", [header, entry("a", null), entry("b", "a"), entry("a", "b"), entry("b", "a")], "duplicate_entry_id", 4],
    ["a parent cycle", [header, entry("a", "b"), entry("b", "a")], "parent_cycle", 2],
    ["only blank lines", ["", "  "], "missing_header", null],
  ];
  for (const [name, lines, reason, line] of cases) {
    it(`${name}: ${reason}, as parsePiSession says`, () => {
      const file = path.join(dir, `${reason}.jsonl`);
      writeFileSync(file, `${lines.join("\n")}\n`);
      const fail = (f: () => unknown) => {
        try {
          f();
        } catch (err) {
          return (err as PixirError).details;
        }
        return null;
      };
      const viaTable = fail(() => new PiEntryTree(tableOf(file), file));
      const viaParse = fail(() => new PiTree(parsePiSession(readFileSync(file), { file }).entries, file));
      expect(viaTable).toMatchObject({ reason, line });
      expect(viaTable).toEqual(viaParse);
    });
  }
});

describe("planning reads each entry once", () => {
  it("a linear file: one read of each entry to plan its Log, one more to write it", () => {
    const file = path.join(FIXTURES, "pi", "large-session.jsonl");
    const bytes = readFileSync(file);
    const t = tableOf(file);
    const reads = new Uint32Array(t.size);
    const load = (i: number) => {
      reads[i]!++;
      return loadPiEntry(lineOf(bytes, t, i), () => t.idsOf(i), t.sourceVersion);
    };
    const ws = mkdtempSync(path.join(os.tmpdir(), "pi-table-ws-"));
    const family = planPiFamily(ws, t, file, load, () => new PixirError("invalid_pi_session"));
    expect(family.logs).toHaveLength(1);
    expect([...new Set(reads)]).toEqual([1]);
    let count = 0;
    for (const _ of plannedEvents(family.logs[0]!)) count++;
    expect(count).toBe(family.logs[0]!.eventCount);
    expect([...new Set(reads)]).toEqual([2]);
  });
});

describe("IdColumn answers as a Map from id to place", () => {
  it("on generated ids: short, long, empty, non-ASCII, lone surrogates, near misses", () => {
    let seed = 7;
    const rand = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const alphabet = ["a", "b", "0", "-", "é", "\u{1F600}", "\ud800", "\udc00", "l", "1"];
    const word = (len: number) => Array.from({ length: len }, () => alphabet[rand(alphabet.length)]).join("");
    const ids = ["", "x".repeat(1 << 20), ...Array.from({ length: 20000 }, () => word(1 + rand(14)))];
    const column = new IdColumn();
    const map = new Map<string, number>();
    for (const id of ids) {
      if (map.has(id)) continue;
      expect(column.has(id)).toBe(false);
      map.set(id, map.size);
      column.set(id, map.size - 1);
    }
    expect(column.size).toBe(map.size);
    for (const [id, place] of map) {
      expect(column.get(id)).toBe(place);
      expect(column.at(place)).toBe(id);
    }
    for (let k = 0; k < 5000; k++) {
      const probe = word(1 + rand(16));
      expect(column.get(probe)).toBe(map.get(probe));
    }
  });
});
