// pixir-fork with its parent History in a regular file on stdin (`pixir-fork < FILE`): the file is read
// in place twice, with no spool, from wherever stdin stands; lines it cannot take that way send the same
// bytes the general way. Either way the child stream and every error equal those of the same bytes
// through a pipe.
import { readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, rawLine, readEvents, run, sh, tempDir, toolResult, user, workspace, type Ev } from "../support/cli.js";
import { derivedUlid, expectJsonOk } from "../support/fork.js";

const P: Ev[] = [user("one"), assistant("two"), call("c1", "read", "src/a.ts"), toolResult("c1"), ev("provider_usage", { tokens: 3 }), user("three")];
const lines = (id: string, events: Ev[]) => events.map((e, n) => rawLine(id, n, e));
const text = (ls: string[]) => ls.map((l) => `${l}\n`).join("");

/** What a fork run printed, with the header's own id and ts (fresh each run) and the ids derived from them set aside. */
function outcome(r: { code: number; stdout: string; stderr: string }) {
  const out = r.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
  const header = out[0];
  if (r.code === 0 && header.ok === undefined) {
    expect(header.type).toBe("session_fork");
    for (const e of out.slice(1)) if (e.ts !== null) expect(e.id).toBe(derivedUlid(`fork:${header.id}:${e.seq}`, e.ts));
  }
  const err = r.stderr === "" ? null : JSON.parse(r.stderr);
  return { code: r.code, error: err?.error ?? null, events: out.map((e) => ({ ...e, id: null, ...(e.seq === 0 ? { ts: null } : {}) })) };
}

/**
 * Fork `input` (bytes in a file) through a pipe and from the file on stdin; both must agree. With
 * `inPlace` the file must be read without a spool: a fork that tried to spool fails on its TMPDIR.
 */
function bothWays(input: string, args = "--child-id c --json", before = "", inPlace = false) {
  const dir = tempDir("pixir-stdin-");
  const file = path.join(dir, "parent.ndjson");
  writeFileSync(file, before + input);
  const skip = before === "" ? "" : "read -r _; ";
  const fromFile = sh(`{ ${skip}pixir-fork ${args}; } < "${file}"`, { cwd: dir, env: inPlace ? { TMPDIR: path.join(dir, "no-such-dir") } : {} });
  const piped = sh(`cat "${file}" | { ${skip}pixir-fork ${args}; }`, { cwd: dir });
  expect(outcome(fromFile)).toEqual(outcome(piped));
  return { inPlace: fromFile, piped };
}

