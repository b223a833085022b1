// Long jobs show progress on stderr only when it is a terminal, and never with --json (cli-contract.md).
// script(1) runs a command on a terminal; `2>&1 >/dev/null` lets only stderr reach it.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { binPath, generateLog, ROOT, run, tempDir } from "../support/cli.js";

const onTerminal = (args: string[], cwd: string, tool: "pixir" | "pixir-log" = "pixir") => {
  const command = `${[process.execPath, binPath(tool), ...args].map((a) => JSON.stringify(a)).join(" ")} 2>&1 >/dev/null`;
  return spawnSync("script", ["-qec", command, "/dev/null"], { cwd, encoding: "utf8" });
};

describe("pixir fork progress", () => {
  let ws: string;
  beforeAll(() => {
    // A parent just over one progress step (64 MiB), from the benchmark's deterministic generator.
    ws = tempDir();
    generateLog(ws, "p", { bytes: "70MiB" });
  }, 120_000);

  it("prints a line per 64 MiB checked and copied on a terminal", () => {
    const tty = onTerminal(["fork", "p", "--child-id", "c"], ws);
    expect(tty.status).toBe(0);
    const lines = tty.stdout.split(/\r?\n/).filter(Boolean);
    expect(lines).toEqual(["pixir fork: checked 64 MiB of p", "pixir fork: copied 64 MiB to c", "hint: continue the child with pixir append c; pixir context c prints what a model sees of it"]);
    expect(run("pixir-log", ["check", "c", "--json"], { cwd: ws }).json.ok).toBe(true);
  });

  it("prints nothing with --json, or when stderr is not a terminal", () => {
    const json = onTerminal(["fork", "p", "--dry-run", "--json"], ws);
    expect(json.status).toBe(0);
    expect(json.stdout).toBe("");
    const plain = run("pixir", ["fork", "p", "--dry-run"], { cwd: ws });
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe("");
  });

  it("pixir-log check: a line per 64 MiB read, naming the Log; none with --json", () => {
    // Named, so the child of the test above is not read too.
    const tty = onTerminal(["check", "p"], ws, "pixir-log");
    expect(tty.status).toBe(0);
    expect(tty.stdout.split(/\r?\n/).filter(Boolean)).toEqual(["pixir-log check: checked 64 MiB (log 1 of 1: p)"]);
    expect(onTerminal(["check", "p", "--json"], ws, "pixir-log").stdout).toBe("");
    expect(run("pixir-log", ["check", "p"], { cwd: ws }).stderr).toBe("");
  });
});

describe("pixir import pi progress", () => {
  it("keeps stderr empty with --json, even on a terminal", () => {
    const file = path.join(ROOT, "test/fixtures/pi/before-compaction.jsonl");
    const ws = tempDir();
    const text = onTerminal(["import", "pi", file, "--dry-run"], ws);
    expect(text.stdout).toContain("pixir import pi: before-compaction.jsonl: parsed 1002 entries");
    const json = onTerminal(["import", "pi", file, "--dry-run", "--json"], ws);
    expect(json.status).toBe(0);
    expect(json.stdout).toBe("");
  });
});
