// Worker thread entry of the catalog's scan of changed Logs (catalog.ts). Bundled as its own file next to
// the module that starts it; it only scans Logs and sends each LogScan back.
import { serveTasks } from "../store/worker-pool.js";
import { ScanBuffer, scanLogFacts, type LogScan } from "./log-facts.js";

// A Log read whole is scanned without yielding, so the tasks this thread holds at once share one buffer.
const scratch = new ScanBuffer();
serveTasks<{ abs: string; size: number }, LogScan>(({ abs, size }) => scanLogFacts(abs, size, scratch));
