// cli.md §3–§4: one error type whose kind decides the exit code, default message and recovery hints.
import { isAbsolute, relative, sep } from "node:path";
import { isRefusal } from "./os-codes.js";

export type ErrorKind =
  | "usage"
  | "invalid_args"
  | "not_found"
  | "ambiguous_session_id"
  | "permission_denied"
  | "session_writer_active"
  | "session_writer_stale"
  | "session_writer_ambiguous"
  | "session_writer_lost"
  | "already_exists"
  | "corrupt_log_line"
  | "ephemeral_not_loggable"
  | "log_encode_failed"
  | "log_read_failed"
  | "log_write_failed"
  | "unsafe_state_path"
  | "stream_integrity_failed"
  | "resource_missing"
  | "fork_parent_missing"
  | "fork_cycle"
  | "fork_depth_exceeded"
  | "fork_prefix_mismatch"
  | "unsafe_fork_boundary"
  | "share_children_exist"
  | "log_check_failed"
  | "invalid_pi_session"
  | "invalid_claude_session"
  | "claude_export_incomplete"
  | "invalid_codex_session"
  | "codex_export_incomplete"
  | "invalid_gemini_session"
  | "invalid_opencode_session"
  | "interrupted"
  | "internal_error";

export type Details = Record<string, unknown>;

interface KindInfo {
  exit: number;
  message: string;
  nextActions: string[] | null;
}

const LEASE_ACTIVE_ACTIONS = ["wait_for_writer_exit", "inspect_session_writer_lease", "use_pixir_lock_release_--force_only_if_orphaned"];
const LEASE_STALE_ACTIONS = [
  "inspect_session_writer_lease",
  "use_pixir_lock_release_--force_if_the_writer_is_orphaned",
  "preserve_session_log_evidence",
];
const LEASE_AMBIGUOUS_ACTIONS = [
  "inspect_session_writer_lease",
  "avoid_starting_a_competing_writer",
  "use_pixir_lock_release_--force_only_after_confirming_the_writer_is_orphaned",
];
const LEASE_LOST_ACTIONS = ["rerun the command; the write was rolled back", "inspect_session_writer_lease"];

export const UNSAFE_PATH_ACTIONS = [
  "inspect_pixir_state_path_without_following_symlinks",
  "remove_or_relocate_the_unsafe_component_if_authorized",
];
export const STREAM_INTEGRITY_ACTIONS = [
  "rerun the whole pipeline; an upstream stage failed or was cut short",
  "check the exit status of every stage (set -o pipefail)",
];
export const CORRUPT_LINE_ACTIONS = ["run pixir-log check to list every problem in this log"];
export const TORN_TAIL_ACTIONS = ["run pixir-log repair to drop the torn final line"];

/** One row of the table: exit code, default message, default next_actions (null: none given). */
const kind = (exit: number, message: string, nextActions: string[] | null): KindInfo => ({ exit, message, nextActions });

