// context-and-compaction.md §1: what a model sees of a Session, as Pixir's provider fold gives it
// (`Pixir.Provider.fold_input/3`): the History becomes the Responses API input items Pixir would send.
// The latest checkpoint stands in for everything through its range.to_seq; open tool calls get a
// synthetic output; skill activations wait for their skill_view result; summaries, skills and finished
// subagents reach the model as user text. Two streaming passes over the one loader's History (find the
// checkpoint and the current user turn, then fold), so memory holds only the open calls.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { abortable } from "../lines/abortable.js";
import { lineDataText, type PixirEvent } from "../event/envelope.js";
import { compareTerms, hasKey, isInteger, isTermObject, jason, member, parseTerm, str, termObject, termOfJs, type Term, type TermObject } from "../event/elixir.js";
import { PixirError } from "../event/errors.js";
import { MAX_SESSION_ID_BYTES, sessionIdProblem } from "../event/session-id.js";
import { notFoundError, openHistory, type History, type HistoryItem } from "../store/loader.js";
import { inspectStatePath, logPath, sessionsDir, StatePath } from "../store/paths.js";
import { isTerminalSubagent, renderBranchSummary, renderCheckpoint, renderDescriptor, renderSkillActivation, renderSubagent, withAttachedResources } from "../summary/render.js";

import { CONTEXT_FORMATS, type ContextFormat } from "../event/vocabulary.js";

export { CONTEXT_FORMATS, type ContextFormat };

/** The Event an item comes from (§1.6): for a synthetic orphan output, the tool_call it closes. */
export interface ItemSource {
  seq: number | null;
  id: string | null;
  type: PixirEvent["type"];
}

/** One input item, exactly as Pixir would send it (§1.3–§1.5), with the Event it comes from. */
export interface ContextItem extends ItemSource {
  item: TermObject;
}

/** An Event of the visible list, with its `data` as Jason decodes it. */
export interface FoldEvent extends ItemSource {
  sessionId: string | null;
  data: TermObject;
}

/** The data of a History item as Jason decodes it: from its stored text, so `1.0` stays a float. */
export function eventData(item: HistoryItem): TermObject {
  const line = item.line;
  let text = item.dataText;
  if (text === undefined && line !== undefined) {
    const c = line.canonical;
    text = c !== null ? line.bytes.toString("utf8", c.dataStart, c.dataEnd) : lineDataText(line.bytes.toString("utf8"), line.event, line.exact);
  }
  if (text !== undefined) {
    const t = parseTerm(text);
    if (isTermObject(t)) return t;
  }
  return termOfJs(item.event.data) as TermObject;
}

const foldEvent = (item: HistoryItem): FoldEvent => {
  const e = item.event;
  return { seq: e.seq, id: e.id, type: e.type, sessionId: e.session_id, data: eventData(item) };
};

/** §1.1 step 3: `data.range.to_seq` of a checkpoint when it is an integer, else null (T is none). */
export function checkpointToSeq(data: TermObject): bigint | null {
  const to = member(data.range, "to_seq");
  return isInteger(to) ? to : null;
}

/** checkpointToSeq of an Event held as JSON.parse gives it (interop code keeps Events in memory). */
export function checkpointToSeqOf(e: Pick<PixirEvent, "data">): number | null {
  const to = checkpointToSeq(obj({ range: termOfJs(e.data.range) }));
  return to === null ? null : Number(to);
}

/** §1.1 step 4: does the Event follow the latest checkpoint, whose `to_seq` is `to`? */
export const followsCheckpoint = (seq: number | null, to: bigint | null): boolean => seq === null || (to !== null && seq > to);

/**
 * §1.1 step 2 and §1.2 `u`, in one pass: the latest checkpoint (greatest seq, a null seq counting as
 * −1, the first on a tie) and where the last user_message of the visible list is. Which user messages
 * are visible depends on the checkpoint, known only at the end, so the candidates are kept: the last
 * one without a seq, and those with a seq that no later one matches or exceeds (one, in seq order).
 */
class VisibleScan {
  latest: { item: HistoryItem; position: number; seq: number } | null = null;
  private lastUser = -1;
  private lastNullSeqUser = -1;
  /** User messages with a seq, each later one with a smaller seq than the one below it. */
  private users: Array<{ position: number; seq: number }> = [];

