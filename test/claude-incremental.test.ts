// The incremental archive of claude-interop.md §4.3 and §6 steps 6–7: a transcript that grew is appended
// to (never rewritten) and still gives the oracle's context and a byte-exact export; a changed earlier
// line is refused with nothing written. Runs the library in-process (the CLI is covered elsewhere).
import { appendFileSync, cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { planClaudeExport } from "../lib/envelope/src/interop/claude/export.js";
import { importClaude } from "../lib/envelope/src/interop/claude/import.js";
import { claudeOracle } from "../lib/envelope/src/interop/claude/oracle.js";
import { contextItems, resourceLookupOf } from "../lib/envelope/src/session/context.js";
import { openHistory } from "../lib/envelope/src/store/loader.js";
import { run, tempDir } from "./support/cli.js";
import { CLAUDE_FIXTURES, heldLines, logIds, logsDir, nonBlankLines, sessionFixtures } from "./support/claude.js";

const SESSIONS = sessionFixtures().filter((f) => f !== "agent-sessions/small.jsonl");

const importAll = (ws: string, root: string, extra: { lenient?: boolean } = {}) =>
  importClaude(ws, { paths: [root], program: "pixir import claude", env: {}, ...extra });

/** A seeded choice of cut points: line boundaries (byte offsets just after a `\n`). */
function cuts(bytes: Buffer, count: number, seed: number): number[] {
  const ends: number[] = [];
  for (let i = bytes.indexOf(0x0a); i >= 0 && i < bytes.length - 1; i = bytes.indexOf(0x0a, i + 1)) ends.push(i + 1);
  let x = seed;
  const out = new Set<number>();
  while (out.size < Math.min(count, ends.length)) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.add(ends[x % ends.length]!);
  }
  return [...out].sort((a, b) => a - b);
}

/** The subagent files of a session fixture, relative to the fixture folder. */
function unitFiles(rel: string): string[] {
  const dir = path.dirname(rel);
  const id = path.basename(rel, ".jsonl");
  const out: string[] = [];
  const sub = path.join(CLAUDE_FIXTURES, dir, id, "subagents");
  if (existsSync(sub)) for (const n of readdirSync(sub)) out.push(path.join(dir, id, "subagents", n));
  return out;
}

function snapshot(ws: string): Map<string, Buffer> {
  return new Map(logIds(ws).map((id) => [id, readFileSync(path.join(logsDir(ws), `${id}.ndjson`))]));
}

async function contextOf(ws: string, id: string) {
  const events = new Map<string, any>();
  for await (const item of (await openHistory(ws, id)).items()) events.set(item.event.id!, item.event);
  const out: any[] = [];
  const history = await openHistory(ws, id);
  for await (const item of contextItems(history, resourceLookupOf(ws, history))) {
    if (item.type === "reasoning") continue;
    const e = events.get(item.id!)!;
    out.push({ type: e.type, uuid: e.data.claude.uuid, part: e.data.claude.part, text: e.data.text ?? e.data.output ?? e.data.summary ?? e.data.call_id });
  }
  return out;
}

const oracleView = (bytes: Buffer) =>
  claudeOracle(bytes).map((x) => ({ type: x.type, uuid: x.uuid, part: x.part, text: x.data.text ?? x.data.output ?? x.data.summary ?? x.data.call_id }));

describe.each(SESSIONS)("incremental import of %s (§6 step 6)", (rel) => {
  const full = readFileSync(path.join(CLAUDE_FIXTURES, rel));
  const lineCuts = cuts(full, 2, full.length);
  // A cut inside a line: the pending tail is left, then completed.
  const midLine = lineCuts[0]! + Math.max(1, Math.floor((full.indexOf(0x0a, lineCuts[0]!) - lineCuts[0]!) / 2));

  it.each([...lineCuts.map((c) => [c, "line"] as const), [midLine, "mid"] as const])("cut at byte %i (%s)", async (cut, kind) => {
    const root = tempDir("pixir-claude-inc-");
    const ws = tempDir();
    for (const f of unitFiles(rel)) cpSync(path.join(CLAUDE_FIXTURES, f), path.join(root, f));
    const target = path.join(root, rel);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, full.subarray(0, cut));
    const first = await importAll(ws, root);
    const mine = first.imports.find((i) => i.file === rel)!;
    if (kind === "mid") expect(mine.pending_tail_bytes).toBeGreaterThan(0);
    const before = snapshot(ws);
    appendFileSync(target, full.subarray(cut));
    const second = await importAll(ws, root);
    const grown = second.imports.find((i) => i.file === rel)!;
    expect(grown.status).toBe(before.size === 0 ? "created" : "appended");
    // Held lines once each, and the earlier bytes of every Log unchanged (appended, never rewritten).
    const held = [...heldLines(ws, grown.session_id!).values()].flat().sort((a, b) => a - b);
    expect(held).toEqual(nonBlankLines(full));
    for (const [id, bytes] of before) expect(readFileSync(path.join(logsDir(ws), `${id}.ndjson`)).subarray(0, bytes.length).equals(bytes), id).toBe(true);
    const exported = await planClaudeExport(ws, grown.logs[0]!.session_id);
    expect(exported.main.bytes.equals(full)).toBe(true);
    expect(await contextOf(ws, grown.leaf_session_id!)).toEqual(oracleView(full));
    // A third run finds nothing new.
    const third = await importAll(ws, root);
    expect(third.imports.every((i) => i.status === "unchanged")).toBe(true);
  });
});

