// The import index of pixir import claude (interop/claude/known.ts): an unchanged transcript is known by
// its stat and the root Log's last checkpoint, and is not read again; any write to it, even one that keeps
// its size and puts its mtime back, sends it through the full check (§4.3 step 3).
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";

// Every path the importer opens or reads whole, to show which transcripts it read.
const opened: string[] = [];
vi.mock("node:fs", async (original) => {
  const fs = await original<typeof import("node:fs")>();
  return {
    ...fs,
    openSync: (p: any, ...rest: any[]) => {
      opened.push(String(p));
      return (fs.openSync as any)(p, ...rest);
    },
    readFileSync: (p: any, ...rest: any[]) => {
      opened.push(String(p));
      return (fs.readFileSync as any)(p, ...rest);
    },
  };
});

const REL = "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl";
const ROOT_ID = "71c9afe9-d9cc-4583-86b3-e62ba682b83a";
const indexDir = (ws: string): string => path.join(ws, ".pixir", "claude-imports");
/** Every line of every index file, parsed. */
const indexEntries = (ws: string): Array<Record<string, any>> =>
  readdirSync(indexDir(ws)).flatMap((n) =>
    readFileSync(path.join(indexDir(ws), n), "utf8")
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l)),
  );
const importAll = (ws: string, root: string, dryRun = false) => importClaude(ws, { paths: [root], program: "pixir import claude", env: {}, dryRun });

/** A Workspace with the fixture transcript imported once (its own copy, under a projects root); nothing opened since. */
async function importedOnce(): Promise<{ ws: string; root: string; file: string }> {
  const ws = tempDir();
  const root = tempDir("pixir-claude-known-");
  const file = path.join(root, REL);
  cpSync(path.join(CLAUDE_FIXTURES, REL), file);
  expect((await importAll(ws, root)).imports[0]!.status).toBe("created");
  opened.length = 0;
  return { ws, root, file };
}

describe("the import index (.pixir/claude-imports)", () => {
  let ws = "";
  let root = "";
  let file = "";
  beforeEach(async () => {
    ({ ws, root, file } = await importedOnce());
  });

  it("an unchanged transcript is reported unchanged without being read", async () => {
    expect(indexEntries(ws).map((e) => e.root)).toEqual([ROOT_ID]);
    const again = await importAll(ws, root);
    expect(again.imports[0]).toMatchObject({ status: "unchanged", records: 15 });
    expect(opened.filter((p) => p.startsWith(root))).toEqual([]);
  });

  it("without its entry, the transcript is read and hashed once, and the entry is written again", async () => {
    rmSync(path.join(ws, ".pixir", "claude-imports"), { recursive: true });
    expect((await importAll(ws, root)).imports[0]!.status).toBe("unchanged");
    expect(opened.filter((p) => p === file).length).toBeGreaterThan(0);
    expect(indexEntries(ws).map((e) => e.root)).toEqual([ROOT_ID]);
    opened.length = 0;
    expect((await importAll(ws, root)).imports[0]!.status).toBe("unchanged");
    expect(opened.filter((p) => p === file)).toEqual([]);
  });

  it("a dry run writes no entry", async () => {
    rmSync(path.join(ws, ".pixir", "claude-imports"), { recursive: true });
    expect((await importAll(ws, root, true)).imports[0]!.status).toBe("unchanged");
    expect(existsSync(path.join(ws, ".pixir", "claude-imports"))).toBe(false);
  });

  it("a byte changed in place, same size and mtime put back, is still found (its ctime moved)", async () => {
    const st = statSync(file);
    const ns = statSync(file, { bigint: true }).mtimeNs;
    const bytes = readFileSync(file);
    const at = bytes.indexOf('"user"');
    bytes[at + 1] = "U".charCodeAt(0);
    writeFileSync(file, bytes);
    // The mtime put back to the nanosecond (touch; utimes takes a double of seconds).
    const touched = spawnSync("touch", ["-m", "-d", `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, "0")}`, file]);
    expect(touched.status).toBe(0);
    expect(statSync(file).size).toBe(st.size);
    expect(statSync(file).mtimeMs).toBe(st.mtimeMs);
    expect(statSync(file).ctimeMs).not.toBe(st.ctimeMs);
    await expect(importAll(ws, root)).rejects.toMatchObject({ kind: "already_exists", details: { reason: "transcript_changed" } });
  });

  it("a grown transcript is read and appended to", async () => {
    const next = readFileSync(path.join(CLAUDE_FIXTURES, REL), "utf8").split("\n")[0]!.replace(/"uuid":"[^"]+"/, '"uuid":"a0000000-0000-4000-8000-000000000001"');
    appendFileSync(file, `${next}\n`);
    expect((await importAll(ws, root)).imports[0]).toMatchObject({ status: "appended", new_records: 1 });
  });
});

