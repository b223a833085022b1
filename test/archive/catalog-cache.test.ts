// archive.md §1: the catalog's derived files change how fast the facts come, never what they are. On the
// real fixtures, the facts joined from every Log scanned anew, from each Log's cached scan, and read whole
// from catalog.json when no Log changed are deep-equal, and a Log that grows is seen.
import { appendFileSync, existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { catalogPath, catalogScansPath, factsOfRows, readCatalog, readCatalogListed } from "../../lib/envelope/src/archive/catalog.js";
import { latin1Compare } from "../../lib/envelope/src/archive/log-facts.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { ROOT, run, tempDir } from "../support/cli.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";

let ws = "";

beforeAll(() => {
  ws = tempDir("pixir-catalog-cache-");
  expect(run("pixir", ["import", "claude", CLAUDE_FIXTURES, "--json"], { cwd: ws }).code).toBe(0);
  const codex = ["codemie-code", "agent-sessions"].map((d) => path.join(CODEX_FIXTURES_DIR, d));
  expect(run("pixir", ["import", "codex", ...codex, "--json"], { cwd: ws, env: { CODEX_HOME: path.join(ws, "none") } }).code).toBe(0);
}, 120_000);

const uncached = async () => {
  rmSync(path.join(ws, ".pixir", "index"), { recursive: true, force: true });
  return readCatalog(ws);
};

describe("the catalog's cache on the real fixtures", () => {
  it("scanned anew, joined from cached scans, and read from catalog.json: the same facts", async () => {
    const fresh = await uncached();
    expect(fresh.length).toBeGreaterThan(40);
    const joined = JSON.parse(readFileSync(catalogPath(ws).abs, "utf8"));
    expect(factsOfRows(joined.rows)).toEqual(fresh);
    // Byte for byte, too: `pixir ls --json` prints these objects as they are (the same keys in the same order).
    expect(JSON.stringify(factsOfRows(joined.rows))).toBe(JSON.stringify(fresh));
    expect(await readCatalog(ws)).toEqual(fresh);
    rmSync(catalogPath(ws).abs);
    expect(await readCatalog(ws)).toEqual(fresh);
    rmSync(catalogScansPath(ws).abs);
    expect(await readCatalog(ws)).toEqual(fresh);
  });

  it("a Log that grows changes its facts, and the cached catalog then equals an uncached one", async () => {
    const { facts, listing } = await readCatalogListed(ws);
    const target = facts.find((f) => f.agent === "claude" && f.kind === "root")!;
    expect(listing.sizes.get(target.session_id)).toBe(target.log_bytes);
    const line = { id: "grown", session_id: target.session_id, seq: 1_000_000, ts: "2099-01-01T00:00:00.000Z", type: "assistant_message", data: { text: "later" } };
    appendFileSync(path.join(ws, ".pixir", "sessions", `${target.session_id}.ndjson`), `${JSON.stringify(line)}\n`);
    const cached = await readCatalog(ws);
    expect(cached[0]).toMatchObject({ session_id: target.session_id, updated: "2099-01-01T00:00:00.000Z", messages: target.messages + 1 });
    expect(await uncached()).toEqual(cached);
  });
});

describe("the scan on worker threads", () => {
  it("gives the facts one thread gives (PIXIR_SCAN_THREADS), the built tool's worker file", () => {
    const ls = (threads: string) => {
      rmSync(path.join(ws, ".pixir", "index"), { recursive: true, force: true });
      const r = run("pixir", ["ls", "--all", "--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads } });
      expect(r.code).toBe(0);
      return r.stdout;
    };
    // `pixir ls`, `usage` and `search` are built solo (scripts/build.mjs): their worker file is next to them,
    // or the pool would quietly scan in one thread.
    for (const command of ["ls", "usage", "search"]) expect(existsSync(path.join(ROOT, "tools/pixir/dist/commands", `${command}.cjs`))).toBe(true);
    expect(existsSync(path.join(ROOT, "tools/pixir/dist/commands/catalog-scan-worker.js"))).toBe(true);
    const one = ls("1");
    expect(one.split("\n").length).toBeGreaterThan(40);
    expect(ls("3")).toBe(one);
  });
});

describe("latin1Compare", () => {
  it("orders bytes read as latin1 as < and > order the strings", () => {
    const cases = ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.001Z", "2026-01-01T00:00:00Z", "2025-12-31T23:59:59.999Z", "", "é", "2026"];
    for (const a of cases) {
      for (const b of cases) {
        const bytes = Buffer.from(a, "latin1");
        const sign = Math.sign(latin1Compare(bytes, 0, bytes.length, b));
        expect(sign).toBe(a < b ? -1 : a > b ? 1 : 0);
      }
    }
  });
});
