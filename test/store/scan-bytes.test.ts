// log-read.ts scanBytes: without an onLine callback, scanLog checks a usual Log over blocks of its bytes
// and decodes only its first and last lines. Its result must be the per-line pass's, and every Log it
// does not take must get exactly the per-line pass's result (or error).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openHistory, PixirError, scanLog } from "@pixir/envelope";
import { scanBytes, type ScanResult } from "../../lib/envelope/src/store/log-read.js";
import { ROOT, workspace } from "../support/cli.js";

/** The facts of a scan that readers use, with its first and last lines as what they hold. */
function summary(r: ScanResult) {
  const line = (l: ScanResult["first"]) => l && { event: { ...l.event, data: l.event.data }, bytes: l.bytes.toString("utf8"), lineNo: l.lineNo, offset: l.offset, exact: l.exact };
  return {
    exists: r.exists,
    byteLength: r.byteLength,
    physicalLines: r.physicalLines,
    eventCount: r.eventCount,
    inOrder: r.inOrder,
    passThrough: r.passThrough,
    endsWithNewline: r.endsWithNewline,
    maxSeq: r.maxSeq,
    skipped: r.skipped,
    first: line(r.first),
    last: line(r.last),
  };
}

async function bothWays(content: string, options: { lenient?: boolean } = {}) {
  const ws = workspace({ L: content });
  const onProblem = options.lenient ? () => "skip" as const : undefined;
  const run = (perLine: boolean) => scanLog(ws, "L", { onProblem, onLine: perLine ? () => {} : undefined }).then(summary, (e: unknown) => e);
  // Whether the byte path itself takes the Log (rather than handing it to the per-line pass).
  const skeleton = await scanLog(ws, "L", { onProblem: () => "skip", onLine: () => {} });
  const taken = await scanBytes(skeleton.path, { ...skeleton, eventCount: 0, first: null, last: null }, true);
  return { bytes: await run(false), lines: await run(true), taken };
}

const line = (seq: number | null, type = "user_message", data = `{"text":"m${seq}"}`) =>
  `{"id":"e${seq}","session_id":"L","seq":${seq === null ? "null" : seq},"ts":"2026-01-01T00:00:00.000Z","type":"${type}","data":${data}}`;

const cases: Array<[string, boolean, string, { lenient?: boolean }?]> = [
  ["one line", true, `${line(0)}\n`],
  ["equal seqs", true, `${line(0)}\n${line(1)}\n${line(1)}\n`],
  ["a share header on line 1", true, `${line(0, "session_fork", '{"parent_session_id":"P","strategy":"share_v1"}')}\n${line(1)}\n`],
  ["a null seq", false, `${line(0)}\n${line(null)}\n`],
  ["lines out of order", false, `${line(1)}\n${line(0)}\n`],
  ["a blank line", false, `${line(0)}\n\n${line(1)}\n`],
  ["a torn tail, leniently", false, `${line(0)}\n${line(1)}`, { lenient: true }],
  ["a corrupt line, leniently", false, `${line(0)}\n{oops\n${line(1)}\n`, { lenient: true }],
  ["a corrupt line", false, `${line(0)}\n{oops\n${line(1)}\n`],
  ["data the byte check does not take", false, `${line(0, "user_message", '{"n":1.50}')}\n${line(1)}\n`],
  ["a share header after line 1", false, `${line(0)}\n${line(1, "session_fork", '{"parent_session_id":"P","strategy":"share_v1"}')}\n`],
];

describe("scanLog over blocks of bytes", () => {
  it("gives the per-line result for a generated Log of several blocks", async () => {
    const ws = workspace();
    const file = path.join(ws, "gen.ndjson");
    expect(spawnSync(process.execPath, [path.join(ROOT, "bench", "gen-log.mjs"), "--events", "2500", "--session", "L", "--out", file]).status).toBe(0);
    const { bytes, lines, taken } = await bothWays(readFileSync(file, "utf8"));
    expect(taken).toBe(true);
    expect(bytes).toEqual(lines);
    expect((bytes as ReturnType<typeof summary>).eventCount).toBe(2500);
    expect((bytes as ReturnType<typeof summary>).byteLength).toBeGreaterThan(2 * 1024 * 1024);
  });

  it.each(cases)("%s: the byte path takes it: %s; the same result either way", async (_, byBytes, content, options) => {
    const { bytes, lines, taken } = await bothWays(content, options);
    expect(taken).toBe(byBytes);
    expect(bytes).toEqual(lines);
  });

  it("a share header after line 1 is misplaced_share_header for the loader, naming its line", async () => {
    const ws = workspace({ L: `${line(0)}\n${line(1)}\n${line(2, "session_fork", '{"parent_session_id":"P","strategy":"share_v1"}')}\n` });
    const err = await openHistory(ws, "L").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PixirError);
    expect((err as PixirError).details).toMatchObject({ reason: "misplaced_share_header", line: 3 });
  });
});

// A large Log is checked in ranges (PIXIR_SCAN_THREADS sets how many, whatever the size). Run from
// the sources there is no worker file, so this thread checks every range: the splitting and the joining
// of ranges are what these tests hold to the per-line pass (check-parallel.test.ts runs the workers).
describe.each(["2", "3", "4"])("scanLog in %s ranges", (threads) => {
  const before = process.env.PIXIR_SCAN_THREADS;
  beforeAll(() => {
    process.env.PIXIR_SCAN_THREADS = threads;
  });
  afterAll(() => {
    if (before === undefined) delete process.env.PIXIR_SCAN_THREADS;
    else process.env.PIXIR_SCAN_THREADS = before;
  });

  it.each(cases)("%s: the byte path takes it: %s; the same result either way", async (_, byBytes, content, options) => {
    const { bytes, lines, taken } = await bothWays(content, options);
    expect(taken).toBe(byBytes);
    expect(bytes).toEqual(lines);
  });

  it("seqs that go back across a range's edge, or a share header in a later range, go to the per-line pass", async () => {
    const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => `${line(from + i)}\n`).join("");
    const back = await bothWays(many(10, 40) + many(0, 40));
    expect(back.taken).toBe(false);
    expect(back.bytes).toEqual(back.lines);
    const share = await bothWays(many(0, 60) + `${line(60, "session_fork", '{"parent_session_id":"P","strategy":"share_v1"}')}\n` + many(61, 20));
    expect(share.taken).toBe(false);
    const ws = workspace({ L: many(0, 60) + `${line(60, "session_fork", '{"parent_session_id":"P","strategy":"share_v1"}')}\n` + many(61, 20) });
    const err = await openHistory(ws, "L").catch((e: unknown) => e);
    expect((err as PixirError).details).toMatchObject({ reason: "misplaced_share_header", line: 61 });
    const ok = await bothWays(many(0, 80));
    expect(ok.taken).toBe(true);
    expect(ok.bytes).toEqual(ok.lines);
  });
});
