// pixir import pi (pi-interop.md §1–§3, §5; acceptance.md §J 65–66), against the built binaries.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { binPath, listTree, logFile, tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { writeLease } from "../hardening/support.js";
import {
  BEFORE_COMPACTION,
  COMPACTION,
  CROSS_PROJECT,
  entryKindOf,
  expectedOracle,
  FOREST,
  importedEvents,
  jsonl,
  LARGE_SESSION,
  MAIN_ID,
  MAIN_TREE,
  ORACLE_FIXTURES,
  oracleOf,
  piFixture,
  piPathIds,
  rawEvents,
  resumedPath,
  sessionLogs,
  sessionsSnapshot,
  SLASH_FORK,
  V1_HAND,
  V2_HAND,
} from "../support/pi.js";
import { describePiMessage, piContextMessage } from "../support/pi-oracle.js";

const importPi = (ws: string, ...args: string[]) => run("pixir", ["import", "pi", ...args, "--json"], { cwd: ws });

/** A fresh Workspace with `rel` imported; returns the import report of that file. */
function imported(rel: string): { ws: string; report: any } {
  const ws = tempDir();
  const r = importPi(ws, piFixture(rel));
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { ws, report: r.json.imports[0] };
}

describe("the oracle of pi's own rules", () => {
  it.each(ORACLE_FIXTURES)("reproduces expected/%s from the file alone", (rel) => {
    expect(oracleOf(readFileSync(piFixture(rel)), rel)).toEqual(expectedOracle(rel));
  });
});

