// InputStream: Events one at a time for the first lines, then the rest of the same stream as blocks of
// bytes (a fork stream's header, then its many lines). Nothing may be lost, repeated or misnumbered
// where the two ways meet, whatever the chunking of the input.
import { describe, expect, it } from "vitest";
import { InputStream } from "../../src/lines/input.js";

const line = (seq: number) => `{"id":"e${seq}","session_id":"s","seq":${seq},"ts":"2026-01-01T00:00:00Z","type":"user_message","data":{"text":"${"x".repeat(seq % 5)}"}}`;

async function* chunked(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, "utf8");
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, Math.min(at + size, bytes.length));
}

/** The rest of the stream as (physical line number, text) pairs of its non-blank lines. */
async function restLines(stream: InputStream): Promise<Array<[number, string, boolean]>> {
  const out: Array<[number, string, boolean]> = [];
  let lineNo = stream.linesRead;
  for await (const block of stream.restBlocks()) {
    for (let s = block.start; s < block.end; ) {
      let e = block.tail ? block.end : block.bytes.indexOf(0x0a, s);
      lineNo++;
      if (e > s) out.push([lineNo, block.bytes.toString("utf8", s, e), block.tail]);
      s = e + 1;
      if (block.tail) e = block.end;
    }
  }
  return out;
}

describe("InputStream", () => {
  // Lines 1 and 2 are read as Events; the rest, with blank lines and a last line without `\n`, as blocks.
  const text = `${line(0)}\n\n${line(1)}\n${line(2)}\n\n\n${line(3)}\n${line(4)}`;
  for (const size of [1, 7, 64, 1 << 20]) {
    it(`hands over the rest as blocks right after the Events taken (chunks of ${size} bytes)`, async () => {
      const stream = new InputStream(chunked(text, size));
      expect((await stream.peek())!.value.seq).toBe(0);
      const first = (await stream.next())!;
      expect([first.lineNo, first.value.seq]).toEqual([1, 0]);
      const second = (await stream.next())!;
      expect([second.lineNo, second.value.seq]).toEqual([3, 1]);
      expect(await restLines(stream)).toEqual([
        [4, line(2), false],
        [7, line(3), false],
        [8, line(4), true],
      ]);
    });
  }

  it("refuses to hand over blocks while a peeked Event has not been taken", async () => {
    const stream = new InputStream(chunked(`${line(0)}\n${line(1)}\n`, 5));
    await stream.peek();
    await expect(restLines(stream)).rejects.toThrow(/peeked/);
  });

  it("numbers Events and refuses a bad line by its physical line, blank lines included", async () => {
    const stream = new InputStream(chunked(`\n${line(0)}\n\n{"type":\n`, 3));
    expect((await stream.next())!.lineNo).toBe(2);
    await expect(stream.next()).rejects.toMatchObject({ kind: "corrupt_log_line", details: { reason: "invalid_json", line: 4 } });
  });
});
