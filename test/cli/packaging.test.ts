// Packaging as users get it: every package packed with `pnpm pack` (the tools by scripts/pack-tools.mjs,
// once per run for this file and install.test.ts: test/support/packs.ts), the tool tarballs installed with
// plain `npm install` into an empty directory, and every installed bin run. Offline, with an empty npm
// cache: the tools bundle everything they run, and their one declared runtime dependency (yargs, with
// its own) is installed from tarballs packed from pnpm's copies (scripts/pack-deps.mjs).
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../support/cli.js";
import { sharedPacks } from "../support/packs.js";

const TOOLS = ["pixir-log", "pixir-fork", "pixir-summarize", "pixir-tree", "pixir"] as const;

/** The pnpm that runs this suite (npm_execpath under `pnpm test`), else one on PATH. */
function pnpmCommand(): string[] | null {
  const execpath = process.env.npm_execpath;
  if (execpath && /pnpm/.test(execpath)) return [process.execPath, execpath];
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? ["pnpm"] : null;
}

const pnpm = pnpmCommand();

describe.skipIf(pnpm === null)("packed packages install and run with plain npm", () => {
  it("packs every package with bin, files, exports and a README; the tools install offline and run", () => {
    const packs = tempDir("pixir-pack-");
    const shared = sharedPacks();
    const tarballs: Record<string, string> = {};
    for (const dir of ["lib/envelope", ...TOOLS.map((t) => `tools/${t}`)]) {
      const pkgDir = path.join(ROOT, dir);
      const pkg = JSON.parse(readFileSync(path.join(pkgDir, "package.json"), "utf8"));
      expect(pkg.exports, dir).toBeDefined();
      expect(pkg.files, dir).toContain("README.md");
      expect(existsSync(path.join(pkgDir, "README.md")), dir).toBe(true);
      expect(readFileSync(path.join(pkgDir, "README.md"), "utf8")).toMatch(/```sh|```ts/);
      if (dir.startsWith("tools/")) expect(pkg.bin, dir).toEqual({ [path.basename(dir)]: `./bin/${path.basename(dir)}.js` });
      // The tools as scripts/pack-tools.mjs packs them (`pnpm pack` each, once per run: test/support/packs.ts);
      // the library here, the same way. The bundles are already built by the test command; prepack's rebuild is skipped.
      let tgz = path.join(shared.dir, "packs", `${pkg.name}-${pkg.version}.tgz`);
      if (!dir.startsWith("tools/")) {
        const [cmd, ...pre] = pnpm!;
        const out = execFileSync(cmd!, [...pre, "pack", "--pack-destination", packs, "--config.ignore-scripts=true"], { cwd: pkgDir, encoding: "utf8" });
        const name = readdirSync(packs).find((f) => f.startsWith(pkg.name.replace("@", "").replace("/", "-")));
        expect(name, `${dir}: ${out}`).toBeDefined();
        tgz = path.join(packs, name!);
      }
      expect(existsSync(tgz), tgz).toBe(true);
      tarballs[pkg.name] = tgz;
      const listing = execFileSync("tar", ["-tzf", tgz], { encoding: "utf8" });
      expect(listing).toContain("package/README.md");
      // The license the manifest names ships with every package.
      expect(pkg.license, dir).toBe("MIT");
      expect(listing).toContain("package/LICENSE");
      expect(readFileSync(path.join(pkgDir, "LICENSE"), "utf8")).toBe(readFileSync(path.join(ROOT, "LICENSE"), "utf8"));
      expect(listing).toContain("package/dist/");
      // Workspace protocol versions must not leak into a published manifest.
      const manifest = execFileSync("tar", ["-xzOf", tgz, "package/package.json"], { encoding: "utf8" });
      expect(manifest).not.toContain("workspace:");
      // yargs is bundled into the bins and declared as what it is: a runtime dependency. better-sqlite3, a
      // native addon that cannot be bundled, is the wrapper's other one (the search index, the opencode import).
      const sqlite = dir === "tools/pixir" ? { "better-sqlite3": expect.stringMatching(/^\^12\./) } : {};
      if (dir.startsWith("tools/")) expect(JSON.parse(manifest).dependencies, dir).toEqual({ yargs: expect.stringMatching(/^\^17\./), ...sqlite });
    }
    const dependencies = shared.deps;
    expect(dependencies.map((t) => path.basename(t))).toEqual(expect.arrayContaining(["yargs.tgz", "cliui.tgz", "better-sqlite3.tgz"]));

    const app = tempDir("pixir-install-");
    writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "consumer", private: true }));
    const install = spawnSync("npm", ["install", "--offline", "--ignore-scripts", "--no-audit", "--no-fund", "--cache", tempDir("pixir-npm-cache-"), ...TOOLS.map((t) => tarballs[t]!), ...dependencies], {
      cwd: app,
      encoding: "utf8",
    });
    expect(install.status, install.stderr).toBe(0);

    const bin = (t: string) => path.join(app, "node_modules", ".bin", t);
    for (const t of TOOLS) {
      const help = spawnSync(bin(t), ["--help"], { cwd: app, encoding: "utf8" });
      expect(help.status, t).toBe(0);
      expect(help.stdout, t).toContain("Usage:");
      const completion = spawnSync(bin(t), ["completion"], { cwd: app, encoding: "utf8", env: { ...process.env, SHELL: "/bin/bash" } });
      expect(completion.stdout, t).toContain(`${t} --get-yargs-completions`);
      const version = spawnSync(bin(t), ["--version"], { cwd: app, encoding: "utf8" });
      expect(version.stdout, t).toMatch(/^\d+\.\d+\.\d+/);
    }
    const appended = spawnSync(bin("pixir-log"), ["append", "s1", "--json"], { cwd: app, input: '{"type":"user_message","data":{"text":"hi"}}\n', encoding: "utf8" });
    expect(JSON.parse(appended.stdout)).toMatchObject({ ok: true, first_seq: 0 });
    const viaWrapper = spawnSync(bin("pixir"), ["append", "s1", "--json"], { cwd: app, input: '{"type":"assistant_message","data":{"text":"yo"}}\n', encoding: "utf8" });
    expect(JSON.parse(viaWrapper.stdout)).toMatchObject({ ok: true, first_seq: 1 });
    const forked = spawnSync(bin("pixir"), ["fork", "s1", "--summarize", "--child-id", "c1", "--json"], { cwd: app, encoding: "utf8" });
    expect(JSON.parse(forked.stdout)).toMatchObject({ ok: true, recorded: true, summarize: true });
    const tree = spawnSync(bin("pixir-tree"), ["s1", "--json"], { cwd: app, encoding: "utf8" });
    expect(JSON.parse(tree.stdout).tree.forks[0].child_session_id).toBe("c1");
    // The native addon of the search index loads from the installed copy.
    const searched = spawnSync(bin("pixir"), ["search", "yo", "--json"], { cwd: app, encoding: "utf8" });
    expect(searched.status, searched.stderr).toBe(0);
    expect(searched.stdout).toContain('"session_id":"s1"');
    // The forest's worker threads ship with the packages and run from an npm install.
    for (const t of ["pixir-tree", "pixir"]) {
      const args = t === "pixir" ? ["tree", "--json"] : ["--json"];
      const forest = spawnSync(bin(t), args, { cwd: app, encoding: "utf8", env: { ...process.env, PIXIR_SCAN_THREADS: "2", PIXIR_DEBUG: "1" } });
      expect(forest.status, t).toBe(0);
      expect(JSON.parse(forest.stdout).forest.map((n: any) => n.session_id), t).toEqual(["s1"]);
      expect(forest.stderr, t).toMatch(/^pixir[- ]tree: read 2 Logs on 2 threads;/m);
    }
  }, 180_000);
});
