// pixir-summarize against the built binary: summarize.md, acceptance.md §F (46–49) and §D 37,
// and envelope-and-log.md §11.2 (the last input line is held back).
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync, chmodSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { assistant, call, ev, listTree, logFile, rawLine, readEvents, run, sh, start, toolResult, user, workspace, ULID, type Ev, type RunResult } from "../support/cli.js";
import { runInThread } from "../support/thread.js";
import { REPLAY_TYPES as REPLAY_VOCABULARY } from "../../lib/envelope/src/event/vocabulary.js";

const REPLAY_TYPES = new Set<string>(REPLAY_VOCABULARY);

const DETERMINISTIC_LIMITATIONS = [
  "Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.",
  "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];
const MODEL_LIMITATIONS = [
  "Model-assisted branch summary was produced by an external command from the forked prefix; it may omit or misstate facts.",
  "The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.",
];

/** summarize.md §6, the data of the golden example (with parent `parent`). */
const golden = (parent = "p1") => ({
  strategy: "deterministic_operational_summary_v1",
  parent_session_id: parent,
  forked_to_seq: 2,
  range: { from_seq: 0, to_seq: 2 },
  source_event_count: 3,
  event_counts: { user_message: 1, assistant_message: 1, tool_call: 1 },
  tool_calls: [{ seq: 3, call_id: "call-1", name: "read" }],
  files_touched: ["a.txt"],
  open_tasks: ["user: one", "assistant: two"],
  limitations: DETERMINISTIC_LIMITATIONS,
  summary: "Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).\nRecent forked conversational facts:\n- user: one\n- assistant: two",
});

const GOLDEN_TEXT = `Branch summary from forked parent prefix
Parent: p1
Range: seq 0..2 (3 events)
Strategy: deterministic_operational_summary_v1

Summary:
Forked 3 replayed events (assistant_message=1, tool_call=1, user_message=1).
Recent forked conversational facts:
- user: one
- assistant: two

Files touched:
- a.txt

Open tasks:
- user: one
- assistant: two

Limitations:
- Deterministic branch summary condenses the forked prefix; it is not a semantic substitute for the full replayed Log.
- The full replayed prefix in the child Log remains authoritative for audit, resume repair, and deeper reconstruction.
`;

const GOLDEN_PARENT: Ev[] = [user("one"), assistant("two"), call("call-1", "read", "a.txt")];

/** fork.md §4.3 canonicalJson, written independently of the library. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

const digestOf = (events: any[]): string =>
  `sha256:${createHash("sha256")
    .update(events.map((e) => `${canonical([e.type, e.ts, e.data])}\n`).join(""), "utf8")
    .digest("hex")}`;

interface ForkOptions {
  ws: string;
  strategy?: "replay_v1" | "share_v1";
  toSeq?: number;
  /** share_v1: print the inherited Events at 1..N (as `pixir-log cat` does) instead of the header alone. */
  resolved?: boolean;
}

/** A fork stream written by hand from the parent Events as R(parent; …) writes them (fork.md §4). */
function forkLines(parentId: string, parentEvents: Ev[], childId: string, options: ForkOptions): string[] {
  const strategy = options.strategy ?? "replay_v1";
  const parent = parentEvents.map((e, n) => JSON.parse(rawLine(parentId, n, e)));
  const replaySeqs = parent.filter((e) => REPLAY_TYPES.has(e.type) && e.seq !== null).map((e) => e.seq as number);
  const toSeq = options.toSeq ?? (replaySeqs.length > 0 ? Math.max(...replaySeqs) : 0);
  const inherited = parent.filter((e) => REPLAY_TYPES.has(e.type) && e.seq !== null && e.seq <= toSeq);
  const header = {
    id: "01JZ0000000000000000000000",
    session_id: childId,
    seq: 0,
    ts: "2026-07-01T00:00:00.000Z",
    type: "session_fork",
    data: {
      parent_session_id: parentId,
      fork_root_session_id: parentId,
      forked_to_seq: toSeq,
      parent_workspace: options.ws,
      child_workspace: options.ws,
      replay_event_count: inherited.length,
      from_seq: inherited[0]?.seq ?? null,
      strategy,
      limitations: ["x"],
      prefix_digest: digestOf(inherited),
      open_tool_calls: [],
    },
  };
  const lines = [JSON.stringify(header)];
  if (strategy === "replay_v1" || options.resolved) {
    inherited.forEach((p, i) => lines.push(JSON.stringify({ id: `${childId}-${i + 1}`, session_id: childId, seq: i + 1, ts: p.ts, type: p.type, data: p.data })));
  }
  return lines;
}

