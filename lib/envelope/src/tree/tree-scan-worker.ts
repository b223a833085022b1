// Worker thread entry of the parallel Log scan (tree-scan.ts). Bundled as its own file next to the
// module that starts it; it only scans Logs and sends the results back.
import { serveScanWorker } from "./tree-scan.js";

serveScanWorker();
