// Claude Code 1.0.x compaction (issue 33 item 3): before `compact_boundary` existed, a compacted session went
// on in the same file from a new root `user` record carrying the summary ("This session is being continued
// from a previous conversation…", `isCompactSummary` in later 1.0.x), with a `summary` record whose
// `leafUuid` names the old chain's last record. It imports as one Log continuing with a checkpoint, not the
// old history as a sibling fork of the tail. Synthetic files of that shape; expected values from the lines.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { run, tempDir } from "../support/cli.js";
import { heldLines, nonBlankLines, storedEvents } from "../support/claude.js";

const SID = "3b1f6c2e-8a4d-4e7f-9c1a-2d5e6f7a8b90";
const CONTINUED = "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nThe user asked for a parser; it was written and tested.";

let clock = 0;
const ts = () => new Date(Date.UTC(2025, 6, 14, 10, 0, clock++)).toISOString();
const chain = (uuid: string, parent: string | null, type: "user" | "assistant", content: unknown, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    parentUuid: parent,
    isSidechain: false,
    userType: "external",
    cwd: "/home/u/p",
    sessionId: SID,
    version: "1.0.51",
    type,
    message: type === "user" ? { role: "user", content } : { id: `msg_${uuid}`, type: "message", role: "assistant", model: "claude-sonnet-4-20250514", content: [{ type: "text", text: content }], stop_reason: "end_turn", usage: { input_tokens: 10, output_tokens: 5 } },
    ...extra,
    uuid,
    timestamp: ts(),
  });

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** A 1.0.51-shaped session: two turns, a compaction restart, two more turns. `flag`: the root carries isCompactSummary. */
function compactedSession(opts: { flag: boolean; summaryRecord: boolean }): string[] {
  clock = 0;
  const lines = [
    chain(uuid(1), null, "user", "write a parser"),
    chain(uuid(2), uuid(1), "assistant", "Here is a parser."),
    chain(uuid(3), uuid(2), "user", "now test it"),
    chain(uuid(4), uuid(3), "assistant", "Tests pass."),
    chain(uuid(5), null, "user", CONTINUED, opts.flag ? { isCompactSummary: true } : {}),
    chain(uuid(6), uuid(5), "user", "add error messages"),
    chain(uuid(7), uuid(6), "assistant", "Done: errors name the line."),
    chain(uuid(8), uuid(7), "user", "thanks"),
  ];
  if (opts.summaryRecord) lines.unshift(JSON.stringify({ type: "summary", summary: "Parser and tests", leafUuid: uuid(4) }));
  return lines;
}

function importOne(lines: string[]) {
  const root = tempDir("pixir-compact1x-");
  mkdirSync(path.join(root, "-home-u-p"));
  const file = path.join(root, "-home-u-p", `${SID}.jsonl`);
  const bytes = Buffer.from(`${lines.join("\n")}\n`);
  writeFileSync(file, bytes);
  const ws = tempDir();
  const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
  expect(res.code, res.stderr).toBe(0);
  return { ws, file, bytes, res };
}

