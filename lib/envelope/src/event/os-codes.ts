// The operating-system error codes a write can meet, and what each says about its cause. Pure data, so
// errors.ts (the refusal rule of envelope-and-log.md §6) and the write-fault mapping (os-fault.ts) share it.

/** `EACCES`, `EPERM`, `EROFS`: the OS refused us (envelope-and-log.md §6: `permission_denied`). */
export function isRefusal(code: unknown): boolean {
  return code === "EACCES" || code === "EPERM" || code === "EROFS";
}

/**
 * The faults of the device or of the process's limits rather than of our input: on any write path they
 * are named (cli-contract.md "Operating-system faults"), never `internal_error`.
 */
export const DISK_FAULTS: ReadonlySet<string> = new Set(["ENOSPC", "EDQUOT", "EFBIG", "EIO", "EMFILE", "ENFILE"]);

/** Every code that names an OS fault on a write path, refusals included. */
export const isWriteFaultCode = (code: unknown): code is string => typeof code === "string" && (isRefusal(code) || DISK_FAULTS.has(code));

/** The code of a Node error (`err.code`), or undefined. */
export function errnoCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | null | undefined)?.code;
  return typeof code === "string" && /^E[A-Z0-9]+$/.test(code) ? code : undefined;
}
