// Unit tests of summary.ts: the pure parts of summarize.md §2–§5 and the stage run in-process.
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { serializeEvent, summarizeStage, PixirError, type PixirEvent } from "@pixir/envelope";
import { BranchSummaryBuilder, branchSummaryLine, type BranchSummaryData, eventExcerpt, isSummaryCandidate, runModelCommand, SortedStringSet, summaryPrompt, toolCallPaths } from "../../src/summary/summary.js";
import { renderBranchSummaryText, renderCheckpointText } from "../../src/summary/render.js";
import { PrefixDigest } from "../../src/store/loader.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempWs = (): string => {
  const d = realpathSync(mkdtempSync(path.join(os.tmpdir(), "pixir-summary-unit-")));
  dirs.push(d);
  return d;
};

/** summarize.md §2: the deterministic data of a fork header and its source Events, by the plain builder. */
async function branchSummaryData(header: Pick<PixirEvent, "data">, sourceEvents: PixirEvent[] | AsyncIterable<PixirEvent>): Promise<BranchSummaryData> {
  const builder = new BranchSummaryBuilder();
  if (Array.isArray(sourceEvents)) for (const ev of sourceEvents) builder.add(ev);
  else for await (const ev of sourceEvents) builder.add(ev);
  return builder.finish(header);
}

const e = (seq: number, type: PixirEvent["type"], data: Record<string, unknown> = {}): PixirEvent => ({
  id: `e${seq}`,
  session_id: "c",
  seq,
  ts: `2026-06-30T00:00:0${seq % 10}Z`,
  type,
  data,
});

describe("excerpts and candidates", () => {
  it("an excerpt whose text is empty is empty (summarize.md §3.2)", () => {
    expect(eventExcerpt(e(1, "user_message", { text: "" }))).toBe("");
    expect(eventExcerpt(e(1, "assistant_message", { text: " \n\t" }))).toBe("assistant:  ");
    expect(eventExcerpt(e(1, "subagent_event", {}))).toBe("");
    expect(eventExcerpt(e(1, "subagent_event", { subagent_id: "", summary: "" }))).toBe("");
  });

  it("messages need a text key; other values are written with inspect", () => {
    expect(eventExcerpt(e(1, "user_message", { text: "hi" }))).toBe("user: hi");
    expect(eventExcerpt(e(1, "user_message", { text: null }))).toBe("user: nil");
    expect(eventExcerpt(e(1, "user_message", {}))).toBe("");
    expect(eventExcerpt(e(1, "assistant_message", { text: ["a"] }))).toBe('assistant: ["a"]');
    expect(eventExcerpt(e(1, "assistant_message", { text: { k: 1, b: [1, "x"] } }))).toBe('assistant: %{"b" => [1, "x"], "k" => 1}');
    expect(eventExcerpt(e(1, "tool_call", { text: "no" }))).toBe("");
  });

  it("subagent Events use or() over subagent_id and summary, status, event", () => {
    expect(eventExcerpt(e(1, "subagent_event", { subagent_id: "s1", summary: "found it", status: "done" }))).toBe("subagent s1: found it");
    expect(eventExcerpt(e(1, "subagent_event", { subagent_id: null, summary: false, status: "done", event: "finished" }))).toBe("subagent unknown: done");
    expect(eventExcerpt(e(1, "subagent_event", { subagent_id: "", summary: "s" }))).toBe("subagent : s");
    expect(eventExcerpt(e(1, "subagent_event", { subagent_id: 7, event: "started" }))).toBe("subagent 7: started");
  });

  it("permission_posture subagent Events are not candidates", () => {
    expect(isSummaryCandidate(e(0, "subagent_event", { event: "permission_posture" }))).toBe(false);
    expect(isSummaryCandidate(e(0, "subagent_event", { event: "started" }))).toBe(true);
    expect(isSummaryCandidate(e(0, "reasoning", { text: "x" }))).toBe(false);
  });
});

