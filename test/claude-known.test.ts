// The import index of pixir import claude (interop/claude/known.ts): an unchanged transcript is known by
// its stat and the root Log's last checkpoint, and is not read again; any write to it, even one that keeps
// its size and puts its mtime back, sends it through the full check (§4.3 step 3).
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { importClaude } from "../lib/envelope/src/interop/claude/import.js";
import { tempDir } from "./support/cli.js";
import { CLAUDE_FIXTURES } from "./support/claude.js";

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
const importAll = (ws: string, root: string, dryRun = false) => importClaude(ws, { paths: [root], program: "pixir import claude", env: {}, dryRun });

describe("the import index (.pixir/claude-imports)", () => {
  let ws = "";
  let root = "";
  let file = "";
  beforeEach(async () => {
    ws = tempDir();
    root = tempDir("pixir-claude-known-");
    file = path.join(root, REL);
    cpSync(path.join(CLAUDE_FIXTURES, REL), file);
    expect((await importAll(ws, root)).imports[0]!.status).toBe("created");
    opened.length = 0;
  });

  it("an unchanged transcript is reported unchanged without being read", async () => {
    expect(existsSync(path.join(ws, ".pixir", "claude-imports", `${ROOT_ID}.json`))).toBe(true);
    const again = await importAll(ws, root);
    expect(again.imports[0]).toMatchObject({ status: "unchanged", records: 15 });
    expect(opened.filter((p) => p.startsWith(root))).toEqual([]);
  });

  it("without its entry, the transcript is read and hashed once, and the entry is written again", async () => {
    rmSync(path.join(ws, ".pixir", "claude-imports", `${ROOT_ID}.json`));
    expect((await importAll(ws, root)).imports[0]!.status).toBe("unchanged");
    expect(opened.filter((p) => p === file).length).toBeGreaterThan(0);
    expect(existsSync(path.join(ws, ".pixir", "claude-imports", `${ROOT_ID}.json`))).toBe(true);
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