const text = (lines: string[]): string => lines.map((l) => `${l}\n`).join("");

/** A pixir-summarize run on the tool thread; the pipelines (sh) and the signal tests (start) are processes. */
function summarize(ws: string, input: string, args: string[] = []) {
  return runInThread("pixir-summarize", args, { cwd: ws, input });
}

/** The branch_summary line of a successful ndjson run, with its envelope checked. */
function summaryOf(r: RunResult, childId: string, seq: number) {
  expect(r.code, r.stderr).toBe(0);
  const last = r.lines.at(-1);
  expect(Object.keys(last)).toEqual(["id", "session_id", "seq", "ts", "type", "data"]);
  expect(last.id).toMatch(ULID);
  expect(last.session_id).toBe(childId);
  expect(last.seq).toBe(seq);
  expect(last.type).toBe("branch_summary");
  expect(new Date(last.ts).toISOString()).toBe(last.ts);
  return last.data;
}

describe("golden example (acceptance 46, summarize.md §6)", () => {
  it("passes a replay_v1 stream through byte for byte and appends the golden summary at N+1", () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    const lines = forkLines("p1", GOLDEN_PARENT, "c1", { ws });
    const r = summarize(ws, text(lines));
    const data = summaryOf(r, "c1", 4);
    expect(data).toEqual(golden());
    expect(Object.keys(data)).toEqual(Object.keys(golden()));
    expect(r.stdout.startsWith(text(lines))).toBe(true);
    expect(r.lines).toHaveLength(5);
    expect(r.stderr).toBe("");
    // Nothing is written to disk and no lease is taken.
    expect(listTree(ws)).toEqual([".pixir", ".pixir/sessions", ".pixir/sessions/p1.ndjson"]);
  });

  it("--format text prints exactly the provider rendering", () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    const r = summarize(ws, text(forkLines("p1", GOLDEN_PARENT, "c1", { ws })), ["--format", "text"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(GOLDEN_TEXT);
    expect(summarize(ws, text(forkLines("p1", GOLDEN_PARENT, "c1", { ws })), ["--format=text"]).stdout).toBe(GOLDEN_TEXT);
  });

  it("the real pipeline creates the child with the golden summary (replay_v1)", () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    const r = sh("pixir-fork --parent p1 --child-id c1 | pixir-summarize | pixir-log write --json", { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ ok: true, recorded: true, summarize: true, branch_summary_strategy: "deterministic_operational_summary_v1" });
    const child = readEvents(ws, "c1");
    expect(child.map((e) => [e.seq, e.type])).toEqual([
      [0, "session_fork"],
      [1, "user_message"],
      [2, "assistant_message"],
      [3, "tool_call"],
      [4, "branch_summary"],
    ]);
    expect(child[4].data).toEqual(golden());
  });

  it("share_v1 plus summary stores two lines and the same data (acceptance 40)", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const r = sh("pixir-fork --parent p --strategy share_v1 --child-id s | pixir-summarize | pixir-log write", { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    const stored = readEvents(ws, "s");
    expect(stored.map((e) => [e.seq, e.type])).toEqual([
      [0, "session_fork"],
      [4, "branch_summary"],
    ]);
    expect(stored[1].data).toEqual(golden("p"));
  });
});

