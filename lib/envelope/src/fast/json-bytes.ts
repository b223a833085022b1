// No rule of its own: the byte values the twins in this folder share.
// The bytes of JSON's structure, for the readers that work on a line's bytes (line-head.ts,
// line-check.ts, string-scan.ts, tool-call-bytes.ts, fork/child-lines.ts, fork/parent-bytes.ts).
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const NEWLINE = 0x0a;
