#!/usr/bin/env node
// Builds every package: each tool becomes one ESM bundle (plus lazily loaded chunks)
// so that `--version` and `--help` start fast; lib/envelope gets a bundle and .d.ts files.
import { build, transform } from "esbuild";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { pageDefines } from "./page.mjs";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const tools = ["pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize", "pixir"];
const alias = {
  // The runner alone, for a binary's start (lib/envelope/src/cli.ts); the whole library for its commands.
  "@pixir/envelope/cli": path.join(root, "lib/envelope/src/cli.ts"),
  "@pixir/envelope": path.join(root, "lib/envelope/src/index.ts"),
  // yargs' search for a package.json at every start, which finds nothing we use (scripts/stubs/find-up.mjs).
  "escalade/sync": path.join(root, "scripts/stubs/find-up.mjs"),
  // yargs' checks of its own invariants, without loading node:assert at every start (scripts/stubs/assert.mjs).
  assert: path.join(root, "scripts/stubs/assert.mjs"),
  ...Object.fromEntries(tools.filter((t) => t !== "pixir").map((t) => [t, path.join(root, `tools/${t}/src/main.ts`)])),
};

const scanWorker = path.join(root, "lib/envelope/src/tree/tree-scan-worker.ts");
const checkWorker = path.join(root, "lib/envelope/src/store/check-worker.ts");
const codexStreamWorker = path.join(root, "lib/envelope/src/interop/codex/stream-worker.ts");
const claudeUnitWorker = path.join(root, "lib/envelope/src/interop/claude/unit-worker.ts");
const catalogScanWorker = path.join(root, "lib/envelope/src/archive/catalog-scan-worker.ts");

/**
 * Commands built as one self-contained module each (dist/commands/<name>.cjs) instead of sharing chunks:
 * Node 20's ES module loader spends 2–3 ms on every module it loads, and `pixir-log append` must finish
 * within 50 ms of start-up (docs/performance.md). Such a module carries its own copy of the library;
 * PixirError is recognised across copies (errors.ts), and nothing else crosses from it to the runner but
 * plain values.
 */
const SOLO_COMMANDS = { "pixir-log": ["append"], pixir: ["search", "ls", "usage"] };
// `pixir ls` and `pixir usage` (archive.md §1, §3) are solo too: on an unchanged Workspace their answer is
// a few derived files read, and loading the shared chunks (the whole library) was a third of their time.
/**
 * The modules a command line starts from, each tool's main and the solo commands, are CommonJS (`.cjs`, and
 * the bins: bin/package.json): Node 20 starts a CommonJS entry about 8 ms sooner than an ES module (the ES
 * loader's set-up, a job per module, a facade per builtin), and a search 10–20 ms sooner in all
 * (docs/performance.md, "Round 8: CommonJS start modules"). The commands' chunks stay ES modules, which
 * code splitting needs, loaded by import() when their command runs. `import.meta.url` becomes the URL of
 * the .cjs file itself, so the files found next to it (workers, the SQLite addon's package) are the same.
 */
const MODULE_URL = "__pixirModuleUrl";
const START_MODULE = {
  define: { "import.meta.url": MODULE_URL },
  // "use strict" first: the sources are ES modules, strict, and a directive after a statement is none.
  banner: { js: `"use strict"; var ${MODULE_URL} = require("node:url").pathToFileURL(__filename).href;` },
};
/** How main.cjs loads a solo command: require, which keeps the ES module loader unstarted. */
const soloImport = (command) => `import("./commands/${command}.cjs")`;
const soloRequire = (command) => `Promise.resolve().then(() => require("./commands/${command}.cjs"))`;

/** Solo commands that read the catalog: its scan worker is built next to them. */
const CATALOG_READERS = ["search", "ls", "usage"];

/** The web page of `pixir export html`, bundled first and defined into every build (scripts/page.mjs). */
const pageDefine = await pageDefines();

