// Long lineages (issue 33 item 5): a Claude session whose last prompt is edited and resent 40 times,
// imported after every step, and a Codex rollout with 120 successive thread_rolled_back events, in one
// import and grown in steps. The importers never write a lineage a reader refuses: every share_v1 chain
// stays within MAX_IMPORT_SHARE_HOPS (a branch past it stores its prefix, replay_v1); check, context and
// export read it all back, the export byte for byte. The inputs are generated here.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_IMPORT_SHARE_HOPS } from "../../lib/envelope/src/fork/fork.js";
import { importClaude } from "../../lib/envelope/src/interop/claude/import.js";
import { importCodexRollouts } from "../../lib/envelope/src/interop/codex/import.js";
import { tempDir } from "../support/cli.js";
// check, context and export on the tool thread (test/support/thread.ts): the reads cost seconds, start-ups add nothing.
import { runInThread as run } from "../support/thread.js";

const SESSION = "6f0c8a52-1d1e-4a3b-9c55-0d3b2a1e4f01";
const THREAD = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9";

/** Each Log's first line, by session id. */
function firstLines(ws: string): Map<string, any> {
  const dir = path.join(ws, ".pixir", "sessions");
  const out = new Map<string, any>();
  for (const name of readdirSync(dir)) if (name.endsWith(".ndjson")) out.set(name.slice(0, -7), JSON.parse(readFileSync(path.join(dir, name), "utf8").split("\n")[0]!));
  return out;
}

/** The longest chain of share_v1 hops in the Workspace, and how many Logs store their prefix. */
function lineage(ws: string): { maxHops: number; replay: number } {
  const firsts = firstLines(ws);
  const hops = (id: string): number => {
    const e = firsts.get(id);
    return e?.type === "session_fork" && e.data.strategy === "share_v1" ? 1 + hops(e.data.parent_session_id) : 0;
  };
  const replay = [...firsts.values()].filter((e) => e.type === "session_fork" && e.data.strategy === "replay_v1").length;
  return { maxHops: Math.max(...[...firsts.keys()].map(hops)), replay };
}

/** The texts of the user and assistant messages of a Log's context, in order. */
function contextTexts(ws: string, id: string): string[] {
  const r = run("pixir", ["context", id, "--format", "ndjson"], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return r.lines.filter((l: any) => l.type === "user_message" || l.type === "assistant_message").map((l: any) => l.item.content.map((c: any) => c.text).join(""));
}

function expectChecked(ws: string): void {
  const check = run("pixir-log", ["check"], { cwd: ws });
  expect(check.code, check.stdout + check.stderr).toBe(0);
}

// ---------------------------------------------------------------------------------------------------
// Claude: step k resends the last prompt edited (a sibling of it, with its answer), then goes on by one
// prompt from the new answer, which step k+1 edits: each edit forks at a record of the previous branch.

interface ClaudeSteps {
  bytes: Buffer;
  /** The texts of the path from the last record back to the root, root first. */
  path: string[];
  /** The first record of the last edit's branch (its Log is `<session>.<uuid>`, claude-interop.md §3.4). */
  lastEdit: string;
}

function editedTranscript(edits: number): ClaudeSteps {
  let i = 0;
  const uuid = () => `00000000-0000-4000-8000-${String(++i).padStart(12, "0")}`;
  let t = Date.parse("2026-01-01T00:00:00.000Z");
  const ts = () => new Date((t += 1000)).toISOString();
  const lines: string[] = [];
  const texts = new Map<string, { parent: string | null; text: string }>();
  const record = (parent: string | null, type: string, message: unknown, text: string): string => {
    const id = uuid();
    lines.push(JSON.stringify({ parentUuid: parent, isSidechain: false, userType: "external", cwd: "/tmp/p", sessionId: SESSION, version: "2.1.0", type, message, uuid: id, timestamp: ts() }));
    texts.set(id, { parent, text });
    return id;
  };
  /** A prompt and its answer; returns [the prompt's uuid, the answer's]. */
  const exchange = (parent: string | null, prompt: string): [string, string] => {
    const u = record(parent, "user", { role: "user", content: prompt }, prompt);
    const answer = `answer to ${prompt}`;
    return [u, record(u, "assistant", { model: "m", id: `msg-${i}`, type: "message", role: "assistant", content: [{ type: "text", text: answer }], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } }, answer)];
  };
  let base = exchange(null, "first")[1];
  let leaf = exchange(base, "prompt 0")[1];
  let lastEdit = "";
  for (let k = 1; k <= edits; k++) {
    [lastEdit, base] = exchange(base, `prompt ${k - 1}, edited`);
    leaf = exchange(base, `prompt ${k}`)[1];
  }
  const path: string[] = [];
  for (let at: string | null = leaf; at !== null; at = texts.get(at)!.parent) path.unshift(texts.get(at)!.text);
  return { bytes: Buffer.from(lines.map((l) => `${l}\n`).join("")), path, lastEdit };
}

