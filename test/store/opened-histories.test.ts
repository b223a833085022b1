// loader.ts OpenedHistories: several Logs of a Workspace opened once each, a share child resolved against
// its parent's History already opened. Each Log's History, items and errors must be those of openHistory,
// in any order of opening, with items kept or not.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { OpenedHistories, openHistory, type History } from "../../lib/envelope/src/store/loader.js";
import { assistant, call, ev, logFile, user, workspace, writeRaw } from "../support/cli.js";
import { prefixDigest, shareHeader } from "../support/fork.js";
import { runInThread as run } from "../support/thread.js";

type SeenItem = { event: unknown; dataText?: string; line: unknown };
type Seen = { first: SeenItem[]; again: SeenItem[] } & Record<string, unknown>;
/** What a History holds whose Events were kept: the same, its items compared by their Event. */
const eventsOnly = (s: Seen) => ({ ...s, first: s.first.map((i) => i.event), again: s.again.map((i) => i.event) });

/** Everything a reader sees of a History: its fields, its share link, and every item read twice. */
async function seen(h: History): Promise<unknown> {
  const items = async () => {
    const out: unknown[] = [];
    for await (const item of h.items()) {
      const e = item.event;
      out.push({
        event: { id: e.id, session_id: e.session_id, seq: e.seq, ts: e.ts, type: e.type, data: e.data },
        dataText: item.dataText,
        line: item.line === undefined ? null : { lineNo: item.line.lineNo, offset: item.line.offset, bytes: item.line.bytes.toString("utf8"), exact: item.line.exact },
      });
    }
    return out;
  };
  const link = h.share === null ? null : { header: h.share.header, parent: h.share.parent.sessionId, n: h.share.replayEventCount, toSeq: h.share.forkedToSeq };
  return { sessionId: h.sessionId, eventCount: h.eventCount, observed: h.observed, scan: { path: h.scan.path.rel, events: h.scan.eventCount, inOrder: h.scan.inOrder }, link, first: await items(), again: await items() };
}

/** The error (kind and details) opening `id` gives, or null. */
async function failure(open: () => Promise<History>): Promise<unknown> {
  try {
    await open();
    return null;
  } catch (err) {
    const e = err as { kind?: string; details?: unknown };
    return { kind: e.kind, details: e.details };
  }
}

