// summarize.md §3.3: the one truncation rule, shared by summaries, compaction and error details.

// Made on first use: creating a Segmenter loads ICU's break data, about 15 ms that every command
// would otherwise pay at start-up although only a cut text needs it.
let segmenter: Intl.Segmenter | undefined;

/** Replace lone surrogates with U+FFFD so the text can be encoded as UTF-8. */
export function wellFormed(s: string): string {
  return s.isWellFormed() ? s : s.toWellFormed();
}

/** Longest whole-grapheme prefix within `max` UTF-8 bytes, plus a marker naming the cut. */
export function truncate(input: string, max: number): string {
  const s = wellFormed(input);
  const total = Buffer.byteLength(s, "utf8");
  if (total <= max) return s;
  return `${s.slice(0, graphemeCut(s, max))}\n…[truncated, showing up to ${max} of ${total} bytes]`;
}

/**
 * The UTF-16 length of the longest whole-grapheme prefix of `s` (well formed) within `max` UTF-8 bytes.
 * The longest prefix of whole code points that fits ends at `c`; the grapheme cluster holding the code
 * unit at `c` does not fit, and every cluster before it does, so the answer is where that cluster
 * starts. Only that one boundary is asked of the segmenter, however long the text.
 */
function graphemeCut(s: string, max: number): number {
  // Every code unit takes at least one byte, so the first max + 1 units hold the byte cut.
  const head = Buffer.from(s.slice(0, max + 1), "utf8");
  let end = Math.min(max, head.length);
  while (end > 0 && (head[end]! & 0xc0) === 0x80) end--; // back to the start of a code point
  const c = head.toString("utf8", 0, end).length;
  if (c >= s.length) return s.length;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return segmenter.segment(s).containing(c)!.index;
}
