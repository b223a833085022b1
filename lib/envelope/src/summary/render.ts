// context-and-compaction.md §2: the texts a model reads for Events that are not plain messages, as
// Pixir renders them: checkpoints, branch summaries, skill activations, finished subagents and resource
// descriptors. The fold (`pixir context`), `pixir-summarize --format text` and the Claude and Codex
// exports all write these texts from here.
import { bullets, etrim, isInteger, isTermObject, member, orElse, str, termOfJs, type Term, type TermObject } from "../event/elixir.js";
import { truncate } from "../event/text.js";

const EMPTY: TermObject = Object.freeze(Object.create(null) as TermObject);
/** §7 D4: a value that is not an object is read as `{}`. */
const objectOr = (v: Term | undefined): TermObject => (isTermObject(v) ? v : EMPTY);

/** §2.1 and §2.2: the shared layout; `parent` adds the `Parent:` line of a branch summary. */
function renderLayout(title: string, data: TermObject, parent: boolean): string {
  const range = objectOr(data.range);
  const lines = [title];
  if (parent) lines.push(`Parent: ${str(orElse(data.parent_session_id, "unknown"))}`);
  lines.push(
    `Range: seq ${str(range.from_seq)}..${str(range.to_seq)} (${str(data.source_event_count)} events)`,
    `Strategy: ${str(data.strategy)}`,
    "",
    "Summary:",
    str(data.summary),
    "",
    "Files touched:",
    bullets(data.files_touched),
    "",
    "Open tasks:",
    bullets(data.open_tasks),
    "",
    "Limitations:",
    bullets(data.limitations),
  );
  return etrim(lines.join("\n"));
}

/** §2.1: a `history_compaction` checkpoint as the user text a model sees. */
export function renderCheckpoint(data: TermObject): string {
  return renderLayout("Compressed session memory", data, false);
}

/** §2.2 (summarize.md §5): a `branch_summary` as the user text a model sees. */
export function renderBranchSummary(data: TermObject): string {
  return renderLayout("Branch summary from forked parent prefix", data, true);
}

/** The keys the layout reads, as Terms: a summary's long lists (tool_calls) are never converted. */
const RENDERED_KEYS = ["parent_session_id", "range", "source_event_count", "strategy", "summary", "files_touched", "open_tasks", "limitations"] as const;
function renderedFields(data: Record<string, unknown>): TermObject {
  const out = Object.create(null) as TermObject;
  for (const k of RENDERED_KEYS) if (Object.prototype.hasOwnProperty.call(data, k) && data[k] !== undefined) out[k] = termOfJs(data[k]);
  return out;
}

/** renderBranchSummary of data as JSON.parse gives it (no text of its own to decode losslessly). */
export function renderBranchSummaryText(data: Record<string, unknown>): string {
  return renderBranchSummary(renderedFields(data));
}

/** renderCheckpoint of data as JSON.parse gives it. */
export function renderCheckpointText(data: Record<string, unknown>): string {
  return renderCheckpoint(renderedFields(data));
}

/** §2.3 `a(v)`: an attribute value, escaped for the `<skill …>` tag. */
function attribute(v: Term | undefined): string {
  if (v === undefined || v === null) return "";
  return str(v).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");
}

/** §2.3: a `skill_activation` as the instructions a model reads (Pixir's `Skills.render_activation/1`). */
export function renderSkillActivation(data: TermObject): string {
  const source = orElse(data.source) ?? data.scope;
  const content = orElse(data.content) ?? "";
  return etrim(
    `<skill name="${attribute(data.name)}" source="${attribute(source)}" path="${attribute(data.path)}" content_sha256="${attribute(data.content_hash)}">\n` +
      `${str(content)}\n</skill>`,
  );
}

const TERMINAL_SUBAGENT_EVENTS = new Set(["finished", "failed", "cancelled", "timed_out"]);

/** §1.3: a `subagent_event` the model reads: a finished, failed, cancelled or timed-out subagent. */
export function isTerminalSubagent(data: TermObject): boolean {
  return typeof data.event === "string" && TERMINAL_SUBAGENT_EVENTS.has(data.event);
}

/** §2.4: a terminal `subagent_event` as the line a model reads. Not trimmed. */
export function renderSubagent(data: TermObject): string {
  const summary = typeof data.summary === "string" ? data.summary : str(orElse(data.summary) ?? "");
  return `Subagent ${str(data.subagent_id)} (${str(data.agent)}) ${str(data.status)}: ${summary}${outputWarningSuffix(data)}`;
}

const VALID_ID = /^[A-Za-z0-9_.:-]+$/;
const isValidId = (v: Term | undefined): v is string => typeof v === "string" && VALID_ID.test(v) && Buffer.byteLength(v, "utf8") <= 160;
const TRUNCATION_REASONS = new Set(["provider_content_filter", "provider_context_window_limit", "provider_output_limit"]);
const CALL_ROLES = new Set(["final_answer", "intermediate"]);
const MAX_WARNINGS = 64;
const MAX_EXPLICIT_REASONS = 16;
const MAX_SHOWN_COUNT = 999999n;

