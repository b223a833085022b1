// Worker thread entry of `pixir import codex` (stream.ts StreamPool): it streams the rollouts it is sent,
// each to a prepared temp file, commits them in the writing pass, and answers with what it found. Bundled
// as its own file next to the module that starts it. A worker is given a few jobs at once (StreamPool):
// while a stream waits for its fsync, the next is made.
import { serveTasks } from "../../store/worker-pool.js";
import { commitStreamed, streamRoot, type CommitOutcome, type PoolJob, type StreamOutcome } from "./stream.js";

serveTasks<PoolJob, StreamOutcome | CommitOutcome>((job) => (job.kind === "stream" ? streamRoot(job.task, true) : commitStreamed(job.task)));
