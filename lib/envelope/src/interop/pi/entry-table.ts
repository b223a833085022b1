// The entries of a pi file as `pixir import pi` plans them: columns of numbers and one string per id, not
// an object per entry (docs/performance.md "Round 10: import pi within the bound"). An entry is its place
// in the file, its id, type and parent; its line is read and parsed again whenever its Events are made.
// The tree rules are pi-interop.md §1.8, as PiTree (format.ts) applies them to parsed entries.
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { invalidPiSession, keptIdOf, type PiEntryIds, type PiIdIndex, type PiOrphan, type PiScan, type PiScanSink, type PiVersion, type ScannedPiLine } from "./format.js";

/** A parent that is not an entry of the file (null, absent, missing, not a string, or the entry itself): kept as it was. */
const NO_ENTRY = -1;

/** Entries per chunk of a column. */
const CHUNK_BITS = 14;
const CHUNK = 1 << CHUNK_BITS;

/**
 * A growable column of numbers in chunks of a fixed size: growing it copies nothing and leaves nothing
 * behind for the collector (a doubled array leaves its old halves until the next full GC).
 */
class NumberColumn {
  private readonly chunks: Array<Float64Array | Uint32Array | Int32Array> = [];
  length = 0;
  constructor(private readonly make: (n: number) => Float64Array | Uint32Array | Int32Array) {}
  push(v: number): void {
    if (this.length >>> CHUNK_BITS === this.chunks.length) this.chunks.push(this.make(CHUNK));
    this.chunks[this.length >>> CHUNK_BITS]![this.length++ & (CHUNK - 1)] = v;
  }
  get(i: number): number {
    return this.chunks[i >>> CHUNK_BITS]![i & (CHUNK - 1)]!;
  }
  set(i: number, v: number): void {
    this.chunks[i >>> CHUNK_BITS]![i & (CHUNK - 1)] = v;
  }
}

/** File offsets fit a double exactly; line numbers, lengths and counts fit 32 bits (a line is a string). */
const doubles = () => new NumberColumn((n) => new Float64Array(n));
const uint32s = () => new NumberColumn((n) => new Uint32Array(n));
const int32s = () => new NumberColumn((n) => new Int32Array(n));

/** Bytes of ids per chunk of an IdColumn's pool. */
const POOL_BYTES = 1 << 20;

/** FNV-1a over a string's UTF-16 code units. */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let k = 0; k < id.length; k++) h = Math.imul(h ^ id.charCodeAt(k), 0x01000193);
  return h >>> 0;
}

/**
 * The ids of a v2/v3 file's entries, by their place: each id's UTF-16 code units (any string, as it was) in
 * chunks of a pool, found by an open-addressing table of places. It answers what a Map from id to place
 * answers (the scan uses it as one), in about a third of the memory of the Map and its strings.
 */
export class IdColumn {
  private readonly pool: Buffer[] = [];
  private used = 0;
  private readonly chunkOf = uint32s();
  private readonly startOf = uint32s();
  private readonly lengthOf = uint32s();
  private readonly hashes = uint32s();
  /** Place + 1 of the id in each slot, 0 for an empty slot; at most half full. */
  private slots = new Int32Array(1024);
  size = 0;

  /** The id at `place`. */
  at(place: number): string {
    const start = this.startOf.get(place);
    return this.pool[this.chunkOf.get(place)]!.toString("utf16le", start, start + this.lengthOf.get(place));
  }

