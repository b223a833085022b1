// Worker thread entry of a large Log's checking pass (log-read.ts scanBytes): it checks one range of
// whole lines and sends back what it found. Bundled as its own file next to the module that starts it.
import { parentPort, workerData } from "node:worker_threads";
import { serveRangeCheck, type RangeCheckTask } from "./log-read.js";

if (parentPort !== null) {
  const port = parentPort;
  serveRangeCheck(workerData as RangeCheckTask).then(
    (reply) => port.postMessage(reply),
    // Any failure (the file is gone, unreadable) is the per-line pass's to name: no answer here.
    () => process.exit(1),
  );
}
