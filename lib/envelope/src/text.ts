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
  let used = 0;
  let end = 0;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const { segment, index } of segmenter.segment(s)) {
    const bytes = Buffer.byteLength(segment, "utf8");
    if (used + bytes > max) break;
    used += bytes;
    end = index + segment.length;
  }
  return `${s.slice(0, end)}\n…[truncated, showing up to ${max} of ${total} bytes]`;
}