  add(item: HistoryItem, position: number): void {
    const e = item.event;
    if (e.type === "history_compaction") {
      const seq = e.seq ?? -1;
      if (this.latest === null || seq > this.latest.seq) this.latest = { item, position, seq };
    } else if (e.type === "user_message") {
      this.lastUser = position;
      if (e.seq === null) this.lastNullSeqUser = position;
      else {
        while (this.users.length > 0 && this.users.at(-1)!.seq <= e.seq) this.users.pop();
        this.users.push({ position, seq: e.seq });
      }
    }
  }

  /** The position of the current user turn, given the latest checkpoint's `to_seq`; -1 for none. */
  currentUser(to: bigint | null): number {
    if (this.latest === null) return this.lastUser;
    let best = this.lastNullSeqUser;
    if (to !== null) {
      for (let i = this.users.length - 1; i >= 0; i--) {
        const u = this.users[i]!;
        if (u.seq > to) {
          best = Math.max(best, u.position);
          break;
        }
      }
    }
    return best;
  }
}

/** Session resources for image parts (§1.5): the Workspace and the share lineage of the Session. */
export interface ResourceLookup {
  workspace: string;
  /** The Session whose History is folded, and the parents its share_v1 prefix resolves through. */
  sessionId: string;
  lineage: readonly string[];
}

export function resourceLookupOf(ws: string, history: History): ResourceLookup {
  const lineage: string[] = [];
  for (let link = history.share; link !== null; link = link.parent.share) lineage.push(link.parent.sessionId);
  return { workspace: ws, sessionId: history.sessionId, lineage };
}

type ImageError = { kind: string; message: string; details: TermObject };

const obj = (entries: Record<string, Term>): TermObject => Object.assign(termObject(), entries);
const textPart = (text: Term): TermObject => obj({ type: "input_text", text });
const userItem = (parts: Term[]): TermObject => obj({ role: "user", content: parts });

const EXTENSION = /^[A-Za-z0-9]{1,16}$/;
const SHA256 = /^[0-9a-f]{64}$/;
const DESCRIPTOR_KEYS = ["resource_id", "content_sha256", "extension"] as const;

