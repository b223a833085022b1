// Held-back style cases built from the real Claude Code transcripts (claude-interop.md §6): copies with
// fresh ids, a rewind made in every real session (the live prompt on the primary, the abandoned
// conversation on a branch), and prefixes cut at a line boundary. Each is checked against the oracle of
// test/support/claude-oracle.ts (computed from the file alone), held once, and exported byte for byte.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { allFixtureFiles, CLAUDE_FIXTURES, heldLines, nonBlankLines, remapUuids, rewindOf, sessionFixtures, storedEvents, type Rewound } from "../support/claude.js";
import { contextView, oracleItems, resumedRecords } from "../support/claude-oracle.js";

const SESSIONS = sessionFixtures().filter((f) => f !== "agent-sessions/small.jsonl");
const fixture = (rel: string) => readFileSync(path.join(CLAUDE_FIXTURES, rel));

/** The subagent files of a session fixture's unit (both layouts), relative to the fixture folder. */
function subagentFiles(rel: string): string[] {
  const dir = path.dirname(rel);
  const id = path.basename(rel, ".jsonl");
  const out: string[] = [];
  const sub = path.join(CLAUDE_FIXTURES, dir, id, "subagents");
  if (existsSync(sub)) for (const n of readdirSync(sub).sort()) out.push(path.join(dir, id, "subagents", n));
  for (const n of readdirSync(path.join(CLAUDE_FIXTURES, dir)).sort()) {
    if (n.startsWith("agent-") && fixture(path.join(dir, n)).includes(`"sessionId":"${id}"`)) out.push(path.join(dir, n));
  }
  return out;
}

function write(root: string, rel: string, bytes: Buffer): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), bytes);
}

interface Imported {
  ws: string;
  report: any;
  entry(rel: string): any;
}

function importRoot(root: string): Imported {
  const ws = tempDir();
  const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
  expect(res.code, res.stdout + res.stderr).toBe(0);
  const check = run("pixir-log", ["check", "--json"], { cwd: ws });
  expect(check.code, check.stdout).toBe(0);
  expect(check.json.logs.flatMap((l: any) => [...l.problems, ...l.warnings])).toEqual([]);
  return {
    ws,
    report: res.json,
    entry: (rel) => {
      const e = res.json.imports.find((i: any) => i.file === rel);
      expect(e, rel).toBeDefined();
      return e;
    },
  };
}

/** Every non-blank line held by exactly one Log, and the session file exported byte for byte. */
function expectHeldAndExported(imp: Imported, rel: string, bytes: Buffer): void {
  const entry = imp.entry(rel);
  const held = [...heldLines(imp.ws, entry.session_id).values()].flat().sort((a, b) => a - b);
  expect(held, rel).toEqual(nonBlankLines(bytes));
  const exp = run("pixir", ["export", "claude", entry.logs[0].session_id], { cwd: imp.ws });
  expect(exp.code, exp.stderr).toBe(0);
  expect(exp.bytes.equals(bytes), rel).toBe(true);
}

describe("copies of every fixture with fresh ids", () => {
  let imp: Imported;
  const renamed = (rel: string) => `fresh-${remapUuids(rel, "fresh")}`;
  beforeAll(() => {
    const root = tempDir("pixir-claude-fresh-");
    for (const rel of allFixtureFiles()) write(root, renamed(rel), Buffer.from(remapUuids(fixture(rel).toString("utf8"), "fresh"), "utf8"));
    imp = importRoot(root);
  });

  it.each(allFixtureFiles())("%s imports, each line held once", (rel) => {
    const entry = imp.entry(renamed(rel));
    expect(entry.status).toBe("created");
    const bytes = readFileSync(path.join(CLAUDE_FIXTURES, rel));
    const source = entry.kind === "subagent" ? `${entry.session_id}/agent-${entry.agent_id}` : entry.session_id;
    expect([...heldLines(imp.ws, source).values()].flat().sort((a, b) => a - b)).toEqual(nonBlankLines(bytes));
  });

  it.each(SESSIONS)("%s: pixir context equals the oracle, and the export gives the copy back", (rel) => {
    const bytes = Buffer.from(remapUuids(fixture(rel).toString("utf8"), "fresh"), "utf8");
    const entry = imp.entry(renamed(rel));
    expect(contextView(imp.ws, entry.leaf_session_id)).toEqual(oracleItems(bytes));
    expectHeldAndExported(imp, renamed(rel), bytes);
  });

  it("the subagents of the copies are in the tree", () => {
    const id = remapUuids("ef958aa1-0e93-49f0-bb71-150f63befcd1", "fresh");
    const tree = run("pixir", ["tree", id, "--format", "json"], { cwd: imp.ws });
    expect(tree.code, tree.stderr).toBe(0);
    for (const agent of ["a36efb2a1231c41e2", "a4ca7529859c158c2", "a52886dc180afb356", "a6aa8ad077d9ea083", "ab1e6e141221a29ab", "aef063ba534d73153"]) {
      expect(JSON.stringify(tree.json)).toContain(`${id}.agent-${agent}`);
    }
  });
});

