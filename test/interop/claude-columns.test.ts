// What an import plan holds per record and per Event (docs/performance.md, "Round 5"): a huge session's
// memory is its record count times these, so each is held small here, at the level of the plan's objects
// (no RSS, no timings). A record keeps its flags in one number and its chain fields in its facts; its facts
// keep the rare ones in one object or none; the plan's per-record state (the Log of each record, its ts, its
// last seq) is columns by the record's place, not hash tables keyed by records; an Event of a file read in
// blocks keeps neither its id, its ts nor its text; an Event on disk keeps neither its id, ts nor record uuid.
// Each would fail if that state went back to an object or a string per record.
import { describe, expect, it } from "vitest";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { serializeAll } from "../../lib/envelope/src/interop/claude/apply.js";
import { discoverUnits, type SourceFile } from "../../lib/envelope/src/interop/claude/discover.js";
import { HeldEvent } from "../../lib/envelope/src/interop/claude/held-event.js";
import { planBatch } from "../../lib/envelope/src/interop/claude/plan.js";
import { TextEvent } from "../../lib/envelope/src/interop/claude/plan-heads.js";
import { PlaceIndex, RecordMap, RecordSet, UuidIndex } from "../../lib/envelope/src/interop/claude/record-columns.js";
import { recordTape } from "../../lib/envelope/src/interop/claude/record-facts.js";
import { inLineOrder, isoMillis, parseLine, TranscriptTree, type ClaudeRecord } from "../../lib/envelope/src/interop/claude/transcript.js";
import { readTranscript } from "../../lib/envelope/src/interop/claude/source.js";
import { loadExisting } from "../../lib/envelope/src/interop/claude/workspace-logs.js";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES, logIds } from "../support/claude.js";

/** `src` read in blocks (as a file of 8 MiB or more is: wholeBelow 0) or whole, and its batch planned. */
function planned(src: SourceFile, wholeBelow = 0) {
  const { read, sha256 } = readTranscript(src, true, undefined, undefined, wholeBelow);
  const plan = planBatch({ ws: "/ws", src, read, sha256, existing: [], subagents: new Map(), agentLogExists: () => false, linkedChildren: new Set(), unitChildren: new Map(), verifiedLines: 0, forkSource: null });
  return { read, plan };
}

/** The largest real transcript, read in blocks, and its batch planned. */
function plannedInBlocks() {
  return planned(plannedInBlocksSource());
}

/** The source file of plannedInBlocks. */
function plannedInBlocksSource(): SourceFile {
  const files = discoverUnits([CLAUDE_FIXTURES]).flatMap((u) => [...u.subagents, ...(u.session ? [u.session] : [])]);
  return files.sort((a, b) => readFileSync(b.abs).length - readFileSync(a.abs).length)[0]!;
}

/** Own fields of an object that are strings (what a plan would hold once per record or Event). */
const ownStrings = (o: object): string[] => Object.values(o).filter((v): v is string => typeof v === "string");

