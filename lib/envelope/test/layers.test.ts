// The folders of lib/envelope/src are layers (docs/architecture.md): a folder imports only folders below
// it, so a reader can learn the library bottom up and a change to one layer cannot reach down. This test
// reads every import and export-from in the sources and fails on an import that climbs, one between two
// folders of the same height, a folder with no place in the order, and on `export *` and `export let`.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../src/", import.meta.url));

/** Bottom up. A folder may import a folder of a lower height; folders of one height are independent. */
const HEIGHT: Record<string, number> = {
  event: 0,
  lines: 1,
  fast: 2,
  store: 3,
  summary: 4,
  tree: 4,
  fork: 5,
  session: 6,
  "interop/*": 7,
  archive: 8,
  view: 9,
  cli: 10,
};

/** The layer a source file belongs to: its first folder, or `interop/<agent>`; "" for a top file. */
function layerOf(file: string): string {
  const parts = path.relative(SRC, file).split(path.sep);
  if (parts.length === 1) return "";
  return parts[0] === "interop" && parts.length > 2 ? `interop/${parts[1]}` : parts[0]!;
}

function heightOf(layer: string): number | undefined {
  return HEIGHT[layer] ?? (layer.startsWith("interop/") ? HEIGHT["interop/*"] : undefined);
}

function sources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) sources(p, out);
    else if (entry.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** The relative modules a file imports or re-exports (static, type-only and dynamic). */
function importsOf(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) found.push(m[1]!);
  return found;
}

const files = sources(SRC);

describe("the layers of lib/envelope/src", () => {
  it("give every folder a place in the order and keep at most three files at the top", () => {
    const layers = new Set(files.map(layerOf));
    const unplaced = [...layers].filter((l) => l !== "" && heightOf(l) === undefined);
    expect(unplaced).toEqual([]);
    expect(files.filter((f) => layerOf(f) === "").length).toBeLessThanOrEqual(3);
  });

  it("import only downwards between folders", () => {
    const wrong: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        const to = layerOf(path.resolve(path.dirname(file), spec));
        if (from === "" || to === from) continue;
        const a = heightOf(from);
        const b = heightOf(to);
        if (to === "" || a === undefined || b === undefined || b >= a) wrong.push(`${path.relative(SRC, file)} → ${spec} (${from} may not import ${to || "a top file"})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("name every export: no `export *`, no `export let`", () => {
    const wrong: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/^\s*export\s+(\*|let\b)/gm)) wrong.push(`${path.relative(SRC, file)}: export ${m[1]}`);
    }
    expect(wrong).toEqual([]);
  });

  it("keep no module-level `let` in fast/: a twin returns what it found, in a record its reader owns", () => {
    const wrong: string[] = [];
    for (const file of files.filter((f) => layerOf(f) === "fast")) {
      for (const m of readFileSync(file, "utf8").matchAll(/^(?:let|var)\s+(\w+)/gm)) wrong.push(`${path.relative(SRC, file)}: ${m[1]}`);
    }
    expect(wrong).toEqual([]);
  });

  it("finds the imports it checks (the reader is not blind)", () => {
    const text = `import { a } from "./x.js";\nimport type { B } from "../event/y.js";\nexport { c } from './z.js';\nconst m = await import("../store/w.js");\nimport fs from "node:fs";`;
    expect(importsOf(text)).toEqual(["./x.js", "../event/y.js", "./z.js", "../store/w.js"]);
    expect(layerOf(path.join(SRC, "interop/pi/import.ts"))).toBe("interop/pi");
    expect(heightOf("interop/claude")).toBe(HEIGHT["interop/*"]);
  });
});