describe("the import index's files", () => {
  let ws = "";
  let root = "";
  let file = "";
  beforeEach(async () => {
    ({ ws, root, file } = await importedOnce());
    first = indexEntries(ws).find((e) => e.root === ROOT_ID)!;
  });
  /** An index file named `name` holding `lines`. */
  const writeIndexFile = (name: string, lines: string[]): string => {
    const p = path.join(indexDir(ws), name);
    writeFileSync(p, lines.map((l) => `${l}\n`).join(""));
    return p;
  };
  /** The first run's entry, changed by `over`, as a line. */
  const entry = (over: Record<string, unknown>): string => JSON.stringify({ ...first, ...over });
  let first: Record<string, unknown> = {};

  it("a run writes its entries to one file of lines, whatever the number of transcripts", async () => {
    const other = tempDir();
    const many = tempDir("pixir-claude-known-");
    const sessions = readdirSync(path.join(CLAUDE_FIXTURES, "claude-code-log")).filter((n) => n.endsWith(".jsonl") && !n.startsWith("agent-"));
    expect(sessions.length).toBeGreaterThan(1);
    for (const n of sessions) cpSync(path.join(CLAUDE_FIXTURES, "claude-code-log", n), path.join(many, "claude-code-log", n));
    const res = await importAll(other, many);
    const created = res.imports.filter((i) => i.status === "created").map((i) => i.logs[0]!.session_id);
    expect(created.length).toBeGreaterThan(1);
    expect(readdirSync(indexDir(other))).toHaveLength(1);
    expect(indexEntries(other).map((e) => e.root).sort()).toEqual(created.sort());
  });

  it("a torn line or a line of another shape counts for nothing; of a root's entries the newest counts", async () => {
    const [own] = readdirSync(indexDir(ws));
    appendFileSync(path.join(indexDir(ws), own!), `${entry({ size: 1, at_ms: 9e15 }).slice(0, 40)}\n${entry({ size: "1", at_ms: 9e15 })}\n`);
    // An older entry that no longer matches, in another file: the newer one still counts.
    writeIndexFile("1-1-00000000.ndjson", [entry({ size: 1, at_ms: 1 })]);
    expect((await importAll(ws, root)).imports[0]!.status).toBe("unchanged");
    expect(opened.filter((p) => p === file)).toEqual([]);
    // A newer entry that does not match: the file is read and hashed, and an entry that matches is added.
    writeIndexFile("2-1-00000000.ndjson", [entry({ size: 1, at_ms: Date.now() + 60_000 })]);
    expect((await importAll(ws, root)).imports[0]!.status).toBe("unchanged");
    expect(opened.filter((p) => p === file).length).toBeGreaterThan(0);
  });

  it("a writing run that finds many files merges those not written to for an hour into one", async () => {
    const old = Date.now() / 1000 - 2 * 3600;
    const madeUp = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
    madeUp.forEach((id, i) => utimesSync(writeIndexFile(`${1000 + i}-1-00000000.ndjson`, [entry({ root: id, at_ms: 1000 + i })]), old, old));
    // A second, older entry of one root: the merge keeps the newest.
    utimesSync(writeIndexFile("999-1-00000000.ndjson", [entry({ root: madeUp[0], at_ms: 999, size: 1 })]), old, old);
    const recent = writeIndexFile("3000-1-00000000.ndjson", [entry({ root: "00000000-0000-4000-8000-999999999999", at_ms: 3000 })]);
    // A new transcript, so that the run writes.
    const second = path.join(root, "claude-code-log", "5d9ebcd0-0000-4000-8000-000000000000.jsonl");
    cpSync(file, second);
    const before = readdirSync(indexDir(ws));
    await importAll(ws, root).catch(() => undefined);
    const after = readdirSync(indexDir(ws));
    // The 21 old files went; the first run's file (recent), the recent one, the merged one and this run's stay.
    expect(before).toHaveLength(23);
    expect(after).toHaveLength(4);
    expect(existsSync(recent)).toBe(true);
    const entries = indexEntries(ws);
    for (const id of madeUp) expect(entries.filter((e) => e.root === id)).toHaveLength(1);
    expect(entries.find((e) => e.root === madeUp[0])!.at_ms).toBe(1000);
    // What the index knew before the merge it still knows: the first transcript is not read again.
    opened.length = 0;
    expect((await importAll(ws, root)).imports.find((i) => i.file.endsWith(REL))!.status).toBe("unchanged");
    expect(opened.filter((p) => p === file)).toEqual([]);
  });
});
