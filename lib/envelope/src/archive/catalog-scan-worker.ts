// Worker thread entry of the catalog's scan of changed Logs (catalog.ts). Bundled as its own file next to
// the module that starts it; it only scans batches of Logs and sends their LogScans back.
import { serveTasks } from "../store/worker-pool.js";
import { scanBatch, ScanBuffer, type LogScan, type ScanTask } from "./log-facts.js";

// A Log read whole is scanned without yielding, so the batches this thread holds at once share one buffer.
const scratch = new ScanBuffer();
serveTasks<ScanTask[], LogScan[]>((batch) => scanBatch(batch, scratch));
