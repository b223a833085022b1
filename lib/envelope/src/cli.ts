// @pixir/envelope/cli: what a binary's main.ts needs to declare its commands and run, and nothing else.
// It is kept apart from index.ts so that a binary's start loads the runner and yargs only: index.ts names
// the whole library, and every module it names would load with it (docs/performance.md, start-up).
export { runProcess, runTool } from "./cli/app.js";
export { type CommandClass, type CommandContext, type CommandDecl, mountedCommands, type OptionDecl, type ParsedArgs, synopsisOf, type ToolSpec, toolSynopsis } from "./cli/command.js";
export { type CliIo, processIo } from "./cli/io.js";
// The choices of the flags that take one, from the vocabulary (light: no module of the library's work).
export { AGENT_NAMES, CONTEXT_FORMATS, FORK_STRATEGIES, MD_TOOL_MODES, SESSION_KINDS, SUMMARY_FORMATS, TREE_FORMATS } from "./event/vocabulary.js";
