// docs/gemini-opencode-interop.md §7: `pixir export opencode ID`, in the shape `opencode export` prints and
// `opencode import` reads: `{info, messages: [{info, parts}]}`. An imported session gives back its info,
// messages and parts as opencode stored them; a pixir fork or a native Log becomes a new session holding
// what `pixir context` shows. pixir never writes opencode's live database (opencode may hold it open in WAL
// mode and migrates it on start): --install writes the import file under opencode's data directory.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { contextItems, openContextHistory, resourceLookupOf } from "../../session/context.js";
import { exportTarget, jsonOrEmpty, writeExportFile, type AgentExportOptions } from "../../session/agent-files.js";
import { logPath } from "../../store/paths.js";
import { opencodeBaseSessionId } from "./plan.js";
import { opencodeHome } from "./source.js";

export interface OpencodeExportPlan {
  kind: "original" | "new";
  sessionId: string;
  json: JsonObject;
  text: string;
  messageCount: number;
}

const ocOf = (e: PixirEvent): JsonObject | null => (isJsonObject(e.data.opencode) ? e.data.opencode : null);
const storedEvents = (ws: string, id: string): PixirEvent[] =>
  readFileSync(logPath(ws, id).abs, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as PixirEvent);

/** Messages and parts back from the Events that kept them, in Log order. */
function rebuildMessages(events: PixirEvent[]): JsonObject[] {
  const messages: JsonObject[] = [];
  for (const e of events) {
    const oc = ocOf(e);
    if (oc === null || typeof oc.message_id !== "string") continue;
    if (isJsonObject(oc.message)) messages.push({ info: oc.message, parts: Array.isArray(oc.parts) ? oc.parts : [] });
    if (isJsonObject(oc.part)) (messages.at(-1)!.parts as JsonObject[]).push(oc.part);
  }
  return messages;
}

const derivedId = (prefix: string, key: string): string => `${prefix}_${createHash("sha256").update(key, "utf8").digest("hex").slice(0, 26)}`;

/** Own Events of the Log `id` and of its `.reverted` child, in order (the child's after its prefix). */
function withReverted(ws: string, id: string, events: PixirEvent[]): PixirEvent[] {
  const reverted = `${id}.reverted`;
  if (!existsSync(logPath(ws, reverted).abs)) return events;
  const child = storedEvents(ws, reverted);
  const replay = Number(child[0]?.data.replay_event_count ?? 0);
  return [...events, ...child.filter((e) => (e.seq ?? 0) > replay)];
}

/** A fork copy's first messages are its source's under the new ids the fork header lists. */
function renamedCopies(messages: JsonObject[], copied: unknown, sessionID: string): JsonObject[] {
  const list = Array.isArray(copied) ? (copied as Array<{ id: string; parts: string[] }>) : [];
  const ids = new Map(list.map((c, j) => [String((messages[j]?.info as JsonObject | undefined)?.id), c.id]));
  return messages.map((m, j) => {
    const c = list[j];
    if (c === undefined) return m;
    const info: JsonObject = { ...(m.info as JsonObject), id: c.id, sessionID };
    if (typeof info.parentID === "string" && ids.has(info.parentID)) info.parentID = ids.get(info.parentID)!;
    const parts = (m.parts as JsonObject[]).map((p, i) => ({ ...p, id: c.parts[i] ?? p.id, sessionID, messageID: c.id }));
    return { info, parts };
  });
}

export async function planOpencodeExport(ws: string, id: string): Promise<OpencodeExportPlan> {
  const history = await openContextHistory(ws, id);
  const events: PixirEvent[] = [];
  for await (const item of history.items()) events.push(item.event);
  const first = ocOf(events[0]!);
  const forkCopy = events[0]!.type === "session_fork" && first?.synthetic === "fork_copy" ? first : null;
  const header = forkCopy === null ? events.find((e) => e.type === "workflow_event" && e.data.event === "opencode_session") : events[0];
  const lastOc = events.map((e) => ocOf(e) !== null && e.type !== "session_fork").lastIndexOf(true);
  const tail = events.slice(lastOc + 1).filter((e) => e.type !== "workflow_event");
  const imported = events[0]!.type !== "session_fork" || first?.synthetic === "reverted" || forkCopy !== null;
  if (header === undefined || !imported || tail.length > 0) return planNew(ws, id, events, header ?? null);
  const info = ocOf(header)!.session as JsonObject;
  let messages: JsonObject[];
  if (forkCopy !== null) {
    // The copies come from the source's own Logs (a share_v1 prefix leaves out usage Events), the rest from ours.
    const source = opencodeBaseSessionId(String(forkCopy.source_session_id));
    const count = Array.isArray(forkCopy.copied) ? forkCopy.copied.length : 0;
    const copies = rebuildMessages(withReverted(ws, source, storedEvents(ws, source))).slice(0, count);
    const stored = storedEvents(ws, id);
    const replay = Number(stored[0]?.data.replay_event_count ?? 0);
    const own = rebuildMessages(withReverted(ws, id, stored.filter((e) => (e.seq ?? 0) > replay)));
    messages = [...renamedCopies(copies, forkCopy.copied, String(info.id)), ...own];
  } else {
    const root = header.session_id!;
    messages = rebuildMessages(withReverted(ws, root, storedEvents(ws, root)));
  }
  const json = { info, messages };
  return { kind: "original", sessionId: String(info.id), json, text: `${JSON.stringify(json, null, 2)}\n`, messageCount: messages.length };
}

