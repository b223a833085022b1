// What to tell someone who piped the wrong thing into a stream tool: a line that is no pixir Event is
// often a line of an agent's own session file, which `pixir import` reads (README "Your … sessions").
import { isJsonObject } from "../event/envelope.js";

const CLAUDE_TYPES = new Set(["user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment", "last-prompt", "permission-mode"]);
const CODEX_TYPES = new Set(["session_meta", "response_item", "event_msg", "turn_context", "compacted"]);

/** The agent whose session file `value` (one parsed line) looks like a line of, or null. */
export function foreignFormat(value: unknown): "claude" | "codex" | "pi" | null {
  if (!isJsonObject(value) || typeof value.type !== "string") return null;
  if (CODEX_TYPES.has(value.type) && "payload" in value) return "codex";
  if (CLAUDE_TYPES.has(value.type) && (typeof value.sessionId === "string" || typeof value.leafUuid === "string" || "parentUuid" in value)) return "claude";
  if ((value.type === "session" && "cwd" in value) || (typeof value.id === "string" && "parentId" in value && !("seq" in value))) return "pi";
  return null;
}

const NOT_EVENTS = "the input must be pixir Events, one JSON object per line, as pixir-log cat prints them";

/** next_actions for a line of stdin that is no Event: what it looks like, and how to read such a file. */
export function stdinLineActions(bytes: Uint8Array): string[] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
  } catch {
    return [NOT_EVENTS];
  }
  const agent = foreignFormat(value);
  if (agent === null) return [NOT_EVENTS];
  const name = { claude: "a Claude Code transcript", codex: "a Codex rollout", pi: "a pi session file" }[agent];
  return [`this looks like a line of ${name}, not a pixir Event: import the file with pixir import ${agent} FILE`];
}