describe.each(ORACLE_FIXTURES)("oracle test (pi-interop.md §5) for %s", (rel) => {
  const expected = expectedOracle(rel);
  const v1 = expected.fileVersion === 1;
  const original = readFileSync(piFixture(rel), "utf8");
  const { ws, report } = imported(rel);
  const ids: string[] = report.sessions.map((s: any) => s.session_id);
  // Exports are read by several steps; run each once.
  const exports = new Map<string, ReturnType<typeof run>>();
  const exportOf = (id: string) => {
    if (!exports.has(id)) exports.set(id, run("pixir", ["export", "pi", id], { cwd: ws }));
    return exports.get(id)!;
  };

  it("1. imports with exit 0 and passes pixir-log check", () => {
    expect(report.sessions.every((s: any) => s.status === "created")).toBe(true);
    const check = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(check.code, check.stdout).toBe(0);
    expect(check.json).toMatchObject({ ok: true, checked: ids.length });
    expect(check.json.logs.flatMap((l: any) => l.problems)).toEqual([]);
    expect(sessionLogs(ws)).toEqual([...ids].sort());
  });

  it("2. keeps the header verbatim and every entry once, with pi's type counts", () => {
    const carrier = rawEvents(ws, report.sessions[0].session_id)[0];
    expect(carrier.type).toBe("workflow_event");
    expect(carrier.data.event).toBe("pi_session_header");
    expect(carrier.data.pi.header).toEqual(JSON.parse(original.split("\n")[0]!));
    expect(carrier.data.pi.source_version).toBe(expected.fileVersion);
    const byEntry = new Map<string, string>();
    for (const e of importedEvents(ws, ids)) if (!byEntry.has(e.data.pi.entry_id)) byEntry.set(e.data.pi.entry_id, entryKindOf(e));
    expect(byEntry.size).toBe(expected.entryCount);
    const counts: Record<string, number> = {};
    for (const kind of byEntry.values()) counts[kind] = (counts[kind] ?? 0) + 1;
    expect(counts).toEqual(expected.typeCounts);
  });

  it("3. finds pi's roots, orphans and default leaf", () => {
    const carrier = rawEvents(ws, report.sessions[0].session_id)[0];
    const entries = new Map<string, any>();
    for (const e of importedEvents(ws, ids)) entries.set(e.data.pi.entry_id, e.data.pi);
    const roots = [...entries.values()].filter((p) => p.parent_id === null || p.parent_id === p.entry_id).map((p) => p.entry_id);
    const orphans = report.orphans.map((o: any) => ({ id: o.entry_id, missingParentId: o.missing_parent_id }));
    expect(carrier.data.pi.orphans).toEqual(report.orphans);
    if (v1) {
      expect(roots.length).toBe(expected.roots);
      expect(orphans.length).toBe(expected.orphans);
      expect(carrier.data.pi.default_leaf_entry_id).toBe(report.sessions[0].leaf_entry_id);
    } else {
      expect(roots.sort()).toEqual([...expected.roots].sort());
      expect(orphans).toEqual(expected.orphans);
      expect(carrier.data.pi.default_leaf_entry_id).toBe(expected.piDefaultLeafId);
      expect(report.sessions[0].leaf_entry_id).toBe(expected.piDefaultLeafId);
    }
  });

  it("4–5. has one Log per leaf whose pi path and rebuilt context are pi's", () => {
    expect(report.sessions).toHaveLength(expected.leaves.length);
    for (const leaf of expected.leaves) {
      const session = v1 ? report.sessions[0] : report.sessions.find((s: any) => s.leaf_entry_id === leaf.leafId);
      expect(session, `a Log for leaf ${leaf.leafId}`).toBeDefined();
      const pathIds = piPathIds(ws, session.session_id);
      if (v1) expect(pathIds).toHaveLength(leaf.pathLength);
      else expect(pathIds).toEqual(leaf.pathIds);
      // Rebuild the path's entries as the export does, then apply pi's context build.
      const exported = exportOf(session.session_id);
      expect(exported.code, exported.stderr).toBe(0);
      const resumed = resumedPath(exported.stdout);
      expect(resumed.pathIds).toEqual(pathIds);
      expect(resumed.context).toEqual(leaf.context);
    }
  });

  it("5. pixir context of each leaf Log shows pi's messages, in order", () => {
    for (const leaf of expected.leaves) {
      const session = v1 ? report.sessions[0] : report.sessions.find((s: any) => s.leaf_entry_id === leaf.leafId);
      const entries = new Map(jsonl(exportOf(session.session_id).stdout).map((e) => [e.id, e]));
      const byEventId = new Map(run("pixir-log", ["cat", session.session_id], { cwd: ws }).lines.map((e) => [e.id, e]));
      const context = run("pixir", ["context", session.session_id], { cwd: ws });
      expect(context.code, context.stderr).toBe(0);
      // Consecutive items of one pi entry (an assistant message is reasoning + text + tool calls) are one message.
      const groups: string[] = [];
      for (const item of context.lines) {
        const entryId = byEventId.get(item.id)?.data?.pi?.entry_id;
        expect(typeof entryId).toBe("string");
        if (groups.at(-1) !== entryId) groups.push(entryId);
      }
      const messages = groups.map((id) => {
        const entry = entries.get(id)!;
        if (entry.type === "compaction") return { role: "compactionSummary", tokensBefore: entry.tokensBefore };
        return describePiMessage(piContextMessage(entry)!);
      });
      expect(messages).toEqual(leaf.context.messages);
    }
  });

  it("6. labels and the session name follow pi's rules after a round trip", () => {
    const exported = exportOf(report.sessions[0].session_id);
    const oracle = oracleOf(exported.stdout);
    expect(oracle.sessionName).toBe(expected.sessionName);
    if (!v1) expect(oracle.labels).toEqual(expected.labels);
  });

  it("7. round trip: the export gives back the header, every entry and pi's leaf on the last line", () => {
    const exported = exportOf(report.sessions[0].session_id);
    expect(exported.code, exported.stderr).toBe(0);
    const lines = jsonl(exported.stdout);
    expect(lines[0]).toEqual(expected.header);
    if (!v1) {
      // v2 → v3 renames the role hookMessage to custom; nothing else changes.
      const migrate = (e: any) => (e.message?.role === "hookMessage" ? { ...e, message: { ...e.message, role: "custom" } } : e);
      const originals = jsonl(original).map(migrate);
      const back = new Map(lines.slice(1).map((e) => [e.id, e]));
      expect(back.size).toBe(originals.length - 1);
      for (const entry of originals.slice(1)) expect(back.get(entry.id)).toEqual(entry);
      expect(lines.at(-1).id).toBe(expected.piDefaultLeafId);
    }
    if (expected.fileVersion === 3) {
      expect(lines[0]).toEqual(jsonl(original)[0]);
      // pi's key order is kept too: every exported line is a line of the original file.
      const originalLines = new Set(original.split("\n").filter((l) => l !== ""));
      for (const line of exported.stdout.split("\n").filter((l) => l !== "")) expect(originalLines.has(line)).toBe(true);
    }
    // The oracle derived from the export equals the original's (leaves may come in another file order).
    const again = oracleOf(exported.stdout);
    const sortLeaves = (o: any) => ({ ...o, leaves: [...o.leaves].sort((a: any, b: any) => JSON.stringify(a).localeCompare(JSON.stringify(b))) });
    const { fileVersion, leaves, roots, orphans, ...rest } = sortLeaves(again);
    const { fileVersion: _v, leaves: expLeaves, roots: expRoots, orphans: expOrphans, ...expRest } = sortLeaves(expected);
    expect(fileVersion).toBe(3);
    if (v1) {
      expect(leaves.map(({ leafId: _l, pathIds: _p, ...l }: any) => l)).toEqual(expLeaves);
      expect(roots).toHaveLength(expRoots);
      expect(orphans).toHaveLength(expOrphans);
      const { piDefaultLeafId: _d, labels: _labels, ...restNoIds } = rest;
      expect(restNoIds).toEqual(expRest);
    } else {
      expect(leaves).toEqual(expLeaves);
      expect([...roots].sort()).toEqual([...expRoots].sort());
      expect(orphans).toEqual(expOrphans);
      expect(rest).toEqual(expRest);
    }
  });

  it("7. v1/v2: the exported v3 file imports again with the same paths and contexts", () => {
    if (expected.fileVersion === 3) return;
    const exported = exportOf(report.sessions[0].session_id);
    const dir = tempDir();
    writeFileSync(path.join(dir, "exported.jsonl"), exported.stdout);
    const r = importPi(dir, path.join(dir, "exported.jsonl"));
    expect(r.code, r.stderr).toBe(0);
    const again = r.json.imports[0];
    expect(again.source_version).toBe(3);
    expect(again.sessions).toHaveLength(expected.leaves.length);
    const primary = again.sessions[0].session_id;
    expect(piPathIds(dir, primary)).toEqual(piPathIds(ws, report.sessions[0].session_id));
    const reExported = run("pixir", ["export", "pi", primary], { cwd: dir });
    expect(resumedPath(reExported.stdout).context).toEqual(expected.leaves[0].context);
    expect(run("pixir-log", ["check"], { cwd: dir }).code).toBe(0);
  });

  it("8. importing the same file again reports unchanged and leaves the bytes alone", () => {
    const before = sessionsSnapshot(ws);
    const again = importPi(ws, piFixture(rel));
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.recorded).toBe(false);
    expect(again.json.imports[0].sessions.map((s: any) => s.status)).toEqual(ids.map(() => "unchanged"));
    expect(sessionsSnapshot(ws)).toEqual(before);
  });
});

