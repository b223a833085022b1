// archive.md §1: what each agent's import keeps of the facts a person finds a session by (agent, cwd, a
// title the agent gave it, injected-text flags). One row per agent; adding an agent is adding a row.
import { isJsonObject, type JsonObject } from "../event/envelope.js";
import type { AGENT_NAMES } from "../event/vocabulary.js";

export type AgentName = (typeof AGENT_NAMES)[number];

/** Which of the titles an agent records: Claude's custom and AI titles, Codex's and pi's session name. */
export type TitleSlot = "custom" | "ai" | "name" | "summary";

export interface NamedTitle {
  slot: TitleSlot;
  text: string;
  /** For a Claude `summary` record: the uuid of the leaf it summarises. */
  leaf?: string;
}

export interface AgentRules {
  agent: Exclude<AgentName, "pixir">;
  /** The key under `data` where the import keeps the source record (`data.claude`, `data.codex`, …). */
  key: string;
  /** `workflow_event` names of import provenance only: not the session's own records (no ts counted). */
  provenanceOnly: readonly string[];
  /** Byte markers near the start of a `workflow_event`'s data that make it worth parsing (header, titles). */
  markers: readonly string[];
  /** The project directory an Event names, as the source recorded it. */
  cwdOf(data: JsonObject): string | null;
  /** A title record, or null. */
  titleOf(data: JsonObject): NamedTitle | null;
  /** The source record's own injected-text flags for a user message. */
  userFlags(data: JsonObject): { isMeta?: boolean; isCompactSummary?: boolean };
  /** A prompt kept only in a provenance record (Codex's `event_msg` user_message), or null. */
  promptOf(data: JsonObject): string | null;
  /** The leaf the import settled on (Claude's `claude_import.leaf_uuid`), or null. */
  leafOf(data: JsonObject): string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v : null);
const obj = (v: unknown): JsonObject => (isJsonObject(v) ? v : {});
const sub = (data: JsonObject, key: string): JsonObject => obj(data[key]);

const claude: AgentRules = {
  agent: "claude",
  key: "claude",
  provenanceOnly: ["claude_transcript", "claude_import"],
  markers: ['"record_type":"custom-title"', '"record_type":"ai-title"', '"record_type":"summary"', '"event":"claude_import"', '"event":"claude_transcript"'],
  cwdOf: (d) => str(obj(sub(d, "claude").record).cwd),
  titleOf(d) {
    const record = obj(sub(d, "claude").record);
    if (record.type === "custom-title") return titled("custom", record.customTitle);
    if (record.type === "ai-title") return titled("ai", record.aiTitle);
    if (record.type === "summary") {
      const t = titled("summary", record.summary);
      return t === null ? null : { ...t, leaf: typeof record.leafUuid === "string" ? record.leafUuid : "" };
    }
    return null;
  },
  userFlags(d) {
    const record = obj(sub(d, "claude").record);
    return { isMeta: record.isMeta === true, isCompactSummary: record.isCompactSummary === true };
  },
  promptOf: () => null,
  leafOf: (d) => (d.event === "claude_import" ? str(sub(d, "claude").leaf_uuid) : null),
};

const codex: AgentRules = {
  agent: "codex",
  key: "codex",
  provenanceOnly: [],
  markers: ['"event":"codex_session_meta"', '"item_type":"thread_name_updated"', '"item_type":"user_message"'],
  cwdOf: (d) => (d.event === "codex_session_meta" ? str(d.cwd) : null),
  titleOf(d) {
    const payload = obj(obj(sub(d, "codex").record).payload);
    return payload.type === "thread_name_updated" ? titled("name", payload.thread_name) : null;
  },
  userFlags: () => ({}),
  // Some rollouts hold the typed prompt only as the `event_msg` the Codex UI shows (and `codex resume` lists).
  promptOf(d) {
    const payload = obj(obj(sub(d, "codex").record).payload);
    return d.event === "codex_record" && payload.type === "user_message" ? str(payload.message) : null;
  },
  leafOf: () => null,
};

const pi: AgentRules = {
  agent: "pi",
  key: "pi",
  // The header's timestamp is when the file was made, which for a branched session is after its copied
  // messages: not a record of the conversation.
  provenanceOnly: ["pi_session_header"],
  markers: ['"event":"pi_session_header"', '"entry_type":"session_info"'],
  cwdOf: (d) => (d.event === "pi_session_header" ? str(obj(sub(d, "pi").header).cwd) : null),
  promptOf: () => null,
  titleOf: (d) => (d.event === "pi_entry" && d.entry_type === "session_info" ? titled("name", obj(sub(d, "pi").fields).name) : null),
  userFlags: () => ({}),
  leafOf: () => null,
};

const gemini: AgentRules = {
  agent: "gemini",
  key: "gemini",
  // The header and the `$set`/`$rewindTo` records are file bookkeeping, not the conversation.
  provenanceOnly: ["gemini_session_meta", "gemini_record"],
  markers: ['"event":"gemini_session_meta"', '"event":"gemini_record"'],
  cwdOf: (d) => (d.event === "gemini_session_meta" ? str(d.cwd) : null),
  // Gemini's `summary` is a title its model writes for the session.
  titleOf: (d) => (d.event === "gemini_session_meta" || d.event === "gemini_record" ? titled("ai", d.title) : null),
  userFlags: () => ({}),
  promptOf: () => null,
  leafOf: () => null,
};

const opencode: AgentRules = {
  agent: "opencode",
  key: "opencode",
  provenanceOnly: ["opencode_session"],
  markers: ['"event":"opencode_session"'],
  cwdOf: (d) => (d.event === "opencode_session" ? str(d.cwd) : null),
  titleOf: (d) => (d.event === "opencode_session" ? titled("name", d.title) : null),
  userFlags: () => ({}),
  promptOf: () => null,
  leafOf: () => null,
};

export const AGENT_RULES: readonly AgentRules[] = [claude, codex, pi, gemini, opencode];

function titled(slot: TitleSlot, v: unknown): NamedTitle | null {
  const text = str(v);
  return text === null ? null : { slot, text };
}

/** The agent whose import wrote this `data` (its key, or a `workflow_event` name with its prefix), else null. */
export function agentOfData(data: JsonObject): AgentRules | null {
  const event = typeof data.event === "string" ? data.event : "";
  for (const rules of AGENT_RULES) if (Object.hasOwn(data, rules.key) || namedFor(event, rules.key)) return rules;
  return null;
}

/** `event` is `<key>_…` (tested without making the prefix string: this runs on every line a scan parses). */
const namedFor = (event: string, key: string): boolean => event.length > key.length && event.charCodeAt(key.length) === 0x5f && event.startsWith(key);


/** Claude: custom-title, then ai-title, then the leaf's summary; Codex and pi: the session name (archive.md §1). */
export const TITLE_ORDER: readonly TitleSlot[] = ["custom", "ai", "name", "summary"];
