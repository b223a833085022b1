// The append journal's ownership (envelope-and-log.md §8.3, writer-lease.md §6): a writer rolls back only
// the journal it wrote, and writes nothing to the Log once its lease check fails.
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appendJournaled, BlockWriter, recoverJournal, rollbackJournal, type TailInfo } from "../../src/store/log-write.js";
import { procStart, writerProcess } from "../../src/store/lease.js";

let ws = "";
afterEach(() => {
  if (ws !== "") rmSync(ws, { recursive: true, force: true });
  ws = "";
});

/** A Workspace whose Log `s` holds `committed` plus `appended`, with a journal naming the committed length. */
function appendInFlight(committed: string, appended: string, journal: Record<string, unknown> = {}): { log: string; journal: string; text: string } {
  ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), "pixir-journal-")));
  const dir = path.join(ws, ".pixir", "sessions");
  mkdirSync(dir, { recursive: true });
  const log = path.join(dir, "s.ndjson");
  writeFileSync(log, committed + appended);
  const text = JSON.stringify({ version: 1, original_length: Buffer.byteLength(committed), holder_id: "wrl_0123456789abcdef", started_at: new Date().toISOString(), ...journal });
  writeFileSync(`${log}.append-journal`, text);
  return { log, journal: `${log}.append-journal`, text };
}

describe("append journal ownership", () => {
  it("rollbackJournal with `ours` leaves another writer's journal and Log alone, and rolls back its own", () => {
    const f = appendInFlight("a\n", "b\n");
    expect(rollbackJournal(ws, "s", `${f.text} `)).toBe(false);
    expect(readFileSync(f.log, "utf8")).toBe("a\nb\n");
    expect(existsSync(f.journal)).toBe(true);
    expect(rollbackJournal(ws, "s", f.text)).toBe(true);
    expect(readFileSync(f.log, "utf8")).toBe("a\n");
    expect(existsSync(f.journal)).toBe(false);
  });

  it("recoverJournal refuses while the journal's writer is alive, and rolls back a dead or foreign one", () => {
    // The parent of this test process: alive, on this host, started when /proc says.
    const parent = { hostname: os.hostname(), os_pid: String(process.ppid), proc_start: procStart(process.ppid) };
    const live = appendInFlight("a\n", "b\n", parent);
    expect(() => recoverJournal(ws, "s")).toThrow(expect.objectContaining({ kind: "session_writer_active" }));
    expect(readFileSync(live.log, "utf8")).toBe("a\nb\n");
    rmSync(ws, { recursive: true, force: true });
    // A dead pid, a reused one (another start time), another host, this very process, no writer recorded.
    for (const writer of [{ os_pid: "999999999" }, { ...parent, proc_start: "1" }, { ...parent, hostname: "elsewhere" }, writerProcess(), {}]) {
      const f = appendInFlight("a\n", "b\n", { hostname: os.hostname(), ...writer });
      expect(recoverJournal(ws, "s"), JSON.stringify(writer)).toBe(true);
      expect(readFileSync(f.log, "utf8")).toBe("a\n");
      rmSync(ws, { recursive: true, force: true });
    }
    ws = "";
  });

  it("BlockWriter asks beforeWrite before every write, and a refusal writes nothing", () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), "pixir-journal-")));
    const file = path.join(ws, "out");
    const fd = openSync(file, "wx");
    let allowed = true;
    let asked = 0;
    const out = new BlockWriter(fd, {
      beforeWrite: () => {
        asked++;
        if (!allowed) throw new Error("lease lost");
      },
    });
    out.add("x".repeat(300 * 1024));
    expect(asked).toBe(1);
    out.add("y\n");
    allowed = false;
    expect(() => out.flush()).toThrow("lease lost");
    closeSync(fd);
    expect(readFileSync(file, "utf8")).toBe("x".repeat(300 * 1024));
  });
});

describe("an append that never wrote", () => {
  it("leaves the Log exactly as it found it (here: grown under it) and no journal", async () => {
    const f = appendInFlight("a\n", "");
    rmSync(f.journal);
    writeFileSync(f.log, "a\nb\n"); // someone else's bytes after the length the append was told
    const produce = async () => undefined;
    await expect(appendJournaled(ws, "s", { exists: true, size: 2, endsWithNewline: true } as TailInfo, produce, { lease: null })).rejects.toMatchObject({
      kind: "log_write_failed",
      details: { reason: "log_changed_during_append" },
    });
    expect(readFileSync(f.log, "utf8")).toBe("a\nb\n");
    expect(existsSync(f.journal)).toBe(false);
  });
});