/**
 * yargs renders the help of the command it ran after the command's handler and keeps it, in case a
 * failure later wants it (about 5 ms of every run: its help code is compiled for nothing). The runner
 * never shows that help (a failure is our usage error; help is asked for by --help, which parses anew),
 * so the bundled yargs does not render it. The build fails if yargs' code changed under this edit.
 */
const YARGS_COMMAND = /[\\/]yargs[\\/]build[\\/]lib[\\/]command\.js$/;
const HELP_CACHE_CALL = "yargs.getInternalMethods().getUsageInstance().cacheHelpMessage();";
const noHelpCache = {
  name: "yargs-no-help-cache",
  setup(b) {
    b.onLoad({ filter: YARGS_COMMAND }, (args) => {
      const source = readFileSync(args.path, "utf8");
      if (source.split(HELP_CACHE_CALL).length !== 2) throw new Error(`${args.path}: yargs' help cache call not found once; see noHelpCache in scripts/build.mjs`);
      return { contents: source.replace(HELP_CACHE_CALL, "/* help not rendered: scripts/build.mjs noHelpCache */"), loader: "js" };
    });
  },
};

/** node:crypto through scripts/stubs/lazy-crypto.mjs, which loads it at the first call. */
const lazyCrypto = {
  name: "lazy-crypto",
  setup(b) {
    b.onResolve({ filter: /^(node:)?crypto$/ }, (args) => (args.importer.endsWith("lazy-crypto.mjs") ? undefined : { path: path.join(root, "scripts/stubs/lazy-crypto.mjs") }));
  },
};

/**
 * archive/search/sqlite-bundled.ts through scripts/stubs/sqlite-bundled.mjs in the tools: better-sqlite3's
 * JavaScript in the bundle (its addon stays the installed package's; index-db.ts uses the bundled code only
 * with an installed package of the same version). Its `bindings` search, for an addon not handed to it,
 * stays outside: index-db.ts hands it the addon, or loads the installed package.
 */
const SQLITE_STUB = path.join(root, "scripts/stubs/sqlite-bundled.mjs");
const requireFromPixir = createRequire(path.join(root, "tools/pixir/package.json"));
const bundledSqlite = {
  name: "bundled-sqlite",
  setup(b) {
    b.onResolve({ filter: /[\\/]sqlite-bundled\.js$/ }, (args) => (args.importer.includes(`${path.sep}archive${path.sep}search${path.sep}`) ? { path: SQLITE_STUB } : undefined));
    // From the stub only, the package is bundled; everywhere else it stays external (common.external).
    b.onResolve({ filter: /^better-sqlite3(\/package\.json)?$/ }, (args) => (args.importer === SQLITE_STUB ? { path: requireFromPixir.resolve(args.path) } : undefined));
  },
};

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  splitting: true,
  sourcemap: false,
  legalComments: "none",
  logLevel: "warning",
  alias,
  // A native addon cannot be bundled: better-sqlite3 is loaded from node_modules at run time (the search
  // index, the opencode import).
  external: ["better-sqlite3", "bindings"],
  plugins: [noHelpCache, lazyCrypto],
  // Some CommonJS dependencies call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __pixirCreateRequire } from 'node:module'; function require(id) { return __pixirCreateRequire(import.meta.url)(id); }" },
};

/** Build into a fresh directory, then swap it in, so a process running the old build is not cut off. */
async function intoDist(dir, write) {
  const next = path.join(dir, `dist.next-${process.pid}`);
  const old = path.join(dir, `dist.old-${process.pid}`);
  rmSync(next, { recursive: true, force: true });
  try {
    await write(next);
  } catch (err) {
    rmSync(next, { recursive: true, force: true });
    throw err;
  }
  if (existsSync(path.join(dir, "dist"))) renameSync(path.join(dir, "dist"), old);
  renameSync(next, path.join(dir, "dist"));
  rmSync(old, { recursive: true, force: true });
}

const BANNER = common.banner.js;
const TOOL_PLUGINS = [...common.plugins, bundledSqlite];