describe("acceptance 65: what the fixtures import as", () => {
  it("the main tree imports as the primary plus one branch, shown by pixir-tree as a share_v1 fork", () => {
    const { ws, report } = imported(MAIN_TREE);
    expect(report.header_id).toBe(MAIN_ID);
    expect(report.sessions.map((s: any) => [s.session_id, s.role, s.leaf_entry_id, s.parent_session_id])).toEqual([
      [MAIN_ID, "primary", "723e727b", null],
      [`${MAIN_ID}.a9bcedc7`, "branch", "a9bcedc7", MAIN_ID],
    ]);
    const branch = rawEvents(ws, `${MAIN_ID}.a9bcedc7`);
    expect(branch[0].type).toBe("session_fork");
    expect(branch[0].data).toMatchObject({ strategy: "share_v1", parent_session_id: MAIN_ID, fork_root_session_id: MAIN_ID });
    expect(branch[0].data.pi).toEqual({ fork_kind: "pi_tree_branch", fork_point_entry_id: "6bba58bd", leaf_entry_id: "a9bcedc7", header_id: MAIN_ID });
    const own = new Set(branch.slice(1).map((e) => e.data.pi.entry_id));
    expect(own.size).toBe(14);
    expect(branch[1].type).toBe("branch_summary");
    expect(branch[1].data).toMatchObject({ strategy: "pi_branch_summary", parent_session_id: MAIN_ID });
    // The fork point is the last Event of entry 6bba58bd in the primary (its provider_usage).
    const primary = rawEvents(ws, MAIN_ID);
    const point = primary.filter((e) => e.data.pi?.entry_id === "6bba58bd").at(-1);
    expect(branch[0].data.forked_to_seq).toBe(point.seq);
    expect(branch[1].data.branch_point_event_id).toBe(point.id);
    const tree = run("pixir-tree", [MAIN_ID, "--json"], { cwd: ws });
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.json.tree.forks).toHaveLength(1);
    expect(tree.json.tree.forks[0]).toMatchObject({ child_session_id: `${MAIN_ID}.a9bcedc7`, strategy: "share_v1" });
  });

  it("the forest gives 3 Logs, 2 of them pi_tree_root children of the primary", () => {
    const { ws, report } = imported(FOREST);
    const base = "5257ed84-710a-47ee-8599-8cfab3b72d5c";
    expect(report.sessions.map((s: any) => [s.session_id, s.event_count])).toEqual([
      [base, 4],
      [`${base}.9b79d325`, 7],
      [`${base}.2f9c7dc4`, 5],
    ]);
    for (const id of [`${base}.9b79d325`, `${base}.2f9c7dc4`]) {
      const head = rawEvents(ws, id)[0];
      expect(head.data).toMatchObject({ parent_session_id: base, forked_to_seq: 0, replay_event_count: 1 });
      expect(head.data.pi).toMatchObject({ fork_kind: "pi_tree_root", fork_point_entry_id: null });
    }
    const summary = rawEvents(ws, `${base}.2f9c7dc4`)[1];
    expect(summary.type).toBe("branch_summary");
    expect(summary.data).toMatchObject({ parent_session_id: null, branch_point_event_id: null });
    expect(summary.data.pi.from_id).toBe("root");
  });

  it("the /fork file reports orphan 538f1237 with missing parent 94b36b6a, in JSON and as a warning", () => {
    const ws = tempDir();
    const r = run("pixir", ["import", "pi", piFixture(SLASH_FORK)], { cwd: ws });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("warning: pi_orphan_entry:");
    expect(r.stderr).toContain('"538f1237"');
    const json = importPi(ws, piFixture(SLASH_FORK)).json.imports[0];
    expect(json.orphans).toEqual([{ entry_id: "538f1237", missing_parent_id: "94b36b6a" }]);
    const base = "c6abae30-8d3c-455f-aff9-18e891349110";
    expect(json.sessions.map((s: any) => [s.session_id, s.leaf_entry_id])).toEqual([
      [base, "77a91dae"],
      [`${base}.77b22af0`, "77b22af0"],
    ]);
    expect(rawEvents(ws, `${base}.77b22af0`)[0].data.pi.fork_kind).toBe("pi_tree_root");
    // parentSession stays in the header carrier; the file imports as a family of its own.
    expect(rawEvents(ws, base)[0].data.pi.header.parentSession).toMatch(/19460c51/);
  });

  it("the v1 file's compaction keeps first_kept_entry_id l6 and the legacy header", () => {
    const source = piFixture(V1_HAND);
    const [bytes, mtime] = [readFileSync(source), statSync(source).mtimeMs];
    const { ws, report } = imported(V1_HAND);
    // Migrated in memory only: unlike pi, the importer never rewrites a v1 file.
    expect(readFileSync(source).equals(bytes)).toBe(true);
    expect(statSync(source).mtimeMs).toBe(mtime);
    const events = rawEvents(ws, report.sessions[0].session_id);
    expect(events[0].data.pi.header.branchedFrom).toMatch(/5d3c0f77/);
    const ids = [...new Set(events.slice(1).map((e) => e.data.pi.entry_id))];
    expect(ids).toEqual(Array.from({ length: 14 }, (_, i) => `l${i + 1}`));
    const compaction = events.find((e) => e.type === "history_compaction");
    expect(compaction.data.pi.first_kept_entry_id).toBe("l6");
    const kept = events.find((e) => e.id === compaction.data.first_kept_event_id);
    expect(kept.data.pi.entry_id).toBe("l6");
    expect(compaction.data.range).toEqual({ from_seq: 0, to_seq: kept.seq - 1 });
    expect(compaction.data.source_event_count).toBe(kept.seq);
    expect(events.find((e) => e.data.pi?.part === "call0")?.data.pi.block_extra).toHaveProperty("partialJson");
  });

  it("the v2 file's hookMessage becomes a custom message", () => {
    const { ws, report } = imported(V2_HAND);
    const hook = rawEvents(ws, report.sessions[0].session_id).find((e) => e.data.pi?.entry_id === "a0000004");
    expect(hook.type).toBe("user_message");
    expect(hook.data).toMatchObject({ origin: "extension", custom_type: "reminder", text: "Remember to run tests." });
    expect(hook.data.pi).toMatchObject({ role: "custom", original_role: "hookMessage" });
  });

  it("the compaction fixture keeps one Log whose last compaction shapes pixir context", () => {
    const { ws, report } = imported(COMPACTION);
    expect(report.sessions).toHaveLength(1);
    const events = rawEvents(ws, report.sessions[0].session_id);
    const compactions = events.filter((e) => e.type === "history_compaction");
    expect(compactions).toHaveLength(3);
    expect(compactions[2].data).toMatchObject({ strategy: "pi_compaction", from_hook: true });
    const context = run("pixir", ["context", report.sessions[0].session_id], { cwd: ws });
    expect(context.lines[0].id).toBe(compactions[2].id);
  });

  it("the large v1 session computes the missing totalTokens", () => {
    const { ws, report } = imported(LARGE_SESSION);
    const usage = rawEvents(ws, report.sessions[0].session_id).filter((e) => e.type === "provider_usage");
    expect(usage.length).toBeGreaterThan(0);
    for (const u of usage) {
      expect(u.data.pi.usage).not.toHaveProperty("totalTokens");
      expect(u.data.total_tokens).toBe(u.data.input + u.data.output + u.data.cache_read + u.data.cache_write);
    }
  });

  it("a fork summary of a real session skips its tool-use-only turns (summarize.md §3.2: no bare `- assistant: `)", () => {
    const { ws, report } = imported(LARGE_SESSION);
    const id = report.sessions[0].session_id;
    // The premise: the session has assistant messages whose text is empty, and some among the last ones.
    const texts = rawEvents(ws, id).filter((e) => e.type === "assistant_message").map((e) => e.data.text);
    expect(texts.filter((t) => t === "").length).toBeGreaterThan(100);
    expect(texts.slice(-12)).toContain("");
    const fork = run("pixir", ["fork", id, "--summarize", "--child-id", "c", "--json"], { cwd: ws });
    expect(fork.code, fork.stderr).toBe(0);
    const summary = rawEvents(ws, "c").at(-1)!;
    expect(summary.type).toBe("branch_summary");
    const bullets = (summary.data.summary as string).split("\n").filter((l) => l.startsWith("- "));
    expect(bullets).toHaveLength(6);
    for (const b of [...bullets, ...summary.data.open_tasks.map((t: string) => `- ${t}`)]) expect(b).not.toMatch(/^- (assistant|user|subagent \S+): ?$/);
  });

  it("the cross-project copy imports as the same shape under its own header id", () => {
    const { report } = imported(CROSS_PROJECT);
    expect(report.sessions.map((s: any) => s.session_id)).toEqual(["a2483bba-9547-43b6-ad99-00185fab826f", "a2483bba-9547-43b6-ad99-00185fab826f.a9bcedc7"]);
  });
});

