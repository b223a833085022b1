// StreamIds (input.ts): a writer refuses an Event id its stream repeats, with memory bounded per stream.
import { describe, expect, it } from "vitest";
import { STREAM_IDS_KEPT, StreamIds } from "../../src/lines/input.js";
import { PixirError } from "../../src/event/errors.js";

const refusal = (f: () => void) => {
  try {
    f();
  } catch (err) {
    return err instanceof PixirError ? { kind: err.kind, ...err.details } : err;
  }
  return null;
};

describe("StreamIds", () => {
  it("refuses a repeated id and the Log's last id, naming the line, not the id", () => {
    const ids = new StreamIds("last");
    ids.admit("a", 1);
    ids.admit("b", 2);
    expect(refusal(() => ids.admit("a", 3))).toMatchObject({ kind: "stream_integrity_failed", reason: "duplicate_id", line: 3, observed: "an id used before" });
    expect(refusal(() => ids.admit("last", 4))).toMatchObject({ reason: "duplicate_id", line: 4 });
    expect(refusal(() => ids.admit("c", 5))).toBeNull();
  });

  it("keeps at most STREAM_IDS_KEPT ids: later ones are checked against those, not kept", () => {
    const ids = new StreamIds();
    for (let i = 0; i < STREAM_IDS_KEPT; i++) ids.admit(`id-${i}`, i + 1);
    expect(refusal(() => ids.admit("late", STREAM_IDS_KEPT + 1))).toBeNull();
    expect(refusal(() => ids.admit("id-12345", STREAM_IDS_KEPT + 2))).toMatchObject({ reason: "duplicate_id", line: STREAM_IDS_KEPT + 2 });
    // The documented limit: an id first seen past the bound is not remembered.
    expect(refusal(() => ids.admit("late", STREAM_IDS_KEPT + 3))).toBeNull();
  });
});
