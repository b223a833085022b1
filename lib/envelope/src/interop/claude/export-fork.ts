// claude-interop.md §5.3: `pixir export claude` of a Log that is not purely import-made (a `pixir fork`
// child, a Log with Events appended by other tools). It becomes a new Claude session: the records
// Claude's own fork would copy (stamped as `/branch` stamps them), then the native Events converted.
import { createHash } from "node:crypto";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { openHistory } from "../../store/loader.js";
import { isTerminalSubagent, renderBranchSummaryText, renderCheckpointText, renderSkillActivation, renderSubagent } from "../../summary/render.js";
import { termOfJs, type TermObject } from "../../event/elixir.js";
import { readTranscriptBytes, TranscriptTree, type ClaudeRecord } from "./transcript.js";

const sha = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex");
const SAFE_CALL_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** §5.3 step 1: a version-4 UUID from a lowercase hex digest. */
export function uuidFromHex(h: string): string {
  const v = "89ab"[parseInt(h[16]!, 16) % 4];
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${v}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** §5.3 step 1: the Claude session id of a Log's export (archive.md §5 recognises a re-imported export by it). */
export const claudeExportSessionId = (logId: string): string => uuidFromHex(sha(`pixir:claude:session:${logId}`));

/** §3.7 std(r): the record as `/branch` stamps a copy of it. */
export function stampCopied(r: JsonObject, forkId: string, source: string, parent: string | null): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === "sessionKind") continue;
    if (k === "sessionId") out[k] = forkId;
    else if (k === "parentUuid") out[k] = parent;
    else if (k === "forkedFrom") out[k] = { sessionId: source, messageUuid: r.uuid };
    else if (k === "isSidechain") out[k] = false;
    else out[k] = v;
  }
  if (!("parentUuid" in out)) out.parentUuid = parent;
  if (!("sessionId" in out)) out.sessionId = forkId;
  if (!("forkedFrom" in out)) out.forkedFrom = { sessionId: source, messageUuid: r.uuid };
  return out;
}

export interface ForkExportInput {
  ws: string;
  id: string;
  /** archive.md §5: the working directory the new records name; else the copied records' own, else the Workspace. */
  cwd?: string;
  /** Rebuilds the main transcript file of a Claude session whose Logs are in the Workspace, else null. */
  sourceFile(sessionId: string): Promise<{ bytes: Buffer; projectDir: unknown } | null>;
}

export interface ForkExport {
  forkId: string;
  lines: string[];
  cwd: string;
  recordedProjectDir: unknown;
  forkedFrom: { session_id: string; message_uuid: string } | null;
  copied: number;
  converted: number;
  pixirEvents: number;
  warnings: string[];
}

const recordOf = (e: PixirEvent): JsonObject | null => {
  const c = e.data.claude;
  if (!isJsonObject(c)) return null;
  if (isJsonObject(c.record)) return c.record;
  if (typeof c.raw_line === "string") {
    try {
      const v: unknown = JSON.parse(c.raw_line);
      return isJsonObject(v) ? v : null;
    } catch {
      return null;
    }
  }
  return null;
};