  get(id: string): number | undefined {
    const h = hashOf(id);
    const mask = this.slots.length - 1;
    for (let k = h & mask; this.slots[k] !== 0; k = (k + 1) & mask) {
      const place = this.slots[k]! - 1;
      if (this.hashes.get(place) === h && this.at(place) === id) return place;
    }
    return undefined;
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  /** Add the id of the next place (`place` is the count so far, as the scan gives it). */
  set(id: string, place: number): this {
    const bytes = id.length * 2;
    if (this.pool.length === 0 || this.used + bytes > POOL_BYTES) {
      this.pool.push(Buffer.allocUnsafe(Math.max(POOL_BYTES, bytes)));
      this.used = 0;
    }
    this.pool.at(-1)!.write(id, this.used, "utf16le");
    this.chunkOf.push(this.pool.length - 1);
    this.startOf.push(this.used);
    this.lengthOf.push(bytes);
    this.hashes.push(hashOf(id));
    this.used += bytes;
    this.size = place + 1;
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.slot(place);
    return this;
  }

  private slot(place: number): void {
    const mask = this.slots.length - 1;
    let k = this.hashes.get(place) & mask;
    while (this.slots[k] !== 0) k = (k + 1) & mask;
    this.slots[k] = place + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Int32Array(capacity);
    for (let place = 0; place < this.size; place++) this.slot(place);
  }
}

/** A v1 entry's id, `l<n>` (n its place among the non-blank lines), as its number; NaN for any other string. */
const v1Number = (id: string): number => (/^l[1-9][0-9]{0,14}$/.test(id) ? Number(id.slice(1)) : NaN);

/** Builds a PiEntryTable from a scan (its sink). */
export class PiEntryTableBuilder implements PiScanSink {
  headerObject: JsonObject = {};
  headerLine = 0;
  sourceVersion: PiVersion = 3;
  /** v2/v3: each entry's id, kept by the scan (a v1 id is made from `nonBlanks`). */
  readonly ids = new IdColumn();
  /** v1: each entry's place among the non-blank lines. */
  readonly nonBlanks = uint32s();
  readonly typeCodes = uint32s();
  readonly typeNames: string[] = [];
  readonly lineNos = uint32s();
  readonly offsets = doubles();
  readonly lengths = uint32s();
  /** The entry its parentId names, or NO_ENTRY with the value in `otherParents`; resolved after the scan. */
  readonly parents = int32s();
  readonly otherParents = new Map<number, unknown>();
  /** v1 compactions: their firstKeptEntryIndex, named as an id once every entry is known. */
  readonly keptIndex = new Map<number, unknown>();
  readonly hookMessages = new Set<number>();
  private readonly typeCodeOf = new Map<string, number>();
  size = 0;

  header(h: JsonObject, lineNo: number, version: PiVersion): void {
    this.headerObject = h;
    this.headerLine = lineNo;
    this.sourceVersion = version;
  }

  entry(line: ScannedPiLine, index: number, _id: string, indexOf: PiIdIndex): void {
    const v = line.value;
    const type = v.type as string;
    let code = this.typeCodeOf.get(type);
    if (code === undefined) this.typeCodeOf.set(type, (code = this.typeNames.push(type) - 1));
    this.typeCodes.push(code);
    this.lineNos.push(line.lineNo);
    this.offsets.push(line.offset);
    this.lengths.push(line.length);
    this.size++;
    // v1: the entry before it (§1.7); v2/v3: its parentId, an entry's place once they are all known.
    this.parents.push(NO_ENTRY);
    if (this.sourceVersion === 1) {
      this.nonBlanks.push(line.nonBlank);
      if (index > 0) this.parents.set(index, index - 1);
      else this.otherParents.set(index, null);
      if (type === "compaction" && Object.hasOwn(v, "firstKeptEntryIndex")) this.keptIndex.set(index, v.firstKeptEntryIndex);
    } else {
      // A parent above its child (as pi writes them) is known already; one below waits for finish().
      const p = v.parentId;
      const at = typeof p === "string" ? indexOf.get(p) : undefined;
      if (at !== undefined && at !== index) this.parents.set(index, at);
      else this.otherParents.set(index, p);
    }
    if (this.sourceVersion !== 3 && type === "message" && isJsonObject(v.message) && v.message.role === "hookMessage") this.hookMessages.add(index);
  }

  /** The table, every parentId that names another entry resolved to it. */
  finish(scan: PiScan): PiEntryTable {
    const table = new PiEntryTable(this, scan);
    for (const [i, p] of this.otherParents) {
      const at = typeof p === "string" ? table.rowOf(p) : undefined;
      if (at !== undefined && at !== i) {
        this.parents.set(i, at);
        this.otherParents.delete(i);
      }
    }
    for (const [i, index] of this.keptIndex) table.kept.set(i, keptIdOf(index, (n) => table.rowOf(`l${n}`) !== undefined));
    return table;
  }
}

/** The entries of one pi file, by their place in file order. */
export class PiEntryTable {
  readonly header: JsonObject;
  readonly headerLine: number;
  readonly sourceVersion: PiVersion;
  readonly skippedLines: number[];
  readonly size: number;
  /** v1 compactions: the firstKeptEntryId their firstKeptEntryIndex becomes (filled by the builder). */
  readonly kept = new Map<number, string | undefined>();
  private readonly indexOf: PiIdIndex;
  private readonly b: PiEntryTableBuilder;

  constructor(b: PiEntryTableBuilder, scan: PiScan) {
    this.header = b.headerObject;
    this.headerLine = b.headerLine;
    this.sourceVersion = b.sourceVersion;
    this.skippedLines = scan.skippedLines;
    this.size = b.size;
    this.indexOf = scan.indexOf;
    this.b = b;
  }