describe("share_v1 streams", () => {
  it("a compact stream (header alone) resolves its prefix from the parent and holds the header back", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const lines = forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1" });
    expect(lines).toHaveLength(1);
    const r = summarize(ws, text(lines));
    expect(summaryOf(r, "s", 4)).toEqual(golden("p"));
    expect(r.lines).toHaveLength(2);
    expect(r.stdout.startsWith(text(lines))).toBe(true);
  });

  it("a compact stream with own Events passes them through; the summary follows the last", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const own = JSON.stringify({ id: "own-4", session_id: "s", seq: 4, ts: "2026-07-01T00:00:04Z", type: "user_message", data: { text: "mine" } });
    const lines = [...forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1" }), own];
    const r = summarize(ws, text(lines));
    // Only the inherited prefix is summarised, not the child's own Events.
    expect(summaryOf(r, "s", 5)).toEqual(golden("p"));
    expect(r.stdout.startsWith(text(lines))).toBe(true);
  });

  it("the resolved form (1..N in the stream) is checked against the header without reading the parent", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const lines = forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1", resolved: true });
    expect(lines).toHaveLength(4);
    const elsewhere = workspace();
    const r = summarize(elsewhere, text(lines));
    expect(summaryOf(r, "s", 4)).toEqual(golden("p"));
  });

  it("a missing parent gives fork_parent_missing and prints nothing", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const lines = forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1" });
    const r = summarize(workspace(), text(lines), ["--json"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.errJson.error.kind).toBe("fork_parent_missing");
    expect(r.errJson.error.details).toMatchObject({ session_id: "s", parent_session_id: "p" });
  });

  it("a rewritten parent gives fork_prefix_mismatch with both digests", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const lines = forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1" });
    const tampered = workspace({ p: [user("ONE"), assistant("two"), call("call-1", "read", "a.txt")] });
    const r = summarize(tampered, text(lines), ["--json"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.errJson.error.kind).toBe("fork_prefix_mismatch");
    const d = r.errJson.error.details;
    expect(d.expected_digest).toBe(JSON.parse(lines[0]!).data.prefix_digest);
    expect(d.actual_digest).not.toBe(d.expected_digest);
    expect(d).toMatchObject({ expected_count: 3, actual_count: 3, session_id: "s", parent_session_id: "p" });
  });

  it("a parent that appended after the fork still resolves", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const lines = forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1" });
    const grown = workspace({ p: [...GOLDEN_PARENT, user("later")] });
    expect(summaryOf(summarize(grown, text(lines)), "s", 4)).toEqual(golden("p"));
  });
});

describe("truncation (acceptance 47)", () => {
  it("a 500-byte user text is cut at 480 bytes with the marker", () => {
    const parent = [user("a".repeat(500))];
    const ws = workspace({ p: parent });
    const data = summaryOf(summarize(ws, text(forkLines("p", parent, "c", { ws }))), "c", 2);
    const excerpt = `user: ${"a".repeat(480)}\n…[truncated, showing up to 480 of 500 bytes]`;
    expect(data.open_tasks).toEqual([excerpt]);
    expect(data.summary).toBe(`Forked 1 replayed events (user_message=1).\nRecent forked conversational facts:\n- ${excerpt}`);
  });

  it("a cut inside a letter plus combining mark leaves the whole grapheme out", () => {
    // 479 + "e\u0301" (1 + 2 bytes) + 20 = 502 bytes; byte 480 would split the grapheme.
    const parent = [user(`${"a".repeat(479)}e\u0301${"b".repeat(20)}`)];
    const ws = workspace({ p: parent });
    const data = summaryOf(summarize(ws, text(forkLines("p", parent, "c", { ws }))), "c", 2);
    expect(data.open_tasks).toEqual([`user: ${"a".repeat(479)}\n…[truncated, showing up to 480 of 502 bytes]`]);
  });

  it("whitespace runs collapse to one space before the cut, without trimming; other values are inspected", () => {
    const parent = [assistant(" two\n\n\tlines \r\n"), ev("user_message", { text: { nested: 1 } })];
    const ws = workspace({ p: parent });
    const data = summaryOf(summarize(ws, text(forkLines("p", parent, "c", { ws }))), "c", 3);
    expect(data.open_tasks).toEqual(["assistant:  two lines ", 'user: %{"nested" => 1}']);
  });
});