/** §1.5 image part steps 1–5: the payload's bytes, or the error Pixir would report. */
function readImage(sid: Term | undefined, d: TermObject, resources: ResourceLookup): Buffer | ImageError {
  const problem = sessionIdProblem(sid);
  if (problem !== null) {
    const details = obj({ field: "session_id", max_bytes: BigInt(MAX_SESSION_ID_BYTES), next_actions: ["pass_a_valid_session_id"], reason: problem.reason });
    if (typeof sid === "string") details.observed_bytes = BigInt(Buffer.byteLength(sid, "utf8"));
    return { kind: "invalid_args", message: "session id is invalid", details };
  }
  for (const key of DESCRIPTOR_KEYS) {
    const v = d[key];
    if (typeof v !== "string" || v === "") return { kind: "invalid_args", message: `resource descriptor is missing ${key}`, details: obj({ key }) };
  }
  const id = d.resource_id as string;
  const sha = d.content_sha256 as string;
  const ext = d.extension as string;
  // §7 D5: checked before they name a path.
  const invalid = sessionIdProblem(id) !== null ? "resource_id" : !SHA256.test(sha) ? "content_sha256" : !EXTENSION.test(ext) ? "extension" : null;
  if (invalid !== null) return { kind: "invalid_args", message: "resource descriptor is invalid", details: obj({ key: invalid }) };
  const sessionIdText = sid as string;
  const sources = sessionIdText === resources.sessionId ? [sessionIdText, ...resources.lineage] : [sessionIdText];
  const pathIn = (s: string) => new StatePath(resources.workspace, [...sessionsDir(resources.workspace).components, s, "resources", id, `${sha}.${ext}`], "file");
  const own = pathIn(sessionIdText);
  let found: StatePath | null = null;
  try {
    for (const s of sources) {
      const p = pathIn(s);
      if (inspectStatePath(p) === "present") {
        found = p;
        break;
      }
    }
  } catch (err) {
    if (err instanceof PixirError && err.kind === "permission_denied") return readFailed("eacces", id);
    return { kind: "unsafe_state_path", message: "Pixir state path is unsafe", details: obj({ resource_id: id }) };
  }
  const missing = (): ImageError => ({ kind: "resource_missing", message: "session resource payload is missing", details: obj({ path: own.abs, resource_id: id }) });
  if (found === null) return missing();
  let bytes: Buffer;
  try {
    bytes = readFileSync(found.abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return missing();
    return readFailed((code ?? "unknown").toLowerCase(), id);
  }
  const actual = createHash("sha256").update(bytes).digest("hex");
  if (actual !== sha) {
    return { kind: "resource_missing", message: "session resource checksum mismatch", details: obj({ actual_sha256: actual, expected_sha256: sha, resource_id: id }) };
  }
  return bytes;
}

const readFailed = (reason: string, id: string): ImageError => ({ kind: "read_failed", message: "could not read session resource payload", details: obj({ reason, resource_id: id }) });

/** §1.5 image part: the image as a data URL, or a text saying why it could not be rehydrated. */
function imagePart(e: FoldEvent, d: TermObject, resources: ResourceLookup): TermObject {
  const read = readImage(e.sessionId, d, resources);
  if (Buffer.isBuffer(read)) {
    const detail = d.detail === undefined || d.detail === null || d.detail === false ? "auto" : d.detail;
    return obj({ type: "input_image", image_url: `data:${str(d.mime_type)};base64,${read.toString("base64")}`, detail });
  }
  // §7 D2: the key order of this JSON is fixed (jason sorts it).
  const error = obj({ error: obj({ error: obj({ details: read.details, kind: read.kind, message: read.message }), ok: false }) });
  return textPart(`Image resource ${str(d.resource_id)} could not be rehydrated: ${jason(error)}`);
}

const isImageDescriptor = (d: Term): d is TermObject => isTermObject(d) && d.kind === "image";

/** §1.5: the content of a user_message, as a replayed turn or as the current one. */
function userContent(e: FoldEvent, current: boolean, resources: ResourceLookup): Term[] {
  const d = e.data;
  const text = hasKey(d, "text") ? d.text! : "";
  const r = hasKey(d, "resources") ? d.resources! : [];
  if (!current) return [textPart(Array.isArray(r) && r.length > 0 ? withAttachedResources(text, r) : text)];
  const wrapped = Array.isArray(r) ? r : r === null ? [] : [r];
  const described = wrapped.filter((x) => !isImageDescriptor(x));
  const parts: Term[] = [textPart(described.length === 0 ? text : withAttachedResources(text, described))];
  if (Array.isArray(r)) for (const x of r) if (isImageDescriptor(x)) parts.push(imagePart(e, x, resources));
  return parts;
}

/** §1.3: `arguments` is Jason of the args, `{}` for missing, null or false args. */
function functionCall(d: TermObject): TermObject {
  const args = d.args === undefined || d.args === null || d.args === false ? termObject() : d.args;
  return obj({ type: "function_call", call_id: d.call_id!, name: d.name!, arguments: jason(args) });
}

/** §1.3: a tool result's output: its string `output`, else Jason of its data without `call_id`. */
function functionCallOutput(d: TermObject): TermObject {
  let output: string;
  if (typeof d.output === "string") output = d.output;
  else {
    const rest = termObject();
    for (const k of Object.keys(d)) if (k !== "call_id") rest[k] = d[k]!;
    output = jason(rest);
  }
  return obj({ type: "function_call_output", call_id: d.call_id!, output });
}

const ORPHAN_MESSAGE = "Pixir replay found a tool_call without a matching tool_result";

/** §1.3: the synthetic output of a call that never got its result (§7 D2: fixed key order). */
function orphanOutput(callId: Term, name: Term): TermObject {
  const error = obj({ error: obj({ details: obj({ call_id: callId, tool: name }), kind: "orphan_tool_call", message: ORPHAN_MESSAGE }), ok: false });
  return obj({ type: "function_call_output", call_id: callId, output: jason(error) });
}

/** §1.4 main file: the path normalised below `/` is exactly `SKILL.md` (or empty); never one under `~` (§7 D7). */
export function isSkillMainFile(path: string): boolean {
  if (path === "") return true;
  if (path === "~" || path.startsWith("~/")) return false;
  const kept: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") kept.pop();
    else kept.push(part);
  }
  return kept.join("/") === "SKILL.md";
}