describe("a rewind in every real session (FORMAT-NOTES.md §1.4)", () => {
  let imp: Imported;
  const cases = new Map<string, Rewound>();
  beforeAll(() => {
    const root = tempDir("pixir-claude-rewind-");
    for (const rel of SESSIONS) {
      const bytes = fixture(rel);
      const rw = rewindOf(bytes, resumedRecords(bytes));
      if (rw === null) continue;
      cases.set(rel, rw);
      write(root, rel, rw.bytes);
      for (const sub of subagentFiles(rel)) write(root, sub, fixture(sub));
    }
    imp = importRoot(root);
  });

  it("every real session has a prompt to rewind to", () => {
    expect([...cases.keys()]).toEqual(SESSIONS);
  });

  it.each(SESSIONS)("%s: the live prompt is on the primary, the abandoned conversation on a branch", (rel) => {
    const rw = cases.get(rel)!;
    const entry = imp.entry(rel);
    const primary = entry.logs[0].session_id;
    // The leaf is the last copy: pixir context of the primary is the oracle of the rewound file.
    expect(entry.leaf_session_id).toBe(primary);
    expect(contextView(imp.ws, primary)).toEqual(oracleItems(rw.bytes));
    const pathLines = storedEvents(imp.ws, primary)
      .filter((e) => e.data.claude?.path === true)
      .map((e) => e.data.claude.line);
    expect(pathLines).toContain(rw.liveLine);
    expect(pathLines).not.toContain(rw.abandonedLine);
    // The abandoned prompt is on a branch child; the Log that holds the original leaf (that branch, or a
    // branch of it when the original file had true branches after the prompt) shows what Claude showed
    // before the rewind: the oracle of the original file.
    const held = [...heldLines(imp.ws, entry.session_id)];
    const holder = (line: number) => held.find(([, lines]) => lines.includes(line))![0];
    for (const line of [rw.abandonedLine, rw.originalLeafLine]) {
      const log = entry.logs.find((l: any) => l.session_id === holder(line));
      expect(["branch", "root_branch"]).toContain(log.role);
    }
    expect(contextView(imp.ws, holder(rw.originalLeafLine))).toEqual(oracleItems(fixture(rel)));
    expectHeldAndExported(imp, rel, rw.bytes);
  });
});

describe("prefixes of every real session, cut at a line boundary", () => {
  let imp: Imported;
  const cuts = new Map<string, Buffer>();
  beforeAll(() => {
    const root = tempDir("pixir-claude-prefix-");
    SESSIONS.forEach((rel, i) => {
      const bytes = fixture(rel);
      const ends: number[] = [];
      for (let at = bytes.indexOf(0x0a); at >= 0 && at < bytes.length - 1; at = bytes.indexOf(0x0a, at + 1)) ends.push(at + 1);
      // A seeded choice, a different fraction of each file.
      const cut = ends.length === 0 ? bytes.length : ends[Math.floor((ends.length * ((i * 37) % 100)) / 100)]!;
      cuts.set(rel, bytes.subarray(0, cut));
      write(root, rel, bytes.subarray(0, cut));
      for (const sub of subagentFiles(rel)) write(root, sub, fixture(sub));
    });
    imp = importRoot(root);
  });

  it.each(SESSIONS)("%s: pixir context equals the oracle of the prefix", (rel) => {
    const bytes = cuts.get(rel)!;
    const entry = imp.entry(rel);
    if (entry.leaf_session_id === null) expect(oracleItems(bytes)).toEqual([]);
    else expect(contextView(imp.ws, entry.leaf_session_id)).toEqual(oracleItems(bytes));
    expectHeldAndExported(imp, rel, bytes);
  });
});

