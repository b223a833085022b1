import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { MAX_LINE_BYTES, PixirError, splitLines, type RawLine } from "@pixir/envelope";

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
