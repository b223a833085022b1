// The incremental archive over many steps (claude-interop.md §4.3, §6 step 6): each real session grows to
// its full length in 12 seeded steps, one import after each; every step appends (never rewrites), holds each
// record once, exports the prefix byte for byte and gives the oracle's context. Apart from
// claude-incremental.test.ts so the two run side by side.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planClaudeExport } from "../../lib/envelope/src/interop/claude/export.js";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES, heldLines, lineCuts, logsDir, nonBlankLines, sessionFixtures, snapshot, unitFiles } from "../support/claude.js";
import { contextView, oracleItems } from "../support/claude-oracle.js";

const SESSIONS = sessionFixtures().filter((f) => f !== "agent-sessions/small.jsonl");
/** Seeded cuts per session: twenty made this the suite's longest file (62 s of a worker); each step still appends. */
const STEPS = 12;
const importAll = (ws: string, root: string) => importClaude(ws, { paths: [root], program: "pixir import claude", env: {} });

describe.each(SESSIONS)("a transcript that grows in 12 steps: %s (§6 step 6)", (rel) => {
  it("is appended to at each step, each record held once, giving the oracle's context and the file back", async () => {
    const full = readFileSync(path.join(CLAUDE_FIXTURES, rel));
    const root = tempDir("pixir-claude-grow-");
    const ws = tempDir();
    for (const f of unitFiles(rel)) cpSync(path.join(CLAUDE_FIXTURES, f), path.join(root, f));
    const target = path.join(root, rel);
    mkdirSync(path.dirname(target), { recursive: true });
    let before = new Map<string, Buffer>();
    let heldBefore = 0;
    for (const cut of [...lineCuts(full, STEPS, full.length + 7), full.length]) {
      const prefix = full.subarray(0, cut);
      writeFileSync(target, prefix);
      const res = await importAll(ws, root);
      const mine = res.imports.find((i) => i.file === rel)!;
      const records = nonBlankLines(prefix).length;
      expect(mine).toMatchObject({ records, new_records: records - heldBefore });
      expect(mine.status).toBe(heldBefore === 0 ? "created" : records > heldBefore ? "appended" : "unchanged");
      heldBefore = records;
      // Earlier bytes of every Log unchanged: appended, never rewritten.
      for (const [id, bytes] of before) expect(readFileSync(path.join(logsDir(ws), `${id}.ndjson`)).subarray(0, bytes.length).equals(bytes), id).toBe(true);
      const held = [...heldLines(ws, mine.session_id!).values()].flat().sort((a, b) => a - b);
      expect(held).toEqual(nonBlankLines(prefix));
      expect((await planClaudeExport(ws, mine.logs[0]!.session_id)).main.bytes.equals(prefix)).toBe(true);
      if (mine.leaf_session_id !== null) expect(contextView(ws, mine.leaf_session_id)).toEqual(oracleItems(prefix));
      before = snapshot(ws);
    }
  });
});

