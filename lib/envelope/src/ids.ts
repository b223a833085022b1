// envelope-and-log.md §4: generated ids. Fresh ids are monotonic ULIDs; derived ids are reproducible.
import { createHash, randomBytes } from "node:crypto";
import { monotonicFactory } from "ulid";

export const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const monotonic = monotonicFactory();

/** A fresh ULID; ids made by one process sort in the order they were made. */
export function newUlid(now: number = Date.now()): string {
  return monotonic(now);
}

const MAX_TIME = 2 ** 48 - 1;

function encodeTime(ms: number): string {
  let t = Math.min(Math.max(Math.floor(ms), 0), MAX_TIME);
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/** First `chars` base32 characters of the bytes, most significant bit first (80 bits = 16 chars). */
function encodeBits(bytes: Uint8Array, chars: number): string {
  let out = "";
  let acc = 0;
  let bits = 0;
  let i = 0;
  while (out.length < chars) {
    if (bits < 5) {
      acc = ((acc << 8) | bytes[i++]!) & 0xffff;
      bits += 8;
    }
    out += CROCKFORD[(acc >> (bits - 5)) & 31];
    bits -= 5;
  }
  return out;
}

/** derivedUlid(key, ts): time from ts (0 when unparseable), randomness from sha256(key). */
export function derivedUlid(key: string, ts: unknown): string {
  const parsed = typeof ts === "string" ? Date.parse(ts) : NaN;
  const time = encodeTime(Number.isNaN(parsed) ? 0 : parsed);
  const digest = createHash("sha256").update(key, "utf8").digest();
  return time + encodeBits(digest, 16);
}

/** `n` random bytes as lowercase hex: temp-file suffixes, lease holder ids. */
export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}
