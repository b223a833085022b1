// fork.md §4.2: `pixir fork` (no summary) makes the child's inherited lines from the parent's bytes
// (ParentSource.inheritedBlocks). They must be exactly the lines the other entry points make, and a
// parent that changes between the plan and the copy must fail the fork.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parentFromLog, PixirError } from "@pixir/envelope";
import { logFile, readLog, ROOT, run, sh, workspace } from "../support/cli.js";
import { derivedUlid, expectJsonOk } from "../support/fork.js";

/**
 * A pass-through parent (every line a whole envelope) whose lines test byte preservation: escapes,
 * numbers JavaScript cannot hold, key order inside data, non-ASCII; two lines in Pixir's sorted key
 * order, which the byte copy cannot read and takes the general way.
 */
const PARENT = [
  `{"id":"p0","session_id":"P","seq":0,"ts":"2026-01-01T00:00:00Z","type":"user_message","data":{"text":"héllo \\u00e9 \\/ \\"q\\" 🙂","n":1.50,"big":12345678901234567890}}`,
  `{"id":"p1","session_id":"P","seq":1,"ts":"2026-01-01T00:00:01Z","type":"tool_call","data":{"name":"read","call_id":"c1","args":{"path":"a.ts","z":[1e400,-0.0]}}}`,
  `{"data":{"call_id":"c1","ok":true,"output":"tab\\there"},"id":"p2","seq":2,"session_id":"P","ts":"2026-01-01T00:00:02Z","type":"tool_result"}`,
  `{"id":"p3","session_id":"P","seq":3,"ts":"2026-01-01T00:00:03Z","type":"provider_usage","data":{"tokens":3}}`,
  `{"id":"p4","session_id":"P","seq":4,"ts":"2026-01-01T00:00:04.123456Z","type":"assistant_message","data":{"text":"日本語\\n\\u2028"}}`,
  `{"data":{},"id":"p5","seq":5,"session_id":"P","ts":"2026-01-01T00:00:05Z","type":"reasoning"}`,
];

/** What a fork must keep byte for byte: ts, type and data (the raw text of each, in line order). */
function kept(line: string): string {
  const e = JSON.parse(line);
  const data = line.slice(line.indexOf('"data":') + 7);
  // In our key order data ends the line; in sorted order it is followed by the other keys.
  const dataText = line.startsWith('{"data":') ? data.slice(0, data.length - (line.length - line.indexOf(',"id":'))) : data.slice(0, -1);
  return JSON.stringify([e.type, e.ts]) + dataText;
}

describe("pixir fork copies inherited lines from the parent's bytes", () => {
  it("makes the same bytes as pixir-fork --parent and the stdin pipeline, with derived ids", () => {
    const ws = workspace({ P: `${PARENT.join("\n")}\n` });
    expectJsonOk(run("pixir", ["fork", "P", "--child-id", "wrapped", "--json"], { cwd: ws }));
    expectJsonOk(sh("pixir-fork --parent P --child-id parent-flag | pixir-log write --json", { cwd: ws }));
    expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id piped | pixir-log write --json", { cwd: ws }));
    const inherited = PARENT.filter((l) => !l.includes('"provider_usage"'));
    const lines = (id: string) => readLog(ws, id).split("\n").filter((l) => l !== "");
    for (const id of ["wrapped", "parent-flag", "piped"]) {
      const child = lines(id);
      const header = JSON.parse(child[0]!);
      expect([id, child.length]).toEqual([id, inherited.length + 1]);
      child.slice(1).forEach((line, i) => {
        const k = i + 1;
        const e = JSON.parse(line);
        expect(line.startsWith(`{"id":"${derivedUlid(`fork:${header.id}:${k}`, e.ts)}","session_id":"${id}","seq":${k},`)).toBe(true);
        expect([id, k, kept(line)]).toEqual([id, k, kept(inherited[i]!)]);
      });
    }
    // The copies of our-order lines are the parent's bytes from `"ts":` on.
    const ours = lines("wrapped").slice(1).filter((l) => !l.includes('"output":"tab') && !l.includes('"reasoning"'));
    expect(ours).toHaveLength(3);
    for (const line of ours) expect(PARENT.some((p) => p.endsWith(line.slice(line.indexOf('"ts":'))))).toBe(true);
    expect(run("pixir-log", ["check", "wrapped"], { cwd: ws }).code).toBe(0);
  });

  it("fails with fork_prefix_mismatch when the parent changed after the plan was made", async () => {
    const ws = workspace({ P: `${PARENT.join("\n")}\n` });
    const parent = await parentFromLog(ws, "P", undefined, "pixir fork");
    expect(parent.inheritedBlocks).toBeDefined();
    // Same length, other bytes: only the fingerprint of the copy can tell.
    const file = logFile(ws, "P");
    writeFileSync(file, readFileSync(file, "utf8").replace("héllo", "hallo"));
    const copy = async () => {
      for await (const block of parent.inheritedBlocks!("01JZZZZZZZZZZZZZZZZZZZZZZZ", "c")) expect(block.length).toBeGreaterThan(0);
    };
    const err = await copy().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PixirError);
    expect((err as PixirError).kind).toBe("fork_prefix_mismatch");
    expect((err as PixirError).details).toMatchObject({ session_id: "c", parent_session_id: "P", expected_count: 5, actual_count: 5 });
  });
});

describe("pixir fork --summarize without a stream", () => {
  it("records the summary pixir-summarize records, on a realistic generated parent", () => {
    const ws = workspace();
    const gen = spawnSync(process.execPath, [path.join(ROOT, "bench", "gen-log.mjs"), "--events", "1500", "--session", "big", "--out", logFile(ws, "big")]);
    expect(gen.status).toBe(0);
    for (const toSeq of ["700", "1499"]) {
      expectJsonOk(run("pixir", ["fork", "big", "--to-seq", toSeq, "--summarize", "--child-id", `w${toSeq}`, "--json"], { cwd: ws }));
      expectJsonOk(sh(`pixir-log cat big | pixir-fork --to-seq ${toSeq} --child-id p${toSeq} | pixir-summarize | pixir-log write --json`, { cwd: ws }));
      const lines = (id: string) => readLog(ws, id).split("\n").filter((l) => l !== "");
      const [w, p] = [lines(`w${toSeq}`), lines(`p${toSeq}`)];
      expect(w.length).toBe(p.length);
      for (let k = 1; k < w.length - 1; k++) expect([toSeq, k, kept(w[k]!)]).toEqual([toSeq, k, kept(p[k]!)]);
      const [ws_, ps] = [JSON.parse(w.at(-1)!), JSON.parse(p.at(-1)!)];
      expect([ws_.type, ws_.seq]).toEqual(["branch_summary", w.length - 1]);
      expect(ws_.data).toEqual(ps.data);
      expect(ws_.data.source_event_count).toBeGreaterThan(100);
    }
  });
});
