// pixir import opencode / pixir export opencode (docs/gemini-opencode-interop.md §5–§7), on the HAND-MADE
// fixtures of test/fixtures/opencode (a database built from opencode's schema, a legacy storage/ tree),
// against the built binaries. The oracle replays the rows with opencode's rules.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readCatalog } from "../../lib/envelope/src/archive/catalog.js";
import { callTotal, modelCallsOf } from "../../lib/envelope/src/archive/model-calls.js";
import { logFile, tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { buildOpencodeDb, contextAsOracle, Database, LEGACY_STORAGE, opencodeOracle, SESSIONS } from "../support/opencode.js";

const pixir = (ws: string, ...args: string[]) => run("pixir", args, { cwd: ws });
const contextOf = (ws: string, id: string) => pixir(ws, "context", id, "--format", "ndjson").stdout.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
const eventsOf = (ws: string, id: string) => readFileSync(logFile(ws, id), "utf8").trim().split("\n").map((l) => JSON.parse(l));

function imported(): { ws: string; db: string; report: any } {
  const ws = tempDir();
  const db = buildOpencodeDb(tempDir());
  const r = pixir(ws, "import", "opencode", db, LEGACY_STORAGE, "--json");
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { ws, db, report: r.json };
}

describe("import opencode of the hand-made database and storage tree", () => {
  const { ws, db, report } = imported();

  it("makes one Log per session, the reverted messages a share_v1 child", () => {
    const rows = report.imports.flatMap((i: any) => i.sessions.map((s: any) => [s.session_id, s.role, s.parent_session_id, s.status]));
    expect(rows).toEqual([
      ["ses_main01", "root", null, "created"],
      ["ses_main01.reverted", "reverted", "ses_main01", "created"],
      ["ses_child01", "root", null, "created"],
      ["ses_fork01", "fork", "ses_main01", "created"],
      ["ses_old01", "root", null, "created"],
    ]);
    expect(report.imports.find((i: any) => i.session_id === "ses_child01").parent_session_id).toBe("ses_main01");
  });

  it.each(SESSIONS.map((s) => [s.row.id, s]))("pixir context of %s is what opencode sends next", (id, session) => {
    expect(contextAsOracle(contextOf(ws, id))).toEqual(opencodeOracle(session));
  });

  it("makes opencode's fork copy a share_v1 child holding only its own messages", () => {
    const fork = eventsOf(ws, "ses_fork01");
    expect(fork[0]).toMatchObject({ type: "session_fork", data: { parent_session_id: "ses_main01", strategy: "share_v1", opencode: { synthetic: "fork_copy", source_session_id: "ses_main01" } } });
    const own = fork.slice(1).filter((e) => e.data.opencode);
    expect(new Set(own.map((e) => e.data.opencode.message_id))).toEqual(new Set(["msg_f3", "msg_f4"]));
  });

  it("gives the session facts of archive.md §1: agent, kind, title, cwd", async () => {
    const facts = new Map((await readCatalog(ws)).map((f) => [f.session_id, f]));
    expect(facts.get("ses_main01")).toMatchObject({ agent: "opencode", kind: "root", title: "Fix the parser", cwd: "/home/user/app", project: "app" });
    expect(facts.get("ses_main01.reverted")).toMatchObject({ agent: "opencode", kind: "branch", parent: "ses_main01" });
    expect(facts.get("ses_child01")).toMatchObject({ agent: "opencode", kind: "subagent", title: "find bug (@general subagent)" });
    expect(facts.get("ses_fork01")).toMatchObject({ agent: "opencode", kind: "fork", parent: "ses_main01" });
  });

  it("keeps the reverted work in the child, and the session facts in the header", () => {
    const reverted = contextAsOracle(contextOf(ws, "ses_main01.reverted"));
    expect(reverted.slice(-2)).toEqual([["user", "Also rename parse to parseList"], ["assistant", "Renamed."]]);
    expect(eventsOf(ws, "ses_main01")[0].data).toMatchObject({ event: "opencode_session", agent: "opencode", cwd: "/home/user/app", title: "Fix the parser", parent_session_id: null });
    expect(eventsOf(ws, "ses_child01")[0].data).toMatchObject({ parent_session_id: "ses_main01" });
  });

  it("links the subagent from its task call and counts step-finish usage", () => {
    const main = eventsOf(ws, "ses_main01");
    expect(main.find((e) => e.type === "subagent_event").data).toMatchObject({ subagent_id: "ses_child01", child_session_id: "ses_child01", event: "spawned", agent: "general" });
    const calls = modelCallsOf(main, "opencode");
    expect(calls.map((c) => [callTotal(c), c.reasoning, c.recorded_cost_usd])).toEqual([[1260, 10, 0.01], [2220, 0, 0.005], [312, 0, 0.002]]);
  });

  it("export opencode gives back the info, messages and parts opencode stored", () => {
    for (const s of SESSIONS) {
      const r = pixir(ws, "export", "opencode", s.row.id);
      expect(r.code, r.stderr).toBe(0);
      const json = JSON.parse(r.stdout);
      expect(json.info).toMatchObject({ id: s.row.id, directory: s.row.directory, title: s.row.title, version: s.row.version });
      if (s.row.parent_id) expect(json.info.parentID).toBe(s.row.parent_id);
      expect(json.messages.map((m: any) => m.info)).toEqual(s.messages.map((m: any) => ({ id: m.id, sessionID: s.row.id, ...m.data })));
      expect(json.messages.map((m: any) => m.parts)).toEqual(s.messages.map((m: any) => m.parts.map((p: any) => ({ id: p.id, sessionID: s.row.id, messageID: m.id, ...p }))));
    }
  });

  it("the legacy tree exports its JSON files' objects", () => {
    const json = JSON.parse(pixir(ws, "export", "opencode", "ses_old01").stdout);
    expect(json.info).toEqual(JSON.parse(readFileSync(path.join(LEGACY_STORAGE, "session/prj_app/ses_old01.json"), "utf8")));
    expect(json.messages[1].parts[0]).toEqual(JSON.parse(readFileSync(path.join(LEGACY_STORAGE, "part/msg_o2/prt_o2a.json"), "utf8")));
  });

  it("importing again changes nothing; a grown session gets its new messages appended", () => {
    const again = pixir(ws, "import", "opencode", db, LEGACY_STORAGE, "--json");
    expect(new Set(again.json.imports.flatMap((i: any) => i.sessions.map((s: any) => s.status)))).toEqual(new Set(["unchanged"]));
    const grown = tempDir();
    const ws2 = tempDir();
    const child = SESSIONS[1];
    const first = { ...child, messages: child.messages.slice(0, 1) };
    expect(pixir(ws2, "import", "opencode", buildOpencodeDb(grown, [first]), "--json").code).toBe(0);
    const whole = tempDir();
    const r = pixir(ws2, "import", "opencode", buildOpencodeDb(whole, [child]), "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].sessions[0]).toMatchObject({ status: "appended", new_event_count: 2 });
    expect(readFileSync(logFile(ws2, "ses_child01"), "utf8")).toBe(readFileSync(logFile(ws, "ses_child01"), "utf8"));
  });

  it("a changed earlier message is refused and nothing is written; the database is only read", () => {
    const before = readFileSync(db);
    const ws2 = tempDir();
    expect(pixir(ws2, "import", "opencode", db, "--json").code).toBe(0);
    expect(readFileSync(db).equals(before)).toBe(true);
    const changed = structuredClone(SESSIONS[1]);
    changed.messages[0].parts[0].text = "Find the lexer bug";
    const log = readFileSync(logFile(ws2, "ses_child01"), "utf8");
    const r = pixir(ws2, "import", "opencode", buildOpencodeDb(tempDir(), [changed]), "--json");
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists", details: { reason: "source_changed", session_id: "ses_child01" } });
    expect(readFileSync(logFile(ws2, "ses_child01"), "utf8")).toBe(log);
  });
});

describe("bad input and export of a fork", () => {
  it("a malformed row fails with a named error; --lenient skips it", () => {
    const dir = tempDir();
    const file = buildOpencodeDb(dir, [SESSIONS[1]]);
    const db = new Database(file);
    db.prepare("UPDATE part SET data = '{oops' WHERE id = 'prt_c2b'").run();
    db.close();
    const ws = tempDir();
    const strict = pixir(ws, "import", "opencode", file, "--json");
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_opencode_session", details: { reason: "malformed_record" } });
    const lenient = pixir(ws, "import", "opencode", file, "--lenient", "--json");
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.skipped_records).toHaveLength(1);
    expect(pixir(ws, "import", "opencode", path.join(dir, "nope"), "--json").json.error.kind).toBe("not_found");
  });

  it("a pixir fork exports as a new session, and --install writes the opencode import file", () => {
    const { ws } = imported();
    expect(pixir(ws, "fork", "ses_main01", "--strategy", "share_v1", "--child-id", "try-2").code).toBe(0);
    const home = tempDir();
    const r = run("pixir", ["export", "opencode", "try-2", "--install", "--json"], { cwd: ws, env: { XDG_DATA_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.file.startsWith(path.join(home, "opencode", "pixir-exports"))).toBe(true);
    expect(r.json.next_actions[0]).toBe(`opencode import ${r.json.file}`);
    const json = JSON.parse(readFileSync(r.json.file, "utf8"));
    expect(json.info.id).not.toBe("ses_main01");
    const texts = json.messages.flatMap((m: any) => m.parts.filter((p: any) => p.type === "text").map((p: any) => p.text));
    expect(texts.at(-1)).toBe("Fixed: line 2 now splits on ';'.");
  });
});
