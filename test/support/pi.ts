// Support for the pi interop tests: the fixtures copied from the shared folder, their oracles, and
// the §2.3 pi path and §5 checks computed from what the built binaries print.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { buildPiContext, derivePiOracle, describePiContext, type PiOracle } from "./pi-oracle.js";
import { parsePiSession, PiTree } from "../../lib/envelope/src/interop/pi/format.js";
import { listTree, ROOT } from "./cli.js";
import { runInThread } from "./thread.js";

export const PI_DIR = path.join(ROOT, "test", "fixtures", "pi");
export const piFixture = (rel: string): string => path.join(PI_DIR, rel);

const GENERATED = "generated/sessions/--home-user-demo--";
export const MAIN_TREE = `${GENERATED}/2026-01-10T09-00-00-250Z_19460c51-3e55-4ee0-ba8f-b97bb5a88301.jsonl`;
export const SLASH_FORK = `${GENERATED}/2026-01-10T09-01-53-700Z_c6abae30-8d3c-455f-aff9-18e891349110.jsonl`;
export const COMPACTION = `${GENERATED}/2026-01-10T09-02-05-200Z_2bd1b450-0358-4b98-967b-c386063798dd.jsonl`;
export const FOREST = `${GENERATED}/2026-01-10T09-04-26-100Z_5257ed84-710a-47ee-8599-8cfab3b72d5c.jsonl`;
export const CROSS_PROJECT = "generated/sessions/--home-user-other-project--/2026-01-10T09-05-10-600Z_a2483bba-9547-43b6-ad99-00185fab826f.jsonl";
export const V1_HAND = "hand/v1-linear-compaction.jsonl";
export const V2_HAND = "hand/v2-hookmessage.jsonl";
export const BEFORE_COMPACTION = "before-compaction.jsonl";
export const LARGE_SESSION = "large-session.jsonl";
export const MAIN_ID = "19460c51-3e55-4ee0-ba8f-b97bb5a88301";

/** Every fixture that has an oracle in expected/. */
export const ORACLE_FIXTURES = [MAIN_TREE, SLASH_FORK, COMPACTION, FOREST, CROSS_PROJECT, V1_HAND, V2_HAND, BEFORE_COMPACTION, LARGE_SESSION];

/** expected/<basename>.expected.json without its provenance keys. */
export function expectedOracle(rel: string): any {
  const { fixture: _f, generatedBy: _g, ...rest } = JSON.parse(readFileSync(path.join(PI_DIR, "expected", `${path.basename(rel)}.expected.json`), "utf8"));
  return rest;
}

export const jsonl = (text: string): any[] =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l));

/** The oracle of a pi file's text, by pi's rules (pi-interop.md §1.8, §5). */
export function oracleOf(text: string | Buffer, file = "-"): PiOracle {
  return JSON.parse(JSON.stringify(derivePiOracle(parsePiSession(Buffer.from(text), { file }), file)));
}

/** The path pi resumes in a file (its last line) and pi's context for it, as the oracle records them. */
export function resumedPath(text: string): { pathIds: string[]; context: any; leafId: string } {
  const parsed = parsePiSession(Buffer.from(text), { file: "-" });
  const tree = new PiTree(parsed.entries, "-");
  const pathEntries = tree.path(tree.defaultLeaf!);
  return {
    leafId: tree.defaultLeaf!.id,
    pathIds: pathEntries.map((e) => e.id),
    context: JSON.parse(JSON.stringify(describePiContext(buildPiContext(pathEntries.map((e) => e.entry))))),
  };
}

export function rawEvents(ws: string, id: string): any[] {
  const r = runInThread("pixir-log", ["cat", id, "--raw"], { cwd: ws });
  if (r.code !== 0) throw new Error(`cat --raw ${id} failed: ${r.stderr}`);
  return r.lines;
}

interface PathItem {
  entryId: string | null;
  ownSeq: number | null;
}

/** pi-interop.md §2.3: the entries pi would walk to a Log's leaf, from the stored lines alone. */
export function piPathItems(ws: string, id: string): PathItem[] {
  const events = rawEvents(ws, id);
  const head = events[0];
  if (head?.type !== "session_fork") return events.map((e) => ({ entryId: e.data?.pi?.entry_id ?? null, ownSeq: e.seq }));
  const parent = piPathItems(ws, head.data.parent_session_id);
  const cut = parent.findIndex((p) => p.ownSeq === head.data.forked_to_seq);
  const inherited = parent.slice(0, cut + 1).map((p) => ({ entryId: p.entryId, ownSeq: null }));
  const own = events.slice(1).map((e) => ({ entryId: e.data?.pi?.entry_id ?? null, ownSeq: e.seq }));
  return [...inherited, ...own];
}

export function piPathIds(ws: string, id: string): string[] {
  const out: string[] = [];
  for (const p of piPathItems(ws, id)) if (p.entryId !== null && out.at(-1) !== p.entryId) out.push(p.entryId);
  return out;
}

/** The entry type an imported Event came from, as the oracle's typeCounts name it (`message/<role>`). */
export function entryKindOf(e: any): string {
  const pi = e.data.pi;
  switch (e.type) {
    case "workflow_event":
      return e.data.entry_type === "message" ? `message/${pi.fields.message.role}` : e.data.entry_type;
    case "history_compaction":
      return "compaction";
    case "branch_summary":
      return "branch_summary";
    case "user_message":
      return pi.entry_type === "custom_message" ? "custom_message" : pi.role === "custom" ? "message/custom" : "message/user";
    case "tool_result":
      return pi.part === "bash_result" ? "message/bashExecution" : "message/toolResult";
    case "tool_call":
      return pi.part === "bash_call" ? "message/bashExecution" : "message/assistant";
    default:
      return "message/assistant";
  }
}

/** Every imported Event of the Logs of a Workspace (own lines only), keyed by Log. */
export function importedEvents(ws: string, ids: string[]): any[] {
  return ids.flatMap((id) => rawEvents(ws, id).filter((e) => typeof e.data?.pi?.entry_id === "string"));
}

/** The bytes of every file below .pixir/sessions, to prove that a run changed nothing. */
export function sessionsSnapshot(ws: string): Record<string, string> {
  const dir = path.join(ws, ".pixir", "sessions");
  const out: Record<string, string> = {};
  for (const rel of listTree(dir)) {
    const abs = path.join(dir, rel);
    try {
      out[rel] = readFileSync(abs).toString("base64");
    } catch {
      out[rel] = "<dir>";
    }
  }
  return out;
}

export const sessionLogs = (ws: string): string[] =>
  readdirSync(path.join(ws, ".pixir", "sessions"))
    .filter((n) => n.endsWith(".ndjson"))
    .map((n) => n.slice(0, -".ndjson".length))
    .sort();
