// docs/gemini-opencode-interop.md §4: `pixir export gemini ID`. An imported session with nothing added
// gives back its source file byte for byte (every line is kept in the Event that came from it, across the
// Logs of its family). Anything else — a pixir fork, Events appended with pixir, a native Log — becomes a
// new Gemini session holding what the agent would send next (`pixir context`), which Gemini resumes.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { contextItems, resourceLookupOf, openContextHistory } from "../../session/context.js";
import { assertOutDirectory } from "../../store/export-file.js";
import { exportTarget, jsonOrEmpty, writeExportFile, type AgentExportOptions, type WriteReport } from "../../session/agent-files.js";
import { logPath } from "../../store/paths.js";
import { forkRootOf, readForkLinks } from "../../tree/fork-family.js";
import { geminiHome } from "./import.js";

export interface GeminiExportPlan {
  kind: "original" | "new";
  /** The Gemini session id of the file. */
  sessionId: string;
  fileName: string;
  /** `<project>` of `~/.gemini/tmp/<project>/chats/`, when the source recorded it. */
  project: string | null;
  bytes: Buffer;
  lineCount: number;
  messageCount: number;
}

const geminiOf = (e: PixirEvent): JsonObject | null => (isJsonObject(e.data.gemini) ? e.data.gemini : null);
const isLineEvent = (e: PixirEvent): boolean => {
  const g = geminiOf(e);
  return g !== null && typeof g.line === "number" && g.synthetic === undefined;
};

/** The Events stored in a Log file (own Events; the share header too). */
function storedEvents(ws: string, id: string): PixirEvent[] {
  const text = readFileSync(logPath(ws, id).abs, "utf8");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as PixirEvent);
}

/** The session's lines, gathered from every Log of its fork family. */
async function originalLines(ws: string, id: string, session: string): Promise<Map<number, JsonObject>> {
  const links = await readForkLinks(ws);
  const root = forkRootOf(links, id);
  const lines = new Map<number, JsonObject>();
  for (const sid of links.keys()) {
    if (forkRootOf(links, sid) !== root) continue;
    for (const e of storedEvents(ws, sid)) {
      const g = geminiOf(e);
      if (g !== null && g.session === session && typeof g.line === "number" && typeof g.raw === "string") lines.set(g.line, g);
    }
  }
  return lines;
}

function fileNameOf(startTime: string, sessionId: string, legacy: boolean): string {
  const stamp = /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(startTime) ? startTime.slice(0, 16).replace(/:/g, "-") : "1970-01-01T00-00";
  return `session-${stamp}-${sessionId.slice(0, 8)}${legacy ? ".json" : ".jsonl"}`;
}