/** A Workspace of share chains made by pixir fork: p ← s ← g ← gg, p ← s2, s ← s3, and a replay_v1 child. */
function chains(): string[] {
  const ws = workspace({ p: [user("one"), assistant("two"), call("c1"), ev("tool_result", { call_id: "c1", ok: true, output: "x" }), user("three"), assistant("four")] });
  const fork = (parent: string, child: string, extra: string[] = []) => {
    const r = run("pixir", ["fork", parent, "--child-id", child, "--json", ...extra], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
  };
  const append = (id: string, text: string) => expect(run("pixir-log", ["append", id], { cwd: ws, input: `${JSON.stringify({ type: "user_message", data: { text } })}\n` }).code).toBe(0);
  fork("p", "s", ["--strategy", "share_v1", "--to-seq", "4"]);
  append("s", "s own");
  fork("s", "g", ["--strategy", "share_v1"]);
  append("g", "g own");
  fork("g", "gg", ["--strategy", "share_v1", "--to-seq", "3"]);
  fork("p", "s2", ["--strategy", "share_v1", "--to-seq", "1"]);
  fork("s", "s3", ["--strategy", "share_v1", "--to-seq", "5"]);
  fork("g", "r");
  return [ws, "p", "s", "g", "gg", "s2", "s3", "r"];
}

const ORDERS = (ids: string[]): string[][] => [ids, [...ids].reverse(), [ids[3]!, ids[0]!, ...ids.slice(4), ids[2]!, ids[1]!]];

describe("OpenedHistories opens each Log as openHistory does", () => {
  it("the same History and items for every Log of share chains, in any order, items kept or not", async () => {
    const [ws, ...ids] = chains();
    const expected = new Map<string, unknown>();
    for (const id of ids) expected.set(id, await seen(await openHistory(ws!, id)));
    expect((expected.get("gg") as { link: { parent: string } }).link.parent).toBe("g");
    for (const keepEvents of [false, true]) {
      for (const order of ORDERS(ids)) {
        const histories = new OpenedHistories(ws!, { keepEvents });
        for (const id of order) {
          const want = expected.get(id) as Seen;
          const got = (await seen(await histories.open(id))) as Seen;
          const label = `${id} (keepEvents ${keepEvents}, order ${order.join(" ")})`;
          // A History whose Events were kept replays them as items of their Event alone, once read in full.
          if (keepEvents) expect(eventsOnly(got), label).toEqual(eventsOnly(want));
          else expect(got, label).toEqual(want);
          if (keepEvents) expect(got.again.every((i) => i.line === null && i.dataText === undefined), label).toBe(true);
        }
      }
    }
  });

  it("a Log opened twice is the same History; items read with a problem handler are read from disk", async () => {
    const [ws] = chains();
    const histories = new OpenedHistories(ws!, { keepEvents: true });
    const g = await histories.open("g");
    expect(await histories.open("g")).toBe(g);
    expect((await histories.open("s")).sessionId).toBe("s");
    expect(g.share!.parent).toBe(await histories.open("s"));
    const lenient = [];
    for await (const item of g.items(() => "skip")) lenient.push(item.event.seq);
    expect(lenient).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe("OpenedHistories refuses what openHistory refuses, with the same details", () => {
  const expectSame = async (ws: string, order: string[], kind: string) => {
    const histories = new OpenedHistories(ws);
    let refused = 0;
    for (const id of order) {
      const want = await failure(() => openHistory(ws, id));
      expect(await failure(() => histories.open(id)), id).toEqual(want);
      if (want !== null) {
        expect((want as { kind: string }).kind).toBe(kind);
        refused++;
      }
    }
    return refused;
  };

  it("a tampered parent line: fork_prefix_mismatch for each Log that inherits it, its parents opened before or not", async () => {
    for (const order of ORDERS(["p", "s", "g", "gg", "s2", "s3", "r"])) {
      const [ws] = chains();
      writeFileSync(logFile(ws!, "p"), readFileSync(logFile(ws!, "p"), "utf8").replace('"text":"two"', '"text":"TWO"'));
      // s, s2, s3, g and gg inherit seq 2 of p; r stores its prefix (replay_v1) and reads as it was written.
      expect(await expectSame(ws!, order, "fork_prefix_mismatch")).toBe(5);
    }
  });

  it("a tampered line of a middle Log: the Logs below it refused, the Logs above it read", async () => {
    const [ws] = chains();
    writeFileSync(logFile(ws!, "s"), readFileSync(logFile(ws!, "s"), "utf8").replace('"text":"s own"', '"text":"S OWN"'));
    expect(await expectSame(ws!, ["p", "s", "s2", "g", "gg", "s3"], "fork_prefix_mismatch")).toBe(2);
  });

  it("a missing parent: fork_parent_missing with the depth of the walk from the Log opened", async () => {
    const [ws] = chains();
    rmSync(logFile(ws!, "s"));
    expect(await expectSame(ws!, ["p", "g", "gg", "s3", "s2"], "fork_parent_missing")).toBe(3);
  });

  it("Logs that name each other: fork_cycle with the lineage walked", async () => {
    const none = prefixDigest([]);
    const ws = workspace({ a: [shareHeader("b", 0, 0, none)], b: [shareHeader("c", 0, 0, none)], c: [shareHeader("a", 0, 0, none)], self: [shareHeader("self", 0, 0, none)] });
    expect(await expectSame(ws, ["b", "a", "self", "c"], "fork_cycle")).toBe(4);
  });

  it("32 share hops resolve, the 33rd is fork_depth_exceeded, its parents opened before or not", async () => {
    const ws = workspace({ root: [user("one"), assistant("two"), ev("provider_usage")] });
    const rootEvents = readFileSync(logFile(ws, "root"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const digest = prefixDigest(rootEvents.slice(0, 2));
    writeRaw(ws, "h1", [shareHeader("root", 2, 1, digest)]);
    for (let i = 2; i <= 33; i++) writeRaw(ws, `h${i}`, [shareHeader(`h${i - 1}`, 2, 2, digest)]);
    const hops = Array.from({ length: 33 }, (_, i) => `h${i + 1}`);
    // openHistory walks each chain whole: asked for the two deepest Logs only.
    const deepest = await failure(() => openHistory(ws, "h33"));
    expect(deepest).toMatchObject({ kind: "fork_depth_exceeded", details: { session_id: "h33", max_depth: 32 } });
    const h32 = await seen(await openHistory(ws, "h32"));
    for (const keepEvents of [false, true]) {
      for (const order of [hops, [...hops].reverse()]) {
        const histories = new OpenedHistories(ws, { keepEvents });
        for (const id of order) expect(await failure(() => histories.open(id)), id).toEqual(id === "h33" ? deepest : null);
        const got = (await seen(await histories.open("h32"))) as Seen;
        if (keepEvents) expect(eventsOnly(got)).toEqual(eventsOnly(h32 as Seen));
        else expect(got).toEqual(h32);
      }
    }
  });
});