describe("an import plan's per-record state", () => {
  it("is a few fields per record: its facts its own fields, flags in one number, rare and tool facts apart", () => {
    const { read } = plannedInBlocks();
    expect(read.records.length).toBeGreaterThan(1000);
    read.records.forEach((r, i) => {
      expect(r.index).toBe(i);
      // line, bytes, start, end, type, index, the uuid's four words, parent, timestamp, messageId, requestId,
      // flags, extra: no object of facts beside the record (docs/performance.md, "Round 11"), no field per
      // flag, per rare fact or per list of tool calls (round 12: the lists are in `extra`, the transcript in
      // the flags), no string of its uuid or of its parent's when that is the record before (round 12).
      expect(Object.keys(r).length).toBeLessThanOrEqual(16);
      if (r.facts === null) return;
      expect(r.facts).toBe(r);
      if (r.uuid !== null && /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(r.uuid)) expect(ownStrings(r)).not.toContain(r.uuid);
      const before = read.records[i - 1];
      if (before !== undefined && before.uuid !== null && r.parentUuid === before.uuid) expect(ownStrings(r)).not.toContain(r.parentUuid);
    });
    // A record that lacks every rare fact holds no object for them, and one with no tool call no list.
    const inner = (r: ClaudeRecord) => r as unknown as { extra: { rare?: unknown; uses?: unknown; results?: unknown } | null };
    const lacking = read.records.filter((r) => r.facts !== null && r.logicalParentUuid === null && r.subtype === null && r.snapshotTimestamp === null && r.toolUseResult === null);
    expect(lacking.length).toBeGreaterThan(100);
    for (const r of lacking) expect(inner(r).extra?.rare).toBeUndefined();
    const noTools = read.records.filter((r) => r.toolUses.length === 0 && r.toolResults.length === 0);
    expect(noTools.length).toBeGreaterThan(100);
    for (const r of noTools) expect([inner(r).extra?.uses, inner(r).extra?.results]).toEqual([undefined, undefined]);
  });

  it("is columns by record place: the owner of each record, its ts and last seq are not Maps keyed by records", () => {
    const { read, plan } = plannedInBlocks();
    expect(plan.owner).toBeInstanceOf(RecordMap);
    expect(plan.owner).not.toBeInstanceOf(Map);
    expect(plan.owner.size).toBe(read.records.length);
    for (const log of plan.logs) expect(log.lastSeq).toBeInstanceOf(RecordMap);
  });

  it("keeps no id, ts or text per Event of a file read in blocks: they are made again from the record", () => {
    const { read, plan } = plannedInBlocks();
    const events = plan.logs.flatMap((l) => l.batch).filter((e): e is TextEvent => e instanceof TextEvent);
    expect(events.length).toBeGreaterThan(read.records.length / 2);
    for (const e of events) {
      expect(e.holdsText).toBe(false);
      // No string of its own (its Log id is its Log's, its type and part are bits and its text's), and
      // four fields: what its Log shares, its record, its seq, its bits (docs/performance.md, "Round 6").
      expect(ownStrings(e)).toEqual([]);
      expect(Object.keys(e).length).toBeLessThanOrEqual(4);
    }
    // What the bits give back: the type and the Log id of each Event, as its line says.
    for (const log of plan.logs) {
      const lines = serializeAll(log.batch, plannedInBlocksSource(), plan).split("\n");
      log.batch.forEach((e, i) => {
        const line = JSON.parse(lines[i]!) as { id: string; type: string; session_id: string };
        expect([e.id, e.type, e.session_id]).toEqual([line.id, line.type, log.id]);
      });
    }
  });

  it("holds a new root Log's Events in one array: its batch is its History", () => {
    const { plan } = plannedInBlocks();
    expect(plan.root.batch).toBe(plan.root.events);
    const files = discoverUnits([CLAUDE_FIXTURES]).flatMap((u) => (u.session ? [u.session] : []));
    const branches = files.flatMap((f) => planned(f, Number.POSITIVE_INFINITY).plan.logs.filter((l) => l.parent !== null));
    expect(branches.length).toBeGreaterThan(0);
    // A branch Log's History starts with its parent's prefix, which it does not store.
    for (const l of branches) expect(l.batch).not.toBe(l.events);
  });

  it("keeps the records of each message id as a table of places chained by place, not a Map of arrays", () => {
    const { read } = plannedInBlocks();
    const tree = new TranscriptTree(read.records.filter((r) => r.transcript === 0));
    type Groups = { first(m: string): ClaudeRecord | undefined; each(m: string, f: (r: ClaudeRecord) => void): void };
    const inner = tree as unknown as { assistantsByMsg: Groups; resultsByMsg: Groups };
    // What a Map of arrays would hold, made plainly from the same messages.
    const plain = new Map<string, { assistants: ClaudeRecord[]; results: ClaudeRecord[] }>();
    const of = (m: string) => plain.get(m) ?? plain.set(m, { assistants: [], results: [] }).get(m)!;
    for (const r of tree.messages) if (r.type === "assistant" && r.messageId !== null) of(r.messageId).assistants.push(r);
    for (const r of tree.messages) {
      const p = tree.parent(r);
      if (r.type === "user" && r.toolResults.length > 0 && p?.type === "assistant" && p.messageId !== null) of(p.messageId).results.push(r);
    }
    expect(plain.size).toBeGreaterThan(100);
    expect([...plain.values()].some((g) => g.assistants.length > 1)).toBe(true);
    for (const [m, g] of plain) {
      expect(inner.assistantsByMsg).not.toBeInstanceOf(Map);
      const each = (t: Groups) => {
        const out: ClaudeRecord[] = [];
        t.each(m, (r) => out.push(r));
        return out;
      };
      expect(each(inner.assistantsByMsg)).toEqual(g.assistants);
      expect(each(inner.resultsByMsg)).toEqual(g.results);
      expect(inner.assistantsByMsg.first(m)).toBe(g.assistants[0]);
    }
    expect(inner.assistantsByMsg.first("no such message")).toBeUndefined();
  });
});