/**
 * main.cjs: main.js with the chunks it imports statically put inside it, made CommonJS (START_MODULE). Code
 * splitting gives the modules main.js shares with the commands' chunks (errors, io, the vocabulary…) chunks
 * of their own, and Node 20's ES module loader spends about a millisecond on each module it loads: five of
 * them before any command ran. The commands' chunks keep importing those chunks, so the runner and a command
 * hold copies of the modules both use, as a solo command does (SOLO_COMMANDS): only plain values and
 * PixirError (errors.ts) cross between them. Dynamic imports stay as they are. A chunk that finds files from
 * its own place (import.meta.url) cannot move into main.cjs: the build fails rather than ship one. The
 * runner's yargs half (cli/yargs-program.ts, imported only for a line the fast parser declines: help,
 * version, a usage error) is made one ES module the same way, so such a line loads one chunk, not four.
 */
async function selfContainedMain(outdir) {
  await selfContained(path.join(outdir, "main.js"), { start: true });
  const yargsChunk = readdirSync(path.join(outdir, "chunks")).filter((f) => /^yargs-program-\w+\.js$/.test(f));
  if (yargsChunk.length !== 1) throw new Error(`${outdir}: expected one yargs-program chunk, found ${yargsChunk.length}`);
  await selfContained(path.join(outdir, "chunks", yargsChunk[0]));
}

/**
 * `file` rebuilt with the chunks it imports statically inside it; its dynamic imports stay. As a start
 * module (START_MODULE) it becomes `<name>.cjs`, the chunks' ESM banner left out: CommonJS has its require.
 */
async function selfContained(file, { start = false } = {}) {
  const split = file.replace(/\.js$/, ".split.js");
  renameSync(file, split);
  const moved = [];
  const noBanner = {
    name: "no-esm-banner",
    setup(b) {
      b.onLoad({ filter: /\.js$/ }, (args) => ({ contents: readFileSync(args.path, "utf8").replace(BANNER, ""), loader: "js" }));
    },
  };
  await build({
    entryPoints: [split],
    bundle: true,
    platform: "node",
    target: "node20",
    ...(start ? { ...START_MODULE, format: "cjs", outfile: file.replace(/\.js$/, ".cjs") } : { format: "esm", outfile: file }),
    legalComments: "none",
    logLevel: "warning",
    plugins: [
      ...(start ? [noBanner] : []),
      {
        name: "static-chunks-only",
        setup(b) {
          b.onResolve({ filter: /^\.\.?\// }, (args) => {
            if (args.kind === "dynamic-import") return { path: args.path, external: true };
            moved.push(path.join(args.resolveDir, args.path));
            return undefined;
          });
        },
      },
    ],
  });
  rmSync(split);
  for (const chunk of moved) {
    if (readFileSync(chunk, "utf8").replace(BANNER, "").includes("import.meta.url")) throw new Error(`${chunk} uses import.meta.url and cannot be put inside ${path.basename(file)}`);
  }
}

