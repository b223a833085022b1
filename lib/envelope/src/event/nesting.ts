// envelope-and-log.md §7: how deep a line's JSON may nest. A rule on the JSON text alone, used by every
// reader (the Log's decode, the stdin check, the byte-level checker, the importers).

/**
 * JSON nested deeper than this is refused (`nesting_too_deep`). JSON.parse copes with any depth, but
 * every stage that serialises, digests or summarises an Event recurses, and V8 runs out of stack a few
 * thousand levels down: refusing on decode keeps all of them safe.
 */
export const MAX_NESTING_DEPTH = 1000;

/**
 * Whether the JSON text in `bytes` nests arrays and objects deeper than `max`. Cheap for ordinary
 * lines: a line shorter than `max`, or with at most `max` brackets, cannot be that deep.
 */
export function nestsDeeperThan(bytes: Buffer, max = MAX_NESTING_DEPTH): boolean {
  if (bytes.length <= max) return false;
  let opens = 0;
  for (let i = bytes.indexOf(0x7b); i !== -1 && opens <= max; i = bytes.indexOf(0x7b, i + 1)) opens++;
  for (let i = bytes.indexOf(0x5b); i !== -1 && opens <= max; i = bytes.indexOf(0x5b, i + 1)) opens++;
  if (opens <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
