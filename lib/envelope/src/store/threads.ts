// How many threads may read Logs: the Session Tree's forest scan (tree-scan.ts) and the checking pass
// of one large Log (log-read.ts) share one rule and one setting, PIXIR_SCAN_THREADS.
import { nodeOs } from "../event/lazy-builtins.js";
import { PixirError } from "../event/errors.js";

/** Below this many bytes in all, starting a worker costs more than it saves (the forest scan). */
export const PARALLEL_SCAN_MIN_BYTES = 32 * 1024 * 1024;
const MAX_SCAN_THREADS = 4;

/**
 * How many threads read Logs: PIXIR_SCAN_THREADS when set (1 = this thread only), otherwise every
 * core up to four once the Logs hold `minBytes`, else one.
 */
export function scanThreadCount(env: NodeJS.ProcessEnv, totalBytes: number, minBytes = PARALLEL_SCAN_MIN_BYTES): number {
  const set = env.PIXIR_SCAN_THREADS;
  if (set !== undefined && set !== "") {
    const n = /^[0-9]{1,2}$/.test(set) ? Number(set) : 0;
    if (n < 1 || n > 64) {
      throw new PixirError("invalid_args", "PIXIR_SCAN_THREADS must be an integer from 1 to 64", {
        field: "PIXIR_SCAN_THREADS",
        next_actions: ["unset PIXIR_SCAN_THREADS", "set it to the number of threads that may read Logs"],
      });
    }
    return n;
  }
  return totalBytes >= minBytes ? Math.max(1, Math.min(nodeOs().availableParallelism(), MAX_SCAN_THREADS)) : 1;
}
