// The tools' runtime dependencies as tarballs, for an offline `npm install` of the packed tools (the
// packaging test, bench/startup.mjs): yargs and everything it depends on, packed from the copies pnpm
// installed. The tools bundle yargs, but they declare it, so npm installs it with them.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

const TOOLS = ["pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize", "pixir"];

/** The packages the tools depend on at run time, with theirs: name → the directory pnpm installed. */
export function runtimeDependencies() {
  const found = new Map();
  const visit = (dir) => {
    const real = realpathSync(dir);
    const pkg = JSON.parse(readFileSync(path.join(real, "package.json"), "utf8"));
    if (found.has(pkg.name)) return;
    found.set(pkg.name, real);
    // pnpm's layout: a package's dependencies are its siblings in .pnpm/<name>@<version>/node_modules/.
    const siblings = real.slice(0, real.lastIndexOf(`${path.sep}node_modules${path.sep}`) + "/node_modules/".length);
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(path.join(siblings, dep));
  };
  for (const toolDir of TOOLS.map((t) => path.join(root, "tools", t))) {
    const tool = JSON.parse(readFileSync(path.join(toolDir, "package.json"), "utf8"));
    for (const dep of Object.keys(tool.dependencies ?? {})) visit(path.join(toolDir, "node_modules", dep));
  }
  return found;
}

/**
 * Each runtime dependency as a tarball in `dest` (its directory under `package/`, as npm packs it), made
 * with tar from the copy pnpm installed: `npm pack` of each takes minutes here, and better-sqlite3's copy
 * carries the binary pnpm built, so an install with scripts off needs no source build. Hard links are stored
 * as files: npm does not extract a link entry, and pnpm links the addon to its copy in the build tree.
 * Returns the paths.
 */
export function packRuntimeDependencies(dest) {
  mkdirSync(dest, { recursive: true });
  return [...runtimeDependencies().entries()].map(([name, dir]) => {
    const file = path.join(dest, `${name.replace("@", "").replace("/", "-")}.tgz`);
    execFileSync("tar", ["-czf", file, "--hard-dereference", "-C", dir, "--transform", "s,^\\.,package,", "."]);
    return file;
  });
}
