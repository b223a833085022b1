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

/** The output formats of pixir-tree (tree.md §3), pixir-summarize (summarize.md §1) and pixir context (cli.md §12.5). */
export const TREE_FORMATS = ["text", "json", "dot", "mermaid"] as const;
export type TreeFormat = (typeof TREE_FORMATS)[number];
export type SummaryFormat = "ndjson" | "text";
export const SUMMARY_FORMATS: readonly SummaryFormat[] = ["ndjson", "text"];
export type ContextFormat = "ndjson" | "text";
export const CONTEXT_FORMATS: readonly ContextFormat[] = ["ndjson", "text"];
/** view.md §2: how `pixir export md` shows tool calls. */
export const MD_TOOL_MODES = ["full", "summary", "none"] as const;
export type MdToolMode = (typeof MD_TOOL_MODES)[number];

/** fork.md §3.2 (branch_summary_strategy), summarize.md §2: the strategies a branch_summary names. */
export const DETERMINISTIC_SUMMARY = "deterministic_operational_summary_v1";
export const MODEL_SUMMARY = "model_assisted_operational_summary_v1";

/** archive.md §1: the agents a session can come from (`pixir`: made by pixir itself), and a session's kinds. */
export const AGENT_NAMES = ["claude", "codex", "pi", "gemini", "opencode", "pixir"] as const;
export const SESSION_KINDS = ["root", "fork", "branch", "subagent"] as const;
