// Test support: the five tools packed as users get them (scripts/pack-tools.mjs, README "Install") and
// their runtime dependencies as tarballs (scripts/pack-deps.mjs), made once per run of the suite and
// shared by the files that install them (cli/install, cli/packaging): about 6 s of CPU each time.
// They live in the run's shared directory (PIXIR_TEST_SHARED_DIR, test/support/tmpfs-tmpdir.ts), or in
// the file's own temp directory when a file runs without the global setup.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT, tempDir } from "./cli.js";
// @ts-expect-error: a plain .mjs script, shared with bench/startup.mjs
import { packRuntimeDependencies } from "../../scripts/pack-deps.mjs";

/** How long a file waits for another file's packs (pnpm pack of five tools takes 5–10 s; far more under load). */
const WAIT_MS = 240_000;

export interface Packs {
  /** The directory holding packs/ (the tools) and deps/ (their runtime dependencies). */
  dir: string;
  /** What scripts/pack-tools.mjs printed: each tool tarball's path, one a line. */
  toolsOutput: string;
  /** The dependencies' tarballs. */
  deps: string[];
}

function listed(dir: string): Packs {
  const tarballs = (sub: string) => readdirSync(path.join(dir, sub)).sort().map((f) => path.join(dir, sub, f));
  return { dir, toolsOutput: readFileSync(path.join(dir, "pack-tools.out"), "utf8"), deps: tarballs("deps") };
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * The run's packs: the first file to ask makes them (holding `<dir>.lock`, packing into a directory of its
 * own, then renaming it into place); a file that asks meanwhile waits for them, and packs its own if the
 * first one fails.
 */
export function sharedPacks(): Packs {
  const shared = process.env.PIXIR_TEST_SHARED_DIR;
  const dir = shared ? path.join(shared, "packs") : path.join(tempDir("pixir-packs-"), "packs");
  const done = path.join(dir, "pack-tools.out");
  const lock = `${dir}.lock`;
  let locked = true;
  try {
    mkdirSync(lock);
  } catch {
    locked = false;
    for (let waited = 0; !existsSync(done) && existsSync(lock) && waited < WAIT_MS; waited += 200) sleep(200);
  }
  try {
    if (existsSync(done)) return listed(dir);
    const mine = `${dir}.tmp-${process.pid}`;
    mkdirSync(mine, { recursive: true });
    const out = execFileSync(process.execPath, [path.join(ROOT, "scripts/pack-tools.mjs"), "--out", path.join(mine, "packs"), "--no-build"], { encoding: "utf8" });
    packRuntimeDependencies(path.join(mine, "deps"));
    // The printed paths name where the tarballs end up.
    writeFileSync(path.join(mine, "pack-tools.out"), out.replaceAll(mine, dir));
    if (!locked) return listed(mine);
    renameSync(mine, dir);
    return listed(dir);
  } finally {
    if (locked) rmSync(lock, { recursive: true, force: true });
  }
}
