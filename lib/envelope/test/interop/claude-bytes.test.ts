// The byte-level readers of pixir import claude, held to their plain rules (claude-interop.md §2–§3):
// record-facts.ts factsOfTape to factsOfValue (what planning reads of a record), and map-bytes.ts
// draftTexts to recordDrafts + usageDraft with JSON.stringify of each Event's data (what the Logs hold).
// On every line of the real transcripts and on generated records near every rule of §2.1–§2.2: content
// of each kind, blocks of each type and none, fields missing or of the wrong type, usage, escapes.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { readJsonLine, type JsonTape } from "../../src/fast/json-tape.js";
import { draftTexts, Spliced } from "../../src/interop/claude/map-bytes.js";
import { recordDrafts, usageDraft, type MapContext } from "../../src/interop/claude/map.js";
import { factsOfTapeInto, factsOfValueInto, recordTape, type FactsSink } from "../../src/interop/claude/record-facts.js";
import type { JsonObject } from "../../src/event/envelope.js";
import { parseLine } from "../../src/interop/claude/transcript.js";

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../test/fixtures/real-sessions/claude");
const tape = recordTape();

/** A record's facts as a rule hands them to its sink, in order (flags included): what the two rules must agree on. */
const AS_LIST: FactsSink<unknown[]> = { takeFacts: (...facts) => facts };
const factsOfTape = (t: JsonTape, b: Buffer) => factsOfTapeInto(t, b, AS_LIST);
const factsOfValue = (v: JsonObject) => factsOfValueInto(v, AS_LIST);

function realLines(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (name.endsWith(".jsonl")) for (const l of readFileSync(abs, "utf8").split("\n")) if (l.trim() !== "") out.push(l);
    }
  };
  walk(FIXTURES);
  return out;
}

/** The tape of `line`, or null when the byte reader refuses it. */
function read(line: string): Buffer | null {
  const b = Buffer.from(line, "utf8");
  return readJsonLine(b, 0, b.length, tape) ? b : null;
}

/** The plain record of `line` (parsed, its facts from the value). */
const plainRecord = (line: string) => {
  const b = Buffer.from(line, "utf8");
  return parseLine(b, 0, b.length, 7, false, null, true);
};

const contexts: Array<[string, MapContext]> = [
  ["no tool names", { toolName: () => null }],
  ["every call named", { toolName: (id) => `tool:${id}` }],
];

/** draftTexts against the plain mapping, for each path flag, usage choice and context. */
function sameEvents(line: string, b: Buffer): void {
  const rec = plainRecord(line);
  const v = rec.value!;
  for (const path of [true, false]) {
    for (const withUsage of [true, false]) {
      for (const [, ctx] of contexts) {
        expect(readJsonLine(b, 0, b.length, tape)).toBe(true);
        const fast = draftTexts(tape, b, rec.type!, rec.facts!.subtype, path, ctx, withUsage);
        const plain = recordDrafts(rec, v, path, ctx);
        if (withUsage) {
          const u = usageDraft(v);
          if (u !== null) plain.push(u);
        }
        if (fast === null) {
          // Only a compact summary is left to the plain rule.
          expect(plain.some((d) => d.compaction)).toBe(true);
          continue;
        }
        expect(fast.map((d) => [d.type, d.part, `{${d.fields.toString()}}`]), line).toEqual(plain.map((d) => [d.type, d.part, JSON.stringify(d.data)]));
        for (const d of fast) expect(d.fields.byteLength).toBe(Buffer.byteLength(d.fields.toString(), "utf8"));
      }
    }
  }
}

