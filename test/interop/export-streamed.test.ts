// pixir export claude and pixir export pi write their files as they are made (docs/performance.md, "Round 10:
// the Claude and pi exports streamed"): a first pass keeps small facts, the lines are made again in the
// file's order. These pin what that must not change: a pi family's lines whichever Log is named (the named
// one goes last, though it is converted in the middle of its family), a compaction's first kept entry in a
// Log without a fork child, and the targets of --out (the same bytes as stdout; unchanged on a rerun; a
// target with other bytes refused and left as it was, with no temp file beside it).
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";
import { jsonl, rawEvents } from "../support/pi.js";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

function ok(argv: string[], ws: string, input?: string): { stdout: string; json: any } {
  const r = run("pixir", argv, { cwd: ws, input });
  expect(r.code, r.stderr).toBe(0);
  return r;
}
const append = (ws: string, id: string, events: object[]) => ok(["append", id], ws, events.map((e) => JSON.stringify(e)).join("\n") + "\n");

const TURN = [
  { type: "user_message", data: { text: "hello" } },
  { type: "assistant_message", data: { text: "reading" } },
  { type: "tool_call", data: { call_id: "c1", name: "read", args: { path: "a.txt" } } },
  { type: "tool_result", data: { call_id: "c1", ok: true, output: "file text" } },
  { type: "assistant_message", data: { text: "done" } },
  { type: "user_message", data: { text: "thanks" } },
];

/** p, its children k1 (at seq 2) and k2 (at seq 4), and k1's child g: fork order p, k1, g, k2. */
function family(): string {
  const ws = tempDir();
  append(ws, "p", TURN);
  ok(["fork", "p", "--to-seq", "2", "--child-id", "k1"], ws);
  append(ws, "k1", TURN.map((e) => ({ ...e, data: { ...e.data, call_id: "c2" } })));
  ok(["fork", "p", "--to-seq", "4", "--strategy", "share_v1", "--child-id", "k2"], ws);
  append(ws, "k2", [{ type: "user_message", data: { text: "from k2" } }]);
  ok(["fork", "k1", "--to-seq", "6", "--strategy", "share_v1", "--child-id", "g"], ws);
  append(ws, "g", [{ type: "user_message", data: { text: "from g" } }]);
  return ws;
}

/** The export's entry lines of each Log, by session id, from the report's entry counts (the file's order). */
function linesBySession(ws: string, id: string): { lines: string[]; bySession: Map<string, string[]>; order: string[] } {
  const out = tempDir();
  const report = ok(["export", "pi", id, "--out", out, "--json"], ws).json;
  const lines = readFileSync(report.file, "utf8").split("\n").slice(1, -1);
  expect(ok(["export", "pi", id], ws).stdout).toBe(readFileSync(report.file, "utf8"));
  const bySession = new Map<string, string[]>();
  let at = 0;
  for (const s of report.sessions) {
    bySession.set(s.session_id, lines.slice(at, at + s.entry_count));
    at += s.entry_count;
  }
  expect(at).toBe(lines.length);
  expect(JSON.parse(lines.at(-1)!).id).toBe(report.leaf_entry_id);
  return { lines, bySession, order: report.sessions.map((s: { session_id: string }) => s.session_id) };
}

describe("pixir export pi, its lines made again in the file's order", () => {
  it("a named Log in the middle of its family gives the same lines as the root's export, its own last", () => {
    const ws = family();
    const root = linesBySession(ws, "p");
    const k1 = linesBySession(ws, "k1");
    expect(root.order).toEqual(["k1", "g", "k2", "p"]);
    expect(k1.order).toEqual(["p", "g", "k2", "k1"]);
    for (const id of ["p", "k1", "g", "k2"]) {
      expect(k1.bySession.get(id)!.length).toBeGreaterThan(0);
      expect(k1.bySession.get(id)).toEqual(root.bySession.get(id));
    }
    // Each entry once, and g hangs from k1's entries, which come after it in k1's file.
    expect(new Set(k1.lines).size).toBe(k1.lines.length);
    const ids = new Set(k1.bySession.get("k1")!.map((l) => JSON.parse(l).id));
    expect(ids.has(JSON.parse(k1.bySession.get("g")![0]!).parentId)).toBe(true);
  });

  it("a compaction in a Log without a fork child keeps the entry of the first Event after its range", () => {
    const ws = tempDir();
    append(ws, "c", [
      { type: "user_message", data: { text: "first" } },
      { type: "assistant_message", data: { text: "one" } },
      { type: "user_message", data: { text: "second" } },
      { type: "assistant_message", data: { text: "two" } },
      { type: "history_compaction", data: { range: { from_seq: 0, to_seq: 1 }, summary: "earlier", tokens_before: 9 } },
    ]);
    const entries = jsonl(ok(["export", "pi", "c"], ws).stdout).slice(1);
    const events = rawEvents(ws, "c");
    const compaction = entries.find((e) => e.type === "compaction");
    expect(compaction.firstKeptEntryId).toBe(sha256(`pixir:${events[2].id}`).slice(0, 8));
    expect(entries.find((e) => e.message?.content?.[0]?.text === "second").id).toBe(compaction.firstKeptEntryId);
  });

  it("--out over an existing file is refused and leaves it as it was, with nothing beside it", () => {
    const ws = family();
    const out = tempDir();
    const target = path.join(out, "mine.jsonl");
    writeFileSync(target, "mine\n");
    const r = run("pixir", ["export", "pi", "k1", "--out", target], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/already_exists/);
    expect(readFileSync(target, "utf8")).toBe("mine\n");
    expect(readdirSync(out)).toEqual(["mine.jsonl"]);
  });
});