/** §2.4 suffix: Pixir's `OutputTruncationSummary.child_context_suffix/1`. */
function outputWarningSuffix(data: TermObject): string {
  const sid = isValidId(data.child_session_id) ? data.child_session_id : null;
  const warnings = Array.isArray(data.output_warnings) ? data.output_warnings.slice(0, MAX_WARNINGS) : [];
  const kept: TermObject[] = [];
  const seen = new Set<string>();
  for (const w of warnings) {
    if (sid === null || !isTermObject(w)) continue;
    if (Object.prototype.hasOwnProperty.call(w, "child_session_id") && w.child_session_id !== sid) continue;
    if (!isValidId(w.provider_usage_event_id)) continue;
    if (!isInteger(w.provider_usage_seq) || w.provider_usage_seq < 0n) continue;
    if (typeof w.call_role !== "string" || !CALL_ROLES.has(w.call_role)) continue;
    if (typeof w.reason !== "string" || !TRUNCATION_REASONS.has(w.reason)) continue;
    const pr = w.provider_reason;
    if (typeof pr !== "string" || !VALID_ID.test(pr) || Buffer.byteLength(pr, "utf8") > 64) continue;
    if (seen.has(w.provider_usage_event_id)) continue;
    seen.add(w.provider_usage_event_id);
    kept.push(w);
  }
  if (kept.length === 0) return "";
  let count = BigInt(kept.length);
  const declared = data.output_warning_count;
  if (data.output_warnings_truncated === true && isInteger(declared) && declared >= count) count = declared;
  const reasons = new Set(kept.map((w) => w.reason as string));
  if (Array.isArray(data.output_warning_reasons)) {
    for (const r of data.output_warning_reasons.slice(0, MAX_EXPLICIT_REASONS)) if (typeof r === "string" && TRUNCATION_REASONS.has(r)) reasons.add(r);
  }
  // The reasons are ASCII, so code unit order is byte order.
  const shown = count > MAX_SHOWN_COUNT ? "999999+" : count.toString();
  return `\n\n[Pixir output warning: child provider output was truncated; call_count=${shown}; reasons=${[...reasons].sort().join(",")}]`;
}

const DESCRIPTOR_MAX_BYTES = 1200;
const IMAGE_NOTE = "The original image is stored locally; call resource_view with this resource_id only if exact visual inspection is needed.";
const FILE_NOTE = "Pixir stored the original bytes locally, but this resource kind is not yet projected to the Provider by default.";
const LINK_NOTE = "Pixir recorded the link but did not copy local bytes, so resource_view cannot rehydrate it yet.";

/** §2.5 `or(v, f)`: `str(v)`, or the fallback when v is missing, null or false. */
const orText = (v: Term | undefined, fallback: string): string => {
  const present = orElse(v);
  return present === undefined ? fallback : str(present);
};

/** §2.5: one Session resource as text (Pixir's `SessionResources.render_descriptor/1`). */
export function renderDescriptor(descriptor: Term): string {
  const d = objectOr(descriptor);
  const meta = (): string[] => [
    `name=${orText(d.name, "unnamed")}`,
    `mime=${orText(d.mime_type, "unknown")}`,
    `size_bytes=${orText(d.size_bytes, "unknown")}`,
    `sha256=${orText(d.content_sha256, "unknown")}.`,
  ];
  let parts: string[];
  switch (member(d, "kind")) {
    case "image":
      parts = [`Image resource ${str(d.resource_id)}:`, ...meta(), IMAGE_NOTE];
      break;
    case "file":
      parts = [`File resource ${str(d.resource_id)}:`, ...meta(), FILE_NOTE];
      break;
    case "resource_link":
      parts = [`Resource link ${str(d.resource_id)}:`, `name=${orText(d.name, "unnamed")}`, `uri=${orText(d.uri, "unknown")}`, `mime=${orText(d.mime_type, "unknown")}.`, LINK_NOTE];
      break;
    default:
      parts = [`Session resource ${orText(d.resource_id, "unknown")}:`, `kind=${orText(d.kind, "unknown")}`, `name=${orText(d.name, "unnamed")}.`];
  }
  return truncate(parts.join(" "), DESCRIPTOR_MAX_BYTES);
}

/** §1.5 `descriptors(L)`: one descriptor a line, cut at 1200 bytes as a whole. */
export function renderDescriptors(list: readonly Term[]): string {
  return truncate(list.map(renderDescriptor).join("\n"), DESCRIPTOR_MAX_BYTES);
}

/** §1.5: a user text with its attached resources. */
export function withAttachedResources(text: Term | undefined, resources: readonly Term[]): string {
  return `${str(text)}\n\nAttached resources:\n${renderDescriptors(resources)}`;
}
