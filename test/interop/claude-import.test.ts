// pixir import claude / pixir export claude over the real Claude Code transcripts (claude-interop.md §6):
// the oracle computed from each file alone, the expected Logs, round trip, idempotence, the tree.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { binPath, tempDir } from "../support/cli.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";
import { contextView, oracleItems } from "../support/claude-oracle.js";
import { allFixtureFiles, CLAUDE_FIXTURES, heldLines, logIds, nonBlankLines, ownEvents, projectsRoot, r, sessionFixtures, storedEvents } from "../support/claude.js";

const SESSIONS = sessionFixtures().filter((f) => f !== "agent-sessions/small.jsonl");
const fixtureBytes = (rel: string) => readFileSync(path.join(CLAUDE_FIXTURES, rel));

let ws = "";
let root = "";
let report: any;
const entryOf = (rel: string) => report.imports.find((i: any) => i.file === rel);
const logOf = (rel: string, id: string) => entryOf(rel).logs.find((l: any) => l.session_id === id);

beforeAll(() => {
  root = projectsRoot();
  ws = tempDir();
  const res = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
  expect(res.code, res.stdout + res.stderr).toBe(0);
  report = res.json;
});

describe("a first import of every fixture (claude-interop.md §6 steps 1–5)", () => {
  it("imports every file with exit 0, and pixir-log check finds nothing", () => {
    expect(report).toMatchObject({ ok: true, recorded: true, dry_run: false });
    expect(report.imports.map((i: any) => i.file).sort()).toEqual(allFixtureFiles().sort());
    expect(report.imports.every((i: any) => i.status === "created")).toBe(true);
    const check = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(check.code, check.stdout).toBe(0);
    expect(check.json.warning_count).toBe(0);
    expect(check.json.logs.flatMap((l: any) => [...l.problems, ...l.warnings])).toEqual([]);
  });

  it.each(allFixtureFiles())("holds every non-blank line of %s in exactly one Log", (rel) => {
    const entry = entryOf(rel);
    const source = entry.kind === "subagent" ? `${entry.session_id}/agent-${entry.agent_id}` : entry.session_id;
    const held = [...heldLines(ws, source).values()].flat().sort((a, b) => a - b);
    expect(held).toEqual(nonBlankLines(fixtureBytes(rel)));
    expect(entry.records).toBe(held.length);
  });

  it.each(SESSIONS)("%s: pixir context of the leaf Log shows the oracle's items", (rel) => {
    const expected = oracleItems(fixtureBytes(rel));
    expect(expected.length).toBeGreaterThan(0);
    expect(contextView(ws, entryOf(rel).leaf_session_id)).toEqual(expected);
  });

  it("every Log's own Events follow line order (§2.4), whichever step placed their records", () => {
    for (const id of logIds(ws)) {
      const lines = ownEvents(ws, id)
        .map((e) => e.data.claude?.line)
        .filter((n): n is number => typeof n === "number");
      expect(lines, id).toEqual([...lines].sort((a, b) => a - b));
    }
  });

  it("exports every file back byte for byte (§6 step 4)", () => {
    const out = tempDir();
    const primaries = report.imports.filter((i: any) => i.kind !== "subagent").map((i: any) => i.logs[0].session_id);
    const written: string[] = [];
    for (const id of primaries) {
      const res = run("pixir", ["export", "claude", id, "--out", out, "--json"], { cwd: ws });
      expect(res.code, res.stdout + res.stderr).toBe(0);
      expect(res.json.mode).toBe("original");
      written.push(...res.json.files.map((f: any) => f.path));
    }
    expect(written).toHaveLength(allFixtureFiles().length);
    for (const rel of allFixtureFiles()) {
      const entry = entryOf(rel);
      // Renamed fixtures come back under their session id; subagents keep their layout (§5.4).
      const tail =
        entry.kind === "subagent"
          ? rel.includes("/subagents/")
            ? `/${entry.session_id}/subagents/${path.basename(rel)}`
            : `/${path.basename(rel)}`
          : `/${entry.logs[0].session_id}.jsonl`;
      const match = written.filter((w) => w.endsWith(tail));
      expect(match, rel).toHaveLength(1);
      expect(readFileSync(path.join(out, match[0]!)).equals(fixtureBytes(rel)), rel).toBe(true);
    }
  });

  it("importing again reports every Log unchanged and changes no byte (§6 step 5)", () => {
    const before = logIds(ws).map((id) => readFileSync(path.join(ws, ".pixir/sessions", `${id}.ndjson`)));
    const again = run("pixir", ["import", "claude", root, "--json"], { cwd: ws });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.recorded).toBe(false);
    expect(again.json.imports.every((i: any) => i.status === "unchanged" && i.logs.every((l: any) => l.status === "unchanged"))).toBe(true);
    expect(again.json.imports.flatMap((i: any) => i.logs.map((l: any) => l.session_id)).sort()).toEqual(logIds(ws));
    // Buffers compared with equals(): a deep equality walks them byte by byte.
    expect(logIds(ws).every((id, i) => readFileSync(path.join(ws, ".pixir/sessions", `${id}.ndjson`)).equals(before[i]!))).toBe(true);
  });
});

