// pixir search when the index cannot be written (archive.md §2): a full disk under .pixir/index is
// `log_write_failed` naming the index, leaves every Log byte-identical, and the next search once there is
// room repairs the index. The disk is a real tmpfs mounted on the Workspace's .pixir/index; mounting needs
// root, and without it the test is skipped with the reason.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, run, tempDir } from "../support/cli.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";

const SPOTTER = "258c7280-ae70-4798-800f-63464d01a85d";
const mounted: string[] = [];

function sh(cmd: string, args: string[]): { ok: boolean; said: string } {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return { ok: r.status === 0, said: `${r.stderr ?? ""}${r.error?.message ?? ""}`.trim() };
}

/** Mount a tmpfs of `kib` KiB on `dir`, or say why not. */
function mountTmpfs(dir: string, kib: number): string | null {
  const r = sh("mount", ["-t", "tmpfs", "-o", `size=${kib}k,mode=0755`, "tmpfs", dir]);
  if (!r.ok) return r.said || "mount failed";
  mounted.push(dir);
  return null;
}

afterAll(() => {
  for (const dir of mounted) if (!sh("umount", [dir]).ok) sh("umount", ["-l", dir]);
});

const probeDir = mkdtempSync(path.join(os.tmpdir(), "pixir-search-probe-"));
const skipReason = process.getuid?.() !== 0 ? "mounting a tmpfs needs root" : mountTmpfs(probeDir, 64);
if (skipReason === null) sh("umount", [mounted.pop()!]);
rmdirSync(probeDir);
if (skipReason !== null) console.warn(`search-faults: skipped: cannot mount a tmpfs here (${skipReason})`);

function digestOfLogs(ws: string): string {
  const h = createHash("sha256");
  const dir = path.join(ws, ".pixir", "sessions");
  for (const name of readdirSync(dir).sort()) h.update(name).update(readFileSync(path.join(dir, name)));
  return h.digest("hex");
}

describe.skipIf(skipReason !== null)("a full disk while indexing", () => {
  it("is log_write_failed naming the index, the Logs untouched; the next search with room repairs it", () => {
    const ws = tempDir("pixir-search-full-");
    const root = tempDir("pixir-search-full-src-");
    mkdirSync(path.join(root, "spotter"));
    cpSync(path.join(CLAUDE_FIXTURES, "spotter", `${SPOTTER}.jsonl`), path.join(root, "spotter", `${SPOTTER}.jsonl`));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const indexDir = path.join(ws, ".pixir", "index");
    mkdirSync(indexDir, { recursive: true });
    expect(mountTmpfs(indexDir, 8192)).toBeNull();
    // Leave about 300 KiB: the index of this session needs more.
    const filler = path.join(indexDir, "filler");
    writeFileSync(filler, Buffer.alloc(7892 * 1024));
    const before = digestOfLogs(ws);
    const full = run("pixir", ["search", "annotation", "--json"], { cwd: ws });
    expect(full.code).toBe(1);
    const err = JSON.parse(full.stderr.trim().split("\n").at(-1)!).error;
    expect(err.kind).toBe("log_write_failed");
    expect(err.details.path).toBe(".pixir/index/search.sqlite");
    expect(err.message).toContain(".pixir/index/search.sqlite");
    expect(full.stderr).not.toMatch(/SQLITE_|SqliteError/);
    expect(digestOfLogs(ws)).toBe(before);
    rmSync(filler);
    const ok = run("pixir", ["search", "annotation", "--json", "--limit", "1000"], { cwd: ws });
    expect(ok.code, ok.stderr).toBe(0);
    const hits = ok.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(hits.length).toBeGreaterThan(10);
    // The repaired index answers as one built from nothing does.
    const fresh = tempDir("pixir-search-fresh-");
    cpSync(path.join(ws, ".pixir", "sessions"), path.join(fresh, ".pixir", "sessions"), { recursive: true });
    expect(run("pixir", ["search", "annotation", "--json", "--limit", "1000"], { cwd: fresh }).stdout).toBe(ok.stdout);
    expect(digestOfLogs(ws)).toBe(before);
  });
});

