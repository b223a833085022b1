// Worker thread entry of `pixir import codex` (stream.ts StreamPool): it streams the rollouts it is sent,
// one at a time, each to a prepared temp file, and answers with what it found. Bundled as its own file
// next to the module that starts it.
import { parentPort } from "node:worker_threads";
import { streamRoot, type StreamTask } from "./stream.js";

if (parentPort !== null) {
  const port = parentPort;
  port.on("message", (task: StreamTask) => {
    void streamRoot(task).then((outcome) => port.postMessage(outcome));
  });
}
