// Twin of the JavaScript string loop of line-check.ts (canonicalStringEnd), held to it by
// lib/envelope/test/fast/string-scan.test.ts.
// The inner loop of the byte check (line-check.ts): finding where a JSON string ends. Tool outputs make
// most of a Log's bytes strings, and a byte loop in JavaScript runs at well under 1 GB/s, so this is
// WebAssembly: `scan` looks at 16 bytes at a time (SIMD, about 9 GB/s) for the next `"`, `\` or
// control byte, and `string` walks a whole string with it, checking each escape as JSON.stringify writes
// escapes, so that a string full of `\n` and `\"` costs one call instead of one per escape.
// The module is a few hundred bytes, assembled below instruction by instruction; the JavaScript loop it
// replaces stays as the fallback, and the test holds the two to the same answers.

import { BACKSLASH, QUOTE } from "./json-bytes.js";

const I32 = 0x7f;
const V128 = 0x7b;

/** Unsigned LEB128, as section sizes are written. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n !== 0) byte |= 0x80;
    out.push(byte);
  } while (n !== 0);
  return out;
}

const section = (id: number, bytes: number[]): number[] => [id, ...leb(bytes.length), ...bytes];
const name = (s: string): number[] => [s.length, ...Array.from(s, (c) => c.charCodeAt(0))];

// Locals 0 and 1 are the parameters p and end; 2 is v (v128), 3 is m (i32).
const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const tee = (local: number) => [0x22, local];
const i32 = (value: number) => [0x41, ...(value === -1 ? [0x7f] : value < 64 ? [value] : [(value & 0x7f) | 0x80, value >> 7])]; // signed LEB128, -1 and 0..8191
/** i32.load8_u of the byte `offset` places after the address on the stack. */
const load8 = (offset: number) => [0x2d, 0x00, offset];
const simd = (op: number) => [0xfd, op];
const [ADD, SUB, SHL, GT_U, GE_U, LE_U, LT_U, EQ, NE, OR, CTZ] = [0x6a, 0x6b, 0x74, 0x4b, 0x4f, 0x4d, 0x49, 0x46, 0x47, 0x72, 0x68];
const [V128_LOAD, SPLAT, EQ8, LT_U8, V128_OR, BITMASK] = [0x00, 0x0f, 0x23, 0x26, 0x50, 0x64];
const [BLOCK, LOOP, IF, ELSE, END, BR, BR_IF, RETURN, CALL, VOID] = [0x02, 0x03, 0x04, 0x05, 0x0b, 0x0c, 0x0d, 0x0f, 0x10, 0x40];

/** scan(p, end): the first index in [p, end) of a `"`, a `\` or a byte below 0x20; `end` if there is none. */
const SCAN_BODY = [
  0x02, 0x01, V128, 0x01, I32, // locals: one v128, one i32
  BLOCK, VOID,
  LOOP, VOID,
  ...get(0), ...i32(16), ADD, ...get(1), GT_U, BR_IF, 1, // fewer than 16 bytes left: to the byte loop
  ...get(0), ...simd(V128_LOAD), 0x00, 0x00, ...set(2), // v = the 16 bytes at p
  ...get(2), ...i32(QUOTE), ...simd(SPLAT), ...simd(EQ8),
  ...get(2), ...i32(BACKSLASH), ...simd(SPLAT), ...simd(EQ8), ...simd(V128_OR),
  ...get(2), ...i32(0x20), ...simd(SPLAT), ...simd(LT_U8), ...simd(V128_OR),
  ...simd(BITMASK), ...tee(3), // m: one bit per byte that ends the run
  IF, VOID, ...get(0), ...get(3), CTZ, ADD, RETURN, END, // return p + (index of the first such byte)
  ...get(0), ...i32(16), ADD, ...set(0),
  BR, 0,
  END,
  END,
  BLOCK, VOID,
  LOOP, VOID,
  ...get(0), ...get(1), GE_U, BR_IF, 1,
  ...get(0), 0x2d, 0x00, 0x00, ...tee(3), // m = the byte at p (i32.load8_u)
  ...i32(QUOTE), EQ, ...get(3), ...i32(BACKSLASH), EQ, OR, ...get(3), ...i32(0x20), LT_U, OR,
  IF, VOID, ...get(0), RETURN, END,
  ...get(0), ...i32(1), ADD, ...set(0),
  BR, 0,
  END,
  END,
  ...get(1),
  END,
];

// Locals of string(): 0 and 1 are p and end; 2 is c (the byte looked at), 3 is v (an escape's value).
const FAIL = [...i32(-1), RETURN];
/** `c` is one of `chars` (on the stack: 1 or 0). */
const isOneOf = (chars: string) => Array.from(chars, (ch, k) => [...get(2), ...i32(ch.charCodeAt(0)), EQ, ...(k > 0 ? [OR] : [])]).flat();
/** `v` is one of `values`. */
const valueIsOneOf = (values: number[]) => values.map((x, k) => [...get(3), ...i32(x), EQ, ...(k > 0 ? [OR] : [])]).flat();

