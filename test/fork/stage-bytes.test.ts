// The stages a fork stream passes through (pixir-summarize, pixir-log write) check a line in our
// writers' layout from its bytes, where it lies in a block (summary.ts, fork-write.ts), and pass it on as those bytes; every
// other line is decoded in full. Both ways must make the same child Log and the same summary, and a
// forged or misaddressed line must be caught either way.
import { describe, expect, it } from "vitest";
import { assistant, call, ev, readLog, run, toolResult, user, workspace, writeRaw, type Ev } from "../support/cli.js";
import { expectJsonOk, leftovers } from "../support/fork.js";

const P: Ev[] = [
  user('one "quoted" é 🙂'),
  assistant("two\nlines"),
  // Keys out of order inside data: the digest must sort them whichever way the line is read.
  ev("tool_call", { name: "read", call_id: "c1", args: { path: "src/a.ts", mode: { z: 1, a: [2, { y: 0, b: null }] } } }),
  toolResult("c1"),
  ev("provider_usage", { tokens: 3 }),
  call("c2", "edit", "b.ts"),
  ev("reasoning", { text: "x", n: 0.5 }),
  user("three"),
];

/** The fork stream of P as pixir-fork prints it (the header's id and workspace fields are its own). */
function forkStream(ws: string): string[] {
  const r = run("pixir-fork", ["--parent", "P", "--child-id", "c"], { cwd: ws });
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  return r.stdout.split("\n").filter((l) => l !== "");
}

/** The same Event with its envelope keys in reverse order and data unchanged: the byte check refuses it. */
function reordered(line: string): string {
  const at = line.indexOf(',"data":');
  const head = JSON.parse(`${line.slice(0, at)}}`) as Record<string, unknown>;
  const data = line.slice(at + ',"data":'.length, -1);
  const keys = ["type", "ts", "seq", "session_id", "id"].map((k) => `${JSON.stringify(k)}:${JSON.stringify(head[k])}`);
  return `{"data":${data},${keys.join(",")}}`;
}

const asInput = (lines: string[]) => lines.map((l) => `${l}\n`).join("");

