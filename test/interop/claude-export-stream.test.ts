// pixir export claude reads a Log's Events one at a time and keeps only the record lines it writes
// (docs/performance.md, "Round 9: peak RSS across the jobs"): what it derives from the records as a whole
// stays the same. The cwd is the first one a record names, in line order (archive.md §5), even when
// earlier records name none; a Log with an Event pixir added is exported in mode fork (§5.1).
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";

const SID = "5b0f3c1e-7a2d-4c3b-9e8f-0a1b2c3d4e5f";
const U1 = "11111111-1111-4111-8111-111111111111";
const U2 = "22222222-2222-4222-8222-222222222222";
const U3 = "33333333-3333-4333-8333-333333333333";
const common = `"isSidechain":false,"userType":"external","sessionId":"${SID}","version":"2.0.0"`;
const LINES = [
  `{"type":"summary","summary":"Earlier work","leafUuid":"${U3}"}`,
  `{"parentUuid":null,${common},"type":"user","message":{"role":"user","content":"hello"},"uuid":"${U1}","timestamp":"2026-01-01T00:00:00.000Z"}`,
  `{"parentUuid":"${U1}",${common},"cwd":"/work/alpha","type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}},"requestId":"req_1","uuid":"${U2}","timestamp":"2026-01-01T00:00:01.000Z"}`,
  `{"parentUuid":"${U2}",${common},"cwd":"/work/beta","type":"user","message":{"role":"user","content":"and then"},"uuid":"${U3}","timestamp":"2026-01-01T00:00:02.000Z"}`,
];

function imported(): string {
  const root = tempDir("pixir-claude-export-");
  mkdirSync(path.join(root, "-work-alpha"));
  writeFileSync(path.join(root, "-work-alpha", `${SID}.jsonl`), `${LINES.join("\n")}\n`);
  const ws = tempDir();
  expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
  return ws;
}

describe("pixir export claude of a Log read one Event at a time", () => {
  it("gives the transcript back byte for byte, with the first cwd a record names", () => {
    const ws = imported();
    const res = run("pixir", ["export", "claude", SID], { cwd: ws });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${LINES.join("\n")}\n`);
    const dry = run("pixir", ["export", "claude", SID, "--out", tempDir(), "--dry-run", "--json"], { cwd: ws });
    expect(dry.json).toMatchObject({ mode: "original", cwd: "/work/alpha", project_dir: "-work-alpha" });
    expect(dry.json.files.map((f: { records: number }) => f.records)).toEqual([4]);
  });

  it("a Log with an Event appended by pixir is exported in mode fork", () => {
    const ws = imported();
    expect(run("pixir", ["append", SID], { cwd: ws, input: '{"type":"user_message","data":{"text":"one more"}}\n' }).code).toBe(0);
    const dry = run("pixir", ["export", "claude", SID, "--out", tempDir(), "--dry-run", "--json"], { cwd: ws });
    expect(dry.code).toBe(0);
    expect(dry.json).toMatchObject({ mode: "fork", cwd: "/work/alpha" });
  });
});