describe("a record of many Events, read in blocks", () => {
  it("gives each of its Events its own text, as the file read whole does (an Event's place is not cut short)", () => {
    const root = tempDir("pixir-claude-columns-many-");
    const file = path.join(root, "-p", "11111111-2222-4333-8444-555555555555.jsonl");
    mkdirSync(path.dirname(file), { recursive: true });
    const n = 300;
    const common = '"sessionId":"11111111-2222-4333-8444-555555555555","isSidechain":false,"timestamp":"2026-01-01T00:00:00.000Z"';
    const uses = [...Array(n).keys()].map((i) => `{"type":"tool_use","id":"toolu_${i}","name":"Bash","input":{"command":"echo ${i}"}}`);
    const results = [...Array(n).keys()].map((i) => `{"type":"tool_result","tool_use_id":"toolu_${i}","content":"out ${i}"}`);
    const lines = [
      `{"parentUuid":null,${common},"type":"user","message":{"role":"user","content":"go"},"uuid":"00000000-0000-4000-8000-000000000001"}`,
      `{"parentUuid":"00000000-0000-4000-8000-000000000001",${common},"type":"assistant","message":{"id":"msg_1","role":"assistant","content":[${uses.join(",")}]},"uuid":"00000000-0000-4000-8000-000000000002"}`,
      `{"parentUuid":"00000000-0000-4000-8000-000000000002",${common},"type":"user","message":{"role":"user","content":[${results.join(",")}]},"uuid":"00000000-0000-4000-8000-000000000003"}`,
    ];
    writeFileSync(file, `${lines.join("\n")}\n`);
    const [src] = discoverUnits([root]).map((u) => u.session!);
    const logs = (wholeBelow: number) => {
      const { plan } = planned(src!, wholeBelow);
      return plan.logs.map((l) => serializeAll(l.batch, src!, plan));
    };
    const blocks = logs(0);
    expect(blocks.join("").split("\n").filter((l) => l.includes('"type":"tool_result"')).length).toBe(n);
    expect(blocks).toEqual(logs(Number.POSITIVE_INFINITY));
  });
});

describe("records put in line order", () => {
  it("are sorted in their own array, as Array#sort sorts them: ascending, descending (a walk's) or mixed", () => {
    const recs = (lines: number[]) => lines.map((line) => ({ line }) as ClaudeRecord);
    for (const lines of [[1, 2, 5, 9], [9, 5, 2, 1], [4, 1, 9, 2, 7], [3], []]) {
      const a = recs(lines);
      const expected = [...a].sort((x, y) => x.line - y.line);
      expect(inLineOrder(a)).toBe(a);
      expect(a).toEqual(expected);
    }
  });

  it("leave a placed Log holding the walk's own array, in line order (its path a copy of it)", () => {
    const { plan } = plannedInBlocks();
    const root = plan.root;
    expect(root.placed.length).toBeGreaterThan(1000);
    expect(root.placed.every((r, i) => i === 0 || root.placed[i - 1]!.line < r.line)).toBe(true);
    expect(root.path).not.toBe(root.placed);
  });
});

