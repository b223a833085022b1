// fork/parent-log.ts and parent-bytes.ts: a parent Log whose every line passes the byte check is planned and copied from blocks of
// its bytes, without an object per line. It must learn exactly what the loader's way learns (the same
// PrefixScanner fed Events), refuse every other form of Log so that the general way handles it, and
// still notice a parent that changes between its two passes.
import { spawnSync } from "node:child_process";
import { appendFileSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { decodeLogLine, isLineProblem, PixirError } from "@pixir/envelope";
import { checkParentPrefix } from "../../lib/envelope/src/fork/fork-write.js";
import { derivedUlid } from "../../lib/envelope/src/event/ids.js";
import { lineBlocks } from "../../lib/envelope/src/store/log-read.js";
import { ParentPrefixCursor, parentFromOurLog } from "../../lib/envelope/src/fork/parent-log.js";
import { PrefixScanner, type PrefixFacts } from "../../lib/envelope/src/fork/fork-plan.js";
import { logFile, readLog, ROOT, run, sh, workspace } from "../support/cli.js";
import { expectJsonOk } from "../support/fork.js";

const SHA = "a".repeat(64);

/** A realistic parent (bench/gen-log.mjs), with a replay header and resource descriptors spliced in. */
function generatedParent(events = 1200, resources = true): string {
  const ws = workspace();
  const file = path.join(ws, "gen.ndjson");
  const gen = spawnSync(process.execPath, [path.join(ROOT, "bench", "gen-log.mjs"), "--events", String(events), "--session", "P", "--out", file]);
  expect(gen.status).toBe(0);
  const lines = readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
  // Line 1 a replay_v1 fork header naming a fork root; two user messages with resources (one repeated).
  lines[0] = lines[0]!.replace(/"type":"[a-z_]+","data":\{.*\}\}$/, `"type":"session_fork","data":{"fork_root_session_id":"ROOT","parent_session_id":"ROOT","strategy":"replay_v1"}}`);
  const withResources = (i: number, id: string) => {
    lines[i] = lines[i]!.replace(/"type":"[a-z_]+","data":\{.*\}\}$/, `"type":"user_message","data":{"resources":[{"content_sha256":"${SHA}","extension":"png","resource_id":"${id}","store_ref":"x"}],"text":"see"}}`);
  };
  if (resources) {
    withResources(10, "r1");
    withResources(20, "r1");
    withResources(30, "r2");
  }
  return `${lines.join("\n")}\n`;
}

/** What the loader's way learns: every line decoded in full and fed to PrefixScanner.add. */
function factsByEvents(text: string, toSeq: number | undefined): PrefixFacts {
  const scanner = new PrefixScanner("P", toSeq);
  for (const line of text.split("\n").filter((l) => l !== "")) {
    const bytes = Buffer.from(line);
    const decoded = decodeLogLine(bytes, false);
    if (isLineProblem(decoded)) throw new Error(decoded.reason);
    scanner.add(decoded.event, bytes, decoded.canonical);
  }
  return scanner.finish();
}

