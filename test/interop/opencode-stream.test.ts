// pixir import opencode reads sessions one at a time (docs/gemini-opencode-interop.md §8): what it plans is
// kept between the check and the write only up to a budget, past it a session is read and planned again to
// be written. With no budget at all (every session planned twice, fork copies' sources read again) the
// Logs and the report are those of the default run, on the HAND-MADE database and legacy tree, first and
// incremental imports alike.
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { importOpencode, type OpencodeImportOptions } from "../../lib/envelope/src/interop/opencode/import.js";
import { tempDir } from "../support/cli.js";
import { buildOpencodeDb, LEGACY_STORAGE, SESSIONS } from "../support/opencode.js";
import { logFile } from "../support/cli.js";
import { logsOf, twoRuns } from "../support/two-runs.js";

async function importInto(ws: string, paths: string[], extra: Partial<OpencodeImportOptions> = {}) {
  const r = await importOpencode(ws, { paths: paths.map((p) => ({ path: p, display: p })), program: "pixir import opencode", env: { HOME: tempDir() }, ...extra });
  return { ...r, workspace: "" };
}

describe("import opencode a session at a time", () => {
  it("with no kept bytes, writes the same Logs and reports the same as the default run", async () => {
    const db = buildOpencodeDb(tempDir());
    const { a, b, wsA, wsB } = await twoRuns(
      async (ws) => void mkdirSync(ws, { recursive: true }),
      (ws) => importInto(ws, [db, LEGACY_STORAGE]),
      (ws) => importInto(ws, [db, LEGACY_STORAGE], { keptBytes: 0 }),
    );
    expect(b).toEqual(a);
    expect((a as Awaited<ReturnType<typeof importInto>>).imports.some((i) => i.sessions.some((s) => s.role === "fork"))).toBe(true);
    expect(logsOf(wsB)).toEqual(logsOf(wsA));
    expect(Object.keys(logsOf(wsA)).length).toBeGreaterThan(3);
  });

  it("with no kept bytes, a grown session is appended as by the default run; a dry run writes nothing", async () => {
    const child = SESSIONS[1];
    const first = buildOpencodeDb(tempDir(), [{ ...child, messages: child.messages.slice(0, 1) }]);
    const whole = buildOpencodeDb(tempDir(), [child]);
    const { a, b, wsA, wsB } = await twoRuns(
      async (ws) => void (await importInto(ws, [first])),
      (ws) => importInto(ws, [whole]),
      async (ws) => {
        const before = logsOf(ws);
        const dry = await importInto(ws, [whole], { keptBytes: 0, dryRun: true });
        expect(dry.imports[0]!.sessions[0]).toMatchObject({ status: "would_append", new_event_count: 2 });
        expect(logsOf(ws)).toEqual(before);
        return importInto(ws, [whole], { keptBytes: 0 });
      },
    );
    expect(b).toEqual(a);
    expect((b as Awaited<ReturnType<typeof importInto>>).imports[0]!.sessions[0]).toMatchObject({ status: "appended", new_event_count: 2 });
    expect(logsOf(wsB)).toEqual(logsOf(wsA));
  });

  it("a refusal found after new Logs were prepared takes their temp files back: nothing written", async () => {
    const ws = tempDir();
    const changed = structuredClone(SESSIONS[1]);
    changed.messages[0].parts[0].text = "Find the lexer bug";
    await importInto(ws, [buildOpencodeDb(tempDir(), [changed])]);
    const log = readFileSync(logFile(ws, "ses_child01"), "utf8");
    const db = buildOpencodeDb(tempDir());
    await expect(importInto(ws, [db], { keptBytes: 0 })).rejects.toMatchObject({ kind: "already_exists", details: { reason: "source_changed", session_id: "ses_child01" } });
    expect(readdirSync(path.join(ws, ".pixir", "sessions"))).toEqual(["ses_child01.ndjson"]);
    expect(readFileSync(logFile(ws, "ses_child01"), "utf8")).toBe(log);
  });
});