describe("the first record of each uuid", () => {
  it("is a table of places outside the heap that answers as a Map of the first record does, many uuids, duplicates and misses", () => {
    // Uuids that share their first characters, some twice: the first record of each stays.
    const records = [...Array(5000).keys()].map((i) => ({ index: i, uuid: `00000000-0000-4000-8000-${String(i % 3700).padStart(12, "0")}` }));
    const table = new UuidIndex(records);
    const plain = new Map<string, (typeof records)[number]>();
    for (const r of records) {
      expect(table.has(r.uuid)).toBe(plain.has(r.uuid));
      expect(table.add(r)).toBe(!plain.has(r.uuid));
      if (!plain.has(r.uuid)) plain.set(r.uuid, r);
    }
    expect(table.size).toBe(plain.size);
    for (const r of records) expect(table.get(r.uuid)).toBe(plain.get(r.uuid));
    expect(table.get("not-a-uuid")).toBeUndefined();
    expect([...table.entries()]).toEqual([...plain.entries()]);
  });

  it("is a table of places by any key of the records, as the first record of each message id is", () => {
    const { read } = readTranscript(plannedInBlocksSource(), true, undefined, undefined, 0);
    const messageId = (r: ClaudeRecord) => r.facts?.messageId ?? null;
    const table = new PlaceIndex(read.records, messageId);
    const plain = new Map<string, ClaudeRecord>();
    for (const r of read.records) {
      const m = messageId(r);
      if (m === null) continue;
      table.add(r);
      if (!plain.has(m)) plain.set(m, r);
    }
    expect(plain.size).toBeGreaterThan(100);
    expect(table.size).toBe(plain.size);
    for (const [m, r] of plain) expect(table.get(m)).toBe(r);
  });

  it("is what reading a file leaves the plan: no Map keyed by uuid", () => {
    const { read } = readTranscript(plannedInBlocksSource(), true, undefined, undefined, 0);
    expect(read.firstByUuid).toBeInstanceOf(UuidIndex);
    for (const r of read.records) if (r.chain) expect(read.firstByUuid!.get(r.uuid!)).toBe(r.dup ? read.records.find((x) => x.chain && !x.dup && x.uuid === r.uuid) : r);
  });
});

describe("a RecordMap and a RecordSet", () => {
  it("answer as a Map and a Set do, for records with a place and records made alone", () => {
    const recs = [...Array(40).keys()].map((i) => ({ index: i % 5 === 0 ? -1 : i * 7 }));
    const map = new RecordMap<number | null>();
    const plain = new Map<object, number | null>();
    const set = new RecordSet();
    const plainSet = new Set<object>();
    recs.forEach((r, i) => {
      if (i % 3 === 0) return;
      map.set(r, i % 4 === 0 ? null : i);
      plain.set(r, i % 4 === 0 ? null : i);
      set.add(r);
      plainSet.add(r);
    });
    map.set(recs[1]!, 99);
    plain.set(recs[1]!, 99);
    expect(map.size).toBe(plain.size);
    for (const r of recs) {
      expect(map.get(r)).toBe(plain.get(r));
      expect(map.has(r)).toBe(plain.has(r));
      expect(set.has(r)).toBe(plainSet.has(r));
    }
  });
});

