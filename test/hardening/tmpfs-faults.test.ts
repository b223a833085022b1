// Real file-system faults (cli-contract.md "Operating-system faults"): every writer runs on a small
// tmpfs of its own that is full (no room even for the Writer Lease), nearly full (room for the lease
// and the append journal, none for the data), or remounted read-only. Each must fail with a named
// error and its documented exit code, leave the Workspace byte-identical (no temp file, journal, lease
// or resource left), and leave `pixir-log check` clean. Mounting needs root; where it is impossible
// the suite is skipped with the reason (CI runs as root and mounts). The fsync and rename failures a
// tmpfs cannot produce are simulated in disk-full.test.ts.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, cpSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmdirSync, statfsSync, statSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { assistant, call, logFile, rawLine, run, tempDir, user, writeRaw, type Ev, type Tool } from "../support/cli.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { runInThread } from "../support/thread.js";
import { runInProcess, snapshot, snapshotDiff } from "./support.js";

const PAGE = 4096;

// ---------------------------------------------------------------------------------------------
// Mounts

const mounted = new Set<string>();

function sh(cmd: string, args: string[]): { ok: boolean; said: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return { ok: r.status === 0, said: `${r.stderr ?? ""}${r.error?.message ?? ""}`.trim() };
}

/** A fresh tmpfs of `kib` KiB, or the reason none can be mounted here. */
function mountTmpfs(kib: number): string | { skip: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-tmpfs-"));
  const r = sh("mount", ["-t", "tmpfs", "-o", `size=${kib}k,mode=0755`, "tmpfs", dir]);
  if (!r.ok) {
    rmdirSync(dir);
    return { skip: `cannot mount a tmpfs here (${r.said || "mount failed"})` };
  }
  mounted.add(dir);
  return dir;
}

function unmount(dir: string): void {
  if (!mounted.has(dir)) return;
  // A lazy unmount as a last resort: a process of a failed test may still hold a file open.
  if (!sh("umount", [dir]).ok) sh("umount", ["-l", dir]);
  mounted.delete(dir);
  try {
    rmdirSync(dir);
  } catch {
    /* still busy: the lazy unmount detaches it; the empty directory stays in the temp dir */
  }
}

const probe = process.getuid?.() === 0 ? mountTmpfs(64) : { skip: "mounting a tmpfs needs root" };
const skipReason = typeof probe === "string" ? null : probe.skip;
if (typeof probe === "string") unmount(probe);
else console.warn(`tmpfs-faults: skipped: ${skipReason}`);

afterEach(() => {
  for (const dir of [...mounted]) unmount(dir);
});
afterAll(() => {
  for (const dir of [...mounted]) unmount(dir);
});

/** Pages of data the file system holding `dir` can still take. */
const freePages = (dir: string): number => {
  const s = statfsSync(dir);
  return Math.floor((s.bavail * s.bsize) / PAGE);
};

/** Fill the mount with a file of zeros until the device is full, then give back `pages` pages. */
function fillLeaving(mnt: string, pages: number): void {
  const file = path.join(mnt, ".fill");
  const fd = openSync(file, "w");
  const block = Buffer.alloc(64 * 1024);
  let size = 0;
  try {
    for (;;) size += writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  }
  size = statSync(file).size;
  ftruncateSync(fd, Math.max(0, size - pages * PAGE));
  closeSync(fd);
  expect(freePages(mnt), "free pages after filling").toBe(pages);
}

// ---------------------------------------------------------------------------------------------
// Logs and inputs

/** Append a user message to `id`'s Log so that its size is a whole number of pages: any append then needs a new page. */
function padToPage(ws: string, id: string, n: number): void {
  const file = logFile(ws, id);
  const size = statSync(file).size;
  const bare = rawLine(id, n, user("")).length + 1;
  const text = "p".repeat((PAGE - ((size + bare) % PAGE)) % PAGE);
  writeFileSync(file, `${rawLine(id, n, user(text))}\n`, { flag: "a" });
  expect(statSync(file).size % PAGE).toBe(0);
}