describe("skips (acceptance 48)", () => {
  it("a permission_posture record is counted but never excerpted", () => {
    const posture = ev("subagent_event", { event: "permission_posture", scope: "session", lineage: "root", source: "root_session_start" });
    const parent = [posture, user("hello")];
    const ws = workspace({ p: parent });
    const r = summarize(ws, text(forkLines("p", parent, "c", { ws })));
    const data = summaryOf(r, "c", 3);
    expect(data.event_counts).toEqual({ subagent_event: 1, user_message: 1 });
    expect(data.open_tasks).toEqual(["user: hello"]);
    expect(data.summary).not.toContain("permission_posture");
    expect(JSON.stringify(data.open_tasks)).not.toContain("permission_posture");
    expect(data.summary).toBe("Forked 2 replayed events (subagent_event=1, user_message=1).\nRecent forked conversational facts:\n- user: hello");
  });

  it("a fork with 0 Events gives the empty summary at seq 1, and renders empty values as empty strings", () => {
    const parent = [ev("provider_usage", { tokens: 3 })];
    const ws = workspace({ p: parent });
    const lines = forkLines("p", parent, "c", { ws });
    expect(JSON.parse(lines[0]!).data).toMatchObject({ replay_event_count: 0, from_seq: null, forked_to_seq: 0 });
    const data = summaryOf(summarize(ws, text(lines)), "c", 1);
    expect(data.summary).toBe("Forked 0 replayed events ().\nRecent forked conversational facts:\n- none recorded");
    expect(data).toMatchObject({ source_event_count: 0, event_counts: {}, tool_calls: [], files_touched: [], open_tasks: [], range: { from_seq: null, to_seq: 0 } });
    const t = summarize(ws, text(lines), ["--format", "text"]);
    expect(t.stdout).toContain("\nRange: seq ..0 (0 events)\n");
    expect(t.stdout).toContain("Files touched:\n- none\n\nOpen tasks:\n- none\n");
  });

  it("a share_v1 header with 0 Events gives the summary at seq 1", () => {
    const parent = [ev("provider_usage", {})];
    const ws = workspace({ p: parent });
    const data = summaryOf(summarize(ws, text(forkLines("p", parent, "c", { ws, strategy: "share_v1" }))), "c", 1);
    expect(data.source_event_count).toBe(0);
  });

  it("tool calls keep their child seqs; files are deduplicated, byte-sorted and only path-like", () => {
    const parent: Ev[] = [
      ev("provider_usage", {}),
      ev("tool_call", { call_id: "k1", name: "edit", args: { path: "src/b.ts", mode: "fast", files: ["z.md", "plain", 7, "src/b.ts"], n: 1.5 } }),
      toolResult("k1"),
      ev("tool_call", { name: "grep", args: ["not", "an/object"] }),
      ev("tool_call", { call_id: "k3", name: "read", args: { path: "\uFF5E.txt", alt: "\u{1F600}.txt", other: "A.txt" } }),
    ];
    const ws = workspace({ p: parent });
    const data = summaryOf(summarize(ws, text(forkLines("p", parent, "c", { ws }))), "c", 5);
    expect(data.tool_calls).toEqual([
      { seq: 1, call_id: "k1", name: "edit" },
      { seq: 3, call_id: null, name: "grep" },
      { seq: 4, call_id: "k3", name: "read" },
    ]);
    // UTF-8 byte order puts U+FF5E (EF BD 9E) before U+1F600 (F0 9F 98 80); UTF-16 order would not.
    expect(data.files_touched).toEqual(["A.txt", "src/b.ts", "z.md", "\uFF5E.txt", "\u{1F600}.txt"]);
  });

  it("open_tasks keeps the last 8 and the summary the last 6 non-empty excerpts", () => {
    const parent: Ev[] = [];
    for (let i = 1; i <= 10; i++) parent.push(user(`u${i}`), ev("assistant_message", { metadata: {} }));
    parent.push(ev("subagent_event", { subagent_id: "sa", status: "done" }));
    const ws = workspace({ p: parent });
    const data = summaryOf(summarize(ws, text(forkLines("p", parent, "c", { ws }))), "c", 22);
    expect(data.open_tasks).toEqual(["user: u4", "user: u5", "user: u6", "user: u7", "user: u8", "user: u9", "user: u10", "subagent sa: done"]);
    expect(data.summary.split("\n").slice(2)).toEqual(["- user: u6", "- user: u7", "- user: u8", "- user: u9", "- user: u10", "- subagent sa: done"]);
  });
});

