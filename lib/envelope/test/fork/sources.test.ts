// fork.md §4.2: the four parent sources (fork/parent-log.ts, parent-loader.ts, parent-stdin-file.ts,
// parent-pipe.ts) feed one copy routine, and must give the child the same bytes: those of the plain rule,
// inheritedItem + serializeEvent over the parent's Events. Parents are generated, in our writers' layout
// and mutated into other forms the reading rules accept (envelope keys in another order, a null id,
// whitespace), which the byte paths hand to the loader's and the pipe's way.
import { closeSync, mkdirSync, mkdtempSync, openSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { decodeValue, isLineProblem, serializeEvent, type PixirEvent } from "../../src/event/envelope.js";
import type { ParentSource } from "../../src/fork/fork-plan.js";
import { forkHeader, forkStreamLines, parentFromLog, parentFromStdin } from "../../src/fork/fork.js";
import { parentThroughLoader } from "../../src/fork/parent-loader.js";
import { parentFromOurLog } from "../../src/fork/parent-log.js";
import { parentFromPipe } from "../../src/fork/parent-pipe.js";
import { parentFromStdinFile } from "../../src/fork/parent-stdin-file.js";
import { inheritedItem } from "../../src/store/loader.js";
import { isReplayType } from "../../src/event/vocabulary.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function workspaceWith(log: string): string {
  const ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), "pixir-fork-sources-")));
  dirs.push(ws);
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  writeFileSync(path.join(ws, ".pixir", "sessions", "P.ndjson"), log);
  return ws;
}

const FORK_ID = "01J00000000000000000000000";
const CHILD = "C";

// ---------------------------------------------------------------------------------------------
// Generated parents

const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: "grapheme-composite", maxLength: 8 }), fc.constantFrom("", "é\n🙂", 'q"uote\\', "\u0001\t", "a/b.ts"));
const call = fc.constantFrom("c1", "c2", "c3");
const eventData = fc.oneof(
  fc.record({ type: fc.constant("user_message"), data: fc.record({ text }) }),
  fc.record({ type: fc.constant("assistant_message"), data: fc.record({ text, z: fc.integer(), a: fc.boolean() }, { requiredKeys: ["text"] }) }),
  fc.record({ type: fc.constant("tool_call"), data: fc.record({ call_id: call, name: fc.constantFrom("read", "edit"), args: fc.record({ path: text }) }) }),
  fc.record({ type: fc.constant("tool_result"), data: fc.record({ call_id: call, ok: fc.boolean(), output: text }) }),
  fc.record({ type: fc.constant("provider_usage"), data: fc.record({ input: fc.nat(), output: fc.nat() }) }),
);

/** How a line is written: as our writers write it, or in another form a reader accepts. */
type Form = "ours" | "keys_reversed" | "null_id" | "spaced";
const form = fc.constantFrom<Form>("ours", "ours", "ours", "keys_reversed", "null_id", "spaced");

const parents = (forms: fc.Arbitrary<Form>) =>
  fc.array(fc.tuple(eventData, forms), { minLength: 1, maxLength: 40 }).chain((items) =>
    fc.record({ items: fc.constant(items), toSeq: fc.option(fc.nat({ max: items.length - 1 }), { nil: undefined }), cuts: fc.array(fc.nat(), { maxLength: 6 }) }),
  );

function lineOf(n: number, e: { type: string; data: Record<string, unknown> }, how: Form): string {
  const event: PixirEvent = { id: `e${n}`, session_id: "P", seq: n, ts: `2026-06-30T00:00:${String(n % 60).padStart(2, "0")}Z`, type: e.type as PixirEvent["type"], data: e.data as PixirEvent["data"] };
  const ours = serializeEvent(event).trimEnd();
  if (how === "ours") return ours;
  const parsed = JSON.parse(ours) as Record<string, unknown>;
  if (how === "null_id") return JSON.stringify({ ...parsed, id: null });
  if (how === "spaced") return JSON.stringify(parsed, null, 1).replaceAll("\n", "");
  return JSON.stringify(Object.fromEntries(Object.entries(parsed).reverse()));
}

// ---------------------------------------------------------------------------------------------
// The child's inherited lines, from a source and from the plain rule

async function collect(chunks: AsyncIterable<string | Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.isBuffer(c) ? Buffer.from(c) : Buffer.from(c, "utf8"));
  return Buffer.concat(parts).toString("utf8");
}

/** The inherited lines a source gives the child of header FORK_ID, by its block copy when it has one, else line by line. */
async function childLines(ws: string, parent: ParentSource): Promise<string> {
  try {
    if (parent.inheritedBlocks !== undefined) return await collect(parent.inheritedBlocks(FORK_ID, CHILD));
    const header = { ...forkHeader(ws, parent.parentId, CHILD, parent.facts, "replay_v1"), id: FORK_ID };
    const all = await collect(forkStreamLines(ws, parent, CHILD, "replay_v1", header));
    return all.slice(all.indexOf("\n") + 1);
  } finally {
    parent.dispose();
  }
}

