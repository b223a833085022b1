// pi-interop.md: importing pi session files as fork families of Logs, and exporting them back.
export * from "./format.js";
export * from "./images.js";
export * from "./entry-map.js";
export * from "./import.js";
export * from "./oracle.js";
export * from "./export.js";
