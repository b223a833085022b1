// The entries of a pi file as `pixir import pi` plans them: columns of numbers and one string per id, not
// an object per entry (docs/performance.md "Round 10: import pi within the bound"). An entry is its place
// in the file, its id, type and parent; its line is read and parsed again whenever its Events are made.
// The tree rules are pi-interop.md §1.8, as PiTree (format.ts) applies them to parsed entries.
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { invalidPiSession, keptIdOf, type PiEntryIds, type PiOrphan, type PiScan, type PiScanSink, type PiVersion, type ScannedPiLine } from "./format.js";

/** A parent that is not an entry of the file (null, absent, missing, or not a string): kept as it was. */
const NO_ENTRY = -1;

/** Growable columns of small numbers (file offsets fit a double exactly). */
class NumberColumn {
  private data: Float64Array;
  length = 0;
  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity);
  }
  push(v: number): void {
    if (this.length === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i]!;
  }
  set(i: number, v: number): void {
    this.data[i] = v;
  }
}

/** Builds a PiEntryTable from a scan (its sink). */
export class PiEntryTableBuilder implements PiScanSink {
  headerObject: JsonObject = {};
  headerLine = 0;
  sourceVersion: PiVersion = 3;
  readonly ids: string[] = [];
  readonly types: string[] = [];
  readonly lineNos = new NumberColumn();
  readonly offsets = new NumberColumn();
  readonly lengths = new NumberColumn();
  /** The entry its parentId names, or NO_ENTRY with the value in `otherParents`; resolved after the scan. */
  readonly parents = new NumberColumn();
  readonly otherParents = new Map<number, unknown>();
  /** v1 compactions: their firstKeptEntryIndex, named as an id once every entry is known. */
  readonly keptIndex = new Map<number, unknown>();
  readonly hookMessages = new Set<number>();
  private readonly typeNames = new Map<string, string>();

  header(h: JsonObject, lineNo: number, version: PiVersion): void {
    this.headerObject = h;
    this.headerLine = lineNo;
    this.sourceVersion = version;
  }

  entry(line: ScannedPiLine, index: number, id: string, indexOf: ReadonlyMap<string, number>): void {
    const v = line.value;
    const type = v.type as string;
    this.ids.push(id);
    this.types.push(this.typeNames.get(type) ?? (this.typeNames.set(type, type), type));
    this.lineNos.push(line.lineNo);
    this.offsets.push(line.offset);
    this.lengths.push(line.length);
    // v1: the entry before it (§1.7); v2/v3: its parentId, an entry's place once they are all known.
    this.parents.push(NO_ENTRY);
    if (this.sourceVersion === 1) {
      if (index > 0) this.parents.set(index, index - 1);
      else this.otherParents.set(index, null);
      if (type === "compaction" && Object.hasOwn(v, "firstKeptEntryIndex")) this.keptIndex.set(index, v.firstKeptEntryIndex);
    } else {
      // A parent above its child (as pi writes them) is known already; one below waits for finish().
      const p = v.parentId;
      const at = typeof p === "string" ? indexOf.get(p) : undefined;
      if (at !== undefined) this.parents.set(index, at);
      else this.otherParents.set(index, p);
    }
    if (this.sourceVersion !== 3 && type === "message" && isJsonObject(v.message) && v.message.role === "hookMessage") this.hookMessages.add(index);
  }

  /** The table, every parentId that names an entry resolved to it. */
  finish(scan: PiScan): PiEntryTable {
    for (const [i, p] of this.otherParents) {
      const at = typeof p === "string" ? scan.indexOf.get(p) : undefined;
      if (at !== undefined) {
        this.parents.set(i, at);
        this.otherParents.delete(i);
      }
    }
    const kept = new Map<number, string | undefined>();
    for (const [i, index] of this.keptIndex) kept.set(i, keptIdOf(index, scan.indexOf));
    return new PiEntryTable(this, scan, kept);
  }
}

/** The entries of one pi file, by their place in file order. */
export class PiEntryTable {
  readonly header: JsonObject;
  readonly headerLine: number;
  readonly sourceVersion: PiVersion;
  readonly skippedLines: number[];
  readonly ids: string[];
  readonly types: string[];
  readonly indexOf: Map<string, number>;
  private readonly lineNos: NumberColumn;
  private readonly offsets: NumberColumn;
  private readonly lengths: NumberColumn;
  private readonly parents: NumberColumn;
  private readonly otherParents: Map<number, unknown>;
  private readonly kept: Map<number, string | undefined>;
  private readonly hookMessages: Set<number>;

