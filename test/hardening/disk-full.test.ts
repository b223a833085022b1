// OS faults a tmpfs cannot produce (tmpfs-faults.test.ts makes the real ones): an fsync, a rename or a
// link that fails, EIO, EMFILE, EDQUOT, EPERM, simulated in-process by a node:fs that refuses one call on
// one file. Every writer must name the fault (kind, lower-case reason, workspace-relative path, next
// actions that fit), and leave nothing behind: no temp file, journal, lease or resource.
// The first case is the original one: a journal whose write fails must never be left half-written.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { assistant, rawLine, user, workspace } from "../support/cli.js";
import { ageLease, expectDocumentedFailure, runInProcess, snapshot, snapshotDiff } from "./support.js";

interface Fault {
  /** The node:fs function that fails. */
  call: "writeSync" | "fsyncSync" | "renameSync" | "linkSync" | "openSync";
  /** It fails only for a file whose path matches (for writeSync and fsyncSync: the file its descriptor was opened on). */
  path: RegExp;
  code: string;
  /** Or only for a write whose data starts so (the journal's text). */
  head?: string;
  /** Only the first matching call fails (a transient fault: the rollback's own fsync then works). */
  once?: boolean;
}

const state = vi.hoisted(() => ({ fault: null as Fault | null, fds: new Map<number, string>() }));

