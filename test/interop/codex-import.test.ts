// pixir import codex / pixir export codex (codex-interop.md §7), against the built binaries.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ev, tempDir, workspace } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import {
  A,
  CODEX_FIXTURES_DIR,
  codexFixturePath,
  codexFixtures,
  completeLines,
  expectedSignatures,
  FC,
  FO,
  meta,
  observedSignatures,
  rec,
  rolledBack,
  rollout,
  TC,
  U,
} from "../support/codex.js";

const importCodex = (ws: string, ...args: string[]) => run("pixir", ["import", "codex", ...args, "--json"], { cwd: ws, env: { CODEX_HOME: path.join(ws, "no-codex-home") } });
/** The Events stored in a Log file (a share_v1 child's header and own Events). */
const cat = (ws: string, id: string): any[] =>
  readFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));
const contextOf = (ws: string, id: string): any[] => {
  const r = run("pixir", ["context", id, "--format", "ndjson"], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return r.lines;
};
/** Every Log file of a Workspace, by name, with the Workspace path taken out. */
function logs(ws: string): Record<string, string> {
  const dir = path.join(ws, ".pixir", "sessions");
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) if (name.endsWith(".ndjson")) out[name] = readFileSync(path.join(dir, name), "utf8").split(ws).join("<ws>");
  return out;
}
const countTypes = (events: any[]): Record<string, number> => {
  const c: Record<string, number> = {};
  for (const e of events) c[e.type] = (c[e.type] ?? 0) + 1;
  return c;
};

