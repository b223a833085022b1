// The oracle of claude-interop.md §6, written apart from the importer: the items `pixir context` must show
// for a Claude Code session file, computed from the file's bytes alone. It walks the parentUuid chain
// Claude resumes from the last message record (progress bridged, a gap to the nearest earlier message
// record, no logicalParentUuid), adds the parallel-call recovery (§3.3), and maps the kept user and
// assistant records by §2.1. It imports nothing from lib/envelope, so a mistake in the importer's tree
// rules or mapping cannot hide in its own expectations.
//
// `contextView` is the one place that reads `pixir context` output, so a change of its line shape
// (issue 24: one `{"seq","id","type","item"}` per line) is met here only.
import { runInThread } from "./thread.js";

export interface OracleItem {
  type: "user_message" | "assistant_message" | "tool_call" | "tool_result" | "history_compaction";
  uuid: string;
  part: string;
  /** The §6 step 2 fields: text; call_id, name, args; call_id, ok, output; summary. */
  fields: Record<string, unknown>;
}

interface Rec {
  line: number;
  v: Record<string, any>;
}

const isObj = (x: unknown): x is Record<string, any> => typeof x === "object" && x !== null && !Array.isArray(x);

/** Lone surrogates become U+FFFD in mapped fields (§2.3). */
function fixSurrogates(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += s[i]! + s[i + 1]!;
        i++;
        continue;
      }
      out += "\ufffd";
    } else if (c >= 0xdc00 && c <= 0xdfff) out += "\ufffd";
    else out += s[i]!;
  }
  return out;
}

const textBlocks = (blocks: unknown[]): string =>
  fixSurrogates(
    blocks
      .filter((b) => isObj(b) && b.type === "text" && typeof b.text === "string")
      .map((b) => (b as { text: string }).text)
      .join("\n"),
  );

/** The complete, non-blank lines of a file that parse as objects with a string type. */
function parse(bytes: Buffer): Rec[] {
  const text = bytes.toString("utf8");
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  const out: Rec[] = [];
  complete
    .split("\n")
    .slice(0, -1)
    .forEach((l, i) => {
      if (/^[ \t\r]*$/.test(l)) return;
      try {
        const v = JSON.parse(l);
        if (isObj(v) && typeof v.type === "string") out.push({ line: i + 1, v });
      } catch {
        /* a malformed line is no record */
      }
    });
  return out;
}

/** The records Claude's resume loads for a session file, in line order (§6 oracle steps 1–3). */
export function resumedRecords(bytes: Buffer): Rec[] {
  const all = parse(bytes);
  const isChain = (r: Rec) => typeof r.v.uuid === "string" && (typeof r.v.parentUuid === "string" || r.v.parentUuid === null);
  // Duplicates: a uuid seen on an earlier line of the file, in any transcript.
  const seen = new Set<string>();
  const firsts: Rec[] = [];
  for (const r of all) {
    if (!isChain(r)) continue;
    if (seen.has(r.v.uuid)) continue;
    seen.add(r.v.uuid);
    firsts.push(r);
  }
  const main = firsts.filter((r) => r.v.isSidechain !== true);
  const progress = new Map(main.filter((r) => r.v.type === "progress").map((r) => [r.v.uuid as string, r]));
  const messages = main.filter((r) => r.v.type !== "progress");
  const byUuid = new Map(messages.map((r) => [r.v.uuid as string, r]));
  const parentOf = (x: Rec): Rec | null => {
    let u: string | null = x.v.parentUuid;
    const passed = new Set<Rec>();
    while (u !== null && progress.has(u)) {
      const p = progress.get(u)!;
      if (passed.has(p)) return null;
      passed.add(p);
      u = p.v.parentUuid;
    }
    if (u === null) return null;
    const hit = byUuid.get(u);
    if (hit) return hit;
    // A gap: the nearest earlier message record.
    let best: Rec | null = null;
    for (const m of messages) if (m.line < x.line) best = m;
    return best;
  };
  const leaf = messages.at(-1);
  if (leaf === undefined) return [];
  const walk: Rec[] = [];
  const inWalk = new Set<Rec>();
  for (let x: Rec | null = leaf; x !== null && !inWalk.has(x); x = parentOf(x)) {
    walk.push(x);
    inWalk.add(x);
  }
  // Parallel-call recovery: the other blocks of each assistant message on the walk, and their results.
  const msgId = (r: Rec): string | null => (r.v.type === "assistant" && isObj(r.v.message) && typeof r.v.message.id === "string" ? r.v.message.id : null);
  const ids = new Set(walk.map(msgId).filter((m): m is string => m !== null));
  const kept = new Set(walk);
  for (const r of messages) if (ids.has(msgId(r) ?? "")) kept.add(r);
  for (const r of messages) {
    if (r.v.type !== "user" || !isObj(r.v.message) || !Array.isArray(r.v.message.content)) continue;
    if (!r.v.message.content.some((b: unknown) => isObj(b) && b.type === "tool_result")) continue;
    const p = parentOf(r);
    if (p !== null && ids.has(msgId(p) ?? "")) kept.add(r);
  }
  return [...kept].sort((a, b) => a.line - b.line).filter((r) => r.v.type === "user" || r.v.type === "assistant");
}

