// An independent oracle for `pixir search` (archive.md §2): it reads the SOURCE files (Claude `.jsonl`
// transcripts, Codex rollouts, pi sessions, Gemini CLI chats) with its own plain code, never the importers' mapping, and
// says which source sessions hold a word in the text a person or a model wrote, and which tool calls name a
// file. Tests compare it with `pixir search --json` after `pixir import` of the same files.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

export type OracleAgent = "claude" | "codex" | "pi" | "gemini";

/** One piece of text in a source file: a text block, a reasoning block, a tool call or a tool output. */
export interface SourceDoc {
  agent: OracleAgent;
  /** The source session the record belongs to (Claude `sessionId`, Codex `session_meta.id`, pi header `id`). */
  family: string;
  kind: "user" | "assistant" | "reasoning" | "tool_call" | "tool_result";
  text: string;
}

/** A tool call of a source file that names a file as its file argument. */
export interface SourceFileCall {
  agent: OracleAgent;
  family: string;
  /** The tool call's id in the source (Claude `tool_use.id`, Codex `call_id`, pi `toolCall.id`). */
  callId: string;
  path: string;
}

export interface SourceScan {
  docs: SourceDoc[];
  fileCalls: SourceFileCall[];
  /** The agent of each family. */
  agents: Map<string, OracleAgent>;
}

type Json = Record<string, any>;

function jsonLines(file: string): Json[] {
  const out: Json[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.trim() === "") continue;
    try {
      const v = JSON.parse(line);
      if (v !== null && typeof v === "object" && !Array.isArray(v)) out.push(v);
    } catch {
      // a torn or malformed line holds nothing to find
    }
  }
  return out;
}

/** Every `.jsonl` below `dir`. */
export function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = path.join(dir, name);
    if (statSync(abs).isDirectory()) out.push(...jsonlFiles(abs));
    else if (name.endsWith(".jsonl")) out.push(abs);
  }
  return out;
}

/** Every string and number inside a value, keys left out. */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string" || typeof v === "number") out.push(String(v));
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === "object") for (const x of Object.values(v)) strings(x, out);
  return out;
}

const blockTexts = (content: unknown): string[] =>
  typeof content === "string" ? [content] : Array.isArray(content) ? content.flatMap((b) => (typeof b === "string" ? [b] : typeof b?.text === "string" ? [b.text] : [])) : [];

function parsedOrNull(text: unknown): unknown {
  try {
    return typeof text === "string" ? JSON.parse(text) : null;
  } catch {
    return null; // not JSON (a redacted or torn argument string): nothing the model wrote survives as arguments
  }
}

/** A tool output's text: a string, or the `text` (or `content`) of its parts. */
function outputText(v: unknown): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(outputText).join("\n");
  if (v !== null && typeof v === "object") {
    const o = v as Json;
    return outputText(o.text ?? o.content ?? o.output ?? "");
  }
  return "";
}

const PATCH_FILE = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm;

/** The files an apply_patch body names in its headers. */
const patchFiles = (patch: string): string[] => [...patch.matchAll(PATCH_FILE)].map((m) => m[1]!.trim());

function scanClaude(file: string, scan: SourceScan): void {
  for (const r of jsonLines(file)) {
    if ((r.type !== "user" && r.type !== "assistant") || typeof r.sessionId !== "string" || r.message == null) continue;
    const family = r.sessionId as string;
    scan.agents.set(family, "claude");
    const push = (kind: SourceDoc["kind"], text: string) => scan.docs.push({ agent: "claude", family, kind, text });
    const content = r.message.content;
    if (typeof content === "string") push(r.type, content);
    if (!Array.isArray(content)) continue;
    for (const b of content) {
      if (b?.type === "text" && typeof b.text === "string") push(r.type, b.text);
      else if (b?.type === "thinking" && typeof b.thinking === "string") push("reasoning", b.thinking);
      else if (b?.type === "tool_use") {
        push("tool_call", [b.name, ...strings(b.input)].join("\n"));
        // archive.md §5: Claude's file argument is `file_path` or `notebook_path`, and a Glob/Grep/LS `path`.
        const keys = ["Glob", "Grep", "LS"].includes(b.name) ? ["path"] : ["file_path", "notebook_path"];
        for (const key of keys) if (typeof b.input?.[key] === "string") scan.fileCalls.push({ agent: "claude", family, callId: b.id, path: b.input[key] });
      } else if (b?.type === "tool_result") push("tool_result", blockTexts(b.content).join("\n"));
    }
  }
}

