// A Claude record's uuid kept as four 32-bit numbers rather than a string: a large unit holds one record
// per line, and the 36-character string was 56 bytes of each (docs/performance.md, "Round 12"). Only the
// canonical form (8-4-4-4-12 lowercase hex digits, what Claude Code writes) is packed, so the string made
// again is the one read, character for character; any other uuid is kept as its string.

/** The four words of the uuid packed last (packUuid). */
export const UUID_WORDS = new Int32Array(4);

const HEX_CODES = [..."0123456789abcdef"].map((c) => c.charCodeAt(0));
/** The uuid's characters as they are made (uuidText): one array, reused. */
const CODES: number[] = new Array<number>(36).fill(0x2d);

/** The value of a lowercase hex digit, or -1. */
function nibble(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  return -1;
}

/** `s` into UUID_WORDS when it is a uuid in the canonical form; false (UUID_WORDS unspecified) when it is not. */
export function packUuid(s: string): boolean {
  if (s.length !== 36) return false;
  let word = 0;
  let digits = 0;
  for (let i = 0; i < 36; i++) {
    const code = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (code !== 0x2d) return false;
      continue;
    }
    const v = nibble(code);
    if (v < 0) return false;
    word = (word << 4) | v;
    if (++digits % 8 === 0) UUID_WORDS[digits / 8 - 1] = word;
  }
  return true;
}

/** The 8-4-4-4-12 text of four words (packUuid's inverse). */
export function uuidText(w0: number, w1: number, w2: number, w3: number): string {
  put(w0, 0);
  put(w1, 9);
  put(w2, 19);
  put(w3, 28);
  return String.fromCharCode.apply(null, CODES);
}

/** The eight digits of `w` into CODES from `at`, past the dash four digits in when it has one (9, 19). */
function put(w: number, at: number): void {
  const dash = at === 9 || at === 19 ? 4 : -1;
  for (let i = 0, shift = 28; i < 8; i++, shift -= 4) CODES[at + i + (dash >= 0 && i >= dash ? 1 : 0)] = HEX_CODES[(w >>> shift) & 15]!;
}