describe("files_touched", () => {
  it("takes top-level path-like strings and string elements of top-level arrays", () => {
    const call = e(1, "tool_call", { args: { path: "a.txt", cmd: "ls", list: ["x/y", 3, "nodot", ["deep.txt"]], obj: { p: "q.txt" }, n: 2 } });
    expect(toolCallPaths(call)).toEqual(["a.txt", "x/y"]);
    expect(toolCallPaths(e(1, "tool_call", { args: ["a.txt"] }))).toEqual([]);
    expect(toolCallPaths(e(1, "tool_result", { args: { path: "a.txt" } }))).toEqual([]);
  });

  it("the bounded set keeps the first N distinct strings in UTF-8 byte order", () => {
    const set = new SortedStringSet(3);
    for (const s of ["d", "b", "b", "\u{1F600}", "\uFF5E", "a", "e", "c", "a"]) set.add(s);
    expect(set.list()).toEqual(["a", "b", "c"]);
    const wide = new SortedStringSet(5);
    for (const s of ["\u{1F600}", "\uFF5E", "z"]) wide.add(s);
    expect(wide.list()).toEqual(["z", "\uFF5E", "\u{1F600}"]);
  });

  it("is what deduplicating, sorting by UTF-8 bytes and keeping the first N give (generated strings)", () => {
    const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme-composite", maxLength: 4 }), { maxLength: 60 }), fc.integer({ min: 0, max: 8 }), (strings, limit) => {
        const set = new SortedStringSet(limit);
        for (const s of strings) set.add(s);
        expect(set.list()).toEqual([...new Set(strings)].sort(byBytes).slice(0, limit));
      }),
      { numRuns: 500 },
    );
  });

  it("gives the same set from JSON string bytes, escaped or not, as from the strings (generated strings)", () => {
    const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    const char = fc.constantFrom("a", "b", "/", ".", '"', "\\", "\n", "\u0001", "é", "\u{1F600}", "\uFF5E");
    fc.assert(
      fc.property(fc.array(fc.string({ unit: char, maxLength: 5 }), { maxLength: 60 }), fc.integer({ min: 0, max: 8 }), (strings, limit) => {
        const set = new SortedStringSet(limit);
        for (const s of strings) {
          const json = Buffer.from(`  ${JSON.stringify(s)}  `);
          const [start, end] = [2, json.length - 2];
          const escape = json.indexOf(0x5c, start);
          if (escape >= 0 && escape < end) set.addEscaped(json, start, end, escape);
          else set.addBytes(json, start + 1, end - 1);
        }
        expect(set.list()).toEqual([...new Set(strings)].sort(byBytes).slice(0, limit));
      }),
      { numRuns: 1000 },
    );
  });

  it("keeps the first 30 of many", async () => {
    const calls: PixirEvent[] = [];
    for (let i = 99; i >= 0; i--) calls.push(e(100 - i, "tool_call", { call_id: `c${i}`, name: "read", args: { path: `f${String(i).padStart(3, "0")}.txt` } }));
    const data = await branchSummaryData({ data: {} }, calls);
    expect(data.files_touched).toHaveLength(30);
    expect(data.files_touched[0]).toBe("f000.txt");
    expect(data.files_touched[29]).toBe("f029.txt");
    expect(data.tool_calls).toHaveLength(100);
  });
});

