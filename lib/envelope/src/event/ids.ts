// envelope-and-log.md §4: generated ids. Fresh ids are monotonic ULIDs; derived ids are reproducible.
import { createHash, hash, randomBytes } from "node:crypto";
import { monotonicFactory } from "ulid";

export const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * Made at the first fresh id: making it looks for a random source (globalThis.crypto, which loads Node's Web
 * Crypto), a few milliseconds of every start of a process that makes no id, such as a search.
 */
let monotonic: ReturnType<typeof monotonicFactory> | undefined;

/** A fresh ULID; ids made by one process sort in the order they were made. */
export function newUlid(now: number = Date.now()): string {
  monotonic ??= monotonicFactory();
  return monotonic(now);
}

const MAX_TIME = 2 ** 48 - 1;

/** The time part: 10 Crockford characters of the clamped milliseconds, as ASCII bytes written to `out` at `at`. */
function encodeTimeInto(ms: number, out: Uint8Array, at: number): void {
  let t = Math.min(Math.max(Math.floor(ms), 0), MAX_TIME);
  for (let i = 9; i >= 0; i--) {
    out[at + i] = CROCKFORD_BYTES[t % 32]!;
    t = Math.floor(t / 32);
  }
}

/** The first 80 bits of `bytes` as 16 Crockford characters (most significant first), written to `out` at `at`. */
function encodeBitsInto(bytes: Uint8Array, out: Uint8Array, at: number): void {
  let acc = 0;
  let bits = 0;
  let i = 0;
  for (let c = 0; c < 16; c++) {
    if (bits < 5) {
      acc = ((acc << 8) | bytes[i++]!) & 0xffff;
      bits += 8;
    }
    out[at + c] = CROCKFORD_BYTES[(acc >> (bits - 5)) & 31]!;
    bits -= 5;
  }
}

const CROCKFORD_BYTES = Buffer.from(CROCKFORD, "latin1");

let hourKey = "";
let hourMs = Number.NaN;
const digitAt = (s: string, i: number) => s.charCodeAt(i) - 0x30;
const twoDigits = (s: string, i: number) => {
  const a = digitAt(s, i);
  const b = digitAt(s, i + 1);
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
};

/**
 * Date.parse(ts), quick for the form our writers use (`2026-07-20T10:02:53.700Z`): the hour is parsed
 * once and minutes, seconds and milliseconds are added to it. Anything else goes to Date.parse.
 */
export function timestampMillis(ts: string): number {
  if (ts.length === 24 && ts.charCodeAt(13) === 0x3a && ts.charCodeAt(16) === 0x3a && ts.charCodeAt(19) === 0x2e && ts.charCodeAt(23) === 0x5a) {
    const hour = twoDigits(ts, 11);
    const minutes = twoDigits(ts, 14);
    const seconds = twoDigits(ts, 17);
    const ms = twoDigits(ts, 20);
    const msLast = digitAt(ts, 22);
    if (hour >= 0 && hour < 24 && minutes >= 0 && minutes < 60 && seconds >= 0 && seconds < 60 && ms >= 0 && msLast >= 0 && msLast <= 9) {
      const key = ts.slice(0, 13);
      if (key !== hourKey) {
        hourKey = key;
        hourMs = Date.parse(`${key}:00:00.000Z`);
      }
      if (!Number.isNaN(hourMs)) return hourMs + minutes * 60_000 + seconds * 1000 + ms * 10 + msLast;
    }
  }
  return Date.parse(ts);
}

const ID_SCRATCH = Buffer.alloc(26);

/** derivedUlid(key, ts): time from ts (0 when unparseable), randomness from sha256(key). */
export function derivedUlid(key: string, ts: unknown): string {
  const parsed = typeof ts === "string" ? timestampMillis(ts) : NaN;
  encodeTimeInto(Number.isNaN(parsed) ? 0 : parsed, ID_SCRATCH, 0);
  encodeBitsInto(hash("sha256", key, "buffer"), ID_SCRATCH, 10);
  return ID_SCRATCH.toString("latin1");
}

/**
 * derivedUlid of the key whose UTF-8 bytes are `key[0, length)`, written as 26 ASCII bytes to `out` at
 * `at`, with the ts given as the UTF-8 bytes `line[tsStart, tsEnd)`: a fork writes each inherited line's
 * id into its copy (its keys `fork:<header id>:<k>` differ only in k), with no string made.
 */
export function derivedUlidInto(out: Uint8Array, at: number, key: Uint8Array, length: number, line: Uint8Array, tsStart: number, tsEnd: number): void {
  const parsed = timestampMillisOfBytes(line, tsStart, tsEnd);
  encodeTimeInto(Number.isNaN(parsed) ? 0 : parsed, out, at);
  encodeBitsInto(hash("sha256", key.subarray(0, length), "buffer"), out, at + 10);
}

const hourBytes = new Uint8Array(13);
let hourBytesMs = Number.NaN;
let hourBytesKnown = false;
const twoDigitsAt = (b: Uint8Array, i: number) => {
  const x = b[i]! - 0x30;
  const y = b[i + 1]! - 0x30;
  return x >= 0 && x <= 9 && y >= 0 && y <= 9 ? x * 10 + y : -1;
};

/** timestampMillis of the UTF-8 text `b[s, e)`, quick for our writers' form and for hours seen last. */
function timestampMillisOfBytes(b: Uint8Array, s: number, e: number): number {
  if (e - s === 24 && b[s + 13] === 0x3a && b[s + 16] === 0x3a && b[s + 19] === 0x2e && b[s + 23] === 0x5a) {
    const hour = twoDigitsAt(b, s + 11);
    const minutes = twoDigitsAt(b, s + 14);
    const seconds = twoDigitsAt(b, s + 17);
    const ms = twoDigitsAt(b, s + 20);
    const msLast = b[s + 22]! - 0x30;
    if (hour >= 0 && hour < 24 && minutes >= 0 && minutes < 60 && seconds >= 0 && seconds < 60 && ms >= 0 && msLast >= 0 && msLast <= 9) {
      let same = hourBytesKnown;
      for (let i = 0; same && i < 13; i++) same = hourBytes[i] === b[s + i];
      if (!same) {
        let key = "";
        for (let i = 0; i < 13; i++) key += String.fromCharCode(b[s + i]!);
        // The hour's own checks (and any non-ASCII byte) are left to timestampMillis.
        hourBytes.set(b.subarray(s, s + 13));
        hourBytesKnown = true;
        hourBytesMs = /^[\x00-\x7f]*$/.test(key) ? timestampMillis(`${key}:00:00.000Z`) : Number.NaN;
      }
      if (!Number.isNaN(hourBytesMs)) return hourBytesMs + minutes * 60_000 + seconds * 1000 + ms * 10 + msLast;
    }
  }
  return timestampMillis(Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("utf8", s, e));
}


/** `n` random bytes as lowercase hex: temp-file suffixes, lease holder ids. */
/** The SHA-256 of a text (UTF-8) or bytes, in hex: the short names derived from ids too long or unsafe to keep. */
export const sha256Hex = (s: string | Uint8Array): string => createHash("sha256").update(s).digest("hex");

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}