vi.mock("node:fs", async (importOriginal) => {
  const fs = await importOriginal<typeof import("node:fs")>();
  const fail = (call: Fault["call"], file: string | undefined, data?: unknown): void => {
    const f = state.fault;
    if (f === null || f.call !== call || file === undefined || !f.path.test(file)) return;
    if (f.head !== undefined) {
      const head = typeof data === "string" ? data : Buffer.isBuffer(data) ? data.toString("utf8", 0, 40) : "";
      if (!head.startsWith(f.head)) return;
    }
    if (f.once) state.fault = null;
    const syscall = call.replace(/Sync$/, "");
    throw Object.assign(new Error(`${f.code}: simulated, ${syscall}`), { code: f.code, errno: -5, syscall, path: file });
  };
  const openSync = ((p: string, ...rest: unknown[]) => {
    fail("openSync", String(p));
    const fd = (fs.openSync as (...a: unknown[]) => number)(p, ...rest);
    state.fds.set(fd, String(p));
    return fd;
  }) as typeof fs.openSync;
  const writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    fail("writeSync", state.fds.get(fd), data);
    return (fs.writeSync as (...a: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  const fsyncSync = ((fd: number) => {
    fail("fsyncSync", state.fds.get(fd));
    return fs.fsyncSync(fd);
  }) as typeof fs.fsyncSync;
  const renameSync = ((from: string, to: string) => {
    fail("renameSync", String(to));
    return fs.renameSync(from, to);
  }) as typeof fs.renameSync;
  const linkSync = ((from: string, to: string) => {
    fail("linkSync", String(to));
    return fs.linkSync(from, to);
  }) as typeof fs.linkSync;
  const wrapped = { openSync, writeSync, fsyncSync, renameSync, linkSync };
  return { ...fs, ...wrapped, default: { ...fs, ...wrapped } };
});

afterEach(() => {
  state.fault = null;
});

/** Run with `fault` injected; the Workspace must come out as it went in. */
async function faulted(fault: Fault, tool: "pixir" | "pixir-log", argv: string[], ws: string, stdin?: string) {
  const before = snapshot(ws);
  state.fault = fault;
  let r;
  try {
    r = await runInProcess(tool, [...argv, "--json"], { cwd: ws, input: stdin });
  } finally {
    state.fault = null;
  }
  const err = expectDocumentedFailure(r, "report", true);
  expect(snapshotDiff(before, snapshot(ws)), "nothing changed, nothing left").toEqual([]);
  const check = await runInProcess("pixir-log", ["check", "--json"], { cwd: ws });
  expect(check.code, check.stdout).toBe(0);
  return err as { kind: string; message: string; details: Record<string, any> };
}

const FORCE = /force|release|orphan/i;
const LINE = '{"type":"user_message","data":{"text":"c"}}\n';

describe("the append journal under a full disk", () => {
  it("a failed journal write leaves no journal: the append fails cleanly, readers see the Log as it was", async () => {
    const ws = workspace({ s: [user("a"), user("b")] });
    const file = path.join(ws, ".pixir", "sessions", "s.ndjson");
    const before = readFileSync(file);
    const err = await faulted({ call: "writeSync", path: /append-journal\.tmp-|ndjson\.tmp-/, head: '{"version":1,"original_length":', code: "ENOSPC" }, "pixir-log", ["append", "s"], ws, LINE);
    expect(err).toMatchObject({ kind: "log_write_failed", details: { reason: "enospc", path: ".pixir/sessions/s.ndjson.append-journal" } });
    expect(readdirSync(path.dirname(file))).toEqual(["s.ndjson"]);
    expect(existsSync(path.join(ws, ".pixir", "session_leases", "s.json"))).toBe(false);
    const cat = await runInProcess("pixir-log", ["cat", "s", "--raw"], { cwd: ws });
    expect(cat.code).toBe(0);
    expect(cat.stdout).toBe(before.toString());
    const again = await runInProcess("pixir-log", ["append", "s", "--json"], { cwd: ws, input: LINE });
    expect(again.json).toMatchObject({ ok: true, first_seq: 2 });
    expect(readFileSync(file, "utf8").startsWith(before.toString())).toBe(true);
    expect(rawLine("s", 0, user("a"))).toBe(before.toString().split("\n")[0]);
  });
});

describe("fsync, rename, link and the codes a tmpfs never gives", () => {
  it("an append whose commit fsync fails (EIO) is rolled back: log_write_failed eio, the device named", async () => {
    const ws = workspace({ s: [user("a")] });
    const err = await faulted({ call: "fsyncSync", path: /sessions\/s\.ndjson$/, code: "EIO", once: true }, "pixir", ["append", "s"], ws, LINE);
    expect(err).toMatchObject({ kind: "log_write_failed", details: { reason: "eio", path: ".pixir/sessions/s.ndjson", operation: "fsync" } });
    expect(err.message).toBe("could not write session log: the device reported an I/O error");
    expect(err.details.next_actions[0]).toContain("check the device holding .pixir/sessions/s.ndjson");
  });

  it("a new Log whose rename fails (EIO) never appears; its temp file goes", async () => {
    const ws = workspace({ p: [user("a"), assistant("b")] });
    const err = await faulted({ call: "renameSync", path: /sessions\/c\.ndjson$/, code: "EIO" }, "pixir", ["fork", "p", "--child-id", "c"], ws);
    expect(err).toMatchObject({ kind: "log_write_failed", details: { reason: "eio", path: ".pixir/sessions/c.ndjson", operation: "rename" } });
  });

  it("a new Log whose temp-file fsync hits the quota (EDQUOT): named, with the quota in the advice", async () => {
    const ws = workspace();
    const err = await faulted({ call: "fsyncSync", path: /sessions\/n\.ndjson\.tmp-/, code: "EDQUOT" }, "pixir-log", ["write", "n"], ws, `${rawLine("n", 0, user("a"))}\n`);
    expect(err).toMatchObject({ kind: "log_write_failed", details: { reason: "edquot", path: ".pixir/sessions/n.ndjson" } });
    expect(err.details.next_actions[0]).toContain("disk quota");
  });

  it("too many open files while creating the lease (EMFILE): Pixir's kind, the cause named, no forced release advised", async () => {
    const ws = workspace({ s: [user("a")] });
    const err = await faulted({ call: "openSync", path: /session_leases\/s\.json\.tmp-/, code: "EMFILE" }, "pixir-log", ["append", "s"], ws, LINE);
    expect(err).toMatchObject({
      kind: "session_writer_ambiguous",
      message: "Session writer lease could not be acquired: this process has too many open files",
      details: { lease: null, filesystem_reason: "EMFILE", reason: "emfile", path: ".pixir/session_leases/s.json" },
    });
    expect(err.details.next_actions.join(" ")).toContain("ulimit -n");
    expect(err.details.next_actions.join(" ")).not.toMatch(FORCE);
  });

  it("the lease's link into place fails (EIO): the same, and the temp file goes", async () => {
    const ws = workspace({ s: [user("a"), assistant("b"), user("c"), assistant("d")] });
    const err = await faulted({ call: "linkSync", path: /session_leases\/s\.json$/, code: "EIO" }, "pixir", ["compact", "s", "--tail-events", "1"], ws);
    expect(err).toMatchObject({ kind: "session_writer_ambiguous", details: { reason: "eio", filesystem_reason: "EIO", operation: "link" } });
    expect(err.details.next_actions.join(" ")).not.toMatch(FORCE);
  });

  it("an append journal this user may not create (EPERM): permission_denied with the reason", async () => {
    const ws = workspace({ s: [user("a")] });
    const err = await faulted({ call: "openSync", path: /s\.ndjson\.tmp-/, code: "EPERM" }, "pixir-log", ["append", "s"], ws, LINE);
    expect(err).toMatchObject({ kind: "permission_denied", details: { reason: "eperm", path: ".pixir/sessions/s.ndjson.append-journal" } });
  });

  it("a resource copy whose rename fails (ENOSPC): no child, no resource directory left", async () => {
    const png = Buffer.from("\x89PNG fake image bytes\n", "latin1");
    const sha = createHash("sha256").update(png).digest("hex");
    const descriptor = { resource_id: "r1", content_sha256: sha, extension: "png", store_ref: "x" };
    const ws = workspace({ p: [user("first"), { type: "user_message", data: { text: "see", resources: [descriptor] } }, assistant("ok")] });
    mkdirSync(path.join(ws, ".pixir/sessions/p/resources/r1"), { recursive: true });
    writeFileSync(path.join(ws, `.pixir/sessions/p/resources/r1/${sha}.png`), png);
    const err = await faulted({ call: "renameSync", path: /sessions\/c\/resources\//, code: "ENOSPC" }, "pixir", ["fork", "p", "--child-id", "c"], ws);
    expect(err).toMatchObject({ kind: "log_write_failed", details: { reason: "enospc", path: `.pixir/sessions/c/resources/r1/${sha}.png` } });
    expect(err.message).toBe("could not write a session resource: no space left on the device");
  });

  it("a forced release whose record cannot be written (ENOSPC): the lease stays, no releases directory", async () => {
    const ws = workspace({ s: [user("a")] });
    const held = await runInProcess("pixir-log", ["append", "s", "--json"], { cwd: ws, input: LINE });
    expect(held.code).toBe(0);
    // A stale lease, as a SIGKILLed writer leaves it.
    const leaseFile = path.join(ws, ".pixir", "session_leases", "s.json");
    writeFileSync(leaseFile, JSON.stringify({ version: 1, purpose: "session_writer", session_id: "s", workspace: ws, holder_id: "wrl_0123456789abcdef", heartbeat_at_ms: 1 }));
    expect(ageLease(ws, "s")).toBe(true);
    const err = await faulted({ call: "linkSync", path: /session_leases\/releases\//, code: "ENOSPC" }, "pixir", ["lock", "release", "s", "--force"], ws);
    expect(err).toMatchObject({ kind: "log_write_failed", message: "could not write the lease release record: no space left on the device", details: { reason: "enospc" } });
    expect(err.details.path).toMatch(/^\.pixir\/session_leases\/releases\/[0-9T]{15}-[0-9a-f]{16}-[0-9a-f]{6}\.json$/);
  });

  it("an exported pi file whose rename fails (EIO): named after --out, no temp file left", async () => {
    const ws = workspace({ p: [user("a"), assistant("b")] });
    const err = await faulted({ call: "renameSync", path: /out\.jsonl$/, code: "EIO" }, "pixir", ["export", "pi", "p", "--out", "out.jsonl"], ws);
    expect(err).toMatchObject({ kind: "log_write_failed", message: "could not write the exported pi file: the device reported an I/O error", details: { reason: "eio", path: "out.jsonl" } });
  });

  it("an exported page that fills the disk, and Markdown whose fsync fails: named after --out, no temp file left", async () => {
    const ws = workspace({ p: [user("a"), assistant("b")] });
    const page = await faulted({ call: "writeSync", path: /page\.html\.tmp-/, code: "ENOSPC" }, "pixir", ["export", "html", "p", "--out", "page.html"], ws);
    expect(page).toMatchObject({ kind: "log_write_failed", message: "could not write the exported page: no space left on the device", details: { reason: "enospc", path: "page.html" } });
    const md = await faulted({ call: "fsyncSync", path: /p\.md\.tmp-/, code: "EIO" }, "pixir", ["export", "md", "p", "--out", "p.md"], ws);
    expect(md).toMatchObject({ kind: "log_write_failed", message: "could not write the exported Markdown: the device reported an I/O error", details: { reason: "eio", path: "p.md" } });
  });
});