/** A UUID (version 4 layout) derived from a key, so the same export names the same session. */
function derivedUuid(key: string): string {
  const h = createHash("sha256").update(key, "utf8").digest("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${"89ab"[parseInt(h[16]!, 16) & 3]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export async function planGeminiExport(ws: string, id: string): Promise<GeminiExportPlan> {
  const history = await openContextHistory(ws, id);
  const events: PixirEvent[] = [];
  for await (const item of history.items()) events.push(item.event);
  let lastLine = -1;
  events.forEach((e, i) => {
    if (isLineEvent(e)) lastLine = i;
  });
  const tail = events.slice(lastLine + 1).filter((e) => e.type !== "session_fork" && e.type !== "workflow_event");
  const header = events.find((e) => e.type === "workflow_event" && e.data.event === "gemini_session_meta");
  // A pixir fork (its own session_fork) is a new session even before anything is added to it.
  const imported = events[0]!.type !== "session_fork" || geminiOf(events[0]!)?.synthetic === "branch_fork";
  if (lastLine >= 0 && tail.length === 0 && header !== undefined && imported) return planOriginal(ws, id, header);
  return planNew(ws, id, events, header ?? null);
}

async function planOriginal(ws: string, id: string, header: PixirEvent): Promise<GeminiExportPlan> {
  const session = header.data.session_id as string;
  const lines = await originalLines(ws, id, session);
  const numbers = [...lines.keys()].sort((a, b) => a - b);
  const legacy = header.data.legacy === true;
  const parts = numbers.map((n) => {
    const g = lines.get(n)!;
    const raw = g.raw_base64 === true ? Buffer.from(g.raw as string, "base64") : Buffer.from(g.raw as string, "utf8");
    return legacy ? raw : Buffer.concat([raw, Buffer.from("\n")]);
  });
  return {
    kind: "original",
    sessionId: session,
    fileName: typeof header.data.file === "string" ? header.data.file : fileNameOf(String(header.data.start_time ?? ""), session, legacy),
    project: typeof header.data.project === "string" ? header.data.project : null,
    bytes: Buffer.concat(parts),
    lineCount: numbers.length,
    messageCount: -1,
  };
}

/** A new session from `pixir context`: user and model turns, tool calls with their results. */
async function planNew(ws: string, id: string, events: PixirEvent[], header: PixirEvent | null): Promise<GeminiExportPlan> {
  const anchor = events.find((e) => !isLineEvent(e) && e.type !== "workflow_event") ?? events[0];
  const tsBySeq = new Map(events.map((e) => [e.seq, e.ts]));
  const start = anchor?.ts ?? "1970-01-01T00:00:00.000Z";
  const sessionId = derivedUuid(`pixir-gemini:${id}:${anchor?.id ?? ""}`);
  const history = await openContextHistory(ws, id);
  const messages: JsonObject[] = [];
  let model: JsonObject | null = null;
  const calls = new Map<string, JsonObject>();
  let last = start;
  for await (const c of contextItems(history, resourceLookupOf(ws, history))) {
    const ts = (c.seq !== null ? tsBySeq.get(c.seq) : undefined) ?? last;
    last = ts;
    const item = c.item as JsonObject;
    const msgId = derivedUuid(`pixir-gemini:${id}:${c.id ?? c.seq}:${messages.length}`);
    if (typeof item.role === "string") {
      const text = (Array.isArray(item.content) ? item.content : []).map((p) => (isJsonObject(p) && typeof p.text === "string" ? p.text : "")).join("\n");
      if (item.role === "assistant") {
        model = { id: msgId, timestamp: ts, type: "gemini", content: text };
        messages.push(model);
      } else {
        messages.push({ id: msgId, timestamp: ts, type: "user", content: [{ text }] });
        model = null;
      }
    } else if (item.type === "function_call") {
      if (model === null) {
        model = { id: msgId, timestamp: ts, type: "gemini", content: "" };
        messages.push(model);
      }
      const args = typeof item.arguments === "string" ? jsonOrEmpty(item.arguments) : item.arguments;
      const call: JsonObject = { id: item.call_id as string, name: item.name as string, args: isJsonObject(args) ? args : {}, status: "scheduled", timestamp: ts };
      model.toolCalls = [...((model.toolCalls as JsonObject[] | undefined) ?? []), call];
      calls.set(String(item.call_id), call);
    } else if (item.type === "function_call_output") {
      const call = calls.get(String(item.call_id));
      if (call !== undefined) {
        call.status = "success";
        call.result = [{ functionResponse: { id: call.id, name: call.name, response: { output: item.output } } }];
      }
    }
  }
  const meta: JsonObject = {
    sessionId,
    projectHash: header !== null && typeof header.data.project_hash === "string" ? header.data.project_hash : "",
    startTime: start,
    lastUpdated: last,
    kind: "main",
  };
  const lines = [meta, ...messages].map((r) => JSON.stringify(r) + "\n");
  return {
    kind: "new",
    sessionId,
    fileName: fileNameOf(start, sessionId, false),
    project: header !== null && typeof header.data.project === "string" ? header.data.project : null,
    bytes: Buffer.from(lines.join(""), "utf8"),
    lineCount: lines.length,
    messageCount: messages.length,
  };
}

export interface GeminiExportReport extends WriteReport {
  kind: "original" | "new";
  file: string | null;
  gemini_session_id: string;
  line_count: number;
}

/** Where the file goes: `--out DIR` (or a file path), or with `--install` Gemini's own chats directory. */
function targetOf(plan: GeminiExportPlan, options: AgentExportOptions): string | null {
  if (options.install) {
    if (plan.project === null) {
      throw new PixirError("invalid_args", "the session does not record its Gemini project", { field: "install", reason: "unknown_project", next_actions: ["pass --out DIR and move the file into ~/.gemini/tmp/<project>/chats/"] });
    }
    const target = path.join(geminiHome(options.env), "tmp", plan.project, "chats", plan.fileName);
    assertOutDirectory(target);
    return target;
  }
  return options.out === undefined ? null : exportTarget(options.out, options.cwd, plan.fileName);
}

export function finishGeminiExport(plan: GeminiExportPlan, options: AgentExportOptions): GeminiExportReport {
  const target = targetOf(plan, options);
  if (target !== null && !options.dryRun) writeExportFile(target, options.out ?? target, "the exported Gemini CLI session", plan.bytes);
  return { ok: true, recorded: target !== null && !options.dryRun, dry_run: Boolean(options.dryRun), kind: plan.kind, file: target, gemini_session_id: plan.sessionId, line_count: plan.lineCount };
}