describe("images become Session Resources", () => {
  it("stores each image once by content and keeps only a resource_id in the Log", () => {
    const { ws } = imported(MAIN_TREE);
    const pixel = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const branch = `${MAIN_ID}.a9bcedc7`;
    expect(readFileSync(logFile(ws, branch), "utf8")).not.toContain(pixel);
    const user = rawEvents(ws, branch).find((e) => e.data.pi?.entry_id === "538f1237");
    const [descriptor] = user.data.resources;
    expect(user.data.content[1]).toEqual({ type: "image", resource_id: descriptor.resource_id, mimeType: "image/png" });
    const payload = path.join(ws, descriptor.store_ref);
    expect(descriptor.store_ref).toBe(`.pixir/sessions/${branch}/resources/${descriptor.resource_id}/${descriptor.content_sha256}.png`);
    expect(readFileSync(payload).toString("base64")).toBe(pixel);
    const result = rawEvents(ws, branch).find((e) => e.data.pi?.entry_id === "cb54a085");
    expect(result.data.resources[0].resource_id).toBe(descriptor.resource_id);
    // The same picture twice is one payload; nothing is left behind but payloads.
    expect(listTree(path.join(ws, ".pixir/sessions", branch))).toEqual([
      "resources",
      `resources/${descriptor.resource_id}`,
      `resources/${descriptor.resource_id}/${descriptor.content_sha256}.png`,
    ]);
  });
});

