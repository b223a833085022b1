// A set of ids kept as 128-bit fingerprints. fork.md §4.3 closes a call by a result anywhere in the
// prefix, so a fork's plan must remember the id of every tool_result it has passed: some 160,000 in a
// 1 GiB Log, about 13 MB as JavaScript strings in a Set, which the 128 MiB bound of `pixir fork
// --summarize` cannot spare; and a writer refuses an Event id its stream repeats (every line's id).
// As fingerprints in one typed array they take 16 bytes each (plus free slots); two different ids are
// taken for one only if all four 32-bit lanes agree.

const LANES = 4;
const MAX_LOAD = 0.7;

/** Four 32-bit hashes of the string's UTF-16 code units, each with its own constants and final mix. */
function fingerprintInto(id: string, out: Uint32Array): void {
  let a = 0x811c9dc5;
  let b = 0x9747b28c ^ id.length;
  let c = 0x85ebca6b;
  let d = 0xc2b2ae35 ^ Math.imul(id.length, 0x27d4eb2f);
  for (let i = 0; i < id.length; i++) {
    const k = id.charCodeAt(i);
    a = Math.imul(a ^ k, 0x01000193);
    b = Math.imul(b ^ k, 0x5bd1e995);
    b ^= b >>> 13;
    c = Math.imul(c + k, 0xcc9e2d51);
    c = (c << 15) | (c >>> 17);
    d = (Math.imul(d ^ k, 0x1b873593) + 0xe6546b64) | 0;
    d = (d << 13) | (d >>> 19);
  }
  out[0] = mix(a);
  out[1] = mix(b);
  out[2] = mix(c ^ a);
  out[3] = mix(d ^ b);
  // An all-zero slot marks a free one.
  if ((out[0] | out[1] | out[2] | out[3]) === 0) out[0] = 1;
}

/** MurmurHash3's finaliser: every input bit reaches every output bit. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const isFree = (slots: Uint32Array, at: number): boolean => (slots[at]! | slots[at + 1]! | slots[at + 2]! | slots[at + 3]!) === 0;

export class IdSet {
  private slots = new Uint32Array(LANES * 1024);
  private size = 0;
  private readonly key = new Uint32Array(LANES);

  has(id: string): boolean {
    fingerprintInto(id, this.key);
    return !isFree(this.slots, find(this.slots, this.key, 0));
  }

  /** Add `id`; false if it was already in the set. */
  add(id: string): boolean {
    fingerprintInto(id, this.key);
    const at = find(this.slots, this.key, 0);
    if (!isFree(this.slots, at)) return false;
    this.slots.set(this.key, at);
    if (++this.size > (this.slots.length / LANES) * MAX_LOAD) this.grow();
    return true;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Uint32Array(old.length * 2);
    for (let at = 0; at < old.length; at += LANES) {
      if (isFree(old, at)) continue;
      const to = find(this.slots, old, at);
      for (let k = 0; k < LANES; k++) this.slots[to + k] = old[at + k]!;
    }
  }
}

/** The index of the slot holding the key at `key[from..]`, or of the free slot where it would go (linear probing). */
function find(slots: Uint32Array, key: Uint32Array, from: number): number {
  const mask = slots.length / LANES - 1;
  const k0 = key[from]!;
  const k1 = key[from + 1]!;
  const k2 = key[from + 2]!;
  const k3 = key[from + 3]!;
  for (let i = k0 & mask; ; i = (i + 1) & mask) {
    const at = i * LANES;
    if (isFree(slots, at) || (slots[at] === k0 && slots[at + 1] === k1 && slots[at + 2] === k2 && slots[at + 3] === k3)) return at;
  }
}