/** Events whose Log takes about `kib` KiB. */
function chat(kib: number): Ev[] {
  const out: Ev[] = [];
  for (let i = 0; out.length * 600 < kib * 1024; i++) out.push(i % 2 === 0 ? user(`question ${i} ${"q".repeat(400)}`) : assistant(`answer ${i} ${"a".repeat(400)}`));
  return out;
}

/** NDJSON input events (no envelope) of about `kib` KiB. */
const inputLines = (kib: number): string =>
  chat(kib)
    .map((e) => `${JSON.stringify({ type: e.type, data: e.data })}\n`)
    .join("");

const CODEX_ID = "0199a213-81c0-7800-8aa1-bbab2a035a53";

/** Real Claude Code transcripts: a session with one rewind (two Logs), and one with a subagent (two files on export). */
const CLAUDE_BRANCHED = "71c9afe9-d9cc-4583-86b3-e62ba682b83a";
const CLAUDE_WITH_AGENT = "29ccd257-68b1-427f-ae5f-6524b7cb6f20";
const claudeFile = (id: string): string => path.join(CLAUDE_FIXTURES, "claude-code-log", `${id}.jsonl`);
const CLAUDE_PROJECT = "-src-experiments-claude-p";

/** A Codex rollout of about `kib` KiB, outside the mount. */
function codexRollout(kib: number): string {
  const rec = (type: string, payload: unknown, ts: string) => JSON.stringify({ timestamp: ts, type, payload });
  const at = (s: number) => new Date(Date.parse("2026-03-01T10:00:00.000Z") + s * 1000).toISOString();
  const cli = { cwd: "/w", originator: "codex-tui", cli_version: "0.125.0", source: "cli", model_provider: "openai" };
  const lines = [rec("session_meta", { id: CODEX_ID, timestamp: at(0), ...cli }, at(0))];
  for (let i = 1; lines.join("\n").length < kib * 1024; i++) {
    const role = i % 2 === 1 ? "user" : "assistant";
    lines.push(rec("response_item", { type: "message", role, content: [{ type: role === "user" ? "input_text" : "output_text", text: `${role} ${i} ${"c".repeat(400)}` }] }, at(i)));
  }
  const file = path.join(tempDir(), "rollout.jsonl");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

/** A whole stream of Events of `id`, as pixir-log write takes it. */
const envelopes = (id: string, events: Ev[]): string => events.map((e, n) => `${rawLine(id, n, e)}\n`).join("");

/** A pi session file of about `kib` KiB, outside the mount. */
function piFile(kib: number): string {
  const lines = [JSON.stringify({ type: "session", version: 3, id: "p1", timestamp: "2026-01-10T09:00:00.000Z", cwd: "/x" })];
  let parent: string | null = null;
  for (let i = 0; lines.join("\n").length < kib * 1024; i++) {
    const id = `e${i}`;
    const role = i % 2 === 0 ? "user" : "assistant";
    const content = role === "user" ? `question ${i} ${"q".repeat(400)}` : [{ type: "text", text: `answer ${i} ${"a".repeat(400)}` }];
    const ts = `2026-01-10T09:${String(Math.floor(i / 60) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}.000Z`;
    lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: ts, message: { role, content, timestamp: 1767000000000 + i } }));
    parent = id;
  }
  const file = path.join(tempDir(), "p1.jsonl");
  writeFileSync(file, `${lines.join("\n")}\n`);
  return file;
}

// ---------------------------------------------------------------------------------------------
// The writers

interface Case {
  tool: Tool;
  argv: string[];
  input?: string;
  /** The file the data write goes to (workspace-relative, or as given to --out). */
  data: string;
  /** The data file's name is made at run time (a release record): its pattern. */
  dataPattern?: RegExp;
  /** The path a read-only file system refuses first, when the writer takes no lease. */
  readOnlyPath?: RegExp;
  /** Takes a Writer Lease (a full disk then fails there first). */
  lease: boolean;
  /**
   * Writes its data to a temp file before it takes the lease, and puts it in place under the lease (the
   * Codex import streams a new thread so, codex-interop.md §4.8): a full disk fails on the data file.
   */
  dataBeforeLease?: boolean;
  /** A run with room for the lease only succeeds (repair frees space and writes no data; a release record takes one page). */
  succeedsWithRoomForLease?: boolean;
  /** What `pixir-log check` reports before the run, and so after a failed one (repair's torn tail). */
  problems?: string[];
}

