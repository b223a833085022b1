// codex-interop.md §7: helpers for the Codex tests, and the oracle of §7.2 computed from a rollout alone
// (Codex's replay of §1.8 and the signatures of §7.2). Nothing here comes from the importer.
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { ROOT, tempDir } from "./cli.js";
import { Families, importCodexRollouts, planGrown, planRollout, replanGrown, type PlannedRollout } from "../../lib/envelope/src/interop/codex/import.js";
import { planLean } from "../../lib/envelope/src/interop/codex/lean-plan.js";
import { readRollout, type Rollout } from "../../lib/envelope/src/interop/codex/format.js";
import { eventLine } from "../../lib/envelope/src/interop/codex/line-events.js";
import type { Family } from "../../lib/envelope/src/interop/codex/family.js";
import { PixirError } from "../../lib/envelope/src/event/errors.js";
import type { PlannedLog } from "../../lib/envelope/src/interop/codex/family.js";
import type { PixirEvent } from "../../lib/envelope/src/event/envelope.js";

/** The licensed real rollouts, in the repository (test/fixtures/real-sessions/README.md). */
export const CODEX_FIXTURES_DIR = path.resolve(ROOT, "test/fixtures/real-sessions/codex");

/**
 * The `localpush` rollouts (the only real Codex compaction) have no licence file, so they are not in the
 * repository: read from `../shared` beside the checkout when it is there; tests that need them skip otherwise.
 */
export const LOCALPUSH_DIR = path.resolve(ROOT, "../shared/fixtures/real-sessions/codex/localpush");
export const HAS_LOCALPUSH = existsSync(LOCALPUSH_DIR);
export const LOCALPUSH_MISSING = `needs the unlicensed localpush rollouts, not in the repository: ${LOCALPUSH_DIR} is absent`;

/** The file of a fixture named relative to the fixtures folder (`localpush/…` from `../shared`). */
export const codexFixturePath = (rel: string): string =>
  rel.startsWith("localpush/") ? path.join(LOCALPUSH_DIR, rel.slice("localpush/".length)) : path.join(CODEX_FIXTURES_DIR, rel);

const jsonlUnder = (dir: string, rel: string, out: string[]): void => {
  for (const name of readdirSync(dir).sort()) {
    const abs = path.join(dir, name);
    if (statSync(abs).isDirectory()) jsonlUnder(abs, path.join(rel, name), out);
    else if (name.endsWith(".jsonl")) out.push(path.join(rel, name));
  }
};

/** Every .jsonl fixture, relative to CODEX_FIXTURES_DIR (`localpush/…` too when present): see codexFixturePath. */
export function codexFixtures(): string[] {
  const out: string[] = [];
  jsonlUnder(CODEX_FIXTURES_DIR, "", out);
  if (HAS_LOCALPUSH) jsonlUnder(LOCALPUSH_DIR, "localpush", out);
  return out.sort();
}

/** The complete, non-blank lines of a rollout. */
export function completeLines(text: string): string[] {
  const parts = text.split("\n");
  parts.pop(); // the part after the last \n is not a complete line
  return parts.filter((l) => !/^[ \t\r]*$/.test(l));
}

const isObj = (v: unknown): v is Record<string, any> => typeof v === "object" && v !== null && !Array.isArray(v);

function T(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((c) => isObj(c) && ["input_text", "output_text", "text"].includes(c.type) && typeof c.text === "string")
    .map((c) => c.text)
    .join("\n");
}

function OT(v: unknown): string {
  if (typeof v === "string") return v;
  if (v === null || v === undefined) return "";
  if (Array.isArray(v)) return v.filter((c) => isObj(c) && typeof c.text === "string").map((c) => c.text).join("\n");
  if (isObj(v)) {
    if (typeof v.text === "string") return v.text;
    if ("content" in v) return OT(v.content);
  }
  return JSON.stringify(v);
}