  /** The entry's id (made for v1: `l<n>`). */
  id(i: number): string {
    return this.sourceVersion === 1 ? `l${this.b.nonBlanks.get(i)}` : this.b.ids.at(i);
  }
  /** The entry whose id is `id`, if any. */
  rowOf(id: string): number | undefined {
    if (this.sourceVersion !== 1) return this.indexOf.get(id);
    // v1 ids rise with their rows: a binary search.
    const n = v1Number(id);
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.b.nonBlanks.get(mid) < n) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.size && this.b.nonBlanks.get(lo) === n ? lo : undefined;
  }
  type(i: number): string {
    return this.b.typeNames[this.b.typeCodes.get(i)]!;
  }
  lineNo(i: number): number {
    return this.b.lineNos.get(i);
  }
  offset(i: number): number {
    return this.b.offsets.get(i);
  }
  length(i: number): number {
    return this.b.lengths.get(i);
  }
  /** The entry its parentId names (never itself), or -1: its parent on the tree. */
  parentEntry(i: number): number {
    return this.b.parents.get(i);
  }
  /** Its parentId as the migrated entry has it. */
  parentId(i: number): unknown {
    const p = this.b.parents.get(i);
    return p === NO_ENTRY ? this.b.otherParents.get(i) : this.id(p);
  }
  /** The role it had before the v2 → v3 migration renamed it (`hookMessage`), if it was renamed. */
  originalRole(i: number): string | undefined {
    return this.b.hookMessages.has(i) ? "hookMessage" : undefined;
  }
  /** What loadPiEntry migrates the entry's line with. */
  idsOf(i: number): PiEntryIds {
    return { id: this.id(i), parentId: (this.parentId(i) ?? null) as string | null, keptId: this.kept.get(i) };
  }
}

/** §1.8: the tree pi sees in one file, over a PiEntryTable (PiTree's rules). */
export class PiEntryTree {
  /** Each entry's place on its path (0 for a root or an orphan). */
  readonly depth: Int32Array;
  readonly orphans: PiOrphan[] = [];
  readonly leaves: number[] = [];
  readonly defaultLeaf: number;

  constructor(
    private readonly t: PiEntryTable,
    file: string,
  ) {
    const n = t.size;
    const hasChildren = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const p = t.parentEntry(i);
      if (p !== NO_ENTRY) hasChildren[p] = 1;
      else {
        const raw = t.parentId(i);
        if (raw !== null && raw !== undefined && raw !== t.id(i)) this.orphans.push({ entry_id: t.id(i), missing_parent_id: raw });
      }
    }
    for (let i = 0; i < n; i++) if (hasChildren[i] === 0) this.leaves.push(i);
    this.defaultLeaf = n - 1;
    this.depth = this.depths(file);
  }

  /** The entry's parent on the tree, or -1 for a root or an orphan. */
  parent(e: number): number {
    return this.t.parentEntry(e);
  }

  /** §1.8 path(leaf): root (or orphan) first, leaf last. */
  path(leaf: number): Int32Array {
    const out = new Int32Array(this.depth[leaf]! + 1);
    for (let e = leaf, k = out.length - 1; e !== -1; e = this.parent(e)) out[k--] = e;
    return out;
  }

  /** Whether `a` is a strict ancestor of `e`. */
  isAncestor(a: number, e: number): boolean {
    const d = this.depth[a]!;
    if (d >= this.depth[e]!) return false;
    let at = e;
    while (this.depth[at]! > d) at = this.parent(at);
    return at === a;
  }

  /** Each entry's depth, and §3.1 parent_cycle: every parentId chain must end at a root or an orphan. */
  private depths(file: string): Int32Array {
    const depth = new Int32Array(this.t.size).fill(-1);
    const walked: number[] = [];
    for (let start = 0; start < depth.length; start++) {
      let e = start;
      // -2: on the walk under way (a cycle when met again).
      while (e !== -1 && depth[e] === -1) {
        depth[e] = -2;
        walked.push(e);
        e = this.parent(e);
      }
      if (e !== -1 && depth[e] === -2) throw invalidPiSession("parent_cycle", this.t.lineNo(e), file);
      let d = e === -1 ? -1 : depth[e]!;
      for (let k = walked.length - 1; k >= 0; k--) depth[walked[k]!] = ++d;
      walked.length = 0;
    }
    return depth;
  }
}
