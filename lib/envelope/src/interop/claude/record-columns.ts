// What an import plan keeps per record (its Log, its ts, its last seq, whether a walk met it), as columns
// indexed by the record's place among its file's records (Placed.index), not as hash tables keyed by
// the record: a slot of an array costs 8 bytes, where an entry of a Map costs some 30 and its table grows
// in steps of two (docs/performance.md, "Round 5"). A record with no place (one made alone, as tests do) is
// kept in a Map beside the column, so the answers do not depend on where a record came from.

/** A record by its place among its file's records (transcript.ts Placed; -1: made alone). */
export interface Placed {
  readonly index: number;
}

/** A Map from records to values, the subset of Map's API the plan uses. */
export class RecordMap<V> {
  /** Holey while it fills: a column set in place order stays dense; a few far slots stay a sparse array. */
  private readonly column: Array<V | undefined>;
  private readonly alone = new Map<Placed, V>();
  private count = 0;

  /**
   * `places`: made at its full length at once, for a column of (nearly) every record of a file: grown by
   * one slot at a time, a column of n records left 2n slots of garbage behind it (docs/performance.md,
   * "Round 6").
   */
  constructor(places = 0) {
    this.column = places > 0 ? new Array<V | undefined>(places) : [];
  }

  get size(): number {
    return this.count + this.alone.size;
  }

  get(r: Placed): V | undefined {
    return r.index >= 0 ? this.column[r.index] : this.alone.get(r);
  }

  has(r: Placed): boolean {
    return this.get(r) !== undefined;
  }

  /** `v` must not be undefined (undefined is a free slot). */
  set(r: Placed, v: V): this {
    if (r.index < 0) {
      this.alone.set(r, v);
      return this;
    }
    if (this.column[r.index] === undefined) this.count++;
    this.column[r.index] = v;
    return this;
  }
}

/**
 * The length of a column for `recs` (in place order) made at once: their last place + 1 when they are at
 * least half the places up to it, else 0 (a column grown as it is set, sparse if they are few and far).
 */
export function denseSpan(recs: readonly Placed[]): number {
  const span = (recs.at(-1)?.index ?? -1) + 1;
  return recs.length * 2 >= span ? span : 0;
}

/** A Set of records: one bit each by place (a Uint8Array grown as needed). */
export class RecordSet {
  private bits = new Uint8Array(0);
  private readonly alone = new Set<Placed>();

  constructor(records: Iterable<Placed> = []) {
    for (const r of records) this.add(r);
  }

  has(r: Placed): boolean {
    if (r.index < 0) return this.alone.has(r);
    const byte = r.index >> 3;
    return byte < this.bits.length && (this.bits[byte]! & (1 << (r.index & 7))) !== 0;
  }

  add(r: Placed): this {
    if (r.index < 0) {
      this.alone.add(r);
      return this;
    }
    const byte = r.index >> 3;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[byte]! |= 1 << (r.index & 7);
    return this;
  }
}

/** A record of a file's records that has a uuid (a chain record). */
export interface Keyed extends Placed {
  readonly uuid: string | null;
}

/** What the plan asks of a table of records by uuid. */
export interface ByUuid<R> {
  get(uuid: string): R | undefined;
}

/**
 * The first record of each key (`keyOf`) among a file's records: an Int32Array of slots, each a record's
 * place + 1 and its key's hash (open addressing, at most three quarters full), the records themselves the
 * table's entries. A Map of 187,853 uuids held 7 MB in the heap and left as much garbage as it grew
 * (docs/performance.md, "Round 6"); this holds 8 bytes a slot outside it (2 MB). The hash kept beside the
 * place spares a lookup the records of other keys and a growth the keys' texts. Every record added must be
 * `records[record.index]`.
 */
export class PlaceIndex<R extends Placed> {
  /** Slot i: [2i] the place + 1 (0: free), [2i + 1] the key's hash. */
  private slots = new Int32Array(2 * 1024);
  private count = 0;

  constructor(
    private readonly records: readonly R[],
    private readonly keyOf: (r: R) => string | null,
  ) {}

  get size(): number {
    return this.count;
  }

  get(key: string): R | undefined {
    const place = this.placeOfKey(key);
    return place < 0 ? undefined : this.records[place];
  }

  /** The place of the record of `key`, or -1. */
  placeOfKey(key: string): number {
    const { slots } = this;
    const mask = slots.length / 2 - 1;
    const hash = hashOf(key);
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const place = slots[2 * i]!;
      if (place === 0) return -1;
      if (slots[2 * i + 1] === hash && this.keyOf(this.records[place - 1]!) === key) return place - 1;
    }
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Its keys and records, in place order. */
  *entries(): IterableIterator<[string, R]> {
    const places = this.slots.filter((v, i) => i % 2 === 0 && v !== 0).sort();
    for (const place of places) {
      const r = this.records[place - 1]!;
      yield [this.keyOf(r)!, r];
    }
  }

  /**
   * `r` as the record of its key, unless one is there already (the first stays): true when it is now.
   * `place`: where `r` is in the records (its place among its file's records unless told).
   */
  add(r: R, place = r.index): boolean {
    const key = this.keyOf(r);
    if (key === null || this.records[place] !== r) throw new Error("PlaceIndex: a keyed record of its records only");
    // At most three quarters full: the hashes in the slots keep a longer probe cheap, and a table grown
    // is garbage outside the heap until a full GC (on a 400 MB session, none runs after the read).
    if ((this.count + 1) * 8 > this.slots.length * 3) this.grow();
    const { slots } = this;
    const mask = slots.length / 2 - 1;
    const hash = hashOf(key);
    let i = hash & mask;
    for (; slots[2 * i] !== 0; i = (i + 1) & mask) {
      if (slots[2 * i + 1] === hash && this.keyOf(this.records[slots[2 * i]! - 1]!) === key) return false;
    }
    slots[2 * i] = place + 1;
    slots[2 * i + 1] = hash;
    this.count++;
    return true;
  }

  /** `place` with `hash` in the first free slot from its own (a key not there yet). */
  private put(slots: Int32Array, place: number, hash: number): void {
    const mask = slots.length / 2 - 1;
    let i = hash & mask;
    while (slots[2 * i] !== 0) i = (i + 1) & mask;
    slots[2 * i] = place;
    slots[2 * i + 1] = hash;
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0) this.put(this.slots, old[i]!, old[i + 1]!);
  }
}

/** The first chain record of each uuid. */
export class UuidIndex<R extends Keyed> extends PlaceIndex<R> implements ByUuid<R> {
  constructor(records: readonly R[]) {
    super(records, uuidOf);
  }
}

const uuidOf = (r: Keyed): string | null => r.uuid;

/** FNV-1a over the UTF-16 code units of `s` (a 32-bit integer, as an Int32Array keeps it). */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h | 0;
}