describe.each(codexFixtures())("fixture %s (§7.3)", (rel) => {
  const file = codexFixturePath(rel);
  const bytes = readFileSync(file);
  const lines = completeLines(bytes.toString("utf8"));
  const threadId = JSON.parse(lines[0]!).payload.id as string;
  const ws = tempDir();
  const first = importCodex(ws, file);

  it("imports, checks clean, and is unchanged on a second import", () => {
    expect(first.code, first.stderr).toBe(0);
    const imp = first.json.imports[0];
    expect(imp.thread_id).toBe(threadId);
    expect(imp.line_count).toBe(lines.length);
    expect(imp.sessions.map((s: any) => s.status)).toEqual(["created"]);
    const check = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(check.code, check.stdout + check.stderr).toBe(0);
    const before = logs(ws);
    const again = importCodex(ws, file);
    expect(again.code).toBe(0);
    expect(again.json.recorded).toBe(false);
    expect(again.json.imports[0].sessions.map((s: any) => s.status)).toEqual(["unchanged"]);
    expect(logs(ws)).toEqual(before);
  });

  it("exports the original bytes, to stdout and under --out", () => {
    const out = run("pixir", ["export", "codex", threadId], { cwd: ws });
    expect(out.code, out.stderr).toBe(0);
    expect(Buffer.from(out.stdout, "utf8").equals(bytes)).toBe(true);
    const dir = tempDir();
    const w = run("pixir", ["export", "codex", threadId, "--out", dir, "--json"], { cwd: ws });
    expect(w.code, w.stderr).toBe(0);
    expect(w.json.export).toBe("original");
    const base = path.basename(rel);
    const expectedName = /^rollout-\d{4}-/.test(base) ? `${base.slice(8, 12)}/${base.slice(13, 15)}/${base.slice(16, 18)}/${base}` : w.json.file;
    expect(w.json.file).toBe(expectedName);
    expect(readFileSync(path.join(dir, w.json.file)).equals(bytes)).toBe(true);
    const again = run("pixir", ["export", "codex", threadId, "--out", dir, "--json"], { cwd: ws });
    expect(again.json.status).toBe("unchanged");
  });

  it("passes the oracle of §7.2", () => {
    expect(observedSignatures(contextOf(ws, first.json.imports[0].leaf_session_id))).toEqual(expectedSignatures(lines));
  });

  it("appends in steps to the same Logs as one import (cut points, pending tail)", () => {
    const whole = logs(ws);
    for (const c of [1, Math.floor(lines.length / 2), lines.length - 1]) {
      const step = tempDir();
      const part = path.join(step, path.basename(rel));
      const cutInLine = lines.slice(0, c).join("\n") + "\n" + lines[c]!.slice(0, Math.floor(lines[c]!.length / 2));
      writeFileSync(part, cutInLine);
      const torn = importCodex(step, part);
      expect(torn.code, torn.stderr).toBe(0);
      expect(torn.json.imports[0].pending_tail).toBe(true);
      expect(torn.json.imports[0].line_count).toBe(c);
      const whole_c = tempDir();
      const copyC = path.join(whole_c, path.basename(rel));
      writeFileSync(copyC, lines.slice(0, c).join("\n") + "\n");
      expect(importCodex(whole_c, copyC).code).toBe(0);
      expect(logs(step)).toEqual(logs(whole_c));
      writeFileSync(part, bytes);
      const grown = importCodex(step, part);
      expect(grown.code, grown.stderr).toBe(0);
      expect(grown.json.imports[0].sessions[0].status).toBe(c === lines.length ? "unchanged" : "appended");
      expect(logs(step)).toEqual(whole);
    }
  });

  it("refuses a changed earlier line and writes nothing", () => {
    const copyWs = tempDir();
    const copy = path.join(copyWs, "copy.jsonl");
    writeFileSync(copy, bytes);
    expect(importCodex(copyWs, copy).code).toBe(0);
    const before = logs(copyWs);
    const changed = [...lines];
    // One character inside line 2's timestamp.
    changed[1] = changed[1]!.replace(/"timestamp":"(\d)/, (_m, d) => `"timestamp":"${d === "1" ? "2" : "1"}`);
    writeFileSync(copy, changed.map((l) => `${l}\n`).join(""));
    const r = importCodex(copyWs, copy);
    expect(r.code).toBe(1);
    expect(r.json.error.kind).toBe("already_exists");
    const details = r.json.error.details;
    expect(details.reason).toBe("rollout_changed");
    expect(details.line).toBe(2);
    expect(logs(copyWs)).toEqual(before);
  });

  it("--dry-run creates nothing, not even .pixir", () => {
    const dry = tempDir();
    const r = importCodex(dry, file, "--dry-run");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].sessions[0].status).toBe("would_create");
    expect(existsSync(path.join(dry, ".pixir"))).toBe(false);
  });
});

describe("expected imports (§7.1)", () => {
  it("agent-history/session-01.jsonl", () => {
    const ws = tempDir();
    expect(importCodex(ws, path.join(CODEX_FIXTURES_DIR, "agent-history/session-01.jsonl")).code).toBe(0);
    const events = cat(ws, "019e9625-802f-7e91-840a-cfe88d14117a");
    expect(events).toHaveLength(11);
    expect(countTypes(events)).toEqual({ workflow_event: 7, user_message: 2, assistant_message: 1, provider_usage: 1 });
    expect(events[3].data.origin).toBe("context");
    const usage = events.find((e) => e.type === "provider_usage").data;
    expect({ input: usage.input, cache_read: usage.cache_read, output: usage.output, total_tokens: usage.total_tokens, model: usage.model }).toEqual({
      input: 1675,
      cache_read: 20864,
      output: 10,
      total_tokens: 22549,
      model: "gpt-5.5",
    });
    expect(events[9].data.codex.raw).toBeTypeOf("string");
    expect(contextOf(ws, "019e9625-802f-7e91-840a-cfe88d14117a")).toHaveLength(3);
    const out = run("pixir", ["export", "codex", "019e9625-802f-7e91-840a-cfe88d14117a", "--dry-run", "--json"], { cwd: ws });
    expect(out.json.file).toBe("2026/06/05/rollout-2026-06-05T04-58-20-019e9625-802f-7e91-840a-cfe88d14117a.jsonl");
  });

  it("codemie-code 0.125 rollout", () => {
    const ws = tempDir();
    const id = "019e1625-789d-76c0-80ab-3724b5ddb799";
    expect(importCodex(ws, path.join(CODEX_FIXTURES_DIR, `codemie-code/rollout-2026-05-11T11-26-55-${id}.jsonl`)).code).toBe(0);
    const events = cat(ws, id);
    expect(events).toHaveLength(386);
    expect(countTypes(events)).toEqual({ workflow_event: 75, user_message: 3, assistant_message: 13, reasoning: 25, tool_call: 102, tool_result: 102, provider_usage: 66 });
    const usage = events.filter((e) => e.type === "provider_usage");
    const byTurn = new Map<string, number>();
    for (const u of usage) byTurn.set(u.data.turn_id, (byTurn.get(u.data.turn_id) ?? 0) + u.data.total_tokens);
    expect([...byTurn.values()]).toEqual([58280, 6006674]);
    expect(usage.reduce((s, u) => s + u.data.total_tokens, 0)).toBe(6064954);
    expect(events.some((e) => e.data.codex?.raw !== undefined)).toBe(false);
    expect(events[5].data).toMatchObject({ text: "show tools", role: "user", origin: "user" });
  });

  it("agent-sessions/small.jsonl (hand-made composite)", () => {
    const ws = tempDir();
    const id = "019fc8be-3658-7ca3-9e29-000000000000";
    const r = importCodex(ws, path.join(CODEX_FIXTURES_DIR, "agent-sessions/small.jsonl"));
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].sessions).toHaveLength(1);
    expect(r.json.links).toEqual([]);
    const events = cat(ws, id);
    expect(events).toHaveLength(277);
    expect(countTypes(events)).toEqual({
      workflow_event: 123,
      user_message: 116,
      assistant_message: 11,
      reasoning: 7,
      tool_call: 6,
      tool_result: 6,
      history_compaction: 6,
      turn_failed: 1,
      provider_usage: 1,
    });
    expect(events.find((e) => e.data.codex?.line === 22).data.codex.raw).toBeTypeOf("string");
    const context = contextOf(ws, id);
    expect(context[0].type).toBe("history_compaction");
    const checkpoint = events.filter((e) => e.type === "history_compaction").at(-1);
    expect(checkpoint.data.codex.line).toBe(111);
    expect(checkpoint.data.replacement_item_count).toBe(13);
    const out = run("pixir", ["export", "codex", id, "--dry-run", "--json"], { cwd: ws });
    expect(out.json.file).toBe("2026/08/03/rollout-2026-08-03T10-48-56-019fc8be-3658-7ca3-9e29-000000000000.jsonl");
  });
});

/** Write rollouts named by thread into a fresh directory. */
function writeRollouts(files: Record<string, string[]>): { dir: string; paths: Record<string, string> } {
  const dir = tempDir();
  const paths: Record<string, string> = {};
  for (const [name, lines] of Object.entries(files)) {
    paths[name] = path.join(dir, `${name}.jsonl`);
    writeFileSync(paths[name]!, rollout(lines));
  }
  return { dir, paths };
}

const texts = (ws: string, id: string): unknown[] =>
  contextOf(ws, id)
    .filter((l) => l.type === "user_message" || l.type === "assistant_message" || l.type === "history_compaction")
    .map((l) => (l.type === "history_compaction" ? "checkpoint" : l.item.content[0].text));

describe("case R: rollback (§7.4)", () => {
  const base = (k: number) => [
    meta("X"),
    U("<environment_context>\n</environment_context>"),
    U("u1"),
    A("a1"),
    TC(12),
    U("u2"),
    FC("c1"),
    FO("c1"),
    A("a2"),
    rolledBack(k),
    U("u2b"),
    A("a2b"),
  ];

  it("num_turns 1: a share_v1 child at the cut, and both Logs export the 12 lines", () => {
    const lines = base(1);
    const { paths } = writeRollouts({ X: lines });
    const ws = tempDir();
    const r = importCodex(ws, paths.X!);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports[0].leaf_session_id).toBe("X.rollback-10");
    const x = cat(ws, "X");
    expect(x.map((e) => e.type)).toEqual(["workflow_event", "user_message", "user_message", "assistant_message", "provider_usage", "user_message", "tool_call", "tool_result", "assistant_message"]);
    const child = cat(ws, "X.rollback-10");
    expect(child[0].type).toBe("session_fork");
    expect(child[0].data).toMatchObject({ parent_session_id: "X", forked_to_seq: 3, replay_event_count: 4, strategy: "share_v1" });
    expect(child[0].data.codex).toEqual({ synthetic: "rollback_fork", thread: "X", line: 10, num_turns: 1 });
    expect(child.slice(1).map((e) => [e.seq, e.data.codex.line])).toEqual([
      [5, 10],
      [6, 11],
      [7, 12],
    ]);
    expect(texts(ws, "X.rollback-10")).toEqual(["<environment_context>\n</environment_context>", "u1", "a1", "u2b", "a2b"]);
    expect(observedSignatures(contextOf(ws, "X.rollback-10"))).toEqual(expectedSignatures(lines));
    for (const id of ["X", "X.rollback-10"]) expect(run("pixir", ["export", "codex", id], { cwd: ws }).stdout).toBe(rollout(lines));
    expect(run("pixir-log", ["check"], { cwd: ws }).code).toBe(0);
  });

  it("num_turns 2 cuts before u1", () => {
    const { paths } = writeRollouts({ X: base(2) });
    const ws = tempDir();
    expect(importCodex(ws, paths.X!).code).toBe(0);
    const child = cat(ws, "X.rollback-10");
    expect(child[0].data).toMatchObject({ forked_to_seq: 1, replay_event_count: 2 });
    expect(texts(ws, "X.rollback-10")).toEqual(["<environment_context>\n</environment_context>", "u2b", "a2b"]);
  });

  it("a compaction before the rollback is carried into the child", () => {
    const lines = base(1);
    lines.splice(9, 0, rec("compacted", { message: "", replacement_history: [JSON.parse(U("u1")).payload, JSON.parse(U("sum")).payload] }));
    const { paths } = writeRollouts({ X: lines });
    const ws = tempDir();
    const r = importCodex(ws, paths.X!);
    expect(r.code, r.stderr).toBe(0);
    const child = cat(ws, "X.rollback-11");
    expect(child[0].data).toMatchObject({ forked_to_seq: 10, replay_event_count: 9 });
    expect(child[1].type).toBe("history_compaction");
    expect(child[1].seq).toBe(10);
    expect(child[1].data.range.to_seq).toBe(8);
    expect(child[1].data.codex.synthetic).toBe("carried_checkpoint");
    expect(texts(ws, "X.rollback-11")).toEqual(["checkpoint", "u1", "u2b", "a2b"]);
    expect(observedSignatures(contextOf(ws, "X.rollback-11"))).toEqual(expectedSignatures(lines));
    expect(run("pixir", ["export", "codex", "X.rollback-11"], { cwd: ws }).stdout).toBe(rollout(lines));
  });

  it("imported in steps across the rollback, gives the same Logs", () => {
    const lines = base(1);
    const { paths } = writeRollouts({ X: lines });
    const one = tempDir();
    expect(importCodex(one, paths.X!).code).toBe(0);
    for (const c of [8, 9, 10, 11]) {
      const step = tempDir();
      const part = path.join(step, "X.jsonl");
      writeFileSync(part, rollout(lines.slice(0, c)));
      expect(importCodex(step, part).code).toBe(0);
      writeFileSync(part, rollout(lines));
      const r = importCodex(step, part);
      expect(r.code, r.stderr).toBe(0);
      expect(logs(step)).toEqual(logs(one));
    }
  });

  it("case D: a native Event in the leaf refuses a grown rollout (log_diverged)", () => {
    const lines = base(1);
    const dir = tempDir();
    const file = path.join(dir, "X.jsonl");
    writeFileSync(file, rollout(lines));
    const ws = tempDir();
    expect(importCodex(ws, file).code).toBe(0);
    const app = run("pixir", ["append", "X.rollback-10"], { cwd: ws, input: '{"type":"user_message","data":{"text":"mine"}}\n' });
    expect(app.code, app.stderr).toBe(0);
    writeFileSync(file, rollout([...lines, U("more")]));
    const before = logs(ws);
    const r = importCodex(ws, file);
    expect(r.code).toBe(1);
    expect(r.json.error.details.reason).toBe("log_diverged");
    expect(logs(ws)).toEqual(before);
  });
});

describe("case F: a Codex fork (§7.4)", () => {
  const t0 = "2026-03-02T09:00:00.000Z";
  const P = [meta("P"), U("u1"), A("a1"), U("u2"), A("a2")];
  const copy = (line: string): string => line.replace(/^\{"timestamp":"[^"]*"/, `{"timestamp":"${t0}"`);
  const C = [meta("C", { forked_from_id: "P" }, t0), ...P.slice(0, 3).map(copy), U("u2x"), A("a2x")];

  it("is stored once, as a share_v1 child of its source", () => {
    const { paths } = writeRollouts({ P, C });
    const ws = tempDir();
    const r = importCodex(ws, paths.C!, paths.P!);
    expect(r.code, r.stderr).toBe(0);
    const c = cat(ws, "C");
    expect(c[0].type).toBe("session_fork");
    expect(c[0].data).toMatchObject({ parent_session_id: "P", forked_to_seq: 2, replay_event_count: 3 });
    expect(c[0].data.codex.fork).toMatchObject({ source_thread: "P", copied_lines: 3, copied_timestamps: [[t0, 3]] });
    expect(c.slice(1).map((e) => [e.seq, e.data.text])).toEqual([
      [4, "u2x"],
      [5, "a2x"],
    ]);
    expect(texts(ws, "C")).toEqual(["u1", "a1", "u2x", "a2x"]);
    expect(run("pixir", ["export", "codex", "C"], { cwd: ws }).stdout).toBe(rollout(C));
    expect(observedSignatures(contextOf(ws, "C"))).toEqual(expectedSignatures(C));
    expect(importCodex(ws, paths.C!, paths.P!).json.imports.map((i: any) => i.sessions[0].status)).toEqual(["unchanged", "unchanged"]);
  });

  it("without its source it is a root, and stays one", () => {
    const { paths } = writeRollouts({ P, C });
    const ws = tempDir();
    expect(importCodex(ws, paths.C!).code).toBe(0);
    const c = cat(ws, "C");
    expect(c[0].data.lineage).toEqual({ forked_from_id: "P", fork_status: "source_missing" });
    expect(c.map((e) => e.data.text ?? e.data.event)).toEqual(["codex_session_meta", "codex_record", "u1", "a1", "u2x", "a2x"]);
    const r = importCodex(ws, paths.P!, paths.C!);
    expect(r.json.imports[1].sessions[0].status).toBe("unchanged");
    expect(run("pixir", ["export", "codex", "C"], { cwd: ws }).stdout).toBe(rollout(C));
  });

  it("case E: a pixir fork exports as a rollout Codex resumes, and imports back as a fork of P", () => {
    const { paths } = writeRollouts({ P });
    const ws = tempDir();
    expect(importCodex(ws, paths.P!).code).toBe(0);
    expect(run("pixir", ["fork", "P", "--to-seq", "2", "--child-id", "c1"], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["append", "c1"], { cwd: ws, input: '{"type":"user_message","data":{"text":"next"}}\n' }).code).toBe(0);
    const out = run("pixir", ["export", "codex", "c1"], { cwd: ws });
    expect(out.code, out.stderr).toBe(0);
    const lines = completeLines(out.stdout).map((l) => JSON.parse(l));
    expect(lines).toHaveLength(6);
    const t = lines[0].timestamp;
    // t0 is the appended Event's ts (§5.3 anchor: the first Event of the native tail).
    expect(t).toBe(cat(ws, "c1").at(-1).ts);
    expect(lines[0].payload).toMatchObject({ forked_from_id: "P", timestamp: t });
    expect(Object.keys(lines[0].payload).slice(0, 2)).toEqual(["id", "forked_from_id"]);
    expect(lines.slice(1, 4).map((l) => l.timestamp)).toEqual([t, t, t]);
    expect(lines[4].payload).toEqual({ type: "message", role: "user", content: [{ type: "input_text", text: "next" }] });
    expect(lines[5].payload.type).toBe("user_message");
    expect(run("pixir", ["export", "codex", "c1"], { cwd: ws }).stdout).toBe(out.stdout);
    const dir = tempDir();
    const w = run("pixir", ["export", "codex", "c1", "--out", dir, "--json"], { cwd: ws });
    expect(w.json).toMatchObject({ export: "fork", forked_from_id: "P", copied_line_count: 3, status: "created" });
    const back = importCodex(ws, path.join(dir, w.json.file));
    expect(back.code, back.stderr).toBe(0);
    expect(back.json.imports[0].fork).toMatchObject({ shared: true, copied_lines: 3 });
    expect(texts(ws, lines[0].payload.id)).toEqual(["u1", "a1", "next"]);
  });
});

describe("case S: a subagent (§7.4)", () => {
  const P = [meta("P"), U("u1"), A("a1"), U("u2"), A("a2")];
  const S = [meta("S", { source: { subagent: { thread_spawn: { parent_thread_id: "P", depth: 1, agent_nickname: "Ada", agent_role: "explorer" } } } }), U("inspect logs"), A("found one")];

  it("links the subagent from its parent's leaf, once, in either order", () => {
    const { paths } = writeRollouts({ P, S });
    const ws = tempDir();
    const r = importCodex(ws, paths.P!, paths.S!);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.links).toEqual([{ parent_session_id: "P", child_session_id: "S", status: "created" }]);
    const link = cat(ws, "P")[5];
    expect(link).toMatchObject({ seq: 5, type: "subagent_event" });
    expect(link.data).toMatchObject({ subagent_id: "S", child_session_id: "S", event: "spawned", agent: "explorer", depth: 1, task: "inspect logs" });
    const tree = run("pixir", ["tree", "P", "--verbose"], { cwd: ws });
    expect(tree.stdout.split(ws).join("<ws>")).toBe(
      [
        "session P (events=6)",
        "  workspace: <ws>",
        "`-- subagent S (explorer)",
        "    child_session: S",
        "    task: inspect logs",
        "    events: spawned",
        "    child session S (events=3)",
        "      workspace: <ws>",
        "",
      ].join("\n"),
    );
    expect(importCodex(ws, paths.P!, paths.S!).json.links).toEqual([]);
    expect(run("pixir", ["export", "codex", "P"], { cwd: ws }).stdout).toBe(rollout(P));

    const both = tempDir();
    expect(importCodex(both, paths.S!).json.links).toEqual([]);
    const r2 = importCodex(both, paths.P!, paths.S!);
    expect(r2.json.links).toEqual([{ parent_session_id: "P", child_session_id: "S", status: "created" }]);
    expect(cat(both, "P")[5].data.child_session_id).toBe("S");

    const later = tempDir();
    expect(importCodex(later, paths.S!).json.links).toEqual([]);
    expect(importCodex(later, paths.P!).json.links).toHaveLength(1);
    expect(logs(later)).toEqual(logs(ws));
  });
});

