// IdSet (id-set.ts): the ids of tool results a fork's plan has passed, or of a written stream's Events, as fingerprints.
import { describe, expect, it } from "vitest";
import { IdSet } from "../../src/event/id-set.js";

describe("IdSet", () => {
  it("holds every id added, through many growths, and none other", () => {
    const set = new IdSet();
    const ids = Array.from({ length: 200_000 }, (_, i) => `call_${i.toString(36)}_${(i * 2654435761) >>> 0}`);
    expect(ids.every((id) => set.add(id))).toBe(true);
    expect(ids.some((id) => set.add(id))).toBe(false); // adding again changes nothing, and says so
    expect(ids.every((id) => set.has(id))).toBe(true);
    const others = ids.map((id) => `${id}x`);
    expect(others.filter((id) => set.has(id))).toEqual([]);
  });

  it("tells apart ids that differ in one place, in length, or beyond Latin-1", () => {
    const set = new IdSet();
    const near = ["", "a", "b", "ab", "ba", "a\u0000", "call_1", "call_01", "call_10", "call_1 ", "\u00e9", "e\u0301", "\ud83d\ude00", "\u0101"];
    set.add("a");
    set.add("\u00e9");
    set.add("call_1");
    expect(near.filter((id) => set.has(id))).toEqual(["a", "call_1", "\u00e9"]);
  });
});
