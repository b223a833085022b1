// pixir import codex / export codex on rollouts built from the real ones (codex-interop.md §7.4 and the
// spec index's cross-importer rules): Codex forks with copied history that matches and that does not,
// rollbacks in real turns (after a real compaction too), malformed and changed lines, --lenient, Logs that
// exist already, materialized children, the import index. The §7.2 oracle comes from the rollout alone.
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir, toolCopyForAnyUser } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import {
  A,
  CODEX_FIXTURES_DIR,
  codexFixturePath,
  codexFork,
  HAS_LOCALPUSH,
  LOCALPUSH_MISSING,
  completeLines,
  expectedSignatures,
  meta,
  observedSignatures,
  rec,
  rolledBack,
  rollout,
  threadOf,
  U,
  userTurnLines,
} from "../support/codex.js";

const CODEMIE = "codemie-code/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";
const COMPACTED = "localpush/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl";
const fixtureLines = (rel: string): string[] => completeLines(readFileSync(codexFixturePath(rel), "utf8"));
/** A title that says why its tests skip when the localpush rollouts are absent. */
const needsLocalpush = (title: string): string => (HAS_LOCALPUSH ? title : `${title} (skipped: ${LOCALPUSH_MISSING})`);

const importCodex = (ws: string, ...args: string[]) => run("pixir", ["import", "codex", ...args, "--json"], { cwd: ws, env: { CODEX_HOME: path.join(ws, "no-codex-home") } });
const exportCodex = (ws: string, id: string, ...args: string[]) => run("pixir", ["export", "codex", id, ...args], { cwd: ws });
const contextOf = (ws: string, id: string): any[] => {
  const r = run("pixir", ["context", id, "--format", "ndjson"], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return r.lines;
};
const oracleHolds = (ws: string, leaf: string, lines: string[]): void => expect(observedSignatures(contextOf(ws, leaf))).toEqual(expectedSignatures(lines));
const cat = (ws: string, id: string): any[] =>
  readFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
function logs(ws: string): Record<string, string> {
  const dir = path.join(ws, ".pixir", "sessions");
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) if (name.endsWith(".ndjson")) out[name] = readFileSync(path.join(dir, name), "utf8").split(ws).join("<ws>");
  return out;
}
function write(lines: string[], name = "rollout.jsonl"): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, rollout(lines));
  return file;
}
const statuses = (r: any): string[] => r.json.imports.flatMap((i: any) => i.sessions.map((s: any) => s.status));
const T0 = "2026-09-09T09:09:09.999Z";
const own = (text: string): string[] => [U(text, "2026-09-09T09:10:00.000Z"), A(`${text}: done`, "2026-09-09T09:10:01.000Z")];