  constructor(b: PiEntryTableBuilder, scan: PiScan, kept: Map<number, string | undefined>) {
    this.header = b.headerObject;
    this.headerLine = b.headerLine;
    this.sourceVersion = b.sourceVersion;
    this.skippedLines = scan.skippedLines;
    this.indexOf = scan.indexOf;
    this.ids = b.ids;
    this.types = b.types;
    this.lineNos = b.lineNos;
    this.offsets = b.offsets;
    this.lengths = b.lengths;
    this.parents = b.parents;
    this.otherParents = b.otherParents;
    this.kept = kept;
    this.hookMessages = b.hookMessages;
  }

  get size(): number {
    return this.ids.length;
  }
  lineNo(i: number): number {
    return this.lineNos.get(i);
  }
  offset(i: number): number {
    return this.offsets.get(i);
  }
  length(i: number): number {
    return this.lengths.get(i);
  }
  /** The entry its parentId names (itself for a root naming itself), or -1. */
  parentEntry(i: number): number {
    return this.parents.get(i);
  }
  /** Its parentId as the migrated entry has it. */
  parentId(i: number): unknown {
    const p = this.parents.get(i);
    return p === NO_ENTRY ? this.otherParents.get(i) : this.ids[p];
  }
  /** The role it had before the v2 → v3 migration renamed it (`hookMessage`), if it was renamed. */
  originalRole(i: number): string | undefined {
    return this.hookMessages.has(i) ? "hookMessage" : undefined;
  }
  /** What loadPiEntry migrates the entry's line with. */
  idsOf(i: number): PiEntryIds {
    return { id: this.ids[i]!, parentId: (this.parentId(i) ?? null) as string | null, keptId: this.kept.get(i) };
  }
}

/** §1.8: the tree pi sees in one file, over a PiEntryTable (PiTree's rules). */
export class PiEntryTree {
  /** Each entry's parent on the tree, or -1 for a root or an orphan. */
  readonly parent: Int32Array;
  /** Each entry's place on its path (0 for a root or an orphan). */
  readonly depth: Int32Array;
  readonly orphans: PiOrphan[] = [];
  readonly leaves: number[] = [];
  readonly defaultLeaf: number;

  constructor(t: PiEntryTable, file: string) {
    const n = t.size;
    this.parent = new Int32Array(n).fill(-1);
    const hasChildren = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const p = t.parentEntry(i);
      if (p !== NO_ENTRY && p !== i) {
        this.parent[i] = p;
        hasChildren[p] = 1;
      } else if (p === NO_ENTRY) {
        const raw = t.parentId(i);
        if (raw !== null && raw !== undefined) this.orphans.push({ entry_id: t.ids[i]!, missing_parent_id: raw });
      }
    }
    for (let i = 0; i < n; i++) if (hasChildren[i] === 0) this.leaves.push(i);
    this.defaultLeaf = n - 1;
    this.depth = this.depths(t, file);
  }

  /** §1.8 path(leaf): root (or orphan) first, leaf last. */
  path(leaf: number): number[] {
    const out: number[] = [];
    for (let e = leaf; e !== -1; e = this.parent[e]!) out.push(e);
    return out.reverse();
  }

  /** Whether `a` is a strict ancestor of `e`. */
  isAncestor(a: number, e: number): boolean {
    const d = this.depth[a]!;
    if (d >= this.depth[e]!) return false;
    let at = e;
    while (this.depth[at]! > d) at = this.parent[at]!;
    return at === a;
  }

  /** Each entry's depth, and §3.1 parent_cycle: every parentId chain must end at a root or an orphan. */
  private depths(t: PiEntryTable, file: string): Int32Array {
    const depth = new Int32Array(this.parent.length).fill(-1);
    const walked: number[] = [];
    for (let start = 0; start < this.parent.length; start++) {
      let e = start;
      // -2: on the walk under way (a cycle when met again).
      while (e !== -1 && depth[e] === -1) {
        depth[e] = -2;
        walked.push(e);
        e = this.parent[e]!;
      }
      if (e !== -1 && depth[e] === -2) throw invalidPiSession("parent_cycle", t.lineNo(e), file);
      let d = e === -1 ? -1 : depth[e]!;
      for (let k = walked.length - 1; k >= 0; k--) depth[walked[k]!] = ++d;
      walked.length = 0;
    }
    return depth;
  }
}