const KINDS: Record<ErrorKind, KindInfo> = {
  usage: kind(2, "usage error", ["run the command with --help"]),
  invalid_args: kind(2, "invalid arguments", null),
  not_found: kind(2, "session log was not found", null),
  ambiguous_session_id: kind(2, "session id prefix matches more than one session", ["give more characters of the id", "run pixir ls to see the ids"]),
  permission_denied: kind(3, "permission denied", ["check file permissions on the workspace state"]),
  session_writer_active: kind(5, "Session already has an active writer lease", LEASE_ACTIVE_ACTIONS),
  session_writer_stale: kind(5, "Session has a stale writer lease", LEASE_STALE_ACTIONS),
  session_writer_ambiguous: kind(5, "Session writer lease state is ambiguous", LEASE_AMBIGUOUS_ACTIONS),
  session_writer_lost: kind(5, "Session writer lease is no longer present", LEASE_LOST_ACTIONS),
  already_exists: kind(1, "session log already exists", ["pick a new child session id", "remove the existing log if safe"]),
  corrupt_log_line: kind(1, "could not decode a log line", CORRUPT_LINE_ACTIONS),
  ephemeral_not_loggable: kind(1, "refusing to persist a non-canonical event", ["drop ephemeral events before writing"]),
  log_encode_failed: kind(1, "could not encode event for session log", []),
  log_read_failed: kind(1, "could not read session log", []),
  log_write_failed: kind(1, "could not write session log", ["check free space and rerun; the log was left unchanged"]),
  unsafe_state_path: kind(1, "Pixir state path is unsafe", UNSAFE_PATH_ACTIONS),
  stream_integrity_failed: kind(1, "input stream failed its integrity check", STREAM_INTEGRITY_ACTIONS),
  resource_missing: kind(1, "session resource payload is missing", ["restore the resource payload in the parent session", "fork at a seq before the event that references it"]),
  fork_parent_missing: kind(1, "fork parent log is missing", ["restore the parent log", "if the parent is gone for good, discard this child"]),
  fork_cycle: kind(1, "fork lineage contains a cycle", ["inspect the session_fork lines with pixir-log cat --raw"]),
  fork_depth_exceeded: kind(1, "fork lineage is deeper than 32", ["materialize an intermediate share child with pixir-log materialize"]),
  fork_prefix_mismatch: kind(1, "parent log no longer matches the forked prefix", ["restore the parent log to the state it had when the child was forked", "or discard this child"]),
  unsafe_fork_boundary: kind(1, "fork point leaves tool calls without results", ["pass --to-seq at nearest_safe_seq or next_safe_seq", "omit --strict-boundary to fork anyway"]),
  share_children_exist: kind(1, "share children depend on this log", ["materialize each child with pixir-log materialize", "or rerun with --materialize-children"]),
  log_check_failed: kind(1, "log check found problems", ["fix or restore the listed logs; pixir-log repair handles torn tails only"]),
  invalid_pi_session: kind(1, "pi session file is invalid", ["check that the file is a pi session file", "use --lenient to skip malformed lines"]),
  invalid_claude_session: kind(1, "Claude session file is invalid", ["check that the file is a Claude Code transcript", "use --lenient to keep malformed lines verbatim and skip invalid sessions"]),
  claude_export_incomplete: kind(1, "imported Claude session is incomplete", ["import the session again with pixir import claude", "restore the missing logs"]),
  invalid_gemini_session: kind(1, "Gemini CLI session file is invalid", ["check that the file is a Gemini CLI session (~/.gemini/tmp/<project>/chats/session-*.jsonl)", "use --lenient to skip malformed lines"]),
  invalid_opencode_session: kind(1, "opencode session data is invalid", ["check that the path is opencode's data directory, its opencode.db or its storage/ tree", "use --lenient to skip malformed records"]),
  invalid_codex_session: kind(1, "Codex rollout is invalid", ["check that the file is a Codex rollout (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)", "use --lenient to skip malformed lines"]),
  codex_export_incomplete: kind(1, "Codex rollout could not be exported whole", ["restore the missing logs", "remove the family's logs with pixir-log rm, then import the rollout again"]),
  interrupted: kind(130, "interrupted", ["rerun; nothing was written"]),
  internal_error: kind(1, "internal error", ["rerun with PIXIR_DEBUG=1 and report the stack trace"]),
};

/** Marks every PixirError, whichever copy of this module made it (see Symbol.hasInstance below). */
const PIXIR_ERROR = Symbol.for("pixir.error");

export class PixirError extends Error {
  readonly kind: ErrorKind;
  readonly details: Details;

