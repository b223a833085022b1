// What an import plan holds per record and per Event (docs/performance.md, "Round 5"): a huge session's
// memory is its record count times these, so each is held small here, at the level of the plan's objects
// (no RSS, no timings). A record keeps its flags in one number and its chain fields in its facts; its facts
// keep the rare ones in one object or none; the plan's per-record state (the Log of each record, its ts, its
// last seq) is columns by the record's place, not hash tables keyed by records; an Event of a file read in
// blocks keeps neither its id, its ts nor its text; an Event on disk keeps neither its id, ts nor record uuid.
// Each would fail if that state went back to an object or a string per record.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { discoverUnits, type SourceFile } from "../../lib/envelope/src/interop/claude/discover.js";
import { HeldEvent } from "../../lib/envelope/src/interop/claude/held-event.js";
import { planBatch } from "../../lib/envelope/src/interop/claude/plan.js";
import { TextEvent } from "../../lib/envelope/src/interop/claude/plan-heads.js";
import { RecordMap, RecordSet } from "../../lib/envelope/src/interop/claude/record-columns.js";
import { RecordFacts } from "../../lib/envelope/src/interop/claude/record-facts.js";
import { readTranscript } from "../../lib/envelope/src/interop/claude/source.js";
import { loadExisting } from "../../lib/envelope/src/interop/claude/workspace-logs.js";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES, logIds } from "../support/claude.js";

/** The largest real transcript, read in blocks (as a file of 8 MiB or more is), and its batch planned. */
function plannedInBlocks() {
  const files = discoverUnits([CLAUDE_FIXTURES]).flatMap((u) => [...u.subagents, ...(u.session ? [u.session] : [])]);
  const src: SourceFile = files.sort((a, b) => readFileSync(b.abs).length - readFileSync(a.abs).length)[0]!;
  const { read, sha256 } = readTranscript(src, true, undefined, undefined, 0);
  const plan = planBatch({ ws: "/ws", src, read, sha256, existing: [], subagents: new Map(), agentLogExists: () => false, linkedChildren: new Set(), unitChildren: new Map(), verifiedLines: 0, forkSource: null });
  return { read, plan };
}

/** Own fields of an object that are strings (what a plan would hold once per record or Event). */
const ownStrings = (o: object): string[] => Object.values(o).filter((v): v is string => typeof v === "string");

describe("an import plan's per-record state", () => {
  it("is a few fields per record: flags in one number, chain fields in the facts, rare facts apart", () => {
    const { read } = plannedInBlocks();
    expect(read.records.length).toBeGreaterThan(1000);
    read.records.forEach((r, i) => {
      expect(r.index).toBe(i);
      // line, bytes, start, end, type, transcript, facts, index, flags, extra: no field per flag or per chain fact.
      expect(Object.keys(r).length).toBeLessThanOrEqual(10);
      expect(Object.keys(r)).not.toContain("uuid");
      if (r.facts === null) return;
      expect(r.facts).toBeInstanceOf(RecordFacts);
      expect(Object.keys(r.facts).length).toBeLessThanOrEqual(9);
    });
    // A record that lacks every rare fact holds no object for them.
    const lacking = read.records.filter((r) => r.facts !== null && r.facts.logicalParentUuid === null && r.facts.subtype === null && r.facts.snapshotTimestamp === null && r.facts.toolUseResult === null);
    expect(lacking.length).toBeGreaterThan(100);
    for (const r of lacking) expect((r.facts as unknown as { rare: unknown }).rare).toBeNull();
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
      // The Log id and the type, one string each for every Event; not the id or ts.
      expect(ownStrings(e)).not.toContain(e.id);
      expect(ownStrings(e).length).toBeLessThanOrEqual(3);
    }
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