describe("the Logs of the fixtures (claude-interop.md §6 table)", () => {
  const linesOf = (source: string, id: string) => heldLines(ws, source).get(id)!.sort((a, b) => a - b);
  const pathLines = (id: string) =>
    ownEvents(ws, id)
      .filter((e) => e.data.claude?.path === true)
      .map((e) => e.data.claude.line);

  it("0d3a8e6f (1.0.43): /doctor and /status are branches at line 62, /mcp stays on the primary", () => {
    const id = "0d3a8e6f-290f-4105-a327-a2496e5e2a83";
    const entry = entryOf(`claude-code-log/${id}.jsonl`);
    expect(entry.records).toBe(68);
    expect(entry.leaf_uuid).toMatch(/^0f0fbc32/);
    expect(entry.leaf_session_id).toBe(id);
    expect(linesOf(id, id)).toEqual([...r(1, 62), 67, 68]);
    const line62 = ownEvents(ws, id).filter((e) => e.data.claude?.line === 62).at(-1)!.seq;
    for (const [uuid, lines] of [
      ["f714a687-f20e-481e-936b-3d7a92fbae31", [63, 64]],
      ["7dba8df7-c6f3-49d2-91d2-e09b9ed2598a", [65, 66]],
    ] as const) {
      const branch = `${id}.${uuid}`;
      expect(linesOf(id, branch)).toEqual(lines);
      expect(logOf(`claude-code-log/${id}.jsonl`, branch)).toMatchObject({ role: "branch", parent_session_id: id, forked_to_seq: line62 });
      const header = storedEvents(ws, branch)[0]!;
      expect(header.data).toMatchObject({ strategy: "share_v1", parent_session_id: id, forked_to_seq: line62, claude: { fork_kind: "claude_branch" } });
      expect(header.data.claude.fork_point_uuid).toMatch(/^faa89ae6/);
    }
  });

  it("71c9afe9 (1.0.55): the /clear conversation is a branch at line 1", () => {
    const id = "71c9afe9-d9cc-4583-86b3-e62ba682b83a";
    expect(linesOf(id, id)).toEqual([1, 14, 15]);
    expect(entryOf(`claude-code-log/${id}.jsonl`).leaf_uuid).toMatch(/^c97a4bd2/);
    expect(linesOf(id, `${id}.e042a3e0-d31a-49e0-b181-3e34674017b2`)).toEqual(r(2, 13));
  });

  it("03eb5929 (2.1.42): a real rewind splits into two Logs, the live prompt on the primary", () => {
    const id = "03eb5929-52b3-4b13-ada3-b93ae35806b8";
    const logs = entryOf(`claude-code-log/${id}.jsonl`).logs;
    expect(logs.map((l: any) => l.role)).toEqual(["primary", "branch"]);
    const branchLines = linesOf(id, logs[1].session_id);
    expect(branchLines[0]).toBe(18);
    expect(branchLines.every((n) => n >= 18 && n <= 37)).toBe(true);
    expect(pathLines(id)).toContain(38);
    expect(pathLines(id)).toContain(61);
  });

  it("ef958aa1 (2.1.114): one primary despite 6 fan-outs, 156 path records, 6 linked subagents", () => {
    const id = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    const entry = entryOf(`claude-code-log/${id}.jsonl`);
    expect(entry.records).toBe(180);
    expect(entry.logs.map((l: any) => l.role)).toEqual(["primary"]);
    expect(pathLines(id)).toHaveLength(156);
    const sideMessages = ownEvents(ws, id).filter((e) => e.data.claude?.path === false);
    expect(sideMessages).toHaveLength(6);
    expect(sideMessages.every((e) => e.data.claude.record.type === "attachment")).toBe(true);
    const links = ownEvents(ws, id).filter((e) => e.type === "subagent_event");
    expect(links.map((e) => e.data.claude.line)).toEqual([57, 61, 63, 140, 142, 144]);
    expect(links.every((e) => e.data.event === "returned" && e.data.child_session_id.startsWith(`${id}.agent-`))).toBe(true);
  });

  it("cb2e607c (2.0.37): the Task subagent returned, the two Warmups detected", () => {
    const id = "cb2e607c-c758-415a-8b45-c49e4631906a";
    const links = ownEvents(ws, id).filter((e) => e.type === "subagent_event");
    expect(links.map((e) => [e.data.subagent_id, e.data.event, e.data.claude.line ?? null])).toEqual([
      ["ea02459f", "returned", 7],
      ["2b93909d", "detected", null],
      ["645808c9", "detected", null],
    ]);
  });

  it("a7da6a22 (2.0.55): leaf line 315, a subagent that starts with an assistant record", () => {
    const id = "a7da6a22-facc-4fcd-8bab-f83c87862004";
    const leafEvent = ownEvents(ws, id).find((e) => e.data.claude?.uuid === entryOf(`claude-code-log/${id}.jsonl`).leaf_uuid)!;
    expect(leafEvent.data.claude.line).toBe(315);
    const link = ownEvents(ws, id).find((e) => e.type === "subagent_event")!;
    expect(link.data).toMatchObject({ child_session_id: `${id}.agent-c8d9b115`, claude: { line: 78 } });
  });

  it("the inline subagents of 1.0.x files are their own Logs, linked by the Task prompt", () => {
    const a = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7";
    expect(linesOf(a, `${a}.sidechain-6340ddef-f656-4b72-a065-82390f637678`)).toHaveLength(7);
    expect(linesOf(a, `${a}.sidechain-83e2917c-8940-4df6-a5a5-f2514f0d08c5`)).toHaveLength(15);
    expect(linesOf(a, a)).toHaveLength(31);
    expect(ownEvents(ws, a).filter((e) => e.type === "subagent_event").map((e) => e.data.claude.line)).toEqual([23, 41]);
    const b = "fe5e1c67-53e7-4862-81ae-d0e013e3270b";
    const firsts = logIds(ws)
      .filter((x) => x.startsWith(`${b}.sidechain-`))
      .map((x) => linesOf(b, x)[0])
      .sort((p, q) => p! - q!);
    expect(firsts).toEqual([16, 38, 125, 229, 295]);
    expect(linesOf(b, b)).toHaveLength(33);
    expect(ownEvents(ws, b).filter((e) => e.type === "subagent_event" && e.data.event === "returned").map((e) => e.data.claude.line)).toEqual([37, 124, 223, 294, 430]);
  });

  it("258c7280 (2.1.39): the auto-compaction is a checkpoint, and pixir context starts with it", () => {
    const id = "258c7280-ae70-4798-800f-63464d01a85d";
    const checkpoint = ownEvents(ws, id).find((e) => e.type === "history_compaction")!;
    expect(checkpoint.data).toMatchObject({ strategy: "claude_compaction", range: { from_seq: 0, to_seq: checkpoint.seq - 1 }, source_event_count: checkpoint.seq, trigger: "auto", pre_tokens: 167094, claude: { line: 1257 } });
    const ctx = run("pixir", ["context", id], { cwd: ws });
    expect(ctx.lines[0]).toMatchObject({ type: "history_compaction", id: checkpoint.id });
    expect(entryOf(`spotter/${id}.jsonl`).logs.map((l: any) => l.role)).toEqual(["primary"]);
  });

  it("624a4a58 (2.0.76): the compact summary is a checkpoint, and pixir context starts with it", () => {
    const id = "624a4a58-b34c-462d-a70d-13421c8125a8";
    expect(entryOf("codemie-code/session-624a4a58.jsonl").session_id).toBe(id);
    const checkpoint = ownEvents(ws, id).find((e) => e.type === "history_compaction")!;
    expect(checkpoint.data).toMatchObject({ strategy: "claude_compaction", range: { from_seq: 0, to_seq: checkpoint.seq - 1 }, trigger: "auto", claude: { line: 159 } });
    const ctx = run("pixir", ["context", id], { cwd: ws });
    expect(ctx.lines[0]).toMatchObject({ type: "history_compaction", id: checkpoint.id });
  });

  it("9eda1058 (2.1.4): links to absent subagent files have no child_session_id", () => {
    const id = "9eda1058-9706-484a-b992-d03f9cfa2546";
    const links = ownEvents(ws, id).filter((e) => e.type === "subagent_event");
    expect(links.map((e) => [e.data.subagent_id, e.data.claude.line, "child_session_id" in e.data, "workspace" in e.data])).toEqual([
      ["a693a87", 28, false, false],
      ["a46b9c3", 37, false, false],
    ]);
  });

  it("a renamed file takes its session id from its records", () => {
    expect(entryOf("agent-history/session-01.jsonl")).toMatchObject({ session_id: "06090cb1-3e64-433a-bc7e-a621c0f596d2", status: "created" });
  });

  it.each(SESSIONS)("%s: pixir tree shows every subagent Log of the unit as a child, returned or detected (§6 step 8)", (rel) => {
    const entry = entryOf(rel);
    const primary = entry.logs[0].session_id;
    const tree = run("pixir", ["tree", primary, "--format", "json"], { cwd: ws });
    expect(tree.code, tree.stderr).toBe(0);
    const children = tree.json.tree.subagents.filter((s: any) => typeof s.child_session_id === "string");
    // The unit's subagent and inline Logs: the other roots of its files (no branch).
    const unitRoots = report.imports
      .filter((i: any) => i.session_id === entry.session_id)
      .flatMap((i: any) => i.logs)
      .filter((l: any) => l.role === "subagent" || l.role === "inline_subagent")
      .map((l: any) => l.session_id)
      .sort();
    expect(children.map((c: any) => c.child_session_id).sort()).toEqual(unitRoots);
    for (const c of children) {
      expect(["returned", "detected"]).toContain(c.event);
      expect(c.session?.log_exists).toBe(true);
    }
  });

  it("pixir tree shows the subagent children with returned and detected events (§6 step 8)", () => {
    const tree = run("pixir", ["tree", "cb2e607c-c758-415a-8b45-c49e4631906a", "--format", "json"], { cwd: ws });
    expect(tree.code, tree.stderr).toBe(0);
    const text = JSON.stringify(tree.json);
    for (const child of ["agent-ea02459f", "agent-2b93909d", "agent-645808c9"]) expect(text).toContain(`cb2e607c-c758-415a-8b45-c49e4631906a.${child}`);
    const plain = run("pixir", ["tree", "258c7280-ae70-4798-800f-63464d01a85d", "--verbose"], { cwd: ws });
    expect(plain.stdout).toContain("subagent acompact-fffbd0 (compact)");
    expect(plain.stdout).toContain("258c7280-ae70-4798-800f-63464d01a85d.agent-a881341");
  });
});