/** §2.1 for one kept record, only the item Events (§6 oracle step 4). */
function itemsOf(r: Rec): OracleItem[] {
  const uuid = r.v.uuid as string;
  const message = isObj(r.v.message) ? r.v.message : {};
  const content = message.content;
  const out: OracleItem[] = [];
  if (r.v.type === "user") {
    if (r.v.isCompactSummary === true) {
      const summary = typeof content === "string" ? fixSurrogates(content) : Array.isArray(content) ? textBlocks(content) : "";
      return [{ type: "history_compaction", uuid, part: "summary", fields: { summary } }];
    }
    if (typeof content === "string") return [{ type: "user_message", uuid, part: "text", fields: { text: fixSurrogates(content) } }];
    if (!Array.isArray(content) || content.length === 0) return [{ type: "user_message", uuid, part: "msg", fields: { text: "" } }];
    let run: { first: number; blocks: unknown[] } | null = null;
    const flush = () => {
      if (run !== null) out.push({ type: "user_message", uuid, part: `b${run.first}`, fields: { text: textBlocks(run.blocks) } });
      run = null;
    };
    content.forEach((b: unknown, i: number) => {
      if (isObj(b) && b.type === "tool_result") {
        flush();
        const c = b.content;
        const output = typeof c === "string" ? fixSurrogates(c) : Array.isArray(c) ? textBlocks(c) : "";
        out.push({ type: "tool_result", uuid, part: `b${i}`, fields: { call_id: typeof b.tool_use_id === "string" ? b.tool_use_id : "", ok: b.is_error !== true, output } });
      } else if (run === null) run = { first: i, blocks: [b] };
      else run.blocks.push(b);
    });
    flush();
    return out;
  }
  if (!Array.isArray(content) || content.length === 0) {
    return [{ type: "assistant_message", uuid, part: "msg", fields: { text: typeof content === "string" ? fixSurrogates(content) : "" } }];
  }
  content.forEach((b: unknown, i: number) => {
    const t = isObj(b) ? b.type : undefined;
    const part = `b${i}`;
    if (t === "thinking" || t === "redacted_thinking") return; // reasoning: no item (context-and-compaction.md §7 D1)
    if (isObj(b) && (t === "tool_use" || t === "server_tool_use")) {
      out.push({ type: "tool_call", uuid, part, fields: { call_id: typeof b.id === "string" ? b.id : "", name: typeof b.name === "string" ? b.name : "", args: isObj(b.input) ? b.input : {} } });
    } else if (typeof t === "string" && t.endsWith("_tool_result")) {
      out.push({ type: "tool_result", uuid, part, fields: { call_id: isObj(b) && typeof b.tool_use_id === "string" ? b.tool_use_id : "", ok: true, output: "" } });
    } else {
      const text = t === "text" && isObj(b) && typeof b.text === "string" ? fixSurrogates(b.text) : "";
      out.push({ type: "assistant_message", uuid, part, fields: { text } });
    }
  });
  return out;
}

/** The expected context items of a session file (§6 "The oracle"). */
export function oracleItems(bytes: Buffer): OracleItem[] {
  return resumedRecords(bytes).flatMap(itemsOf);
}

/** §6 step 2 compares `part` for conversation items; a checkpoint by uuid and summary only (a carried one has no part). */
const partOf = (e: any): string => (e.type === "history_compaction" ? "summary" : e.data.claude?.part);

/** The same §6 step 2 fields of an Event's data. */
export function comparedFields(type: string, data: Record<string, any>): Record<string, unknown> {
  switch (type) {
    case "user_message":
    case "assistant_message":
      return { text: data.text };
    case "tool_call":
      return { call_id: data.call_id, name: data.name, args: data.args };
    case "tool_result":
      return { call_id: data.call_id, ok: data.ok, output: data.output };
    default:
      return { summary: data.summary };
  }
}

/** §6 step 2: the item of each Event type, once `pixir context` prints items (context-and-compaction.md §1.6). */
const ITEM_SHAPE: Record<string, (item: any) => boolean> = {
  user_message: (i) => i?.role === "user",
  assistant_message: (i) => i?.type === "message" && i?.role === "assistant",
  tool_call: (i) => i?.type === "function_call",
  tool_result: (i) => i?.type === "function_call_output",
};

/**
 * `pixir context <id>` as §6 step 2 compares it: each item line's Event (found by `id` in
 * `pixir-log cat <id>`, the resolved History) as {type, uuid, part, fields}. Reasoning lines, which the
 * fold may still list, and synthetic orphan outputs are dropped.
 */
export function contextView(ws: string, id: string): OracleItem[] {
  // On the tool thread: the built commands without two process starts per view (the tests compare many
  // views; test/cli/processes.test.ts runs `pixir context` as a process).
  const ctx = runInThread("pixir", ["context", id], { cwd: ws });
  if (ctx.code !== 0) throw new Error(`pixir context ${id} failed (exit ${ctx.code}): ${ctx.stderr}`);
  const cat = runInThread("pixir-log", ["cat", id], { cwd: ws });
  if (cat.code !== 0) throw new Error(`pixir-log cat ${id} failed: ${cat.stderr}`);
  const byId = new Map<string, any>(cat.lines.map((e: any) => [e.id, e]));
  return ctx.lines
    .filter((l: any) => l.type !== "reasoning" && !(l.type === "tool_call" && l.item?.type === "function_call_output"))
    .map((l: any) => {
      const e = byId.get(l.id);
      if (e === undefined) throw new Error(`pixir context ${id} names ${l.id}, which is not in its History`);
      const shape = ITEM_SHAPE[e.type as string];
      if (l.item !== undefined && shape !== undefined && !shape(l.item)) throw new Error(`pixir context ${id}: the item of ${l.id} (${e.type}) has the wrong shape`);
      return { type: e.type, uuid: e.data.claude?.uuid, part: partOf(e), fields: comparedFields(e.type, e.data) };
    });
}
