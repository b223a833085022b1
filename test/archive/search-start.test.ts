// What a search process loads at its start changes none of its answers (docs/performance.md "Round 6:
// search start-up"). `pixir search` carries better-sqlite3's JavaScript in its bundle and drives the
// installed addon with it only when the installed package is the bundled version; an install of another
// version is loaded from node_modules as is. Both give the same hits. A line that starts with a command's
// name declares only that command to yargs: its usage errors and help are the ones of the whole tool.
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { assistant, binPath, ROOT, run, tempDir, user, workspace } from "../support/cli.js";

/** The installed better-sqlite3 the tools resolve. */
const INSTALLED = path.dirname(createRequire(path.join(ROOT, "tools/pixir/package.json")).resolve("better-sqlite3/package.json"));

/**
 * A copy of the built pixir beside a better-sqlite3 that says it is `version`: the installed package's
 * JavaScript and addon, linked, under a package.json of that version.
 */
function pixirBeside(version: string): string {
  const dir = path.join(tempDir("pixir-sqlite-"), "pixir");
  for (const part of ["package.json", "bin", "dist"]) cpSync(path.join(ROOT, "tools/pixir", part), path.join(dir, part), { recursive: true });
  const pkg = path.join(dir, "node_modules", "better-sqlite3");
  mkdirSync(pkg, { recursive: true });
  const manifest = JSON.parse(readFileSync(path.join(INSTALLED, "package.json"), "utf8")) as { version: string };
  writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ ...manifest, version }));
  for (const part of ["lib", "build"]) symlinkSync(path.join(INSTALLED, part), path.join(pkg, part));
  return path.join(dir, "bin", "pixir.js");
}

/** The CommonJS files Node loaded (NODE_DEBUG=module names each it loads). */
const loadedFiles = (stderr: string): string[] => [...stderr.matchAll(/load "([^"]+)"/g)].map((m) => m[1]!);

describe("pixir search with the bundled and the installed better-sqlite3", () => {
  let ws: string;
  const installedVersion = (JSON.parse(readFileSync(path.join(INSTALLED, "package.json"), "utf8")) as { version: string }).version;
  beforeAll(() => {
    ws = workspace({
      s1: [user("where is parse_line defined"), assistant("parse_line lives in src/lines/codec.ts")],
      s2: [user("rename parse_line to parseLine"), assistant("done: parseLine everywhere")],
    });
  });

  it("the same version: the bundle's JavaScript with the installed addon; another version: the installed package; the same hits", () => {
    const args = ["search", "parse_line", "--json"];
    const env = { NODE_DEBUG: "module" };
    const same = run("pixir", args, { cwd: ws, env, bin: pixirBeside(installedVersion) });
    const other = run("pixir", args, { cwd: ws, env, bin: pixirBeside("0.0.0-other") });
    expect(same.code).toBe(0);
    expect(other.code).toBe(0);
    const hits = same.stdout.trim().split("\n").map((l) => JSON.parse(l) as { session_id: string; seq: number });
    expect(hits.map((h) => [h.session_id, h.seq]).sort()).toEqual([["s1", 0], ["s1", 1], ["s2", 0]]);
    expect(other.stdout).toBe(same.stdout);
    // Which JavaScript drove the addon: none of the package's files for the bundle, its own for the other version.
    const packageFile = (f: string) => f.includes(path.join("node_modules", "better-sqlite3")) && f.endsWith(".js");
    expect(loadedFiles(same.stderr).filter(packageFile)).toEqual([]);
    expect(loadedFiles(other.stderr).filter(packageFile).length).toBeGreaterThan(0);
    expect(loadedFiles(same.stderr).some((f) => f.endsWith("better_sqlite3.node"))).toBe(true);
    expect(loadedFiles(other.stderr).some((f) => f.endsWith(path.join("lib", "database.js")))).toBe(true);
  });
});

/** The builtins a run of `pixir args` loaded beyond what Node itself loads at start (process.moduleLoadList). */
function builtinsLoaded(args: string[], cwd: string): string[] {
  const preload = path.join(tempDir("pixir-preload-"), "modules.cjs");
  writeFileSync(preload, `const before = new Set(process.moduleLoadList);\nprocess.on("exit", () => process.stderr.write(JSON.stringify(process.moduleLoadList.filter((m) => !before.has(m)))));\n`);
  const r = spawnSync(process.execPath, ["--require", preload, binPath("pixir"), ...args], { cwd, encoding: "utf8" });
  expect(r.status).toBe(0);
  return (JSON.parse(r.stderr) as string[]).filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice("NativeModule ".length));
}

describe("what a search of unchanged Logs loads", () => {
  it("neither node:crypto nor node:worker_threads; a search after an append hashes, and finds the new Event", () => {
    const ws = workspace({ s1: [user("the first words"), assistant("more words")] });
    expect(run("pixir", ["search", "words", "--json"], { cwd: ws }).code).toBe(0);
    const unchanged = builtinsLoaded(["search", "words", "--json"], ws);
    expect(unchanged.filter((m) => /^(crypto|worker_threads|internal\/crypto\/)/.test(m))).toEqual([]);
    expect(run("pixir", ["append", "s1", "--json"], { cwd: ws, input: `${JSON.stringify(user("appended lately"))}\n` }).code).toBe(0);
    expect(builtinsLoaded(["search", "lately", "--json"], ws)).toContain("crypto");
    const hits = run("pixir", ["search", "lately", "--json"], { cwd: ws }).stdout.trim().split("\n").map((l) => JSON.parse(l) as { seq: number });
    expect(hits.map((h) => h.seq)).toEqual([2]);
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