const ok = (r: { code: number; stdout: string; stderr: string }, what: string) => expect(r.code, `${what}: ${r.stdout}${r.stderr}`).toBe(0);

/** The mount, in a Case's argv and data (a Workspace is set up once, then copied onto each mount). */
const MNT = "{mnt}";

/** Each writer: how to set up its Workspace `ws`, and the run that must fail. */
const WRITERS: Record<string, (ws: string) => Case> = {
  "pixir-log append": (ws) => {
    writeRaw(ws, "s", chat(4));
    padToPage(ws, "s", chat(4).length);
    return { tool: "pixir-log", argv: ["append", "s", "--json"], input: inputLines(24), data: ".pixir/sessions/s.ndjson", lease: true };
  },
  "pixir-log write": () => ({ tool: "pixir-log", argv: ["write", "--json"], input: envelopes("n", chat(24)), data: ".pixir/sessions/n.ndjson", lease: true }),
  "pixir-log write (a fork stream)": (ws) => {
    writeRaw(ws, "p", chat(24));
    const stream = runInThread("pixir-fork", ["--parent", "p", "--child-id", "c"], { cwd: ws });
    ok(stream, "pixir-fork");
    return { tool: "pixir-log", argv: ["write", "--json"], input: stream.stdout, data: ".pixir/sessions/c.ndjson", lease: true };
  },
  "pixir-log materialize": (ws) => {
    writeRaw(ws, "p", chat(24));
    ok(runInThread("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "c"], { cwd: ws }), "share fork");
    return { tool: "pixir-log", argv: ["materialize", "c", "--json"], data: ".pixir/sessions/c.ndjson", lease: true };
  },
  "pixir-log repair": (ws) => {
    writeRaw(ws, "s", `${chat(4).map((e, n) => rawLine("s", n, e)).join("\n")}\n{"id":"torn","session_id":"s","se`);
    return { tool: "pixir-log", argv: ["repair", "s", "--json"], data: ".pixir/sessions/s.ndjson", lease: true, succeedsWithRoomForLease: true, problems: ["torn_tail"] };
  },
  "pixir-log rm --materialize-children": (ws) => {
    writeRaw(ws, "p", chat(24));
    ok(runInThread("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "c"], { cwd: ws }), "share fork");
    return { tool: "pixir-log", argv: ["rm", "p", "--materialize-children", "--json"], data: ".pixir/sessions/c.ndjson", lease: true };
  },
  "pixir-log rm": (ws) => {
    writeRaw(ws, "s", chat(24));
    // With room for its lease it succeeds: removing a Log frees space.
    return { tool: "pixir-log", argv: ["rm", "s", "--json"], data: ".pixir/sessions/s.ndjson", lease: true, succeedsWithRoomForLease: true };
  },
  "pixir append": (ws) => {
    writeRaw(ws, "s", chat(4));
    padToPage(ws, "s", chat(4).length);
    return { tool: "pixir", argv: ["append", "s", "--json"], input: inputLines(24), data: ".pixir/sessions/s.ndjson", lease: true };
  },
  "pixir fork": (ws) => {
    writeRaw(ws, "p", chat(24));
    return { tool: "pixir", argv: ["fork", "p", "--child-id", "c", "--summarize", "--json"], data: ".pixir/sessions/c.ndjson", lease: true };
  },
  "pixir fork (a resource that does not fit)": (ws) => {
    // The child's Log (one page) fits beside its lease; the payload it must copy first does not.
    const payload = Buffer.alloc(64 * 1024, 7);
    const sha = createHash("sha256").update(payload).digest("hex");
    writeRaw(ws, "p", [user("see"), { type: "user_message", data: { text: "this", resources: [{ resource_id: "r1", content_sha256: sha, extension: "bin", store_ref: "x" }] } }]);
    mkdirSync(path.join(ws, ".pixir/sessions/p/resources/r1"), { recursive: true });
    writeFileSync(path.join(ws, `.pixir/sessions/p/resources/r1/${sha}.bin`), payload);
    return { tool: "pixir", argv: ["fork", "p", "--child-id", "c", "--json"], data: `.pixir/sessions/c/resources/r1/${sha}.bin`, lease: true };
  },
  "pixir compact": (ws) => {
    writeRaw(ws, "s", chat(8));
    padToPage(ws, "s", chat(8).length);
    return { tool: "pixir", argv: ["compact", "s", "--tail-events", "2", "--json"], data: ".pixir/sessions/s.ndjson", lease: true };
  },
  "pixir repair": (ws) => {
    const events = [...chat(4), call("c1"), call("c2", "read", "b.txt")];
    writeRaw(ws, "s", events);
    padToPage(ws, "s", events.length);
    return { tool: "pixir", argv: ["repair", "s", "--json"], data: ".pixir/sessions/s.ndjson", lease: true };
  },
  "pixir merge": (ws) => {
    writeRaw(ws, "p", chat(4));
    ok(runInThread("pixir", ["fork", "p", "--child-id", "c"], { cwd: ws }), "fork");
    ok(runInThread("pixir", ["append", "c"], { cwd: ws, input: inputLines(4) }), "append to the child");
    padToPage(ws, "p", chat(4).length);
    return { tool: "pixir", argv: ["merge", "c", "--into", "p", "--json"], data: ".pixir/sessions/p.ndjson", lease: true };
  },
  "pixir import pi": () => ({ tool: "pixir", argv: ["import", "pi", piFile(24), "--json"], data: ".pixir/sessions/p1.ndjson", lease: true }),
  "pixir lock release --force (the release record)": (ws) => {
    writeRaw(ws, "s", chat(4));
    // A stale lease, as a writer killed a minute ago leaves it.
    mkdirSync(path.join(ws, ".pixir/session_leases"));
    const beat = Date.now() - 60_000;
    writeFileSync(
      path.join(ws, ".pixir/session_leases/s.json"),
      JSON.stringify({ version: 1, purpose: "session_writer", session_id: "s", workspace: "/elsewhere", holder_id: "wrl_0123456789abcdef", heartbeat_at_ms: beat }),
    );
    return {
      tool: "pixir",
      argv: ["lock", "release", "s", "--force", "--json"],
      data: ".pixir/session_leases/releases/<record>",
      dataPattern: /^\.pixir\/session_leases\/releases\/[0-9T]{15}-[0-9a-f]{16}-[0-9a-f]{6}\.json$/,
      readOnlyPath: /^\.pixir\/session_leases\/releases$/,
      lease: false,
      // It writes only its record (one page), which fits where a lease would.
      succeedsWithRoomForLease: true,
    };
  },
  "pixir import codex": () => ({ tool: "pixir", argv: ["import", "codex", codexRollout(24), "--json"], data: `.pixir/sessions/${CODEX_ID}.ndjson`, lease: true, dataBeforeLease: true }),
  // A grown rollout of a one-Log family is appended as it is read (codex/grown-stream.ts), under the lease.
  "pixir import codex (grown)": (ws) => {
    ok(runInThread("pixir", ["import", "codex", codexRollout(4)], { cwd: ws }), "import codex");
    return { tool: "pixir", argv: ["import", "codex", codexRollout(24), "--json"], data: `.pixir/sessions/${CODEX_ID}.ndjson`, lease: true };
  },
  "pixir import claude": () => ({ tool: "pixir", argv: ["import", "claude", claudeFile(CLAUDE_BRANCHED), "--json"], data: `.pixir/sessions/${CLAUDE_BRANCHED}.ndjson`, lease: true }),
  "pixir export claude --out": (ws) => {
    ok(runInThread("pixir", ["import", "claude", claudeFile(CLAUDE_WITH_AGENT)], { cwd: ws }), "import claude");
    const file = `${MNT}/out/${CLAUDE_PROJECT}/${CLAUDE_WITH_AGENT}.jsonl`;
    return { tool: "pixir", argv: ["export", "claude", CLAUDE_WITH_AGENT, "--out", `${MNT}/out`, "--json"], data: file, readOnlyPath: new RegExp(`${CLAUDE_WITH_AGENT}\\.jsonl$`), lease: false };
  },
  "pixir export codex --out": (ws) => {
    ok(runInThread("pixir", ["import", "codex", codexRollout(24)], { cwd: ws }), "import codex");
    const rel = `out/2026/03/01/rollout-2026-03-01T10-00-00-${CODEX_ID}.jsonl`;
    return { tool: "pixir", argv: ["export", "codex", CODEX_ID, "--out", `${MNT}/out`, "--json"], data: `${MNT}/${rel}`, readOnlyPath: /rollout-[^/]+\.jsonl$/, lease: false };
  },
  "pixir export pi --out": (ws) => {
    writeRaw(ws, "p", chat(24));
    const out = `${MNT}/out/p.jsonl`;
    return { tool: "pixir", argv: ["export", "pi", "p", "--out", out, "--json"], data: out, lease: false };
  },
  "pixir export html --out": (ws) => {
    writeRaw(ws, "p", chat(24));
    const out = `${MNT}/out/p.html`;
    return { tool: "pixir", argv: ["export", "html", "p", "--out", out, "--json"], data: out, readOnlyPath: /p\.html$/, lease: false };
  },
  "pixir export md --out": (ws) => {
    writeRaw(ws, "p", chat(24));
    const out = `${MNT}/out/p.md`;
    return { tool: "pixir", argv: ["export", "md", "p", "--out", out, "--json"], data: out, readOnlyPath: /p\.md$/, lease: false };
  },
};

type Fault = "full" | "room for the lease only" | "read-only";
const PROCESS_WRITER = "pixir-log append";

/** Each writer's Workspace is set up once, off the mount, and copied onto each fresh mount. */
const templates = new Map<string, { dir: string; c: Case }>();
function template(name: string): { dir: string; c: Case } {
  let t = templates.get(name);
  if (t === undefined) {
    const dir = tempDir();
    t = { dir, c: WRITERS[name]!(dir) };
    templates.set(name, t);
  }
  return t;
}

/** Set the writer up on a fresh mount, bring the fault about, run it; what it said and what it left. */
async function runFaulted(name: string, fault: Fault) {
  const mnt = mountTmpfs(1024) as string;
  const ws = path.join(mnt, "ws");
  const t = template(name);
  cpSync(t.dir, ws, { recursive: true });
  mkdirSync(path.join(mnt, "out"));
  const at = (v: string) => v.replace(MNT, mnt);
  const c: Case = { ...t.c, argv: t.c.argv.map(at), data: at(t.c.data) };
  if (fault === "read-only") expect(sh("mount", ["-o", "remount,ro", mnt]).ok, "remount read-only").toBe(true);
  else fillLeaving(mnt, fault === "full" ? 0 : 2);
  const before = snapshot(mnt);
  // The first writer's faults as processes (the exit code and streams a shell sees); the others on the
  // tool thread (test/support/thread.ts): the same bundle meets the same failing file system.
  const r = (name === PROCESS_WRITER ? run : runInThread)(c.tool, c.argv, { cwd: ws, input: c.input });
  const left = snapshotDiff(before, snapshot(mnt));
  // In this process (the same library as the binary), which spares a start-up per case.
  const check = await runInProcess("pixir-log", ["check", "--json"], { cwd: ws });
  return { c, r, left, check, ws, mnt };
}

/** A failure as the contract says: one --json envelope on stdout, the kind's exit code, never internal_error. */
function failure(r: { code: number; stdout: string; stderr: string; json: any }) {
  expect(r.json, `a --json error envelope, got ${r.stdout}${r.stderr}`).toMatchObject({ ok: false });
  const err = r.json.error;
  expect(err.kind).not.toBe("internal_error");
  expect(r.stderr).toBe("");
  return err;
}

const FORCE = /--force|lock release|orphan/i;

/** `pixir-log check` finds nothing (or only what was there before: repair's torn tail): no temp file, journal or half-written line. */
function expectClean(check: { code: number; json: any; stdout: string }, c: Case): void {
  const problems = (c.problems ?? []).length === 0 ? [] : check.json.error.details.logs.flatMap((l: any) => l.problems.map((p: any) => p.code));
  expect(problems).toEqual(c.problems ?? []);
  expect(check.code, check.stdout).toBe(problems.length === 0 ? 0 : 1);
  if (problems.length > 0) expect(check.json.error.details.warning_count).toBe(0);
}

describe.skipIf(skipReason !== null)("writers on a real file system that fails (tmpfs)", () => {
  describe.each(Object.keys(WRITERS))("%s", (name) => {
    it("a full disk: named, nothing changed, check clean", async () => {
      const { c, r, left, check } = await runFaulted(name, "full");
      expectClean(check, c);
      const err = failure(r);
      expect(err.details).toMatchObject({ reason: "enospc" });
      expect(err.details.next_actions.join(" ")).toContain("free space on the device holding");
      expect(err.details.next_actions.join(" "), "a full disk is not an orphaned writer").not.toMatch(FORCE);
      if (c.lease && !c.dataBeforeLease) {
        // writer-lease.md §3 keeps Pixir's kind for a lease that cannot be created; it says why.
        expect([err.kind, r.code]).toEqual(["session_writer_ambiguous", 5]);
        expect(err.message).toBe("Session writer lease could not be acquired: no space left on the device");
        expect(err.details).toMatchObject({ filesystem_reason: "ENOSPC", lease: null });
        expect(err.details.path).toMatch(/^\.pixir\/session_leases\/[^/]+\.json$/);
      } else {
        expect([err.kind, r.code]).toEqual(["log_write_failed", 1]);
        if (c.dataPattern) expect(err.details.path).toMatch(c.dataPattern);
        else expect(err.details.path).toBe(c.data);
      }
      expect(left, "the file system is as it was").toEqual([]);
    });

    it("room for the lease, none for the data: named after the data file, nothing changed, check clean", async () => {
      const { c, r, left, check, ws } = await runFaulted(name, "room for the lease only");
      if (c.succeedsWithRoomForLease) {
        ok(r, name);
        expectClean(check, { ...c, problems: [] });
        if (c.lease) expect(readdirSync(path.join(ws, ".pixir", "session_leases"))).toEqual([]);
        return;
      }
      const err = failure(r);
      expect([err.kind, r.code]).toEqual(["log_write_failed", 1]);
      expect(err.details.reason).toBe("enospc");
      if (c.dataPattern) expect(err.details.path).toMatch(c.dataPattern);
      else expect(err.details.path).toBe(c.data);
      expect(err.message).toMatch(/: no space left on the device$/);
      expect(err.details.next_actions).toEqual([`free space on the device holding ${err.details.path}, then rerun; nothing was changed`]);
      expect(left, "the file system is as it was").toEqual([]);
    });

    it("a read-only file system: permission_denied (erofs), nothing changed, check clean", async () => {
      const { c, r, left, check } = await runFaulted(name, "read-only");
      expectClean(check, c);
      const err = failure(r);
      expect([err.kind, r.code]).toEqual(["permission_denied", 3]);
      expect(err.details).toMatchObject({ reason: "erofs" });
      // The first write is the lease's (or the directory made for it), or --out's temp file.
      expect(err.details.path).toMatch(c.lease ? /^\.pixir(\/session_leases(\/[^/]+\.json)?)?$/ : (c.readOnlyPath ?? /p\.jsonl$/));
      expect(err.details.next_actions.join(" ")).toContain("is read-only");
      expect(left).toEqual([]);
    });
  });
});

describe.skipIf(skipReason !== null)("runs of several files that fail part-way (tmpfs)", () => {
  /** A fresh mount holding a copy of `template`, with `pages` pages left free. */
  function mountWith(template: string, pages: number): { mnt: string; ws: string } {
    const mnt = mountTmpfs(1024) as string;
    const ws = path.join(mnt, "ws");
    cpSync(template, ws, { recursive: true });
    mkdirSync(path.join(mnt, "out"));
    fillLeaving(mnt, pages);
    return { mnt, ws };
  }

  const pagesOf = (bytes: number) => Math.ceil(bytes / PAGE);

  it("pixir export claude --out: the subagent file does not fit; the session file written before it is taken back", async () => {
    const template = tempDir();
    ok(runInThread("pixir", ["import", "claude", claudeFile(CLAUDE_WITH_AGENT)], { cwd: template }), "import claude");
    const main = statSync(claudeFile(CLAUDE_WITH_AGENT)).size;
    // Room for the session file (and its temp file's last page), none for the 150 KB subagent file.
    const { mnt, ws } = mountWith(template, pagesOf(main) + 3);
    const before = snapshot(mnt);
    const r = run("pixir", ["export", "claude", CLAUDE_WITH_AGENT, "--out", path.join(mnt, "out"), "--json"], { cwd: ws });
    const err = failure(r);
    expect([err.kind, r.code, err.details.reason]).toEqual(["log_write_failed", 1, "enospc"]);
    expect(err.details.path).toBe(path.join(mnt, "out", CLAUDE_PROJECT, CLAUDE_WITH_AGENT, "subagents", "agent-a2271d1.jsonl"));
    expect(snapshotDiff(before, snapshot(mnt)), "no file or directory of the export is left").toEqual([]);
  });

  it("pixir import claude of two sessions: the second does not fit; the first stays, the hint says so, and a rerun with room completes it", async () => {
    // §4.1 order: the session with the subagent first (its Logs ~350 KB), then the branched one (~100 KB).
    const sized = tempDir();
    const all = runInThread("pixir", ["import", "claude", claudeFile(CLAUDE_BRANCHED), claudeFile(CLAUDE_WITH_AGENT), "--json"], { cwd: sized });
    ok(all, "import claude off the mount");
    expect(all.json.imports.map((i: any) => i.session_id)).toEqual([CLAUDE_WITH_AGENT, CLAUDE_WITH_AGENT, CLAUDE_BRANCHED]);
    const sizeOf = (prefix: string) => readdirSync(path.join(sized, ".pixir/sessions")).filter((f) => f.startsWith(prefix)).reduce((n, f) => n + pagesOf(statSync(path.join(sized, ".pixir/sessions", f)).size), 0);
    const first = sizeOf(CLAUDE_WITH_AGENT);
    expect(sizeOf(CLAUDE_BRANCHED), "the premise: the second needs more than what is left").toBeGreaterThan(6);
    const { mnt, ws } = mountWith(tempDir(), first + 6);
    const r = run("pixir", ["import", "claude", claudeFile(CLAUDE_BRANCHED), claudeFile(CLAUDE_WITH_AGENT), "--json"], { cwd: ws });
    const err = failure(r);
    expect([err.kind, r.code, err.details.reason, err.details.earlier_writes_kept]).toEqual(["log_write_failed", 1, "enospc", true]);
    expect(err.details.next_actions).toEqual([`free space on the device holding ${err.details.path}, then rerun; the Logs written before it stay, and the rerun imports the rest`]);
    // The first session's Logs stay whole (and the second's rewind may have its primary already, §4.4).
    const logs = readdirSync(path.join(ws, ".pixir/sessions")).sort();
    expect(logs.slice(0, 2)).toEqual([`${CLAUDE_WITH_AGENT}.agent-a2271d1.ndjson`, `${CLAUDE_WITH_AGENT}.ndjson`]);
    // A subagent link names its Workspace (claude-interop.md): the Logs are the same but for that.
    const logsOf = (dir: string) => new Map(readdirSync(path.join(dir, ".pixir/sessions")).map((f) => [f, readFileSync(path.join(dir, ".pixir/sessions", f), "utf8").replaceAll(JSON.stringify(dir), "<WS>")]));
    const whole = logsOf(sized);
    for (const [f, text] of logsOf(ws)) expect(text === whole.get(f), f).toBe(true);
    expect(readdirSync(path.join(ws, ".pixir/session_leases"))).toEqual([]);
    const check = await runInProcess("pixir-log", ["check", "--json"], { cwd: ws });
    expect(check.code, check.stdout).toBe(0);
    // Room again: the rerun completes the run, to the very Logs of one import with room.
    unlinkSync(path.join(mnt, ".fill"));
    const again = runInThread("pixir", ["import", "claude", claudeFile(CLAUDE_BRANCHED), claudeFile(CLAUDE_WITH_AGENT), "--json"], { cwd: ws });
    ok(again, "rerun");
    expect(logsOf(ws)).toEqual(whole);
  });
});
