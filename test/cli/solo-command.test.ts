// `pixir-log append` is one self-contained module (scripts/build.mjs, SOLO_COMMANDS): Node 20's ES module
// loader costs 2–3 ms a module, and an append must finish within 50 ms of start-up (docs/performance.md).
// Each tool's main and the solo commands are CommonJS (START_MODULE), required, so that a command line that
// runs one never starts the ES module loader. These tests pin that layout, and that errors raised inside the
// bundle reach the runner intact.
import { builtinModules } from "node:module";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, run, start, tempDir, user } from "../support/cli.js";

const dist = path.join(ROOT, "tools", "pixir-log", "dist");
const line = (e: object) => `${JSON.stringify(e)}\n`;

describe("pixir-log append is built as one module", () => {
  it("main.cjs requires ./commands/append.cjs, which requires nothing but Node's builtins", () => {
    expect(readFileSync(path.join(dist, "main.cjs"), "utf8")).toContain('require("./commands/append.cjs")');
    const bundle = readFileSync(path.join(dist, "commands", "append.cjs"), "utf8");
    const specifiers = loadedBy(bundle);
    expect(specifiers.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    const foreign = specifiers.filter((s) => !s.startsWith("node:") && !builtins.has(s));
    expect(foreign).toEqual([]);
  });
});

describe("pixir ls, usage and search are built as one module each", () => {
  it("main.cjs requires each, which requires nothing but Node's builtins and the SQLite addon", () => {
    const pixirDist = path.join(ROOT, "tools", "pixir", "dist");
    const main = readFileSync(path.join(pixirDist, "main.cjs"), "utf8");
    const builtins = new Set(builtinModules);
    for (const command of ["ls", "usage", "search"]) {
      expect(main).toContain(`require("./commands/${command}.cjs")`);
      const bundle = readFileSync(path.join(pixirDist, "commands", `${command}.cjs`), "utf8");
      const specifiers = loadedBy(bundle);
      expect(specifiers.length).toBeGreaterThan(0);
      // `bindings`: better-sqlite3's own search for its addon, required only where the addon is not in its place.
      expect(specifiers.filter((s) => !s.startsWith("node:") && !builtins.has(s) && s !== "better-sqlite3" && s !== "bindings")).toEqual([]);
    }
  });

  it("a usage error inside the ls and usage bundles keeps its exit code", () => {
    const ws = tempDir();
    expect(run("pixir", ["usage", "--by", "bogus", "--json"], { cwd: ws }).code).toBe(2);
    expect(run("pixir", ["ls", "--kind", "bogus", "--json"], { cwd: ws }).code).toBe(2);
  });
});

describe("every tool's main.cjs is one CommonJS module", () => {
  it("requires nothing but Node's builtins and its solo commands: its chunks are inside it, the commands' chunks imported when they run", () => {
    const builtins = new Set(builtinModules);
    for (const tool of ["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"]) {
      const main = readFileSync(path.join(ROOT, "tools", tool, "dist", "main.cjs"), "utf8");
      expect(main.startsWith('"use strict";'), tool).toBe(true);
      expect(main, tool).not.toMatch(/(?:^|\n)\s*(?:import|export)\s[^(]/);
      const required = [...main.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1]!);
      expect(required.filter((s) => !s.startsWith("node:") && !builtins.has(s) && !/^\.\/commands\/[\w-]+\.cjs$/.test(s)), tool).toEqual([]);
      expect(main, tool).toMatch(/import\("\.\/chunks\//);
    }
  });

  it("the start modules are pure ASCII, so that Node reads them as one byte a character (scripts/build.mjs asciiOnly)", () => {
    const starts = [
      ...["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"].map((tool) => path.join(ROOT, "tools", tool, "dist", "main.cjs")),
      ...["ls", "usage", "search"].map((c) => path.join(ROOT, "tools", "pixir", "dist", "commands", `${c}.cjs`)),
      path.join(dist, "commands", "append.cjs"),
    ];
    for (const file of starts) expect(readFileSync(file).some((byte) => byte > 0x7f), file).toBe(false);
    // The sources do hold non-ASCII characters in comments that esbuild keeps: the test would pass for nothing otherwise.
    expect(readFileSync(path.join(ROOT, "lib/envelope/src/archive/model-calls.ts"), "utf8")).toMatch(/[^\x00-\x7f]/);
  });

  it("a solo command's run never starts the ES module loader; another command's does", () => {
    // The loader's module jobs are loaded only once it loads a module (a command's chunk, an ES entry).
    const probe = path.join(tempDir(), "probe.cjs");
    writeFileSync(probe, 'process.argv.splice(1, 1); process.on("exit", () => process.stderr.write("\\nES loader: " + process.moduleLoadList.includes("NativeModule internal/modules/esm/module_job") + "\\n")); require(process.argv[1]);\n');
    const ws = tempDir();
    const loader = (tool: string, args: string[], input = "") => spawnSync(process.execPath, [probe, path.join(ROOT, "tools", tool, "bin", `${tool}.js`), ...args], { cwd: ws, encoding: "utf8", input }).stderr;
    expect(loader("pixir-log", ["append", "s"], line(user("where is parse_line defined")))).toContain("ES loader: false");
    expect(loader("pixir", ["ls", "--json"])).toContain("ES loader: false");
    expect(loader("pixir", ["usage", "--json"])).toContain("ES loader: false");
    expect(loader("pixir", ["search", "anything", "--json"])).toContain("ES loader: false");
    expect(loader("pixir", ["--version"])).toContain("ES loader: false");
    expect(loader("pixir", ["tree", "--json"])).toContain("ES loader: true");
    expect(loader("pixir", ["--version", "--json"])).toContain("ES loader: true");
  });
});

/** The modules a bundle loads: require(), import() and ES import/export statements. */
function loadedBy(bundle: string): string[] {
  return [...bundle.matchAll(/\brequire\(\s*["']([^"']+)["']\s*\)|(?:^|\n)\s*(?:import|export)\b[^"'\n;(]*?(?:from\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

describe("errors thrown inside the append bundle keep their kind and exit code", () => {
  it("a held lease is session_writer_active, exit 5; a bad line is corrupt_log_line, exit 1", async () => {
    const ws = tempDir();
    expect(run("pixir-log", ["append", "s"], { cwd: ws, input: line(user("first")) }).code).toBe(0);
    // A writer that holds the lease while it waits for its stdin.
    const holder = start("pixir-log", ["append", "s"], { cwd: ws });
    try {
      for (let i = 0; i < 100 && run("pixir", ["lock", "status", "s", "--json"], { cwd: ws }).json?.lease?.state !== "active"; i++) await new Promise((r) => setTimeout(r, 50));
      const busy = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: line(user("second")) });
      expect(busy.code).toBe(5);
      expect(busy.json.error.kind).toBe("session_writer_active");
    } finally {
      holder.child.stdin.end(line(user("held")));
      await holder.done;
    }
    const bad = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: line({ type: "no_such_type", data: {} }) });
    expect(bad.code).toBe(1);
    expect(bad.json.error).toMatchObject({ kind: "corrupt_log_line", details: { reason: "unknown_event_type" } });
    expect(bad.stderr).not.toContain("internal_error");
  });
});