describe("Codex forks of real rollouts (§3.5)", () => {
  if (!HAS_LOCALPUSH) it.skip(needsLocalpush("a fork of the compacted rollout"), () => {});
  for (const rel of HAS_LOCALPUSH ? [CODEMIE, COMPACTED] : [CODEMIE]) {
    const source = fixtureLines(rel);
    const P = threadOf(source);
    // Codex cuts a fork just before a user turn; the last one lies after the real compaction of COMPACTED.
    const k = userTurnLines(source).at(-1)! - 1;

    it(`${path.basename(rel).slice(0, 38)}: copied lines that match are stored once, in the source's family`, () => {
      const C = "019fffff-0000-7000-8000-00000000000c";
      const fork = codexFork(source, k, C, T0, own("fork question"));
      const files = { C: write(fork, `rollout-2026-09-09T12-09-09-${C}.jsonl`), P: codexFixturePath(rel) };
      const ws = tempDir();
      const r = importCodex(ws, files.C, files.P);
      expect(r.code, r.stderr).toBe(0);
      const imp = r.json.imports[0];
      expect(imp.fork).toEqual({ source_thread_id: P, shared: true, copied_lines: k, fork_status: null });
      expect(imp.sessions[0]).toMatchObject({ session_id: C, role: "fork", parent_session_id: P });
      const c = cat(ws, C);
      expect(c[0].type).toBe("session_fork");
      expect(c[0].data.codex.fork).toMatchObject({ source_thread: P, copied_lines: k, copied_timestamps: [[T0, k]] });
      // Only the fork's own lines (and a carried checkpoint) are stored in its Log.
      expect(c.filter((e) => e.data.codex?.line !== undefined && e.seq > 0).map((e) => e.data.codex.line)).toEqual([k + 2, k + 3]);
      expect(exportCodex(ws, C).stdout).toBe(rollout(fork));
      oracleHolds(ws, imp.leaf_session_id, fork);
      expect(run("pixir-log", ["check"], { cwd: ws }).code).toBe(0);
      expect(statuses(importCodex(ws, files.C, files.P))).toEqual(["unchanged", "unchanged"]);
    });
  }

  it("a fork imported before its source stays a root; one whose copy differs shares only the matching lines", () => {
    const source = fixtureLines(CODEMIE);
    const k = userTurnLines(source)[1]! - 1;
    const fork = codexFork(source, k, "C1", T0, own("q"));
    const files = { C: write(fork), P: path.join(CODEX_FIXTURES_DIR, CODEMIE) };
    const ws = tempDir();
    const alone = importCodex(ws, files.C);
    expect(alone.json.imports[0].fork).toMatchObject({ shared: false, fork_status: "source_missing" });
    const later = importCodex(ws, files.P, files.C);
    expect(later.json.imports[1].sessions[0].status).toBe("unchanged");
    expect(exportCodex(ws, "C1").stdout).toBe(rollout(fork));
    oracleHolds(ws, "C1", fork);

    // A copy whose 4th copied line was re-serialised differently: the first 3 lines still match.
    const changed = [...fork];
    changed[4] = changed[4]!.replace('"type":', '"type" :');
    const ws2 = tempDir();
    const r = importCodex(ws2, write(changed), files.P);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].fork).toMatchObject({ shared: true, copied_lines: 3 });
    expect(exportCodex(ws2, "C1").stdout).toBe(rollout(changed));
    oracleHolds(ws2, "C1", changed);

    // A copied session_meta that differs: nothing matches; line 2 not a session_meta: no copied prefix.
    const badMeta = [...fork];
    badMeta[1] = badMeta[1]!.replace('"cwd":', '"cwd" :');
    const noMeta = [fork[0]!, ...fork.slice(2)];
    const ws3 = tempDir();
    const r3 = importCodex(ws3, files.P, write(badMeta, "bad.jsonl"));
    expect(r3.json.imports[1].fork).toMatchObject({ shared: false, copied_lines: 0, fork_status: "copied_prefix_mismatch" });
    expect(cat(ws3, "C1")[0].data.lineage).toEqual({ forked_from_id: threadOf(source), fork_status: "copied_prefix_mismatch" });
    const ws4 = tempDir();
    const r4 = importCodex(ws4, files.P, write(noMeta, "none.jsonl"));
    expect(r4.json.imports[1].fork).toMatchObject({ shared: false, fork_status: "no_copied_prefix" });
    expect(exportCodex(ws4, "C1").stdout).toBe(rollout(noMeta));
  });

  it("a forked_from_id cycle imports as roots; a fork that only leads into the cycle still shares", () => {
    const a = [meta("A", { forked_from_id: "B" }), U("a1"), A("a2")];
    const b = [meta("B", { forked_from_id: "A" }), U("b1"), A("b2")];
    const d = codexFork(a, 3, "D", T0, own("d"));
    const ws = tempDir();
    const r = importCodex(ws, write(d, "d.jsonl"), write(a, "a.jsonl"), write(b, "b.jsonl"));
    expect(r.code, r.stderr).toBe(0);
    const byThread = Object.fromEntries(r.json.imports.map((i: any) => [i.thread_id, i.fork]));
    expect(byThread.A).toMatchObject({ shared: false, fork_status: "source_cycle" });
    expect(byThread.B).toMatchObject({ shared: false, fork_status: "source_cycle" });
    expect(byThread.D).toMatchObject({ shared: true, copied_lines: 3 });
    expect(exportCodex(ws, "D").stdout).toBe(rollout(d));
  });
});

