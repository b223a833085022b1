// A Workspace that holds every kind of `pixir export codex` (codex-interop.md §5): rolled-back families, a
// Codex fork of one and a fork of that fork, a rollout with a line a --lenient import skipped, Logs with a
// native tail (a pixir fork of an imported Log, an imported Log appended to) and a native Log.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { run, tempDir, type Ev } from "./cli.js";
import { A, codexFork, FC, FO, meta, rolledBackLines, rollout, TC, U } from "./codex.js";

export const T1 = "019e0000-0000-7000-8000-000000000001";
export const T2 = "019e0000-0000-7000-8000-000000000002";
export const T3 = "019e0000-0000-7000-8000-000000000003";
export const T4 = "019e0000-0000-7000-8000-000000000004";

/** Native Events of every kind §5.4 converts or omits, a checkpoint among them. */
export const NATIVE_TAIL: Ev[] = [
  { type: "user_message", data: { text: "native question" } },
  { type: "reasoning", data: { text: "thinking" } },
  { type: "assistant_message", data: { text: "native answer" } },
  { type: "tool_call", data: { call_id: "n1", name: "read", args: { path: "a.txt" } } },
  { type: "tool_result", data: { call_id: "n1", ok: true, output: "file text" } },
  { type: "tool_result", data: { call_id: "nobody", ok: true, output: "orphan" } },
  { type: "provider_usage", data: { provider: "openai", model: "m", input: 5, output: 2 } },
  { type: "history_compaction", data: { summary: "what came before", range: { from_seq: 0, to_seq: 2 }, source_event_count: 3 } },
  { type: "user_message", data: { text: "after the checkpoint" } },
  { type: "assistant_message", data: { text: "last answer" } },
];

export interface ExportWorkspace {
  ws: string;
  /** Thread id → the rollout file's text, as imported. */
  rollouts: Map<string, string>;
  /** The lenient rollout's text without its malformed line 3. */
  lenientText: string;
}

function ok(argv: string[], ws: string, input?: string): string {
  const r = run("pixir", argv, { cwd: ws, input });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

export const ndjson = (events: Ev[]): string => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

/** The Workspace, imported with the built pixir and grown with native Events. */
export function exportWorkspace(): ExportWorkspace {
  const ws = tempDir();
  const dir = tempDir();
  const head = [meta(T1), U("one"), A("a1"), FC("c1"), FO("c1"), TC(10), U("two"), A("a2")];
  const family = rolledBackLines(head, 3, true);
  const fork = codexFork(family, 9, T2, "2026-03-02T10:00:00.000Z", [U("fork own"), A("fork answer")]);
  const forkOfFork = codexFork(fork, fork.length, T3, "2026-03-03T10:00:00.000Z", rolledBackLines([U("x"), A("y")], 2, false));
  const lenient = [meta(T4), U("a"), "{not json", A("b"), U("c")];
  const rollouts = new Map<string, string>();
  const files: string[] = [];
  for (const [t, lines] of [[T1, family], [T2, fork], [T3, forkOfFork]] as const) {
    const file = path.join(dir, `rollout-2026-03-01T10-00-00-${t}.jsonl`);
    writeFileSync(file, rollout(lines));
    rollouts.set(t, rollout(lines));
    files.push(file);
  }
  ok(["import", "codex", ...files], ws);
  const lenientFile = path.join(dir, "lenient.jsonl");
  writeFileSync(lenientFile, rollout(lenient));
  ok(["import", "codex", "--lenient", lenientFile], ws);
  // A native tail: a pixir fork of the rolled-back family's root, and the Codex fork's own Log appended to.
  ok(["fork", T1, "--to-seq", "4", "--strategy", "share_v1", "--child-id", "pf"], ws);
  ok(["append", "pf"], ws, ndjson(NATIVE_TAIL));
  ok(["append", T2], ws, ndjson(NATIVE_TAIL.slice(0, 5)));
  ok(["append", "nat"], ws, ndjson(NATIVE_TAIL));
  return { ws, rollouts, lenientText: rollout(lenient.filter((_, i) => i !== 2)) };
}

/** The session ids of the Workspace's Logs. */
export const logIds = (ws: string): string[] =>
  readdirSync(path.join(ws, ".pixir", "sessions"))
    .filter((n) => n.endsWith(".ndjson"))
    .map((n) => n.slice(0, -".ndjson".length))
    .sort();

/** The thread a Log of an imported family belongs to (its first Event's codex.thread), or null. */
export function threadOfLog(ws: string, id: string): string | null {
  const first = JSON.parse(readFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), "utf8").split("\n")[0]!);
  const thread = first.data?.codex?.thread;
  return typeof thread === "string" ? thread : null;
}
