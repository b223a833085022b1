// pixir export pi keeps no Log's History: a first read keeps the seqs of each Log's replayable Events (what a
// fork child inherits) and their count, and each Log is read again, one Event at a time, when its entries are
// made (docs/performance.md, "Round 9: peak RSS across the jobs"). A Log gives the same entries with and
// without a fork child: exported before and after it gains a child that adds nothing, the file is the same,
// and a Log with a child gives the same lines as the same Events in a Log without one.
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";
import { jsonl } from "../support/pi.js";

const usage = { provider: "prov", model: "m1", input: 10, output: 5 };
// Every kind of entry a native Log makes: texts, a run of assistant Events with a tool call, a usage-only
// run, a result, a compaction and a workflow Event (a custom entry).
const EVENTS = [
  { type: "user_message", data: { text: "hello" } },
  { type: "reasoning", data: { text: "thinking" } },
  { type: "assistant_message", data: { text: "reading" } },
  { type: "tool_call", data: { call_id: "c1", name: "read", args: { path: "a.txt" } } },
  { type: "provider_usage", data: usage },
  { type: "tool_result", data: { call_id: "c1", ok: true, output: "file text" } },
  { type: "provider_usage", data: usage },
  { type: "workflow_event", data: { event: "checkpointed" } },
  { type: "assistant_message", data: { text: "done" } },
  { type: "user_message", data: { text: "thanks" } },
];

function ok(argv: string[], ws: string, input?: string): string {
  const r = run("pixir", argv, { cwd: ws, input });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}
const appendAll = (ws: string, id: string) => ok(["append", id], ws, EVENTS.map((e) => JSON.stringify(e)).join("\n") + "\n");

describe("pixir export pi of a Log kept or read again", () => {
  it("a native Log gives the same file before and after a fork child that adds nothing", () => {
    const ws = tempDir();
    appendAll(ws, "p");
    const alone = ok(["export", "pi", "p"], ws);
    expect(jsonl(alone).length).toBeGreaterThan(5);
    ok(["fork", "p", "--to-seq", "5", "--strategy", "share_v1", "--child-id", "k"], ws);
    expect(ok(["export", "pi", "p"], ws)).toBe(alone);
  });

  it("a Log with a fork child gives the same lines as the same Events without one", () => {
    const ws = tempDir();
    appendAll(ws, "a");
    // "b" holds the same Events as "a" (ids and times too), and has a child.
    const sessions = path.join(ws, ".pixir", "sessions");
    writeFileSync(path.join(sessions, "b.ndjson"), readFileSync(path.join(sessions, "a.ndjson"), "utf8").replaceAll('"session_id":"a"', '"session_id":"b"'));
    ok(["fork", "b", "--to-seq", "0", "--strategy", "share_v1", "--child-id", "b-kid"], ws);
    const alone = ok(["export", "pi", "a"], ws).replaceAll('"session_id":"a"', '"session_id":"b"');
    const withChild = jsonl(ok(["export", "pi", "b"], ws)).map((e) => JSON.stringify(e));
    // The header's id names the root Log; the entries are the same lines, in the same order.
    expect(withChild.slice(1, jsonl(alone).length)).toEqual(jsonl(alone).slice(1).map((e) => JSON.stringify(e)));
  });
});
