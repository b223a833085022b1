// The one mapping from an operating-system failure on a write path to a named error (cli-contract.md
// "Operating-system faults"): every writer (Log data, temp file, append journal, lease, resource,
// release record, export file, spool; write, fsync, rename, link, mkdir) goes through osWriteFault, so
// a full or read-only disk is never `internal_error`, and what it advises fits the cause.
import { asPixirError, PixirError, shownPath } from "./errors.js";
import { DISK_FAULTS, errnoCode, isRefusal } from "./os-codes.js";

interface Cause {
  /** What went wrong, after "could not write <what>: ". */
  says: string;
  /** next_actions, given the workspace-relative path that failed. */
  actions: (where: string) => string[];
}

const UNCHANGED = "nothing was changed";

const CAUSES: Record<string, Cause> = {
  ENOSPC: { says: "no space left on the device", actions: (w) => [`free space on the device holding ${w}, then rerun; ${UNCHANGED}`] },
  EDQUOT: {
    says: "the disk quota is used up",
    actions: (w) => [`free space within your disk quota on the device holding ${w} (or have the quota raised), then rerun; ${UNCHANGED}`],
  },
  EFBIG: {
    says: "the file would exceed the file-size limit",
    actions: (w) => [`raise the file-size limit (ulimit -f) or use a file system that takes larger files for ${w}; ${UNCHANGED}`],
  },
  EIO: {
    says: "the device reported an I/O error",
    actions: (w) => [`check the device holding ${w} for hardware or file-system errors before rerunning`, "run pixir-log check once the device is healthy"],
  },
  EMFILE: { says: "this process has too many open files", actions: () => [`raise the open-file limit (ulimit -n), then rerun; ${UNCHANGED}`] },
  ENFILE: {
    says: "the system has too many open files",
    actions: () => [`close files other programs hold open, or raise the system's open-file limit, then rerun; ${UNCHANGED}`],
  },
  ENOENT: {
    says: "a directory on its path does not exist",
    actions: (w) => [`check that the directory of ${w} exists (for temp files: TMPDIR), then rerun; ${UNCHANGED}`],
  },
  EROFS: {
    says: "the file system is read-only",
    actions: (w) => [`the file system holding ${w} is read-only: remount it read-write, or work in a Workspace on a writable file system; ${UNCHANGED}`],
  },
  EACCES: { says: "permission denied", actions: (w) => [`check that this user may write ${w} and its directories`] },
  EPERM: { says: "operation not permitted", actions: (w) => [`check that this user may write ${w} and its directories (and its attributes: chattr, mount options)`] },
};