const SID = "5b0f3c1e-7a2d-4c3b-9e8f-0a1b2c3d4e5f";
const U1 = "11111111-1111-4111-8111-111111111111";
const U2 = "22222222-2222-4222-8222-222222222222";
const common = `"isSidechain":false,"userType":"external","sessionId":"${SID}","version":"2.0.0","cwd":"/work/alpha"`;
const LINES = [
  `{"parentUuid":null,${common},"type":"user","message":{"role":"user","content":"hello"},"uuid":"${U1}","timestamp":"2026-01-01T00:00:00.000Z"}`,
  `{"parentUuid":"${U1}",${common},"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}},"requestId":"req_1","uuid":"${U2}","timestamp":"2026-01-01T00:00:01.000Z"}`,
];
const FILE = `${LINES.join("\n")}\n`;

describe("pixir export claude --out, the file written as it is made", () => {
  function imported(): string {
    const root = tempDir("pixir-claude-export-");
    mkdirSync(path.join(root, "-work-alpha"));
    writeFileSync(path.join(root, "-work-alpha", `${SID}.jsonl`), FILE);
    const ws = tempDir();
    ok(["import", "claude", root], ws);
    return ws;
  }

  it("writes the stream's bytes, is unchanged on a rerun, and refuses a target with other bytes, leaving it", () => {
    const ws = imported();
    expect(ok(["export", "claude", SID], ws).stdout).toBe(FILE);
    const out = tempDir();
    const first = ok(["export", "claude", SID, "--out", out, "--json"], ws).json;
    expect(first.files).toEqual([{ path: `-work-alpha/${SID}.jsonl`, kind: "session", records: 2, bytes: Buffer.byteLength(FILE), status: "written" }]);
    const target = path.join(out, "-work-alpha", `${SID}.jsonl`);
    expect(readFileSync(target, "utf8")).toBe(FILE);
    expect(ok(["export", "claude", SID, "--out", out, "--json"], ws).json.files[0].status).toBe("unchanged");
    // The same length, one byte other: only a comparison of the bytes tells.
    const other = FILE.replace('"hi"', '"ho"');
    writeFileSync(target, other);
    const refused = run("pixir", ["export", "claude", SID, "--out", out, "--json"], { cwd: ws });
    expect(refused.code).toBe(1);
    expect(refused.json.error.kind ?? refused.json.error.code).toBe("already_exists");
    expect(readFileSync(target, "utf8")).toBe(other);
    expect(readdirSync(path.dirname(target))).toEqual([`${SID}.jsonl`]);
    // A longer file that starts with the export's bytes is other bytes too.
    writeFileSync(target, `${FILE}${LINES[0]}\n`);
    expect(run("pixir", ["export", "claude", SID, "--out", out], { cwd: ws }).code).toBe(1);
  });

  it("puts the records of a Log whose lines do not rise in line order (a record met early waits its turn)", () => {
    const ws = tempDir();
    const record = (line: number) => JSON.parse(LINES[line - 1]!);
    append(ws, "x", [
      { type: "workflow_event", data: { event: "claude_transcript", claude: { source: "xs", kind: "session", session_id: "xs", agent_id: null, file: "-work-alpha/xs.jsonl", project_dir: "-work-alpha", layout: "session", forked_from: null } } },
      { type: "assistant_message", data: { text: "hi", claude: { line: 2, uuid: U2, part: "b0", path: true, record: record(2) } } },
      { type: "user_message", data: { text: "hello", claude: { line: 1, uuid: U1, part: "text", path: true, record: record(1) } } },
    ]);
    expect(ok(["export", "claude", "x"], ws).stdout).toBe(FILE);
    const report = ok(["export", "claude", "x", "--out", tempDir(), "--dry-run", "--json"], ws).json;
    expect(report).toMatchObject({ mode: "original", cwd: "/work/alpha" });
    expect(report.files).toEqual([{ path: "-work-alpha/x.jsonl", kind: "session", records: 2, bytes: Buffer.byteLength(FILE), status: "would_write" }]);
  });
});
