// PrefixDigest.copy: pixir-log write takes over the parent's digest of the lines a stream matched so
// far, with or without the last line the parent's pass added. A copy must go on exactly as a digest fed
// those lines from the start would, whichever way the lines were added and wherever the stage was
// flushed.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PrefixDigest } from "../../src/store/loader.js";
import { checkLine, LineFacts } from "../../src/fast/line-check.js";

type Line = { type: string; ts: string; data: Record<string, unknown> };

const lineOf = (n: number, text: string): Line => ({ type: n % 3 === 0 ? "assistant_message" : "user_message", ts: `2026-01-01T00:00:${String(n % 60).padStart(2, "0")}Z`, data: { n, text } });

/** The digest's definition (fork.md §4.3), for data whose keys are already in order. */
function expected(lines: Line[]): string {
  const h = createHash("sha256");
  for (const l of lines) h.update(`${JSON.stringify([l.type, l.ts, l.data])}\n`);
  return `sha256:${h.digest("hex")}`;
}

/** Add `l` the byte way (a checked line) or the Event way. */
function add(d: PrefixDigest, l: Line, n: number, byBytes: boolean): void {
  if (byBytes) {
    const b = Buffer.from(JSON.stringify({ id: `e${n}`, session_id: "s", seq: n, ts: l.ts, type: l.type, data: l.data }));
    const facts = new LineFacts();
    expect(checkLine(b, 0, b.length, facts)).toBeGreaterThanOrEqual(0);
    d.addChecked(b, facts);
  } else d.add({ id: `e${n}`, session_id: "s", seq: n, ts: l.ts, type: l.type as "user_message", data: l.data });
}

describe("PrefixDigest.copy", () => {
  // Small lines, enough to flush the 1 MiB stage several times, and a line larger than the stage.
  const lines: Line[] = [];
  for (let n = 0; n < 3000; n++) lines.push(lineOf(n, n === 1700 ? "x".repeat(1_200_000) : `line ${n} ${"y".repeat(n % 700)}`));
  const other = lineOf(99_999, "not the parent's");

  for (const cut of [1, 2, 1500, 1700, 1701, 2999]) {
    for (const byBytes of [true, false]) {
      it(`goes on from the first ${cut} lines, or from all but the last (${byBytes ? "checked lines" : "Events"})`, () => {
        const parent = new PrefixDigest();
        lines.slice(0, cut).forEach((l, i) => add(parent, l, i, byBytes));
        const all = parent.copy(false);
        const allButLast = parent.copy(true);
        expect([all.count, allButLast.count]).toEqual([cut, cut - 1]);
        lines.slice(cut).forEach((l, i) => add(all, l, cut + i, true));
        expect(all.digest()).toBe(expected(lines));
        // The stream's own line in place of the parent's last one, then the rest.
        add(allButLast, other, cut - 1, true);
        lines.slice(cut).forEach((l, i) => add(allButLast, l, cut + i, true));
        expect(allButLast.digest()).toBe(expected([...lines.slice(0, cut - 1), other, ...lines.slice(cut)]));
        // The original is untouched by its copies.
        expect(parent.digest()).toBe(expected(lines.slice(0, cut)));
      });
    }
  }

  it("has no last line to leave out of an empty digest", () => {
    expect(() => new PrefixDigest().copy(true)).toThrow(/no last line/);
  });
});

// A background digest (pixir-fork reading a piped parent) hashes its stages on a worker thread once the
// first one is full, unless it has hashed something in this thread before: the digest must be the one
// this thread would make, whichever way lines come.
describe("PrefixDigest in the background", () => {
  const lines: Line[] = [];
  for (let n = 0; n < 3000; n++) lines.push(lineOf(n, n === 1700 ? "x".repeat(1_200_000) : `line ${n} ${"y".repeat(n % 700)}`));

  for (const mode of ["checked lines", "checked lines, then both ways"] as const) {
    it(`gives the digest of the definition over several stages (${mode})`, async () => {
      const d = new PrefixDigest(true);
      for (const [n, l] of lines.entries()) {
        add(d, l, n, mode === "checked lines" || n <= 1700 || n % 2 === 0);
        if (n % 100 === 0) await d.room();
      }
      // Handed over, not yet hashed: it can be neither read nor copied until settled.
      expect(() => d.digest()).toThrow(/settle/);
      expect(() => d.copy()).toThrow(/background/);
      await d.settle();
      expect(d.digest()).toBe(expected(lines));
      expect(d.count).toBe(lines.length);
    });
  }

  it("stays in this thread within one stage, and after an Event was hashed here first", async () => {
    const small = new PrefixDigest(true);
    lines.slice(0, 10).forEach((l, i) => add(small, l, i, true));
    expect(small.digest()).toBe(expected(lines.slice(0, 10)));
    const mixed = new PrefixDigest(true);
    lines.forEach((l, i) => add(mixed, l, i, i !== 0));
    // Never handed over: it can be copied at any time.
    expect(mixed.copy().count).toBe(lines.length);
    await mixed.settle();
    expect(mixed.digest()).toBe(expected(lines));
  });

  it("stop() ends the worker of a digest nobody will read; reading it then is an error", () => {
    const d = new PrefixDigest(true);
    lines.slice(0, 2000).forEach((l, i) => add(d, l, i, true));
    d.stop();
    expect(() => d.digest()).toThrow(/stopped/);
  });
});
