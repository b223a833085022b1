#!/usr/bin/env node
// The five tools as npm tarballs (README "Install"): one build, then `pnpm pack` of each tool into
// packs/ (or --out DIR), named <tool>-<version>.tgz. Prints each tarball's path on stdout.
//   node scripts/pack-tools.mjs [--out DIR] [--no-build]   (--no-build: the bundles are built already)
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const TOOLS = ["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"];
const at = process.argv.indexOf("--out");
const out = path.resolve(at > 0 ? process.argv[at + 1] ?? "" : path.join(root, "packs"));

// `pnpm pack` runs from the pnpm that started this script (npm_execpath), else the one on PATH.
const pnpm = process.env.npm_execpath && /pnpm/.test(process.env.npm_execpath) ? [process.execPath, process.env.npm_execpath] : ["pnpm"];

mkdirSync(out, { recursive: true });
if (!process.argv.includes("--no-build")) execFileSync(process.execPath, [path.join(root, "scripts/build.mjs")], { stdio: ["ignore", "ignore", "inherit"] });
for (const tool of TOOLS) {
  const dir = path.join(root, "tools", tool);
  // The bundles were just built: prepack's rebuild is skipped.
  execFileSync(pnpm[0], [...pnpm.slice(1), "pack", "--pack-destination", out, "--config.ignore-scripts=true"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  const { version } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  process.stdout.write(`${path.join(out, `${tool}-${version}.tgz`)}\n`);
}
