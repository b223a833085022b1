// acceptance.md §H and writer-lease.md: the Writer Lease, against the built binaries.
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { leaseGoesStale, readLog, run, sh, start, tempDir, user, workspace } from "../support/cli.js";
import { leaseFile, writeLease } from "../hardening/support.js";

const EV = '{"type":"user_message","data":{"text":"hi"}}\n';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


const releaseRecords = (ws: string) => {
  const dir = path.join(ws, ".pixir", "session_leases", "releases");
  return existsSync(dir) ? readdirSync(dir).map((f) => ({ name: f, record: JSON.parse(readFileSync(path.join(dir, f), "utf8")) })) : [];
};

describe("H57 an active lease", () => {
  it("blocks append (exit 5), admits its holder through PIXIR_WRITER_LEASE, and frees the Session once removed", () => {
    const ws = workspace({ s: [user("a")] });
    writeLease(ws, "s");
    const before = readLog(ws, "s");
    const blocked = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV });
    expect(blocked.code).toBe(5);
    expect(blocked.json.error.kind).toBe("session_writer_active");
    expect(blocked.json.error.details.lease).toMatchObject({ state: "active", writer_present: true, holder: { holder_id: "wrl_0123456789abcdef" } });
    expect(readLog(ws, "s")).toBe(before);
    const borrowed = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV, env: { PIXIR_WRITER_LEASE: "wrl_0123456789abcdef" } });
    expect(borrowed.code).toBe(0);
    expect(existsSync(leaseFile(ws, "s"))).toBe(true); // a borrower never releases
    const wrong = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV, env: { PIXIR_WRITER_LEASE: "wrl_ffffffffffffffff" } });
    expect(wrong.code).toBe(5);
    expect(wrong.json.error).toMatchObject({ kind: "session_writer_ambiguous", message: "Session writer lease holder does not match" });
    const malformed = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV, env: { PIXIR_WRITER_LEASE: "nope" } });
    expect(malformed.code).toBe(2);
    expect(malformed.json.error.details.field).toBe("PIXIR_WRITER_LEASE");
    const missing = run("pixir-log", ["append", "other", "--json"], { cwd: ws, input: EV, env: { PIXIR_WRITER_LEASE: "wrl_0123456789abcdef" } });
    expect(missing.json.error.kind).toBe("session_writer_lost");
    unlinkSync(leaseFile(ws, "s"));
    expect(run("pixir-log", ["append", "s"], { cwd: ws, input: EV }).code).toBe(0);
  });
  it("pixir fork into a leased child id gives exit 5; its --dry-run exits 0", () => {
    const ws = workspace({ p: [user("a"), user("b")] });
    writeLease(ws, "s");
    const r = run("pixir", ["fork", "p", "--child-id", "s", "--json"], { cwd: ws });
    expect(r.code).toBe(5);
    expect(r.json.error.kind).toBe("session_writer_active");
    expect(existsSync(path.join(ws, ".pixir/sessions/s.ndjson"))).toBe(false);
    expect(run("pixir", ["fork", "p", "--child-id", "s", "--dry-run", "--json"], { cwd: ws }).code).toBe(0);
  });
});

describe("a lease file that cannot be written", () => {
  it("is session_writer_ambiguous with the filesystem's reason (writer-lease.md §3), and leaves nothing", () => {
    const ws = workspace({ s: [user("a")] });
    const bytes = readLog(ws, "s");
    // ulimit -f 0: any write to a file fails (EFBIG), as a full disk fails with ENOSPC.
    const r = sh("ulimit -f 0; pixir-log append s --json", { cwd: ws, input: '{"type":"user_message","data":{}}\n' });
    expect(r.code).toBe(5);
    expect(r.json.error).toMatchObject({ kind: "session_writer_ambiguous", message: "Session writer lease could not be acquired: the file would exceed the file-size limit", details: { lease: null, filesystem_reason: "EFBIG", reason: "efbig" } });
    // A write fault is not an orphaned writer: nothing advises a forced release.
    expect(r.json.error.details.next_actions.join(" ")).not.toMatch(/force|release/);
    expect(readLog(ws, "s")).toBe(bytes);
    // No lease, and no lease directory: the one made for it goes again.
    expect(existsSync(path.join(ws, ".pixir", "session_leases"))).toBe(false);
  });
});