const MARKERS: Array<[string, string]> = [
  ["# AGENTS.md instructions for ", "</INSTRUCTIONS>"],
  ["<environment_context>", "</environment_context>"],
  ["<user_instructions>", "</user_instructions>"],
  ["<skill>", "</skill>"],
  ["<user_shell_command>", "</user_shell_command>"],
  ["<turn_aborted>", "</turn_aborted>"],
  ["<subagent_notification>", "</subagent_notification>"],
  ["<additional_context>", "</additional_context>"],
];

function contextual(content: unknown): boolean {
  if (!Array.isArray(content)) return false;
  return content.some((c) => {
    if (!isObj(c) || c.type !== "input_text" || typeof c.text !== "string") return false;
    const s = c.text.replace(/^\s+/, "").toLowerCase();
    const e = s.replace(/\s+$/, "");
    return MARKERS.some(([a, b]) => s.startsWith(a.toLowerCase()) && e.endsWith(b.toLowerCase()));
  });
}

const boundary = (it: any): boolean => isObj(it) && (it.type === "agent_message" || (it.type === "message" && it.role === "user" && !contextual(it.content)));

/** §1.8: Codex's replay of a rollout's complete lines. */
export function replay(lines: string[]): any[] {
  let H: any[] = [];
  for (const line of lines) {
    let r: any;
    try {
      r = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isObj(r)) continue;
    if (r.type === "response_item") H.push(r.payload);
    else if (r.type === "compacted") H = Array.isArray(r.payload?.replacement_history) ? [...r.payload.replacement_history] : [];
    else if (r.type === "event_msg" && r.payload?.type === "thread_rolled_back") {
      const k = r.payload.num_turns;
      if (!Number.isInteger(k) || k < 1) continue;
      const P = H.flatMap((it, i) => (boundary(it) ? [i] : []));
      if (P.length === 0) continue;
      const cut = k >= P.length ? P[0]! : P[P.length - k]!;
      H = H.slice(0, cut);
    }
  }
  return H;
}

/** The call id of a call item (§7.2's signature table): `call_id`, or a local shell call's `id`. */
const callIdOfItem = (it: any): unknown => (it.type === "local_shell_call" ? (it.call_id ?? it.id) : it.call_id);
const CALL_ITEMS = new Set(["function_call", "custom_tool_call", "local_shell_call", "tool_search_call"]);

/**
 * §7.2 steps 2–3: the expected signatures. As the spec's index adds (README "Rules that hold across the two
 * agent importers"), a call item whose call id is not a string gives nothing, nor does an output whose
 * `call_id` names no earlier call item of H.
 */
export function expectedSignatures(lines: string[]): unknown[] {
  const out: unknown[] = [];
  const calls = new Set<string>();
  for (const it of replay(lines)) {
    if (!isObj(it)) continue;
    if (CALL_ITEMS.has(it.type)) {
      const id = callIdOfItem(it);
      if (typeof id !== "string") continue;
      calls.add(id);
      if (it.type === "function_call") {
        let a: unknown = {};
        try {
          a = JSON.parse(it.arguments);
        } catch {
          a = {};
        }
        out.push(["call", id, it.name, isObj(a) ? a : {}]);
      } else if (it.type === "custom_tool_call") out.push(["call", id, it.name, typeof it.input === "string" ? { input: it.input } : {}]);
      else if (it.type === "local_shell_call") out.push(["call", id, "local_shell", isObj(it.action) ? it.action : {}]);
      else out.push(["call", id, "tool_search", isObj(it.arguments) ? it.arguments : {}]);
    } else if (it.type === "function_call_output" || it.type === "custom_tool_call_output" || it.type === "tool_search_output") {
      if (typeof it.call_id !== "string" || !calls.has(it.call_id)) continue;
      out.push(["output", it.call_id, it.type === "tool_search_output" ? JSON.stringify(it.tools ?? null) : OT(it.output)]);
    } else if ((it.type === "message" && it.role === "user") || it.type === "agent_message") out.push(["user", T(it.content)]);
    else if (it.type === "message" && it.role === "assistant") out.push(["assistant", T(it.content)]);
  }
  return out;
}

