// Worker thread entry of `pixir import codex` (stream.ts StreamPool): it streams the rollouts it is sent,
// each to a prepared temp file, commits them in the writing pass, and answers with what it found. Bundled
// as its own file next to the module that starts it.
import { parentPort } from "node:worker_threads";
import { commitStreamed, streamRoot, type PoolJob } from "./stream.js";

if (parentPort !== null) {
  const port = parentPort;
  // A worker is given a few jobs at once (StreamPool): while a stream waits for its fsync, the next is made.
  port.on("message", ({ id, job }: { id: number; job: PoolJob }) => {
    const done = job.kind === "stream" ? streamRoot(job.task, true) : commitStreamed(job.task);
    void done.then((outcome) => port.postMessage({ id, outcome }));
  });
}