/** §1.4: does this skill_activation belong to the pending skill_view call `p`? */
function matchesSkillView(activation: TermObject, p: TermObject): boolean {
  const name = activation.name;
  if (typeof name !== "string" || p.name !== "skill_view" || !isTermObject(p.args)) return false;
  const args = p.args;
  if (args.name !== name) return false;
  const path = hasKey(args, "path") ? args.path : "SKILL.md";
  return typeof path === "string" && isSkillMainFile(path);
}

/** F5: Events that do not close open calls. */
const TRANSPARENT = new Set<PixirEvent["type"]>(["permission_decision", "provider_usage", "subagent_event", "workflow_event"]);

interface PendingCall {
  callId: Term;
  source: FoldEvent;
}

/**
 * §1.2: the fold. Fed the visible Events in order; each `add` returns the items it appends, which
 * never change once returned. `pending` and `deferred` are keyed by the call id's JSON (an integer and
 * a float are different ids).
 */
export class ProviderFold {
  private readonly pending = new Map<string, PendingCall>();
  private readonly deferred = new Map<string, { callId: Term; items: ContextItem[] }>();

  constructor(private readonly resources: ResourceLookup) {}

  get hasOpenCalls(): boolean {
    return this.pending.size > 0;
  }

  /** `active`: the Event is at or after the current user turn; `current`: it is that turn. */
  add(e: FoldEvent, active: boolean, current: boolean): ContextItem[] {
    const d = e.data;
    const out: ContextItem[] = [];
    if (e.type === "tool_call" && hasKey(d, "call_id")) {
      if (this.deferred.size > 0) this.close(out);
      if (hasKey(d, "name")) out.push(itemOf(e, functionCall(d)));
      this.pending.set(jason(d.call_id!), { callId: d.call_id!, source: e });
      return out;
    }
    if (e.type === "tool_result" && hasKey(d, "call_id")) {
      const key = jason(d.call_id!);
      if (!this.pending.has(key)) return out;
      out.push(itemOf(e, functionCallOutput(d)));
      if (active) {
        const view = d.resource_view;
        const descriptor = member(view, "descriptor");
        if (isTermObject(descriptor)) {
          const parts: Term[] = [textPart(`Resource view requested:\n${renderDescriptor(descriptor)}`)];
          if (descriptor.kind === "image") parts.push(imagePart(e, descriptor, this.resources));
          out.push(itemOf(e, userItem(parts)));
        }
      }
      const held = this.deferred.get(key);
      if (held !== undefined) {
        out.push(...held.items);
        this.deferred.delete(key);
      }
      this.pending.delete(key);
      return out;
    }
    if (e.type === "skill_activation") {
      const match = this.matchingCall(d);
      if (match !== null) {
        const key = jason(match.callId);
        const entry = this.deferred.get(key) ?? { callId: match.callId, items: [] };
        entry.items.push(itemOf(e, this.item(e, false)!));
        this.deferred.set(key, entry);
        return out;
      }
    }
    if (TRANSPARENT.has(e.type) && this.pending.size > 0) return out;
    this.close(out);
    const item = this.item(e, current);
    if (item !== null) out.push(itemOf(e, item));
    return out;
  }

  /** After the last Event. */
  finish(): ContextItem[] {
    const out: ContextItem[] = [];
    this.close(out);
    return out;
  }

  /** §1.4: the one pending skill_view call the activation belongs to, or null (none, or more than one). */
  private matchingCall(activation: TermObject): PendingCall | null {
    let found: PendingCall | null = null;
    for (const p of this.pending.values()) {
      if (!matchesSkillView(activation, p.source.data)) continue;
      if (found !== null) return null;
      found = p;
    }
    return found;
  }

  /** §1.2 close: orphan outputs in call-id order, each followed by the activations held for it. */
  private close(out: ContextItem[]): void {
    for (const p of sortedByCallId([...this.pending.values()])) {
      out.push(itemOf(p.source, orphanOutput(p.callId, member(p.source.data, "name") ?? null)));
      const key = jason(p.callId);
      const held = this.deferred.get(key);
      if (held !== undefined) {
        out.push(...held.items);
        this.deferred.delete(key);
      }
    }
    for (const held of sortedByCallId([...this.deferred.values()])) out.push(...held.items);
    this.pending.clear();
    this.deferred.clear();
  }