describe("a rewind after an auto-compaction (claude-interop.md §3.8 carried checkpoint)", () => {
  const COMPACTED = ["codemie-code/session-624a4a58.jsonl", "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"];
  it.each(COMPACTED)("%s: the abandoned branch starts with the checkpoint carried from the primary", (rel) => {
    const bytes = fixture(rel);
    const rw = rewindOf(bytes, resumedRecords(bytes), "last")!;
    // The prompt rewound to comes after the compact summary.
    const summaryLine = resumedRecords(bytes).find((r) => r.v.isCompactSummary === true)!.line;
    expect(rw.abandonedLine).toBeGreaterThan(summaryLine);
    const root = tempDir("pixir-claude-rewind-compact-");
    write(root, rel, rw.bytes);
    for (const sub of subagentFiles(rel)) write(root, sub, fixture(sub));
    const imp = importRoot(root);
    const entry = imp.entry(rel);
    const leafView = contextView(imp.ws, entry.leaf_session_id);
    expect(leafView[0]).toMatchObject({ type: "history_compaction" });
    expect(leafView).toEqual(oracleItems(rw.bytes));
    const branch = [...heldLines(imp.ws, entry.session_id)].find(([, lines]) => lines.includes(rw.originalLeafLine))![0];
    const own = storedEvents(imp.ws, branch).filter((e) => e.seq > storedEvents(imp.ws, branch)[0]!.data.replay_event_count);
    expect(own[0]).toMatchObject({ type: "history_compaction", data: { strategy: "claude_compaction", claude: { uuid: expect.any(String), carried_from: expect.any(String) } } });
    const view = contextView(imp.ws, branch);
    expect(view[0]).toMatchObject({ type: "history_compaction" });
    expect(view).toEqual(oracleItems(bytes));
  });
});

describe("a rewind between two imports (claude-interop.md §3.4: held records never move)", () => {
  let first: Imported;
  let second: any;
  const cases = new Map<string, Rewound>();
  let before = new Map<string, Buffer>();
  beforeAll(() => {
    const root = tempDir("pixir-claude-rewind-later-");
    for (const rel of SESSIONS) {
      write(root, rel, fixture(rel));
      for (const sub of subagentFiles(rel)) write(root, sub, fixture(sub));
    }
    first = importRoot(root);
    before = new Map(readdirSync(path.join(first.ws, ".pixir", "sessions")).map((n) => [n, readFileSync(path.join(first.ws, ".pixir", "sessions", n))]));
    for (const rel of SESSIONS) {
      const rw = rewindOf(fixture(rel), resumedRecords(fixture(rel)))!;
      cases.set(rel, rw);
      write(root, rel, rw.bytes);
    }
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: first.ws });
    expect(res.code, res.stdout + res.stderr).toBe(0);
    second = res.json;
  });

  it("appends to the Logs, never rewrites them", () => {
    for (const [name, bytes] of before) expect(readFileSync(path.join(first.ws, ".pixir", "sessions", name)).subarray(0, bytes.length).equals(bytes), name).toBe(true);
    expect(run("pixir-log", ["check"], { cwd: first.ws }).code).toBe(0);
  });

  it.each(SESSIONS)("%s: the primary keeps the old path, leaf_session_id names the new branch", (rel) => {
    const rw = cases.get(rel)!;
    const entry = second.imports.find((i: any) => i.file === rel);
    expect(entry.status).toBe("appended");
    const primary = entry.logs[0].session_id;
    expect(entry.leaf_session_id).not.toBe(primary);
    expect(entry.logs.find((l: any) => l.session_id === entry.leaf_session_id)).toMatchObject({ status: "created", parent_session_id: expect.any(String) });
    expect(contextView(first.ws, entry.leaf_session_id)).toEqual(oracleItems(rw.bytes));
    expect(contextView(first.ws, first.entry(rel).leaf_session_id)).toEqual(oracleItems(fixture(rel)));
    expectHeldAndExported({ ...first, entry: () => entry }, rel, rw.bytes);
  });
});