describe("a pass-through parent planned from its bytes", () => {
  const text = generatedParent();
  const ws = workspace({ P: text });
  const lastSeq = text.trimEnd().split("\n").length - 1;

  it.each([undefined, 0, 3, 700, lastSeq])("learns what the loader's way learns (to_seq %s)", async (toSeq) => {
    const fast = await parentFromOurLog(ws, "P", toSeq);
    expect(fast).not.toBeNull();
    const expected = factsByEvents(text, toSeq);
    // The fingerprint is the byte path's own (a CRC of every byte it read), which only its copy compares.
    const { fingerprint, ...facts } = fast!.facts;
    const { fingerprint: _, ...expectedFacts } = expected;
    expect(facts).toEqual(expectedFacts);
    expect(fingerprint).toMatch(new RegExp(`^crc32-bytes:[0-9a-f]{8}:${Buffer.byteLength(text)}$`));
    expect(expected.resources.map((r) => r.resourceId)).toEqual(toSeq === undefined || toSeq >= 30 ? ["r1", "r2"] : toSeq >= 10 ? ["r1"] : []);
    expect(expected.forkRootSessionId).toBe("ROOT");
  });

  it("finds that some cut leaves tool calls open, as the generated Log has them", async () => {
    const open = [];
    for (let toSeq = 1; toSeq < 60; toSeq++) open.push((await parentFromOurLog(ws, "P", toSeq))!.facts.openToolCalls.length);
    expect(Math.max(...open)).toBeGreaterThan(0);
  });

  it("refuses a to_seq above the last seq as the loader's way does", async () => {
    const err = await parentFromOurLog(ws, "P", lastSeq + 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PixirError);
    expect((err as PixirError).kind).toBe("invalid_args");
  });

  it("makes the child the piped pipeline makes", () => {
    const ws = workspace({ P: generatedParent(1200, false) });
    expectJsonOk(run("pixir", ["fork", "P", "--to-seq", "700", "--child-id", "fast", "--json"], { cwd: ws }));
    expectJsonOk(sh("pixir-log cat P | pixir-fork --to-seq 700 --child-id piped | pixir-log write --json", { cwd: ws }));
    const lines = (id: string) => readLog(ws, id).split("\n").filter((l) => l !== "");
    const [fast, piped] = [lines("fast"), lines("piped")];
    expect(fast.length).toBe(piped.length);
    const [hf, hp] = [JSON.parse(fast[0]!).data, JSON.parse(piped[0]!).data];
    expect(hf.prefix_digest).toBe(hp.prefix_digest);
    expect(hf.open_tool_calls).toEqual(hp.open_tool_calls);
    // Apart from the id derived from each header's own id and the session id, the lines are the same bytes.
    const body = (line: string) => line.slice(line.indexOf(',"seq":'));
    for (let k = 1; k < fast.length; k++) expect(body(fast[k]!)).toBe(body(piped[k]!));
    // Each id is derivedUlid's, over several blocks of copies (written, given back and reused).
    expect(readLog(ws, "fast").length).toBeGreaterThan(4 * 256 * 1024);
    for (const [child, id] of [[fast, "fast"], [piped, "piped"]] as const) {
      const header = JSON.parse(child[0]!);
      for (let k = 1; k < child.length; k++) {
        const e = JSON.parse(child[k]!);
        expect([e.id, e.session_id, e.seq]).toEqual([derivedUlid(`fork:${header.id}:${k}`, e.ts), id, k]);
      }
    }
  });

  it("with --summarize, feeds the summary from the checked lines: the same branch_summary as the pipeline's", () => {
    const ws = workspace({ P: generatedParent(1200, false) });
    expectJsonOk(run("pixir", ["fork", "P", "--to-seq", "900", "--summarize", "--child-id", "fast", "--json"], { cwd: ws }));
    expectJsonOk(sh("pixir-log cat P | pixir-fork --to-seq 900 --child-id piped | pixir-summarize | pixir-log write --json", { cwd: ws }));
    const summary = (id: string) => JSON.parse(readLog(ws, id).trim().split("\n").at(-1)!);
    const [fast, piped] = [summary("fast"), summary("piped")];
    expect(fast.type).toBe("branch_summary");
    expect(fast.data.source_event_count).toBeGreaterThan(500);
    expect(fast.data.open_tasks.length).toBeGreaterThan(0);
    expect(fast.data).toEqual(piped.data);
    expect(fast.seq).toBe(piped.seq);
  });
});