// Generated records: the fields §2–§3 read, each present, absent or of another type.
const text = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom("", "a\nb", 'say "hi"', "tab\there", "é中😀", "back\\slash", "\u0001ctl", "</script>"),
);
const any = fc.oneof(text, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.constant([]), fc.constant({}));
const typeName = fc.constantFrom("text", "image", "tool_result", "tool_use", "server_tool_use", "thinking", "redacted_thinking", "web_search_tool_result", "document", "Text", "");
const block = fc.oneof(
  { arbitrary: text, weight: 1 },
  { arbitrary: fc.integer(), weight: 1 },
  {
    arbitrary: fc.record(
      {
        type: fc.oneof(typeName, fc.integer()),
        text: fc.oneof(text, fc.integer()),
        id: fc.oneof(text, fc.integer()),
        name: fc.oneof(fc.constantFrom("Task", "Agent", "Read"), text, fc.integer()),
        input: fc.oneof(fc.record({ subagent_type: fc.oneof(text, fc.integer()), description: text, prompt: text, n: any }, { requiredKeys: [] }), text),
        tool_use_id: fc.oneof(text, fc.integer()),
        is_error: fc.oneof(fc.boolean(), text),
        content: fc.oneof(text, fc.array(fc.oneof(fc.record({ type: typeName, text: fc.oneof(text, fc.integer()) }, { requiredKeys: [] }), text), { maxLength: 3 }), fc.integer()),
        signature: text,
      },
      { requiredKeys: [] },
    ),
    weight: 8,
  },
);
const usage = fc.record({ input_tokens: fc.oneof(fc.nat(), fc.double({ noNaN: true, noDefaultInfinity: true }), text), output_tokens: fc.nat(), cache_read_input_tokens: fc.nat(), cache_creation_input_tokens: any }, { requiredKeys: [] });
const record = fc.record(
  {
    type: fc.constantFrom("user", "assistant", "system", "progress", "attachment", "file-history-snapshot", "summary"),
    uuid: fc.oneof(text, fc.integer()),
    parentUuid: fc.oneof(text, fc.constant(null), fc.integer()),
    isSidechain: fc.oneof(fc.boolean(), text),
    logicalParentUuid: fc.oneof(text, fc.constant(null)),
    subtype: fc.oneof(fc.constantFrom("compact_boundary", "x"), fc.integer()),
    attachment: fc.oneof(fc.record({ type: fc.oneof(text, fc.integer()) }, { requiredKeys: [] }), text),
    data: fc.record({ type: fc.oneof(text, fc.integer()) }, { requiredKeys: [] }),
    operation: fc.oneof(text, fc.integer()),
    timestamp: fc.oneof(fc.constantFrom("2026-01-02T03:04:05.678Z", "2026-01-02T03:04:05Z", "yesterday"), fc.integer()),
    snapshot: fc.record({ timestamp: fc.oneof(fc.constant("2026-01-02T03:04:05.678Z"), fc.integer()) }, { requiredKeys: [] }),
    message: fc.oneof(
      fc.record(
        {
          id: fc.oneof(text, fc.integer()),
          model: fc.oneof(fc.constantFrom("claude-x", "<synthetic>"), fc.integer()),
          role: text,
          content: fc.oneof({ arbitrary: fc.array(block, { maxLength: 5 }), weight: 6 }, { arbitrary: text, weight: 2 }, { arbitrary: any, weight: 1 }),
          stop_reason: fc.oneof(fc.constant(null), text, any),
          usage: fc.oneof(usage, text),
        },
        { requiredKeys: [] },
      ),
      text,
    ),
    requestId: fc.oneof(text, fc.integer()),
    isMeta: fc.oneof(fc.boolean(), text),
    isCompactSummary: fc.oneof(fc.boolean(), fc.constant(1)),
    isApiErrorMessage: fc.oneof(fc.boolean(), text),
    toolUseResult: fc.oneof(fc.record({ agentId: fc.oneof(text, fc.integer()), status: fc.oneof(text, fc.integer()), totalDurationMs: fc.oneof(fc.nat(), text) }, { requiredKeys: [] }), text),
  },
  { requiredKeys: ["type"] },
);
const recordLine = record.map((r) => JSON.stringify(r));

describe("the real transcripts", () => {
  const lines = realLines();
  it("are read by the byte reader, line after line, with the facts and Events of the plain rules", () => {
    expect(lines.length).toBeGreaterThan(1000);
    for (const line of lines) {
      const b = read(line);
      expect(b, line.slice(0, 200)).not.toBeNull();
      expect(factsOfTape(tape, b!), line.slice(0, 200)).toEqual(factsOfValue(JSON.parse(line)));
      sameEvents(line, b!);
    }
  });
});

describe("generated records", () => {
  it("factsOfTape gives factsOfValue's facts", () => {
    let read0 = 0;
    fc.assert(
      fc.property(recordLine, (line) => {
        const b = read(line);
        if (b === null) return;
        read0++;
        expect(factsOfTape(tape, b)).toEqual(factsOfValue(JSON.parse(line)));
      }),
      { numRuns: 3000 },
    );
    expect(read0).toBeGreaterThan(2500);
  });

  it("draftTexts gives the Events recordDrafts and usageDraft give, byte for byte", () => {
    fc.assert(
      fc.property(recordLine, (line) => {
        const b = read(line);
        if (b !== null) sameEvents(line, b);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("a Spliced text", () => {
  // writeInto (what serializeEach writes a Log line with) is held to the bytes of its parts, short and long ranges.
  const source = fc.string({ unit: "binary", maxLength: 200 }).map((t) => Buffer.from(t, "utf8"));
  const part = (len: number) =>
    fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.tuple(fc.nat({ max: len }), fc.nat({ max: len })).map(([a, b]) => [Math.min(a, b), Math.max(a, b)] as [number, number]),
    );
  it("writeInto writes the bytes of its parts, byteLength of them", () => {
    fc.assert(
      fc.property(
        source.chain((buf) => fc.tuple(fc.constant(buf), fc.array(part(buf.length), { maxLength: 12 }), fc.nat({ max: 16 }))),
        ([buf, parts, at]) => {
          const text = new Spliced(buf);
          for (const p of parts) {
            if (typeof p === "string") text.lit(p);
            else text.range(p[0], p[1]);
          }
          const out = Buffer.alloc(at + text.maxBytes);
          const end = text.writeInto(out, at);
          const expected = parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : buf.subarray(p[0], p[1])));
          expect(out.subarray(at, end)).toEqual(Buffer.concat(expected));
          expect(end - at).toBe(text.byteLength);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