/** A real rollout with rollbacks inserted after line `at` (k turns) and again a few lines later. */
function withRollbacks(source: string[], at: number, k: number): string[] {
  const ts = JSON.parse(source[at - 1]!).timestamp as string;
  return [...source.slice(0, at), rec("event_msg", { type: "thread_rolled_back", num_turns: k }, ts), U("after the rollback", ts), ...source.slice(at, at + 5), rolledBack(1), U("after the second rollback")];
}

describe.skipIf(!HAS_LOCALPUSH)(needsLocalpush("rollbacks in real rollouts (§3.3, §3.4)"), () => {
  const source = HAS_LOCALPUSH ? fixtureLines(COMPACTED) : [];
  const compactedAt = source.findIndex((l) => JSON.parse(l).type === "compacted") + 1;

  it("after a real compaction, twice: each child carries the checkpoint, and the oracle holds", () => {
    const lines = withRollbacks(source, compactedAt + 60, 1);
    const ws = tempDir();
    const r = importCodex(ws, write(lines));
    expect(r.code, r.stderr).toBe(0);
    const sessions = r.json.imports[0].sessions;
    expect(sessions.map((s: any) => s.role)).toEqual(["root", "rollback", "rollback"]);
    for (const s of sessions.slice(1)) {
      const carried = cat(ws, s.session_id).find((e) => e.type === "history_compaction");
      expect(carried?.data.codex.synthetic).toBe("carried_checkpoint");
    }
    oracleHolds(ws, r.json.imports[0].leaf_session_id, lines);
    for (const s of sessions) expect(exportCodex(ws, s.session_id).stdout).toBe(rollout(lines));
    expect(run("pixir-log", ["check"], { cwd: ws }).code).toBe(0);
  });

  it("before the compaction, dropping every turn; imported in steps it gives the same Logs", () => {
    const lines = withRollbacks(source, compactedAt - 40, 99);
    const ws = tempDir();
    const r = importCodex(ws, write(lines));
    expect(r.code, r.stderr).toBe(0);
    oracleHolds(ws, r.json.imports[0].leaf_session_id, lines);
    for (const c of [compactedAt - 40, compactedAt - 39, compactedAt + 10]) {
      const step = tempDir();
      const file = path.join(step, "rollout.jsonl");
      writeFileSync(file, rollout(lines.slice(0, c)));
      expect(importCodex(step, file).code).toBe(0);
      writeFileSync(file, rollout(lines));
      expect(importCodex(step, file).code).toBe(0);
      expect(logs(step)).toEqual(logs(ws));
    }
  });
});