describe("H58 contention", () => {
  it("16 concurrent appends: one wins, 15 exit 5 without waiting for input, one line lands, no lease remains", async () => {
    const ws = tempDir();
    // Nobody gets input until 15 have exited: the losers must not wait for it.
    const procs = Array.from({ length: 16 }, () => start("pixir-log", ["append", "s", "--json"], { cwd: ws }));
    let exited = 0;
    const finished = procs.map((p) => p.done.then((r) => (exited++, r)));
    for (let waited = 0; exited < 15 && waited < 30_000; waited += 50) await sleep(50);
    expect(exited).toBe(15);
    procs.forEach((p, i) => {
      if (p.child.exitCode === null) p.child.stdin.end(`{"type":"user_message","data":{"text":"w${i}"}}\n`);
    });
    const results = await Promise.all(finished);
    expect(results.filter((r) => r.code === 0)).toHaveLength(1);
    const losers = results.filter((r) => r.code !== 0);
    expect(losers).toHaveLength(15);
    for (const l of losers) {
      expect(l.code).toBe(5);
      expect(["session_writer_active", "session_writer_ambiguous"]).toContain(l.json.error.kind);
    }
    expect(readLog(ws, "s").split("\n").filter(Boolean)).toHaveLength(1);
    expect(existsSync(leaseFile(ws, "s"))).toBe(false);
  }, 60_000);
  it("16 concurrent appends with --wait: all land, every line whole, seqs contiguous", async () => {
    const ws = tempDir();
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => start("pixir-log", ["append", "s", "--wait", "60"], { cwd: ws }))
        .map((p, i) => {
          p.child.stdin.end(`{"type":"user_message","data":{"text":"w${i}"}}\n{"type":"assistant_message","data":{"text":"r${i}"}}\n`);
          return p.done;
        }),
    );
    expect(results.map((r) => r.code)).toEqual(Array(16).fill(0));
    const events = readLog(ws, "s").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 32 }, (_, i) => i));
    for (let i = 0; i < 32; i += 2) expect(events[i + 1].data.text.slice(1)).toBe(events[i].data.text.slice(1)); // each append stays together
  });
});

describe("H59 a stale lease fails closed", () => {
  it("status stale; append exit 5 keeps it; forced release writes a record; then append works", () => {
    const ws = workspace({ s: [user("a")] });
    writeLease(ws, "s", { heartbeat_at_ms: Date.now() - 60000, stale_after_ms: 5000 });
    const status = run("pixir", ["lock", "status", "s", "--json"], { cwd: ws });
    expect(status.code).toBe(0);
    expect(status.json.lease).toMatchObject({ state: "stale", writer_present: true, holder_alive: false });
    expect(run("pixir", ["lock", "status", "s"], { cwd: ws }).stdout).toMatch(/^stale holder=wrl_0123456789abcdef pid=999999 host=\S+ heartbeat_age_ms=\d+ holder_alive=false\n$/);
    const blocked = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV });
    expect(blocked.code).toBe(5);
    expect(blocked.json.error.kind).toBe("session_writer_stale");
    expect(existsSync(leaseFile(ws, "s"))).toBe(true);
    const release = run("pixir", ["lock", "release", "s", "--force", "--reason", "test_stale_release", "--json"], { cwd: ws });
    expect(release.code).toBe(0);
    expect(release.json).toMatchObject({ ok: true, released: true, reason: "test_stale_release", state_before: { state: "stale" } });
    const records = releaseRecords(ws);
    expect(records).toHaveLength(1);
    expect(records[0]!.record).toMatchObject({ kind: "session_writer_lease_forced_release", reason: "test_stale_release", session_id: "s", version: 1 });
    expect(release.json.release_record_path).toBe(path.join(ws, ".pixir/session_leases/releases", records[0]!.name));
    expect(existsSync(leaseFile(ws, "s"))).toBe(false);
    expect(run("pixir-log", ["append", "s"], { cwd: ws, input: EV }).code).toBe(0);
    expect(run("pixir", ["lock", "release", "s", "--force"], { cwd: ws }).stdout).toBe("No writer lease present for s.\n");
  });
});