describe("fork stream stages read our lines from their bytes", () => {
  it("summarize | write make the same child from our layout and from lines that need the full decode", () => {
    const ours = workspace({ P });
    const other = workspace({ P });
    // One stream for both: the inherited ids derive from the header's id.
    const stream = forkStream(ours);
    const summarize = (ws: string, lines: string[]) => {
      const r = run("pixir-summarize", [], { cwd: ws, input: asInput(lines) });
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
      return r.stdout;
    };
    const a = summarize(ours, stream);
    const b = summarize(other, stream.map(reordered));
    // pixir-summarize passes every line through unchanged, in whichever form it came.
    expect(a.split("\n").slice(0, stream.length)).toEqual(stream);
    expect(b.split("\n").slice(0, stream.length)).toEqual(stream.map(reordered));
    expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ours, input: a }));
    expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: other, input: b }));
    const childA = readLog(ours, "c").split("\n");
    const childB = readLog(other, "c").split("\n");
    // Header and inherited lines byte for byte; the summaries differ only in their own id and ts.
    expect(childA.slice(0, stream.length)).toEqual(stream);
    expect(childB.slice(0, stream.length)).toEqual(stream);
    const summaryA = JSON.parse(childA[stream.length]!);
    const summaryB = JSON.parse(childB[stream.length]!);
    expect(summaryA.type).toBe("branch_summary");
    expect(summaryA.data).toEqual(summaryB.data);
    expect(summaryA.data.tool_calls).toEqual([
      { seq: 3, call_id: "c1", name: "read" },
      { seq: 5, call_id: "c2", name: "edit" }, // provider_usage is not inherited
    ]);
  });

  it("a forged inherited line in our layout is caught by the digest in both stages", () => {
    const ws = workspace({ P });
    const stream = forkStream(ws);
    const forged = stream.map((l, i) => (i === 3 ? l.replace('"src/a.ts"', '"src/b.ts"') : l));
    expect(forged).not.toEqual(stream);
    // pixir-summarize has passed lines on before it knows; the last one is held back, so the stream is short.
    const s = run("pixir-summarize", ["--json"], { cwd: ws, input: asInput(forged) });
    expect(s.code).toBe(1);
    expect(s.errJson.error.kind).toBe("fork_prefix_mismatch");
    expect(s.stdout.split("\n").filter((l) => l !== "")).toEqual(forged.slice(0, -1));
    const w = run("pixir-log", ["write", "--json"], { cwd: ws, input: asInput(forged) });
    expect(w.code).toBe(1);
    expect(w.json.error.kind).toBe("fork_prefix_mismatch");
    expect(readLog(ws, "P")).toBeTruthy();
    expect(leftovers(ws)).toEqual([]);
  });

  it("a line in our layout for another Session takes the full decode and is refused", () => {
    const ws = workspace({ P });
    const stream = forkStream(ws);
    const misaddressed = stream.map((l, i) => (i === 2 ? l.replace('"session_id":"c"', '"session_id":"d"') : l));
    for (const [tool, args] of [["pixir-summarize", ["--json"]], ["pixir-log", ["write", "--json"]]] as const) {
      const r = run(tool, [...args], { cwd: ws, input: asInput(misaddressed) });
      expect(r.code).toBe(1);
      const envelope = tool === "pixir-log" ? r.json : r.errJson;
      expect(envelope.error.kind).toBe("stream_integrity_failed");
      expect(envelope.error.details).toMatchObject({ reason: "session_id_mismatch", expected: "c", observed: "d", line: 3 });
    }
    expect(leftovers(ws)).toEqual([]);
  });

  it("pixir-log write reads a fork stream's blank lines, mixed forms and a last line without \\n, and numbers lines physically", () => {
    const ws = workspace({ P });
    const stream = forkStream(ws);
    // Blank lines around the header, a line in the other form between ours, and no final newline.
    const mixed = stream.map((l, i) => (i === 4 ? reordered(l) : l));
    const input = `${mixed[0]}\n\n\n${mixed.slice(1, 4).join("\n")}\n\n${mixed.slice(4).join("\n")}`;
    expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input }));
    expect(readLog(ws, "c").split("\n").filter((l) => l !== "")).toEqual(stream);

    // A seq gap is reported at its physical line: lines 1 and 4-6 and 8-... hold Events.
    const other = workspace({ P });
    const gap = forkStream(other).filter((_, i) => i !== 5);
    const gapped = `${gap[0]}\n\n\n${gap.slice(1, 4).join("\n")}\n\n${gap.slice(4).join("\n")}\n`;
    const r = run("pixir-log", ["write", "--json"], { cwd: other, input: gapped });
    expect(r.code).toBe(1);
    expect(r.json.error.details).toMatchObject({ reason: "seq_gap", expected: 5, observed: 6, line: 9 });
    expect(leftovers(other)).toEqual([]);
  });

  // pixir-log write reads a replay stream in step with the parent (fork/parent-log.ts ParentPrefixCursor):
  // lines equal to the parent's from "ts" on are checked by the parent's pass; at the first that is not,
  // the stream's own checks take over from the digest so far.
  it("write: an inherited line in another form than the parent's (same canonical data) takes over mid-stream", () => {
    const ws = workspace({ P });
    const stream = forkStream(ws);
    const inner = '{"z":1,"a":[2,{"y":0,"b":null}]}';
    expect(stream[3]).toContain(inner);
    const other = stream.map((l, i) => (i === 3 ? l.replace(inner, '{"a":[2,{"y":0,"b":null}],"z":1}') : l));
    expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: asInput(other) }));
    // Written as the stream has it: the digest is of canonical data, which is the same.
    expect(readLog(ws, "c").split("\n").filter((l) => l !== "")).toEqual(other);
  });

  it("write: a parent line the byte path does not handle ends the step; the general check of the parent decides", () => {
    const plain = workspace({ P });
    const lines = readLog(plain, "P").split("\n").filter((l) => l !== "");
    const ws = workspace({ P: `${lines.map((l, i) => (i === 4 ? reordered(l) : l)).join("\n")}\n` });
    const stream = forkStream(ws);
    expectJsonOk(run("pixir-log", ["write", "--json"], { cwd: ws, input: asInput(stream) }));
    expect(readLog(ws, "c").split("\n").filter((l) => l !== "")).toEqual(stream);
  });

  it("write: a parent edited after the fork no longer matches the stream: fork_prefix_mismatch, nothing written", () => {
    const ws = workspace({ P });
    const stream = forkStream(ws);
    const log = readLog(ws, "P");
    writeRaw(ws, "P", log.replace('"text":"three"', '"text":"THREE"'));
    const r = run("pixir-log", ["write", "--json"], { cwd: ws, input: asInput(stream) });
    expect(r.code).toBe(1);
    expect(r.json.error.kind).toBe("fork_prefix_mismatch");
    const header = JSON.parse(stream[0]!);
    expect(r.json.error.details).toMatchObject({ expected_digest: header.data.prefix_digest, expected_count: 7, actual_count: 7 });
    expect(r.json.error.details.actual_digest).not.toBe(header.data.prefix_digest);
    expect(leftovers(ws)).toEqual([]);
    expect(() => readLog(ws, "c")).toThrow();
  });

  it("write: a line that is both out of seq and corrupt is named corrupt, as without the parent's pass", () => {
    const ws = workspace({ P });
    const stream = forkStream(ws);
    const bad = stream[2]!.replace('"seq":2,', '"seq":7,').slice(0, -2);
    const r = run("pixir-log", ["write", "--json"], { cwd: ws, input: asInput([stream[0]!, stream[1]!, bad, ...stream.slice(3)]) });
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "corrupt_log_line", details: { reason: "invalid_json", line: 3 } });
    expect(leftovers(ws)).toEqual([]);
  });
});