  /**
   * A command bundled on its own (scripts/build.mjs, SOLO_COMMANDS) carries its own copy of this class,
   * and the runner that catches its errors has another; `instanceof` goes by the brand, so both copies
   * recognise each other's errors instead of reporting them as internal_error.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as { [PIXIR_ERROR]?: unknown })[PIXIR_ERROR] === true;
  }

  get [PIXIR_ERROR](): true {
    return true;
  }

  constructor(kind: ErrorKind, message?: string, details: Details = {}) {
    super(message ?? KINDS[kind].message);
    this.name = "PixirError";
    this.kind = kind;
    const defaults = KINDS[kind].nextActions;
    this.details = details.next_actions === undefined && defaults !== null ? { ...details, next_actions: defaults } : { ...details };
  }

  get exitCode(): number {
    return KINDS[this.kind].exit;
  }
}

/**
 * Any error as a PixirError: an OS refusal the code did not map itself is still `permission_denied`, with
 * the path the OS names, relative to `workspace` when it lies inside it (envelope-and-log.md §6).
 */
export function asPixirError(err: unknown, workspace?: string): PixirError {
  const mapped = mapOsRefusal(err, workspace);
  return mapped instanceof PixirError ? mapped : new PixirError("internal_error");
}

/** An OS refusal (`EACCES`, `EPERM`, `EROFS`) as `permission_denied`; any other error as it is. */
export function mapOsRefusal(err: unknown, workspace?: string): unknown {
  if (err instanceof PixirError) return err;
  const e = err as NodeJS.ErrnoException | undefined;
  const code = e?.code;
  if (isRefusal(code)) {
    return new PixirError("permission_denied", undefined, { path: typeof e!.path === "string" ? shownPath(e!.path, workspace) : null, operation: e!.syscall ?? null });
  }
  return err;
}

/** `p` relative to `workspace` when it lies inside it (as error details show paths), else as given. */
export function shownPath(p: string, workspace: string | undefined): string {
  if (workspace === undefined) return p;
  const rel = relative(workspace, p);
  if (rel === "") return ".";
  return rel.startsWith("..") || isAbsolute(rel) ? p : rel.split(sep).join("/");
}

export interface ErrorEnvelope {
  ok: false;
  error: { kind: ErrorKind; message: string; details: Details };
}

export function errorEnvelope(err: PixirError): ErrorEnvelope {
  return { ok: false, error: { kind: err.kind, message: err.message, details: err.details } };
}

/**
 * The text form of an error (cli.md §3): `error: <kind>: <message>`, then what the details say of the
 * input in brackets (STYLE.md "point at the input": `<path>:<line>: <reason>; <name>=<number> …`, stdin
 * as `stdin`), then each next action as a `hint:` line. The JSON envelope keeps the default message and
 * every detail; this text is for people, who would otherwise have to rerun with --json to learn where.
 */
/** Text-only sentences for kinds whose spec'd message is the kind itself (`error: interrupted: interrupted`). */
const TEXT_SENTENCES: Partial<Record<ErrorKind, (details: Record<string, unknown>) => string>> = {
  interrupted: (d) => `stopped by ${typeof d.signal === "string" ? d.signal : "a signal"} before it finished`,
};

export function errorText(err: PixirError): string {
  const sentence = err.message === err.kind ? TEXT_SENTENCES[err.kind] : undefined;
  // A usage error's message is the synopsis, which already reads `usage: …`: said once, not twice.
  const head =
    err.kind === "usage" && err.message.startsWith("usage: ") ? `error: ${err.message}` : `error: ${err.kind}: ${sentence === undefined ? err.message : sentence(err.details)}`;
  const about = detailsText(err.kind, err.details);
  const actions = Array.isArray(err.details.next_actions) ? err.details.next_actions.filter((a): a is string => typeof a === "string") : [];
  // Some spec'd actions are codes (`pass_a_valid_session_id`): read as words.
  const hints = actions.map((a) => `hint: ${/^[a-z]+(?:_[a-z]+)+$/.test(a) ? a.replaceAll("_", " ") : a}`);
  return [about === "" ? head : `${head} (${about})`, ...hints].join("\n") + "\n";
}

const CODE = /^[a-z][a-z0-9_]*$/;

/** `<path>:<line>: <reason> <field>; <name>=<number> …` from the details; "" when they hold none of it. */
function detailsText(kind: ErrorKind, details: Record<string, unknown>): string {
  const { path, file, line, reason, field } = details;
  const where = [path, file].find((p): p is string => typeof p === "string" && p !== "");
  // `-` is the standard stream: stdout for a failed write, stdin for what was read.
  const dash = kind === "log_write_failed" ? "stdout" : "stdin";
  const shown = where === undefined ? null : where === "-" ? dash : printable(where);
  const at = typeof line === "number" ? (shown === null ? `line ${line}` : `${shown}:${line}`) : shown;
  // Only our own codes and numbers are shown: what a user gave (an invalid id, say) is never echoed (cli.md §1).
  // A field that names a number shown below is said once, by its number.
  const named = typeof field === "string" && typeof details[field] === "number" ? undefined : field;
  const code = [reason, named].filter((v): v is string => typeof v === "string" && CODE.test(v)).join(" ");
  const numbers = Object.entries(details)
    .filter(([name, v]) => name !== "line" && typeof v === "number")
    .map(([name, v]) => `${name}=${v}`)
    .join(" ");
  const pointer = [at, code].filter((v) => v !== null && v !== "").join(": ");
  return [pointer, numbers].filter((v) => v !== "").join("; ");
}

/** A path as one line of text: control characters escaped, so that a file name cannot move the terminal. */
function printable(p: string): string {
  return p.replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export function usageError(synopsis: string, message?: string): PixirError {
  return new PixirError("usage", message ?? synopsis, { synopsis });
}

/** A fork child's header (its digest and count of the inherited Events) against what its parent holds now (fork.md §5). */
export function prefixMismatch(sessionId: string, parentId: string, expected: { digest: unknown; count: number }, actual: { digest: string | null; count: number }): PixirError {
  return new PixirError("fork_prefix_mismatch", undefined, {
    session_id: sessionId,
    parent_session_id: parentId,
    expected_digest: expected.digest ?? null,
    actual_digest: actual.digest,
    expected_count: expected.count,
    actual_count: actual.count,
  });
}

/** Map an fs error onto permission_denied where the OS refused us; otherwise rethrow as given. */
export function fsError(err: unknown, relPath: string, operation: string, fallback: () => PixirError): PixirError {
  if (err instanceof PixirError) return err;
  if (isRefusal((err as NodeJS.ErrnoException | undefined)?.code)) {
    return new PixirError("permission_denied", undefined, { path: relPath, operation });
  }
  return fallback();
}