export async function planForkExport(input: ForkExportInput): Promise<ForkExport> {
  const { ws, id } = input;
  const u = claudeExportSessionId(id);
  const history: PixirEvent[] = [];
  for await (const item of (await openHistory(ws, id)).items()) history.push(item.event);
  const isNative = (e: PixirEvent) => !isJsonObject(e.data.claude) && e.type !== "session_fork";
  const firstNative = history.findIndex(isNative);
  const prefix = firstNative < 0 ? history : history.slice(0, firstNative);
  const natives = history.filter(isNative);
  const warnings: string[] = [];

  // Step 3: the fork point R, the last path record of the Claude prefix (not a sidechain record).
  let rEvent: PixirEvent | null = null;
  for (const e of prefix) {
    const rec = isJsonObject(e.data.claude) && e.data.claude.path === true ? recordOf(e) : null;
    if (rec !== null && rec.isSidechain !== true) rEvent = e;
  }
  const rRecord = rEvent ? recordOf(rEvent)! : null;
  const s = rRecord && typeof rRecord.sessionId === "string" ? rRecord.sessionId : null;
  const copied: JsonObject[] = [];
  const leading: JsonObject[] = [];
  if (rRecord !== null && s !== null) {
    const src = await input.sourceFile(s);
    const rLine = (rEvent!.data.claude as JsonObject).line as number;
    if (src !== null) {
      // Step 4: CP(R) in s's main transcript, up to R's line, from the last compaction boundary.
      const { records } = readTranscriptBytes(src.bytes, "export", true);
      const main = records.filter((x) => !x.sidechain);
      const tree = new TranscriptTree(main);
      const r = tree.messages.find((x) => x.uuid === rRecord.uuid);
      if (r !== undefined) {
        const path = tree.claudePath(r);
        // CP holds message records only; the messages are in line order.
        let cp: ClaudeRecord[] = tree.messages.filter((x) => path.has(x) && x.line <= rLine);
        const boundary = cp.map((x) => x.type === "system" && x.value?.subtype === "compact_boundary").lastIndexOf(true);
        if (boundary > 0) cp = cp.slice(boundary);
        for (const x of cp) copied.push(x.value!);
      }
      // Step 5: content-replacement records of the session come first.
      for (const x of records) {
        if (x.type === "content-replacement" && x.line <= rLine && x.value && !("agentId" in x.value)) leading.push({ ...x.value, sessionId: u });
      }
    } else {
      warnings.push("claude_source_unavailable");
      for (const e of prefix) {
        const rec = isJsonObject(e.data.claude) && e.data.claude.path === true ? recordOf(e) : null;
        if (rec !== null && rec.isSidechain !== true && !(rec.type === "system" && rec.subtype === "compact_boundary")) copied.push(rec);
      }
    }
  }

  const lines: string[] = leading.map((x) => JSON.stringify(x));
  let parent: string | null = null;
  let lastForParent: string | null = null;
  for (const r of copied) {
    const stamped = stampCopied(r, u, s!, lastForParent);
    lines.push(JSON.stringify(stamped));
    if (r.type !== "progress" && typeof r.uuid === "string") lastForParent = r.uuid;
  }
  parent = lastForParent;
  const last = copied.at(-1) ?? {};
  const firstCwd = copied.find((x) => typeof x.cwd === "string")?.cwd;
  const cwd = input.cwd ?? (typeof firstCwd === "string" ? firstCwd : ws);
  const base = {
    cwd: input.cwd ?? (typeof last.cwd === "string" ? last.cwd : ws),
    version: typeof last.version === "string" ? last.version : "0.0.0",
    gitBranch: typeof last.gitBranch === "string" ? last.gitBranch : "",
  };
  // §5.3: a tool_result's call "was written" when a tool_use block with its id is in an earlier record of
  // the file, a copied one included.
  const copiedCalls = new Map<string, { id: string; uuid: string }>();
  for (const r of copied) {
    const content = isJsonObject(r.message) ? r.message.content : undefined;
    if (r.type !== "assistant" || !Array.isArray(content) || typeof r.uuid !== "string") continue;
    for (const b of content) if (isJsonObject(b) && b.type === "tool_use" && typeof b.id === "string") copiedCalls.set(b.id, { id: b.id, uuid: r.uuid });
  }
  const conv = convertNatives(natives, u, parent, base, copiedCalls);
  lines.push(...conv.lines);
  const srcProject = s !== null ? await input.sourceFile(s) : null;
  return {
    forkId: u,
    lines,
    cwd,
    recordedProjectDir: srcProject?.projectDir,
    forkedFrom: s !== null && rRecord ? { session_id: s, message_uuid: String(rRecord.uuid) } : null,
    copied: copied.length,
    converted: conv.converted,
    pixirEvents: conv.pixirEvents,
    warnings,
  };
}

interface Base {
  cwd: string;
  version: string;
  gitBranch: string;
}

