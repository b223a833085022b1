// The folders of lib/envelope/src are layers (docs/architecture.md): a folder imports only folders below
// it, so a reader can learn the library bottom up and a change to one layer cannot reach down. This test
// reads every import and export-from in the sources and fails on an import that climbs, one between two
// folders of the same height, a folder with no place in the order, a cycle of files, `export *` and
// `export let`, and a function longer than MAX_FUNCTION_LINES that LONG_FUNCTIONS does not name.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
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

/** The longest a function may be, from its first line to its last, nested functions included. */
const MAX_FUNCTION_LINES = 150;

/**
 * The functions allowed to be longer, each with why (`file:name`). Every entry must still be too long,
 * so a split one leaves the list.
 */
const LONG_FUNCTIONS: Record<string, string> = {};

/** The name a function is known by: its own, the variable or property it is assigned to, or its class's method. */
function functionName(node: ts.FunctionLikeDeclaration, file: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return `${ts.isClassLike(node.parent) ? (node.parent.name?.getText(file) ?? "class") : "class"}.constructor`;
  const own = node.name?.getText(file);
  const parent = node.parent;
  const holder = ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) ? parent.name.getText(file) : undefined;
  const name = own ?? holder ?? "<anonymous>";
  const owner = ts.isClassLike(parent) || ts.isPropertyDeclaration(parent) ? (parent.parent as ts.ClassLikeDeclaration | undefined) : undefined;
  const cls = ts.isClassLike(parent) ? parent : owner && ts.isClassLike(owner) ? owner : undefined;
  return cls?.name ? `${cls.name.getText(file)}.${name}` : name;
}

/** Every function with a body in `text` and its length in lines. */
function functionLengths(fileName: string, text: string): Array<{ name: string; line: number; lines: number }> {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ name: string; line: number; lines: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const first = file.getLineAndCharacterOfPosition(node.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(node.end).line;
      found.push({ name: functionName(node as ts.FunctionLikeDeclaration, file), line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The files of each cycle of imports (type-only ones too: a cycle is one module in two files). */
function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    for (let w = stack.pop(); w !== undefined; w = w === v ? undefined : stack.pop()) part.push(w);
    if (part.length > 1) cycles.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

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

  it("form no cycle of files", () => {
    const graph = new Map(files.map((f) => [f, importsOf(readFileSync(f, "utf8")).map((spec) => path.resolve(path.dirname(f), spec.replace(/\.js$/, ".ts")))]));
    expect(importCycles(graph).map((c) => c.map((f) => path.relative(SRC, f)))).toEqual([]);
  });

  it(`keep every function within ${MAX_FUNCTION_LINES} lines, but for the named exceptions`, () => {
    const tooLong: string[] = [];
    for (const file of files) {
      for (const f of functionLengths(file, readFileSync(file, "utf8"))) {
        if (f.lines > MAX_FUNCTION_LINES) tooLong.push(`${path.relative(SRC, file)}:${f.name}`);
      }
    }
    const unexplained = tooLong.filter((k) => !(k in LONG_FUNCTIONS));
    expect(unexplained, "split it, or name it in LONG_FUNCTIONS with why").toEqual([]);
    expect(Object.keys(LONG_FUNCTIONS).filter((k) => !tooLong.includes(k)), "no longer too long: take it off LONG_FUNCTIONS").toEqual([]);
  });

  it("tune the work, not the process: no V8 flags set at run time, no O_DIRECT, no pipe resizing (issue 38)", () => {
    const TOOLS = fileURLToPath(new URL("../../../tools/", import.meta.url));
    const toolSources = readdirSync(TOOLS).flatMap((t) => sources(path.join(TOOLS, t, "src"), []));
    const TUNING = /\b(setFlagsFromString|O_DIRECT|F_SETPIPE_SZ)\b/g;
    expect(["v8.setFlagsFromString(f)", "constants.O_DIRECT | 0", "O_DIRECTORY"].map((t) => [...t.matchAll(TUNING)].length)).toEqual([1, 1, 0]);
    const wrong: string[] = [];
    for (const file of [...files, ...toolSources]) {
      for (const m of readFileSync(file, "utf8").matchAll(TUNING)) wrong.push(`${path.relative(SRC, file)}: ${m[1]}`);
    }
    expect(wrong).toEqual([]);
  });

  it("finds the functions and cycles it checks (the reader is not blind)", () => {
    const body = Array.from({ length: 3 }, () => "  x();").join("\n");
    const text = `function a() {\n${body}\n}\nconst b = () => {\n${body}\n};\nclass C {\n  m() {\n${body}\n  }\n  constructor() {}\n}\nexport default function () {}`;
    expect(functionLengths("x.ts", text).map((f) => `${f.name}:${f.lines}`)).toEqual(["a:5", "b:5", "C.m:5", "C.constructor:1", "<anonymous>:1"]);
    const graph = new Map([["a", ["b"]], ["b", ["c", "a"]], ["c", []], ["d", ["d2"]], ["d2", []]]);
    expect(importCycles(graph)).toEqual([["a", "b"]]);
  });

  it("finds the imports it checks (the reader is not blind)", () => {
    const text = `import { a } from "./x.js";\nimport type { B } from "../event/y.js";\nexport { c } from './z.js';\nconst m = await import("../store/w.js");\nimport fs from "node:fs";`;
    expect(importsOf(text)).toEqual(["./x.js", "../event/y.js", "./z.js", "../store/w.js"]);
    expect(layerOf(path.join(SRC, "interop/pi/import.ts"))).toBe("interop/pi");
    expect(heightOf("interop/claude")).toBe(HEIGHT["interop/*"]);
  });
});
