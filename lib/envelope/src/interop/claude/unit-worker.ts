// Worker thread entry of `pixir import claude` (import.ts prepareFreshUnit): it prepares the fresh units
// it is sent, one at a time, each Log to a temp file, and answers with the reports. Bundled as its own
// file next to the module that starts it.
import { serveTasks } from "../../store/worker-pool.js";
import { prepareFreshUnit, type UnitOutcome, type UnitTask } from "./unit.js";

serveTasks<UnitTask, UnitOutcome>((task) => prepareFreshUnit(task));