/**
 * §7.2 "observed": `pixir context --format ndjson` lines (provider input items, context-and-compaction.md
 * §1.6) as signatures. A synthetic orphan output (its source is the tool_call) is not an item of Codex's.
 */
export function observedSignatures(contextLines: any[]): unknown[] {
  const out: unknown[] = [];
  for (const l of contextLines) {
    if (l.type === "history_compaction") continue;
    const it = l.item;
    if (l.type === "tool_call" && it.type === "function_call_output") continue;
    if (it.type === "function_call") out.push(["call", it.call_id, it.name, JSON.parse(it.arguments)]);
    else if (it.type === "function_call_output") out.push(["output", it.call_id, it.output]);
    else if (it.role === "user") out.push(["user", it.content[0].text]);
    else if (it.role === "assistant") out.push(["assistant", it.content[0].text]);
    else throw new Error(`unexpected context item ${JSON.stringify(it)}`);
  }
  return out;
}

// §7.4 records.
let clock = Date.parse("2026-03-01T10:00:00.000Z");
export const nextTs = (): string => new Date((clock += 1000)).toISOString();
export const rec = (type: string, payload: unknown, ts = nextTs()): string => JSON.stringify({ timestamp: ts, type, payload });
export const meta = (id: string, extra: Record<string, unknown> = {}, ts?: string): string =>
  rec("session_meta", { id, timestamp: "2026-03-01T10:00:00.000Z", cwd: "/w", originator: "codex-tui", cli_version: "0.125.0", source: "cli", model_provider: "openai", ...extra }, ts);