/** fork.md §4.2 read plainly: each replay Event up to to_seq, renumbered from 1 (inheritedItem, serializeEvent). */
function plainChild(lines: string[], toSeq: number | undefined): string {
  const events = lines.map((l) => {
    const d = decodeValue(JSON.parse(l));
    if (isLineProblem(d)) throw new Error(`generated a bad line: ${l}`);
    return d.event;
  });
  const last = toSeq ?? Math.max(...events.map((e) => e.seq ?? -1));
  let k = 0;
  return events
    .filter((e) => isReplayType(e.type) && e.seq !== null && e.seq <= last)
    .map((e) => {
      const child = inheritedItem({ event: e }, FORK_ID, CHILD, ++k);
      return serializeEvent(child.event, child.dataText);
    })
    .join("");
}

/** The parent's bytes as a pipe delivers them: cut at `cuts`. */
async function* piped(bytes: Buffer, cuts: number[]): AsyncGenerator<Buffer> {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const c of [...at, bytes.length]) {
    if (c > from) yield bytes.subarray(from, c);
    from = c;
  }
}

function stdinFile(ws: string): { fd: number; [Symbol.asyncIterator](): AsyncIterator<Buffer> } {
  const fd = openSync(path.join(ws, ".pixir", "sessions", "P.ndjson"), "r");
  return {
    fd,
    async *[Symbol.asyncIterator]() {
      throw new Error("a regular file on stdin is read by position, not as a stream");
    },
  };
}

// ---------------------------------------------------------------------------------------------

describe("every parent source gives the child the same bytes (fork.md §4.2)", () => {
  it("a Log in our layout: each of the four sources, and the plain rule", async () => {
    await fc.assert(
      fc.asyncProperty(parents(fc.constant<Form>("ours")), async ({ items, toSeq, cuts }) => {
        const lines = items.map(([e, how], n) => lineOf(n, e, how));
        const log = `${lines.join("\n")}\n`;
        const ws = workspaceWith(log);
        const expected = plainChild(lines, toSeq);
        const ours = await parentFromOurLog(ws, "P", toSeq);
        expect(ours, "a Log in our layout takes the byte path").not.toBeNull();
        const facts = ours!.facts;
        const loader = await parentThroughLoader(ws, "P", toSeq, "pixir fork");
        const stdin = stdinFile(ws);
        let file: ParentSource | null;
        try {
          file = await parentFromStdinFile(stdin.fd, toSeq, { start: 0, length: 0 });
          expect(file, "a file in our layout is read in place").not.toBeNull();
          const pipe = await parentFromPipe(piped(Buffer.from(log), cuts), toSeq);
          const children = [await childLines(ws, ours!), await childLines(ws, loader), await childLines(ws, file!), await childLines(ws, pipe)];
          expect(children).toEqual([expected, expected, expected, expected]);
          for (const p of [loader, file!, pipe]) expect([p.facts.eventCount, p.facts.prefixDigest, p.facts.toSeq]).toEqual([facts.eventCount, facts.prefixDigest, facts.toSeq]);
        } finally {
          closeSync(stdin.fd);
        }
      }),
      { numRuns: Number(process.env.FORK_SOURCES_RUNS ?? 60) },
    );
  });

  it("a Log in other forms (mutated lines): the byte paths decline, and every way gives the plain rule's bytes", async () => {
    await fc.assert(
      fc.asyncProperty(parents(form), async ({ items, toSeq, cuts }) => {
        const lines = items.map(([e, how], n) => lineOf(n, e, how));
        const log = `${lines.join("\n")}\n`;
        const ws = workspaceWith(log);
        const expected = plainChild(lines, toSeq);
        const allOurs = items.every(([, how]) => how === "ours");
        expect((await parentFromOurLog(ws, "P", toSeq)) !== null).toBe(allOurs);
        const stdin = stdinFile(ws);
        try {
          const children = [
            await childLines(ws, await parentFromLog(ws, "P", toSeq, "pixir fork")),
            await childLines(ws, await parentThroughLoader(ws, "P", toSeq, "pixir fork")),
            await childLines(ws, await parentFromStdin(stdin, toSeq)),
            await childLines(ws, await parentFromPipe(piped(Buffer.from(log), cuts), toSeq)),
          ];
          expect(children).toEqual([expected, expected, expected, expected]);
        } finally {
          closeSync(stdin.fd);
        }
      }),
      { numRuns: Number(process.env.FORK_SOURCES_RUNS ?? 60) },
    );
  });
});