describe("an Event of a Log on disk, as a grown session's plan holds it", () => {
  it("keeps its facts and place as its own fields, and reads its id, ts and record uuid from its line", async () => {
    const ws = tempDir("pixir-claude-columns-");
    await importClaude(ws, { paths: [CLAUDE_FIXTURES], program: "pixir import claude", env: {} });
    const logs = await loadExisting(ws, logIds(ws));
    // Its own Events (an inherited one keeps the child's id and ts, which no line holds).
    const held = logs.flatMap((l) => l.events).filter((e): e is HeldEvent => e instanceof HeldEvent && e.constructor === HeldEvent);
    expect(held.length).toBeGreaterThan(1000);
    let withUuid = 0;
    for (const e of held) {
      const strings = ownStrings(e);
      expect(strings).not.toContain(e.id);
      expect(strings).not.toContain(e.ts);
      const { uuid } = e.facts;
      if (uuid === null) continue;
      withUuid++;
      expect(strings).not.toContain(uuid);
      expect(uuid).toBe((e.data.claude as { uuid: string }).uuid);
    }
    expect(withUuid).toBeGreaterThan(held.length / 2);
  });
});

describe("a record's transcript", () => {
  it("is kept in its flags below 511 and beside them above, and read back as set, its other flags untouched", () => {
    const bytes = Buffer.from('{"type":"user","uuid":"00000000-0000-4000-8000-000000000001","parentUuid":null,"timestamp":"2026-01-01T00:00:00.000Z"}');
    for (const t of [0, 1, 7, 510, 511, 512, 4096, 70000, 3]) {
      const r = parseLine(bytes, 0, bytes.length, 1, false, recordTape());
      const before = [r.canonical, r.chain, r.uuid, r.timestamp, r.problem];
      r.transcript = t;
      expect(r.transcript).toBe(t);
      r.transcript = 2;
      r.transcript = t;
      expect([r.transcript, r.canonical, r.chain, r.uuid, r.timestamp, r.problem]).toEqual([t, ...before]);
    }
  });
});

describe("a record's timestamp", () => {
  it("is kept as a number exactly when toISOString gives the string back, and read back as the same string", () => {
    const samples: string[] = [];
    // Times toISOString writes (1970 to 2038, leap days, the ends of months and of the range)...
    for (let i = 0; i < 2000; i++) samples.push(new Date(Math.floor(((i * 7919) % 2000) / 2000 * (2 ** 31 - 1) * 1000) + (i % 1000)).toISOString());
    samples.push("2024-02-29T23:59:59.999Z", "2000-02-29T00:00:00.000Z", "1970-01-01T00:00:00.000Z", new Date((2 ** 31 - 1) * 1000 + 999).toISOString());
    // ...and strings it does not: other days, fields out of range, other forms, other years.
    samples.push("2023-02-29T00:00:00.000Z", "1900-02-29T00:00:00.000Z", "2026-04-31T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-01-01T24:00:00.000Z");
    samples.push("2026-01-01T00:60:00.000Z", "2026-01-01T00:00:60.000Z", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.0000Z", "2026-01-01T00:00:00.000+00:00", "1969-12-31T23:59:59.999Z");
    samples.push("2039-01-01T00:00:00.000Z", "2026-01-01 00:00:00.000Z", "2026-01-0aT00:00:00.000Z", "+02026-01-01T00:00:00.000", "", "2026-01-01T00:00:00.000z");
    let kept = 0;
    for (const ts of samples) {
      const line = Buffer.from(JSON.stringify({ type: "user", uuid: "u", parentUuid: null, timestamp: ts }));
      const r = parseLine(line, 0, line.length, 1, false, recordTape(), false);
      expect(r.timestamp).toBe(ts);
      // toISOString's form from 1970; kept as a number up to 2^31 - 1 seconds (a V8 small integer).
      const exact = Date.parse(ts) >= 0 && new Date(Date.parse(ts)).toISOString() === ts;
      expect(isoMillis(ts), ts).toBe(exact ? Date.parse(ts) : -1);
      expect(r.timestampIsIso, ts).toBe(exact && Date.parse(ts) < 2 ** 31 * 1000);
      if (r.timestampIsIso) kept++;
    }
    expect(kept).toBeGreaterThan(2000);
  });
});
