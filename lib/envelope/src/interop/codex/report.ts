// The report of a `pixir import codex` run (codex-interop.md), apart from the run itself so the
// modules the run uses (the import index, the stream) can name it without importing the run.
import type { ImportedLog, ImportResult, ImportStatus } from "../../session/agent-files.js";
import type { CodexLogRole } from "./family.js";

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