async function buildTool(name) {
  const dir = path.join(root, "tools", name);
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const define = { ...pageDefine, __PIXIR_VERSION__: JSON.stringify(pkg.version), __PIXIR_PROGRAM__: JSON.stringify(name) };
  const solo = SOLO_COMMANDS[name] ?? [];
  const mainFile = path.join(dir, "src/main.ts");
  // The tool's own `import("./commands/<solo>.js")` loads dist/commands/<solo>.cjs, built below.
  const keepSoloImports = {
    name: "solo-commands",
    setup(b) {
      b.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (args) =>
        args.importer === mainFile && solo.includes(path.basename(args.path, ".js")) ? { path: args.path.replace(/\.js$/, ".cjs"), external: true } : undefined,
      );
    },
  };
  await intoDist(dir, async (outdir) => {
    await build({
      ...common,
      // The workers of the parallel Log scan and check and of the Codex import live next to the chunks that
      // start them (lib/envelope/src/tree/tree-scan.ts, store/log-read.ts, interop/codex/stream.ts).
      entryPoints: { main: mainFile, "chunks/tree-scan-worker": scanWorker, "chunks/check-worker": checkWorker, "chunks/codex-stream-worker": codexStreamWorker, "chunks/claude-unit-worker": claudeUnitWorker, "chunks/catalog-scan-worker": catalogScanWorker },
      outdir,
      chunkNames: "chunks/[name]-[hash]",
      define,
      plugins: [...TOOL_PLUGINS, keepSoloImports],
    });
    for (const command of solo) {
      await build({ ...common, plugins: TOOL_PLUGINS, ...START_MODULE, format: "cjs", outExtension: { ".js": ".cjs" }, splitting: false, entryPoints: { [`commands/${command}`]: path.join(dir, `src/commands/${command}.ts`) }, outdir, define: { ...define, ...START_MODULE.define } });
    }
    // A solo command that reads the catalog starts its scan workers from its own folder (catalog.ts).
    if (solo.some((c) => CATALOG_READERS.includes(c))) await build({ ...common, splitting: false, entryPoints: { "commands/catalog-scan-worker": catalogScanWorker }, outdir, define });
    await selfContainedMain(outdir);
    let built = readFileSync(path.join(outdir, "main.cjs"), "utf8");
    for (const command of solo) {
      if (built.split(soloImport(command)).length < 2) throw new Error(`${name}: main.cjs does not import ./commands/${command}.cjs`);
      built = built.replaceAll(soloImport(command), soloRequire(command));
    }
    writeFileSync(path.join(outdir, "main.cjs"), built);
    for (const file of startModules(outdir)) await asciiOnly(file);
  });
}

/** The CommonJS modules a command line starts from: main.cjs and the solo commands. */
function startModules(outdir) {
  const commands = path.join(outdir, "commands");
  const solo = existsSync(commands) ? readdirSync(commands).filter((f) => f.endsWith(".cjs")) : [];
  return [path.join(outdir, "main.cjs"), ...solo.map((f) => path.join(commands, f))];
}

/**
 * A start module made pure ASCII. esbuild escapes every non-ASCII character of code (its default
 * charset), but copies the comments it keeps as they are, and one `§` in a comment has Node read the whole
 * file as UTF-16 and V8 scan it two bytes a character: about 8 million instructions of a search
 * (docs/performance.md, "Round 12"). Such characters are escaped; the build fails unless the code without
 * comments is unchanged by it, that is unless every one of them stood in a comment.
 */
async function asciiOnly(file) {
  const source = readFileSync(file, "utf8");
  if (/^[\x00-\x7f]*$/.test(source)) return;
  const ascii = source.replace(/[^\x00-\x7f]/gu, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
  const code = async (text) => (await transform(text, { minifyWhitespace: true, loader: "js", format: "cjs" })).code;
  if ((await code(ascii)) !== (await code(source))) throw new Error(`${file}: a non-ASCII character outside a comment; see asciiOnly in scripts/build.mjs`);
  writeFileSync(file, ascii);
}

async function buildLibrary() {
  const dir = path.join(root, "lib/envelope");
  rmSync(path.join(dir, "dist"), { recursive: true, force: true });
  await build({
    ...common,
    splitting: false,
    entryPoints: { index: path.join(dir, "src/index.ts"), cli: path.join(dir, "src/cli.ts"), "tree-scan-worker": scanWorker, "check-worker": checkWorker, "codex-stream-worker": codexStreamWorker, "claude-unit-worker": claudeUnitWorker, "catalog-scan-worker": catalogScanWorker },
    outdir: path.join(dir, "dist"),
    packages: "external",
    define: pageDefine,
  });
  execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", path.join(dir, "tsconfig.build.json")], { stdio: "inherit" });
}

// Every build runs to its end before a failure is reported, so none is cut off half-written.
const results = await Promise.allSettled([buildLibrary(), ...tools.filter((t) => existsSync(path.join(root, "tools", t, "src/main.ts"))).map(buildTool)]);
const failed = results.find((r) => r.status === "rejected");
if (failed !== undefined) {
  process.stderr.write(`build failed: ${failed.reason instanceof Error ? failed.reason.message : String(failed.reason)}\n`);
  process.exit(1);
}