/** What a state file is, from its workspace-relative path, for the message. */
function describe(path: string | null): string {
  if (path === null) return "a file";
  if (/\.append-journal$/.test(path)) return "the append journal";
  if (/(^|\/)session_leases\/releases\//.test(path)) return "the lease release record";
  if (/(^|\/)session_leases\/[^/]+\.json(\.tmp-[0-9a-f]{8})?$/.test(path)) return "the writer lease";
  if (/(^|\/)resources\//.test(path)) return "a session resource";
  if (/\.ndjson(\.tmp-[0-9a-f]{8})?$/.test(path)) return "session log";
  return path;
}

/**
 * An OS failure of a write to `path` (workspace-relative; what the user gave for a file outside the
 * Workspace) as a named error: `permission_denied` (exit 3) for a refusal (`EACCES`, `EPERM`, `EROFS`,
 * envelope-and-log.md §6), else `log_write_failed` (exit 1); `details.reason` is the lower-case code,
 * and `next_actions` fit the cause. A PixirError passes through unchanged. `what` names the file in the
 * message when its path does not say it (e.g. "the exported pi file").
 */
export function osWriteFault(err: unknown, path: string | null, operation: string, what?: string): PixirError {
  if (err instanceof PixirError) return err;
  const code = errnoCode(err);
  const cause = code === undefined ? undefined : CAUSES[code];
  const reason = code === undefined ? "io_error" : code.toLowerCase();
  const where = path ?? "the target file";
  const message = `could not write ${what ?? describe(path)}${cause ? `: ${cause.says}` : ""}`;
  // The OS names the call that failed (write, fsync, link, rename) more exactly than the caller can.
  const syscall = (err as NodeJS.ErrnoException | null | undefined)?.syscall;
  const details: Record<string, unknown> = { reason, path, operation: typeof syscall === "string" ? syscall : operation };
  if (cause !== undefined) details.next_actions = cause.actions(where);
  return new PixirError(isRefusal(code) ? "permission_denied" : "log_write_failed", message, details);
}

/**
 * writer-lease.md §3: creating the lease failed for a reason other than EEXIST. A refusal is
 * `permission_denied`; anything else keeps Pixir's kind, `session_writer_ambiguous` (exit 5, with
 * `filesystem_reason`), but its message and next actions name the cause: a full disk is not an orphaned
 * writer, so nothing here advises a forced release.
 */
export function leaseCreateFault(err: unknown, path: string, operation: string): PixirError {
  const named = osWriteFault(err, path, operation, "the writer lease");
  if (named.kind !== "log_write_failed") return named;
  const code = errnoCode(err);
  const cause = code === undefined ? undefined : CAUSES[code];
  return new PixirError("session_writer_ambiguous", `Session writer lease could not be acquired${cause ? `: ${cause.says}` : ""}`, {
    lease: null,
    filesystem_reason: code ?? "unknown",
    ...named.details,
    next_actions: cause ? cause.actions(path) : [`check the device holding ${path}, then rerun; ${UNCHANGED}`],
  });
}

/**
 * A run of several units (an import: claude-interop.md §4.4, codex-interop.md §4.6) failed after it
 * had written some of them. Those stay written, and a rerun continues from them, so the hint must not
 * say "nothing was changed": it says what stays. `details.earlier_writes_kept` marks such an error.
 */
export function afterEarlierWrites(err: unknown, workspace: string): unknown {
  const named = asNamedError(err, workspace);
  if (named.kind === "internal_error") return err;
  const actions = Array.isArray(named.details.next_actions) ? (named.details.next_actions as unknown[]) : [];
  const kept = "the Logs written before it stay, and the rerun imports the rest";
  const next = actions.map((a) => (typeof a === "string" ? a.replace(`; ${UNCHANGED}`, `; ${kept}`) : a));
  if (!next.some((a) => typeof a === "string" && a.includes(kept))) next.push(kept);
  return new PixirError(named.kind, named.message, { ...named.details, earlier_writes_kept: true, next_actions: next });
}

/** Syscalls that only read: a disk fault met there is a read failure. */
const READS = new Set(["read", "stat", "lstat", "fstat", "scandir", "opendir", "readlink", "access", "realpath"]);

/**
 * Anything thrown, as the error the command reports: a PixirError as it is; an OS fault no writer
 * mapped itself (a full disk, EIO, too many open files; a refusal as errors.ts names it) named after the path the OS gives
 * (relative to `workspace` when inside it); anything else `internal_error`.
 */
export function asNamedError(err: unknown, workspace?: string): PixirError {
  if (err instanceof PixirError) return err;
  const code = errnoCode(err);
  // A refusal may be a read's (a Log this user may not read): errors.ts names it without saying "write".
  if (code !== undefined && DISK_FAULTS.has(code)) {
    const e = err as NodeJS.ErrnoException;
    const path = typeof e.path === "string" ? shownPath(e.path, workspace) : null;
    const operation = e.syscall ?? null;
    if (operation !== null && READS.has(operation)) return new PixirError("log_read_failed", undefined, { reason: code.toLowerCase(), path, operation });
    return osWriteFault(err, path, operation ?? "write");
  }
  return asPixirError(err, workspace);
}