describe("inputs and errors (§4.1–§4.3)", () => {
  it("walks directories, skips what is not a rollout, reads the default directory", () => {
    const home = tempDir();
    const day = path.join(home, "sessions", "2026", "03", "01");
    mkdirSync(day, { recursive: true });
    writeFileSync(path.join(day, "rollout-a.jsonl"), rollout([meta("T1"), U("hi")]));
    writeFileSync(path.join(day, "notes.jsonl"), '{"hello":1}\n');
    writeFileSync(path.join(day, "empty.jsonl"), "");
    writeFileSync(path.join(day, "other.txt"), "x\n");
    const ws = tempDir();
    const r = run("pixir", ["import", "codex", "--json"], { cwd: ws, env: { CODEX_HOME: home } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.imports.map((i: any) => i.thread_id)).toEqual(["T1"]);
    expect(r.json.skipped_files.map((s: any) => s.reason).sort()).toEqual(["empty", "not_a_rollout"]);
  });

  it("a missing path is not_found; a named non-rollout, a malformed line and a duplicate thread are invalid", () => {
    const ws = tempDir();
    const missing = importCodex(ws, "nope");
    expect(missing.code).toBe(2);
    expect(missing.json.error.details.path).toBe("nope");
    const { paths } = writeRollouts({ bad: ['{"hello":1}'], mal: [meta("M"), "{oops", U("x")], d1: [meta("D")], d2: [meta("D")] });
    const bad = importCodex(ws, paths.bad!);
    expect(bad.code).toBe(1);
    expect(bad.json.error.details).toMatchObject({ reason: "missing_session_meta", line: 1 });
    const mal = importCodex(ws, paths.mal!);
    expect(mal.json.error).toMatchObject({ kind: "invalid_codex_session", details: { reason: "malformed_line", line: 2 } });
    const lenient = importCodex(ws, paths.mal!, "--lenient");
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.imports[0].skipped_lines).toBe(1);
    const dup = importCodex(tempDir(), paths.d1!, paths.d2!);
    expect(dup.json.error.details.reason).toBe("duplicate_session_id");
    expect(existsSync(path.join(ws, ".pixir", "sessions", "D.ndjson"))).toBe(false);
  });
});