describe("pixir-fork < FILE reads the file in place", () => {
  it("makes the same child as a pipe, without a spool", () => {
    const { inPlace, piped } = bothWays(text(lines("P", P)), "--child-id c --json", "", true);
    expect(inPlace.code).toBe(0);
    expect(inPlace.lines.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(piped.code).toBe(0);
    // A pipe needs its spool: with no temp directory it fails, with a named error, where the file did not.
    const dir = tempDir("pixir-stdin-");
    const r = sh(`printf '%s' '${text(lines("P", P))}' | pixir-fork --json`, { cwd: dir, env: { TMPDIR: path.join(dir, "no-such-dir") } });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
    expect(r.errJson.error).toMatchObject({ kind: "log_write_failed", message: "could not write the spool file in the temp directory: a directory on its path does not exist", details: { reason: "enoent", path: path.join(dir, "no-such-dir") } });
  });

  it("names a spool the temp directory cannot take (a full disk: ulimit -f) and leaves nothing there", () => {
    const dir = tempDir("pixir-stdin-");
    const file = path.join(dir, "parent.ndjson");
    writeFileSync(file, text(lines("P", Array.from({ length: 200 }, (_, i) => user(`m${i} ${"x".repeat(100)}`)))));
    const tmp = tempDir("pixir-spool-");
    const r = sh(`cat "${file}" | { ulimit -f 8; pixir-fork --json; }`, { cwd: dir, env: { TMPDIR: tmp } });
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 1, stdout: "" });
    expect(r.errJson.error).toMatchObject({ kind: "log_write_failed", details: { reason: "efbig" } });
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("agrees with a pipe on --to-seq, share_v1 and the dry run", () => {
    const input = text(lines("P", P));
    expect(bothWays(input, "--child-id c --to-seq 2 --json", "", true).inPlace.lines.map((e) => e.seq)).toEqual([0, 1, 2, 3]);
    expect(bothWays(input, "--child-id c --strategy share_v1 --json", "", true).inPlace.lines).toHaveLength(1);
    const plan = bothWays(input, "--child-id c --to-seq 2 --dry-run --json", "", true).inPlace.json;
    expect(plan).toMatchObject({ ok: true, dry_run: true, event_count: 3, to_seq: 2 });
    expect(plan.open_tool_calls).toEqual(["c1"]);
  });

  it("starts where stdin stands, not at the start of the file", () => {
    const { inPlace } = bothWays(text(lines("P", P)), "--child-id c --json", '{"not":"part of the History"}\n', true);
    expect(inPlace.code).toBe(0);
    expect(inPlace.lines.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it("takes lines of other forms the general way, over blocks of several MiB", () => {
    // 6,000 lines of about 700 bytes: several of the reader's 1 MiB blocks before the odd lines.
    const many: Ev[] = Array.from({ length: 6000 }, (_, i) => (i % 2 ? assistant(`a${i} ${"y".repeat(650)}`) : user(`u${i} ${"é".repeat(320)}`)));
    const base = lines("P", many);
    const odd = [
      ...base,
      rawLine("P", 6000, { ...user("no id"), id: null as unknown as string }),
      JSON.stringify({ session_id: "P", seq: 6001, type: "user_message", data: { text: "keys out of order" }, id: "x", ts: "2026-06-30T00:01:00Z" }),
      `${rawLine("P", 6002, user("crlf"))}\r`,
      rawLine("P", 6003, ev("assistant_message", { z: 1, a: { y: 2, b: 3 }, text: "unsorted data" })),
    ];
    const { inPlace } = bothWays(text(odd));
    expect(inPlace.code).toBe(0);
    expect(inPlace.lines).toHaveLength(6005);
    // The loader's way (pixir fork of the same bytes as a Log) is the oracle for both.
    const ws = workspace({ P: text(odd) });
    expectJsonOk(run("pixir", ["fork", "P", "--child-id", "w", "--json"], { cwd: ws }));
    const oracle = readEvents(ws, "w");
    const view = (es: any[]) => es.map((e) => ({ seq: e.seq, ts: e.ts, type: e.type, data: e.data }));
    expect(view(inPlace.lines.slice(1))).toEqual(view(oracle.slice(1)));
    for (const field of ["prefix_digest", "replay_event_count", "forked_to_seq", "open_tool_calls"]) expect(inPlace.lines[0].data[field]).toEqual(oracle[0].data[field]);
    // The same bytes after a line stdin has already passed.
    expect(bothWays(text(odd), "--child-id c --json", "skipped\n").inPlace.lines).toHaveLength(6005);
    expect(bothWays(text(base), "--child-id c --json", "", true).inPlace.lines).toHaveLength(6001);
  });

  it("gives the errors a pipe gives: other sessions, seqs out of order, torn tails, empty input, bad lines", () => {
    const good = lines("P", P);
    const cases: Array<[string, string]> = [
      [text([...good, ...lines("Q", [user("q")]).map((l) => l.replace('"seq":0', '"seq":9'))]), "session_id_mismatch"],
      [text([...good].reverse()), "seq_out_of_order"],
      ["", "empty_stream"],
    ];
    for (const [input, reason] of cases) {
      const { inPlace } = bothWays(input);
      expect(inPlace.code).toBe(1);
      expect(inPlace.errJson.error.details.reason).toBe(reason);
    }
    const torn = bothWays(text(good).slice(0, -20)).inPlace;
    expect(torn.errJson.error).toMatchObject({ kind: "corrupt_log_line", details: { reason: "torn_tail", line: 6 } });
    const bad = bothWays(text([good[0]!, "{not json", good[1]!])).inPlace;
    expect(bad.errJson.error).toMatchObject({ kind: "corrupt_log_line", details: { line: 2 } });
  });
});