describe("malformed and changed lines of a real rollout (§4.3, §4.5, §5.2)", () => {
  const source = fixtureLines(CODEMIE);
  const id = threadOf(source);

  it("a malformed line fails the import; with --lenient it is skipped, and the export names it", () => {
    const lines = [...source];
    lines[9] = lines[9]!.slice(0, 40);
    const file = write(lines);
    const ws = tempDir();
    const strict = importCodex(ws, file);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_codex_session", details: { reason: "malformed_line", line: 10, file } });
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
    const lenient = importCodex(ws, file, "--lenient");
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.imports[0]).toMatchObject({ skipped_lines: 1, line_count: lines.length });
    const skipped = cat(ws, id).find((e) => e.data.codex?.line === 10);
    expect(skipped.data).toEqual({ event: "codex_skipped_line", reason: "malformed_line", codex: { thread: id, line: 10, skipped: true } });
    const out = exportCodex(ws, id);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe(rollout(lines.filter((_l, i) => i !== 9)));
    expect(out.stderr).toContain("codex_lines_missing");
    const report = exportCodex(ws, id, "--dry-run", "--json");
    expect(report.json.missing_lines).toEqual([10]);
    expect(statuses(importCodex(ws, file, "--lenient"))).toEqual(["unchanged"]);
    // The skipped line now parses: the rollout changed at that line.
    writeFileSync(file, rollout(source));
    const fixed = importCodex(ws, file, "--lenient");
    expect(fixed.code).toBe(0);
    expect(fixed.json.imports).toEqual([]);
    expect(fixed.json.skipped_files).toEqual([
      { file, reason: "rollout_changed", error: expect.objectContaining({ kind: "already_exists", details: expect.objectContaining({ reason: "rollout_changed", line: 10 }) }) },
    ]);
  });

  it("a changed line with the file's size and time kept is still refused (the index digests the head)", () => {
    const file = write(source);
    const time = 1_780_000_000; // whole seconds, so the time set again is the time read
    utimesSync(file, time, time);
    const ws = tempDir();
    expect(importCodex(ws, file).code).toBe(0);
    const before = logs(ws);
    const changed = [...source];
    changed[1] = changed[1]!.replace(/"timestamp":"(\d)/, (_m, d) => `"timestamp":"${d === "1" ? "2" : "1"}`);
    writeFileSync(file, rollout(changed));
    utimesSync(file, time, time);
    expect(statSync(file).size).toBe(Buffer.byteLength(rollout(source)));
    const r = importCodex(ws, file);
    expect(r.code).toBe(1);
    expect(r.json.error.details).toMatchObject({ reason: "rollout_changed", line: 2, session_id: id });
    expect(logs(ws)).toEqual(before);
  });
});

describe("--lenient over a run (spec index: the cross-importer rules)", () => {
  it("skips refused, unreadable, duplicate and invalid files with their errors, and imports the rest", () => {
    const ws = tempDir();
    const grown = write([meta("G"), U("u1")], "g.jsonl");
    expect(importCodex(ws, grown).code).toBe(0);
    writeFileSync(grown, rollout([meta("G"), U("u1 changed"), A("a")]));
    const good = write([meta("OK"), U("hi")], "ok.jsonl");
    const dup = write([meta("OK"), U("again")], "dup.jsonl");
    const notRollout = write(['{"hello":1}'], "hello.jsonl");
    const strict = importCodex(ws, grown, good);
    expect(strict.code).toBe(1);
    expect(strict.json.error.details.reason).toBe("rollout_changed");
    expect(existsSync(path.join(ws, ".pixir", "sessions", "OK.ndjson"))).toBe(false);
    const r = importCodex(ws, grown, good, dup, notRollout, "--lenient");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports.map((i: any) => [i.thread_id, i.sessions[0].status])).toEqual([["OK", "created"]]);
    expect(r.json.skipped_files.map((s: any) => [s.file, s.reason, s.error?.kind])).toEqual([
      [dup, "duplicate_session_id", "invalid_codex_session"],
      [notRollout, "missing_session_meta", "invalid_codex_session"],
      [grown, "rollout_changed", "already_exists"],
    ]);
    const text = run("pixir", ["import", "codex", grown, "--lenient"], { cwd: ws });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`skipped ${grown} (rollout_changed)\n`);
  });
});

describe("Logs the run would create that exist already (spec index: log_differs)", () => {
  const lines = [meta("X"), U("u1"), A("a1"), U("u2"), A("a2"), rolledBack(1), U("u2b"), A("a2b")];

  it("an identical one is unchanged; a different one is already_exists log_differs, and nothing is written", () => {
    const file = write(lines);
    const ws = tempDir();
    expect(importCodex(ws, file).code).toBe(0);
    const child = readFileSync(path.join(ws, ".pixir", "sessions", "X.rollback-6.ndjson"));
    expect(run("pixir-log", ["rm", "X.rollback-6"], { cwd: ws }).code).toBe(0);
    expect(run("pixir-log", ["rm", "X"], { cwd: ws }).code).toBe(0);
    rmSync(path.join(ws, ".pixir", "codex-imports"), { recursive: true, force: true });
    writeFileSync(path.join(ws, ".pixir", "sessions", "X.rollback-6.ndjson"), child);
    const again = importCodex(ws, file);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.imports[0].sessions.map((s: any) => [s.session_id, s.status])).toEqual([
      ["X", "created"],
      ["X.rollback-6", "unchanged"],
    ]);
    expect(readFileSync(path.join(ws, ".pixir", "sessions", "X.rollback-6.ndjson")).equals(child)).toBe(true);

    const other = tempDir();
    expect(run("pixir-log", ["append", "X.rollback-6"], { cwd: other, input: '{"type":"user_message","data":{"text":"mine"}}\n' }).code).toBe(0);
    const before = logs(other);
    const r = importCodex(other, file);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists", details: { session_id: "X.rollback-6", reason: "log_differs", file } });
    expect(logs(other)).toEqual(before);
  });
});

describe("export (§5.2, §5.5, spec index)", () => {
  it("a materialized rollback child keeps its own lines; a line no Log holds is codex_export_incomplete", () => {
    const compacted = rec("compacted", { message: "m", replacement_history: [JSON.parse(U("u1")).payload, JSON.parse(U("sum")).payload] });
    const lines = [meta("M"), U("u1"), A("a1"), compacted, U("u2"), A("a2"), rolledBack(1), U("u3"), A("a3"), rolledBack(1), U("u4"), A("a4")];
    const file = write(lines);
    const ws = tempDir();
    expect(importCodex(ws, file).code).toBe(0);
    expect(run("pixir-log", ["materialize", "M.rollback-10"], { cwd: ws }).code).toBe(0);
    expect(run("pixir-log", ["materialize", "M.rollback-7"], { cwd: ws }).code).toBe(0);
    for (const id of ["M", "M.rollback-7", "M.rollback-10"]) expect(exportCodex(ws, id).stdout).toBe(rollout(lines));
    const more = [...lines, A("a5")];
    writeFileSync(file, rollout(more));
    const grown = importCodex(ws, file);
    expect(grown.json.imports[0].sessions.map((s: any) => s.status)).toEqual(["unchanged", "unchanged", "appended"]);
    expect(exportCodex(ws, "M").stdout).toBe(rollout(more));
    expect(run("pixir-log", ["rm", "M.rollback-7"], { cwd: ws }).code).toBe(0);
    const r = run("pixir", ["export", "codex", "M", "--json"], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.errJson.error).toMatchObject({ kind: "codex_export_incomplete", details: { session_id: "M", missing_lines: [7, 8, 9] } });
    expect(r.stdout).toBe("");
  });

  it("--out makes the date directories 0700, keeps a rollout name of the thread, and never replaces a file", () => {
    const lines = [meta("X"), U("u1"), A("a1")];
    const ws = tempDir();
    expect(importCodex(ws, write(lines, "rollout-2026-03-01T12-00-00-X.jsonl")).code).toBe(0);
    const out = tempDir();
    const w = run("pixir", ["export", "codex", "X", "--out", out, "--json"], { cwd: ws });
    expect(w.code, w.stderr).toBe(0);
    expect(w.json).toMatchObject({ file: "2026/03/01/rollout-2026-03-01T12-00-00-X.jsonl", status: "created", export: "original" });
    for (const d of ["2026", "2026/03", "2026/03/01"]) expect(statSync(path.join(out, d)).mode & 0o777).toBe(0o700);
    expect(readFileSync(path.join(out, w.json.file), "utf8")).toBe(rollout(lines));
    const notDir = path.join(out, "file");
    writeFileSync(notDir, "");
    const bad = run("pixir", ["export", "codex", "X", "--out", notDir, "--json"], { cwd: ws });
    expect(bad.code).toBe(2);
    expect(bad.json.error.details).toMatchObject({ field: "out", reason: "not_a_directory" });
  });

  it("a compacted record whose replacement_history is not an array comes back as it was", () => {
    const lines = [meta("N"), U("u1"), rec("compacted", { message: "m", replacement_history: 5 }), rec("compacted", { message: "legacy" }), U("u2")];
    const ws = tempDir();
    expect(importCodex(ws, write(lines)).code).toBe(0);
    expect(exportCodex(ws, "N").stdout).toBe(rollout(lines));
    oracleHolds(ws, "N", lines);
  });

  it("a pixir fork whose copied lines include one --lenient skipped names it and writes the rest", () => {
    const lines = [meta("P"), U("u1"), "{oops", A("a1"), U("u2")];
    const ws = tempDir();
    expect(importCodex(ws, write(lines), "--lenient").code).toBe(0);
    expect(run("pixir", ["fork", "P", "--child-id", "f"], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["append", "f"], { cwd: ws, input: '{"type":"user_message","data":{"text":"next"}}\n' }).code).toBe(0);
    const r = run("pixir", ["export", "codex", "f", "--dry-run", "--json"], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ export: "fork", missing_lines: [3], copied_line_count: 4 });
    const stream = exportCodex(ws, "f");
    expect(stream.code).toBe(0);
    expect(stream.stderr).toContain("warning: codex_lines_missing:");
    const written = completeLines(stream.stdout).map((l) => JSON.parse(l));
    expect(written.map((l) => l.payload.type ?? l.type)).toEqual(["session_meta", "session_meta", "message", "message", "message", "message", "user_message"]);
  });
});

describe("the import index (§4.5)", () => {
  it("a rollback child removed since the last run is made again from the rollout", () => {
    const lines = [meta("X"), U("u1"), A("a1"), U("u2"), rolledBack(1), U("u2b")];
    const file = write(lines);
    const ws = tempDir();
    expect(importCodex(ws, file).code).toBe(0);
    const whole = logs(ws);
    expect(run("pixir-log", ["rm", "X.rollback-5"], { cwd: ws }).code).toBe(0);
    const r = importCodex(ws, file);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].sessions.map((s: any) => s.status)).toEqual(["unchanged", "created"]);
    expect(logs(ws)).toEqual(whole);
  });
});

describe("permissions (§4.3)", () => {
  // Root reads a mode-000 file anyway: as root, pixir runs as nobody, from a copy nobody can reach.
  const root = process.getuid?.() === 0;
  const asOther = root ? { uid: 65534, gid: 65534, bin: toolCopyForAnyUser("pixir") } : {};

  it("an unreadable rollout is permission_denied (exit 3), with --lenient too", () => {
    const file = write([meta("U"), U("u1")]);
    chmodSync(path.dirname(file), 0o755);
    chmodSync(file, 0o000);
    const ws = tempDir();
    chmodSync(ws, 0o755);
    for (const extra of [[], ["--lenient"]]) {
      const r = run("pixir", ["import", "codex", file, ...extra, "--json"], { cwd: ws, ...asOther });
      expect(r.code, r.stdout + r.stderr).toBe(3);
      expect(r.json.error).toMatchObject({ kind: "permission_denied", details: { path: file } });
    }
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
  });
});

describe("subagent links (§3.6)", () => {
  const spawn = (parent: string, role: string) => ({ source: { subagent: { thread_spawn: { parent_thread_id: parent, depth: 1, agent_role: role } } } });

  it("are ordered by the subagent's line-1 time; a subagent that forked its parent takes its task from the copied lines", () => {
    const P = [meta("P"), U("u1"), A("a1"), U("u2"), A("a2")];
    const late = [meta("S1", spawn("P", "late"), "2026-05-02T00:00:00.000Z"), U("late task")];
    const early = [meta("S2", spawn("P", "early"), "2026-05-01T00:00:00.000Z"), U("early task")];
    const forked = codexFork(P, 3, "S3", "2026-05-03T00:00:00.000Z", own("own question"));
    const f3 = JSON.parse(forked[0]!);
    forked[0] = JSON.stringify({ ...f3, payload: { ...f3.payload, ...spawn("P", "forked") } });
    const files = [write(P, "p.jsonl"), write(late, "s1.jsonl"), write(early, "s2.jsonl"), write(forked, "s3.jsonl")];
    const ws = tempDir();
    const r = importCodex(ws, ...[...files].reverse());
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports.find((i: any) => i.thread_id === "S3").fork).toMatchObject({ shared: true, copied_lines: 3 });
    const links = cat(ws, "P").filter((e) => e.type === "subagent_event");
    expect(links.map((e) => [e.seq, e.data.child_session_id, e.data.agent, e.data.task])).toEqual([
      [5, "S2", "early", "early task"],
      [6, "S1", "late", "late task"],
      [7, "S3", "forked", "u1"],
    ]);
    expect(exportCodex(ws, "P").stdout).toBe(rollout(P));
    expect(exportCodex(ws, "S3").stdout).toBe(rollout(forked));
    const again = importCodex(ws, ...files);
    expect(again.json.links).toEqual([]);
    expect(statuses(again)).toEqual(["unchanged", "unchanged", "unchanged", "unchanged"]);
    // The same links when the subagents were imported first and the parent later (the index is not read for a new parent).
    const later = tempDir();
    expect(importCodex(later, ...files.slice(1)).json.links).toEqual([]);
    const r2 = importCodex(later, files[0]!);
    expect(r2.json.links.map((l: any) => l.child_session_id)).toEqual(["S2", "S1", "S3"]);
    expect(cat(later, "P").filter((e) => e.type === "subagent_event").map((e) => [e.seq, e.data.task])).toEqual([
      [5, "early task"],
      [6, "late task"],
      [7, "u1"],
    ]);
  });
});

describe("streaming new families (§4.8) on worker threads", () => {
  // Without the localpush rollouts, the other codemie rollout stands in as the third one.
  const third = HAS_LOCALPUSH ? COMPACTED : "codemie-code/rollout-2026-05-11T13-28-45-019e1695-0522-7c83-8b39-0dd379793f80.jsonl";
  const fixtures = ["agent-history/session-01.jsonl", CODEMIE, third, "agent-sessions/small.jsonl"].map(codexFixturePath);
  const importWith = (threads: string, ...args: string[]) => {
    const ws = tempDir();
    const r = run("pixir", ["import", "codex", ...args, "--json"], { cwd: ws, env: { PIXIR_SCAN_THREADS: threads, CODEX_HOME: path.join(ws, "none") } });
    return { ws, r };
  };

  it("gives the Logs one thread gives; a rollout with a rollback is planned in memory", () => {
    const withRollback = write([meta("RB"), U("u1"), A("a1"), U("u2"), rolledBack(1), U("u2b")], "rb.jsonl");
    const one = importWith("1", ...fixtures, withRollback);
    const two = importWith("3", ...fixtures, withRollback);
    expect(one.r.code, one.r.stderr).toBe(0);
    expect(two.r.code, two.r.stderr).toBe(0);
    expect(two.r.json.imports).toEqual(one.r.json.imports);
    expect(logs(two.ws)).toEqual(logs(one.ws));
    expect(Object.keys(logs(two.ws))).toContain("RB.rollback-5.ndjson");
    expect(readdirSync(path.join(two.ws, ".pixir", "sessions")).filter((n) => n.includes(".tmp-"))).toEqual([]);
  });

  it("a malformed line in one rollout fails the run and leaves no temp file; with --lenient it is skipped", () => {
    const lines = fixtureLines(CODEMIE);
    lines[20] = "{not json";
    const bad = write(lines, "bad.jsonl");
    const others = [fixtures[0]!, fixtures[2]!, fixtures[3]!];
    const { ws, r } = importWith("2", others[0]!, others[1]!, bad, others[2]!);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "invalid_codex_session", details: { reason: "malformed_line", line: 21, file: bad } });
    // The Logs streamed before the error were prepared only: no temp file, not even .pixir/, is left.
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
    const lenient = importWith("2", others[0]!, others[1]!, bad, others[2]!, "--lenient");
    expect(lenient.r.code, lenient.r.stderr).toBe(0);
    expect(lenient.r.json.imports.map((i: any) => i.skipped_lines)).toEqual([0, 0, 1, 0]);
  });

  it("commits on the worker threads as one thread does: of two threads whose Logs share a name, the earlier is written and the run fails at the later", () => {
    // A thread id that is another thread's hashed id (§3.1) names the same Log.
    const hashed = "my thread/1";
    const named = `codex-${createHash("sha256").update(hashed).digest("hex").slice(0, 32)}`;
    const first = write([meta(hashed), U("first")], "first.jsonl");
    const second = write([meta(named), U("second")], "second.jsonl");
    const one = importWith("1", ...fixtures, first, second);
    const two = importWith("2", ...fixtures, first, second);
    for (const { ws, r } of [one, two]) {
      expect(r.code).toBe(1);
      expect(r.json.error).toMatchObject({ kind: "already_exists", details: { session_id: named, earlier_writes_kept: true } });
      expect(readdirSync(path.join(ws, ".pixir", "sessions")).filter((n) => n.includes(".tmp-"))).toEqual([]);
      expect(readdirSync(path.join(ws, ".pixir", "session_leases"))).toEqual([]);
    }
    expect(Object.keys(logs(two.ws))).toHaveLength(fixtures.length + 1);
    expect(logs(two.ws)).toEqual(logs(one.ws));
    expect(cat(two.ws, named)[1].data.text).toBe("first");
  });
});

describe("inputs, ids and leases (§4.1, §4.6, §4.7)", () => {
  it("a thread id that is no session id gets a hashed Log id and is never echoed", () => {
    const bad = "my thread/1";
    const file = write([meta(bad), U("u1"), A("a1")]);
    const ws = tempDir();
    const r = importCodex(ws, file);
    expect(r.code, r.stderr).toBe(0);
    const id = r.json.imports[0].sessions[0].session_id;
    expect(id).toMatch(/^codex-[0-9a-f]{32}$/);
    expect(r.json.imports[0].thread_id).toBeNull();
    expect(r.stdout).not.toContain(bad);
    const fork = write(codexFork([meta(bad), U("u1"), A("a1")], 3, "F1", T0, own("q")), "f.jsonl");
    const f = importCodex(ws, fork);
    expect(f.json.imports[0].fork).toMatchObject({ source_thread_id: null, shared: true });
    const out = run("pixir", ["export", "codex", id, "--dry-run", "--json"], { cwd: ws });
    expect(out.json.file).toMatch(new RegExp(`/rollout-[0-9T-]+-${id}\\.jsonl$`));
    expect(exportCodex(ws, "F1").stdout).toBe(readFileSync(fork, "utf8"));
  });

  it("follows a named symbolic link, not one met in a directory; a file named twice is read once", () => {
    const dir = tempDir();
    const real = write([meta("L1"), U("u1")], "real.jsonl");
    symlinkSync(real, path.join(dir, "link.jsonl"));
    writeFileSync(path.join(dir, "own.jsonl"), rollout([meta("L2"), U("u2")]));
    const ws = tempDir();
    const walked = importCodex(ws, dir, "--dry-run");
    expect(walked.json.imports.map((i: any) => i.thread_id)).toEqual(["L2"]);
    const named = importCodex(ws, path.join(dir, "link.jsonl"), real, "--dry-run");
    expect(named.code, named.stderr).toBe(0);
    expect(named.json.imports.map((i: any) => [i.thread_id, i.file])).toEqual([["L1", path.join(dir, "link.jsonl")]]);
  });

  it("a missing default directory is not_found, naming it", () => {
    const ws = tempDir();
    const home = path.join(ws, "nowhere");
    const r = run("pixir", ["import", "codex", "--json"], { cwd: ws, env: { CODEX_HOME: home } });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ kind: "not_found", details: { path: path.join(home, "sessions"), next_actions: ["check the path", "set CODEX_HOME or pass the sessions directory"] } });
  });

  it("a Log held by another writer fails the run with exit 5 before anything is written", () => {
    const file = write([meta("H"), U("u1"), A("a1")]);
    const other = write([meta("H2"), U("u1")], "h2.jsonl");
    const ws = tempDir();
    const dir = path.join(ws, ".pixir", "session_leases");
    mkdirSync(dir, { recursive: true });
    const lease = { version: 1, purpose: "session_writer", session_id: "H", workspace: ws, holder_id: "wrl_0123456789abcdef", os_pid: "1", hostname: "elsewhere", heartbeat_at_ms: Date.now(), stale_after_ms: 600000 };
    writeFileSync(path.join(dir, "H.json"), JSON.stringify(lease));
    const r = importCodex(ws, other, file);
    expect(r.code).toBe(5);
    expect(r.json.error).toMatchObject({ kind: "session_writer_active", details: { session_id: "H" } });
    expect(existsSync(path.join(ws, ".pixir", "sessions"))).toBe(false);
  });
});
