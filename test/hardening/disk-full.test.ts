// A write of the append journal that fails part-way (a full disk, or a crash between its create and its
// write) must never leave a journal readers cannot parse: that would make the Log unreadable for every
// reader and for `pixir-log repair`. Simulated in-process: node:fs refuses the journal's write.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { rawLine, user, workspace } from "../support/cli.js";
import { expectDocumentedFailure, runInProcess } from "./support.js";

const state = vi.hoisted(() => ({ failJournal: false }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    const head = typeof data === "string" ? data : Buffer.isBuffer(data) ? data.toString("utf8", 0, 40) : "";
    if (state.failJournal && head.startsWith('{"version":1,"original_length":')) {
      throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC", syscall: "write" });
    }
    return (fs.writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  return { ...fs, writeSync, default: { ...fs, writeSync } };
});

describe("the append journal under a full disk", () => {
  it("a failed journal write leaves no journal: the append fails cleanly, readers see the Log as it was", async () => {
    const ws = workspace({ s: [user("a"), user("b")] });
    const file = path.join(ws, ".pixir", "sessions", "s.ndjson");
    const before = readFileSync(file);
    state.failJournal = true;
    try {
      const r = await runInProcess("pixir-log", ["append", "s", "--json"], { cwd: ws, stdin: '{"type":"user_message","data":{"text":"c"}}\n' });
      const err = expectDocumentedFailure(r, "report", true);
      expect(err).toMatchObject({ kind: "log_write_failed", details: { reason: "enospc" } });
    } finally {
      state.failJournal = false;
    }
    expect(readdirSync(path.dirname(file))).toEqual(["s.ndjson"]);
    expect(existsSync(path.join(ws, ".pixir", "session_leases", "s.json"))).toBe(false);
    const cat = await runInProcess("pixir-log", ["cat", "s", "--raw"], { cwd: ws });
    expect(cat.code).toBe(0);
    expect(cat.stdout).toBe(before.toString());
    const again = await runInProcess("pixir-log", ["append", "s", "--json"], { cwd: ws, stdin: '{"type":"user_message","data":{"text":"c"}}\n' });
    expect(again.json).toMatchObject({ ok: true, first_seq: 2 });
    expect(readFileSync(file, "utf8").startsWith(before.toString())).toBe(true);
    expect(rawLine("s", 0, user("a"))).toBe(before.toString().split("\n")[0]);
  });
});
