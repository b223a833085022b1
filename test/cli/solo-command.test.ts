// `pixir-log append` is one self-contained module (scripts/build.mjs, SOLO_COMMANDS): Node 20's ES module
// loader costs 2–3 ms a module, and an append must finish within 50 ms of start-up (docs/performance.md).
// These tests pin that layout, and that errors raised inside the bundle reach the runner intact.
import { builtinModules } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, run, start, tempDir, user } from "../support/cli.js";

const dist = path.join(ROOT, "tools", "pixir-log", "dist");
const line = (e: object) => `${JSON.stringify(e)}\n`;

describe("pixir-log append is built as one module", () => {
  it("main.js loads ./commands/append.js, which imports nothing but Node's builtins", () => {
    expect(readFileSync(path.join(dist, "main.js"), "utf8")).toContain('import("./commands/append.js")');
    const bundle = readFileSync(path.join(dist, "commands", "append.js"), "utf8");
    const specifiers = [...bundle.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"'\n;]*?(?:from\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2]!);
    expect(specifiers.length).toBeGreaterThan(0);
    const builtins = new Set(builtinModules);
    const foreign = specifiers.filter((s) => !s.startsWith("node:") && !builtins.has(s));
    expect(foreign).toEqual([]);
  });
});

describe("pixir ls, usage and search are built as one module each", () => {
  it("main.js loads each, which imports nothing but Node's builtins and the SQLite addon", () => {
    const pixirDist = path.join(ROOT, "tools", "pixir", "dist");
    const main = readFileSync(path.join(pixirDist, "main.js"), "utf8");
    const builtins = new Set(builtinModules);
    for (const command of ["ls", "usage", "search"]) {
      expect(main).toContain(`import("./commands/${command}.js")`);
      const bundle = readFileSync(path.join(pixirDist, "commands", `${command}.js`), "utf8");
      const specifiers = [...bundle.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"'\n;]*?(?:from\s*)?["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g)].map((m) => m[1] ?? m[2]!);
      expect(specifiers.filter((s) => !s.startsWith("node:") && !builtins.has(s) && s !== "better-sqlite3")).toEqual([]);
    }
  });

  it("a usage error inside the ls and usage bundles keeps its exit code", () => {
    const ws = tempDir();
    expect(run("pixir", ["usage", "--by", "bogus", "--json"], { cwd: ws }).code).toBe(2);
    expect(run("pixir", ["ls", "--kind", "bogus", "--json"], { cwd: ws }).code).toBe(2);
  });
});

describe("every tool's main.js is one module", () => {
  it("imports nothing statically but Node's builtins: its chunks are inside it, the commands' chunks loaded when they run", () => {
    const builtins = new Set(builtinModules);
    for (const tool of ["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"]) {
      const main = readFileSync(path.join(ROOT, "tools", tool, "dist", "main.js"), "utf8");
      const statics = [...main.matchAll(/(?:^|\n)\s*(?:import|export)\b[^"'\n;(]*?(?:from\s*)?["']([^"']+)["']/g)].map((m) => m[1]!);
      expect(statics.filter((s) => !s.startsWith("node:") && !builtins.has(s)), tool).toEqual([]);
      expect(main, tool).toMatch(/import\("\.\/chunks\//);
    }
  });
});

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
