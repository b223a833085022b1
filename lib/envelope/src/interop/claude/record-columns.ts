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
 * The first record of each key (`keyOf`) among a file's records: slots of an Int32Array holding a record's
 * place + 1 (open addressing, at most half full), the records themselves the table's entries. A Map of
 * 187,853 uuids held 7 MB in the heap and left as much garbage as it grew (docs/performance.md, "Round 6");
 * this holds 4 bytes a slot outside it. Every record added must be `records[record.index]`.
 */
export class PlaceIndex<R extends Placed> {
  private slots = new Int32Array(1024);
  private count = 0;

  constructor(
    private readonly records: readonly R[],
    private readonly keyOf: (r: R) => string | null,
  ) {}

  get size(): number {
    return this.count;
  }

  get(key: string): R | undefined {
    const mask = this.slots.length - 1;
    for (let i = hashOf(key) & mask; ; i = (i + 1) & mask) {
      const slot = this.slots[i]!;
      if (slot === 0) return undefined;
      const r = this.records[slot - 1]!;
      if (this.keyOf(r) === key) return r;
    }
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Its keys and records, in place order. */
  *entries(): IterableIterator<[string, R]> {
    const places = this.slots.filter((slot) => slot !== 0).sort();
    for (const slot of places) {
      const r = this.records[slot - 1]!;
      yield [this.keyOf(r)!, r];
    }
  }

  /** `r` as the record of its key, unless one is there already (the first stays). */
  add(r: R): void {
    if (this.keyOf(r) === null || this.records[r.index] !== r) throw new Error("PlaceIndex: a keyed record of its records only");
    if ((this.count + 1) * 2 > this.slots.length) this.grow();
    if (this.put(this.slots, r)) this.count++;
  }

  private put(slots: Int32Array, r: R): boolean {
    const key = this.keyOf(r)!;
    const mask = slots.length - 1;
    for (let i = hashOf(key) & mask; ; i = (i + 1) & mask) {
      const slot = slots[i]!;
      if (slot === 0) {
        slots[i] = r.index + 1;
        return true;
      }
      if (this.keyOf(this.records[slot - 1]!) === key) return false;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Int32Array(old.length * 2);
    for (const slot of old) if (slot !== 0) this.put(this.slots, this.records[slot - 1]!);
  }
}

/** The first chain record of each uuid. */
export class UuidIndex<R extends Keyed> extends PlaceIndex<R> implements ByUuid<R> {
  constructor(records: readonly R[]) {
    super(records, uuidOf);
  }
}

const uuidOf = (r: Keyed): string | null => r.uuid;

/** FNV-1a over the UTF-16 code units of `s`. */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