describe("refusals: nothing is written", () => {
  it("a Log of the family changed by hand gives already_exists and writes nothing", () => {
    const { ws } = imported(MAIN_TREE);
    const branch = logFile(ws, `${MAIN_ID}.a9bcedc7`);
    writeFileSync(branch, readFileSync(branch, "utf8").replace("Use a fake clock.", "Use a real clock."));
    const primaryFile = logFile(ws, MAIN_ID);
    const primaryBytes = readFileSync(primaryFile);
    const r = importPi(ws, piFixture(MAIN_TREE));
    expect(r.code).toBe(1);
    expect(r.json.error.kind).toBe("already_exists");
    expect(r.json.error.details.session_id).toBe(`${MAIN_ID}.a9bcedc7`);
    expect(r.json.error.details.next_actions).toEqual(["remove the existing logs with pixir-log rm, then import again"]);
    expect(readFileSync(primaryFile).equals(primaryBytes)).toBe(true);
    // With the primary gone as well, the refusal still writes nothing: the family is checked first.
    rmSync(primaryFile);
    const again = importPi(ws, piFixture(MAIN_TREE));
    expect(again.code).toBe(1);
    expect(again.json.error.kind).toBe("already_exists");
    expect(existsSync(primaryFile)).toBe(false);
  });

  it("a malformed middle line is invalid_pi_session malformed_line; --lenient skips it and says so", () => {
    const dir = tempDir();
    const lines = readFileSync(piFixture(V2_HAND), "utf8").split("\n");
    lines.splice(4, 0, '{"type":"message","id":"broken"');
    const file = path.join(dir, "broken.jsonl");
    writeFileSync(file, lines.join("\n"));
    const ws = tempDir();
    const strict = importPi(ws, file);
    expect(strict.code).toBe(1);
    expect(strict.json.error).toMatchObject({ kind: "invalid_pi_session", details: { reason: "malformed_line", line: 5, file } });
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
    const text = run("pixir", ["import", "pi", file], { cwd: ws });
    expect(text.stderr).toBe(`error: invalid_pi_session: pi session file is invalid (${file}:5: malformed_line)\nhint: check that the file is a pi session file\nhint: use --lenient to skip malformed lines\n`);
    const lenient = importPi(ws, file, "--lenient");
    expect(lenient.code, lenient.stderr).toBe(0);
    expect(lenient.json.imports[0].skipped_lines).toBe(1);
    const warned = run("pixir", ["import", "pi", file, "--lenient"], { cwd: tempDir() });
    expect(warned.stderr).toContain(`warning: malformed_line: ${file}:5:`);
  });

  const cases: Array<[string, string, string, number | null]> = [
    ["an empty file", "", "missing_header", null],
    ["a first line that is not a header", '{"type":"message","id":"a"}\n', "missing_header", 1],
    ["a header without a string id", '{"type":"session","version":3,"id":5}\n', "missing_header", 1],
    ["a malformed header line", "\n{nope\n", "missing_header", 2],
    ["version 4", '{"type":"session","version":4,"id":"s"}\n', "unsupported_version", 1],
    ["version 1 written out", '{"type":"session","version":1,"id":"s"}\n', "unsupported_version", 1],
    ["an entry without a type", '{"type":"session","version":3,"id":"s"}\n{"id":"a","parentId":null}\n', "invalid_entry", 2],
    ["a v3 entry without an id", '{"type":"session","version":3,"id":"s"}\n{"type":"label","parentId":null}\n', "invalid_entry", 2],
    ["a non-object entry", '{"type":"session","version":3,"id":"s"}\n\n[1,2]\n', "invalid_entry", 3],
    [
      "a duplicate entry id",
      '{"type":"session","version":3,"id":"s"}\n{"type":"label","id":"a","parentId":null}\n{"type":"label","id":"a","parentId":"a"}\n',
      "duplicate_entry_id",
      3,
    ],
    [
      "a parent cycle",
      '{"type":"session","version":3,"id":"s"}\n{"type":"label","id":"a","parentId":"b"}\n{"type":"label","id":"b","parentId":"a"}\n',
      "parent_cycle",
      2,
    ],
  ];
  it.each(cases)("%s is invalid_pi_session", (_name, text, reason, line) => {
    const dir = tempDir();
    const file = path.join(dir, "bad.jsonl");
    writeFileSync(file, text);
    const r = importPi(dir, file);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "invalid_pi_session", details: { reason, line, file } });
    expect(r.json.error.details.next_actions).toEqual(["check that the file is a pi session file", "use --lenient to skip malformed lines"]);
    expect(existsSync(path.join(dir, ".pixir"))).toBe(false);
  });

  it("a missing file is not_found, a directory is unreadable_file", () => {
    const ws = tempDir();
    const missing = importPi(ws, "nope.jsonl");
    expect(missing.code).toBe(2);
    expect(missing.json.error).toMatchObject({ kind: "not_found", details: { file: "nope.jsonl" } });
    mkdirSync(path.join(ws, "adir"));
    const dir = importPi(ws, "adir");
    expect(dir.code).toBe(1);
    expect(dir.json.error.details).toMatchObject({ reason: "unreadable_file", file: "adir" });
  });

  it("a lone surrogate in a message is log_encode_failed naming the file and line; nothing is written", () => {
    const ws = tempDir();
    const header = '{"type":"session","version":3,"id":"5f0e4a1e-1111-4222-8333-944455556666","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}';
    const message = '{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"bad \\ud800 here","timestamp":1}}';
    writeFileSync(path.join(ws, "sur.jsonl"), `${header}\n${message}\n`);
    const r = importPi(ws, "sur.jsonl", piFixture(MAIN_TREE));
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "log_encode_failed", details: { reason: "invalid_unicode", type: "user_message", line: 2, file: "sur.jsonl" } });
    expect(readdirSync(ws)).toEqual(["sur.jsonl"]);
  });

  it("one bad file among good ones writes nothing at all", () => {
    const ws = tempDir();
    writeFileSync(path.join(ws, "bad.jsonl"), '{"type":"session","version":9,"id":"x"}\n');
    const r = importPi(ws, piFixture(MAIN_TREE), "bad.jsonl");
    expect(r.code).toBe(1);
    expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
  });

  it("a held Writer Lease on one Log of the family is exit 5 and no Log appears", () => {
    const ws = tempDir();
    // Held by a live process (this one) that is not the importer.
    writeLease(ws, `${MAIN_ID}.a9bcedc7`, { os_pid: String(process.pid), program: "test", stale_after_ms: 600_000 });
    const r = importPi(ws, piFixture(MAIN_TREE));
    expect(r.code, r.stdout).toBe(5);
    expect(r.json.error.kind).toBe("session_writer_active");
    expect(existsSync(logFile(ws, MAIN_ID))).toBe(false);
    expect(readdirSync(path.join(ws, ".pixir", "session_leases"))).toEqual([`${MAIN_ID}.a9bcedc7.json`]);
  });
});

