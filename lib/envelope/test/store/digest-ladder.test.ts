// store/digest-ladder.ts holds the prefix digest of a History at many cuts to the plain rule: PrefixDigest
// over the cut's replay Events, one by one. Random Histories (replay and other types mixed), cuts asked in
// any order, small steps so that every case of mark and remainder occurs; a share child's ladder started
// from its parent's, and a grandchild's from the child's; a prefix that is not the History's is declined.
import { describe, expect, it } from "vitest";
import { isReplayType, type PixirEvent } from "../../src/event/envelope.js";
import { DigestLadder } from "../../src/store/digest-ladder.js";
import { PrefixDigest } from "../../src/store/loader.js";

const TYPES: Array<PixirEvent["type"]> = ["user_message", "assistant_message", "tool_call", "tool_result", "history_compaction", "provider_usage", "workflow_event", "session_fork"];

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x9e3779b9) >>> 0;
    return s / 2 ** 32;
  };
}

function event(rand: () => number, seq: number): PixirEvent {
  const type = TYPES[Math.floor(rand() * TYPES.length)]!;
  const data = type === "tool_call" || type === "tool_result" ? { call_id: `c${Math.floor(rand() * 5)}`, n: seq } : { text: `e${seq} ${"é".repeat(Math.floor(rand() * 4))}`, k: { b: 1, a: [seq] } };
  return { id: `id${seq}`, session_id: "S", seq, ts: new Date(1_700_000_000_000 + seq * 1000).toISOString(), type, data };
}

function history(rand: () => number, length: number, from: PixirEvent[] = []): PixirEvent[] {
  const out = [...from];
  while (out.length < length) out.push(event(rand, out.length));
  return out;
}

const replayOf = (h: readonly PixirEvent[]): PixirEvent[] => h.filter((e) => isReplayType(e.type));

function plain(prefix: readonly PixirEvent[]): string {
  const d = new PrefixDigest();
  for (const e of prefix) d.add(e);
  return d.digest();
}

/** A share child's History: its header, copies of the parent's first `count` replay Events, a checkpoint, its own. */
function child(rand: () => number, parent: readonly PixirEvent[], count: number, own: number): PixirEvent[] {
  const copies = replayOf(parent).slice(0, count).map((e, i) => ({ ...e, id: `copy${i}`, session_id: "C", seq: i + 1 }));
  const h: PixirEvent[] = [{ id: "fork", session_id: "C", seq: 0, ts: parent[0]!.ts, type: "session_fork", data: {} }, ...copies];
  h.push({ id: "cp", session_id: "C", seq: h.length, ts: h.at(-1)!.ts, type: "history_compaction", data: { range: { from_seq: 0, to_seq: 1 } } });
  return history(rand, h.length + own, h);
}

describe("DigestLadder gives PrefixDigest's digest of every cut", () => {
  it("random Histories, cuts in any order, steps 1 to 7", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = random(seed);
      const h = history(rand, 20 + Math.floor(rand() * 80));
      const replay = replayOf(h);
      const ladder = new DigestLadder(() => h, 1 + (seed % 7));
      for (let k = 0; k < 25; k++) {
        const n = Math.floor(rand() * (replay.length + 1));
        expect(ladder.digestOf(replay.slice(0, n))).toBe(plain(replay.slice(0, n)));
      }
    }
  });

  it("a History that grows between cuts (a planner appends to it)", () => {
    const rand = random(99);
    const h: PixirEvent[] = [];
    const ladder = new DigestLadder(() => h, 4);
    for (let round = 0; round < 30; round++) {
      history(rand, h.length + 5).slice(h.length).forEach((e) => h.push(e));
      const replay = replayOf(h);
      const n = Math.floor(rand() * (replay.length + 1));
      expect(ladder.digestOf(replay.slice(0, n))).toBe(plain(replay.slice(0, n)));
    }
  });

  it("a share child's ladder from its parent's, and a grandchild's from the child's", () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rand = random(1000 + seed);
      const parent = history(rand, 60);
      const parentLadder = new DigestLadder(() => parent, 1 + (seed % 5));
      const cut = replayOf(parent).slice(0, Math.floor(rand() * replayOf(parent).length));
      expect(parentLadder.digestOf(cut)).toBe(plain(cut));
      const c = child(rand, parent, cut.length, 30);
      const childLadder = parentLadder.sharedWith(() => c, cut.length);
      const childCut = replayOf(c).slice(0, Math.floor(rand() * (replayOf(c).length + 1)));
      expect(childLadder.digestOf(childCut)).toBe(plain(childCut));
      const g = child(rand, c, childCut.length, 20);
      const grandLadder = childLadder.sharedWith(() => g, childCut.length);
      for (let k = 0; k < 10; k++) {
        const n = Math.floor(rand() * (replayOf(g).length + 1));
        expect(grandLadder.digestOf(replayOf(g).slice(0, n))).toBe(plain(replayOf(g).slice(0, n)));
      }
    }
  });

  it("declines a prefix that is not the History's first replay Events", () => {
    const rand = random(7);
    const h = history(rand, 50);
    const replay = replayOf(h);
    const ladder = new DigestLadder(() => h, 3);
    expect(ladder.digestOf(replay.slice(1, 6))).toBeNull();
    expect(ladder.digestOf([...replay, replay[0]!])).toBeNull();
    expect(ladder.digestOf([])).toBe(plain([]));
  });
});
