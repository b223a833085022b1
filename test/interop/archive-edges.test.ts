// Edge cases of real archives (issue 33), each on a synthetic file of the shape met in the wild: a file that
// starts with a byte-order mark, symbolic links met while listing, a last line still being written, a
// --lenient run over a session whose transcript changed, a changed Codex rollout and a changed pi session.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES, storedEvents } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";
import { PI_DIR } from "../support/pi.js";

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const CLAUDE_ONE = path.join(CLAUDE_FIXTURES, "agent-history/session-01.jsonl");
const CODEX_ONE = path.join(CODEX_FIXTURES_DIR, "agent-history/session-01.jsonl");
const WITH_SUBAGENTS = "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20";

const pixir = (ws: string, args: string[], env: Record<string, string> = {}) => run("pixir", args, { cwd: ws, env: { CODEX_HOME: path.join(ws, "no-codex-home"), ...env } });

/** A project directory holding `bytes` as a session file; returns [projects root, the file]. */
function claudeProject(bytes: Buffer, name = "6f0c8a52-1d1e-4a3b-9c55-0d3b2a1e4f01.jsonl"): [string, string] {
  const root = tempDir("pixir-edges-");
  mkdirSync(path.join(root, "proj"));
  const file = path.join(root, "proj", name);
  writeFileSync(file, bytes);
  return [root, file];
}

describe("a file that starts with a byte-order mark", () => {
  it("Claude: line 1 is a malformed line, named; --lenient keeps it raw and the export gives the file back", () => {
    const bytes = Buffer.concat([BOM, readFileSync(CLAUDE_ONE)]);
    const [root] = claudeProject(bytes);
    const ws = tempDir();
    const strict = pixir(ws, ["import", "claude", root, "--json"]);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_claude_session", details: { reason: "malformed_line", line: 1 } });
    expect(strict.json.error.details.file).toContain("proj/");
    const lenient = pixir(ws, ["import", "claude", root, "--lenient", "--json"]);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.imports[0]).toMatchObject({ malformed_lines: 1 });
    const id = lenient.json.imports[0].logs[0].session_id;
    const back = run("pixir", ["export", "claude", id], { cwd: ws });
    expect(Buffer.from(back.stdout, "utf8").equals(bytes)).toBe(true);
  });

  it("Codex: line 1 is refused with the file and line named, also under --lenient (never dropped in silence)", () => {
    const file = path.join(tempDir(), "rollout-bom.jsonl");
    writeFileSync(file, Buffer.concat([BOM, readFileSync(CODEX_ONE)]));
    const ws = tempDir();
    const strict = pixir(ws, ["import", "codex", file, "--json"]);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_codex_session", details: { line: 1, file } });
    const lenient = pixir(ws, ["import", "codex", file, "--lenient"]);
    expect(lenient.code).toBe(0);
    expect(lenient.stdout).toContain(`skipped ${file}`);
  });
});