describe("a changed transcript is refused with nothing written (§6 step 7)", () => {
  const rel = "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl";
  const setup = () => {
    const root = tempDir("pixir-claude-chg-");
    const ws = tempDir();
    cpSync(path.join(CLAUDE_FIXTURES, rel), path.join(root, rel));
    const target = path.join(root, rel);
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    return { root, ws, target, before: snapshot(ws) };
  };
  const expectRefused = (ws: string, root: string, before: Map<string, Buffer>) => {
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "transcript_changed", file: rel } });
    const after = snapshot(ws);
    expect([...after.keys()]).toEqual([...before.keys()]);
    for (const [id, bytes] of before) expect(after.get(id)!.equals(bytes)).toBe(true);
    return res.json.error.details;
  };

  it("one byte of an imported line changed", () => {
    const { root, ws, target, before } = setup();
    const bytes = readFileSync(target);
    const at = bytes.indexOf("\"user\"");
    bytes[at + 1] = "U".charCodeAt(0);
    writeFileSync(target, bytes);
    expect(expectRefused(ws, root, before)).toMatchObject({ imported_bytes: bytes.length, file_bytes: bytes.length });
  });

  it("the file truncated", () => {
    const { root, ws, target, before } = setup();
    const bytes = readFileSync(target);
    writeFileSync(target, bytes.subarray(0, bytes.lastIndexOf(0x0a, bytes.length - 2) + 1));
    expectRefused(ws, root, before);
  });

  it("a changed file stops the run before another file's growth is written", () => {
    const { root, ws, target, before } = setup();
    const other = "claude-code-log/4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl";
    const otherBytes = readFileSync(path.join(CLAUDE_FIXTURES, other));
    const half = otherBytes.indexOf(0x0a, otherBytes.length >> 1) + 1;
    writeFileSync(path.join(root, other), otherBytes.subarray(0, half));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const mid = snapshot(ws);
    writeFileSync(path.join(root, other), otherBytes);
    const bytes = readFileSync(target);
    bytes[bytes.length - 10] = bytes[bytes.length - 10] === 0x61 ? 0x62 : 0x61;
    writeFileSync(target, bytes);
    expect(before.size).toBeGreaterThan(0);
    expectRefused(ws, root, mid);
  });

  it("an import after pixir appended native Events is refused (log_diverged)", () => {
    const rel2 = "claude-code-log/4379d1bf-ccb1-414e-a856-9791b73f3af2.jsonl";
    const root = tempDir("pixir-claude-div-");
    const ws = tempDir();
    const full = readFileSync(path.join(CLAUDE_FIXTURES, rel2));
    const half = full.indexOf(0x0a, full.length >> 1) + 1;
    mkdirSync(path.join(root, path.dirname(rel2)), { recursive: true });
    writeFileSync(path.join(root, rel2), full.subarray(0, half));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const id = "4379d1bf-ccb1-414e-a856-9791b73f3af2";
    const note = JSON.stringify({ type: "user_message", data: { text: "a native note" } });
    expect(run("pixir", ["append", id], { cwd: ws, input: `${note}\n` }).code).toBe(0);
    writeFileSync(path.join(root, rel2), full);
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "log_diverged", session_id: id } });
    const lenient = run("pixir", ["import", "claude", root, "--lenient", "--json"], { cwd: ws });
    expect(lenient.code).toBe(0);
    expect(lenient.json.imports[0]).toMatchObject({ status: "skipped", error: { kind: "already_exists" } });
  });
});
