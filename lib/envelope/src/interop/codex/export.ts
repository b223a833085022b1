// codex-interop.md §5: `pixir export codex`. An imported Log gives back its rollout byte for byte; a Log
// with Events added by pixir gives a new rollout that Codex resumes as a fork of the imported thread.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync } from "node:fs";
import path from "node:path";
import { isJsonObject, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { osWriteFault } from "../../event/os-fault.js";
import { randomHex } from "../../event/ids.js";
import { notFoundError, openHistory } from "../../store/loader.js";
import { existingOutDir, logPath, writeWhole } from "../../store/paths.js";
import { codexBaseId, EPOCH, restAfterTimestamp, shownThreadId, withTimestamp } from "./format.js";
import { sha256Hex } from "../../event/ids.js";
import { rolloutLines } from "./family.js";
import { Families } from "./import.js";
import { codexOf, lineOf } from "./rebuild.js";
import { carriesItem } from "./line-map.js";
import { checkpointToSeqOf } from "../../session/context.js";
import { isTerminalSubagent, renderBranchSummaryText, renderCheckpointText, renderSkillActivation, renderSubagent, withAttachedResources } from "../../summary/render.js";
import { jason, str, termOfJs, type TermObject } from "../../event/elixir.js";
import type { WriteReport } from "../../session/agent-files.js";

export type CodexExportKind = "original" | "fork" | "new";

export interface CodexExportPlan {
  sessionId: string;
  kind: CodexExportKind;
  threadId: string;
  forkedFromId: string | null;
  /** session_meta.cwd: where Codex resumes the thread (archive.md §5); null when line 1 names none. */
  cwd: string | null;
  /** The rollout's name under DIR (§5.5). */
  name: string;
  text: string;
  lineCount: number;
  copiedLineCount: number;
  convertedEventCount: number;
  omitted: Record<string, number>;
  missingLines: number[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const pad = (n: number, w = 2): string => String(n).padStart(w, "0");

/**
 * §5.5: `YYYY/MM/DD/rollout-…-<thread id>.jsonl`. The stored name is kept when it is a rollout name of this
 * thread (Codex names files by local time, which cannot be derived again); a thread id that is not a UUID
 * is written as base(thread id), so a name never holds a `/`.
 */
export function codexExportName(threadId: string, storedFile: unknown, lineOne: JsonObject): string {
  const shown = UUID.test(threadId) ? threadId : codexBaseId(threadId);
  if (typeof storedFile === "string" && shown === threadId) {
    const m = /^rollout-(\d{4})-(\d{2})-(\d{2})T\d{2}-\d{2}-\d{2}-(.+)\.jsonl$/.exec(storedFile);
    if (m !== null && m[4] === threadId) return `${m[1]}/${m[2]}/${m[3]}/${storedFile}`;
  }
  const payload = isJsonObject(lineOne.payload) ? lineOne.payload : {};
  let ms = typeof payload.timestamp === "string" ? Date.parse(payload.timestamp) : NaN;
  if (Number.isNaN(ms)) ms = typeof lineOne.timestamp === "string" ? Date.parse(lineOne.timestamp) : NaN;
  const d = new Date(Number.isNaN(ms) ? 0 : ms);
  const day = `${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}`;
  const time = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}-${pad(d.getUTCMinutes())}-${pad(d.getUTCSeconds())}`;
  return `${day}/rollout-${time}-${shown}.jsonl`;
}

/** §5.3: the new thread id, a UUID in the v7 layout that depends only on the Log and the anchor. */
export function codexForkThreadId(sessionId: string, anchorId: string, t0: string): string {
  let m = Date.parse(t0);
  if (Number.isNaN(m)) m = 0;
  m = Math.min(Math.max(m, 0), 2 ** 48 - 1);
  const h = sha256Hex(`pixir-codex:${sessionId}:${anchorId}`);
  const hex = `${m.toString(16).padStart(12, "0")}7${h.slice(0, 3)}${"89ab"[parseInt(h[3]!, 16) & 3]}${h.slice(4, 19)}`;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** The Codex item a line Event carries (§3.3), or null. */
function codexItemOf(e: PixirEvent): unknown {
  const c = codexOf(e);
  if (c === null || !carriesItem(e.data)) return null;
  if (typeof c.part === "string") return Object.hasOwn(c, "item") ? c.item : e.data.item;
  const record = c.record as JsonObject;
  return record.payload === "$item" ? e.data.item : record.payload;
}

const userItem = (text: string): JsonObject => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

/** §5.4: the lines of one native Event, or null when it has none. `history` is E, for a checkpoint's kept items. */
function convert(e: PixirEvent, writtenCalls: Set<string>, history: PixirEvent[]): JsonObject[] | null {
  const d = e.data;
  switch (e.type) {
    case "branch_summary":
      return [{ type: "response_item", payload: userItem(renderBranchSummaryText(d)) }];
    case "history_compaction": {
      const to = checkpointToSeqOf(e);
      if (to === null) return null;
      const kept: unknown[] = [userItem(renderCheckpointText(d))];
      const calls = new Set(writtenCalls);
      for (const k of history) {
        if (k.seq === null || k.seq <= to || k.seq >= (e.seq ?? -1)) continue;
        const item = codexOf(k) === null ? (convert(k, calls, history) ?? []).filter((l) => l.type === "response_item").map((l) => l.payload) : [codexItemOf(k)].filter((i) => i !== null);
        kept.push(...item);
      }
      const summary = str(termOfJs(d.summary));
      return [
        { type: "compacted", payload: { message: summary, replacement_history: kept } },
        { type: "event_msg", payload: { type: "context_compacted" } },
      ];
    }
    case "user_message": {
      // The text of a replayed user turn (context-and-compaction.md §1.5).
      const resources = d.resources;
      const text = Array.isArray(resources) && resources.length > 0 ? withAttachedResources(termOfJs(d.text ?? ""), resources.map(termOfJs)) : typeof d.text === "string" ? d.text : "";
      return [
        { type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text }] } },
        { type: "event_msg", payload: { type: "user_message", message: text, images: [], local_images: [], text_elements: [] } },
      ];
    }
    case "assistant_message":
      if (typeof d.text !== "string" || (isJsonObject(d.metadata) && d.metadata.partial === true)) return null;
      return [{ type: "response_item", payload: { type: "message", role: "assistant", content: [{ type: "output_text", text: d.text }] } }];
    case "reasoning":
      if (isJsonObject(d.item) && (d.item.type === "reasoning" || d.item.type === "compaction") && (d.dialect === "codex" || d.dialect === "openai")) return [{ type: "response_item", payload: d.item }];
      return null;
    case "tool_call": {
      if (typeof d.call_id !== "string" || !Object.hasOwn(d, "name")) return null;
      writtenCalls.add(d.call_id);
      const args = d.args === undefined || d.args === null || d.args === false ? {} : d.args;
      return [{ type: "response_item", payload: { type: "function_call", name: d.name, arguments: jason(termOfJs(args)), call_id: d.call_id } }];
    }
    case "tool_result": {
      if (typeof d.call_id !== "string" || !writtenCalls.has(d.call_id)) return null;
      const { call_id: _omit, ...rest } = d;
      return [{ type: "response_item", payload: { type: "function_call_output", call_id: d.call_id, output: typeof d.output === "string" ? d.output : jason(termOfJs(rest)) } }];
    }
    case "skill_activation":
      return [{ type: "response_item", payload: userItem(renderSkillActivation(termOfJs(d) as TermObject)) }];
    case "subagent_event": {
      const data = termOfJs(d) as TermObject;
      return isTerminalSubagent(data) ? [{ type: "response_item", payload: userItem(renderSubagent(data)) }] : null;
    }
    default:
      return null;
  }
}

export interface CodexExportOptions {
  /** archive.md §5: the working directory a new rollout records (--cwd, or the cwd another agent recorded). */
  cwd?: string;
}

const cwdOf = (meta: JsonObject): string | null => (typeof meta.cwd === "string" ? meta.cwd : null);

/** §5.1–§5.4: what `pixir export codex <id>` writes. */
export async function planCodexExport(ws: string, id: string, version: string, options: CodexExportOptions = {}): Promise<CodexExportPlan> {
  const history = await openHistory(ws, id, { notFound: () => notFoundError(id, ws, logPath(ws, id).rel, "pixir export codex") });
  const events: PixirEvent[] = [];
  for await (const item of history.items()) events.push(item.event);
  let last = -1;
  let firstNative = -1;
  events.forEach((e, i) => {
    const c = codexOf(e);
    if (c === null) {
      if (firstNative === -1 && i > 0) firstNative = i;
      if (firstNative === -1 && i === 0 && e.type !== "session_fork") firstNative = 0;
    } else if (lineOf(e) !== null) {
      if (firstNative !== -1) throw new PixirError("invalid_args", "the History mixes imported and native Events", { field: "session_id", reason: "mixed_history" });
      last = i;
    }
  });
  const tail = last === -1 ? events.filter((e, i) => i > 0 && codexOf(e) === null) : events.slice(last + 1).filter((e) => codexOf(e) === null);
  const families = new Families(ws);
  if (last !== -1) {
    const t = String(codexOf(events[last]!)!.thread);
    const loaded = await families.load(t);
    if (loaded === null || loaded === "foreign") throw new PixirError("fork_parent_missing", undefined, { session_id: id, parent_session_id: codexBaseId(t) });
    await families.loadChain(t);
    const lines = rolloutLines(families.get, t);
    const header = codexOf(loaded.logs[0]!.stored[0]!)!;
    const own = codexOf(events[0]!);
    const inFamily = own !== null && ((own.line === 1 && own.synthetic === undefined) || own.synthetic === "rollback_fork");
    if (tail.length === 0 && inFamily) {
      const { kept, missing } = familyLines(id, lines, lines.length);
      return {
        sessionId: id,
        kind: "original",
        threadId: t,
        forkedFromId: null,
        cwd: isJsonObject(loaded.lineOne.payload) ? cwdOf(loaded.lineOne.payload) : null,
        name: codexExportName(t, header.file, loaded.lineOne),
        text: kept.map((l) => `${l}\n`).join(""),
        lineCount: kept.length,
        copiedLineCount: 0,
        convertedEventCount: 0,
        omitted: {},
        missingLines: missing,
      };
    }
    // §5.3 fork: Codex's own fork layout, then the native tail.
    const x = lineOf(events[last]!)!;
    const anchor = tail[0] ?? events[0]!;
    const t0 = anchor.ts ?? EPOCH;
    const newId = codexForkThreadId(id, anchor.id ?? "", t0);
    const payload = isJsonObject(loaded.lineOne.payload) ? loaded.lineOne.payload : {};
    const meta: JsonObject = {};
    for (const [k, v] of Object.entries(payload)) {
      if (k === "forked_from_id") continue;
      meta[k] = v;
      if (k === "id") {
        meta.id = newId;
        meta.forked_from_id = t;
      }
    }
    meta.timestamp = t0;
    if (options.cwd !== undefined) meta.cwd = options.cwd;
    const out: string[] = [JSON.stringify({ timestamp: t0, type: "session_meta", payload: meta })];
    const { kept, missing } = familyLines(id, lines, x);
    for (const l of kept) {
      const r = restAfterTimestamp(l);
      // A line without a leading timestamp is copied as it is: Codex's fork writes every record's time, but
      // this one had none to replace.
      out.push(r === null ? l : withTimestamp(t0, r.rest));
    }
    return newRollout(id, "fork", t, meta, out, tail, events, missing);
  }
  const anchor = events[0]!;
  const t0 = anchor.ts ?? EPOCH;
  const newId = codexForkThreadId(id, anchor.id ?? "", t0);
  const meta: JsonObject = { id: newId, timestamp: t0, cwd: options.cwd ?? ws, originator: "pixir", cli_version: version, source: "cli" };
  return newRollout(id, "new", null, meta, [JSON.stringify({ timestamp: t0, type: "session_meta", payload: meta })], events, events, []);
}

/** §5.3: a new rollout whose first lines (line 1, and a fork's copies) are `head`, then the converted tail. */
function newRollout(id: string, kind: "fork" | "new", forkedFromId: string | null, meta: JsonObject, head: string[], tail: PixirEvent[], history: PixirEvent[], missing: number[]): CodexExportPlan {
  const { converted, omitted, count } = convertTail(tail, history);
  const out = [...head, ...converted];
  const threadId = meta.id as string;
  return {
    sessionId: id,
    kind,
    threadId,
    forkedFromId,
    cwd: cwdOf(meta),
    name: codexExportName(threadId, null, { timestamp: meta.timestamp, payload: meta }),
    text: out.map((l) => `${l}\n`).join(""),
    lineCount: out.length,
    copiedLineCount: head.length - 1,
    convertedEventCount: count,
    omitted,
    missingLines: missing,
  };
}

/**
 * Lines 1 … x of a family's rollout (§5.2, §5.3). A line a --lenient import skipped cannot be rebuilt: it is
 * left out and named. A line no family Log holds (a removed Log) fails the export: the README's rule for
 * `codex_export_incomplete`.
 */
function familyLines(id: string, lines: Array<string | null | undefined>, x: number): { kept: string[]; missing: number[] } {
  const kept: string[] = [];
  const missing: number[] = [];
  const absent: number[] = [];
  for (let i = 0; i < x; i++) {
    const l = lines[i];
    if (l === undefined) absent.push(i + 1);
    else if (l === null) missing.push(i + 1);
    else kept.push(l);
  }
  if (absent.length > 0) throw new PixirError("codex_export_incomplete", undefined, { session_id: id, missing_lines: absent });
  return { kept, missing };
}

function convertTail(tail: PixirEvent[], history: PixirEvent[]): { converted: string[]; omitted: Record<string, number>; count: number } {
  const written = new Set<string>();
  const converted: string[] = [];
  const omitted: Record<string, number> = {};
  let count = 0;
  for (const e of tail) {
    const lines = convert(e, written, history);
    if (lines === null) {
      omitted[e.type] = (omitted[e.type] ?? 0) + 1;
      continue;
    }
    count++;
    for (const l of lines) converted.push(JSON.stringify({ timestamp: e.ts, type: l.type, payload: l.payload }));
  }
  return { converted, omitted, count };
}

export interface CodexExportReport extends WriteReport {
  session_id: string;
  export: CodexExportKind;
  thread_id: string | null;
  forked_from_id: string | null;
  /** archive.md §5: session_meta.cwd of the rollout. */
  cwd: string | null;
  file: string;
  path: string | null;
  line_count: number;
  copied_line_count: number;
  converted_event_count: number;
  omitted: Record<string, number>;
  missing_lines: number[];
  status: "created" | "unchanged" | "would_create";
}

/** §5.5: write the rollout under DIR (temp plus rename), never over a different file. */
export function finishCodexExport(plan: CodexExportPlan, options: { out?: string; cwd: string; dryRun?: boolean }): CodexExportReport {
  let target: string | null = null;
  let status: CodexExportReport["status"] = "would_create";
  if (options.out !== undefined) {
    target = path.join(existingOutDir(options.cwd, options.out), plan.name);
    let existing: Buffer | null = null;
    try {
      existing = readFileSync(target);
    } catch {
      existing = null;
    }
    if (existing !== null) {
      if (!existing.equals(Buffer.from(plan.text, "utf8"))) throw new PixirError("already_exists", "the export file already exists", { path: target });
      status = "unchanged";
    } else if (!options.dryRun) {
      const tmp = `${target}.tmp-${randomHex(4)}`;
      let renamed = false;
      let madeDir: string | undefined;
      try {
        // A full or read-only disk is named after the file (cli-contract.md "Operating-system faults").
        try {
          madeDir = makeDirs(path.dirname(target));
          const fd = openSync(tmp, "wx", 0o644);
          try {
            writeWhole(fd, Buffer.from(plan.text, "utf8"));
            fsyncSync(fd);
          } finally {
            closeSync(fd);
          }
          renameSync(tmp, target);
        } catch (err) {
          throw osWriteFault(err, target, "write", "the exported Codex file");
        }
        renamed = true;
      } finally {
        if (!renamed) {
          try {
            unlinkSync(tmp);
          } catch {
            /* gone */
          }
          // The directories this export made below --out go too: a failed export leaves nothing.
          if (madeDir !== undefined) rmSync(madeDir, { recursive: true, force: true });
        }
      }
      status = "created";
    }
  }
  return {
    ok: true,
    recorded: status === "created",
    dry_run: Boolean(options.dryRun),
    session_id: plan.sessionId,
    export: plan.kind,
    thread_id: shownThreadId(plan.threadId),
    forked_from_id: plan.forkedFromId === null ? null : shownThreadId(plan.forkedFromId),
    cwd: plan.cwd,
    file: plan.name,
    path: target,
    line_count: plan.lineCount,
    copied_line_count: plan.copiedLineCount,
    converted_event_count: plan.convertedEventCount,
    omitted: plan.omitted,
    missing_lines: plan.missingLines,
    status,
  };
}

/**
 * `mkdir -p`, one directory at a time, so that a refusal is reported as the OS gave it (a recursive
 * mkdirSync says ENOENT for a read-only file system). Returns the first directory it made.
 */
function makeDirs(dir: string): string | undefined {
  const missing: string[] = [];
  for (let d = dir; ; d = path.dirname(d)) {
    try {
      statSync(d);
      break;
    } catch {
      missing.unshift(d);
      if (path.dirname(d) === d) break;
    }
  }
  for (const d of missing) {
    try {
      // README "Rules that hold across the two agent importers": directories below --out are made 0700.
      mkdirSync(d, 0o700);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
  }
  return missing[0];
}
