// claude-interop.md §4.2 read in blocks: a source file of WHOLE_FILE_BYTES or more is never held whole
// (source.ts readTranscript, transcript.ts readTranscriptFile); its records keep their places and read
// their bytes from the file again, a window at a time, when mapped and written (source-bytes.ts). Held
// here to the file read whole: the same records, counts and digest, and the same Logs, byte for byte, on
// every real transcript and on a file built to meet the block edges; and a unit read so holds no more of
// the file than a window (what the 256 MiB bound of one huge session rests on).
import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PixirError } from "../../lib/envelope/src/event/errors.js";
import { serializeAll } from "../../lib/envelope/src/interop/claude/apply.js";
import { discoverUnits, type SourceFile } from "../../lib/envelope/src/interop/claude/discover.js";
import type { PixirEvent } from "../../lib/envelope/src/event/envelope.js";
import { planBatch } from "../../lib/envelope/src/interop/claude/plan.js";
import { TextEvent } from "../../lib/envelope/src/interop/claude/plan-heads.js";
import { readTranscript } from "../../lib/envelope/src/interop/claude/source.js";
import { FileBytes } from "../../lib/envelope/src/interop/claude/source-bytes.js";
import { readTranscriptBytes, readTranscriptFile, type ClaudeRecord, type ReadFile } from "../../lib/envelope/src/interop/claude/transcript.js";
import { tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES, factsView } from "../support/claude.js";

const WHOLE = Number.POSITIVE_INFINITY;
const BLOCKS = 0;

/** What a record is, apart from where its bytes are read from. */
const recordView = (r: ClaudeRecord) => ({
  line: r.line,
  start: r.start,
  end: r.end,
  problem: r.problem,
  canonical: r.canonical,
  type: r.type,
  chain: r.chain,
  uuid: r.uuid,
  parentUuid: r.parentUuid,
  dup: r.dup,
  message: r.message,
  facts: factsView(r.facts),
  text: r.text,
});

// The table of first records by uuid as the places of its records (its records are compared in `records`).
const readView = ({ firstByUuid, ...read }: ReadFile) => ({ ...read, records: read.records.map(recordView), firstByUuid: [...(firstByUuid ?? new Map()).entries()].map(([u, r]) => [u, r.index]) });

function sourceFiles(root: string): SourceFile[] {
  return discoverUnits([root]).flatMap((u) => [...u.subagents, ...(u.session ? [u.session] : [])]);
}

/** The Logs a file's batch plans, as text, read whole or in blocks. */
function plannedLogs(src: SourceFile, wholeBelow: number): { logs: Array<[string, string]>; sha256: string; records: ClaudeRecord[]; events: PixirEvent[] } {
  const { read, sha256 } = readTranscript(src, true, undefined, undefined, wholeBelow);
  const plan = planBatch({
    ws: "/ws",
    src,
    read,
    sha256,
    existing: [],
    subagents: new Map(),
    agentLogExists: () => false,
    linkedChildren: new Set(),
    unitChildren: new Map(),
    verifiedLines: 0,
    forkSource: null,
  });
  return { logs: plan.logs.map((l) => [l.id, serializeAll(l.batch, src, plan)]), sha256, records: read.records, events: plan.logs.flatMap((l) => l.batch) };
}

