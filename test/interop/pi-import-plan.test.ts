// `pixir import pi` of a family whose compactions and branch summaries point across Logs: the plan keeps only
// each entry's place and each Log's own entries (docs/performance.md "Round 10: import pi within the bound"),
// so what it derives across the family is checked here against the resolved Histories themselves
// (`pixir-log cat`), computed independently of the importer: pi-interop.md §2 and §2.3.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { tempDir } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";

type Entry = Record<string, unknown> & { id: string; parentId: string | null };
const ts = "2026-01-01T00:01:00.000Z";
const user = (id: string, parentId: string | null): Entry => ({ type: "message", id, parentId, timestamp: ts, message: { role: "user", content: `say ${id}`, timestamp: 1 } });
const assistant = (id: string, parentId: string): Entry => ({
  type: "message",
  id,
  parentId,
  timestamp: ts,
  message: {
    role: "assistant",
    content: [{ type: "thinking", thinking: "hm" }, { type: "text", text: "ok" }, { type: "toolCall", id: `c-${id}`, name: "bash", arguments: { cmd: "ls" } }],
    api: "x",
    provider: "p",
    model: "m",
    usage: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { total: 0.1 } },
    stopReason: "toolUse",
    timestamp: 2,
  },
});
const compaction = (id: string, parentId: string, kept: string): Entry => ({ type: "compaction", id, parentId, timestamp: ts, summary: `before ${kept}`, firstKeptEntryId: kept, tokensBefore: 9 });
const summary = (id: string, parentId: string, fromId: string): Entry => ({ type: "branch_summary", id, parentId, timestamp: ts, fromId, summary: "came back" });

/** A primary, a branch from its middle, a grandchild, and compactions keeping an own, an inherited and an off-path entry. */
const FAMILY: Entry[] = [
  user("u1", null),
  assistant("a1", "u1"),
  user("u2", "a1"),
  assistant("a2", "u2"),
  compaction("k1", "a2", "u2"),
  user("b1", "a1"),
  assistant("b2", "b1"),
  compaction("k2", "b2", "u1"),
  summary("s1", "u2", "b2"),
  user("g1", "b2"),
  compaction("k3", "g1", "b1"),
  compaction("k4", "k3", "a1"),
  compaction("k5", "k4", "u2"),
  summary("s2", "k5", "missing"),
  user("last", "k1"),
];

function importFamily(): { ws: string; sessions: Array<{ session_id: string }> } {
  const ws = tempDir();
  const file = path.join(ws, "family.jsonl");
  const header = { type: "session", version: 3, id: "fam-1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/tmp" };
  writeFileSync(file, `${[header, ...FAMILY].map((e) => JSON.stringify(e)).join("\n")}\n`);
  const r = run("pixir", ["import", "pi", file, "--json"], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return { ws, sessions: r.json.imports[0].sessions };
}

const resolvedOf = (ws: string, id: string): any[] =>
  run("pixir-log", ["cat", id], { cwd: ws })
    .stdout.split("\n")
    .filter((l: string) => l !== "")
    .map((l: string) => JSON.parse(l));

/** pi's path of an entry: its ancestors, root first, then itself. */
function piPath(id: string): string[] {
  const byId = new Map(FAMILY.map((e) => [e.id, e]));
  const out: string[] = [];
  for (let e = byId.get(id); e !== undefined; e = e.parentId === null ? undefined : byId.get(e.parentId)) out.unshift(e.id);
  return out;
}

describe("import pi: what the plan derives across a family", () => {
  const { ws, sessions } = importFamily();
  const logs = new Map(sessions.map((s) => [s.session_id, resolvedOf(ws, s.session_id)]));

  it("imports one Log per leaf, each passing pixir-log check (its share_v1 header's prefix digest included)", () => {
    expect(sessions.map((s) => s.session_id).sort()).toEqual(["fam-1", "fam-1.k2", "fam-1.s1", "fam-1.s2"]);
    const check = run("pixir-log", ["check", "--json"], { cwd: ws });
    expect(check.code, check.stdout).toBe(0);
    expect(check.json.checked).toBe(4);
  });

  it("gives each compaction the first Event of its kept entry when that entry is on its path, else keeps everything before it", () => {
    let seen = 0;
    for (const [, events] of logs) {
      for (const c of events.filter((e) => e.type === "history_compaction")) {
        seen++;
        const path = piPath(c.data.pi.entry_id);
        const kept = c.data.pi.first_kept_entry_id;
        const keptAt = path.indexOf(kept);
        const before = events.filter((e) => e.seq < c.seq);
        const first = keptAt === -1 ? undefined : before.find((e) => typeof e.data.pi?.entry_id === "string" && path.indexOf(e.data.pi.entry_id) >= keptAt);
        expect(c.data.first_kept_event_id).toBe(first?.id ?? null);
        const toSeq = first === undefined ? c.seq - 1 : first.seq - 1;
        expect(c.data.range).toEqual({ from_seq: 0, to_seq: toSeq });
        expect(c.data.source_event_count).toBe(toSeq + 1);
      }
    }
    expect(seen).toBe(5);
  });

  it("points each branch summary at the last Event of its fromId entry, in the Log that holds it", () => {
    const summaries = [...logs.values()].flat().filter((e) => e.type === "branch_summary" && e.seq > 0);
    const bySource = new Map(summaries.map((e) => [e.data.pi.entry_id, e]));
    expect(bySource.get("s2").data.parent_session_id).toBeNull();
    expect(bySource.get("s2").data.branch_point_event_id).toBeNull();
    const s1 = bySource.get("s1");
    const holder = logs.get(s1.data.parent_session_id)!;
    const own = holder.filter((e) => e.session_id === s1.data.parent_session_id && e.data.pi?.entry_id === "b2");
    expect(own.length).toBeGreaterThan(1);
    expect(s1.data.branch_point_event_id).toBe(own.at(-1).id);
  });
});