describe("subagent transcripts that grow with their session, in both layouts (§3.6, §4.3)", () => {
  const UNITS = ["claude-code-log/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl", "claude-code-log/cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"];
  it.each(UNITS)("%s: each file appended to in four steps; links, held lines and exports follow", (rel) => {
    const files = [rel, ...subagentFiles(rel)];
    const root = tempDir("pixir-claude-subgrow-");
    const ws = tempDir();
    const prefixAt = (bytes: Buffer, fraction: number) => {
      if (fraction >= 1) return bytes;
      const at = bytes.indexOf(0x0a, Math.floor(bytes.length * fraction));
      return at < 0 ? bytes : bytes.subarray(0, at + 1);
    };
    for (const fraction of [0.25, 0.5, 0.75, 1]) {
      for (const f of files) write(root, f, prefixAt(fixture(f), fraction));
      const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
      expect(res.code, res.stdout + res.stderr).toBe(0);
      for (const f of files) {
        const entry = res.json.imports.find((i: any) => i.file === f);
        const bytes = prefixAt(fixture(f), fraction);
        const source = entry.kind === "subagent" ? `${entry.session_id}/agent-${entry.agent_id}` : entry.session_id;
        expect([...heldLines(ws, source).values()].flat().sort((a, b) => a - b), f).toEqual(nonBlankLines(bytes));
      }
    }
    const id = path.basename(rel, ".jsonl");
    // Every subagent linked once by a returned or detected event that names its Log.
    const links = storedEvents(ws, id).filter((e) => e.type === "subagent_event" && typeof e.data.child_session_id === "string");
    const children = logIdsOf(ws).filter((x) => x.startsWith(`${id}.agent-`));
    expect(new Set(links.map((e) => e.data.child_session_id))).toEqual(new Set(children));
    expect(children).toHaveLength(subagentFiles(rel).length);
    const out = tempDir();
    const exp = run("pixir", ["export", "claude", id, "--out", out, "--json"], { cwd: ws });
    expect(exp.code, exp.stdout).toBe(0);
    expect(exp.json.files).toHaveLength(files.length);
    for (const f of exp.json.files) {
      const name = path.basename(f.path);
      const source = files.find((x) => path.basename(x) === name)!;
      expect(readFileSync(path.join(out, f.path)).equals(fixture(source)), f.path).toBe(true);
    }
  });

  it("a subagent file that appears after its session was imported gets its Log, and the session a detected link", () => {
    const rel = "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl";
    const id = "29ccd257-68b1-427f-ae5f-6524b7cb6f20";
    const root = tempDir("pixir-claude-sublate-");
    const ws = tempDir();
    write(root, rel, fixture(rel));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const link = storedEvents(ws, id).find((e) => e.type === "subagent_event")!;
    expect(link.data).toMatchObject({ subagent_id: "a2271d1", event: "returned" });
    expect("child_session_id" in link.data).toBe(false);
    for (const sub of subagentFiles(rel)) write(root, sub, fixture(sub));
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code, res.stdout).toBe(0);
    expect(res.json.imports.map((i: any) => [i.file, i.status])).toEqual([
      [subagentFiles(rel)[0], "created"],
      [rel, "appended"],
    ]);
    const detected = storedEvents(ws, id).filter((e) => e.type === "subagent_event" && e.data.event === "detected");
    expect(detected.map((e) => e.data)).toEqual([expect.objectContaining({ subagent_id: "a2271d1", child_session_id: `${id}.agent-a2271d1`, status: "unknown" })]);
    const tree = run("pixir", ["tree", id, "--format", "json"], { cwd: ws });
    expect(JSON.stringify(tree.json)).toContain(`${id}.agent-a2271d1`);
    const again = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(again.json.imports.every((i: any) => i.status === "unchanged")).toBe(true);
  });

  it("a changed line in a subagent file is refused, nothing written", () => {
    const rel = "claude-code-log/29ccd257-68b1-427f-ae5f-6524b7cb6f20.jsonl";
    const sub = subagentFiles(rel)[0]!;
    const root = tempDir("pixir-claude-subchg-");
    const ws = tempDir();
    write(root, rel, fixture(rel));
    write(root, sub, fixture(sub));
    expect(run("pixir", ["import", "claude", root], { cwd: ws }).code).toBe(0);
    const before = readdirSync(path.join(ws, ".pixir", "sessions")).map((n) => readFileSync(path.join(ws, ".pixir", "sessions", n)));
    const bytes = Buffer.from(fixture(sub));
    const at = bytes.indexOf("Warm") >= 0 ? bytes.indexOf("Warm") : bytes.indexOf('"content"') + 12;
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    write(root, sub, Buffer.concat([bytes, Buffer.from(fixture(sub).toString("utf8").split("\n")[0] + "\n")]));
    const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(res.code).toBe(1);
    expect(res.json.error).toMatchObject({ kind: "already_exists", details: { reason: "transcript_changed", file: sub, session_id: "29ccd257-68b1-427f-ae5f-6524b7cb6f20.agent-a2271d1" } });
    const after = readdirSync(path.join(ws, ".pixir", "sessions")).map((n) => readFileSync(path.join(ws, ".pixir", "sessions", n)));
    expect(after.length).toBe(before.length);
    after.forEach((b, i) => expect(b.equals(before[i]!)).toBe(true));
  });
});

function logIdsOf(ws: string): string[] {
  return readdirSync(path.join(ws, ".pixir", "sessions"))
    .filter((n) => n.endsWith(".ndjson"))
    .map((n) => n.slice(0, -".ndjson".length));
}
