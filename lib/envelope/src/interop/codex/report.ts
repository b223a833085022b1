// The report of a `pixir import codex` run (codex-interop.md), apart from the run itself so the
// modules the run uses (the import index, the stream) can name it without importing the run.
import type { JsonObject } from "../../event/envelope.js";
import type { ImportedLog, ImportResult, ImportStatus } from "../../session/agent-files.js";
import type { CodexLogRole } from "./family.js";
import { codexBaseId, shownThreadId } from "./format.js";

export type CodexImportStatus = ImportStatus;

export interface CodexSessionReport extends ImportedLog<CodexLogRole> {
  forked_to_seq: number | null;
}

export interface CodexImportReport {
  file: string;
  thread_id: string | null;
  cli_version: string | null;
  line_count: number;
  pending_tail: boolean;
  skipped_lines: number;
  fork: { source_thread_id: string | null; shared: boolean; copied_lines: number; fork_status: string | null } | null;
  sessions: CodexSessionReport[];
  leaf_session_id: string;
}

/** What a report says of the rollout file itself (a Rollout read whole, or a scan of it). */
export interface ReadLines {
  display: string;
  threadId: string;
  meta: JsonObject;
  lineCount: number;
  skippedLines: number;
  pendingTail: boolean;
}

/** The report of rollout `r` imported as the Logs `sessions`, the last one `leaf`. */
export function rolloutReport(r: ReadLines, fork: CodexImportReport["fork"], sessions: CodexSessionReport[], leaf: string): CodexImportReport {
  return {
    file: r.display,
    thread_id: shownThreadId(r.threadId),
    cli_version: typeof r.meta.cli_version === "string" ? r.meta.cli_version : null,
    line_count: r.lineCount,
    pending_tail: r.pendingTail,
    skipped_lines: r.skippedLines,
    fork,
    sessions,
    leaf_session_id: leaf,
  };
}

/** The report of a rollout streamed as its one root Log (stream.ts, grown-stream.ts). */
export function rootLogReport(r: ReadLines, eventCount: number, newEvents: number, status: CodexImportStatus): CodexImportReport {
  const base = codexBaseId(r.threadId);
  return rolloutReport(r, null, [{ session_id: base, role: "root", parent_session_id: null, forked_to_seq: null, event_count: eventCount, new_event_count: newEvents, status }], base);
}

export interface CodexImportResult extends ImportResult<CodexImportReport> {
  links: Array<{ parent_session_id: string; child_session_id: string; status: "created" | "would_create" }>;
  skipped_files: SkippedFile[];
}

/** A file the run did not import: not a rollout, empty, or (with --lenient) refused, with its error. */
export interface SkippedFile {
  file: string;
  reason: string;
  error?: { kind: string; message: string; details: Record<string, unknown> };
}
