// claude-interop.md §4.3 steps 4–6 on a grown session: the family's Logs on disk are read for the plan as
// HeldEvents (held-event.ts: an envelope, a few facts, the line's place), not as Events with their `data`
// (what kept a huge session that grew over the 256 MiB bound, docs/performance.md "Round 4"). Held here:
// each HeldEvent's data, read again from its line, is the loader's; its facts are those of that data; and
// the plan of a grown import holds no Event of the Logs on disk whole but their first.
import { appendFileSync, cpSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { PixirEvent } from "../../lib/envelope/src/event/envelope.js";
import { PixirError } from "../../lib/envelope/src/event/errors.js";
import { eventFacts, HeldEvent, type EventFacts } from "../../lib/envelope/src/interop/claude/held-event.js";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { loadExisting } from "../../lib/envelope/src/interop/claude/workspace-logs.js";
import { openHistory } from "../../lib/envelope/src/store/loader.js";
import { tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES, logIds } from "../support/claude.js";

const importAll = (ws: string, root: string) => importClaude(ws, { paths: [root], program: "pixir import claude", env: {} });

/** Every Event of each Log's resolved History, as the loader gives it. */
async function loaderEvents(ws: string, id: string): Promise<PixirEvent[]> {
  const out: PixirEvent[] = [];
  for await (const item of (await openHistory(ws, id)).items()) out.push(item.event);
  return out;
}

/** The seven facts, read through a HeldEvent's getters or from a plain object alike. */
const factFields = (f: EventFacts) => ({ claude: f.claude, line: f.line, held: f.held, path: f.path, uuid: f.uuid, event: f.event, child: f.child });
const envelope = (e: PixirEvent) => ({ id: e.id, session_id: e.session_id, seq: e.seq, ts: e.ts, type: e.type });

function* sessionFiles(dir: string): Iterable<string> {
  for (const n of readdirSync(dir)) {
    const p = path.join(dir, n);
    if (statSync(p).isDirectory()) yield* sessionFiles(p);
    else if (p.endsWith(".jsonl") && !p.includes("/subagents/") && !n.startsWith("agent-")) yield p;
  }
}

/** Append records to a copy of each session: clones of its last records, the first hanging off its middle (a new branch). */
function grow(root: string): number {
  let grown = 0;
  for (const f of sessionFiles(root)) {
    const text = readFileSync(f, "utf8");
    if (!text.endsWith("\n")) continue;
    const recs = text.split("\n").flatMap((l) => {
      try {
        const v = JSON.parse(l) as Record<string, unknown>;
        return (v.type === "user" || v.type === "assistant") && typeof v.uuid === "string" ? [v] : [];
      } catch {
        return [];
      }
    });
    if (recs.length < 4) continue;
    let parent = recs[recs.length >> 1]!.uuid as string;
    let out = "";
    recs.slice(-3).forEach((r, i) => {
      const uuid = `00000000-0000-4000-8000-${String(grown * 10 + i).padStart(12, "0")}`;
      out += `${JSON.stringify({ ...r, uuid, parentUuid: parent })}\n`;
      parent = uuid;
    });
    appendFileSync(f, out);
    grown++;
  }
  return grown;
}

/** A copy of the real transcripts (to grow) and a Workspace they were imported into. */
async function importedCopy(): Promise<{ root: string; ws: string }> {
  const root = tempDir("pixir-claude-held-");
  cpSync(CLAUDE_FIXTURES, root, { recursive: true });
  const ws = tempDir();
  await importAll(ws, root);
  return { root, ws };
}

describe("a grown session's Logs on disk, as the plan reads them (held-event.ts)", () => {
  it("hold each Event's envelope and facts, and read its data again from its line, the loader's data", async () => {
    const { root, ws } = await importedCopy();
    expect(grow(root)).toBeGreaterThan(5);
    await importAll(ws, root); // new branch Logs (share_v1 children) hang from the Logs on disk
    const ids = logIds(ws);
    const existing = await loadExisting(ws, ids);
    expect(existing.map((l) => l.id).sort()).toEqual([...ids].sort());
    let held = 0;
    let inherited = 0;
    for (const log of existing) {
      const whole = await loaderEvents(ws, log.id);
      expect(log.events.map(envelope)).toEqual(whole.map(envelope));
      expect(log.events[0]!.data).toEqual(whole[0]!.data);
      // Held, but the first Event of a Log (and its copy in a branch's inherited prefix): kept whole.
      expect(log.events.filter((e) => !(e instanceof HeldEvent)).length).toBeLessThanOrEqual(1 + log.shareHops);
      for (let i = 1; i < whole.length; i++) {
        const e = log.events[i]!;
        expect(e.data).toEqual(whole[i]!.data);
        expect(factFields(eventFacts(e))).toEqual(factFields(eventFacts(whole[i]!)));
        if (e instanceof HeldEvent) held++;
        if (i <= log.replayCount && log.first.type === "session_fork") inherited++;
      }
    }
    expect(held).toBeGreaterThan(1000);
    expect(inherited).toBeGreaterThan(100);
  });
});

describe("a Log on disk replaced while the plan reads it again", () => {
  it("stops the import naming the Log (log_read_failed), not a source transcript", async () => {
    const { ws } = await importedCopy();
    // A Log no other Log forks from (parents come first): no child's inherited prefix read its lines yet,
    // so its own Event's line is read from the file now, not from a window read before the change.
    const log = (await loadExisting(ws, logIds(ws))).filter((l) => l.events.some((e) => e instanceof HeldEvent)).at(-1);
    const heldEvent = log!.events.findLast((e) => e instanceof HeldEvent)!;
    // Another file in the Log's place (a new inode), shorter than the Log that was read.
    const file = path.join(ws, ".pixir", "sessions", `${log!.id}.ndjson`);
    writeFileSync(`${file}.other`, readFileSync(file).subarray(0, 10));
    renameSync(`${file}.other`, file);
    let err: unknown = null;
    try {
      void heldEvent.data;
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PixirError);
    expect((err as PixirError).kind).toBe("log_read_failed");
    expect((err as PixirError).details).toMatchObject({ session_id: log!.id, changed_while_importing: true });
  });
});