/** §5.3 step 6: native Events as records chained after the copied ones. */
function convertNatives(natives: PixirEvent[], u: string, start: string | null, base: Base, calls: Map<string, { id: string; uuid: string }>) {
  const out: Array<JsonObject | string> = [];
  let parent = start;
  let converted = 0;
  let pixirEvents = 0;
  const recordUuid = (key: string) => uuidFromHex(sha(`pixir:claude:record:${u}:${key}`));
  const callIdOf = (id: string) => (SAFE_CALL_ID.test(id) ? id : `toolu_${sha(id).slice(0, 24)}`);
  const written = new Map<number, JsonObject[]>();
  // §5.3: consecutive assistant records, or those sharing data.message_id, form one group (one message).
  type Group = { message: JsonObject; records: JsonObject[] };
  let group: Group | null = null;
  const groups = new Map<string, Group>();
  const record = (e: PixirEvent, type: string, message: JsonObject | null, extra: JsonObject = {}, key = e.id ?? String(e.seq)): JsonObject => {
    if (type !== "assistant") group = null;
    const r: JsonObject = { parentUuid: parent, isSidechain: false, userType: "external", cwd: base.cwd, sessionId: u, version: base.version, gitBranch: base.gitBranch, type };
    if (message !== null) r.message = message;
    Object.assign(r, extra);
    r.uuid = recordUuid(key);
    r.timestamp = e.ts;
    parent = r.uuid as string;
    out.push(r);
    if (e.seq !== null) (written.get(e.seq) ?? written.set(e.seq, []).get(e.seq)!).push(r);
    converted++;
    return r;
  };
  const assistant = (e: PixirEvent, block: JsonObject) => {
    const mid = typeof e.data.message_id === "string" ? e.data.message_id : null;
    group ??= (mid !== null ? groups.get(mid) : undefined) ?? null;
    if (group === null) {
      group = {
        records: [],
        message: {
          id: `msg_pixir_${sha(e.id ?? "").slice(0, 24)}`,
          type: "message",
          role: "assistant",
          model: typeof e.data.model === "string" ? e.data.model : "unknown",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
        },
      };
    }
    const g: Group = group;
    if (mid !== null && !groups.has(mid)) groups.set(mid, g);
    const r = record(e, "assistant", { ...g.message, content: [block] });
    g.records.push(r);
  };
  for (const e of natives) {
    const d = e.data;
    if (e.type === "provider_usage" && group !== null) {
      const usage = { input_tokens: num(d.input), output_tokens: num(d.output), cache_read_input_tokens: num(d.cache_read), cache_creation_input_tokens: num(d.cache_write) };
      for (const r of (group as Group).records) r.message = { ...(r.message as JsonObject), usage };
      group = null;
      continue;
    }
    const isAssistant =
      (e.type === "assistant_message" && !(isJsonObject(d.metadata) && d.metadata.partial === true)) ||
      e.type === "tool_call" ||
      (e.type === "reasoning" && signedBlock(d.item));
    if (e.type === "user_message") record(e, "user", { role: "user", content: typeof d.text === "string" ? d.text : "" });
    else if (e.type === "assistant_message" && isAssistant) assistant(e, { type: "text", text: typeof d.text === "string" ? d.text : "" });
    else if (e.type === "reasoning" && isAssistant) assistant(e, d.item as JsonObject);
    else if (e.type === "tool_call") {
      const callId = callIdOf(String(d.call_id ?? ""));
      assistant(e, { type: "tool_use", id: callId, name: d.name, input: isJsonObject(d.args) ? d.args : {} });
      calls.set(String(d.call_id), { id: callId, uuid: parent! });
    } else if (e.type === "tool_result" && calls.has(String(d.call_id))) {
      const { call_id: _omit, ...rest } = d;
      const output = typeof d.output === "string" ? d.output : JSON.stringify(rest);
      const call = calls.get(String(d.call_id))!;
      record(e, "user", { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: output, is_error: d.ok === false }] }, { sourceToolAssistantUUID: call.uuid });
    } else if (e.type === "branch_summary") record(e, "user", { role: "user", content: renderBranchSummaryText(d) }, { isMeta: true });
    // What the model reads of a skill or a finished subagent (spec README: as codex-interop.md §5.4 does).
    else if (e.type === "skill_activation") record(e, "user", { role: "user", content: renderSkillActivation(termOfJs(d) as TermObject) }, { isMeta: true });
    else if (e.type === "subagent_event" && isTerminalSubagent(termOfJs(d) as TermObject)) record(e, "user", { role: "user", content: renderSubagent(termOfJs(d) as TermObject) }, { isMeta: true });
    else if (e.type === "history_compaction") {
      const previous = parent;
      // §5.3 table order: subtype, logicalParentUuid, content, level, compactMetadata.
      const boundary: JsonObject = record(e, "system", null, {
        subtype: "compact_boundary",
        logicalParentUuid: previous,
        content: "Conversation compacted",
        level: "info",
        compactMetadata: { trigger: d.trigger ?? "manual", preTokens: d.pre_tokens ?? 0 },
      }, `${e.id}#boundary`);
      boundary.parentUuid = null;
      parent = boundary.uuid as string;
      record(e, "user", { role: "user", content: renderCheckpointText(d) }, { isVisibleInTranscriptOnly: true, isCompactSummary: true }, `${e.id}#summary`);
      // What the fold keeps after the checkpoint, written again so Claude sees it too.
      const to = isJsonObject(d.range) && typeof d.range.to_seq === "number" ? d.range.to_seq : -1;
      for (const [seq, recs] of [...written].sort((a, b) => a[0] - b[0])) {
        if (seq <= to || seq >= (e.seq ?? 0)) continue;
        for (const r of recs) {
          const again: JsonObject = { ...r, parentUuid: parent, uuid: recordUuid(`${String(r.uuid)}#kept:${e.id}`) };
          parent = again.uuid as string;
          out.push(again);
        }
      }
    } else {
      // Claude's loader ignores this line type; it carries the whole Event.
      out.push(JSON.stringify({ type: "pixir-event", sessionId: u, timestamp: e.ts, event: e }));
      pixirEvents++;
    }
  }
  return { lines: out.map((x) => (typeof x === "string" ? x : JSON.stringify(x))), converted, pixirEvents };
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function signedBlock(item: unknown): boolean {
  return isJsonObject(item) && ((item.type === "thinking" && typeof item.signature === "string") || item.type === "redacted_thinking");
}