/**
 * string(p, end): p is just past a string's opening quote. Returns the index just past its closing quote
 * when every byte up to it is as JSON.stringify writes strings: bytes from 0x20 up other than `"` and `\`,
 * the escapes \" \\ \b \f \n \r \t, and \u00xx in lowercase for the other control characters.
 * Otherwise (or with no closing quote before end) -1.
 */
const STRING_BODY = [
  0x01, 0x02, I32, // locals: two i32
  LOOP, VOID,
  ...get(0), ...get(1), CALL, 0, ...tee(0), // p = scan(p, end)
  ...get(1), GE_U, IF, VOID, ...FAIL, END, // no closing quote
  ...get(0), ...load8(0), ...tee(2),
  ...i32(QUOTE), EQ, IF, VOID, ...get(0), ...i32(1), ADD, RETURN, END,
  ...get(2), ...i32(BACKSLASH), NE, IF, VOID, ...FAIL, END, // a control byte
  ...get(0), ...i32(1), ADD, ...get(1), GE_U, IF, VOID, ...FAIL, END,
  ...get(0), ...load8(1), ...set(2), // the escaped character
  ...isOneOf('"\\bfnrt'), IF, VOID, ...get(0), ...i32(2), ADD, ...set(0), BR, 1, END,
  ...get(2), ...i32(0x75), NE, IF, VOID, ...FAIL, END, // anything but \u
  ...get(0), ...i32(5), ADD, ...get(1), GE_U, IF, VOID, ...FAIL, END,
  // \u00hl with h in 0..1: v = h, and the escape is refused unless the bytes read 00.
  ...get(0), ...load8(2), ...i32(0x30), NE,
  ...get(0), ...load8(3), ...i32(0x30), NE, OR,
  ...get(0), ...load8(4), ...i32(0x30), SUB, ...tee(3), ...i32(1), GT_U, OR,
  IF, VOID, ...FAIL, END,
  // l: 0-9 or a-f (lowercase, as JSON.stringify writes it)
  ...get(0), ...load8(5), ...tee(2), ...i32(0x30), SUB, ...i32(9), LE_U,
  IF, I32, ...get(2), ...i32(0x30), SUB,
  ELSE, ...get(2), ...i32(0x61), SUB, ...tee(2), ...i32(5), GT_U, IF, VOID, ...FAIL, END, ...get(2), ...i32(10), ADD,
  END,
  ...get(3), ...i32(4), SHL, ADD, ...set(3),
  // \b \t \n \f \r have short forms, which JSON.stringify uses.
  ...valueIsOneOf([0x08, 0x09, 0x0a, 0x0c, 0x0d]), IF, VOID, ...FAIL, END,
  ...get(0), ...i32(6), ADD, ...set(0),
  BR, 0,
  END,
  ...i32(-1),
  END,
];

const MODULE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  ...section(1, [0x01, 0x60, 0x02, I32, I32, 0x01, I32]), // type: (i32, i32) -> i32
  ...section(3, [0x02, 0x00, 0x00]), // two functions of that type
  ...section(5, [0x01, 0x00, 0x10]), // one memory, 16 pages (1 MiB) to start
  ...section(7, [0x03, ...name("scan"), 0x00, 0x00, ...name("string"), 0x00, 0x01, ...name("memory"), 0x02, 0x00]),
  ...section(10, [0x02, ...leb(SCAN_BODY.length), ...SCAN_BODY, ...leb(STRING_BODY.length), ...STRING_BODY]),
]);

const PAGE = 64 * 1024;

/**
 * A line copied into the module's memory, so that scan() can read it: `mirror(b, s, e)` puts `b[s, e)`
 * at offset 0 (growing the memory for a long line), after which `scan(p - s, end - s) + s` is an index
 * into `b`.
 */
export interface StringKernel {
  mirror(b: Uint8Array, s: number, e: number): void;
  scan(p: number, end: number): number;
  /** string(p, end): see STRING_BODY; indices as for scan. */
  string(p: number, end: number): number;
}

/** The part of the WebAssembly API used here (the compiler's library settings do not declare it). */
interface Wasm {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: { buffer: ArrayBuffer; grow(pages: number): number }; scan: (p: number, end: number) => number; string: (p: number, end: number) => number } };
}

function instantiate(): StringKernel | null {
  try {
    const wasm = (globalThis as { WebAssembly?: Wasm }).WebAssembly;
    if (wasm === undefined || !wasm.validate(MODULE)) return null;
    const { memory, scan, string } = new wasm.Instance(new wasm.Module(MODULE)).exports;
    let view = new Uint8Array(memory.buffer);
    return {
      mirror(b, s, e) {
        if (e - s > view.length) {
          memory.grow(Math.ceil((e - s - view.length) / PAGE));
          view = new Uint8Array(memory.buffer);
        }
        view.set(b.subarray(s, e), 0);
      },
      scan,
      string,
    };
  } catch {
    return null;
  }
}

/** The kernel, or null where WebAssembly (with SIMD) is not available: then the byte check loops in JavaScript. */
export const stringKernel: StringKernel | null = instantiate();
