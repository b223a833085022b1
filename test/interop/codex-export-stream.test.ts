// pixir export codex streamed (docs/performance.md, "Round 9: export codex streamed"): a family's lines are
// merged from its Logs by line number and written as they are made; a new rollout's lines are made one Event
// at a time. The bytes are checked against the rollout files themselves (§5.2) and against the plain rule of
// family.ts (`rolloutLines`, every line in memory); stdout, --out and --dry-run agree; errors come before the
// first byte; Events appended after the export opened the Log are not in it.
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { run, tempDir } from "../support/cli.js";
import { bigWorkspace, interruptWhileReaderIsSlow } from "../support/slow-reader.js";
import { exportWorkspace, logIds, ndjson, NATIVE_TAIL, T1, T2, T3, T4, threadOfLog, type ExportWorkspace } from "../support/codex-export.js";
import { Families } from "../../lib/envelope/src/interop/codex/import.js";
import { rolloutLines } from "../../lib/envelope/src/interop/codex/family.js";
import { restAfterTimestamp, withTimestamp } from "../../lib/envelope/src/interop/codex/format.js";
import { finishCodexExport, openCodexExport } from "../../lib/envelope/src/interop/codex/export.js";
import { PixirError } from "../../lib/envelope/src/event/errors.js";

let W: ExportWorkspace;
beforeAll(() => {
  W = exportWorkspace();
}, 60_000);

const exportCodex = (ws: string, argv: string[]) => run("pixir", ["export", "codex", ...argv], { cwd: ws });
const jsonl = (text: string): any[] => text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));

/** The plain rule: thread t's rollout from the family's Logs held in memory (family.ts). */
async function plainLines(ws: string, t: string): Promise<Array<string | null | undefined>> {
  const families = new Families(ws);
  await families.load(t);
  await families.loadChain(t);
  return rolloutLines(families.get, t);
}

