// Usage errors name what was wrong (docs/cli-contract.md "Parsing"): every binary, in text and with
// --json, exit 2, the envelope on the channel of the command's class (cli.md §2), and a Session id on
// the line is never echoed.
import { describe, expect, it } from "vitest";
import { ROOT, type Tool } from "../support/cli.js";
import { runInProcess } from "../hardening/support.js";

const SECRET = "secret-session-7f3a";

/** tool, argv (with a Session id where the command takes one), the message. */
const CASES: Array<[Tool, string[], string]> = [
  ["pixir", ["forkk", SECRET], 'unknown command "forkk"; did you mean "fork"?'],
  ["pixir", ["fork", SECRET, "--to-sq", "3"], "unknown flag --to-sq; did you mean --to-seq?"],
  ["pixir", ["fork", SECRET, "--to-seq"], "--to-seq requires a number value"],
  ["pixir", ["lock", "relase", SECRET], 'unknown lock action "relase"; did you mean "release"?'],
  ["pixir", ["import", "pii", "f.jsonl"], 'unknown import format "pii"; did you mean "pi"?'],
  ["pixir", ["export", "htm", SECRET], 'unknown export format "htm"; did you mean "html"?'],
  ["pixir", ["log", "apend", SECRET], 'unknown command "apend"; did you mean "append"?'],
  ["pixir", ["tree", SECRET, "--max-dept", "2"], "unknown flag --max-dept; did you mean --max-depth?"],
  ["pixir-log", ["apend", SECRET], 'unknown command "apend"; did you mean "append"?'],
  ["pixir-log", ["frobnicate", SECRET], 'unknown command "frobnicate"'],
  ["pixir-log", ["cat", SECRET, "--raww"], "unknown flag --raww; did you mean --raw?"],
  ["pixir-log", ["cat", SECRET, "--from-seq"], "--from-seq requires a number value"],
  ["pixir-fork", ["--parent", SECRET, "--to-sq", "3"], "unknown flag --to-sq; did you mean --to-seq?"],
  ["pixir-fork", ["--parent", SECRET, "--child-id"], "--child-id requires a session id value"],
  ["pixir-tree", [SECRET, "--max-dept", "3"], "unknown flag --max-dept; did you mean --max-depth?"],
  ["pixir-tree", [SECRET, "--max-depth"], "--max-depth requires a number value"],
  ["pixir-summarize", ["--modl-cmd", "x"], "unknown flag --modl-cmd; did you mean --model-cmd?"],
  ["pixir-summarize", ["--model-cmd"], "--model-cmd requires a command value"],
];

describe("usage errors name what was wrong", () => {
  it.each(CASES)("%s %j", async (tool, argv, message) => {
    const text = await runInProcess(tool, argv, { cwd: ROOT });
    expect([text.code, text.stdout]).toEqual([2, ""]);
    expect(text.stderr).toBe(`error: usage: ${message}\nhint: run the command with --help\n`);
    const json = await runInProcess(tool, [...argv, "--json"], { cwd: ROOT });
    expect(json.code).toBe(2);
    const envelope = JSON.parse((json.stdout || json.stderr).trim());
    expect(envelope.error).toMatchObject({ kind: "usage", message, details: { next_actions: ["run the command with --help"] } });
    expect(envelope.error.details.synopsis).toMatch(/^usage: /);
    for (const out of [text.stdout, text.stderr, json.stdout, json.stderr]) expect(out).not.toContain(SECRET);
  });

  it("a report command's JSON envelope is on stdout, a stream command's on stderr (cli.md §2)", async () => {
    const report = await runInProcess("pixir-log", ["ls", "--bogus", "--json"], { cwd: ROOT });
    expect([report.stdout === "", report.stderr === ""]).toEqual([false, true]);
    const stream = await runInProcess("pixir-log", ["cat", SECRET, "--bogus", "--json"], { cwd: ROOT });
    expect([stream.stdout === "", stream.stderr === ""]).toEqual([true, false]);
  });
});
