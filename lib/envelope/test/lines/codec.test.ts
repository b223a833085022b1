import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { PixirError, splitLines } from "@pixir/envelope";
import { MAX_LINE_BYTES, streamLineBlocks, type RawLine } from "../../src/lines/codec.js";

async function collect(chunks: Array<string | Buffer>, max?: number): Promise<RawLine[]> {
  const out: RawLine[] = [];
  for await (const l of splitLines(Readable.from(chunks.map((c) => (typeof c === "string" ? Buffer.from(c) : c))), { path: "-", maxLineBytes: max })) out.push(l);
  return out;
}

describe("splitLines", () => {
  it("splits across chunk boundaries with 1-based physical line numbers and byte offsets", async () => {
    const lines = await collect(['{"a":1}\n{"b"', ':2}\n\n{"é":3}\n', '{"tail":4}']);
    expect(lines.map((l) => [l.bytes.toString(), l.lineNo, l.offset, l.terminated])).toEqual([
      ['{"a":1}', 1, 0, true],
      ['{"b":2}', 2, 8, true],
      ['{"é":3}', 4, 17, true],
      ['{"tail":4}', 5, 26, false],
    ]);
  });
  it("keeps a \\r before \\n (JSON whitespace) and yields whitespace-only lines (they are corrupt, not blank)", async () => {
    const lines = await collect(["a\r\n   \n"]);
    expect(lines.map((l) => l.bytes.toString())).toEqual(["a\r", "   "]);
  });
  it("refuses a line longer than the limit without buffering the rest of it", async () => {
    const big = Buffer.alloc(1024 * 1024, 0x61);
    let produced = 0;
    // A 64 MiB line, produced lazily: the splitter must stop long before it is all read.
    const source = (async function* () {
      for (let i = 0; i < 64; i++) {
        produced++;
        yield big;
      }
    })();
    const run = async () => {
      for await (const _ of splitLines(source, { path: "-" })) void _;
    };
    await expect(run()).rejects.toMatchObject({ kind: "corrupt_log_line", details: { reason: "line_too_long", line: 1, path: "-" } });
    expect(produced).toBeLessThanOrEqual(MAX_LINE_BYTES / big.length + 1);
    await expect(collect(["x".repeat(11) + "\n"], 10)).rejects.toBeInstanceOf(PixirError);
  });
});

/** The lines streamLineBlocks gives, in splitLines' form (blank lines skipped), or the error it throws. */
async function blockLines(chunks: Buffer[], max?: number): Promise<Array<[string, number, boolean]> | PixirError> {
  const out: Array<[string, number, boolean]> = [];
  let lineNo = 0;
  try {
    for await (const block of streamLineBlocks(Readable.from(chunks), { path: "-", maxLineBytes: max })) {
      const b = block.bytes;
      if (block.tail) {
        out.push([b.toString("utf8", 0, block.end), ++lineNo, false]);
        continue;
      }
      for (let s = 0; s < block.end; ) {
        const e = b.indexOf(0x0a, s);
        lineNo++;
        if (e > s) out.push([b.toString("utf8", s, e), lineNo, true]);
        s = e + 1;
      }
    }
  } catch (err) {
    return err as PixirError;
  }
  return out;
}

async function splitOrError(chunks: Buffer[], max?: number): Promise<Array<[string, number, boolean]> | PixirError> {
  try {
    return (await collect(chunks, max)).map((l) => [l.bytes.toString(), l.lineNo, l.terminated]);
  } catch (err) {
    return err as PixirError;
  }
}

describe("streamLineBlocks", () => {
  it("gives the lines splitLines gives, whatever the chunking, lines longer than its buffer included", async () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    const lines = ['{"a":1}', "", '{"é":"ü"}', "x".repeat(3 << 20), "", "", '{"b":2}', "y".repeat(1 << 20), "z".repeat((1 << 20) - 1)];
    for (const ending of ["\n", "", "\n\n"]) {
      const all = Buffer.from(lines.join("\n") + ending);
      for (let round = 0; round < 6; round++) {
        const chunks: Buffer[] = [];
        for (let at = 0; at < all.length; ) {
          const n = round === 0 ? all.length : 1 + random(round < 3 ? 70_000 : 2_000_000);
          chunks.push(all.subarray(at, at + n));
          at += n;
        }
        expect(await blockLines(chunks)).toEqual(await splitOrError(chunks));
      }
    }
  });

  it("refuses a line over the limit with splitLines' error, at its line number", async () => {
    for (const text of [`a\n\n${"x".repeat(300)}\nb\n`, `a\n${"x".repeat(300)}`, `${"x".repeat(101)}\n`]) {
      const chunks = [Buffer.from(text.slice(0, 50)), Buffer.from(text.slice(50))];
      const got = await blockLines(chunks, 100);
      expect(got).toBeInstanceOf(PixirError);
      expect(got).toEqual(await splitOrError(chunks, 100));
      expect((got as PixirError).details).toMatchObject({ reason: "line_too_long", max_line_bytes: 100 });
    }
    expect(await blockLines([Buffer.from(`${"x".repeat(100)}\n`)], 100)).toEqual([["x".repeat(100), 1, true]]);
  });
});