describe("progress (claude-interop.md §4.5)", () => {
  const onTerminal = (args: string[], cwd: string) => {
    const command = `${[process.execPath, binPath("pixir"), ...args].map((a) => JSON.stringify(a)).join(" ")} 2>&1 >/dev/null`;
    return spawnSync("script", ["-qec", command, "/dev/null"], { cwd, encoding: "utf8" });
  };
  it("names each source file on a terminal, with a byte percentage for files of 1 MiB or more; nothing otherwise", () => {
    const files = ["claude-code-log/0d3a8e6f-290f-4105-a327-a2496e5e2a83.jsonl", "claude-code-log/71c9afe9-d9cc-4583-86b3-e62ba682b83a.jsonl"];
    const dir = projectsRoot(files);
    const tty = onTerminal(["import", "claude", dir], tempDir());
    expect(tty.status).toBe(0);
    // Each line as the terminal shows it: what follows its last carriage return.
    const shown = tty.stdout
      .split("\n")
      .map((l) => l.replace(/\r$/, "").split("\r").at(-1))
      .filter(Boolean);
    expect(shown).toEqual([`claude import [1/2] ${files[0]} 100%`, `claude import [2/2] ${files[1]}`]);
    expect(onTerminal(["import", "claude", dir, "--json"], tempDir()).stdout).toBe("");
    expect(run("pixir", ["import", "claude", dir], { cwd: tempDir() }).stderr).toBe("");
  });
});