  /** §1.3: the item of an Event that is not a paired tool call or result, or null. */
  private item(e: FoldEvent, current: boolean): TermObject | null {
    const d = e.data;
    if (!givesContextItem(e.type, d)) return null;
    switch (e.type) {
      case "user_message":
        return userItem(userContent(e, current, this.resources));
      case "assistant_message":
        return obj({ type: "message", role: "assistant", content: [obj({ type: "output_text", text: d.text! })] });
      case "tool_call":
        return functionCall(d);
      case "skill_activation":
        return userItem([textPart(renderSkillActivation(d))]);
      case "subagent_event":
        return userItem([textPart(renderSubagent(d))]);
      case "history_compaction":
        return userItem([textPart(renderCheckpoint(d))]);
      case "branch_summary":
        return userItem([textPart(renderBranchSummary(d))]);
      default:
        // reasoning (§7 D1), tool results without their call, and the audit-only types.
        return null;
    }
  }
}

/**
 * §1.3: whether the fold gives an Event of this type and data an item (a tool result: with its call). Never
 * reasoning (§7 D1), a partial or text-less assistant message, a tool call without call_id or name, a
 * subagent's non-terminal event or an audit-only type. `pixir search` reads its hits' `in_context` here.
 */
export function givesContextItem(type: string, d: TermObject): boolean {
  switch (type) {
    case "user_message":
    case "tool_result":
    case "skill_activation":
    case "history_compaction":
    case "branch_summary":
      return true;
    case "assistant_message":
      return member(d.metadata, "partial") !== true && hasKey(d, "text");
    case "tool_call":
      return hasKey(d, "call_id") && hasKey(d, "name");
    case "subagent_event":
      return isTerminalSubagent(d);
    default:
      return false;
  }
}

const itemOf = (source: ItemSource, item: TermObject): ContextItem => ({ seq: source.seq, id: source.id, type: source.type, item });

/** §6.6: ascending call-id order; on a numeric tie (1 and 1.0) the integer first, as in an Erlang map. */
function sortedByCallId<T extends { callId: Term }>(list: T[]): T[] {
  return list.sort((a, b) => compareTerms(a.callId, b.callId) || Number(typeof a.callId !== "bigint") - Number(typeof b.callId !== "bigint"));
}

/** §1: the input items of a History, in fold order. */
export async function* contextItems(history: History, resources: ResourceLookup, signal?: AbortSignal): AsyncGenerator<ContextItem> {
  const scan = new VisibleScan();
  let position = 0;
  for await (const item of abortable(history.items(), signal)) scan.add(item, position++);
  const latest = scan.latest === null ? null : foldEvent(scan.latest.item);
  const to = latest === null ? null : checkpointToSeq(latest.data);
  const currentUser = scan.currentUser(to);
  const fold = new ProviderFold(resources);
  if (latest !== null) yield* fold.add(latest, false, false);
  position = 0;
  for await (const item of abortable(history.items(), signal)) {
    const at = position++;
    const e = item.event;
    if (latest !== null && (e.type === "history_compaction" || !followsCheckpoint(e.seq, to))) continue;
    // F5 drops these without reading them; nothing else needs the data of an Event that gives no item.
    if (TRANSPARENT.has(e.type) && fold.hasOpenCalls) continue;
    const active = currentUser >= 0 && at >= currentUser;
    yield* fold.add(foldEvent(item), active, at === currentUser);
  }
  yield* fold.finish();
}

/** §1.6: one item as output, in either format (each chunk complete, ending in `\n`). */
export function formatContextItem(c: ContextItem, format: ContextFormat): string {
  if (format === "ndjson") return `{"seq":${JSON.stringify(c.seq)},"id":${JSON.stringify(c.id)},"type":${JSON.stringify(c.type)},"item":${jason(c.item)}}\n`;
  const item = c.item;
  const label = hasKey(item, "role") ? str(item.role) : str(item.type);
  let body: string;
  if (Array.isArray(item.content)) body = item.content.map((part) => (isTermObject(part) && typeof part.text === "string" ? part.text : jason(part))).join("\n");
  else if (typeof item.output === "string") body = item.output;
  else body = jason(item);
  return `[${c.seq}] ${label} ${c.type}\n${body}\n\n`;
}

/** The History of `pixir context <id>`; a missing Log is `not_found`. */
export function openContextHistory(ws: string, id: string): Promise<History> {
  return openHistory(ws, id, { notFound: () => notFoundError(id, ws, logPath(ws, id).rel, "pixir context") });
}