/** The --out file of an export, and its report. */
function exportOut(ws: string, id: string): { text: string; report: any; dir: string } {
  const dir = tempDir();
  const r = exportCodex(ws, [id, "--out", dir, "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return { text: readFileSync(r.json.path, "utf8"), report: r.json, dir };
}

describe("pixir export codex of an imported family", () => {
  it("every Log of a rolled-back family, and of a fork of a fork, gives the rollout file back byte for byte", async () => {
    const ids = logIds(W.ws).filter((id) => [T1, T3].includes(threadOfLog(W.ws, id) ?? ""));
    expect(ids.length).toBeGreaterThanOrEqual(6);
    for (const id of ids) {
      const t = threadOfLog(W.ws, id)!;
      const r = exportCodex(W.ws, [id]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout, id).toBe(W.rollouts.get(t));
      expect(r.stdout).toBe((await plainLines(W.ws, t)).map((l) => `${l}\n`).join(""));
    }
  });

  it("--out writes the same bytes; again it is unchanged; a different file is refused and kept", () => {
    const { text, report, dir } = exportOut(W.ws, T3);
    expect(text).toBe(W.rollouts.get(T3));
    expect(report).toMatchObject({ export: "original", status: "created", line_count: jsonl(text).length, missing_lines: [] });
    expect(exportCodex(W.ws, [T3, "--out", dir, "--json"]).json.status).toBe("unchanged");
    writeFileSync(report.path, text.replace("fork own", "fork 0wn"));
    const refused = exportCodex(W.ws, [T3, "--out", dir, "--json"]);
    expect(refused.code).toBe(1);
    // Its next actions are about the file, not the Log hints of the kind's default.
    expect(refused.json.error).toMatchObject({ kind: "already_exists", details: { path: report.path, next_actions: ["remove the file or export to another directory"] } });
    expect(readFileSync(report.path, "utf8")).toBe(text.replace("fork own", "fork 0wn"));
    // The same length, other bytes: the digest tells them apart.
    writeFileSync(report.path, text.replace("fork own", "fork 0wn").replace("fork 0wn", "fork own").replace("answer", "ANSWER"));
    expect(exportCodex(W.ws, [T3, "--out", dir, "--json"]).code).toBe(1);
  });

  it("something other than a file where the rollout would go (a directory) is refused as already_exists and left as it was", () => {
    const dir = tempDir();
    const name = exportCodex(W.ws, [T3, "--dry-run", "--json"]).json.file as string;
    mkdirSync(path.join(dir, name), { recursive: true });
    const r = exportCodex(W.ws, [T3, "--out", dir, "--json"]);
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists", details: { path: path.join(dir, name) } });
    expect(readdirSync(path.join(dir, name))).toEqual([]);
    expect(readdirSync(path.dirname(path.join(dir, name)))).toEqual([path.basename(name)]);
  });

  it("a line a --lenient import skipped is left out and named, on stdout, with --out and --dry-run", () => {
    const r = exportCodex(W.ws, [T4]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(W.lenientText);
    expect(r.stderr).toContain("codex_lines_missing");
    const dry = exportCodex(W.ws, [T4, "--dry-run", "--json"]);
    expect(dry.json).toMatchObject({ export: "original", missing_lines: [3], line_count: 4, status: "would_create" });
    expect(exportOut(W.ws, T4).text).toBe(W.lenientText);
  });
});

describe("pixir export codex of a native tail", () => {
  it("a pixir fork of an imported Log: line 1 names the source, the copies are the plain rule's lines at t0, then the tail converted", async () => {
    const r = exportCodex(W.ws, ["pf"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n").slice(0, -1);
    const one = JSON.parse(lines[0]!);
    expect(one.payload.forked_from_id).toBe(T1);
    const t0 = one.timestamp;
    // pf was cut at seq 4 of T1's root: its last line Event is seq 4, line 5 (the function call's output).
    const x = 5;
    const plain = (await plainLines(W.ws, T1)).slice(0, x).map((l) => withTimestamp(t0, restAfterTimestamp(l!)!.rest));
    expect(lines.slice(1, 1 + x)).toEqual(plain);
    const tail = lines.slice(1 + x).map((l) => JSON.parse(l));
    expect(JSON.parse(lines[x]!).payload.type).toBe("function_call_output");
    expect(tail.map((l) => `${l.type}/${l.payload.type}`)).toEqual([
      "response_item/message",
      "event_msg/user_message",
      "response_item/message",
      "response_item/function_call",
      "response_item/function_call_output",
      "compacted/undefined",
      "event_msg/context_compacted",
      "response_item/message",
      "event_msg/user_message",
      "response_item/message",
    ]);
    const kept = tail[5].payload.replacement_history as any[];
    // The checkpoint's rendering, then the items after its range (to_seq 2) and before it.
    expect(kept[0].role).toBe("user");
    expect(kept.some((i) => i.type === "function_call" && i.call_id === "n1")).toBe(true);
    expect(kept.some((i) => i.type === "function_call_output" && i.call_id === "n1")).toBe(true);
    expect(kept.some((i) => i.type === "message" && i.content?.[0]?.text === "native question")).toBe(true);
    const dry = exportCodex(W.ws, ["pf", "--dry-run", "--json"]).json;
    expect(dry).toMatchObject({ export: "fork", line_count: lines.length, copied_line_count: x, converted_event_count: 7, omitted: { reasoning: 1, tool_result: 1, provider_usage: 1 } });
    expect(exportOut(W.ws, "pf").text).toBe(r.stdout);
  });

  it("an imported Codex fork appended to: its whole rollout copied (the source's lines too), then the tail", async () => {
    const r = exportCodex(W.ws, [T2]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split("\n").slice(0, -1);
    const t0 = JSON.parse(lines[0]!).timestamp;
    const plain = (await plainLines(W.ws, T2)).map((l) => withTimestamp(t0, restAfterTimestamp(l!)!.rest));
    expect(lines.slice(1, 1 + plain.length)).toEqual(plain);
    // The tail's user message (two lines), answer, call and result; its reasoning has no Codex item.
    expect(lines.length).toBe(1 + plain.length + 5);
    expect(exportOut(W.ws, T2).text).toBe(r.stdout);
  });

  it("a native Log gives a new rollout, the same on stdout and with --out", () => {
    const r = exportCodex(W.ws, ["nat"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonl(r.stdout);
    expect(lines[0].payload).toMatchObject({ originator: "pixir", source: "cli" });
    expect(lines.length).toBe(1 + 10);
    expect(exportOut(W.ws, "nat").text).toBe(r.stdout);
  });

  it("a checkpoint keeps the items of its range, a call's output when the call was written before the checkpoint", () => {
    const ws = tempDir();
    const events = [
      { type: "user_message", data: { text: "hi" } },
      { type: "tool_result", data: { call_id: "c9", ok: true, output: "early" } },
      { type: "tool_call", data: { call_id: "c9", name: "read", args: { path: "b.txt" } } },
      { type: "tool_result", data: { call_id: "c8", ok: true, output: "never called" } },
      { type: "history_compaction", data: { summary: "before", range: { from_seq: 0, to_seq: 0 }, source_event_count: 1 } },
      { type: "assistant_message", data: { text: "after" } },
    ];
    expect(run("pixir", ["append", "cp"], { cwd: ws, input: ndjson(events) }).code).toBe(0);
    const r = exportCodex(ws, ["cp"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = jsonl(r.stdout);
    // The result came before its call, so it is not written in the tail; the checkpoint, made after the call, keeps it.
    expect(lines.map((l) => `${l.type}/${l.payload.type}`)).toEqual([
      "session_meta/undefined",
      "response_item/message",
      "event_msg/user_message",
      "response_item/function_call",
      "compacted/undefined",
      "event_msg/context_compacted",
      "response_item/message",
    ]);
    const kept = lines.find((l) => l.type === "compacted").payload.replacement_history;
    expect(kept.slice(1)).toEqual([
      { type: "function_call_output", call_id: "c9", output: "early" },
      { type: "function_call", name: "read", arguments: expect.any(String), call_id: "c9" },
    ]);
    expect(exportCodex(ws, ["cp", "--dry-run", "--json"]).json.omitted).toEqual({ tool_result: 2 });
  });

  it("Events appended after the export opened the Log are not in it", async () => {
    const ws = tempDir();
    expect(run("pixir", ["append", "grow"], { cwd: ws, input: ndjson(NATIVE_TAIL) }).code).toBe(0);
    const before = exportCodex(ws, ["grow"]).stdout;
    const exp = await openCodexExport(ws, "grow", "0.0.0-test");
    expect(run("pixir", ["append", "grow"], { cwd: ws, input: ndjson(NATIVE_TAIL) }).code).toBe(0);
    const parts: Buffer[] = [];
    const { chunks, counts } = exp.make();
    for await (const chunk of chunks) parts.push(chunk);
    // The version is the one thing the test's library call names differently from the built CLI.
    const strip = (t: string) => t.replace(/"cli_version":"[^"]*"/, "").replace(/"cwd":"[^"]*"/, "");
    expect(strip(Buffer.concat(parts).toString("utf8"))).toBe(strip(before));
    expect(counts.lineCount).toBe(jsonl(before).length);
  });
});

describe("pixir export codex interrupted", () => {
  it("stops on Ctrl-C while its reader is slow (exit 130)", async () => {
    const { code, stderr } = await interruptWhileReaderIsSlow(bigWorkspace(), ["export", "codex", "big", "--cwd", "/w"]);
    expect(code).toBe(130);
    expect(stderr).toMatch(/^error: interrupted/);
  });

  it("with --out, an interrupted export leaves no file, no temp file and no date directory", async () => {
    const exp = await openCodexExport(W.ws, "nat", "0.0.0-test", { cwd: "/w" });
    const dir = tempDir();
    const signal = AbortSignal.abort(new PixirError("interrupted", undefined, { signal: "SIGINT" }));
    await expect(finishCodexExport(exp, { out: dir, cwd: dir, signal })).rejects.toMatchObject({ kind: "interrupted" });
    expect(readdirSync(dir)).toEqual([]);
    // Without the signal the same export is written: it was the interruption that stopped it.
    expect((await finishCodexExport(exp, { out: dir, cwd: dir })).status).toBe("created");
  });
});

describe("pixir export codex fails before its first byte", () => {
  /** A copy of the Workspace without some Logs. */
  function without(ids: string[]): string {
    const ws = tempDir();
    cpSync(W.ws, ws, { recursive: true });
    for (const id of ids) rmSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`));
    return ws;
  }

  it("a removed share parent: fork_parent_missing, nothing on stdout", () => {
    const ws = without([logIds(W.ws).find((id) => id.startsWith(`${T1}.rollback-`))!]);
    const r = exportCodex(ws, [T1]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("fork_parent_missing");
    expect(r.stdout).toBe("");
  });

  it("a removed Log whose lines no other Log holds: codex_export_incomplete, nothing on stdout, no file under --out", () => {
    const ws = without([]);
    const children = logIds(ws).filter((id) => id.startsWith(`${T1}.rollback-`));
    // Materialized children stand alone: the middle one can go without the last one failing to load.
    for (const id of children) expect(run("pixir-log", ["materialize", id], { cwd: ws }).code).toBe(0);
    const middle = children.sort((a, b) => Number(a.split("-").at(-1)) - Number(b.split("-").at(-1)))[1]!;
    rmSync(path.join(ws, ".pixir", "sessions", `${middle}.ndjson`));
    const r = exportCodex(ws, [T1]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("codex_export_incomplete");
    expect(r.stdout).toBe("");
    const dir = tempDir();
    expect(exportCodex(ws, [T1, "--out", dir]).code).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a fork whose source family is gone: fork_parent_missing, nothing on stdout", () => {
    const ws = without(logIds(W.ws).filter((id) => id.startsWith(T1)));
    for (const id of [T2, T3]) {
      const r = exportCodex(ws, [id]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("fork_parent_missing");
      expect(r.stdout).toBe("");
    }
  });
});
