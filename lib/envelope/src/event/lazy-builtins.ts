// Node builtins that only some paths use, loaded when first asked for. A static import loads a builtin at
// the start of every process whose bundle holds the importing module: node:worker_threads and node:os
// cost a search, which starts no worker, about a millisecond together (docs/performance.md, round 6), and
// node:net (with the stream modules under it) and node:fs/promises about 4 ms more (round 12).
// process.getBuiltinModule (Node ≥ 20.16) needs no module URL, so a start module (main.cjs) may hold this.

export const workerThreads = (): typeof import("node:worker_threads") => process.getBuiltinModule("node:worker_threads");

export const nodeOs = (): typeof import("node:os") => process.getBuiltinModule("node:os");

/** For stdin read as a socket (lines/pipe-read.ts), which only a tool reading a pipe does. */
export const nodeNet = (): typeof import("node:net") => process.getBuiltinModule("node:net");

export const fsPromises = (): typeof import("node:fs/promises") => process.getBuiltinModule("node:fs/promises");
