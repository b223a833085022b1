// Global setup of the suite: one directory for the run, on a tmpfs where there is one. Every Log, lease
// and directory a tool writes is fsynced (product behaviour: durability), and on this VM's disk those
// waits were about a third of the suite's wall time; on a tmpfs an fsync returns at once and the tools
// run the same code. TMPDIR is set before vitest starts its workers, so the test files (os.tmpdir()), the
// tools they spawn and their worker threads all make their temp files there; it is removed at the end.
// PIXIR_TEST_TMPFS=0 keeps the caller's TMPDIR (a run on the real disk); so does a machine without a
// writable tmpfs at /dev/shm. The suites that need a full or read-only disk mount tmpfs of their own.
// PIXIR_TEST_SHARED_DIR (below the run's directory either way) holds what files of one run share
// (test/support/packs.ts); the tools never see it (childEnv drops PIXIR_*).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statfsSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const SHM = "/dev/shm";
const TMPFS_MAGIC = 0x01021994;
/** Enough room for the largest file's temp data at three files at once (the hardening suites' big Logs). */
const MIN_FREE_BYTES = 2 * 1024 ** 3;

/** The tmpfs to use, or why not. */
function tmpfsRoot(): string | { reason: string } {
  if (process.env.PIXIR_TEST_TMPFS === "0") return { reason: "PIXIR_TEST_TMPFS=0" };
  try {
    const fs = statfsSync(SHM);
    if (fs.type !== TMPFS_MAGIC) return { reason: `${SHM} is not a tmpfs` };
    if (fs.bavail * fs.bsize < MIN_FREE_BYTES) return { reason: `${SHM} has less than 2 GiB free` };
    const root = mkdtempSync(path.join(SHM, "pixir-vitest-"));
    // As /tmp is: every user may make and enter their own directories (the tests that run a tool as
    // another user put its copy there).
    chmodSync(root, 0o1777);
    return root;
  } catch (err) {
    return { reason: `${SHM}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
  }
}

export default function setup(): () => void {
  let root = tmpfsRoot();
  if (typeof root === "string") process.env.TMPDIR = root;
  else {
    console.warn(`temp Workspaces on the disk (${root.reason})`);
    root = mkdtempSync(path.join(os.tmpdir(), "pixir-vitest-"));
  }
  const shared = path.join(root, "shared");
  mkdirSync(shared);
  process.env.PIXIR_TEST_SHARED_DIR = shared;
  const made = root;
  return () => rmSync(made, { recursive: true, force: true });
}