function scanCodex(file: string, scan: SourceScan): void {
  let family: string | null = null;
  for (const r of jsonLines(file)) {
    const p = r.payload ?? {};
    if (r.type === "session_meta" && family === null && typeof p.id === "string") {
      family = p.id;
      scan.agents.set(p.id, "codex");
    }
    if (family === null || r.type !== "response_item") continue;
    const push = (kind: SourceDoc["kind"], text: string) => scan.docs.push({ agent: "codex", family: family!, kind, text });
    if (p.type === "message" && (p.role === "user" || p.role === "assistant")) push(p.role, blockTexts(p.content).join("\n"));
    else if (p.type === "reasoning") push("reasoning", blockTexts(p.summary).join("\n"));
    else if (p.type === "function_call" || p.type === "custom_tool_call") {
      // A function's arguments are JSON text: its values are what the model wrote (keys are the tool's).
      const body = typeof p.input === "string" ? p.input : strings(parsedOrNull(p.arguments)).join("\n");
      push("tool_call", `${p.name}\n${body}`);
      if (p.name === "apply_patch") for (const f of patchFiles(body)) scan.fileCalls.push({ agent: "codex", family, callId: p.call_id, path: f });
    } else if (p.type === "function_call_output" || p.type === "custom_tool_call_output") push("tool_result", outputText(p.output));
  }
}

function scanPi(file: string, scan: SourceScan): void {
  let family: string | null = null;
  for (const r of jsonLines(file)) {
    if (r.type === "session" && family === null && typeof r.id === "string") {
      family = r.id;
      scan.agents.set(r.id, "pi");
    }
    if (family === null || r.type !== "message" || r.message == null) continue;
    const m = r.message;
    const push = (kind: SourceDoc["kind"], text: string) => scan.docs.push({ agent: "pi", family: family!, kind, text });
    const role: SourceDoc["kind"] | null = m.role === "user" ? "user" : m.role === "assistant" ? "assistant" : m.role === "toolResult" ? "tool_result" : null;
    if (role === null) continue;
    if (typeof m.content === "string") push(role, m.content);
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b?.type === "text" && typeof b.text === "string") push(role, b.text);
      else if (b?.type === "thinking" && typeof b.thinking === "string") push("reasoning", b.thinking);
      else if (b?.type === "toolCall") {
        push("tool_call", [b.name, ...strings(b.arguments)].join("\n"));
        if (["read", "edit", "write"].includes(b.name) && typeof b.arguments?.path === "string") scan.fileCalls.push({ agent: "pi", family, callId: b.id, path: b.arguments.path });
      }
    }
  }
}

/**
 * A Gemini CLI chat (`.jsonl` records, or a legacy `.json` document): the last version of each message by
 * id (a message is rewritten as it streams), `$set.messages` too. Its text, its thoughts (subject and
 * description), its tool calls (name and argument values) and their results' output.
 */
function scanGemini(file: string, scan: SourceScan): void {
  const records: Json[] = file.endsWith(".json") ? [JSON.parse(readFileSync(file, "utf8"))] : jsonLines(file);
  const family = records.find((r) => typeof r.sessionId === "string")?.sessionId as string | undefined;
  if (family === undefined) return;
  scan.agents.set(family, "gemini");
  const messages = new Map<string, Json>();
  const take = (m: Json) => typeof m.id === "string" && (m.type === "user" || m.type === "gemini") && messages.set(m.id, m);
  for (const r of records) {
    take(r);
    for (const m of Array.isArray(r.messages) ? r.messages : Array.isArray(r.$set?.messages) ? r.$set.messages : []) take(m);
  }
  const push = (kind: SourceDoc["kind"], text: string) => scan.docs.push({ agent: "gemini", family, kind, text });
  for (const m of messages.values()) {
    push(m.type === "user" ? "user" : "assistant", blockTexts(m.content).join("\n"));
    for (const t of Array.isArray(m.thoughts) ? m.thoughts : []) push("reasoning", [t?.subject, t?.description].filter((x) => typeof x === "string").join("\n"));
    for (const c of Array.isArray(m.toolCalls) ? m.toolCalls : []) {
      push("tool_call", [c?.name, ...strings(c?.args)].join("\n"));
      for (const r of Array.isArray(c?.result) ? c.result : []) push("tool_result", outputText(r?.functionResponse?.response));
    }
  }
}