describe("a Log the byte path does not take goes the loader's way", () => {
  const canonical = [
    `{"id":"a0","session_id":"P","seq":0,"ts":"2026-01-01T00:00:00.000Z","type":"user_message","data":{"text":"hi"}}`,
    `{"id":"a1","session_id":"P","seq":1,"ts":"2026-01-01T00:00:01.000Z","type":"assistant_message","data":{"text":"ok"}}`,
  ];
  const cases: Array<[string, string]> = [
    ["a null seq", `${canonical[0]}\n${canonical[1]!.replace('"seq":1', '"seq":null')}\n`],
    ["lines out of seq order", `${canonical[1]}\n${canonical[0]}\n`],
    ["a blank line", `${canonical[0]}\n\n${canonical[1]}\n`],
    ["a torn tail", `${canonical[0]}\n${canonical[1]}`],
    ["a number JavaScript writes otherwise", `${canonical[0]}\n${canonical[1]!.replace('"text":"ok"', '"text":"ok","n":1.50')}\n`],
    ["a share_v1 header", `{"id":"h","session_id":"P","seq":0,"ts":"2026-01-01T00:00:00.000Z","type":"session_fork","data":{"parent_session_id":"Q","strategy":"share_v1"}}\n`],
    ["an empty file", ""],
  ];
  it.each(cases)("%s", async (_, content) => {
    const ws = workspace({ P: content });
    expect(await parentFromOurLog(ws, "P", undefined)).toBeNull();
  });

  it("a missing Log", async () => {
    expect(await parentFromOurLog(workspace({ Q: "" }), "P", undefined)).toBeNull();
  });

  it("without a fingerprint (pixir-log write's parent check, which copies nothing) the facts are the same but for it", async () => {
    const ws = workspace({ P: generatedParent(50, false) });
    const full = (await parentFromOurLog(ws, "P", 30))!.facts;
    const bare = (await parentFromOurLog(ws, "P", 30, { fingerprint: false }))!.facts;
    expect(full.fingerprint).toMatch(/^crc32-bytes:/);
    expect(bare).toEqual({ ...full, fingerprint: "" });
  });

  it("a check that was called off (pixir-log write stops its parent check when the stream fails)", async () => {
    const ws = workspace({ P: generatedParent(50, false) });
    expect(await parentFromOurLog(ws, "P", undefined)).not.toBeNull();
    expect(await parentFromOurLog(ws, "P", undefined, { signal: AbortSignal.abort() })).toBeNull();
    const header = { parentId: "P", n: 1, toSeq: 0, digest: "sha256:x", strategy: "replay_v1" as const };
    await expect(checkParentPrefix(ws, "c", header, AbortSignal.abort())).rejects.toMatchObject({ name: "AbortError" });
    // Not called off, the same check runs to its verdict.
    await expect(checkParentPrefix(ws, "c", header)).rejects.toMatchObject({ kind: "fork_prefix_mismatch" });
  });
});

