// Test support for the Gemini CLI interop: the hand-made fixtures, and an oracle of what Gemini would send
// next, computed from the session file alone with Gemini's own replay rules (independent of the importer).
import { readFileSync } from "node:fs";
import path from "node:path";
import { ROOT } from "./cli.js";

export const GEMINI_HOME = path.join(ROOT, "test/fixtures/gemini/home");
export const GEMINI_CHATS = path.join(GEMINI_HOME, ".gemini/tmp/demo-project/chats");
export const MAIN_ID = "0a1b2c3d-1111-4222-8333-444455556666";
export const SUB_ID = "5e6f7a8b-aaaa-4bbb-8ccc-ddddeeeeffff";
export const UNKNOWN_REWIND_ID = "7c7c7c7c-2222-4333-8444-555566667777";
export const LEGACY_ID = "3d3d3d3d-4444-4555-8666-777788889999";
export const MAIN_FILE = path.join(GEMINI_CHATS, "session-2026-01-10T09-00-0a1b2c3d.jsonl");
export const SUB_FILE = path.join(GEMINI_CHATS, MAIN_ID, `${SUB_ID}.jsonl`);
export const UNKNOWN_REWIND_FILE = path.join(GEMINI_CHATS, "session-2026-01-11T10-00-7c7c7c7c.jsonl");
export const LEGACY_FILE = path.join(GEMINI_CHATS, "session-2025-09-01T08-00-3d3d3d3d.json");

/** One model-visible item: a user or model text, a tool call, a tool output. */
export type OracleItem = ["user", string] | ["assistant", string] | ["call", string, string, unknown] | ["output", string, string];

const text = (c: any): string => (typeof c === "string" ? c : Array.isArray(c) ? c.map(text).join("") : c && typeof c.text === "string" && c.thought !== true ? c.text : "");

/** Gemini's replay of a session file: the message list after the last complete line. */
export function geminiMessages(file: string): any[] {
  const bytes = readFileSync(file, "utf8");
  if (file.endsWith(".json")) return JSON.parse(bytes).messages;
  const complete = bytes.slice(0, bytes.lastIndexOf("\n") + 1);
  let messages: any[] = [];
  for (const l of complete.split("\n").slice(1)) {
    if (l.trim() === "") continue;
    const r = JSON.parse(l);
    if (typeof r.$rewindTo === "string") {
      const at = messages.findIndex((m) => m.id === r.$rewindTo);
      messages = at === -1 ? [] : messages.slice(0, at);
    } else if (typeof r.id === "string") {
      const at = messages.findIndex((m) => m.id === r.id);
      if (at === -1) messages.push(r);
      else messages[at] = r;
    } else if (r.$set && Array.isArray(r.$set.messages)) messages = [...r.$set.messages];
  }
  return messages;
}

/** What Gemini sends next: user and model turns; each tool call with its output once it finished. */
export function geminiOracle(file: string): OracleItem[] {
  const out: OracleItem[] = [];
  for (const m of geminiMessages(file)) {
    if (m.type === "user") out.push(["user", text(m.content)]);
    if (m.type !== "gemini") continue;
    out.push(["assistant", text(m.content)]);
    for (const c of m.toolCalls ?? []) {
      out.push(["call", c.id, c.name, c.args]);
      if (["success", "error", "cancelled"].includes(c.status)) {
        const r = c.result?.[0]?.functionResponse?.response;
        out.push(["output", c.id, typeof r?.output === "string" ? r.output : JSON.stringify(r)]);
      }
    }
  }
  return out;
}

/** `pixir context --format ndjson` items in the oracle's shape. */
export function contextAsOracle(lines: any[]): OracleItem[] {
  return lines.map(({ item }) => {
    if (typeof item.role === "string") return [item.role === "user" ? "user" : "assistant", item.content.map((p: any) => p.text).join("\n")] as OracleItem;
    if (item.type === "function_call") return ["call", item.call_id, item.name, JSON.parse(item.arguments)] as OracleItem;
    return ["output", item.call_id, item.output] as OracleItem;
  });
}
