// envelope-and-log.md §5: the session-id grammar. An invalid id is never echoed anywhere.
import { isUtf8 } from "node:buffer";
import { PixirError } from "./errors.js";
import { lazyRegExp } from "./lazy-regexp.js";

export const MAX_SESSION_ID_BYTES = 235;
const PATTERN = lazyRegExp(String.raw`^[\p{L}\p{N}_][\p{L}\p{N}\p{M}_.\-]*$`, "u");
const FIRST = lazyRegExp(String.raw`^[\p{L}\p{N}_]`, "u");
/**
 * The ASCII ids PATTERN accepts (ASCII holds no \p{M}), checked without the Unicode tables: listings test
 * thousands, and compiling PATTERN's Unicode classes for a first match is about 11 million instructions
 * (callgrind; `node -e 0` runs about 85 million), so an ASCII id (every id pixir and the agents make)
 * never makes it.
 */
const ASCII_VALID = /^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,234}$/;

/** UTF-8 byte order of two strings (ids, file names): the fixed order pixir lists things in. */
export const compareBytes = (a: string, b: string): number => (a === b ? 0 : Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8")));

export type SessionIdReason = "not_string" | "empty" | "too_long" | "invalid_utf8" | "invalid_character" | "invalid_start";

export type SessionIdField = "session_id" | "child_session_id" | "parent_session_id" | "fork_root_session_id" | "resource_id" | string;

/** The first rule that fails, in the spec's order, or null for a valid id. */
export function sessionIdProblem(value: unknown): { reason: SessionIdReason; observedBytes?: number } | null {
  if (typeof value !== "string" && !Buffer.isBuffer(value)) return { reason: "not_string" };
  const bytes = typeof value === "string" ? Buffer.byteLength(value, "utf8") : value.length;
  if (bytes === 0) return { reason: "empty", observedBytes: 0 };
  if (bytes > MAX_SESSION_ID_BYTES) return { reason: "too_long", observedBytes: bytes };
  let text: string;
  if (Buffer.isBuffer(value)) {
    if (!isUtf8(value)) return { reason: "invalid_utf8", observedBytes: bytes };
    text = value.toString("utf8");
  } else {
    // A lone surrogate cannot be encoded as UTF-8 and so cannot name a file.
    if (!value.isWellFormed()) return { reason: "invalid_utf8", observedBytes: bytes };
    text = value;
  }
  if (ASCII_VALID.test(text) || PATTERN().test(text)) return null;
  if (FIRST().test(text)) return { reason: "invalid_character", observedBytes: bytes };
  return { reason: "invalid_start", observedBytes: bytes };
}

export function isValidSessionId(value: unknown): value is string {
  return typeof value === "string" && (ASCII_VALID.test(value) || sessionIdProblem(value) === null);
}

/** Throws invalid_args (exit 2) naming only the role of the value and why it failed. */
export function assertSessionId(value: unknown, field: SessionIdField = "session_id"): asserts value is string {
  const problem = sessionIdProblem(value);
  if (problem === null) return;
  const details: Record<string, unknown> = { field, reason: problem.reason, max_bytes: MAX_SESSION_ID_BYTES };
  if (problem.observedBytes !== undefined) details.observed_bytes = problem.observedBytes;
  details.next_actions = ["pass_a_valid_session_id"];
  throw new PixirError("invalid_args", field === "resource_id" ? "resource id is invalid" : "session id is invalid", details);
}