describe("model-assisted summaries (acceptance 49)", () => {
  const setup = () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    return { ws, input: text(forkLines("p1", GOLDEN_PARENT, "c1", { ws })) };
  };

  it("--model-cmd 'echo summary text' records the model strategy and a checkpoint without the command", () => {
    const { ws, input } = setup();
    const cmd = "echo summary text";
    const r = summarize(ws, input, ["--model-cmd", cmd]);
    const data = summaryOf(r, "c1", 4);
    expect(data.strategy).toBe("model_assisted_operational_summary_v1");
    expect(data.summary).toBe("summary text");
    expect(data.limitations).toEqual(MODEL_LIMITATIONS);
    expect(data.model_checkpoint).toEqual({
      command_sha256: `sha256:${createHash("sha256").update(cmd).digest("hex")}`,
      elapsed_ms: expect.any(Number),
      output_bytes: 13,
      truncated: false,
    });
    const { strategy, summary, limitations, model_checkpoint, ...rest } = data;
    const { strategy: _s, summary: _m, limitations: _l, ...deterministic } = golden();
    expect(rest).toEqual(deterministic);
    expect(JSON.stringify(data)).not.toContain(cmd);
    expect(r.stderr).toBe("");
  });

  it("the command gets the prompt on stdin, the Workspace as cwd and the three variables", () => {
    const { ws, input } = setup();
    const model = path.join(ws, "model.sh");
    writeFileSync(
      model,
      `#!/bin/sh\ncat > prompt.txt\nprintf '%s|%s|%s|%s' "$PIXIR_SUMMARY_KIND" "$PIXIR_SESSION_ID" "$PIXIR_PARENT_SESSION_ID" "$PWD" > env.txt\necho "model says hi" >&2\nprintf '  line one\\n\\nline two  \\n'\n`,
    );
    chmodSync(model, 0o755);
    const r = summarize(ws, input, ["--model-cmd", "./model.sh"]);
    const data = summaryOf(r, "c1", 4);
    expect(data.summary).toBe("line one\n\nline two");
    expect(data.model_checkpoint.output_bytes).toBe(23);
    expect(r.stderr).toBe("model says hi\n");
    expect(readFileSync(path.join(ws, "env.txt"), "utf8")).toBe(`branch_summary|c1|p1|${ws}`);
    const prompt = readFileSync(path.join(ws, "prompt.txt"), "utf8");
    expect(prompt).toBe(
      "You are summarizing the inherited prefix of a forked agent session so that work can continue in the child session.\n" +
        "Write a short factual summary: the goal, what was done, files involved, and open tasks. Do not invent facts.\n\n" +
        GOLDEN_TEXT +
        "\nConversation excerpts (oldest first):\n- user: one\n- assistant: two\n",
    );
  });

  it("a long answer is truncated at 16000 bytes and flagged", () => {
    const { ws, input } = setup();
    const data = summaryOf(summarize(ws, input, ["--model-cmd", "head -c 20000 /dev/zero | tr '\\0' x"]), "c1", 4);
    expect(data.summary).toBe(`${"x".repeat(16000)}\n…[truncated, showing up to 16000 of 20000 bytes]`);
    expect(data.model_checkpoint).toMatchObject({ output_bytes: 20000, truncated: true });
  });

  const fallbacks: Array<[string, string, string[]]> = [
    ["nonzero_exit", "exit 3", []],
    ["timeout", "sleep 5", ["--model-timeout-ms", "200"]],
    ["empty_output", "printf ' \\n\\t'", []],
    ["invalid_utf8", "printf 'ok \\377\\n'", []],
    ["output_too_large", "head -c 1100000 /dev/zero | tr '\\0' x", []],
  ];
  for (const [reason, cmd, extra] of fallbacks) {
    it(`falls back to the deterministic data on ${reason} and still exits 0`, () => {
      const { ws, input } = setup();
      const started = Date.now();
      const r = summarize(ws, input, ["--model-cmd", cmd, ...extra]);
      const data = summaryOf(r, "c1", 4);
      expect(data).toEqual({ ...golden(), model_assisted_fallback: true, model_assisted_fallback_reason: reason });
      expect(r.stderr).toBe(`warning: model_assisted_fallback: ${reason}\n`);
      if (reason === "timeout") expect(Date.now() - started).toBeLessThan(4000);
    });
  }

  it("a command that ignores SIGTERM is killed 2 s after the timeout", () => {
    const { ws, input } = setup();
    const started = Date.now();
    const r = summarize(ws, input, ["--model-cmd", "trap '' TERM; sleep 8", "--model-timeout-ms", "100", "--json"]);
    expect(summaryOf(r, "c1", 4).model_assisted_fallback_reason).toBe("timeout");
    expect(Date.now() - started).toBeLessThan(6000);
    expect(JSON.parse(r.stderr)).toEqual({ warning: { kind: "model_assisted_fallback", details: { reason: "timeout" } } });
  });

  it("SIGINT while the model runs exits 130 at once, even if a process outside the command's group holds its pipes", async () => {
    const { ws, input } = setup();
    // The detached sleep inherits the command's stdout and stderr and outlives it; `started` says the command is running.
    const detached = `${JSON.stringify(process.execPath)} -e 'require("child_process").spawn("sleep", ["20"], { detached: true, stdio: ["ignore", "inherit", "inherit"] }).unref()'`;
    const summarizer = start("pixir-summarize", ["--model-cmd", `${detached}; touch started; sleep 30`], { cwd: ws });
    summarizer.child.stdin.end(input);
    const deadline = Date.now() + 10_000;
    while (!existsSync(path.join(ws, "started")) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const interrupted = Date.now();
    summarizer.child.kill("SIGINT");
    const r = await summarizer.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toBe("error: interrupted: stopped by SIGINT before it finished\nhint: rerun; nothing was written\n");
    expect(r.stdout).not.toContain("branch_summary");
    expect(Date.now() - interrupted).toBeLessThan(8000);
  });

  it("a stderr that has gone away costs the model's stderr, warnings and hints, not the result", async () => {
    const { ws, input } = setup();
    // The model's stderr is forwarded to a pipe nobody reads any more (EPIPE).
    const summarizer = start("pixir-summarize", ["--model-cmd", "head -c 200000 /dev/zero >&2; echo summary text"], { cwd: ws });
    summarizer.child.stderr.destroy();
    summarizer.child.stdin.end(input);
    const r = await summarizer.done;
    expect(summaryOf(r, "c1", 4).summary).toBe("summary text");
    expect(r.lines).toHaveLength(5);
    // A report command: the fallback warning and the resume hint go nowhere; the fork is recorded and reported.
    const fork = start("pixir", ["fork", "p1", "--child-id", "f1", "--summarize", "--model-cmd", "echo oops >&2; exit 3"], { cwd: ws });
    fork.child.stderr.destroy();
    fork.child.stdin.end();
    const f = await fork.done;
    expect([f.code, f.stdout]).toEqual([0, "Forked p1 → f1 (3 events through seq 2).\n"]);
    expect(readEvents(ws, "f1").at(-1).data.model_assisted_fallback_reason).toBe("nonzero_exit");
  });

  it("--format text renders the model summary", () => {
    const { ws, input } = setup();
    const r = summarize(ws, input, ["--format", "text", "--model-cmd", "echo summary text"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Strategy: model_assisted_operational_summary_v1\n\nSummary:\nsummary text\n\nFiles touched:\n- a.txt\n");
    expect(r.stdout).toContain(`Limitations:\n- ${MODEL_LIMITATIONS[0]}\n- ${MODEL_LIMITATIONS[1]}\n`);
  });
});

describe("pipeline integrity (acceptance 37, envelope-and-log.md §11.2)", () => {
  it("a stream short of its header's count fails, having printed only what it could vouch for", () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    const lines = forkLines("p1", GOLDEN_PARENT, "c1", { ws }).slice(0, 3);
    expect(JSON.parse(lines[0]!).data.replay_event_count).toBe(3);
    const r = summarize(ws, text(lines), ["--json"]);
    expect(r.code).toBe(1);
    expect(r.errJson.error.kind).toBe("stream_integrity_failed");
    expect(r.errJson.error.details).toMatchObject({ reason: "count_mismatch", expected: 3, observed: 2, line: 3 });
    expect(r.stdout).toBe(text(lines.slice(0, 2)));
    expect(r.stdout).not.toContain("branch_summary");

    const write = run("pixir-log", ["write", "--json"], { cwd: ws, input: r.stdout });
    expect(write.code).toBe(1);
    expect(write.json.error.kind).toBe("stream_integrity_failed");
    const piped = sh("pixir-summarize | pixir-log write", { cwd: ws, input: text(lines) });
    expect(piped.code).toBe(1);
    expect(existsSync(logFile(ws, "c1"))).toBe(false);
  });

  it("a tampered inherited Event gives fork_prefix_mismatch", () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    const lines = forkLines("p1", GOLDEN_PARENT, "c1", { ws });
    lines[2] = lines[2]!.replace('"two"', '"TWO"');
    const r = summarize(ws, text(lines), ["--json"]);
    expect(r.code).toBe(1);
    expect(r.errJson.error.kind).toBe("fork_prefix_mismatch");
    expect(r.errJson.error.details).toMatchObject({ expected_count: 3, actual_count: 3, session_id: "c1", parent_session_id: "p1" });
    expect(r.lines).toHaveLength(3);
  });

  const bad: Array<[string, (lines: string[]) => string, string, Record<string, unknown>]> = [
    ["empty input", () => "", "stream_integrity_failed", { reason: "missing_fork_header" }],
    ["a plain History", () => text(GOLDEN_PARENT.map((e, n) => rawLine("p1", n, e))), "stream_integrity_failed", { reason: "missing_fork_header", line: 1 }],
    [
      "a session_fork that is not at seq 0",
      (l) => text([l[0]!.replace('"seq":0', '"seq":1'), ...l.slice(1)]),
      "stream_integrity_failed",
      { reason: "missing_fork_header", line: 1 },
    ],
    ["a seq gap", (l) => text([l[0]!, l[1]!, l[3]!]), "stream_integrity_failed", { reason: "seq_gap", expected: 2, observed: 3, line: 3 }],
    ["two session ids", (l) => text([l[0]!, l[1]!.replace('"session_id":"c1"', '"session_id":"c9"'), ...l.slice(2)]), "stream_integrity_failed", { reason: "session_id_mismatch", line: 2 }],
    ["a line that is not JSON", (l) => text([l[0]!, "{nope", ...l.slice(1)]), "corrupt_log_line", { reason: "invalid_json", line: 2, path: "-" }],
    ["an ephemeral Event", (l) => text([l[0]!, '{"id":"x","session_id":"c1","seq":1,"ts":"t","type":"text_delta","data":{}}']), "ephemeral_not_loggable", { line: 2 }],
    [
      "a non-replay type inside the prefix",
      (l) => text([l[0]!, l[1]!.replace('"user_message"', '"provider_usage"'), ...l.slice(2)]),
      "stream_integrity_failed",
      { reason: "non_replay_type_in_prefix", line: 2 },
    ],
    ["a header without a count", (l) => text([l[0]!.replace('"replay_event_count":3', '"replay_event_count":"3"'), ...l.slice(1)]), "stream_integrity_failed", { reason: "missing_fork_header" }],
  ];
  for (const [name, make, kind, details] of bad) {
    it(`refuses ${name} (${kind}) without a stack trace and without a summary`, () => {
      const ws = workspace({ p1: GOLDEN_PARENT });
      const input = make(forkLines("p1", GOLDEN_PARENT, "c1", { ws }));
      const r = summarize(ws, input, ["--json"]);
      expect(r.code).toBe(kind === "invalid_args" ? 2 : 1);
      expect(r.errJson.error.kind).toBe(kind);
      expect(r.errJson.error.details).toMatchObject(details);
      expect(r.stdout).not.toContain("branch_summary");
      const t = summarize(ws, input, ["--format", "text"]);
      expect(t.stdout).toBe("");
      expect(t.stderr).toMatch(new RegExp(`^error: ${kind}: [^\\n]+\\n(?:hint: [^\\n]+\\n)*$`));
    });
  }

  it("an invalid parent id in the header is refused without being echoed", () => {
    const ws = workspace({ p1: GOLDEN_PARENT });
    const lines = forkLines("p1", GOLDEN_PARENT, "c1", { ws });
    lines[0] = lines[0]!.replace('"parent_session_id":"p1"', '"parent_session_id":"../PWN"');
    const r = summarize(ws, text(lines), ["--json"]);
    expect(r.code).toBe(2);
    expect(r.errJson.error).toMatchObject({ kind: "invalid_args", details: { field: "parent_session_id", reason: "invalid_start" } });
    expect(r.stdout + r.stderr).not.toContain("PWN");
  });

  it("a reader that goes away (| head) ends the run quietly with 0", () => {
    const parent: Ev[] = [];
    for (let i = 0; i < 4000; i++) parent.push(user(`message ${i} ${"x".repeat(100)}`));
    const ws = workspace({ p: parent });
    writeFileSync(path.join(ws, "fork.ndjson"), text(forkLines("p", parent, "c", { ws })));
    const r = sh("pixir-summarize < fork.ndjson | head -n 1", { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout).type).toBe("session_fork");
  });
});

