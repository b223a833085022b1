// Node builtins that only some paths use, loaded when first asked for. A static import loads a builtin at
// the start of every process whose bundle holds the importing module: node:worker_threads and node:os
// cost a search, which starts no worker, about a millisecond together (docs/performance.md, round 6).
import { createRequire } from "node:module";

const requireBuiltin = createRequire(import.meta.url);

export const workerThreads = (): typeof import("node:worker_threads") => requireBuiltin("node:worker_threads") as typeof import("node:worker_threads");

export const nodeOs = (): typeof import("node:os") => requireBuiltin("node:os") as typeof import("node:os");
