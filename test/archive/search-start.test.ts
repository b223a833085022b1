// What a search process loads at its start changes none of its answers (docs/performance.md "Round 6:
// search start-up"): a search of unchanged Logs hashes nothing. A line that starts with a command's name
// declares only that command to yargs: its usage errors and help are the ones of the whole tool.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { assistant, binPath, run, tempDir, user, workspace } from "../support/cli.js";

/** The builtins a run of `pixir args` loaded beyond what Node itself loads at start (process.moduleLoadList). */
function builtinsLoaded(args: string[], cwd: string): string[] {
  const preload = path.join(tempDir("pixir-preload-"), "modules.cjs");
  // Written by descriptor, after the list is taken: process.stderr would load the stream modules itself.
  writeFileSync(preload, `const before = new Set(process.moduleLoadList);\nprocess.on("exit", () => { const loaded = JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m))); require("node:fs").writeSync(2, loaded); });\n`);
  const r = spawnSync(process.execPath, ["--require", preload, binPath("pixir"), ...args], { cwd, encoding: "utf8" });
  expect(r.status).toBe(0);
  return (JSON.parse(r.stderr) as string[]).filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice("NativeModule ".length));
}

describe("what a search of unchanged Logs loads", () => {
  it("neither node:crypto nor node:worker_threads, nor node:net or the streams; a search after an append hashes, and finds the new Event", () => {
    const ws = workspace({ s1: [user("the first words"), assistant("more words")] });
    expect(run("pixir", ["search", "words", "--json"], { cwd: ws }).code).toBe(0);
    const unchanged = builtinsLoaded(["search", "words", "--json"], ws);
    expect(unchanged.filter((m) => /^(crypto|worker_threads|internal\/crypto\/)/.test(m))).toEqual([]);
    // Its answer goes to the stdout pipe by its descriptor (cli/direct-stdout.ts): no socket, no stream.
    expect(unchanged.filter((m) => /^(net|tty|stream|internal\/streams\/)/.test(m))).toEqual([]);
    expect(run("pixir", ["append", "s1", "--json"], { cwd: ws, input: `${JSON.stringify(user("appended lately"))}\n` }).code).toBe(0);
    expect(builtinsLoaded(["search", "lately", "--json"], ws)).toContain("crypto");
    const hits = run("pixir", ["search", "lately", "--json"], { cwd: ws }).stdout.trim().split("\n").map((l) => JSON.parse(l) as { seq: number });
    expect(hits.map((h) => h.seq)).toEqual([2]);
  });
});

/** The files a run of `pixir args` required (CommonJS modules and addons), from Node's require cache. */
function filesRequired(args: string[], cwd: string): string[] {
  const preload = path.join(tempDir("pixir-preload-"), "files.cjs");
  writeFileSync(preload, `process.on("exit", () => process.stderr.write(JSON.stringify(Object.keys(require.cache))));\n`);
  const r = spawnSync(process.execPath, ["--require", preload, binPath("pixir"), ...args], { cwd, encoding: "utf8" });
  expect(r.status).toBe(0);
  return JSON.parse(r.stderr.trim().split("\n").at(-1)!) as string[];
}

describe("better-sqlite3 in a search", () => {
  it("its JavaScript is the bundle's (no module of the package is read), its addon the installed package's", () => {
    const ws = workspace({ s1: [user("the first words")] });
    const files = filesRequired(["search", "words", "--json"], ws);
    const ofPackage = files.filter((f) => f.includes(`${path.sep}better-sqlite3${path.sep}`));
    expect(ofPackage.map((f) => path.basename(f))).toEqual(["better_sqlite3.node"]);
  });
});

describe("a line that names its command declares only that command", () => {
  it("its usage errors, help and version are the whole tool's", () => {
    const ws = tempDir();
    const bogus = run("pixir", ["search", "x", "--bogus", "--json"], { cwd: ws });
    expect(bogus.code).toBe(2);
    expect(bogus.errJson.error).toMatchObject({ kind: "usage", message: expect.stringMatching(/^unknown flag --bogus/) });
    expect(run("pixir", ["search", "--limt", "3"], { cwd: ws }).stderr).toContain("did you mean --limit?");
    // Help and version lines declare every command, as a line that does not start with a command's name does.
    const help = run("pixir", ["search", "--help"], { cwd: ws });
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(run("pixir", ["help", "search"], { cwd: ws }).stdout);
    expect(run("pixir", ["search", "--version"], { cwd: ws }).stdout).toBe(run("pixir", ["--version"], { cwd: ws }).stdout);
  });
});