describe("export of native Events (§5.3–§5.5)", () => {
  const P = [meta("P"), U("u1"), A("a1"), U("u2"), A("a2")];

  it("a checkpoint added by pixir becomes a compacted record Codex replays", () => {
    const { paths } = writeRollouts({ P });
    const ws = tempDir();
    expect(importCodex(ws, paths.P!).code).toBe(0);
    expect(run("pixir", ["fork", "P", "--child-id", "c2"], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["append", "c2"], { cwd: ws, input: '{"type":"user_message","data":{"text":"u3"}}\n{"type":"assistant_message","data":{"text":"a3"}}\n' }).code).toBe(0);
    const compact = run("pixir", ["compact", "c2", "--tail-events", "2", "--json"], { cwd: ws });
    expect(compact.code, compact.stderr).toBe(0);
    const out = run("pixir", ["export", "codex", "c2", "--dry-run", "--json"], { cwd: ws });
    expect(out.json).toMatchObject({ export: "fork", forked_from_id: "P", copied_line_count: 5, status: "would_create" });
    const lines = completeLines(run("pixir", ["export", "codex", "c2"], { cwd: ws }).stdout).map((l) => JSON.parse(l));
    const compacted = lines.find((l) => l.type === "compacted");
    expect(compacted.payload.replacement_history[0].content[0].text).toContain("u1");
    expect(lines.at(-1).payload).toEqual({ type: "context_compacted" });
    // Codex's replay of the exported file starts from the checkpoint and the kept turns.
    const replayed = expectedSignatures(lines.map((l) => JSON.stringify(l)));
    expect(replayed.slice(1)).toEqual([
      ["user", "u3"],
      ["assistant", "a3"],
    ]);
  });

  it("native skills, finished subagents, resources and values are the items the fold gives (§5.4)", () => {
    const ws = workspace({
      n: [
        ev("user_message", { text: "see", resources: [{ kind: "file", resource_id: "f1", name: "n.txt" }] }),
        ev("skill_activation", { name: "sample", source: "repo", path: "/tmp/sample/SKILL.md", content_hash: "abc123", content: "# Sample skill\n\nUse this skill." }),
        ev("tool_call", { call_id: "c1", name: "edit", args: { z: 1.5, a: [1, "x"] } }),
        ev("tool_result", { call_id: "c1", ok: false, error: { kind: "failed" } }),
        ev("subagent_event", { subagent_id: "sub_1", agent: "worker", event: "started", status: "running" }),
        ev("subagent_event", { subagent_id: "sub_1", agent: "worker", event: "finished", status: "completed", summary: "Found the bug in auth.ex" }),
      ],
    });
    const out = run("pixir", ["export", "codex", "n"], { cwd: ws });
    expect(out.code, out.stderr).toBe(0);
    const items = completeLines(out.stdout)
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === "response_item")
      .map((l) => l.payload);
    expect(items).toEqual([
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "see\n\nAttached resources:\nFile resource f1: name=n.txt mime=unknown size_bytes=unknown sha256=unknown. Pixir stored the original bytes locally, but this resource kind is not yet projected to the Provider by default." }],
      },
      // context-and-compaction.md §2.3's example, and §2.4's.
      { type: "message", role: "user", content: [{ type: "input_text", text: '<skill name="sample" source="repo" path="/tmp/sample/SKILL.md" content_sha256="abc123">\n# Sample skill\n\nUse this skill.\n</skill>' }] },
      { type: "function_call", name: "edit", arguments: '{"a":[1,"x"],"z":1.5}', call_id: "c1" },
      { type: "function_call_output", call_id: "c1", output: '{"error":{"kind":"failed"},"ok":false}' },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Subagent sub_1 (worker) completed: Found the bug in auth.ex" }] },
    ]);
  });

  it("--out must be an existing directory; an existing different file is refused", () => {
    const { paths } = writeRollouts({ P });
    const ws = tempDir();
    expect(importCodex(ws, paths.P!).code).toBe(0);
    const missing = run("pixir", ["export", "codex", "P", "--out", path.join(ws, "nope"), "--json"], { cwd: ws });
    expect(missing.code).toBe(2);
    expect(missing.json.error.details).toMatchObject({ field: "out", reason: "missing" });
    const dir = tempDir();
    const first = run("pixir", ["export", "codex", "P", "--out", dir, "--json"], { cwd: ws });
    expect(first.json.status).toBe("created");
    writeFileSync(path.join(dir, first.json.file), "changed\n");
    const again = run("pixir", ["export", "codex", "P", "--out", dir, "--json"], { cwd: ws });
    expect(again.code).toBe(1);
    expect(again.json.error.kind).toBe("already_exists");
    expect(readFileSync(path.join(dir, first.json.file), "utf8")).toBe("changed\n");
  });
});

