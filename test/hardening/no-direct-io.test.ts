// A file system that refuses O_DIRECT (ramfs: the open fails with EINVAL, after the file is made): the
// Claude import's Log temp files (store/direct-writer.ts) are then written the plain way, and the Logs,
// the report and the Workspace are those a file system with O_DIRECT gets. Mounting needs root; where it
// is impossible the test is skipped with the reason.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { commitPreparedLog, prepareLog } from "../../lib/envelope/src/store/log-write.js";
import { run, tempDir } from "../support/cli.js";
import { logsDir, projectsRoot } from "../support/claude.js";

function mountRamfs(): string | { skip: string } {
  if (process.getuid?.() !== 0) return { skip: "mounting a ramfs needs root" };
  const dir = mkdtempSync(path.join(os.tmpdir(), "pixir-ramfs-"));
  const r = spawnSync("mount", ["-t", "ramfs", "-o", "mode=0755", "ramfs", dir], { encoding: "utf8" });
  if (r.status === 0) return dir;
  rmdirSync(dir);
  return { skip: `cannot mount a ramfs here (${(r.stderr ?? "").trim() || "mount failed"})` };
}

const mount = mountRamfs();
const skipReason = typeof mount === "string" ? null : mount.skip;
if (skipReason !== null) console.warn(`no-direct-io: skipped: ${skipReason}`);
afterAll(() => {
  if (typeof mount !== "string") return;
  if (spawnSync("umount", [mount]).status !== 0) spawnSync("umount", ["-l", mount]);
  rmdirSync(mount);
});

/** The Logs of `ws` by name, the Workspace's path written `<ws>`; and the report, the same way. */
function imported(ws: string): { logs: Record<string, string>; report: unknown } {
  const r = run("pixir", ["import", "claude", projectsRoot(), "--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: "2" } });
  expect(r.code, r.stderr).toBe(0);
  const logs: Record<string, string> = {};
  for (const name of readdirSync(logsDir(ws)).sort()) logs[name] = readFileSync(path.join(logsDir(ws), name), "utf8").split(ws).join("<ws>");
  return { logs, report: JSON.parse(JSON.stringify(r.json).split(ws).join("<ws>")) };
}

describe.skipIf(skipReason !== null)("the Claude import on a file system without O_DIRECT (ramfs)", () => {
  it("prepareLog of a Log among many (overlapped) opens its temp file again without O_DIRECT", async () => {
    const ws = mkdtempSync(path.join(mount as string, "ws-"));
    mkdirSync(path.join(ws, ".pixir"));
    const lines = Array.from({ length: 5000 }, (_, i) => `{"seq":${i},"text":"${"é".repeat(i % 300)}"}\n`);
    const prepared = await prepareLog(ws, "s1", async (emit) => lines.forEach((l) => emit(l)), { lease: null }, false, "overlapped");
    commitPreparedLog(ws, prepared, { lease: null });
    expect(readFileSync(path.join(logsDir(ws), "s1.ndjson"), "utf8")).toBe(lines.join(""));
    expect(readdirSync(logsDir(ws))).toEqual(["s1.ndjson"]);
  });

  // The whole import: the same bytes either way (a worker whose temp file fails hands the run to the plain
  // writer, so this alone would not show the fallback; the test above does).
  it("writes the Logs and the report a file system with O_DIRECT gets, and leaves no temp file", () => {
    const onRamfs = mkdtempSync(path.join(mount as string, "ws-"));
    const direct = imported(tempDir());
    const plain = imported(onRamfs);
    expect(Object.keys(plain.logs).length).toBeGreaterThan(10);
    expect(Object.keys(plain.logs).filter((n) => n.includes(".tmp-"))).toEqual([]);
    expect(plain.logs).toEqual(direct.logs);
    expect(plain.report).toEqual(direct.report);
  });
});
