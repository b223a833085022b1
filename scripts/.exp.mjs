import { build } from "esbuild";
import path from "node:path";
const root = "/work/wt-25";
const alias = { "@pixir/envelope/cli": path.join(root, "lib/envelope/src/cli.ts"), "@pixir/envelope": path.join(root, "lib/envelope/src/index.ts") };
for (const t of ["pixir-log", "pixir-fork"]) {
  await build({ bundle: true, platform: "node", format: "esm", target: "node20", splitting: false, alias, entryPoints: { main: path.join(root, `tools/${t}/src/main.ts`) }, outdir: `/tmp/exp/${t}/dist`, define: { __PIXIR_VERSION__: '"0.1.0"' }, logLevel: "error",
    banner: { js: "import { createRequire as __pixirCreateRequire } from 'node:module'; const require = __pixirCreateRequire(import.meta.url);" },
    plugins: [{ name: "ext", setup(b) { b.onResolve({ filter: /^\.\/commands\// }, (a) => ({ path: a.path, external: true })); } }] });
}
