// context-vectors.md: every vector of the specification, run against the built `pixir`. The Logs,
// commands and expected outputs are the repository's copy of the specification text
// (test/fixtures/context-vectors.json, support/context-vectors.ts); Pixir's own fold and compaction produced them.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { listTree, readEvents, readLog, ROOT, tempDir, ULID } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { readVectors, VECTORS_SPEC, type Vector } from "../support/context-vectors.js";

const vectors = readVectors();

function workspaceOf(v: Vector): string {
  const ws = tempDir();
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  writeFileSync(path.join(ws, ".pixir", "sessions", "s.ndjson"), v.log.map((l) => `${l}\n`).join(""));
  for (const p of v.payloads) {
    mkdirSync(path.dirname(path.join(ws, p.path)), { recursive: true });
    writeFileSync(path.join(ws, p.path), p.bytes);
  }
  return ws;
}

const pixir = (ws: string, args: string[]) => run("pixir", args, { cwd: ws });
const withoutFlag = (args: string[], flag: string) => args.filter((a) => a !== flag);
const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("context-vectors.md", () => {
  it("holds the 52 vectors the specification announces", () => {
    expect(vectors.map((v) => v.id)).toHaveLength(52);
    expect(new Set(vectors.map((v) => v.id)).size).toBe(52);
  });

  const noSpec = !existsSync(VECTORS_SPEC);
  it.skipIf(noSpec)(`the repository's copy is the specification's text${noSpec ? ` (skipped: ${VECTORS_SPEC} is absent)` : ""}`, () => {
    const r = spawnSync(process.execPath, [path.join(ROOT, "scripts/vectors-to-json.mjs"), "--check", VECTORS_SPEC], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  for (const v of vectors) {
    it(`${v.id}. ${v.title}`, () => {
      const ws = workspaceOf(v);
      const before = listTree(ws);
      const logBefore = readLog(ws, "s");
      if (v.expected !== null) {
        const r = pixir(ws, v.args);
        expect(r.stderr).toBe("");
        expect(r.code).toBe(0);
        const expected = v.expected.text.replaceAll("<WS>", ws);
        if (v.expected.format === "ndjson") {
          // Compare as JSON values, and the lines as text: strings that hold JSON must match byte for byte,
          // and the item's keys are written in the order the vectors list them (Jason's).
          expect(lines(r.stdout).map((l) => JSON.parse(l))).toEqual(lines(expected).map((l) => JSON.parse(l)));
          expect(lines(r.stdout)).toEqual(lines(expected));
        } else if (v.expected.format === "text") expect(r.stdout).toBe(expected);
        else expect(JSON.parse(r.stdout)).toEqual(JSON.parse(expected));
        // Neither `pixir context` nor a dry run writes anything.
        expect(listTree(ws)).toEqual(before);
        expect(readLog(ws, "s")).toBe(logBefore);
      }
      if (v.textForm !== null) {
        const r = pixir(ws, withoutFlag(v.args, "--json"));
        expect(r.code).toBe(0);
        expect(r.stdout).toBe(`${v.textForm}\n`);
      }
      if (v.recording !== null) {
        const dryRun = JSON.parse(v.expected!.text);
        expect(pixir(ws, withoutFlag(v.args, "--json")).stdout).toBe(`${v.recording.dryRunText}\n`);
        const recorded = pixir(ws, withoutFlag(v.args, "--dry-run"));
        expect(recorded.code).toBe(0);
        expect(recorded.json).toEqual({ ...dryRun, recorded: true, compaction_seq: v.recording.seq, compaction_event_id: expect.stringMatching(ULID) });
        const last = readEvents(ws, "s").at(-1);
        expect(last).toMatchObject({ id: recorded.json.compaction_event_id, seq: v.recording.seq, session_id: "s", type: "history_compaction", data: dryRun.event });
        const again = workspaceOf(v);
        expect(pixir(again, withoutFlag(withoutFlag(v.args, "--dry-run"), "--json")).stdout).toBe(`${v.recording.text}\n`);
      }
      for (const row of v.table) {
        const r = pixir(ws, row.args);
        expect(r.code).toBe(row.exit);
        if (row.args.includes("--json")) expect(r.json).toEqual(JSON.parse(row.stdout));
        else expect(r.stdout).toBe(`${row.stdout}\n`);
        expect(listTree(ws)).toEqual(before);
        expect(readLog(ws, "s")).toBe(logBefore);
      }
      expect(v.expected !== null || v.table.length > 0).toBe(true);
    });
  }
});