describe("a resumed rollout and the import index (§4.5)", () => {
  it("appends only the new lines, and a later unchanged run reports from the index", () => {
    const dir = tempDir();
    const file = path.join(dir, "T.jsonl");
    const lines = [meta("T"), U("u1"), A("a1")];
    writeFileSync(file, rollout(lines));
    const ws = tempDir();
    expect(importCodex(ws, file).json.imports[0].sessions[0].status).toBe("created");
    expect(existsSync(path.join(ws, ".pixir", "codex-imports", "T.json"))).toBe(true);
    writeFileSync(file, rollout([...lines, U("u2"), A("a2")]));
    const grown = importCodex(ws, file);
    expect(grown.json.imports[0].sessions[0]).toMatchObject({ status: "appended", new_event_count: 2, event_count: 5 });
    const again = importCodex(ws, file);
    expect(again.json.imports[0].sessions[0]).toMatchObject({ status: "unchanged", new_event_count: 0, event_count: 5 });
    expect(again.json.imports[0].line_count).toBe(5);
  });

  it("shows progress only on a terminal", () => {
    const dir = tempDir();
    const file = path.join(dir, "T.jsonl");
    writeFileSync(file, rollout([meta("T"), U("u1")]));
    const ws = tempDir();
    const plain = run("pixir", ["import", "codex", file, "--dry-run"], { cwd: ws });
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe("");
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.resolve("tools/pixir/bin/pixir.js"))} import codex ${JSON.stringify(file)} --dry-run 2>&1 >/dev/null`;
    const tty = spawnSync("script", ["-qec", command, "/dev/null"], { cwd: ws, encoding: "utf8" });
    expect(tty.status).toBe(0);
    expect(tty.stdout).toContain(`[1/1] ${file}`);
  });
});

describe("refusals (§4.5, §5.1)", () => {
  it("a Log of that name that is not an import is not_a_codex_import", () => {
    const ws = tempDir();
    expect(run("pixir-log", ["append", "T"], { cwd: ws, input: '{"type":"user_message","data":{"text":"mine"}}\n' }).code).toBe(0);
    const { paths } = writeRollouts({ T: [meta("T"), U("u1")] });
    const r = importCodex(ws, paths.T!);
    expect(r.code).toBe(1);
    expect(r.json.error.details).toMatchObject({ session_id: "T", reason: "not_a_codex_import" });
  });

  it("a dry run of a grown rollout reports would_append and writes nothing", () => {
    const dir = tempDir();
    const file = path.join(dir, "T.jsonl");
    const lines = [meta("T"), U("u1")];
    writeFileSync(file, rollout(lines));
    const ws = tempDir();
    expect(importCodex(ws, file).code).toBe(0);
    writeFileSync(file, rollout([...lines, A("a1")]));
    const before = logs(ws);
    const r = importCodex(ws, file, "--dry-run");
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.json.imports[0].sessions[0]).toMatchObject({ status: "would_append", new_event_count: 1 });
    expect(r.json.recorded).toBe(false);
    expect(logs(ws)).toEqual(before);
  });

  it("export of a History where an imported Event follows a native one is mixed_history", () => {
    const ws = tempDir();
    const imported = { type: "user_message", data: { text: "u1", role: "user", origin: "user", codex: { thread: "T", line: 2, record: JSON.parse(U("u1")) } } };
    const input = `{"type":"user_message","data":{"text":"mine"}}\n${JSON.stringify(imported)}\n`;
    expect(run("pixir-log", ["append", "m"], { cwd: ws, input }).code).toBe(0);
    const r = run("pixir", ["export", "codex", "m", "--dry-run", "--json"], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.json.error.details).toMatchObject({ field: "session_id", reason: "mixed_history" });
  });
});
