// envelope-and-log.md §2 and fork.md §2: the closed type vocabulary. Kept apart from envelope.ts so
// that the byte-level readers (line-head.ts, line-check.ts), which envelope.ts uses, can import it.
export const CANONICAL_TYPES = [
  "user_message",
  "assistant_message",
  "reasoning",
  "skill_activation",
  "subagent_event",
  "workflow_event",
  "session_fork",
  "branch_summary",
  "history_compaction",
  "provider_usage",
  "turn_failed",
  "tool_call",
  "tool_result",
  "permission_decision",
] as const;

export const EPHEMERAL_TYPES = ["text_delta", "reasoning_delta", "status", "plan", "context_pressure"] as const;

/** fork.md §2: the types a fork never inherits (its own records, checkpoints, usage, failed turns). */
const NEVER_INHERITED: ReadonlySet<string> = new Set(["provider_usage", "history_compaction", "session_fork", "branch_summary", "turn_failed"]);

/** fork.md §2: the 9 replay types a fork inherits, in Pixir's order. */
export const REPLAY_TYPES: readonly CanonicalType[] = CANONICAL_TYPES.filter((t) => !NEVER_INHERITED.has(t));

export type CanonicalType = (typeof CANONICAL_TYPES)[number];
export type EphemeralType = (typeof EPHEMERAL_TYPES)[number];

const CANONICAL = new Set<string>(CANONICAL_TYPES);
const EPHEMERAL = new Set<string>(EPHEMERAL_TYPES);
const REPLAY = new Set<string>(REPLAY_TYPES);

export const isCanonicalType = (t: unknown): t is CanonicalType => typeof t === "string" && CANONICAL.has(t);
export const isEphemeralType = (t: unknown): t is EphemeralType => typeof t === "string" && EPHEMERAL.has(t);
export const isReplayType = (t: unknown): boolean => typeof t === "string" && REPLAY.has(t);

export const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** fork.md §3.2: how a child holds its inherited prefix. */
export type ForkStrategy = "replay_v1" | "share_v1";
export const FORK_STRATEGIES: readonly ForkStrategy[] = ["replay_v1", "share_v1"];

/** fork.md §3.2 (branch_summary_strategy), summarize.md §2: the strategies a branch_summary names. */
export const DETERMINISTIC_SUMMARY = "deterministic_operational_summary_v1";
export const MODEL_SUMMARY = "model_assisted_operational_summary_v1";