describe("a pass-through parent that changes between the two passes", () => {
  const copy = async (ws: string) => {
    const parent = await parentFromOurLog(ws, "P", undefined);
    expect(parent).not.toBeNull();
    return async (change: () => void) => {
      change();
      let bytes = 0;
      for await (const block of parent!.inheritedBlocks!("01JZZZZZZZZZZZZZZZZZZZZZZZ", "c")) bytes += block.length;
      return bytes;
    };
  };
  const expectChanged = (err: unknown) => {
    expect(err).toBeInstanceOf(PixirError);
    expect((err as PixirError).kind).toBe("fork_prefix_mismatch");
    expect((err as PixirError).details).toMatchObject({ session_id: "c", parent_session_id: "P" });
  };

  it("is refused when bytes of the same length changed", async () => {
    const ws = workspace({ P: generatedParent(300) });
    const file = logFile(ws, "P");
    const flipOneLetter = () => {
      const text = readFileSync(file, "latin1");
      let i = text.indexOf('"output":"');
      while (!/[a-z]/.test(text[i]!)) i++;
      writeFileSync(file, text.slice(0, i) + (text[i] === "q" ? "r" : "q") + text.slice(i + 1), "latin1");
    };
    const err = await (await copy(ws))(flipOneLetter).catch((e: unknown) => e);
    expectChanged(err);
  });

  it("is refused when a line it does not copy changed (the fingerprint covers every byte read)", async () => {
    const ws = workspace({ P: generatedParent(300) });
    const file = logFile(ws, "P");
    const usage = () => {
      const text = readFileSync(file, "latin1");
      const at = text.indexOf('"total_tokens":') + 15;
      writeFileSync(file, text.slice(0, at) + (text[at] === "1" ? "2" : "1") + text.slice(at + 1), "latin1");
    };
    expect(readFileSync(file, "latin1")).toMatch(/"type":"provider_usage","data":\{[^\n]*"total_tokens":[0-9]/);
    expectChanged(await (await copy(ws))(usage).catch((e: unknown) => e));
  });

  it("is refused when the Log was cut short", async () => {
    const ws = workspace({ P: generatedParent(300) });
    const file = logFile(ws, "P");
    const err = await (await copy(ws))(() => truncateSync(file, Math.floor(readFileSync(file).length / 2))).catch((e: unknown) => e);
    expectChanged(err);
  });

  it("copies what the plan read when only bytes past it were added", async () => {
    const text = generatedParent(300);
    const ws = workspace({ P: text });
    const bytes = await (await copy(ws))(() => appendFileSync(logFile(ws, "P"), text.split("\n")[5]!.replace(/"seq":\d+/, '"seq":99999') + "\n"));
    expect(bytes).toBeGreaterThan(0);
  });
});

describe("lineBlocks", () => {
  const blocks = async (content: Buffer) => {
    const ws = workspace();
    const file = path.join(ws, "f");
    writeFileSync(file, content);
    const handle = await open(file, "r");
    const out: Array<{ text: string; tail: boolean }> = [];
    try {
      for await (const b of lineBlocks(handle, content.length)) out.push({ text: b.bytes.toString("latin1", 0, b.end), tail: b.tail });
    } finally {
      await handle.close();
    }
    return out;
  };

  it("gives whole lines, growing for a line longer than its buffer, and the unterminated rest as a tail", async () => {
    const long = "x".repeat(3 * 1024 * 1024);
    const content = Buffer.from(`a\n${long}\nb\nc`, "latin1");
    const out = await blocks(content);
    expect(out.map((b) => b.text).join("")).toBe(content.toString("latin1"));
    for (const b of out.slice(0, -1)) expect([b.tail, b.text.endsWith("\n")]).toEqual([false, true]);
    expect(out.at(-1)).toEqual({ text: "c", tail: true });
  });

  it("reads only the length it is given", async () => {
    const out = await blocks(Buffer.from("a\nb\nc\n"));
    expect(out.map((b) => b.text).join("")).toBe("a\nb\nc\n");
    const ws = workspace();
    const file = path.join(ws, "f");
    writeFileSync(file, "a\nb\nc\n");
    const handle = await open(file, "r");
    const texts: string[] = [];
    for await (const b of lineBlocks(handle, 4)) texts.push(b.bytes.toString("latin1", 0, b.end));
    await handle.close();
    expect(texts.join("")).toBe("a\nb\n");
  });

  /** A reader over `content` that gives short reads of random sizes, each after a turn of the event loop. */
  const memoryReader = (content: Buffer, seed: number, failAt = Infinity) => {
    let state = seed;
    const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    return {
      reads: 0,
      async read(buffer: Buffer, offset: number, length: number, position: number) {
        this.reads++;
        await new Promise((r) => setImmediate(r));
        if (position >= failAt) throw Object.assign(new Error("EIO"), { code: "EIO" });
        const n = Math.min(length, content.length - position, 1 + Math.floor(random() * 300_000));
        content.copy(buffer, offset, position, position + Math.max(0, n));
        return { bytesRead: Math.max(0, n) };
      },
    };
  };

  it("keeps each block intact while it reads the next one ahead, through short reads and long lines", async () => {
    for (const seed of [1, 2, 3]) {
      let state = seed;
      const random = () => ((state = (state * 48271) % 2147483647) / 2147483647);
      const lines: string[] = [];
      for (let i = 0; i < 400; i++) lines.push(`${i}:${"y".repeat(random() < 0.01 ? 1_500_000 : Math.floor(random() * 20_000))}`);
      const text = `${lines.join("\n")}\n${seed === 3 ? "unterminated" : ""}`;
      const content = Buffer.from(text, "latin1");
      const out: string[] = [];
      let tails = 0;
      for await (const b of lineBlocks(memoryReader(content, seed), content.length)) {
        const before = b.bytes.toString("latin1", 0, b.end);
        await new Promise((r) => setTimeout(r, 1)); // the read ahead lands meanwhile
        expect(b.bytes.toString("latin1", 0, b.end)).toBe(before);
        if (b.tail) tails++;
        else expect(before.endsWith("\n")).toBe(true);
        out.push(before);
      }
      expect(out.join("")).toBe(text);
      expect(tails).toBe(seed === 3 ? 1 : 0);
    }
  });

  it("ends where the file ended early, reports a failed read, and lets a reader stop early", async () => {
    const content = Buffer.from("a\nb\nc\n".repeat(200_000), "latin1");
    // Told 2 MiB more than there is: the blocks end with the file.
    const out: string[] = [];
    for await (const b of lineBlocks(memoryReader(content, 5), content.length + 2 * 1024 * 1024)) out.push(b.bytes.toString("latin1", 0, b.end));
    expect(out.join("")).toBe(content.toString("latin1"));
    // A read that fails (ahead or not) is thrown to the reader.
    await expect(
      (async () => {
        for await (const b of lineBlocks(memoryReader(content, 6, 700_000), content.length)) void b;
      })(),
    ).rejects.toMatchObject({ code: "EIO" });
    // A reader that stops after the first block leaves no read behind.
    const reader = memoryReader(content, 7);
    for await (const b of lineBlocks(reader, content.length)) {
      void b;
      break;
    }
    const reads = reader.reads;
    await new Promise((r) => setTimeout(r, 20));
    expect(reader.reads).toBe(reads);
  });
});

describe("ParentPrefixCursor (pixir-log write's parent pass, in step with the stream)", () => {
  it("finds the inherited lines in order, a block at a time, and finishes with the plan's facts", async () => {
    const ws = workspace({ P: generatedParent(1200, true) });
    const toSeq = 700;
    const lines = readLog(ws, "P").split("\n").filter((l) => l !== "");
    const cursor = (await ParentPrefixCursor.open(ws, "P", toSeq))!;
    const seen: string[] = [];
    let loads = 0;
    // Half the inherited lines, as a stream would ask for them; finish() reads the rest.
    for (let k = 0; k < 300; k++) {
      let r = cursor.next();
      while (r === "more") {
        loads++;
        await cursor.load();
        r = cursor.next();
      }
      expect(r).toBe(true);
      const { bytes, tsKey, end } = cursor.line;
      seen.push(bytes.toString("utf8", tsKey, end));
    }
    expect(loads).toBeGreaterThan(0);
    const facts = (await cursor.finish())!;
    const plan = (await parentFromOurLog(ws, "P", toSeq, { fingerprint: false }))!.facts;
    expect(facts).toEqual(plan);
    expect(facts.eventCount).toBeGreaterThan(300);
    // Each line found is an inherited parent line from `"ts":` on.
    const tails = lines.map((l) => l.slice(l.indexOf(',"ts":') + 1));
    expect(seen.every((t) => tails.includes(t))).toBe(true);
    expect(seen).toEqual(seen.slice().sort((a, b) => tails.indexOf(a) - tails.indexOf(b)));
  });

  it("fails (the general check decides) on a line the byte path does not handle, and on a missing Log", async () => {
    const ws = workspace({ P: `${generatedParent(40, false)}{"type":"user_message","seq":99999,"data":{}}\n` });
    const cursor = (await ParentPrefixCursor.open(ws, "P", 5))!;
    expect(await cursor.finish()).toBeNull();
    expect(cursor.failed).toBe(true);
    expect(await ParentPrefixCursor.open(ws, "Q", 5)).toBeNull();
  });
});


describe("a piped parent of several MiB", () => {
  it("gives the in-process fork's digest and child", () => {
    const ws = workspace();
    const gen = spawnSync(process.execPath, [path.join(ROOT, "bench", "gen-log.mjs"), "--bytes", "5MiB", "--session", "P", "--out", logFile(ws, "P")]);
    expect(gen.status).toBe(0);
    expectJsonOk(run("pixir", ["fork", "P", "--child-id", "fast", "--json"], { cwd: ws }));
    const body = (line: string) => line.slice(line.indexOf(',"seq":'));
    const fast = readLog(ws, "fast").split("\n").filter((l) => l !== "");
    // pixir-log write checks the stream's digest against the header and the parent's: a wrong one fails it.
    expectJsonOk(sh("pixir-log cat P | pixir-fork --child-id piped | pixir-log write --json", { cwd: ws }));
    const piped = readLog(ws, "piped").split("\n").filter((l) => l !== "");
    expect(JSON.parse(piped[0]!).data.prefix_digest).toBe(JSON.parse(fast[0]!).data.prefix_digest);
    expect(piped.length).toBe(fast.length);
    for (let k = 1; k < fast.length; k++) expect(body(piped[k]!)).toBe(body(fast[k]!));
  });
});
