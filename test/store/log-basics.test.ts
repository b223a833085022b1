import { describe, expect, it } from "vitest";
import { run, tempDir, ULID } from "../support/cli.js";

describe("pixir-log append and cat (acceptance A1)", () => {
  it("stamps seq, id and ts and reads back six-key envelopes", () => {
    const ws = tempDir();
    const input = ['{"type":"user_message","data":{"text":"hi"}}', '{"type":"tool_call","data":{"call_id":"c1","name":"read","args":{"path":"a.txt"}}}'].join("\n") + "\n";
    expect(run("pixir-log", ["append", "s1"], { cwd: ws, input }).code).toBe(0);
    const cat = run("pixir-log", ["cat", "s1"], { cwd: ws });
    expect(cat.code).toBe(0);
    expect(cat.lines).toHaveLength(2);
    for (const [i, e] of cat.lines.entries()) {
      expect(Object.keys(e).sort()).toEqual(["data", "id", "seq", "session_id", "ts", "type"]);
      expect(e.seq).toBe(i);
      expect(e.id).toMatch(ULID);
      expect(e.ts.endsWith("Z")).toBe(true);
      expect(Number.isNaN(Date.parse(e.ts))).toBe(false);
    }
    expect(cat.lines[0].id).not.toBe(cat.lines[1].id);
    expect(cat.lines[1].data).toEqual({ call_id: "c1", name: "read", args: { path: "a.txt" } });
    const again = run("pixir-log", ["append", "s1", "--json"], { cwd: ws, input: '{"type":"user_message","data":{}}\n' });
    expect(again.json).toMatchObject({ ok: true, first_seq: 2, last_seq: 2, created: false });
  });
});
