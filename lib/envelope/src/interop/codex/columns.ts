// Numbers a plan holds per Event or per line, in typed arrays rather than objects (lean-events.ts).
/** Entries in one chunk of a Column. */
const CHUNK_BITS = 14;
const CHUNK = 1 << CHUNK_BITS;
const FIRST = 64;

/** A growable column of numbers, in chunks: past its first chunk it grows without copies, and wastes at most one chunk. */
export class Column {
  length = 0;
  private readonly chunks: Array<Float64Array | Uint32Array | Int32Array> = [];
  constructor(private readonly make: (n: number) => Float64Array | Uint32Array | Int32Array) {}
  push(v: number): void {
    const [c, i] = [this.length >>> CHUNK_BITS, this.length & (CHUNK - 1)];
    // The first chunk grows from a few entries, so that a small Log's columns stay small.
    if (c === this.chunks.length) this.chunks.push(this.make(c === 0 ? FIRST : CHUNK));
    else if (c === 0 && i === this.chunks[0]!.length) {
      const grown = this.make(Math.min(2 * i, CHUNK));
      grown.set(this.chunks[0]!);
      this.chunks[0] = grown;
    }
    this.chunks[c]![i] = v;
    this.length++;
  }
  get(i: number): number {
    return this.chunks[i >>> CHUNK_BITS]![i & (CHUNK - 1)]!;
  }
  set(i: number, v: number): void {
    this.chunks[i >>> CHUNK_BITS]![i & (CHUNK - 1)] = v;
  }
}

/**
 * A growable column of numbers that lie near one another, such as byte offsets in a file or times: each
 * entry an Int32 difference from its chunk's first value, half a Float64Array's size. One too far from it
 * (or not an integer: NaN) is kept aside, in a Map.
 */
export class NearColumn {
  private readonly offsets = new Column((n) => new Int32Array(n));
  private readonly bases: number[] = [];
  private readonly far = new Map<number, number>();
  get length(): number {
    return this.offsets.length;
  }
  push(v: number): void {
    const i = this.offsets.length;
    if ((i & (CHUNK - 1)) === 0) this.bases.push(Number.isFinite(v) ? v : 0);
    const base = this.bases[i >>> CHUNK_BITS]!;
    const d = v - base;
    if (Number.isInteger(d) && d > FAR && d <= 0x7fffffff && base + d === v) this.offsets.push(d);
    else {
      this.offsets.push(FAR);
      this.far.set(i, v);
    }
  }
  get(i: number): number {
    const d = this.offsets.get(i);
    return d === FAR ? this.far.get(i)! : this.bases[i >>> CHUNK_BITS]! + d;
  }
}
/** NearColumn's mark of an entry kept aside. */
const FAR = -0x80000000;

/**
 * Own line n → the seq of its last Event, for one Log: its lines come in order, so two columns searched by
 * halves; a line set out of order turns it into a Map.
 */
export class LineSeqs {
  private readonly lines = new Column((n) => new Uint32Array(n));
  private readonly seqs = new Column((n) => new Int32Array(n));
  private map: Map<number, number> | null = null;

  set(n: number, seq: number): void {
    const last = this.lines.length - 1;
    const fits = this.map === null && Number.isInteger(n) && n >= 0 && n <= 0xffffffff && Number.isInteger(seq) && seq >= 0 && seq <= 0x7fffffff;
    if (fits && (last < 0 || n > this.lines.get(last))) {
      this.lines.push(n);
      this.seqs.push(seq);
    } else if (fits && n === this.lines.get(last)) this.seqs.set(last, seq);
    else (this.map ??= new Map(this)).set(n, seq);
  }

  get(n: number): number | undefined {
    if (this.map !== null) return this.map.get(n);
    let [lo, hi] = [0, this.lines.length - 1];
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const at = this.lines.get(mid);
      if (at === n) return this.seqs.get(mid);
      if (at < n) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  *keys(): Generator<number> {
    if (this.map !== null) yield* this.map.keys();
    else for (let i = 0; i < this.lines.length; i++) yield this.lines.get(i);
  }

  *[Symbol.iterator](): Generator<[number, number]> {
    if (this.map !== null) yield* this.map;
    else for (let i = 0; i < this.lines.length; i++) yield [this.lines.get(i), this.seqs.get(i)];
  }
}