export const U = (text: string, ts?: string): string => rec("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] }, ts);
export const A = (text: string, ts?: string): string => rec("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] }, ts);
export const FC = (c: string): string => rec("response_item", { type: "function_call", name: "exec_command", arguments: JSON.stringify({ cmd: "ls" }), call_id: c });
export const FO = (c: string): string => rec("response_item", { type: "function_call_output", call_id: c, output: "ok" });
export const TC = (n: number): string =>
  rec("event_msg", { type: "token_count", info: { total_token_usage: { input_tokens: n - 2, cached_input_tokens: 0, output_tokens: 2, reasoning_output_tokens: 0, total_tokens: n }, last_token_usage: null, model_context_window: 1000 }, rate_limits: null });
export const rolledBack = (k: number): string => rec("event_msg", { type: "thread_rolled_back", num_turns: k });
export const rollout = (lines: string[]): string => lines.map((l) => `${l}\n`).join("");

// Cases built from the real rollouts (codex-interop.md §1.7): what Codex writes for a fork and a rollback.

/** The thread id of a rollout's line 1. */
export const threadOf = (lines: string[]): string => JSON.parse(lines[0]!).payload.id as string;

/**
 * A fork of `source` as Codex writes one (§1.7): a new session_meta with `forked_from_id`, then the source's
 * lines 1 … k, each with the fork time as its timestamp, then `own`.
 */
export function codexFork(source: string[], k: number, id: string, t0: string, own: string[] = []): string[] {
  const first = JSON.parse(source[0]!);
  const { id: _sourceId, forked_from_id: _f, ...rest } = first.payload;
  const line1 = JSON.stringify({ timestamp: t0, type: "session_meta", payload: { id, forked_from_id: threadOf(source), ...rest, timestamp: t0 } });
  return [line1, ...source.slice(0, k).map((l) => l.replace(/^\{"timestamp":"[^"]*"/, `{"timestamp":${JSON.stringify(t0)}`)), ...own];
}

/** The line numbers (from 1) of a rollout's user messages that are turns (§1.8 boundaries). */
export function userTurnLines(lines: string[]): number[] {
  const out: number[] = [];
  lines.forEach((l, i) => {
    const r = JSON.parse(l);
    if (r.type === "response_item" && boundary(r.payload)) out.push(i + 1);
  });
  return out;
}

/** `lines` written as a rollout file `name` in a new temp directory. */
export function writeRolloutFile(lines: string[], name = "rollout.jsonl"): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, rollout(lines));
  return file;
}

/** `rollbacks` rollbacks of one turn, each followed by a turn, and by a second one when `nested`. */
export function rolledBackLines(head: string[], rollbacks: number, nested: boolean): string[] {
  const lines = [...head];
  for (let k = 0; k < rollbacks; k++) {
    lines.push(rolledBack(1), U(`retry ${k}`), A(`answer ${k}`));
    if (nested) lines.push(U(`more ${k}`), A(`more answer ${k}`));
  }
  return lines;
}

/** The library's import of rollout files into `ws` (no Codex home of its own). */
export const importRolloutFiles = (ws: string, files: string[], lenient = false) =>
  importCodexRollouts(ws, { paths: files.map((f) => ({ path: f, display: f })), program: "pixir import codex", env: { CODEX_HOME: path.join(ws, "none") }, lenient });

const plainEvent = (e: PixirEvent) => ({ id: e.id, session_id: e.session_id, seq: e.seq, ts: e.ts, type: e.type, data: e.data });

/** A planned Log's place in its family (lineSeq in line order). */
const logPlace = (l: PlannedLog) => ({
  sessionId: l.sessionId,
  role: l.role,
  parentId: l.parentId,
  forkedToSeq: l.forkedToSeq,
  replayEventCount: l.replayEventCount,
  diskCount: l.diskCount,
  forkRoot: l.forkRoot,
  lineSeq: [...l.lineSeq].sort((a, b) => a[0] - b[0]),
});

/** Every field of a planned Log, as plain values. */
export const plannedLogView = (l: PlannedLog) => ({ ...logPlace(l), stored: Array.from(l.stored, plainEvent), resolved: Array.from(l.resolved, plainEvent) });

/** A planned Log as the writing pass sees it: its place in the family, and the lines it holds. */
export type PlannedLines = ReturnType<typeof logPlace> & { lines: string[] };

const plannedLines = (family: Family, lineOf: (e: PixirEvent) => string | Buffer): PlannedLines[] => family.logs.map((l) => ({ ...logPlace(l), lines: Array.from(l.stored, (e) => lineOf(e).toString()) }));

/**
 * Rollout `file` planned over the Workspace both ways, by the lean planner (null where it declines) and by
 * the plain rule (`planRollout`), as the Logs each would hold: for the property test that holds them together.
 */
export async function planLeanAndPlain(ws: string, file: string, lenient = false): Promise<{ lean: PlannedLines[] | null; plain: PlannedLines[] | PixirError }> {
  const read = readRollout({ path: file, display: file }, true, lenient);
  if (read.kind !== "rollout") throw new PixirError("not_found", undefined, { path: file });
  const lean = planLean(ws, { path: file, display: file }, true, lenient, read.rollout.threadId);
  let leanLines: PlannedLines[] | null = null;
  if (lean !== null && lean !== "skipped") {
    try {
      leanLines = plannedLines(lean.family, (e) => lean.keeper.line(e));
    } finally {
      lean.keeper.close();
    }
  }
  try {
    const planned = await planRollout(ws, read.rollout, new Families(ws), false);
    return { lean: leanLines, plain: plannedLines(planned.family, eventLine) };
  } catch (err) {
    if (err instanceof PixirError) return { lean: leanLines, plain: err };
    throw err;
  }
}

/**
 * A grown rollout planned both ways (`replanGrown`, then `planGrown` on the family read from disk), for the
 * property test that holds the fast path to the plain rule; `fast` is null where the fast path declines.
 */
export async function planGrownBothWays(ws: string, r: Rollout): Promise<{ fast: PlannedRollout | null; plain: PlannedRollout | PixirError }> {
  const fast = replanGrown(ws, r);
  const families = new Families(ws);
  try {
    const family = await families.load(r.threadId);
    if (family === null || family === "foreign") throw new PixirError("not_found", undefined, { thread_id: r.threadId });
    return { fast, plain: await planGrown(ws, r, family, families) };
  } catch (err) {
    if (err instanceof PixirError) return { fast, plain: err };
    throw err;
  }
}
