// interop/pi/export.ts piExportBatches: the pi file's lines written a batch at a time must be the lines
// joined, in order, whatever their lengths against the batch size.
import { describe, expect, it } from "vitest";
import { piExportBatches } from "../../src/interop/pi/export.js";

describe("piExportBatches", () => {
  it("joins the lines in order, in batches of about the size asked", () => {
    for (const size of [1, 5, 64, 1000]) {
      const lines = Array.from({ length: 200 }, (_, i) => `${"é".repeat(i % 17)}line ${i}\n`);
      const batches = [...piExportBatches(lines, size)];
      expect(batches.join("")).toBe(lines.join(""));
      for (const b of batches.slice(0, -1)) expect(b.length).toBeGreaterThanOrEqual(size);
    }
    expect([...piExportBatches([])]).toEqual([]);
  });
});
