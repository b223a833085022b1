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

// Over several stages, with a line larger than a stage: the digest must be the definition's, whichever
// way lines come.
describe("PrefixDigest over several stages", () => {
  const lines: Line[] = [];
  for (let n = 0; n < 3000; n++) lines.push(lineOf(n, n === 1700 ? "x".repeat(1_200_000) : `line ${n} ${"y".repeat(n % 700)}`));

  // Events are staged as checked lines are (no hash state copied per Event).
  for (const mode of ["checked lines", "checked lines, then both ways", "Events", "both ways from the start"] as const) {
    it(`gives the digest of the definition (${mode})`, () => {
      const d = new PrefixDigest();
      const byBytes = (n: number): boolean => (mode === "Events" ? false : mode === "checked lines" || n % 2 === 0 || (mode !== "both ways from the start" && n <= 1700));
      for (const [n, l] of lines.entries()) add(d, l, n, byBytes(n));
      expect(d.digest()).toBe(expected(lines));
      expect(d.count).toBe(lines.length);
    });
  }
});
