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

const ID_SCRATCH = Buffer.alloc(26);

/** derivedUlid(key, ts): time from ts (0 when unparseable), randomness from sha256(key). */
export function derivedUlid(key: string, ts: unknown): string {
  const parsed = typeof ts === "string" ? Date.parse(ts) : NaN;
  encodeTimeInto(Number.isNaN(parsed) ? 0 : parsed, ID_SCRATCH, 0);
  encodeBitsInto(hash("sha256", key, "buffer"), ID_SCRATCH, 10);
  return ID_SCRATCH.toString("latin1");
}

/**
 * derivedUlid of the key whose UTF-8 bytes are `key[0, length)`, written as 26 ASCII bytes to `out` at
 * `at`, with the ts given as the UTF-8 bytes `line[tsStart, tsEnd)`: a fork writes each inherited line's
 * id into its copy (its keys `fork:<header id>:<k>` differ only in k) without making the key a string.
 */
export function derivedUlidInto(out: Uint8Array, at: number, key: Uint8Array, length: number, line: Buffer, tsStart: number, tsEnd: number): void {
  const parsed = Date.parse(line.toString("utf8", tsStart, tsEnd));
  encodeTimeInto(Number.isNaN(parsed) ? 0 : parsed, out, at);
  encodeBitsInto(hash("sha256", key.subarray(0, length), "buffer"), out, at + 10);
}

/** The SHA-256 of a text (UTF-8) or bytes, in hex: the short names derived from ids too long or unsafe to keep. */
export const sha256Hex = (s: string | Uint8Array): string => createHash("sha256").update(s).digest("hex");

/** `n` random bytes as lowercase hex: temp-file suffixes, lease holder ids. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}
