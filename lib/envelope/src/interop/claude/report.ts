// claude-interop.md §4.5: the report of `pixir import claude` (per file, per Log), the run's options, and
// a planned file's writes, apart from the run so the read, plan and apply stages need not import it.
import { isJsonObject, type PixirEvent } from "../../event/envelope.js";
import { isValidSessionId } from "../../event/session-id.js";
import { readTail, type PreparedLog } from "../../store/log-write.js";
import type { SourceFile } from "./discover.js";
import type { KnownFile } from "./known.js";
import type { BatchPlan } from "./plan.js";
import type { LogPlan, LogRole } from "./plan-log.js";

export type ClaudeFileStatus = "created" | "appended" | "unchanged" | "empty" | "skipped" | "would_create" | "would_append";

export type ClaudeLogStatus = "created" | "appended" | "unchanged" | "would_create" | "would_append";

export interface ClaudeLogReport {
  session_id: string;
  role: LogRole;
  parent_session_id: string | null;
  forked_to_seq: number | null;
  event_count: number;
  status: ClaudeLogStatus;
  appended_events?: number;
}

export interface ClaudeFileReport {
  file: string;
  kind: "session" | "fork_session" | "subagent";
  session_id: string | null;
  agent_id: string | null;
  status: ClaudeFileStatus;
  records: number;
  new_records: number;
  blank_lines: number;
  malformed_lines: number;
  pending_tail_bytes: number;
  leaf_uuid: string | null;
  leaf_session_id: string | null;
  forked_from: unknown;
  logs: ClaudeLogReport[];
  error?: Record<string, unknown>;
}

export interface ClaudeImportResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  workspace: string;
  imports: ClaudeFileReport[];
  /** §4.1: symbolic links met while listing, not read; the key is there only when one was met (§4.5's shape). */
  skipped_files?: Array<{ file: string; reason: "symlink" }>;
}

export interface ClaudeImportOptions {
  /** Absolute paths; empty: the projects root of §1.1. */
  paths: string[];
  lenient?: boolean;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /** §4.5 progress: source file `i` of `n` is being read; `percent` of its bytes read, for files of 1 MiB or more. */
  progress?: (i: number, n: number, file: string, percent: number | null) => void;
  /** archive.md §5: session files another stage takes (a file pixir exported from a Log of this Workspace). */
  skipFile?: (abs: string) => boolean;
}

/** One Log's writes of a planned file. */
export interface LogWrite {
  id: string;
  existed: boolean;
  /** The Log lines to write ("" in a dry run, which writes nothing: its lines are only checked). */
  lines: string;
  count: number;
}

export interface FilePlan {
  report: ClaudeFileReport;
  writes: LogWrite[];
  /** New Logs already written to temp files (a fresh unit, `prepare`), put in place by the writing pass. */
  prepared: PreparedLog[];
  /** The same, while they are being written (planUnit waits for them). */
  preparing?: Array<Promise<PreparedLog>>;
  /** The planned batch (a fork file's source needs its Logs, §3.7). */
  batch?: BatchPlan;
  /** The import index entry to write once the file's Logs are written (known.ts). */
  known?: { rootId: string; entry: KnownFile };
}

export function logReport(log: LogPlan, status: ClaudeLogStatus): ClaudeLogReport {
  return {
    session_id: log.id,
    role: log.role,
    parent_session_id: log.parent?.id ?? null,
    forked_to_seq: log.parent === null ? null : log.forkedToSeq,
    event_count: log.ownStart > 0 ? 1 + log.events.length - log.ownStart : log.events.length,
    status,
    ...(status === "appended" || status === "would_append" ? { appended_events: log.batch.length } : {}),
  };
}

/** §4.5 `forked_from` of a file whose Logs exist, from its root Log's first Event (§3.5, §3.7). */
export function forkedFromOfRoot(first: PixirEvent | undefined): unknown {
  const c = first && isJsonObject(first.data.claude) ? first.data.claude : null;
  if (c === null) return null;
  if (first!.type === "session_fork") return c.fork_kind === "claude_fork_session" && isJsonObject(c.forked_from) ? { ...c.forked_from, shared: true } : null;
  return c.forked_from ?? null;
}

/** The report of a Log an unchanged file leaves alone, from its first and last lines only. */
export function unchangedLog(ws: string, id: string, first: PixirEvent): ClaudeLogReport {
  const c = (first.data.claude ?? {}) as Record<string, unknown>;
  const fork = first.type === "session_fork";
  const lastSeq = readTail(ws, id).last?.seq ?? 0;
  const replay = fork && typeof first.data.replay_event_count === "number" ? first.data.replay_event_count : 0;
  const role: LogRole = fork
    ? c.fork_kind === "claude_root"
      ? "root_branch"
      : c.fork_kind === "claude_fork_session"
        ? "fork_session"
        : "branch"
    : c.kind === "subagent"
      ? "subagent"
      : c.kind === "inline_subagent"
        ? "inline_subagent"
        : "primary";
  return {
    session_id: id,
    role,
    parent_session_id: fork && typeof first.data.parent_session_id === "string" ? first.data.parent_session_id : null,
    forked_to_seq: fork && typeof first.data.forked_to_seq === "number" ? first.data.forked_to_seq : null,
    event_count: fork ? 1 + lastSeq - replay : lastSeq + 1,
    status: "unchanged",
  };
}

export function skippedReport(src: SourceFile, error: Record<string, unknown>): ClaudeFileReport {
  return { ...emptyReport(src, "skipped"), error };
}

/** A file's report before anything is known of it. */
export function emptyReport(src: SourceFile, status: ClaudeFileStatus): ClaudeFileReport {
  return {
    file: src.file,
    kind: src.kind,
    session_id: isValidSessionId(src.claudeSessionId) ? src.claudeSessionId : null,
    agent_id: src.agentId,
    status,
    records: 0,
    new_records: 0,
    blank_lines: 0,
    malformed_lines: 0,
    pending_tail_bytes: 0,
    leaf_uuid: null,
    leaf_session_id: null,
    forked_from: null,
    logs: [],
  };
}