describe("H60 refusals and ambiguity", () => {
  it("an active lease is never force-released; release needs --force", () => {
    const ws = tempDir();
    writeLease(ws, "s");
    const r = run("pixir", ["lock", "release", "s", "--force", "--json"], { cwd: ws });
    expect(r.code).toBe(5);
    expect(r.json.error.kind).toBe("session_writer_active");
    expect(existsSync(leaseFile(ws, "s"))).toBe(true);
    const usage = run("pixir", ["lock", "release", "s"], { cwd: ws });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe("error: usage: lock release requires --force\nhint: run the command with --help\n");
    expect(run("pixir", ["lock", "release", "s", "--reason", "x"], { cwd: ws }).stderr).toBe("error: usage: --reason requires --force\nhint: run the command with --help\n");
    expect(run("pixir", ["lock", "release", "s", "--force", "--reason", ""], { cwd: ws }).stderr).toBe("error: usage: --reason requires text\nhint: run the command with --help\n");
  });
  it("unparseable and mismatched leases are ambiguous, block writers, and can be force-released", () => {
    for (const [content, reason] of [
      ["{", "invalid_json"],
      [null, "lease_identity_mismatch_or_missing_fields"],
    ] as const) {
      const ws = tempDir();
      if (content === null) writeLease(ws, "s", { workspace: 123 });
      else {
        mkdirSync(path.dirname(leaseFile(ws, "s")), { recursive: true });
        writeFileSync(leaseFile(ws, "s"), content);
      }
      const status = run("pixir", ["lock", "status", "s", "--json"], { cwd: ws });
      expect(status.json.lease).toMatchObject({ state: "ambiguous", details: { reason } });
      expect(run("pixir", ["lock", "status", "s"], { cwd: ws }).stdout).toBe(`ambiguous reason=${reason}\n`);
      const blocked = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV });
      expect(blocked.code).toBe(5);
      expect(blocked.json.error.kind).toBe("session_writer_ambiguous");
      const release = run("pixir", ["lock", "release", "s", "--force"], { cwd: ws });
      expect(release.stdout).toMatch(/^Released ambiguous writer lease of s; record \.pixir\/session_leases\/releases\/\d{8}T\d{6}-[0-9a-f]{16}-[0-9a-f]{6}\.json\.\n$/);
      expect(existsSync(leaseFile(ws, "s"))).toBe(false);
      expect(releaseRecords(ws)).toHaveLength(1);
    }
  });
});

describe("H61 unsafe lease paths", () => {
  it(".pixir/session_leases as a symlink: lock status and append give unsafe_state_path", () => {
    const ws = tempDir();
    const outside = tempDir();
    mkdirSync(path.join(ws, ".pixir"));
    symlinkSync(outside, path.join(ws, ".pixir", "session_leases"));
    const status = run("pixir", ["lock", "status", "s", "--json"], { cwd: ws });
    expect(status.code).toBe(1);
    expect(status.json.error).toMatchObject({ kind: "unsafe_state_path", details: { reason: "symlink_component", component: ".pixir/session_leases" } });
    const append = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV });
    expect(append.json.error.kind).toBe("unsafe_state_path");
    expect(readdirSync(outside)).toEqual([]);
  });
  it("a releases/ symlink: the forced release is refused, the lease kept, the outside folder empty", () => {
    const ws = tempDir();
    const outside = tempDir();
    writeLease(ws, "s", { heartbeat_at_ms: Date.now() - 60000, stale_after_ms: 5000 });
    symlinkSync(outside, path.join(ws, ".pixir", "session_leases", "releases"));
    const r = run("pixir", ["lock", "release", "s", "--force", "--json"], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "unsafe_state_path", details: { component: ".pixir/session_leases/releases" } });
    expect(existsSync(leaseFile(ws, "s"))).toBe(true);
    expect(readdirSync(outside)).toEqual([]);
  });
  it("a 235-byte id: the release record name is under 255 bytes and holds the full id", () => {
    const ws = tempDir();
    const id = "a" + "b".repeat(234);
    writeLease(ws, id, { heartbeat_at_ms: Date.now() - 60000, stale_after_ms: 5000 });
    expect(run("pixir", ["lock", "release", id, "--force"], { cwd: ws }).code).toBe(0);
    const [rec] = releaseRecords(ws);
    expect(Buffer.byteLength(rec!.name)).toBeLessThan(255);
    expect(rec!.record.session_id).toBe(id);
  });
});