describe("a Claude transcript read in blocks", () => {
  it("gives every real transcript's records, counts and digest as the file read whole, and the same Logs", () => {
    const files = sourceFiles(CLAUDE_FIXTURES);
    expect(files.length).toBeGreaterThan(20);
    for (const src of files) {
      const bytes = readFileSync(src.abs);
      const whole = readTranscriptBytes(bytes, src.file, true, undefined, true, true);
      const digest = createHash("sha256");
      const blocks = readTranscriptFile(src.abs, src.file, true, (b) => digest.update(b));
      expect(readView(blocks), src.file).toEqual(readView(whole));
      expect(digest.digest("hex")).toBe(createHash("sha256").update(bytes.subarray(0, whole.completeBytes)).digest("hex"));
      const a = plannedLogs(src, WHOLE);
      const b = plannedLogs(src, BLOCKS);
      expect(b.sha256).toBe(a.sha256);
      expect(b.logs, src.file).toEqual(a.logs);
    }
  });

  it("meets lines across block edges, a line longer than a block, blank lines, a malformed line and a pending tail", () => {
    const dir = tempDir("pixir-claude-blocks-");
    const lines: string[] = [];
    let parent: string | null = null;
    for (let i = 0; i < 1200; i++) {
      const uuid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
      // Lines of about 1 KiB, one of 1.5 MiB (longer than a read block), escapes and a non-ASCII letter.
      const text = i === 700 ? "y".repeat(1.5 * 1024 * 1024) : `q${i} "é" \n`.repeat(100 + (i % 17));
      lines.push(JSON.stringify({ parentUuid: parent, type: i % 2 === 0 ? "user" : "assistant", message: { role: i % 2 === 0 ? "user" : "assistant", content: text }, uuid, timestamp: "2026-01-01T00:00:00.000Z", sessionId: "11111111-2222-4333-8444-555555555555" }));
      if (i % 97 === 0) lines.push("   \r");
      if (i === 900) lines.push("{not json");
      parent = uuid;
    }
    const root = path.join(dir, "projects");
    const file = path.join(root, "-p", "11111111-2222-4333-8444-555555555555.jsonl");
    mkdirSync(path.dirname(file), { recursive: true });
    const body = Buffer.from(`${lines.join("\n")}\n{"type":"user","pending":`, "utf8");
    writeFileSync(file, body);
    const whole = readTranscriptBytes(body, "f", true, undefined, true, true);
    const blocks = readTranscriptFile(file, "f", true, () => {});
    expect(whole.pendingTailBytes).toBeGreaterThan(0);
    expect(whole.blankLines).toBeGreaterThan(10);
    expect(whole.records.some((r) => r.problem === "malformed_line")).toBe(true);
    expect(readView(blocks)).toEqual(readView(whole));
    const [src] = sourceFiles(root);
    expect(plannedLogs(src!, BLOCKS).logs).toEqual(plannedLogs(src!, WHOLE).logs);
  });

  it("holds a window of the file and no Event text, not the file, once its unit is planned and written", () => {
    const src = sourceFiles(CLAUDE_FIXTURES).sort((a, b) => readFileSync(b.abs).length - readFileSync(a.abs).length)[0]!;
    const size = readFileSync(src.abs).length;
    expect(size).toBeGreaterThan(1024 * 1024);
    const { records, events } = plannedLogs(src, BLOCKS);
    // Its Events hold no text of their own: each is made again from the file when written.
    const texts = events.filter((e): e is TextEvent => e instanceof TextEvent);
    expect(texts.length).toBeGreaterThan(records.length / 2);
    expect(texts.filter((e) => e.holdsText)).toEqual([]);
    expect(plannedLogs(src, WHOLE).events.filter((e) => e instanceof TextEvent && e.holdsText).length).toBe(texts.length);
    const sources = new Set(records.map((r) => r.bytes));
    expect(sources.size).toBe(1);
    const [bytes] = sources;
    expect(bytes).toBeInstanceOf(FileBytes);
    const longest = Math.max(...records.map((r) => r.end - r.start));
    expect((bytes as FileBytes).heldBytes).toBeLessThanOrEqual(Math.max(64 * 1024, longest));
    expect((bytes as FileBytes).heldBytes).toBeLessThan(size / 4);
  });

  it("stops, naming the file, when the file was replaced after it was read", () => {
    const dir = tempDir("pixir-claude-blocks-");
    const file = path.join(dir, "s.jsonl");
    const line = (i: number) => JSON.stringify({ parentUuid: null, type: "user", message: { role: "user", content: `hello ${i}` }, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}` });
    writeFileSync(file, `${line(1)}\n${line(2)}\n`);
    const appended = readTranscriptFile(file, "p/s.jsonl", false, () => {});
    const replaced = readTranscriptFile(file, "p/s.jsonl", false, () => {});
    // Appending keeps the file (a live session grows): its records read as before.
    appendFileSync(file, `${line(3)}\n`);
    expect(appended.records.map((r) => r.text)).toEqual([line(1), line(2)]);
    // A new file in its place is not the file that was read.
    writeFileSync(path.join(dir, "other"), `${line(1)}\n${line(2)}\n`);
    renameSync(path.join(dir, "other"), file);
    let err: unknown = null;
    try {
      void replaced.records[1]!.text;
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PixirError);
    expect((err as PixirError).kind).toBe("invalid_claude_session");
    expect((err as PixirError).details).toMatchObject({ reason: "unreadable_file", file: "p/s.jsonl" });
  });
});