describe("tool_calls kept as JSON bytes", () => {
  it("writes the summary line byte for byte as serializeEvent writes the same data as values", async () => {
    // call_id and name are copied from data whatever they are: strings with escapes and non-ASCII
    // text, numbers, objects in insertion order, absent (null), and a lone surrogate.
    const odd: Array<[unknown, unknown]> = [
      ["c1", "read"],
      ['q"\\\n', "é🙂\u2028"],
      [7, { z: 1, a: [true, null] }],
      [undefined, undefined],
      ["\ud800", -0.5],
    ];
    const calls = odd.map(([call_id, name], i) => e(i + 1, "tool_call", { call_id, name, args: { path: `f${i}.ts` } }));
    const data = await branchSummaryData({ data: { parent_session_id: "p", forked_to_seq: 5, from_seq: 1 } }, calls);
    expect(data.tool_calls).toHaveLength(odd.length);
    const line = branchSummaryLine("child", 6, { ...data, model_assisted_fallback: true, model_assisted_fallback_reason: "timeout" }).toString("utf8");
    const event = JSON.parse(line) as PixirEvent;
    expect(line).toBe(serializeEvent(event));
    expect(line).toBe(serializeEvent({ ...event, data: JSON.parse(JSON.stringify({ ...data, model_assisted_fallback: true, model_assisted_fallback_reason: "timeout" })) }));
    expect(event.data.tool_calls).toEqual(odd.map(([call_id, name], i) => ({ seq: i + 1, call_id: call_id ?? null, name: name ?? null })).map((c) => JSON.parse(JSON.stringify(c))));
    expect(Object.keys(event.data)).toEqual([...Object.keys(data), "model_assisted_fallback", "model_assisted_fallback_reason"]);
  });

  it("spans many blocks and still reads back in order", async () => {
    const b = new BranchSummaryBuilder();
    const long = "x".repeat(300_000);
    for (let i = 1; i <= 20; i++) b.add(e(i, "tool_call", { call_id: `${long}${i}`, name: "n" }));
    const list = JSON.parse(JSON.stringify(b.finish({ data: {} }).tool_calls)) as Array<{ seq: number; call_id: string }>;
    expect(list.map((c) => c.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(list[19]!.call_id).toBe(`${long}20`);
  });
});

describe("branchSummaryData", () => {
  const header = { data: { parent_session_id: "p", forked_to_seq: 9, from_seq: 2 } };

  it("drops empty excerpts before taking the last 8 and the last 6", async () => {
    const events: PixirEvent[] = [];
    for (let i = 1; i <= 9; i++) events.push(e(2 * i - 1, "user_message", { text: `u${i}` }), e(2 * i, "assistant_message", {}));
    const data = await branchSummaryData(header, events);
    expect(data.open_tasks).toEqual(["u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"].map((t) => `user: ${t}`));
    expect(data.summary).toBe(
      "Forked 18 replayed events (assistant_message=9, user_message=9).\nRecent forked conversational facts:\n" +
        ["u4", "u5", "u6", "u7", "u8", "u9"].map((t) => `- user: ${t}`).join("\n"),
    );
    expect(data.range).toEqual({ from_seq: 2, to_seq: 9 });
    expect(data.forked_to_seq).toBe(9);
  });

  it("drops excerpts whose text part is empty (a tool-use-only turn's `assistant: `) before taking the last K (§3.2)", async () => {
    const events: PixirEvent[] = [];
    for (let i = 1; i <= 8; i++) events.push(e(3 * i - 2, "user_message", { text: `u${i}` }), e(3 * i - 1, "assistant_message", { text: "" }), e(3 * i, "subagent_event", { subagent_id: "a", summary: "" }));
    // Whitespace is not empty: x() collapses it to one space, which the spec keeps.
    events.push(e(25, "assistant_message", { text: " \n " }), e(26, "user_message", { text: "" }));
    const data = await branchSummaryData(header, events);
    const kept = ["u2", "u3", "u4", "u5", "u6", "u7", "u8"].map((t) => `user: ${t}`);
    expect(data.open_tasks).toEqual([...kept, "assistant:  "]);
    expect(data.summary).toBe(
      "Forked 26 replayed events (assistant_message=9, subagent_event=8, user_message=9).\nRecent forked conversational facts:\n" +
        [...kept.slice(-5), "assistant:"].map((t) => `- ${t}`).join("\n"),
    );
    expect(data.summary).not.toMatch(/^- (assistant|user|subagent a): $/m);
  });

  it("accepts an async iterable and gives the empty summary for no Events", async () => {
    async function* none(): AsyncGenerator<PixirEvent> {}
    const data = await branchSummaryData({ data: {} }, none());
    expect(data.summary).toBe("Forked 0 replayed events ().\nRecent forked conversational facts:\n- none recorded");
    expect(data.parent_session_id).toBeNull();
    expect(data.range).toEqual({ from_seq: null, to_seq: null });
    expect(Object.keys(data)).toHaveLength(11);
  });

  it("the builder keeps a wider window of excerpts for the model prompt", () => {
    const b = new BranchSummaryBuilder({ excerptWindow: 200 });
    for (let i = 0; i < 250; i++) b.add(e(i + 1, "user_message", { text: `m${i}` }));
    expect(b.excerpts()).toHaveLength(200);
    expect(b.excerpts()[0]).toBe("user: m50");
    expect(b.finish({ data: {} }).open_tasks).toHaveLength(8);
    const prompt = summaryPrompt(b.finish({ data: {} }), b.excerpts());
    expect(prompt.split("\n").filter((l) => l.startsWith("- user: m"))).toHaveLength(200 + 8 + 6);
    expect(prompt.endsWith("\nConversation excerpts (oldest first):\n" + b.excerpts().map((x) => `- ${x}`).join("\n") + "\n")).toBe(true);
  });
});

describe("provider rendering (summarize.md §5)", () => {
  it("writes null and missing values as empty strings and lists as bullets", () => {
    const out = renderBranchSummaryText({ strategy: "s", parent_session_id: null, range: { from_seq: null, to_seq: 0 }, source_event_count: 0, summary: "sum", files_touched: [], open_tasks: "no", limitations: [1, { a: "b" }, "c"] });
    expect(out).toBe(
      "Branch summary from forked parent prefix\nParent: unknown\nRange: seq ..0 (0 events)\nStrategy: s\n\nSummary:\nsum\n\nFiles touched:\n- none\n\nOpen tasks:\n- none\n\nLimitations:\n- 1\n- {\"a\":\"b\"}\n- c",
    );
  });

  it("shows at most 20 bullets and trims the whole text", () => {
    const files = Array.from({ length: 25 }, (_, i) => `f${i}`);
    const out = renderBranchSummaryText({ files_touched: files, limitations: ["  padded  "] });
    expect(out).toContain("- f19\n\nOpen tasks:");
    expect(out).not.toContain("- f20");
    expect(out.startsWith("Branch summary from forked parent prefix\nParent: unknown\nRange: seq .. ( events)\nStrategy: \n")).toBe(true);
    expect(out.endsWith("\n-   padded")).toBe(true);
  });

  it("the checkpoint rendering has its own first line and no Parent line", () => {
    const out = renderCheckpointText({ strategy: "deterministic_operational_summary_v1", range: { from_seq: 0, to_seq: 1 }, source_event_count: 2, summary: "x" });
    expect(out.split("\n").slice(0, 3)).toEqual(["Compressed session memory", "Range: seq 0..1 (2 events)", "Strategy: deterministic_operational_summary_v1"]);
  });
});

// ---------------------------------------------------------------------------------------------------

const DIGEST_EMPTY = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

function header(n: number, digest: string, strategy = "replay_v1"): PixirEvent {
  return {
    id: "01JZ0000000000000000000000",
    session_id: "c",
    seq: 0,
    ts: "2026-07-01T00:00:00.000Z",
    type: "session_fork",
    data: { parent_session_id: "p", forked_to_seq: n, replay_event_count: n, from_seq: n > 0 ? 0 : null, strategy, prefix_digest: digest },
  };
}

async function collect(stage: AsyncIterable<string | Buffer>): Promise<string[]> {
  const out: string[] = [];
  for await (const line of stage) out.push(line.toString());
  return out;
}

describe("summarizeStage in-process", () => {
  it("gives the same output whatever the chunking, and every output item is one whole line", async () => {
    const ws = tempWs();
    const empty = `${serializeEvent(header(0, DIGEST_EMPTY))}`;
    const own = serializeEvent({ ...e(1, "user_message", { text: "é mine" }), session_id: "c" });
    const input = empty + own.replace("\n", "\r\n");
    async function* bytewise() {
      const buf = Buffer.from(input);
      for (let i = 0; i < buf.length; i++) yield buf.subarray(i, i + 1);
    }
    async function* whole() {
      yield input;
    }
    const a = await collect(summarizeStage(bytewise(), { ws }));
    const b = await collect(summarizeStage(whole(), { ws }));
    expect(a).toHaveLength(3);
    expect(a.slice(0, 2)).toEqual(b.slice(0, 2));
    expect(a[0]).toBe(empty);
    expect(a[1]).toBe(own.replace("\n", "\r\n"));
    for (const line of a) expect(line.endsWith("\n") && line.indexOf("\n") === line.length - 1).toBe(true);
    const summary = JSON.parse(a[2]!);
    expect(summary).toMatchObject({ session_id: "c", seq: 2, type: "branch_summary" });
  });

  it("a long prefix read from bytes, in any chunks, sums up as its Events do (excerpts made only for the last)", async () => {
    // Candidates with empty excerpts (no text, permission_posture) among the last ones make the stage
    // look back across the batches it leaves unexcerpted; unsorted keys and escapes take other paths.
    let seed = 11;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    const events: PixirEvent[] = [];
    for (let seq = 1; seq <= 3000; seq++) {
      const late = seq > 2900;
      const kind = random(8);
      const data: Record<string, unknown> =
        kind === 0 ? { call_id: `c${seq}`, name: "read", args: { path: `src/f${seq % 37}.ts`, all: ["a/b", "x"] } }
        : kind === 1 ? { call_id: `c${seq - 1}`, ok: true, output: "done" }
        : kind === 2 ? (late || random(3) === 0 ? { event: "permission_posture", subagent_id: "s" } : { subagent_id: `s${seq}`, status: "ok" })
        : late && kind < 6 ? (seq % 2 === 0 ? { note: "no text" } : { text: "" })
        : kind === 7 ? { z: 1, text: `unsorted ${seq} "quoted"\n` }
        : { text: `message ${seq} ${"é".repeat(random(600))}` };
      const type = kind === 0 ? "tool_call" : kind === 1 ? "tool_result" : kind === 2 ? "subagent_event" : kind % 2 ? "user_message" : "assistant_message";
      events.push({ ...e(seq, type, data), ts: `2026-06-30T00:${String(Math.floor(seq / 60) % 60).padStart(2, "0")}:${String(seq % 60).padStart(2, "0")}Z` });
    }
    const digest = new PrefixDigest();
    for (const ev of events) digest.add(ev);
    const head = header(events.length, digest.digest());
    const bytes = Buffer.from(serializeEvent(head) + events.map((ev) => serializeEvent(ev)).join(""));
    async function* chunks() {
      for (let at = 0; at < bytes.length; ) {
        const n = 1 + random(200_000);
        yield bytes.subarray(at, at + n);
        at += n;
      }
    }
    for (const modelCmd of [undefined, "true"]) {
      const out = await collect(summarizeStage(chunks(), { ws: tempWs(), modelCmd, warn: () => undefined }));
      const all = Buffer.from(out.join(""));
      expect(all.subarray(0, bytes.length).equals(bytes)).toBe(true);
      const summary = JSON.parse(all.subarray(bytes.length).toString());
      const expected = await branchSummaryData(head, events);
      if (modelCmd === undefined) expect(summary.data).toEqual(JSON.parse(JSON.stringify(expected)));
      else {
        // The fallback keeps the deterministic data; the prompt's window (200 excerpts) was filled the same way.
        const builder = new BranchSummaryBuilder({ excerptWindow: 200 });
        for (const ev of events) builder.add(ev);
        expect(summary.data.open_tasks).toEqual(expected.open_tasks);
        expect(builder.excerpts()).toHaveLength(200);
      }
    }
  });

  it("makes the same excerpts from candidates' bytes as from their Events, past the 4 MiB the builder holds unexcerpted", () => {
    // 60 candidates of about 200 KB: the held bytes fill up several times, and each time they are excerpted first.
    const events = Array.from({ length: 60 }, (_, i) => e(i + 1, i % 3 === 0 ? "assistant_message" : "user_message", { text: `m${i} ${"y".repeat(200_000 + i)}` }));
    const byEvents = new BranchSummaryBuilder({ excerptWindow: 50 });
    const byBytes = new BranchSummaryBuilder({ excerptWindow: 50 });
    for (const ev of events) {
      byEvents.add(ev);
      const data = Buffer.from(JSON.stringify(ev.data));
      byBytes.addChecked(ev.type, ev.seq, data, 0, data.length);
    }
    expect(byBytes.excerpts()).toEqual(byEvents.excerpts());
    expect(byBytes.excerpts()).toHaveLength(50);
  });

  it("sums up tool calls from their data's bytes as from their Events: the tool_calls list and files_touched", () => {
    const calls = Array.from({ length: 400 }, (_, i) => {
      const args: Record<string, unknown> =
        i % 5 === 0
          ? { path: `dir/f${i % 37}.ts`, old_string: `x = "${i}";\n`, new_string: "y.z" }
          : i % 5 === 1
            ? { paths: [`a/${i % 11}`, 3, { p: "not/top" }, "!tab\there.md"], n: i }
            : i % 5 === 2
              ? { cmd: `ls ${"é".repeat(i % 3)}/q`, quote: 'say "hi/there"' }
              : i % 5 === 3
                ? { nothing: "plain" }
                : { "": `line\u0001${i}.txt` };
      const data: Record<string, unknown> = { call_id: i % 7 === 0 ? { n: i } : `call_${i}`, args };
      if (i % 4 !== 0) data.name = i % 9 === 0 ? null : `tool_${i % 3}`;
      return e(i + 1, "tool_call", data);
    });
    const byEvents = new BranchSummaryBuilder();
    const byBytes = new BranchSummaryBuilder();
    for (const ev of calls) {
      byEvents.add(ev);
      const data = Buffer.from(JSON.stringify(ev.data));
      byBytes.addChecked(ev.type, ev.seq, data, 0, data.length);
    }
    const header = e(0, "session_fork", { parent_session_id: "p", forked_to_seq: 400, from_seq: 1 });
    const [a, b] = [byEvents.finish(header), byBytes.finish(header)];
    expect(b.tool_calls.jsonBytes().toString()).toBe(a.tool_calls.jsonBytes().toString());
    expect(b.files_touched).toEqual(a.files_touched);
    expect(b.files_touched).toHaveLength(30);
    expect(b.files_touched).toContain("!tab\there.md");
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it("passes every line on intact when a chunk ends in a blank line (the held line is a copy, not the reused buffer)", async () => {
    const head0 = serializeEvent(header(0, DIGEST_EMPTY));
    const own = [1, 2, 3].map((n) => serializeEvent(e(n, "user_message", { text: `own ${n} ${"x".repeat(400 * n)}` })));
    // The first chunk's last line is blank; the next chunks overwrite the reader's buffer.
    const chunks = [`${head0}${own[0]}\n`, own[1]!, own[2]!];
    async function* input() {
      for (const c of chunks) yield c;
    }
    const out = await collect(summarizeStage(input(), { ws: tempWs() }));
    const text = out.join("");
    expect(text.startsWith(head0 + own.join(""))).toBe(true);
    expect(JSON.parse(text.slice((head0 + own.join("")).length))).toMatchObject({ type: "branch_summary", seq: 4 });
  });

  it("holds the last line back until the input ends", async () => {
    const ws = tempWs();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = serializeEvent(header(0, DIGEST_EMPTY));
    const second = serializeEvent(e(1, "user_message", { text: "a" }));
    async function* input() {
      yield first + second;
      await gate;
    }
    const it = summarizeStage(input(), { ws })[Symbol.asyncIterator]();
    expect(String((await it.next()).value)).toBe(first);
    const pending = it.next();
    const early = await Promise.race([pending.then(() => "yielded"), new Promise((r) => setTimeout(() => r("waiting"), 100))]);
    expect(early).toBe("waiting");
    release();
    expect(String((await pending).value)).toBe(second);
    expect(JSON.parse(String((await it.next()).value)).type).toBe("branch_summary");
    expect((await it.next()).done).toBe(true);
  });

  it("format text yields only the rendering", async () => {
    async function* input() {
      yield serializeEvent(header(0, DIGEST_EMPTY));
    }
    const out = await collect(summarizeStage(input(), { ws: tempWs(), format: "text" }));
    expect(out).toHaveLength(1);
    expect(out[0]!.startsWith("Branch summary from forked parent prefix\nParent: p\nRange: seq ..0 (0 events)\n")).toBe(true);
    expect(out[0]!.endsWith("reconstruction.\n")).toBe(true);
  });

  it("reports the fallback through warn and passes env to the command", async () => {
    const warnings: unknown[] = [];
    async function* input() {
      yield serializeEvent(header(0, DIGEST_EMPTY));
    }
    const out = await collect(
      summarizeStage(input(), {
        ws: tempWs(),
        modelCmd: 'test "$EXTRA" = yes && exit 4',
        env: { ...process.env, EXTRA: "yes" },
        warn: (code, text, details) => warnings.push([code, text, details]),
      }),
    );
    expect(JSON.parse(out[1]!).data).toMatchObject({ model_assisted_fallback: true, model_assisted_fallback_reason: "nonzero_exit" });
    expect(warnings).toEqual([["model_assisted_fallback", "nonzero_exit", { reason: "nonzero_exit" }]]);
  });

  it("an abort while waiting for input stops the stage with the signal's reason", async () => {
    const controller = new AbortController();
    async function* input() {
      yield serializeEvent(header(0, DIGEST_EMPTY));
      await new Promise(() => undefined);
    }
    const pending = collect(summarizeStage(input(), { ws: tempWs(), signal: controller.signal }));
    setTimeout(() => controller.abort(new PixirError("interrupted", undefined, { signal: "SIGINT" })), 50);
    await expect(pending).rejects.toSatisfy((err: unknown) => err instanceof PixirError && err.kind === "interrupted");
  });

  it("errors are PixirErrors", async () => {
    async function* input() {
      yield '{"id":"x","session_id":"c","seq":0,"ts":"t","type":"user_message","data":{}}\n';
    }
    await expect(collect(summarizeStage(input(), { ws: tempWs() }))).rejects.toSatisfy(
      (err: unknown) => err instanceof PixirError && err.kind === "stream_integrity_failed" && err.details.reason === "missing_fork_header",
    );
  });
});

describe("runModelCommand", () => {
  it("an abort kills the command and rejects with the signal's reason", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = runModelCommand("sleep 10", "", { cwd: tempWs(), env: process.env, timeoutMs: 60_000, signal: controller.signal });
    setTimeout(() => controller.abort(new PixirError("interrupted", undefined, { signal: "SIGINT" })), 100);
    await expect(pending).rejects.toSatisfy((err: unknown) => err instanceof PixirError && err.kind === "interrupted");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a command that cannot start is spawn_failed", async () => {
    const r = await runModelCommand("true", "", { cwd: path.join(tempWs(), "missing"), env: process.env, timeoutMs: 1000 });
    expect(r).toMatchObject({ ok: false, reason: "spawn_failed" });
  });

  it("captures stdout and ignores a command that does not read its stdin", async () => {
    const r = await runModelCommand("printf out", "x".repeat(1 << 20), { cwd: tempWs(), env: process.env, timeoutMs: 10_000 });
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.output.toString()).toBe("out");
  });

  // A process that leaves the command's process group (setsid, a daemon) is out of reach of its signals.
  const detachedSleep = (seconds: number, stdio: string) =>
    `${JSON.stringify(process.execPath)} -e 'require("child_process").spawn("sleep", ["${seconds}"], { detached: true, stdio: ${stdio} }).unref()'`;

  it("a background job that keeps only stderr open does not hold back an answer the command gave", async () => {
    const started = Date.now();
    const r = await runModelCommand("sleep 8 >/dev/null & echo answer", "", { cwd: tempWs(), env: process.env, timeoutMs: 60_000 });
    expect(r).toMatchObject({ ok: true });
    if (r.ok) expect(r.output.toString()).toBe("answer\n");
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a process outside the command's group that holds stdout cannot keep us past the timeout", async () => {
    const started = Date.now();
    const cmd = `${detachedSleep(20, '["ignore", "inherit", "inherit"]')}; echo partial`;
    const r = await runModelCommand(cmd, "", { cwd: tempWs(), env: process.env, timeoutMs: 500 });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("stops reading past 1 MiB, so a command that ignores SIGTERM is not drained to its end", async () => {
    const ws = tempWs();
    // Without the broken pipe, head would write all 64 MiB in the 2 s before SIGKILL and exit 0.
    const cmd = `trap '' TERM; head -c 67108864 /dev/zero 2>/dev/null; echo $? > status`;
    const r = await runModelCommand(cmd, "", { cwd: ws, env: process.env, timeoutMs: 60_000 });
    expect(r).toMatchObject({ ok: false, reason: "output_too_large" });
    expect(readFileSync(path.join(ws, "status"), "utf8").trim()).not.toBe("0");
  });

  it("a timeout kills the whole group 2 s after SIGTERM, also a process that ignores SIGTERM once the command has ended", async () => {
    const ws = tempWs();
    const cmd = "(trap '' TERM; sleep 30) >/dev/null 2>&1 & echo $! > bg.pid; sleep 30";
    const r = await runModelCommand(cmd, "", { cwd: ws, env: process.env, timeoutMs: 300 });
    expect(r).toMatchObject({ ok: false, reason: "timeout" });
    const pid = readFileSync(path.join(ws, "bg.pid"), "utf8").trim();
    // Gone, or a zombie nobody has reaped yet.
    const alive = () => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 8000;
    while (alive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive()).toBe(false);
  });

  it("runs /bin/sh, as system(3) does, whatever PATH says", async () => {
    const r = await runModelCommand("/bin/echo hi", "", { cwd: tempWs(), env: { PATH: "/nonexistent" }, timeoutMs: 10_000 });
    expect(r).toMatchObject({ ok: true });
    // An `sh` that a PATH of `.` finds in the Workspace is not run.
    const ws = tempWs();
    writeFileSync(path.join(ws, "sh"), "#!/bin/sh\necho planted\n", { mode: 0o755 });
    const planted = await runModelCommand("echo real", "", { cwd: ws, env: { ...process.env, PATH: `.:${process.env.PATH ?? ""}` }, timeoutMs: 10_000 });
    expect(planted.ok && planted.output.toString()).toBe("real\n");
  });
});
