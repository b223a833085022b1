import { build } from "esbuild";
import path from "node:path";
const root = "/work/wt-25";
const alias = { "@pixir/envelope/cli": path.join(root, "lib/envelope/src/cli.ts"), "@pixir/envelope": path.join(root, "lib/envelope/src/index.ts") };
const r = await build({ bundle: true, platform: "node", format: "esm", target: "node20", splitting: false, alias, entryPoints: { main: path.join(root, `tools/pixir-log/src/main.ts`) }, outdir: `/tmp/exp2`, write: false, metafile: true, define: { __PIXIR_VERSION__: '"0.1.0"' }, logLevel: "error",
    plugins: [{ name: "ext", setup(b) { b.onResolve({ filter: /^\.\/commands\// }, (a) => ({ path: a.path, external: true })); } }] });
const o = Object.values(r.metafile.outputs)[0];
let yargs = 0, ours = 0;
for (const [f, v] of Object.entries(o.inputs).sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)) { if (f.includes("node_modules")) yargs += v.bytesInOutput; else { ours += v.bytesInOutput; console.log(v.bytesInOutput, f); } }
console.log("deps", yargs, "ours", ours);
