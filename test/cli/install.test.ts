// README "Install", run as written into a temporary npm prefix (HOME is a temp directory, so "$HOME/.local"
// is too), then every tool run from another directory. Offline: the tools' runtime dependencies are given
// as tarballs too, made with tar from the copies pnpm installed (npm pack of each takes minutes here), with
// install scripts off: better-sqlite3's tarball carries the binary pnpm built, as its source build takes
// minutes; the linked workspace packages use that binary in place.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../support/cli.js";
import { sharedPacks } from "../support/packs.js";

const TOOLS = ["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"] as const;

/** The README's Install section: its shell block's lines and its prose. */
function installSection(): { lines: string[]; prose: string } {
  const readme = readFileSync(path.join(ROOT, "README.md"), "utf8");
  const at = readme.indexOf("\n## Install\n");
  expect(at).toBeGreaterThan(0);
  const section = readme.slice(at, readme.indexOf("\n## ", at + 5));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return { lines: block.split("\n").map((l) => l.replace(/\s+#.*$/, "")), prose: section.replace(/```sh[\s\S]*?```/, "").replace(/\s+/g, " ") };
}

const npmEnv = (home: string, extra: Record<string, string> = {}) => ({
  ...process.env,
  HOME: home,
  npm_config_offline: "true",
  npm_config_cache: path.join(home, ".npm"),
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_update_notifier: "false",
  ...extra,
});

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv) {
  const r = spawnSync("sh", ["-c", command], { cwd, env, encoding: "utf8" });
  expect(r.status, `${command}\n${r.stderr}`).toBe(0);
  return r;
}

/** Every tool on PATH from $HOME/.local/bin, run in an empty directory elsewhere. */
function toolsRunFromElsewhere(home: string): void {
  const elsewhere = tempDir("pixir-elsewhere-");
  const env = { ...process.env, HOME: home, PATH: `${path.join(home, ".local", "bin")}${path.delimiter}${process.env.PATH}` };
  for (const t of TOOLS) {
    expect(existsSync(path.join(home, ".local", "bin", t)), t).toBe(true);
    const r = spawnSync(t, ["--version"], { cwd: elsewhere, env, encoding: "utf8" });
    expect(r.status, `${t}: ${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  }
  const appended = spawnSync("pixir-log", ["append", "s1", "--json"], { cwd: elsewhere, env, input: '{"type":"user_message","data":{"text":"hi"}}\n', encoding: "utf8" });
  expect(JSON.parse(appended.stdout)).toMatchObject({ ok: true, first_seq: 0 });
  const listed = spawnSync("pixir", ["log", "ls"], { cwd: elsewhere, env, encoding: "utf8" });
  expect(listed.stdout).toContain("s1");
  // The search loads better-sqlite3 from the installed package (its JavaScript and its addon).
  const found = spawnSync("pixir", ["search", "hi", "--json"], { cwd: elsewhere, env, encoding: "utf8" });
  expect(found.status, found.stderr).toBe(0);
  expect(JSON.parse(found.stdout)).toMatchObject({ session_id: "s1", seq: 0 });
}

describe("README Install", () => {
  const { lines, prose } = installSection();
  const linkLine = lines.find((l) => l.startsWith('npm install -g --prefix "$HOME/.local" ./tools/'))!;
  const packLine = lines.find((l) => l.startsWith('npm install -g --prefix "$HOME/.local" ./packs/'))!;

  it("names all five tools and the native build's needs", () => {
    for (const t of TOOLS) expect(linkLine).toContain(`./tools/${t}`);
    expect(packLine).toBe('npm install -g --prefix "$HOME/.local" ./packs/*.tgz');
    expect(lines).toContain('export PATH="$HOME/.local/bin:$PATH"');
    expect(lines.some((l) => l.includes("run pack:tools"))).toBe(true);
    expect(prose).toContain("export npm_config_nodedir=/usr");
  });

  it("linking the workspace packages puts every tool on PATH under the prefix", { timeout: 60_000 }, () => {
    const home = tempDir("pixir-home-");
    sh(linkLine, ROOT, npmEnv(home));
    toolsRunFromElsewhere(home);
  });

  it("the packed tarballs install under the prefix, and npx runs one tool from its tarball", { timeout: 300_000 }, () => {
    const home = tempDir("pixir-home-");
    // scripts/pack-tools.mjs and the dependencies' tarballs, once per run (shared with packaging.test.ts).
    const { dir: work, toolsOutput, deps } = sharedPacks();
    expect(toolsOutput.trim().split("\n").map((f) => path.basename(f))).toEqual(TOOLS.map((t) => `${t}-0.1.0.tgz`));
    expect(deps.length).toBeGreaterThan(0);
    sh(`${packLine} ./deps/*.tgz`, work, npmEnv(home, { npm_config_ignore_scripts: "true" }));
    toolsRunFromElsewhere(home);

    const npx = /`(npx --yes --package \.\/packs\/(pixir-log-[\d.]+\.tgz) pixir-log --help)`/.exec(prose);
    expect(npx, "the npx line of the Install section").not.toBeNull();
    const withDeps = npx![1]!.replace(" pixir-log --help", `${deps.map((d) => ` --package ./deps/${path.basename(d)}`).join("")} pixir-log --help`);
    const help = sh(withDeps, work, npmEnv(tempDir("pixir-home-"), { npm_config_ignore_scripts: "true" }));
    expect(help.stdout).toContain("Usage: pixir-log");
  });
});
