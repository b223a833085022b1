// SHA-256 (FIPS 180-4) of short messages, written out in TypeScript for derived ids (ids.ts). A fork
// derives one id per inherited Event from a ~40-byte key; node:crypto spends microseconds per call on
// making a hash object, which is most of a fork's copying pass. Long inputs still go to node:crypto.

/** The first 32 bits of the fractional parts of the roots of the first primes (§4.2.2, §5.3.3). */
function rootFractions(count: number, root: (p: number) => number): Int32Array {
  const out = new Int32Array(count);
  for (let p = 2, n = 0; n < count; p++) {
    let prime = true;
    for (let d = 2; d * d <= p; d++) if (p % d === 0) prime = false;
    if (!prime) continue;
    const r = root(p);
    out[n++] = Math.floor((r - Math.floor(r)) * 2 ** 32) | 0;
  }
  return out;
}

const K = rootFractions(64, Math.cbrt);
const H0 = rootFractions(8, Math.sqrt);
const W = new Int32Array(64);
const H = new Int32Array(8);
const BLOCK = new Uint8Array(64);

function compress(block: Uint8Array, at: number): void {
  for (let t = 0; t < 16; t++) {
    const i = at + t * 4;
    W[t] = (block[i]! << 24) | (block[i + 1]! << 16) | (block[i + 2]! << 8) | block[i + 3]!;
  }
  for (let t = 16; t < 64; t++) {
    const w15 = W[t - 15]!;
    const w2 = W[t - 2]!;
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[t] = (W[t - 16]! + s0 + W[t - 7]! + s1) | 0;
  }
  let a = H[0]!, b = H[1]!, c = H[2]!, d = H[3]!, e = H[4]!, f = H[5]!, g = H[6]!, h = H[7]!;
  for (let t = 0; t < 64; t++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[t]! + W[t]!) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

/**
 * SHA-256 of `msg[0, n)` into `out` (32 bytes). Meant for short keys: the message is hashed from `msg`
 * in place and only its padded tail is copied.
 */
export function sha256Into(msg: Uint8Array, out: Uint8Array, n = msg.length): Uint8Array {
  H.set(H0);
  let at = 0;
  for (; at + 64 <= n; at += 64) compress(msg, at);
  const rest = n - at;
  BLOCK.fill(0);
  for (let i = 0; i < rest; i++) BLOCK[i] = msg[at + i]!;
  BLOCK[rest] = 0x80;
  if (rest >= 56) {
    compress(BLOCK, 0);
    BLOCK.fill(0);
  }
  // The length in bits as a 64-bit big-endian integer; messages here are far below 2^53 bits.
  const bits = n * 8;
  const high = Math.floor(bits / 2 ** 32);
  for (let i = 0; i < 4; i++) {
    BLOCK[56 + i] = (high >>> (24 - 8 * i)) & 0xff;
    BLOCK[60 + i] = (bits >>> (24 - 8 * i)) & 0xff;
  }
  compress(BLOCK, 0);
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    out[i * 4] = v >>> 24;
    out[i * 4 + 1] = (v >>> 16) & 0xff;
    out[i * 4 + 2] = (v >>> 8) & 0xff;
    out[i * 4 + 3] = v & 0xff;
  }
  return out;
}