describe.skipIf(skipReason !== null)("a read-only Workspace", () => {
  it("searches the index as it is, saying it may be stale; without an index, one built in memory", () => {
    const ws = tempDir("pixir-search-ro-");
    expect(mountTmpfs(ws, 65536)).toBeNull();
    const root = tempDir("pixir-search-ro-src-");
    mkdirSync(path.join(root, "spotter"));
    cpSync(path.join(CLAUDE_FIXTURES, "spotter", `${SPOTTER}.jsonl`), path.join(root, "spotter", `${SPOTTER}.jsonl`));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["search", "annotation"], { cwd: ws }).code).toBe(0);
    const append = run("pixir", ["append", SPOTTER], { cwd: ws, input: `${JSON.stringify({ type: "user_message", data: { text: "zanzibarquokka" } })}\n` });
    expect(append.code, append.stderr).toBe(0);
    expect(sh("mount", ["-o", "remount,ro", ws]).ok).toBe(true);
    const stale = run("pixir", ["search", "zanzibarquokka", "--json"], { cwd: ws });
    expect(stale.code, stale.stderr).toBe(0);
    expect(stale.stdout).toBe("");
    expect(stale.stderr).toMatch(/index_may_be_stale/);
    const old = run("pixir", ["search", "annotation", "--json"], { cwd: ws });
    expect(old.code).toBe(0);
    expect(old.stdout.trim().split("\n").length).toBeGreaterThan(5);
    expect(sh("mount", ["-o", "remount,rw", ws]).ok).toBe(true);
    rmSync(path.join(ws, ".pixir", "index", "search.sqlite"));
    expect(sh("mount", ["-o", "remount,ro", ws]).ok).toBe(true);
    const memory = run("pixir", ["search", "zanzibarquokka", "--json"], { cwd: ws });
    expect(memory.code, memory.stderr).toBe(0);
    expect(JSON.parse(memory.stdout)).toMatchObject({ session_id: SPOTTER });
    expect(memory.stderr).toMatch(/index_in_memory/);
  });

  it("an index whose pages only a query reads are damaged: the Logs indexed in memory, the answer right", () => {
    const ws = tempDir("pixir-search-ro-bad-");
    expect(mountTmpfs(ws, 65536)).toBeNull();
    const root = tempDir("pixir-search-ro-bad-src-");
    mkdirSync(path.join(root, "spotter"));
    cpSync(path.join(CLAUDE_FIXTURES, "spotter", `${SPOTTER}.jsonl`), path.join(root, "spotter", `${SPOTTER}.jsonl`));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const good = run("pixir", ["search", "annotation", "--json", "--limit", "500"], { cwd: ws });
    expect(good.code, good.stderr).toBe(0);
    const file = path.join(ws, ".pixir", "index", "search.sqlite");
    const Database = createRequire(path.join(ROOT, "lib/envelope/package.json"))("better-sqlite3") as new (f: string, o: { readonly: boolean }) => { prepare(s: string): { all(): unknown[] }; close(): void };
    const db = new Database(file, { readonly: true });
    const pages = (db.prepare("SELECT pageno FROM dbstat WHERE name = 'fts_data'").all() as Array<{ pageno: number }>).map((p) => p.pageno);
    db.close();
    const bytes = readFileSync(file);
    for (const p of pages.slice(2)) bytes.fill(0x5a, (p - 1) * 4096, p * 4096);
    writeFileSync(file, bytes);
    expect(sh("mount", ["-o", "remount,ro", ws]).ok).toBe(true);
    const before = digestOfLogs(ws);
    const r = run("pixir", ["search", "annotation", "--json", "--limit", "500"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(good.stdout);
    expect(r.stderr).toMatch(/index_in_memory/);
    expect(r.stderr).not.toMatch(/SQLITE_|SqliteError/);
    expect(digestOfLogs(ws)).toBe(before);
  });
});