describe("a Claude session whose last prompt is edited and resent 40 times", () => {
  const EDITS = 40;
  const importFile = (ws: string, root: string) => importClaude(ws, { paths: [root], program: "pixir import claude", env: {} });

  it("imported after every step: bounded share chains, check passes, the leaf's context is the path, the export gives the file back", async () => {
    const root = tempDir("pixir-lineage-");
    mkdirSync(path.join(root, "proj"));
    const file = path.join(root, "proj", `${SESSION}.jsonl`);
    const ws = tempDir();
    for (let k = 0; k <= EDITS; k++) {
      writeFileSync(file, editedTranscript(k).bytes);
      const res = await importFile(ws, root);
      expect(res.imports[0]!.status).toBe(k === 0 ? "created" : "appended");
    }
    const last = editedTranscript(EDITS);
    const { maxHops, replay } = lineage(ws);
    expect(maxHops).toBeLessThanOrEqual(MAX_IMPORT_SHARE_HOPS);
    expect(replay).toBeGreaterThan(0);
    expectChecked(ws);
    expect(contextTexts(ws, `${SESSION}.${last.lastEdit}`)).toEqual(last.path);
    const back = run("pixir", ["export", "claude", SESSION], { cwd: ws });
    expect(back.code, back.stderr).toBe(0);
    expect(Buffer.from(back.stdout, "utf8").equals(last.bytes)).toBe(true);
    // Imported once more, nothing changes (the stored prefixes are not taken for records held twice).
    expect((await importFile(ws, root)).imports[0]!.status).toBe("unchanged");
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------------
// Codex: 120 successive rollbacks of one turn; `nested` adds a second turn after each, so that each
// rollback cuts inside the previous rollback's Log.

function rolledBackRollout(rollbacks: number, nested: boolean): { text: string; path: string[] } {
  let t = Date.parse("2026-03-01T10:00:00.000Z");
  const rec = (type: string, payload: unknown) => JSON.stringify({ timestamp: new Date((t += 1000)).toISOString(), type, payload });
  const U = (text: string) => rec("response_item", { type: "message", role: "user", content: [{ type: "input_text", text }] });
  const A = (text: string) => rec("response_item", { type: "message", role: "assistant", content: [{ type: "output_text", text }] });
  const lines = [rec("session_meta", { id: THREAD, timestamp: "2026-03-01T10:00:00.000Z", cwd: "/w", originator: "codex-tui", cli_version: "0.125.0", source: "cli", model_provider: "openai" })];
  lines.push(U("first"), A("first answer"), U("second"), A("second answer"));
  // Codex's replay (codex-interop.md §1.8): a rollback of one turn drops the last user turn.
  const turns: string[][] = [["first", "first answer"], ["second", "second answer"]];
  for (let k = 0; k < rollbacks; k++) {
    lines.push(rec("event_msg", { type: "thread_rolled_back", num_turns: 1 }), U(`retry ${k}`), A(`answer ${k}`));
    turns.pop();
    turns.push([`retry ${k}`, `answer ${k}`]);
    if (nested) {
      lines.push(U(`more ${k}`), A(`more answer ${k}`));
      turns.push([`more ${k}`, `more answer ${k}`]);
    }
  }
  return { text: lines.map((l) => `${l}\n`).join(""), path: turns.flat() };
}

describe.each([false, true])("a Codex rollout with 120 successive rollbacks (nested: %s)", (nested) => {
  const ROLLBACKS = 120;
  const importFile = (ws: string, file: string) => importCodexRollouts(ws, { paths: [{ path: file, display: file }], program: "pixir import codex", env: { CODEX_HOME: path.join(ws, "none") } });

  const readBack = (ws: string, expected: { text: string; path: string[] }) => {
    const { maxHops } = lineage(ws);
    expect(maxHops).toBeLessThanOrEqual(MAX_IMPORT_SHARE_HOPS);
    expectChecked(ws);
    const leaf = [...firstLines(ws).keys()].sort((a, b) => Number(a.split("rollback-")[1] ?? 0) - Number(b.split("rollback-")[1] ?? 0)).at(-1)!;
    expect(contextTexts(ws, leaf)).toEqual(expected.path);
    const back = run("pixir", ["export", "codex", THREAD], { cwd: ws });
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toBe(expected.text);
  };

  it("imports in one go and reads back", async () => {
    const ws = tempDir();
    const file = path.join(tempDir(), "rollout.jsonl");
    const whole = rolledBackRollout(ROLLBACKS, nested);
    writeFileSync(file, whole.text);
    await importFile(ws, file);
    readBack(ws, whole);
    if (!nested) expect(lineage(ws).maxHops).toBe(1); // every rollback cuts in the root: one hop
  }, 60_000);

  // Grown in steps, the nested shape makes replay_v1 children across imports (the other adds nothing to it).
  it.runIf(nested)("grown in steps, imported after each, reads back", async () => {
    const ws = tempDir();
    const file = path.join(tempDir(), "rollout.jsonl");
    for (const n of [3, 40, 80, ROLLBACKS]) {
      writeFileSync(file, rolledBackRollout(n, nested).text);
      await importFile(ws, file);
    }
    readBack(ws, rolledBackRollout(ROLLBACKS, nested));
  }, 60_000);
});