describe.each([
  ["isCompactSummary and a summary record naming the old leaf", { flag: true, summaryRecord: true }],
  ["isCompactSummary alone", { flag: true, summaryRecord: false }],
  ["the summary's words alone (no flag)", { flag: false, summaryRecord: true }],
])("a 1.0.x compaction restart: %s", (_name, opts) => {
  const lines = compactedSession(opts);
  const restartLine = lines.findIndex((l) => l.startsWith(`{"parentUuid":null`) && l.includes("This session is being continued")) + 1;
  let ws = "";
  let bytes = Buffer.alloc(0);
  let res: ReturnType<typeof run>;
  beforeAll(() => ({ ws, bytes, res } = importOne(lines)));

  it("is one Log: no sibling fork, every line held once", () => {
    expect(res.json.imports[0].logs.map((l: any) => [l.session_id, l.role])).toEqual([[SID, "primary"]]);
    expect(res.json.imports[0].leaf_session_id).toBe(SID);
    const held = heldLines(ws, (storedEvents(ws, SID)[0]!.data.claude as any).source);
    expect([...held.keys()]).toEqual([SID]);
    expect([...held.get(SID)!].sort((a, b) => a - b)).toEqual(nonBlankLines(bytes));
    const tree = run("pixir", ["tree", SID, "--format", "json"], { cwd: ws });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.json.tree).toMatchObject({ session_id: SID, forks: [], subagents: [] });
  });

  it("continues with a checkpoint: pixir context starts with the summary, then the continued conversation", () => {
    const events = storedEvents(ws, SID);
    const checkpoint = events.find((e) => e.type === "history_compaction")!;
    expect(checkpoint.data).toMatchObject({ strategy: "claude_compaction", range: { from_seq: 0, to_seq: checkpoint.seq - 1 }, source_event_count: checkpoint.seq, claude: { line: restartLine } });
    // The old chain comes first in the Log, in line order.
    const userTexts = events.filter((e) => e.type === "user_message").map((e) => e.data.text);
    expect(userTexts).toEqual(["write a parser", "now test it", "add error messages", "thanks"]);
    const ctx = run("pixir", ["context", SID], { cwd: ws });
    expect(ctx.code, ctx.stderr).toBe(0);
    expect(ctx.lines[0]).toMatchObject({ type: "history_compaction", id: checkpoint.id });
    expect(ctx.lines.slice(1).map((e: any) => [e.type, e.item.content[0].text])).toEqual([
      ["user_message", "add error messages"],
      ["assistant_message", "Done: errors name the line."],
      ["user_message", "thanks"],
    ]);
  });

  it("exports back byte for byte", () => {
    const back = run("pixir", ["export", "claude", SID], { cwd: ws });
    expect(back.code, back.stderr).toBe(0);
    expect(Buffer.from(back.stdout, "utf8").equals(bytes)).toBe(true);
  });
});

describe("a 1.0.x compaction restart after a rewind", () => {
  it("continues the record the summary's leafUuid names, not the abandoned branch on the line before", () => {
    clock = 0;
    const lines = [
      JSON.stringify({ type: "summary", summary: "Parser", leafUuid: uuid(4) }),
      chain(uuid(1), null, "user", "write a parser"),
      chain(uuid(2), uuid(1), "assistant", "Here is a parser."),
      chain(uuid(3), uuid(2), "user", "now test it"),
      chain(uuid(4), uuid(3), "assistant", "Tests pass."),
      chain(uuid(9), uuid(2), "user", "no, document it"),
      chain(uuid(10), uuid(9), "assistant", "Documented."),
      chain(uuid(5), null, "user", CONTINUED, { isCompactSummary: true }),
      chain(uuid(6), uuid(5), "user", "add error messages"),
    ];
    const { ws, bytes, res } = importOne(lines);
    const logs = res.json.imports[0].logs;
    expect(logs.map((l: any) => l.role)).toEqual(["primary", "branch"]);
    const held = heldLines(ws, (storedEvents(ws, SID)[0]!.data.claude as any).source);
    expect(held.get(SID)!.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 8, 9]);
    expect(held.get(logs[1].session_id)).toEqual([6, 7]);
    const back = run("pixir", ["export", "claude", SID], { cwd: ws });
    expect(Buffer.from(back.stdout, "utf8").equals(bytes)).toBe(true);
  });
});

describe("a root user record that is not a compaction", () => {
  it("a second root with typed words stays a root branch, as before", () => {
    const lines = compactedSession({ flag: false, summaryRecord: false }).map((l) => l.replace(CONTINUED.replace(/\n/g, "\\n"), "start over: write a lexer"));
    const { res } = importOne(lines);
    expect(res.json.imports[0].logs.map((l: any) => l.role)).toEqual(["primary", "root_branch"]);
  });
});