describe("dry run, output and arguments", () => {
  it("--dry-run plans every Log and creates nothing", () => {
    const ws = tempDir();
    const r = importPi(ws, piFixture(MAIN_TREE), piFixture(FOREST), "--dry-run");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ ok: true, recorded: false, dry_run: true });
    expect(r.json.imports.flatMap((i: any) => i.sessions.map((s: any) => s.status))).toEqual(Array(5).fill("would_create"));
    expect(readdirSync(ws)).toEqual([]);
  });

  it("one file given twice is written once and reported created once; its second mention finds it unchanged", () => {
    const ws = tempDir();
    const dry = importPi(ws, piFixture(MAIN_TREE), piFixture(MAIN_TREE), "--dry-run");
    expect(dry.json.imports.map((i: any) => i.sessions.map((s: any) => s.status))).toEqual([["would_create", "would_create"], ["unchanged", "unchanged"]]);
    const r = run("pixir", ["import", "pi", piFixture(MAIN_TREE), piFixture(MAIN_TREE)], { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(
      `created ${MAIN_ID} (primary, 32 events)\ncreated ${MAIN_ID}.a9bcedc7 (branch, 23 events)\n` +
        `unchanged ${MAIN_ID} (primary, 32 events)\nunchanged ${MAIN_ID}.a9bcedc7 (branch, 23 events)\n`,
    );
    expect(sessionLogs(ws)).toHaveLength(2);
  });

  it("prints one line per Log in text mode", () => {
    const ws = tempDir();
    const r = run("pixir", ["import", "pi", piFixture(MAIN_TREE)], { cwd: ws });
    expect(r.stdout).toBe(`created ${MAIN_ID} (primary, 32 events)\ncreated ${MAIN_ID}.a9bcedc7 (branch, 23 events)\n`);
    expect(r.stderr).toBe("");
  });

  it("reports the documented JSON fields", () => {
    const { report } = imported(MAIN_TREE);
    expect(report).toEqual({
      file: piFixture(MAIN_TREE),
      header_id: MAIN_ID,
      source_version: 3,
      sessions: [
        { session_id: MAIN_ID, role: "primary", leaf_entry_id: "723e727b", parent_session_id: null, event_count: 32, status: "created", trivial: false },
        { session_id: `${MAIN_ID}.a9bcedc7`, role: "branch", leaf_entry_id: "a9bcedc7", parent_session_id: MAIN_ID, event_count: 23, status: "created", trivial: false },
      ],
      orphans: [],
      skipped_lines: 0,
    });
  });

  it("hashes a header id that cannot name a Log and never echoes it", () => {
    const dir = tempDir();
    const hostile = "../../x;$HOME";
    const file = path.join(dir, "h.jsonl");
    writeFileSync(file, `${JSON.stringify({ type: "session", version: 3, id: hostile, timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" })}\n`);
    const r = importPi(dir, file);
    expect(r.code, r.stderr).toBe(0);
    const [session] = r.json.imports[0].sessions;
    expect(session.session_id).toMatch(/^pi-[0-9a-f]{32}$/);
    expect(r.json.imports[0].header_id).toBeNull();
    expect(r.stdout).not.toContain("$HOME");
    expect(run("pixir-log", ["check"], { cwd: dir }).code).toBe(0);
  });

  it("marks a branch of only metadata entries as trivial", () => {
    const dir = tempDir();
    const file = path.join(dir, "t.jsonl");
    const lines = [
      { type: "session", version: 3, id: "triv", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" },
      { type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: "hi", timestamp: 1 } },
      { type: "model_change", id: "m1", parentId: "u1", timestamp: "2026-01-01T00:00:02.000Z", provider: "x", modelId: "y" },
      { type: "message", id: "u2", parentId: "u1", timestamp: "2026-01-01T00:00:03.000Z", message: { role: "user", content: "again", timestamp: 3 } },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const r = importPi(dir, file);
    expect(r.json.imports[0].sessions[1]).toMatchObject({ session_id: "triv.m1", trivial: true, role: "branch" });
    expect(rawEvents(dir, "triv.m1")[0].data.pi.trivial).toBe(true);
  });

  const SYNOPSIS = "usage: pixir import pi <file>... [--lenient] [--dry-run] [--take-over-dead-writer]";
  it.each([
    [["import", "tar", "x.jsonl"], 'unknown import format "tar"', "usage: pixir import <pi|codex|claude|gemini|opencode> [args]"],
    [["import", "pi"], SYNOPSIS, SYNOPSIS],
    [["import", "pi", "x.jsonl", "--bogus"], "unknown flag --bogus", SYNOPSIS],
  ])("%j is a usage error", (args, message, synopsis) => {
    const r = run("pixir", [...args, "--json"], { cwd: tempDir() });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ kind: "usage", message, details: { synopsis } });
  });

  it("shows progress for a large file only when stderr is a terminal", () => {
    const ws = tempDir();
    const plain = run("pixir", ["import", "pi", piFixture(BEFORE_COMPACTION), "--dry-run"], { cwd: ws });
    expect(plain.code).toBe(0);
    expect(plain.stderr).toBe("");
    // script(1) runs the command on a terminal; only stderr reaches it.
    const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(binPath("pixir"))} import pi ${JSON.stringify(piFixture(BEFORE_COMPACTION))} --dry-run 2>&1 >/dev/null`;
    const tty = spawnSync("script", ["-qec", command, "/dev/null"], { cwd: ws, encoding: "utf8" });
    expect(tty.status).toBe(0);
    expect(tty.stdout).toContain("pixir import pi: before-compaction.jsonl: parsed 1002 entries");
    const small = spawnSync("script", ["-qec", command.replace(JSON.stringify(piFixture(BEFORE_COMPACTION)), JSON.stringify(piFixture(V2_HAND))), "/dev/null"], { cwd: ws, encoding: "utf8" });
    expect(small.stdout).toBe("");
  });
});
