// codex-interop.md: importing Codex rollouts as families of Logs, and exporting them back.
export * from "./format.js";
export * from "./line-map.js";
export * from "./rebuild.js";
export * from "./family.js";
export * from "./import.js";
export * from "./export.js";
