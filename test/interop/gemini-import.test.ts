// pixir import gemini / pixir export gemini (docs/gemini-opencode-interop.md), on the HAND-MADE fixtures of
// test/fixtures/gemini, against the built binaries. The oracle (test/support/gemini.ts) replays each file
// with Gemini's own rules; `pixir context` of the Log holding the last line must show the same.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readCatalog } from "../../lib/envelope/src/archive/catalog.js";
import { callTotal, modelCallsOf } from "../../lib/envelope/src/archive/model-calls.js";
import { logFile, tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import {
  contextAsOracle,
  GEMINI_HOME,
  geminiOracle,
  LEGACY_FILE,
  LEGACY_ID,
  MAIN_FILE,
  MAIN_ID,
  SUB_FILE,
  SUB_ID,
  UNKNOWN_REWIND_FILE,
  UNKNOWN_REWIND_ID,
} from "../support/gemini.js";

const pixir = (ws: string, ...args: string[]) => run("pixir", args, { cwd: ws });
const importGemini = (ws: string, ...paths: string[]) => pixir(ws, "import", "gemini", ...paths, "--json");
const contextOf = (ws: string, id: string) => pixir(ws, "context", id, "--format", "ndjson").stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
/** The complete lines of a file (a torn last line is pending, not imported). */
const completeLines = (file: string): string => {
  const text = readFileSync(file, "utf8");
  return text.slice(0, text.lastIndexOf("\n") + 1);
};

function importedAll(): { ws: string; report: any } {
  const ws = tempDir();
  const r = importGemini(ws, path.join(GEMINI_HOME, ".gemini/tmp"));
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { ws, report: r.json };
}

describe("import gemini of the hand-made sessions", () => {
  const { ws, report } = importedAll();
  const fileReport = (id: string) => report.imports.find((i: any) => i.session_id === id);

  it("maps rewinds, in-place edits and replacements to share_v1 branches, and keeps the torn tail pending", () => {
    const main = fileReport(MAIN_ID);
    expect(main.pending_tail).toBe(true);
    expect(main.sessions.map((s: any) => [s.session_id, s.role, s.branch, s.parent_session_id, s.status])).toEqual([
      [MAIN_ID, "root", null, null, "created"],
      [`${MAIN_ID}.rewind-13`, "branch", "rewind", MAIN_ID, "created"],
      [`${MAIN_ID}.edit-16`, "branch", "edit", `${MAIN_ID}.rewind-13`, "created"],
      [`${MAIN_ID}.replace-17`, "branch", "replace", MAIN_ID, "created"],
    ]);
    expect(main.leaf_session_id).toBe(`${MAIN_ID}.replace-17`);
    expect(fileReport(UNKNOWN_REWIND_ID).leaf_session_id).toBe(`${UNKNOWN_REWIND_ID}.rewind-4`);
  });

  it.each([
    [MAIN_FILE, `${MAIN_ID}.replace-17`],
    [UNKNOWN_REWIND_FILE, `${UNKNOWN_REWIND_ID}.rewind-4`],
    [SUB_FILE, SUB_ID],
    [LEGACY_FILE, LEGACY_ID],
  ])("pixir context of the leaf is what Gemini sends next (%s)", (file, leaf) => {
    const oracle = geminiOracle(file);
    expect(oracle.length).toBeGreaterThan(0);
    expect(contextAsOracle(contextOf(ws, leaf))).toEqual(oracle);
  });

  it("keeps rewound work readable in the parent: the rewind branch's parent still holds the dropped turn", () => {
    const texts = contextAsOracle(contextOf(ws, MAIN_ID)).filter((i) => i[0] === "user").map((i) => i[1]);
    expect(texts).toEqual(["List the files in src", "Delete b.ts"]);
    const edited = contextAsOracle(contextOf(ws, `${MAIN_ID}.rewind-13`)).filter((i) => i[0] === "assistant").map((i) => i[1]);
    expect(edited.at(-1)).toBe("Renamed.");
    const after = contextAsOracle(contextOf(ws, `${MAIN_ID}.edit-16`)).filter((i) => i[0] === "assistant").map((i) => i[1]);
    expect(after.at(-1)).toBe("Renamed b.ts to c.ts.");
  });

  it("links the subagent from the tool call that ran it, and counts tokens as provider_usage", () => {
    const leaf = readFileSync(logFile(ws, `${MAIN_ID}.replace-17`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const link = leaf.find((e) => e.type === "subagent_event");
    expect(link.data).toMatchObject({ subagent_id: SUB_ID, child_session_id: SUB_ID, event: "spawned", agent: "codebase_investigator" });
    const root = readFileSync(logFile(ws, MAIN_ID), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const usage = root.filter((e) => e.type === "provider_usage").map((e) => [e.data.total_tokens, e.data.cache_read, e.data.model]);
    expect(usage).toEqual([[1255, 200, "gemini-2.5-pro"], [1312, 1000, "gemini-2.5-pro"], [1405, 0, "gemini-2.5-pro"]]);
    // archive.md §3: each call's tokens add up to Gemini's own total.
    const calls = modelCallsOf(root, "gemini");
    expect(calls.map((c) => [callTotal(c), c.reasoning, c.cache_write])).toEqual([[1255, 15, null], [1312, 0, null], [1405, 0, null]]);
    const header = root[0].data;
    expect(header).toMatchObject({ event: "gemini_session_meta", agent: "gemini", session_id: MAIN_ID, kind: "main", project: "demo-project" });
    const sub = readFileSync(logFile(ws, SUB_ID), "utf8").split("\n")[0]!;
    expect(JSON.parse(sub).data).toMatchObject({ kind: "subagent", parent_session_id: MAIN_ID, cwd: "/home/user/demo-project" });
  });

  it("gives the session facts of archive.md §1: agent, kind, title, cwd, times", async () => {
    const facts = new Map((await readCatalog(ws)).map((f) => [f.session_id, f]));
    expect(facts.get(MAIN_ID)).toMatchObject({ agent: "gemini", kind: "root", title: "List and tidy src", started: "2026-01-10T09:00:01.000Z" });
    expect(facts.get(`${MAIN_ID}.rewind-13`)).toMatchObject({ agent: "gemini", kind: "branch", parent: MAIN_ID });
    expect(facts.get(SUB_ID)).toMatchObject({ agent: "gemini", kind: "subagent", cwd: "/home/user/demo-project", project: "demo-project" });
    expect(facts.get(LEGACY_ID)).toMatchObject({ agent: "gemini", title: "What is 2+2?", updated: "2025-09-01T08:00:02.000Z" });
  });

  it.each([
    [MAIN_ID, MAIN_FILE],
    [`${MAIN_ID}.rewind-13`, MAIN_FILE],
    [`${MAIN_ID}.replace-17`, MAIN_FILE],
    [UNKNOWN_REWIND_ID, UNKNOWN_REWIND_FILE],
    [SUB_ID, SUB_FILE],
    [LEGACY_ID, LEGACY_FILE],
  ])("export gemini %s gives the source file back byte for byte", (id, file) => {
    const r = pixir(ws, "export", "gemini", id);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(file.endsWith(".json") ? readFileSync(file, "utf8") : completeLines(file));
  });

  it("importing again changes nothing", () => {
    const again = importGemini(ws, path.join(GEMINI_HOME, ".gemini/tmp"));
    expect(again.code).toBe(0);
    expect(again.json.recorded).toBe(false);
    expect(again.json.imports.flatMap((i: any) => i.sessions.map((s: any) => s.status))).toEqual(expect.arrayContaining(["unchanged"]));
    expect(new Set(again.json.imports.flatMap((i: any) => i.sessions.map((s: any) => s.status)))).toEqual(new Set(["unchanged"]));
  });
});

describe("incremental and changed imports", () => {
  const lines = completeLines(MAIN_FILE).split("\n").filter(Boolean);

  it.each([3, 12, 14, 17, 19])("a file imported at %i lines, then whole, gives the Logs of one import", (cut) => {
    const once = tempDir();
    mkdirSync(path.join(once, "src"));
    const whole = path.join(once, "src", "s.jsonl");
    writeFileSync(whole, lines.join("\n") + "\n");
    expect(importGemini(once, whole).code).toBe(0);

    const steps = tempDir();
    mkdirSync(path.join(steps, "src"));
    const grow = path.join(steps, "src", "s.jsonl");
    writeFileSync(grow, lines.slice(0, cut).join("\n") + "\n");
    expect(importGemini(steps, grow).code).toBe(0);
    appendFileSync(grow, lines.slice(cut).join("\n") + "\n");
    const r = importGemini(steps, grow);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].sessions.some((s: any) => s.status === "appended" || s.status === "created")).toBe(true);
    for (const s of r.json.imports[0].sessions) {
      // The Workspace path is part of a share_v1 header; everything else must match byte for byte.
      const stepped = readFileSync(logFile(steps, s.session_id), "utf8").replaceAll(steps, "WS");
      expect(stepped, s.session_id).toBe(readFileSync(logFile(once, s.session_id), "utf8").replaceAll(once, "WS"));
    }
  });

  it("a changed earlier line is refused and nothing is written", () => {
    const ws = tempDir();
    const file = path.join(ws, "s.jsonl");
    writeFileSync(file, lines.slice(0, 8).join("\n") + "\n");
    expect(importGemini(ws, file).code).toBe(0);
    const before = readFileSync(logFile(ws, MAIN_ID), "utf8");
    writeFileSync(file, [...lines.slice(0, 1), lines[1]!.replace("List the files", "List all files"), ...lines.slice(2)].join("\n") + "\n");
    const r = importGemini(ws, file);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists", details: { reason: "source_changed", session_id: MAIN_ID } });
    expect(readFileSync(logFile(ws, MAIN_ID), "utf8")).toBe(before);
  });

  it("--dry-run plans without writing", () => {
    const ws = tempDir();
    const r = pixir(ws, "import", "gemini", MAIN_FILE, "--dry-run", "--json");
    expect(r.code).toBe(0);
    expect(r.json.recorded).toBe(false);
    expect(r.json.imports[0].sessions[0].status).toBe("would_create");
    expect(pixir(ws, "context", MAIN_ID).code).toBe(2);
  });
});

describe("bad input", () => {
  it("a malformed line fails with its number; --lenient keeps it verbatim and the export still gives the file back", () => {
    const ws = tempDir();
    const file = path.join(ws, "bad.jsonl");
    const good = readFileSync(UNKNOWN_REWIND_FILE, "utf8").split("\n");
    const text = [good[0], good[1], "{not json", ...good.slice(2)].join("\n");
    writeFileSync(file, text);
    const strict = importGemini(ws, file);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_gemini_session", details: { reason: "malformed_line", line: 3 } });
    const lenient = pixir(ws, "import", "gemini", file, "--lenient", "--json");
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.imports[0].skipped_lines).toBe(1);
    expect(pixir(ws, "export", "gemini", UNKNOWN_REWIND_ID).stdout).toBe(text);
  });

  it("a file whose first line is not Gemini metadata, and a missing path, are named errors", () => {
    const ws = tempDir();
    const file = path.join(ws, "x.jsonl");
    writeFileSync(file, '{"hello":1}\n');
    expect(importGemini(ws, file).json.error).toMatchObject({ kind: "invalid_gemini_session", details: { reason: "missing_metadata", line: 1 } });
    const missing = importGemini(ws, path.join(ws, "nope"));
    expect(missing.code).toBe(2);
    expect(missing.json.error.kind).toBe("not_found");
  });

  it("without PATH it reads $GEMINI_CLI_HOME/.gemini/tmp", () => {
    const ws = tempDir();
    const r = run("pixir", ["import", "gemini", "--dry-run", "--json"], { cwd: ws, env: { GEMINI_CLI_HOME: GEMINI_HOME } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports.map((i: any) => i.session_id).sort()).toEqual([LEGACY_ID, MAIN_ID, SUB_ID, UNKNOWN_REWIND_ID].sort());
  });
});

describe("export gemini of a pixir fork", () => {
  it("becomes a new session holding what pixir context shows, and --install puts it in Gemini's chats", () => {
    const { ws } = importedAll();
    expect(pixir(ws, "fork", `${MAIN_ID}.replace-17`, "--strategy", "share_v1", "--child-id", "try-2").code).toBe(0);
    const r = pixir(ws, "export", "gemini", "try-2");
    expect(r.code, r.stderr).toBe(0);
    const records = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ kind: "main" });
    expect(records[0].sessionId).not.toBe(MAIN_ID);
    const dir = tempDir();
    const file = path.join(dir, "fork.jsonl");
    writeFileSync(file, r.stdout);
    expect(geminiOracle(file)).toEqual(geminiOracle(MAIN_FILE));

    const home = tempDir();
    mkdirSync(path.join(home, ".gemini/tmp/demo-project/chats"), { recursive: true });
    const inst = run("pixir", ["export", "gemini", "try-2", "--install", "--json"], { cwd: ws, env: { GEMINI_CLI_HOME: home } });
    expect(inst.code, inst.stderr).toBe(0);
    expect(inst.json.file.startsWith(path.join(home, ".gemini/tmp/demo-project/chats/session-"))).toBe(true);
    expect(readFileSync(inst.json.file, "utf8")).toBe(r.stdout);
    const again = run("pixir", ["export", "gemini", "try-2", "--install", "--json"], { cwd: ws, env: { GEMINI_CLI_HOME: home } });
    expect(again.json.error.kind).toBe("already_exists");
    copyFileSync(inst.json.file, path.join(dir, "copy.jsonl"));
  });
});
