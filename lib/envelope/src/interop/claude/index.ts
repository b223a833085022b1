// claude-interop.md: Claude Code transcripts as fork families of Logs, and back.
export * from "./transcript.js";
export * from "./map.js";
export * from "./discover.js";
export * from "./plan.js";
export * from "./import.js";
export * from "./export.js";
export * from "./oracle.js";
export * from "./export-fork.js";
