// Readers take no lease, and pixir-log materialize replaces a share child by rename (envelope-and-log.md
// §8.4). A reader's later passes must read the very file its checking pass verified, or fail: never the
// replacement cut at the old length, which holds other Events where the checked ones stood.
import { describe, expect, it } from "vitest";
import { openHistory, scanLog, scannedBytes, type PixirEvent } from "@pixir/envelope";
import { run, user, workspace } from "../../../../test/support/cli.js";

const CHANGED = { kind: "log_read_failed", details: { reason: "log_changed_during_read", path: ".pixir/sessions/p.ndjson" } };

/** r (short Events) ← p (share_v1, two long own Events) ← s (share_v1 of all of p). */
function lineage(): { ws: string; view: PixirEvent[] } {
  const ws = workspace({ r: [user("r0"), user("r1"), user("r2")] });
  const ok = (tool: "pixir" | "pixir-log", args: string[], input?: string) => expect(run(tool, args, { cwd: ws, input }).code).toBe(0);
  ok("pixir", ["fork", "r", "--strategy", "share_v1", "--child-id", "p"]);
  const long = (text: string) => JSON.stringify({ type: "user_message", data: { text: `${text} ${"y".repeat(4000)}` } });
  ok("pixir-log", ["append", "p"], `${long("p own A")}\n${long("p own B")}\n`);
  ok("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "s"]);
  return { ws, view: run("pixir-log", ["cat", "s"], { cwd: ws }).lines };
}

async function collect(items: AsyncIterable<{ event: PixirEvent }>, into: PixirEvent[]): Promise<void> {
  for await (const item of items) into.push(item.event);
}

describe("a Log replaced between a reader's checking pass and its later passes", () => {
  it("a share child's resolved view fails before any output instead of taking Events from the replacement", async () => {
    const { ws, view } = lineage();
    expect(view.map((e) => (e.data.text as string | undefined)?.slice(0, 7) ?? null)).toEqual([null, "r0", "r1", "r2", "p own A", "p own B"]);
    const history = await openHistory(ws, "s");
    expect(run("pixir-log", ["materialize", "p"], { cwd: ws }).code).toBe(0);

    const got: PixirEvent[] = [];
    await expect(collect(history.items(), got)).rejects.toMatchObject(CHANGED);
    expect(got).toEqual([]);
    // Read afresh, the materialized parent gives the same view.
    const again: PixirEvent[] = [];
    await collect((await openHistory(ws, "s")).items(), again);
    expect(again).toEqual(view);
  });

  it("the physical bytes of a scanned Log (cat --raw) come from the scanned file or not at all", async () => {
    const { ws } = lineage();
    const scan = await scanLog(ws, "p");
    expect(run("pixir-log", ["materialize", "p"], { cwd: ws }).code).toBe(0);
    const chunks: Buffer[] = [];
    await expect(
      (async () => {
        for await (const chunk of scannedBytes(scan)) chunks.push(chunk);
      })(),
    ).rejects.toMatchObject(CHANGED);
    expect(chunks).toEqual([]);
  });
});