describe("H62 heartbeat and crash", () => {
  it("the heartbeat advances while a writer waits on stdin; a SIGKILLed writer's lease turns stale; recovery after a forced release", async () => {
    const ws = tempDir();
    const writer = start("pixir-log", ["append", "s"], { cwd: ws });
    writer.child.stdin.write(EV);
    let lease: Record<string, any> | undefined;
    for (let i = 0; i < 50 && lease === undefined; i++) {
      await sleep(100);
      try {
        lease = JSON.parse(readFileSync(leaseFile(ws, "s"), "utf8"));
      } catch {
        lease = undefined;
      }
    }
    expect(lease).toBeDefined();
    await sleep(1500);
    const later = JSON.parse(readFileSync(leaseFile(ws, "s"), "utf8"));
    expect(later.heartbeat_at_ms).toBeGreaterThan(lease!.heartbeat_at_ms);
    expect(later.holder_id).toBe(lease!.holder_id);
    expect(later.os_pid).toBe(String(writer.child.pid));
    const active = run("pixir", ["lock", "status", "s", "--json"], { cwd: ws });
    expect(active.json.lease).toMatchObject({ state: "active", holder_alive: true });
    writer.child.kill("SIGKILL");
    await writer.done;
    await leaseGoesStale(ws, "s");
    const stale = run("pixir", ["lock", "status", "s", "--json"], { cwd: ws });
    expect(stale.json.lease).toMatchObject({ state: "stale", holder_alive: false });
    expect(run("pixir", ["lock", "release", "s", "--force"], { cwd: ws }).code).toBe(0);
    const next = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: '{"type":"user_message","data":{"text":"after"}}\n' });
    expect(next.json).toMatchObject({ ok: true, first_seq: 0 });
    const events = readLog(ws, "s").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(events.map((e) => e.data.text)).toEqual(["after"]);
  }, 30_000);

  it("a writer whose lease was forced away stops at once, rolls back only its own append; the next writer waits for it", async () => {
    const ws = workspace({ s: [user("a")] });
    const before = readLog(ws, "s");
    const journal = path.join(ws, ".pixir", "sessions", "s.ndjson.append-journal");
    const old = start("pixir-log", ["append", "s", "--json"], { cwd: ws });
    old.child.stdin.write(EV); // a line in hand, and stdin left open: the writer waits for more
    for (let i = 0; i < 50 && !existsSync(journal); i++) await sleep(100);
    expect(JSON.parse(readFileSync(journal, "utf8"))).toMatchObject({ os_pid: String(old.child.pid), holder_id: expect.stringMatching(/^wrl_/) });
    process.kill(old.child.pid!, "SIGSTOP");
    try {
      await leaseGoesStale(ws, "s");
      expect(run("pixir", ["lock", "release", "s", "--force"], { cwd: ws }).code).toBe(0);
      // The old writer is alive and may wake: the new writer must neither roll back its journal nor write past it.
      const refused = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV });
      expect(refused.code).toBe(5);
      expect(refused.json.error).toMatchObject({ kind: "session_writer_active", details: { append_journal: { os_pid: String(old.child.pid) } } });
      expect(readLog(ws, "s")).toBe(before);
    } finally {
      process.kill(old.child.pid!, "SIGCONT");
    }
    // Woken, it notices the loss on its next heartbeat without waiting for stdin, and rolls back.
    const t0 = Date.now();
    const r = await old.done;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(r.code).toBe(5);
    expect(r.json.error.kind).toBe("session_writer_lost");
    expect(existsSync(journal)).toBe(false);
    expect(readLog(ws, "s")).toBe(before);
    expect(run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV }).json).toMatchObject({ ok: true, first_seq: 1 });
  }, 30_000);

  it("a borrower never rolls back the append its lease's owner has in flight", async () => {
    const ws = workspace({ s: [user("a")] });
    const owner = start("pixir-log", ["append", "s", "--json"], { cwd: ws });
    owner.child.stdin.write(EV);
    const journal = path.join(ws, ".pixir", "sessions", "s.ndjson.append-journal");
    for (let i = 0; i < 50 && !existsSync(journal); i++) await sleep(100);
    const holder = JSON.parse(readFileSync(leaseFile(ws, "s"), "utf8")).holder_id;
    const borrowed = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV, env: { PIXIR_WRITER_LEASE: holder } });
    expect(borrowed.code).toBe(5);
    expect(borrowed.json.error.kind).toBe("session_writer_active");
    expect(existsSync(journal)).toBe(true);
    owner.child.stdin.end(EV);
    expect((await owner.done).json).toMatchObject({ ok: true, first_seq: 1, last_seq: 2 });
    const check = run("pixir-log", ["check", "s", "--json"], { cwd: ws });
    expect(check.code, check.stdout).toBe(0);
    expect(readLog(ws, "s").split("\n").filter(Boolean).map((l) => JSON.parse(l).seq)).toEqual([0, 1, 2]);
  }, 30_000);

  it("--take-over-dead-writer takes over a stale lease whose holder died on this host, with a release record", async () => {
    const ws = workspace({ s: [user("a")] });
    const writer = start("pixir-log", ["append", "s"], { cwd: ws });
    for (let i = 0; i < 50 && !existsSync(leaseFile(ws, "s")); i++) await sleep(100);
    await sleep(300);
    writer.child.kill("SIGKILL");
    await writer.done;
    await leaseGoesStale(ws, "s");
    expect(run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EV }).json.error.kind).toBe("session_writer_stale");
    const r = run("pixir-log", ["append", "s", "--take-over-dead-writer", "--json"], { cwd: ws, input: EV });
    expect(r.code).toBe(0);
    expect(r.json.first_seq).toBe(1);
    expect(releaseRecords(ws).map((x) => x.record.reason)).toEqual(["holder_dead"]);
  }, 30_000);

  it("every writer accepts --take-over-dead-writer (writer-lease.md §9a)", () => {
    // A stale lease of a holder that died on this host in this boot (a process that has exited).
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    const old = Date.now() - 60_000;
    const deadLease = { os_pid: String(dead), boot_id: bootId, proc_start: "1", heartbeat_at_ms: old, heartbeat_at: new Date(old).toISOString() };
    const cases: Array<[Parameters<typeof run>[0], string[], string]> = [
      ["pixir-log", ["repair", "s"], "s"],
      ["pixir-log", ["rm", "s"], "s"],
      ["pixir", ["repair", "s"], "s"],
      ["pixir", ["compact", "s", "--tail-events", "1"], "s"],
      ["pixir", ["fork", "s", "--child-id", "c"], "c"],
    ];
    for (const [tool, args, leased] of cases) {
      const ws = workspace({ s: [user("a"), user("b"), user("c")] });
      writeLease(ws, leased, deadLease);
      const refused = run(tool, [...args, "--json"], { cwd: ws });
      expect(refused.json.error.kind, `${tool} ${args.join(" ")}`).toBe("session_writer_stale");
      const r = run(tool, [...args, "--take-over-dead-writer", "--json"], { cwd: ws });
      expect(r.code, `${tool} ${args.join(" ")}: ${r.stdout}`).toBe(0);
      expect(releaseRecords(ws).map((x) => x.record.reason)).toEqual(["holder_dead"]);
      expect(existsSync(leaseFile(ws, leased))).toBe(false);
    }
  });
});
