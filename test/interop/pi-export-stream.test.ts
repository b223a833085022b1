// pixir export pi keeps the History only of a Log with fork children (their fork points are found in it);
// any other Log is read again, one Event at a time, when its entries are made (docs/performance.md,
// "Round 9: peak RSS across the jobs"). Both ways give the same entries: a Log exported before and after
// it gains a child that adds nothing gives the same file, and a leaf's entries are the same whether it is
// kept for its fork child or read again.
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

  it("a Log read again gives the same lines as the same Log kept for its child", () => {
    const ws = tempDir();
    appendAll(ws, "a");
    // "b" holds the same Events as "a" (ids and times too); a child makes "b" one whose History is kept.
    const sessions = path.join(ws, ".pixir", "sessions");
    writeFileSync(path.join(sessions, "b.ndjson"), readFileSync(path.join(sessions, "a.ndjson"), "utf8").replaceAll('"session_id":"a"', '"session_id":"b"'));
    ok(["fork", "b", "--to-seq", "0", "--strategy", "share_v1", "--child-id", "b-kid"], ws);
    const readAgain = ok(["export", "pi", "a"], ws).replaceAll('"session_id":"a"', '"session_id":"b"');
    const kept = jsonl(ok(["export", "pi", "b"], ws)).map((e) => JSON.stringify(e));
    // The header's id names the root Log; the entries are the same lines, in the same order.
    expect(kept.slice(1, jsonl(readAgain).length)).toEqual(jsonl(readAgain).slice(1).map((e) => JSON.stringify(e)));
  });
});