describe("flags (cli.md §1, §10)", () => {
  const cases: Array<[string[], string]> = [
    [["--format", "xml"], "--format must be ndjson or text"],
    [["--model-cmd", "echo", "--model-timeout-ms", "5x"], "--model-timeout-ms must be a non-negative integer"],
    [["--model-cmd", "echo", "--model-timeout-ms", "-1"], ""],
    [["--model-timeout-ms", "5"], "--model-timeout-ms requires --model-cmd"],
    [["--model-cmd", "--json"], "--model-cmd requires a command value"],
    [["--format"], "--format requires a format value"],
    [["stray"], ""],
    [["--bogus"], "unknown flag --bogus"],
  ];
  for (const [argv, message] of cases) {
    it(`${argv.join(" ")} is a usage error`, () => {
      const r = summarize(workspace(), "", [...argv, "--json"]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.errJson.error.kind).toBe("usage");
      if (message) expect(r.errJson.error.message).toBe(message);
      expect(r.stderr).not.toContain("stray");
    });
  }

  it("--help describes the tool with pipelines; --version prints semver", () => {
    const h = summarize(workspace(), "", ["--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toContain("branch_summary");
    expect(h.stdout).toContain("pixir-fork --to-seq 40 | pixir-summarize | pixir-log write");
    const v = summarize(workspace(), "", ["--version"]);
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it("--workspace picks the Workspace whose parent resolves a compact stream", () => {
    const ws = workspace({ p: GOLDEN_PARENT });
    const input = text(forkLines("p", GOLDEN_PARENT, "s", { ws, strategy: "share_v1" }));
    const r = run("pixir-summarize", ["--workspace", ws], { cwd: workspace(), input });
    expect(summaryOf(r, "s", 4)).toEqual(golden("p"));
  });
});