describe("symbolic links met while listing a directory", () => {
  it("Claude: not followed, reported in text and in skipped_files; named on the command line, imported", () => {
    const [root] = claudeProject(readFileSync(CLAUDE_ONE), "session-01.jsonl");
    const elsewhere = path.join(tempDir(), "a8d1f0b4-5b7e-4c1f-8e2a-3c9d7e6f5a40.jsonl");
    copyFileSync(path.join(CLAUDE_FIXTURES, `${WITH_SUBAGENTS}.jsonl`), elsewhere);
    const link = path.join(root, "proj", "linked.jsonl");
    symlinkSync(elsewhere, link);
    const ws = tempDir();
    const json = pixir(ws, ["import", "claude", root, "--dry-run", "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json.skipped_files).toEqual([{ file: link, reason: "symlink" }]);
    expect(json.json.imports.map((i: any) => path.basename(i.file))).toEqual(["session-01.jsonl"]);
    const text = pixir(ws, ["import", "claude", root]);
    expect(text.stdout).toContain(`skipped ${link} (a symbolic link, not followed: name it on the command line to import it)`);
    const named = pixir(ws, ["import", "claude", link, "--json"]);
    expect(named.code, named.stderr).toBe(0);
    expect(named.json.imports[0].status).toBe("created");
  });

  it("Codex: the same", () => {
    const dir = tempDir();
    const target = path.join(tempDir(), "r.jsonl");
    copyFileSync(CODEX_ONE, target);
    symlinkSync(target, path.join(dir, "r.jsonl"));
    const ws = tempDir();
    const json = pixir(ws, ["import", "codex", dir, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(json.json.skipped_files).toEqual([{ file: path.join(dir, "r.jsonl"), reason: "symlink" }]);
    expect(pixir(ws, ["import", "codex", dir]).stdout).toContain("(a symbolic link, not followed: name it on the command line to import it)");
  });
});

describe("a last line without its newline (the agent is still writing it)", () => {
  it("is named in the text report of both importers", () => {
    const claude = readFileSync(CLAUDE_ONE);
    const [root] = claudeProject(claude.subarray(0, claude.length - 1 - 20));
    const ws = tempDir();
    const r = pixir(ws, ["import", "claude", root]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^pending proj\/.*: 1 line pending/m);

    const codex = readFileSync(CODEX_ONE);
    const file = path.join(tempDir(), "rollout.jsonl");
    writeFileSync(file, codex.subarray(0, codex.length - 10));
    const c = pixir(tempDir(), ["import", "codex", file]);
    expect(c.code, c.stderr).toBe(0);
    expect(c.stdout).toContain(`pending ${file}: 1 line pending`);
  });
});

describe("refusals that name what changed", () => {
  it("--lenient: a session whose transcript changed is skipped; its unchanged subagent files are not called changed", () => {
    const root = tempDir("pixir-edges-");
    const files = [`${WITH_SUBAGENTS}.jsonl`, `${WITH_SUBAGENTS}/subagents/agent-a2271d1.jsonl`];
    for (const f of files) {
      mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      copyFileSync(path.join(CLAUDE_FIXTURES, f), path.join(root, f));
    }
    const ws = tempDir();
    expect(pixir(ws, ["import", "claude", root]).code).toBe(0);
    const session = path.join(root, files[0]!);
    const lines = readFileSync(session, "utf8").split("\n");
    lines[1] = lines[1]!.replace('"type":', '"type" :');
    writeFileSync(session, lines.join("\n"));
    const r = pixir(ws, ["import", "claude", root, "--lenient", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const byFile = Object.fromEntries(r.json.imports.map((i: any) => [i.file, i.error]));
    expect(byFile[files[0]!].details.reason).toBe("transcript_changed");
    expect(byFile[files[1]!]).toMatchObject({ kind: "unit_skipped", details: { reason: "unit_skipped", file: files[0] } });
    expect(pixir(ws, ["import", "claude", root, "--lenient"]).stdout).toContain(`(not imported: ${files[0]} of the same session was skipped)`);
  });

  it("a changed Codex rollout says it changed (reason rollout_changed); a changed pi session names its file", () => {
    const file = path.join(tempDir(), "rollout.jsonl");
    copyFileSync(CODEX_ONE, file);
    const ws = tempDir();
    expect(pixir(ws, ["import", "codex", file]).code).toBe(0);
    const lines = readFileSync(file, "utf8").split("\n");
    lines[2] = lines[2]!.replace('"type":', '"type" :');
    writeFileSync(file, lines.join("\n"));
    const r = pixir(ws, ["import", "codex", file, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists", message: "the Codex rollout changed after it was imported", details: { reason: "rollout_changed", line: 3, file } });

    const pi = path.join(tempDir(), "s.jsonl");
    copyFileSync(path.join(PI_DIR, "before-compaction.jsonl"), pi);
    expect(pixir(ws, ["import", "pi", pi]).code).toBe(0);
    const text = readFileSync(pi, "utf8");
    writeFileSync(pi, text.replace('"text":"', '"text":"changed '));
    const p = pixir(ws, ["import", "pi", pi, "--json"]);
    expect(p.code).toBe(1);
    expect(p.json.error).toMatchObject({ kind: "already_exists", details: { file: pi } });
  });
});

describe("a compaction transcript whose marker's logical parent is in neither file", () => {
  it("is still linked to its session as a compaction subagent, not detected", () => {
    const SPOTTER = "spotter/258c7280-ae70-4798-800f-63464d01a85d";
    const root = tempDir("pixir-edges-");
    mkdirSync(path.join(root, SPOTTER, "subagents"), { recursive: true });
    copyFileSync(path.join(CLAUDE_FIXTURES, `${SPOTTER}.jsonl`), path.join(root, `${SPOTTER}.jsonl`));
    const compact = readFileSync(path.join(CLAUDE_FIXTURES, SPOTTER, "subagents/agent-acompact-fffbd0.jsonl"), "utf8");
    // Every parentUuid of the transcript now names a record of neither file.
    const lost = compact.replace(/"parentUuid":"[0-9a-f-]{36}"/g, '"parentUuid":"00000000-0000-4000-8000-00000000dead"');
    expect(lost).not.toBe(compact);
    writeFileSync(path.join(root, SPOTTER, "subagents/agent-acompact-fffbd0.jsonl"), lost);
    const ws = tempDir();
    const r = pixir(ws, ["import", "claude", root, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const id = "258c7280-ae70-4798-800f-63464d01a85d";
    const links = storedEvents(ws, id).filter((e) => e.type === "subagent_event" && e.data.subagent_id === "acompact-fffbd0");
    expect(links.map((e) => [e.data.event, e.data.status, e.data.agent, e.data.child_session_id])).toEqual([["returned", "completed", "compact", `${id}.agent-acompact-fffbd0`]]);
  });
});

describe("deeply nested JSON in a record (thousands of [)", () => {
  const deep = `${"[".repeat(20000)}${"]".repeat(20000)}`;
  it("Claude: a named malformed line, kept raw under --lenient and exported back", () => {
    const lines = readFileSync(CLAUDE_ONE, "utf8").split("\n").filter((l) => l !== "");
    const at = lines.findIndex((l) => JSON.parse(l).type === "assistant");
    const record = JSON.parse(lines[at]!);
    lines[at] = JSON.stringify(record).replace(/\}$/, `,"x":${deep}}`);
    const bytes = Buffer.from(lines.map((l) => `${l}\n`).join(""));
    const [root] = claudeProject(bytes);
    const ws = tempDir();
    const strict = pixir(ws, ["import", "claude", root, "--json"]);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_claude_session", details: { reason: "malformed_line", line: at + 1 } });
    const lenient = pixir(ws, ["import", "claude", root, "--lenient", "--json"]);
    expect(lenient.code, lenient.stderr).toBe(0);
    const back = run("pixir", ["export", "claude", lenient.json.imports[0].logs[0].session_id], { cwd: ws });
    expect(Buffer.from(back.stdout).equals(bytes)).toBe(true);
    expect(run("pixir-log", ["check"], { cwd: ws }).code).toBe(0);
  });

  it("Codex: a named malformed line, skipped under --lenient", () => {
    const lines = readFileSync(CODEX_ONE, "utf8").split("\n").filter((l) => l !== "");
    lines.splice(2, 0, `{"timestamp":"2026-01-01T00:00:00.000Z","type":"event_msg","payload":{"type":"x","v":${deep}}}`);
    const file = path.join(tempDir(), "rollout.jsonl");
    writeFileSync(file, lines.map((l) => `${l}\n`).join(""));
    const ws = tempDir();
    const strict = pixir(ws, ["import", "codex", file, "--json"]);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_codex_session", details: { reason: "malformed_line", line: 3, file } });
    const lenient = pixir(ws, ["import", "codex", file, "--lenient", "--json"]);
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.imports[0].skipped_lines).toBe(1);
  });
});

describe("temp files left by an import killed with -9", () => {
  it("are reported by check, and removed by the next import of either agent (or by pixir-log repair)", () => {
    const ws = tempDir();
    const sessions = path.join(ws, ".pixir", "sessions");
    mkdirSync(sessions, { recursive: true });
    // What a killed import leaves: a Log's temp file, cut short, and no Log.
    const plant = () => {
      writeFileSync(path.join(sessions, "6f0c8a52-1d1e-4a3b-9c55-0d3b2a1e4f01.ndjson.tmp-deadbeef"), '{"id":"01J');
      writeFileSync(path.join(sessions, "019e9625-802f-7e91-840a-cfe88d14117a.ndjson.tmp-0badf00d"), "");
    };
    const temps = () => readdirSync(sessions).filter((n) => n.includes(".tmp-"));
    plant();
    const check = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(JSON.stringify(check.json)).toContain("stale_temp_file");
    const [root] = claudeProject(readFileSync(CLAUDE_ONE));
    expect(pixir(ws, ["import", "claude", root]).code).toBe(0);
    expect(temps()).toEqual([]);
    expect(run("pixir-log", ["check"], { cwd: ws }).stdout).toContain("0 problems, 0 warnings");

    plant();
    const file = path.join(tempDir(), "rollout.jsonl");
    copyFileSync(CODEX_ONE, file);
    expect(pixir(ws, ["import", "codex", file]).code).toBe(0);
    expect(temps()).toEqual([]);

    plant();
    expect(run("pixir-log", ["repair", "6f0c8a52-1d1e-4a3b-9c55-0d3b2a1e4f01"], { cwd: ws }).code).toBe(0);
    expect(temps()).toEqual(["019e9625-802f-7e91-840a-cfe88d14117a.ndjson.tmp-0badf00d"]);
  });
});