/** Scan source files of each agent with the oracle's own readers. */
export function scanSources(files: { claude?: string[]; codex?: string[]; pi?: string[]; gemini?: string[] }): SourceScan {
  const scan: SourceScan = { docs: [], fileCalls: [], agents: new Map() };
  for (const f of files.claude ?? []) scanClaude(f, scan);
  for (const f of files.codex ?? []) scanCodex(f, scan);
  for (const f of files.pi ?? []) scanPi(f, scan);
  for (const f of files.gemini ?? []) scanGemini(f, scan);
  scan.docs = scan.docs.filter((d) => d.text.trim() !== "");
  return scan;
}

/** Words as a reader splits them: runs of letters and digits, with `_` inside an identifier kept. */
const WORD = /[\p{L}\p{N}]+(?:_[\p{L}\p{N}]+)*/gu;

const fold = (s: string): string => s.normalize("NFC").toLowerCase();

/** A test of folded text for `term` where a word starts: the term's letters and digits in order, any punctuation between. */
function termTest(term: string): (folded: string) => boolean {
  const pieces = fold(term).match(/[\p{L}\p{N}]+/gu) ?? [];
  if (pieces.length === 0) return (folded) => folded.includes(fold(term));
  const esc = pieces.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const re = new RegExp(`(?<![\\p{L}\\p{N}])${esc.join("[^\\p{L}\\p{N}]+")}`, "u");
  return (folded) => re.test(folded);
}

/** Whether `text` holds `term` where a word starts. */
export const holdsTerm = (text: string, term: string): boolean => termTest(term)(fold(text));

const foldedDocs = new WeakMap<SourceDoc, string>();
const foldedOf = (d: SourceDoc): string => {
  let f = foldedDocs.get(d);
  if (f === undefined) foldedDocs.set(d, (f = fold(d.text)));
  return f;
};

/** The families whose documents hold `term` (kinds: which documents count). */
export function familiesHolding(scan: SourceScan, term: string, kinds?: ReadonlyArray<SourceDoc["kind"]>): Set<string> {
  const test = termTest(term);
  const out = new Set<string>();
  for (const d of scan.docs) if ((kinds === undefined || kinds.includes(d.kind)) && !out.has(d.family) && test(foldedOf(d))) out.add(d.family);
  return out;
}

/**
 * Rare words of each family: whole words of its user or assistant text (`accept`: by default letters only,
 * at least 8) that occur in at most two families, up to `perFamily` of each family.
 */
export function rareWords(scan: SourceScan, perFamily: number, accept: (w: string) => boolean = (w) => /^[a-z]{8,}$/i.test(w)): Array<{ family: string; word: string }> {
  const seenIn = new Map<string, Set<string>>();
  for (const d of scan.docs) {
    for (const w of d.text.match(WORD) ?? []) {
      const k = fold(w);
      const set = seenIn.get(k) ?? new Set<string>();
      set.add(d.family);
      seenIn.set(k, set);
    }
  }
  const out: Array<{ family: string; word: string }> = [];
  const taken = new Map<string, number>();
  for (const d of scan.docs) {
    if (d.kind !== "user" && d.kind !== "assistant") continue;
    for (const w of d.text.match(WORD) ?? []) {
      const k = fold(w);
      if ((taken.get(d.family) ?? 0) >= perFamily || !accept(w) || seenIn.get(k)!.size > 2 || out.some((o) => fold(o.word) === k)) continue;
      out.push({ family: d.family, word: w });
      taken.set(d.family, (taken.get(d.family) ?? 0) + 1);
    }
  }
  return out;
}
