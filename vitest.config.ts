import { configDefaults, defineConfig } from "vitest/config";
import LongestFirst from "./test/support/sequencer.js";
import { fileURLToPath } from "node:url";
// @ts-expect-error: a plain ES module of the build, without type declarations
import { pageDefines } from "./scripts/page.mjs";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));
/** Files that time something a person waits for: run after the rest of the suite, one at a time. */
const QUIET = ["test/view/view-speed.test.ts"];

export default defineConfig(async () => ({
  resolve: {
    // The same aliases as scripts/build.mjs, so tests can also run a tool's main() in-process.
    alias: {
      // Before "@pixir/envelope", which would otherwise take the subpath as a file below index.ts.
      "@pixir/envelope/cli": here("./lib/envelope/src/cli.ts"),
      "@pixir/envelope": here("./lib/envelope/src/index.ts"),
      "pixir-log": here("./tools/pixir-log/src/main.ts"),
      "pixir-fork": here("./tools/pixir-fork/src/main.ts"),
      "pixir-tree": here("./tools/pixir-tree/src/main.ts"),
      "pixir-summarize": here("./tools/pixir-summarize/src/main.ts"),
    },
  },
  // The page of `pixir export html` is bundled as the build bundles it (scripts/page.mjs).
  define: { ...(await pageDefines()), __PIXIR_VERSION__: JSON.stringify("0.0.0-test"), __PIXIR_PROGRAM__: JSON.stringify("pixir") },
  test: {
    // The library's unit tests share their worker processes (no process and module graph per file: a sixth
    // less CPU for lib/); they change no process state. The suite's files keep a process each. No include
    // at the top level: a project that extends it would add it to its own.
    // The "quiet" project runs once the others are done, alone: a page's speed is timed there, not the load
    // of three test files at once on two cores (test/view/view-speed.test.ts).
    projects: [
      { extends: true, test: { name: "lib", include: ["lib/*/test/**/*.test.ts"], isolate: false, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "suite", include: ["test/**/*.test.ts", "tools/*/test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...QUIET], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "quiet", include: QUIET, sequence: { groupOrder: 1 } } },
    ],
    // The longest files first, in a fresh clone too (test/support/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Two cores on CI machines. The spawned tools wait on fsync part of the time, so a third file at once
    // keeps both cores busy: the whole suite took 308 s against 337 s with two (1,656 tests, 2 cores).
    pool: "forks",
    maxWorkers: 3,
    // The temp Workspaces on a tmpfs (/dev/shm), where an fsync costs nothing (test/support/tmpfs-tmpdir.ts).
    globalSetup: [here("./test/support/tmpfs-tmpdir.ts")],
    // Measurement only: PIXIR_TEST_CPU=<dir> writes each file's CPU seconds there (test/support/cpu-per-file.ts).
    setupFiles: process.env.PIXIR_TEST_CPU ? [here("./test/support/cpu-per-file.ts")] : [],
  },
}));