/** A new session from `pixir context`: user text, assistant text, tool calls with their outputs. */
async function planNew(ws: string, id: string, events: PixirEvent[], header: PixirEvent | null): Promise<OpencodeExportPlan> {
  const anchor = events.find((e) => ocOf(e) === null && e.type !== "workflow_event") ?? events[0]!;
  const sessionID = derivedId("ses", `pixir-opencode:${id}:${anchor.id}`);
  const source = header !== null && isJsonObject(ocOf(header)?.session) ? (ocOf(header)!.session as JsonObject) : null;
  const cwd = typeof source?.directory === "string" ? source.directory : "";
  const created = Date.parse(anchor.ts ?? "") || 0;
  const messages: JsonObject[] = [];
  let assistant: JsonObject | null = null;
  let lastUser = "";
  const calls = new Map<string, JsonObject>();
  const history = await openContextHistory(ws, id);
  let n = 0;
  for await (const c of contextItems(history, resourceLookupOf(ws, history))) {
    const item = c.item as JsonObject;
    const messageID = derivedId("msg", `${sessionID}:${n++}`);
    const part = (p: JsonObject): JsonObject => ({ id: derivedId("prt", `${messageID}:${n}`), sessionID, messageID: String((assistant?.info as JsonObject | undefined)?.id ?? messageID), ...p });
    if (typeof item.role === "string") {
      const text = (Array.isArray(item.content) ? item.content : []).map((p) => (isJsonObject(p) && typeof p.text === "string" ? p.text : "")).join("\n");
      if (item.role === "user") {
        lastUser = messageID;
        assistant = null;
        messages.push({ info: { id: messageID, sessionID, role: "user", time: { created } }, parts: [{ id: derivedId("prt", messageID), sessionID, messageID, type: "text", text }] });
        continue;
      }
      assistant = newAssistant(messageID, sessionID, lastUser, cwd, created);
      messages.push(assistant);
      (assistant.parts as JsonObject[]).push(part({ type: "text", text }));
    } else if (item.type === "function_call") {
      if (assistant === null) {
        assistant = newAssistant(messageID, sessionID, lastUser, cwd, created);
        messages.push(assistant);
      }
      const args = typeof item.arguments === "string" ? jsonOrEmpty(item.arguments) : {};
      const tool = part({ type: "tool", callID: item.call_id, tool: item.name, state: { status: "pending", input: isJsonObject(args) ? args : {}, raw: "" } });
      (assistant.parts as JsonObject[]).push(tool);
      calls.set(String(item.call_id), tool);
    } else if (item.type === "function_call_output") {
      const tool = calls.get(String(item.call_id));
      if (tool !== undefined) tool.state = { status: "completed", input: (tool.state as JsonObject).input, output: item.output, title: "", metadata: {}, time: { start: created, end: created } };
    }
  }
  const info: JsonObject = { id: sessionID, slug: sessionID.slice(4, 12), projectID: typeof source?.projectID === "string" ? source.projectID : "global", directory: cwd, title: `${typeof source?.title === "string" ? source.title : id} (pixir fork)`, version: "pixir", time: { created, updated: created } };
  const json = { info, messages };
  return { kind: "new", sessionId: sessionID, json, text: `${JSON.stringify(json, null, 2)}\n`, messageCount: messages.length };
}

function newAssistant(id: string, sessionID: string, parentID: string, cwd: string, created: number): JsonObject {
  return {
    info: { id, sessionID, role: "assistant", time: { created, completed: created }, parentID, modelID: "unknown", providerID: "unknown", mode: "build", agent: "build", path: { cwd, root: cwd }, cost: 0, tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } } },
    parts: [],
  };
}

export function finishOpencodeExport(plan: OpencodeExportPlan, options: AgentExportOptions) {
  let target: string | null = null;
  if (options.install) {
    const dir = path.join(opencodeHome(options.env), "pixir-exports");
    if (!options.dryRun) mkdirSync(dir, { recursive: true });
    target = path.join(dir, `${plan.sessionId}.json`);
  } else if (options.out !== undefined) target = exportTarget(options.out, options.cwd, `${plan.sessionId}.json`);
  if (target !== null && !options.dryRun) writeExportFile(target, options.out ?? target, "the exported opencode session", Buffer.from(plan.text, "utf8"));
  return {
    ok: true as const,
    recorded: target !== null && !options.dryRun,
    dry_run: Boolean(options.dryRun),
    kind: plan.kind,
    file: target,
    opencode_session_id: plan.sessionId,
    message_count: plan.messageCount,
    next_actions: options.install && target !== null ? [`opencode import ${target}`] : [],
  };
}
