// The columns a Codex lean plan holds instead of objects (interop/codex/columns.ts, lean-events.ts): a
// Column past its first chunk, LineSeqs against the Map it stands for, and a share child's History read
// through a view of its parent's as the copies the plain rule makes.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PixirEvent } from "../../src/event/envelope.js";
import { derivedUlid } from "../../src/event/ids.js";
import { Column, LineSeqs, NearColumn } from "../../src/interop/codex/columns.js";
import { EventSpill } from "../../src/interop/codex/event-spill.js";
import { FactColumns, LeanHistory } from "../../src/interop/codex/lean-events.js";

describe("Column", () => {
  it("gives back what was pushed, across its first and later chunks", () => {
    const c = new Column((n) => new Int32Array(n));
    for (let i = 0; i < 40_000; i++) c.push(i * 3 - 7);
    expect(c.length).toBe(40_000);
    for (const i of [0, 63, 64, 16_383, 16_384, 39_999]) expect(c.get(i)).toBe(i * 3 - 7);
    c.set(16_384, 5);
    expect(c.get(16_384)).toBe(5);
  });
});

describe("NearColumn", () => {
  it("gives back what was pushed: offsets and times, far apart, NaN, across chunks", () => {
    const step = fc.oneof(fc.nat(5000), fc.constant(0), fc.double({ noNaN: false }), fc.constantFrom(2 ** 31, -(2 ** 31), 2 ** 31 - 1, 2 ** 40, -1, NaN, 0.5));
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), fc.nat(16_400), fc.double({ min: -1e15, max: 1e15, noNaN: true }), (steps, pad, start) => {
        const want: number[] = [];
        const got = new NearColumn();
        // Steps from the last value (a byte offset, a time), or a value of their own (a double, NaN).
        let v = Math.round(start);
        const push = (x: number): void => {
          want.push(x);
          got.push(x);
        };
        for (let i = 0; i < pad; i++) push((v += 7)); // into the next chunk
        for (const s of steps) push(Number.isInteger(s) && s >= 0 && s <= 5000 ? (v += s) : s);
        expect(got.length).toBe(want.length);
        for (let i = Math.max(0, pad - 3); i < want.length; i++) expect(Object.is(got.get(i), want[i]) || got.get(i) === want[i]).toBe(true);
        for (const i of [0, pad >> 1]) if (i < want.length) expect(got.get(i)).toBe(want[i]);
      }),
      { numRuns: 60 },
    );
  });
});

describe("LineSeqs", () => {
  it("answers as a Map would, lines in order or not, out of range or not", () => {
    const op = fc.tuple(fc.oneof(fc.nat(50), fc.integer({ min: -3, max: 2 ** 33 })), fc.nat(1000));
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.boolean(), (ops, ordered) => {
        const list = ordered ? [...ops].sort((a, b) => a[0] - b[0]) : ops;
        const want = new Map<number, number>();
        const got = new LineSeqs();
        for (const [n, seq] of list) {
          want.set(n, seq);
          got.set(n, seq);
        }
        expect([...got]).toEqual([...want]);
        expect([...got.keys()]).toEqual([...want.keys()]);
        for (const n of [...want.keys(), 51, -1, 2 ** 34]) expect(got.get(n)).toBe(want.get(n));
      }),
    );
  });
});

describe("LeanHistory", () => {
  const table = new FactColumns();
  // The rows' lines lie one after another in the spill.
  let end = 0;
  const place = (): { at: number; len: number } => ({ at: (end += 1) - 1, len: 1 });
  const line = (sid: string, seq: number, n: number): PixirEvent => ({ id: `e${n}`, session_id: sid, seq, ts: `2026-03-01T10:00:${String(n).padStart(2, "0")}.000Z`, type: "user_message", data: { codex: { line: n, record: { type: "response_item" } }, origin: "user" } });
  const header = (sid: string): PixirEvent => ({ id: `h-${sid}`, session_id: sid, seq: 0, ts: null, type: "session_fork", data: {} });
  const history = (sid: string): LeanHistory => new LeanHistory(table, sid);

  it("reads a child's prefix, viewed or copied, as copies renumbered in the child, its own Events after", () => {
    const root = history("r");
    root.push(header("r"));
    for (let s = 1; s <= 10; s++) root.push(table.add(line("r", s, s + 1), s + 1, place()));
    // A run of the root's seqs (a view), then a run inside that child's prefix (a view through it), then gaps (copied).
    for (const [parent, seqs] of [
      [root, [3, 4, 5, 6, 7]],
      [root, [2, 5, 9]],
    ] as const) {
      const child = history("c");
      child.push(header("c"));
      child.inherit(parent, Int32Array.from(seqs), "h-c");
      child.push(table.add(line("c", seqs.length + 1, 50), 50, place()));
      expect(child.length).toBe(seqs.length + 2);
      seqs.forEach((s, i) => {
        const copy = child.at(i + 1)!;
        const of = parent.at(s)!;
        expect([copy.session_id, copy.seq, copy.type, copy.ts, copy.data]).toEqual(["c", i + 1, of.type, of.ts, of.data]);
        expect(copy.id).toBe(derivedUlid(`fork:h-c:${i + 1}`, of.ts));
      });
      expect(child.at(-1)!.data).toEqual({ codex: { line: 50, record: { type: "response_item" } }, origin: "user" });
      const grandchild = history("g");
      grandchild.push(header("g"));
      grandchild.inherit(child, Int32Array.from([2, 3]), "h-g");
      expect([grandchild.at(1)!.data, grandchild.at(2)!.data]).toEqual([parent.at(seqs[1]!)!.data, parent.at(seqs[2]!)!.data]);
    }
  });
});

describe("FactColumns' spill places and EventSpill's reads", () => {
  const event = (n: number): PixirEvent => ({ id: `e${n}`, session_id: "r", seq: n, ts: "2026-03-01T10:00:00.000Z", type: "user_message", data: { codex: { line: n }, origin: "user" } });

  it("give back each row's line, read in order, backwards or at random, lines short and longer than the read-ahead", () => {
    const line = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "grapheme", maxLength: 200 }), fc.nat(3).map((k) => "é".repeat(k * 300_000)));
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), fc.array(fc.nat(), { maxLength: 40 }), (texts, picks) => {
        const spill = EventSpill.open();
        try {
          const table = new FactColumns();
          const rows = texts.map((t, i) => table.add(event(i + 1), i + 1, spill.put(`${t}\n`)).row);
          const readRow = (r: number): string => spill.read(table.placeOf(r)).toString("utf8");
          const order = [...rows, ...[...rows].reverse(), ...picks.map((p) => rows[p % rows.length]!)];
          for (const r of order) expect(readRow(r)).toBe(`${texts[r]}\n`);
        } finally {
          spill.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it("refuse a row whose line does not follow the last one's in the spill", () => {
    const table = new FactColumns();
    table.add(event(1), 1, { at: 0, len: 5 });
    expect(() => table.add(event(2), 2, { at: 6, len: 5 })).toThrow(/one after another/);
  });
});
