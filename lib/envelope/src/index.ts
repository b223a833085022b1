// @pixir/envelope: every rule of pixir lives in this library; the binaries only parse flags and compose
// these stages. This list is the public API, by layer (docs/architecture.md): what the tools use, and
// resolveWorkspace, which the README shows. Everything else stays internal; tests import internals
// from their modules.

// event/
export { isLineProblem, type LineProblem, type PixirEvent, serializeEvent } from "./event/envelope.js";
export { errorEnvelope, errorText, PixirError, usageError } from "./event/errors.js";
export { newUlid } from "./event/ids.js";
export { assertSessionId } from "./event/session-id.js";
export { DETERMINISTIC_SUMMARY, isCanonicalType, MODEL_SUMMARY } from "./event/vocabulary.js";

// lines/
export { abortable } from "./lines/abortable.js";
export { splitLines } from "./lines/codec.js";

// fast/
export { decodeLogLine, LineDecoder } from "./fast/decode-line.js";

// store/
export { appendEvents } from "./store/append.js";
export { forceRelease, leaseStatus, publicStatus } from "./store/lease.js";
export { assertShareChildDepth, notFoundError, openHistory } from "./store/loader.js";
export { headLines, type ProblemHandler, rangeCheckStats, scanLog, scannedBytes } from "./store/log-read.js";
export { describeLogs, listLogs } from "./store/ls.js";
export { resolveWorkspace } from "./store/paths.js";
export { repairLog } from "./store/repair.js";

// summary/
export { finishSummary, summarizeStage, SUMMARY_FORMATS, summaryBuilder, type SummaryFormat } from "./summary/summary.js";

// tree/
export { buildSessionForest, buildSessionTree, DEFAULT_TREE_MAX_DEPTH, treeOutputChunks } from "./tree/tree.js";
export { type TreeFormat } from "./event/vocabulary.js";

// fork/
export { type ForkJob, runForkJob } from "./fork/fork-job.js";
export { checkBoundary, forkNextHint, forkPlan, forkPlanText, forkStreamChunks, parentFromLog, parentFromStdin, parseForkStrategy } from "./fork/fork.js";
export { materializeLog, removeLog } from "./fork/materialize.js";

// session/
export { checkLogs } from "./session/check.js";
export { compactJson, compactSession, compactText } from "./session/compact.js";
export { CONTEXT_FORMATS, type ContextFormat, contextItems, formatContextItem, openContextHistory, resourceLookupOf } from "./session/context.js";
export { diffSessions, diffText } from "./session/diff.js";
export { mergeSession } from "./session/merge.js";
export { repairSession } from "./session/session-repair.js";
export { writeStream } from "./session/write.js";

// interop/gemini/ and interop/opencode/
export { finishGeminiExport, planGeminiExport } from "./interop/gemini/export.js";
export { importGeminiFiles } from "./interop/gemini/import.js";
export { finishOpencodeExport, planOpencodeExport } from "./interop/opencode/export.js";
export { importOpencode } from "./interop/opencode/import.js";
// interop/pi/
export { finishPiExport, planPiExport, planPiExportStreamed } from "./interop/pi/export.js";
export { importPiFiles } from "./interop/pi/import.js";

// interop/claude/
export { finishClaudeExport, planClaudeExport, planClaudeExportStreamed } from "./interop/claude/export.js";
export { defaultProjectsRoot } from "./interop/claude/discover.js";
export { importClaude } from "./interop/claude/import.js";

// interop/codex/
export { finishCodexExport, openCodexExport, planCodexExport } from "./interop/codex/export.js";
export { shownThreadId } from "./interop/codex/format.js";
export { defaultCodexSessionsDir, importCodexRollouts } from "./interop/codex/import.js";

// archive/ (archive.md §1: session facts, the catalog, id prefixes)
export { AGENT_RULES, type AgentName, type AgentRules } from "./archive/agents.js";
export { catalogPath, catalogScansPath, CATALOG_VERSION, readCatalog, readCatalogListed, SCANS_VERSION } from "./archive/catalog.js";
export { projectOf, SESSION_KINDS, type SessionFacts, type SessionKind } from "./archive/facts.js";
export { emptyWorkspaceNote, familyText, nothingFoundNote, listSessions, type ListOptions, parseDateFlag, parseKinds, type SessionRow } from "./archive/session-list.js";
export { resolveExistingSessionId, resolveSessionId, shortestUniquePrefixes } from "./archive/resolve.js";
// archive/ (archive.md §3: model calls, prices, usage)
export { callTotal, type ModelCall, ModelCallCounter, modelCallsOf } from "./archive/model-calls.js";
export { callCost, COST_MODES, type CostMode, loadPrices, priceOf } from "./archive/prices.js";
export { PRICE_TABLE } from "./archive/price-table.js";
export { readModelCalls } from "./archive/usage-index.js";
export { type CallRows, USAGE_GROUPINGS, usageReport, type UsageReport, type UsageRow, type UsageSession } from "./archive/usage.js";
export { usageNote, usageQueryOf, workspaceUsage } from "./archive/usage-job.js";
export { usageText } from "./archive/usage-text.js";
// archive/ (archive.md §5: hand-off)
export { handBackFiles, handBackLine } from "./archive/reimport.js";
export { assertOnePlace, claudeInstallRoot, codexInstallRoot, handoffCwd, installDir, piInstallDir, resumeCommand } from "./archive/handoff.js";

// view/
export { lsLines, localMinute, tokensText } from "./view/ls-text.js";
export { renderReadableTree } from "./view/tree-text.js";
export { htmlPageChunks, type PageFacts, planHtmlExport, viewSessions } from "./view/html-export.js";
export { exportSite } from "./view/site.js";
export { markdownChunks, MD_TOOL_MODES, mdSessions, type MdToolMode, planMdExport } from "./view/md-export.js";
export { exportToFile, streamExport } from "./view/view-output.js";

// archive/search (archive.md §2)
export { indexWorkspace, type IndexReport } from "./archive/search/job.js";
export { searchSessions } from "./archive/search/run.js";
export { indexText, searchText } from "./archive/search/render.js";
export { type SearchSort } from "./archive/search/search.js";

// cli/
export { boolFlag, listFlag, parseNonNegativeInt, stringFlag } from "./cli/args.js";
export { type CommandContext, type CommandDecl, type ParsedArgs, type ToolSpec } from "./cli/command.js";
export { type CliIo, LineBuffer, processIo } from "./cli/io.js";
