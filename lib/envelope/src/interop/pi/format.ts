// pi-interop.md §1: the pi session file. Parsing (with line numbers), the v1→v2→v3 migration done in
// memory, and the tree rules pi itself applies (roots, orphans, leaves, default leaf, paths, labels).
import { isUtf8 } from "node:buffer";
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { nestsDeeperThan } from "../../event/nesting.js";
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";

export type PiVersion = 1 | 2 | 3;

/** One entry of a pi file after migration to v3, with where it came from. */
export interface PiFileEntry {
  /** The migrated entry object (v3 shape). Never mutated after parsing. */
  entry: JsonObject;
  /** 1-based physical line number in the file. */
  lineNo: number;
  id: string;
  type: string;
  /** Position in file order among the entries (0-based). */
  index: number;
  /** The message role before the v2 → v3 migration renamed it (`hookMessage`). */
  originalRole?: string;
}

export interface ParsedPiSession {
  /** The header line, verbatim. */
  header: JsonObject;
  headerLine: number;
  sourceVersion: PiVersion;
  entries: PiFileEntry[];
  /** Line numbers skipped by --lenient. */
  skippedLines: number[];
}

export interface ParseOptions {
  /** How the file is named in error details (the path as given). */
  file: string;
  lenient?: boolean;
}

export type PiSessionReason =
  | "missing_header"
  | "unsupported_version"
  | "malformed_line"
  | "invalid_entry"
  | "duplicate_entry_id"
  | "parent_cycle"
  | "unreadable_file";

export function invalidPiSession(reason: PiSessionReason, line: number | null, file: string, extra: JsonObject = {}): PixirError {
  return new PixirError("invalid_pi_session", undefined, { reason, line, file, ...extra });
}

/** How much of a pi file is read at a time: the file's bytes are never all in memory beside its entries. */
const READ_BLOCK = 1 << 20;

/** §3.1: open a pi file, with its size and inode. A missing file is not_found; anything else unreadable is unreadable_file. */
export function openPiFile(path: string, file: string): { fd: number; size: number; ino: number } {
  let fd: number | undefined;
  try {
    if (statSync(path).isDirectory()) throw invalidPiSession("unreadable_file", null, file);
    fd = openSync(path, "r");
    const st = fstatSync(fd);
    return { fd, size: st.size, ino: st.ino };
  } catch (err) {
    if (fd !== undefined) closeSync(fd);
    if (err instanceof PixirError) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new PixirError("not_found", "pi session file was not found", { file, next_actions: ["check the path of the pi session file"] });
    }
    throw invalidPiSession("unreadable_file", null, file);
  }
}

/**
 * The lines of an open pi file, a block at a time, as readLines of the whole file would give them. A
 * line is a view of the block, valid until the next one is asked for.
 */
function* fileLines(fd: number, file: string): Generator<Buffer> {
  const block = Buffer.allocUnsafe(READ_BLOCK);
  let pieces: Buffer[] = [];
  for (;;) {
    let n: number;
    try {
      n = readSync(fd, block, 0, block.length, null);
    } catch {
      throw invalidPiSession("unreadable_file", null, file);
    }
    if (n === 0) break;
    const got = block.subarray(0, n);
    let start = 0;
    for (let end = got.indexOf(0x0a); end !== -1; end = got.indexOf(0x0a, start)) {
      const piece = got.subarray(start, end);
      start = end + 1;
      if (pieces.length === 0) yield piece;
      else {
        yield Buffer.concat([...pieces, piece]);
        pieces = [];
      }
    }
    if (start < n) pieces.push(Buffer.from(got.subarray(start)));
  }
  if (pieces.length > 0) yield Buffer.concat(pieces);
}

/** The lines of a file's bytes held whole (views: each knows its offset). */
function* bufferLines(bytes: Buffer): Generator<Buffer> {
  let start = 0;
  while (start < bytes.length) {
    let end = bytes.indexOf(0x0a, start);
    if (end === -1) end = bytes.length;
    yield bytes.subarray(start, end);
    start = end + 1;
  }
}

/** One body line of a pi file as the scan gives it: its value before migration, and where it is. */
export interface ScannedPiLine {
  lineNo: number;
  value: JsonObject;
  offset: number;
  length: number;
  /** Its place among the non-blank lines, the header being 0 (a v1 entry's id is `l<n>`). */
  nonBlank: number;
}

/** The ids of the entries so far, with their places among the entries (a Map, or what answers as one). */
export interface PiIdIndex {
  has(id: string): boolean;
  get(id: string): number | undefined;
  set(id: string, place: number): unknown;
}

/** What a whole scan found: the lines --lenient skipped, and each entry's place among the entries by its id (v2/v3: a v1 id is its line's place). */
export interface PiScan {
  skippedLines: number[];
  indexOf: PiIdIndex;
}

/** What a scan hands on: the header once, then each entry in file order (never after an error is known). */
export interface PiScanSink {
  /** Where the scan keeps the ids (a Map when the sink has none). */
  readonly ids?: PiIdIndex;
  header(header: JsonObject, lineNo: number, sourceVersion: PiVersion): void;
  /** `index` is its place among the entries; `id` its id (made for v1: `l<n>`); `indexOf` the ids so far (v2/v3). */
  entry(line: ScannedPiLine, index: number, id: string, indexOf: PiIdIndex): void;
}

const BLANK = Symbol("blank");
const BROKEN = Symbol("broken");

/** A line's JSON value, BLANK for a whitespace-only line (skipped, as pi does), BROKEN for one that does not parse. */
function parseLine(raw: Buffer): unknown {
  const text = isUtf8(raw) ? raw.toString("utf8") : null;
  if (text === null) return BROKEN;
  if (text.trim() === "") return BLANK;
  try {
    const value: unknown = JSON.parse(text);
    // Deeper than every later stage can recurse: as unreadable as a broken line (codec.ts).
    return nestsDeeperThan(raw) ? BROKEN : value;
  } catch {
    return BROKEN;
  }
}

/** §3.1: the header's own error, if any (the version it declares otherwise). */
function headerCheck(value: unknown, lineNo: number, file: string): PiVersion | PixirError {
  if (!isJsonObject(value) || value.type !== "session" || typeof value.id !== "string") return invalidPiSession("missing_header", lineNo, file);
  if (!Object.hasOwn(value, "version")) return 1;
  if (value.version === 2 || value.version === 3) return value.version;
  return invalidPiSession("unsupported_version", lineNo, file);
}

/**
 * §1.2–§1.7 and §3.1, one line at a time: blank lines skipped, a broken line fatal (or skipped and
 * counted by --lenient) wherever it is; then, in this order, the header's error, the first invalid
 * entry, the first duplicate id. Returns the lines --lenient skipped.
 */
export function scanPiLines(lines: Iterable<Buffer>, options: ParseOptions, sink: PiScanSink): PiScan {
  const skipped: number[] = [];
  const ids = sink.ids ?? new Map<string, number>();
  let entries = 0;
  let lineNo = 0;
  let next = 0;
  let nonBlank = 0;
  let version: PiVersion | null = null;
  let failed: PixirError | null = null;
  let duplicate: number | null = null;
  for (const raw of lines) {
    lineNo++;
    const offset = next;
    next += raw.length + 1;
    const value = parseLine(raw);
    if (value === BLANK) continue;
    const n = nonBlank++;
    if (value === BROKEN) {
      // The header must parse: without it nothing else can be read.
      if (n === 0) throw invalidPiSession("missing_header", lineNo, options.file);
      if (!options.lenient) throw invalidPiSession("malformed_line", lineNo, options.file);
      skipped.push(lineNo);
      continue;
    }
    if (version === null && failed === null) {
      const checked = headerCheck(value, lineNo, options.file);
      if (checked instanceof PixirError) failed = checked;
      else {
        version = checked;
        sink.header(value as JsonObject, lineNo, version);
      }
      continue;
    }
    if (failed !== null) continue;
    if (!isJsonObject(value) || typeof value.type !== "string" || (version !== 1 && typeof value.id !== "string")) {
      failed = invalidPiSession("invalid_entry", lineNo, options.file);
      continue;
    }
    // A v1 id is its line's place, unique by construction: only v2/v3 ids are kept to find duplicates.
    const id = version === 1 ? `l${n}` : (value.id as string);
    if (version !== 1 && ids.has(id)) duplicate ??= lineNo;
    if (duplicate !== null) continue;
    if (version !== 1) ids.set(id, entries);
    sink.entry({ lineNo, value, offset, length: raw.length, nonBlank: n }, entries++, id, ids);
  }
  if (nonBlank - skipped.length === 0) throw invalidPiSession("missing_header", null, options.file);
  if (failed !== null) throw failed;
  if (duplicate !== null) throw invalidPiSession("duplicate_entry_id", duplicate, options.file);
  return { skippedLines: skipped, indexOf: ids };
}

/** Rebuild an object with `id`/`parentId` right after `type`, the rest in their original order. */
function withIds(entry: JsonObject, id: string, parentId: string | null): JsonObject {
  const pairs: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(entry)) {
    if (k === "id" || k === "parentId") continue;
    pairs.push([k, v]);
    if (k === "type") pairs.push(["id", id], ["parentId", parentId]);
  }
  return Object.fromEntries(pairs);
}

/** §1.7 v1 → v2: ids l<n> by non-blank line (header = 0), parents by order, firstKeptEntryIndex → id. */
/** A v1 compaction's firstKeptEntryIndex, in its place, as the firstKeptEntryId `kept` (gone when it names no entry). */
function withKeptId(entry: JsonObject, kept: string | undefined): JsonObject {
  const pairs: Array<[string, unknown]> = [];
  for (const [k, val] of Object.entries(entry)) {
    if (k === "firstKeptEntryIndex") {
      if (kept !== undefined) pairs.push(["firstKeptEntryId", kept]);
    } else pairs.push([k, val]);
  }
  return Object.fromEntries(pairs);
}

/** §1.7 v1 → v2 of one entry: its id l<n> and its parent's (the entry before it), firstKeptEntryIndex → `kept`. */
function migrateV1(value: JsonObject, id: string, parentId: string | null, kept: (index: unknown) => string | undefined): JsonObject {
  const migrated = withIds(value, id, parentId);
  if (migrated.type !== "compaction" || !Object.hasOwn(migrated, "firstKeptEntryIndex")) return migrated;
  return withKeptId(migrated, kept(migrated.firstKeptEntryIndex));
}

/** §1.7: a v1 compaction's firstKeptEntryIndex names the entry whose id is l<index>, if there is one (the header is 0). */
export function keptIdOf(index: unknown, isEntry: (nonBlank: number) => boolean): string | undefined {
  return typeof index === "number" && Number.isInteger(index) && index > 0 && isEntry(index) ? `l${index}` : undefined;
}

/** §1.7 v2 → v3: the message role hookMessage becomes custom. */
function migrateV2(value: JsonObject): JsonObject {
  if (value.type !== "message" || !isJsonObject(value.message) || value.message.role !== "hookMessage") return value;
  const message = Object.fromEntries(Object.entries(value.message).map(([k, v]) => [k, k === "role" ? "custom" : v]));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === "message" ? message : v]));
}

/** §1.2–§1.7 and §3.1: parse and migrate a pi session file. Throws invalid_pi_session. */
export function parsePiSession(bytes: Buffer, options: ParseOptions): ParsedPiSession {
  return parsePiLines(bufferLines(bytes), options);
}

/** scanPiLines of an open file, read a block at a time. */
export function scanPiFile(fd: number, options: ParseOptions, sink: PiScanSink): PiScan {
  return scanPiLines(fileLines(fd, options.file), options, sink);
}

function parsePiLines(raw: Iterable<Buffer>, options: ParseOptions): ParsedPiSession {
  let header: JsonObject = {};
  let headerLine = 0;
  let sourceVersion: PiVersion = 3;
  const body: Array<{ line: ScannedPiLine; id: string }> = [];
  const v1Lines = new Set<number>();
  const scan = scanPiLines(raw, options, {
    header(h, lineNo, version) {
      header = h;
      headerLine = lineNo;
      sourceVersion = version;
    },
    entry(line, _index, id) {
      body.push({ line, id });
      v1Lines.add(line.nonBlank);
    },
  });
  const entries = body.map(({ line, id }, index): PiFileEntry => {
    const value = sourceVersion === 1 ? migrateV1(line.value, id, body[index - 1]?.id ?? null, (i) => keptIdOf(i, (n) => v1Lines.has(n))) : line.value;
    const entry = sourceVersion === 3 ? value : migrateV2(value);
    const fe: PiFileEntry = { entry, lineNo: line.lineNo, id, type: value.type as string, index };
    if (entry !== value) fe.originalRole = "hookMessage";
    return fe;
  });
  return { header, headerLine, sourceVersion, entries, skippedLines: scan.skippedLines };
}

/** What a line read again must be migrated with: the id, parent and kept entry its parse gave it (v1). */
export interface PiEntryIds {
  id: string;
  parentId: string | null;
  keptId: string | undefined;
}

/**
 * The whole migrated entry of a line read again, migrated as its parse migrated it (scanPiLines and
 * migrateV1: a v1 entry's id, parentId and firstKeptEntryId are the ones the parse gave it).
 */
export function loadPiEntry(text: string, ids: () => PiEntryIds, sourceVersion: PiVersion): JsonObject {
  const value = JSON.parse(text) as JsonObject;
  if (sourceVersion === 3) return value;
  let entry = value;
  if (sourceVersion === 1 && isJsonObject(value)) {
    const { id, parentId, keptId } = ids();
    entry = migrateV1(value, id, parentId, () => keptId);
  }
  return migrateV2(entry);
}

export interface PiOrphan {
  entry_id: string;
  missing_parent_id: unknown;
}

/** §1.8: the tree pi sees in one file. */
export class PiTree {
  readonly byId = new Map<string, PiFileEntry>();
  readonly roots: PiFileEntry[] = [];
  readonly orphans: PiOrphan[] = [];
  readonly leaves: PiFileEntry[] = [];
  readonly defaultLeaf: PiFileEntry | null;
  private readonly parents = new Map<string, PiFileEntry | null>();

  constructor(
    readonly entries: PiFileEntry[],
    file: string,
  ) {
    for (const e of entries) this.byId.set(e.id, e);
    const hasChildren = new Set<string>();
    for (const e of entries) {
      const p = e.entry.parentId;
      if (p === null || p === undefined || p === e.id) {
        this.roots.push(e);
        this.parents.set(e.id, null);
      } else if (typeof p === "string" && this.byId.has(p)) {
        this.parents.set(e.id, this.byId.get(p)!);
        hasChildren.add(p);
      } else {
        this.orphans.push({ entry_id: e.id, missing_parent_id: p });
        this.parents.set(e.id, null);
      }
    }
    for (const e of entries) if (!hasChildren.has(e.id)) this.leaves.push(e);
    this.defaultLeaf = entries.at(-1) ?? null;
    this.checkCycles(file);
  }

  /** The parent on the tree, or null for a root or an orphan. */
  parentOf(e: PiFileEntry): PiFileEntry | null {
    return this.parents.get(e.id) ?? null;
  }

  /** §1.8 path(leaf): root (or orphan) first, leaf last. */
  path(leaf: PiFileEntry): PiFileEntry[] {
    const out: PiFileEntry[] = [];
    for (let e: PiFileEntry | null = leaf; e !== null; e = this.parentOf(e)) out.push(e);
    return out.reverse();
  }

  /** §3.1 parent_cycle: every parentId chain must end at a root or an orphan. */
  private checkCycles(file: string): void {
    const state = new Map<string, 1 | 2>();
    for (const start of this.entries) {
      const walked: PiFileEntry[] = [];
      let e: PiFileEntry | null = start;
      while (e !== null && state.get(e.id) === undefined) {
        state.set(e.id, 1);
        walked.push(e);
        e = this.parentOf(e);
      }
      if (e !== null && state.get(e.id) === 1) throw invalidPiSession("parent_cycle", e.lineNo, file);
      for (const w of walked) state.set(w.id, 2);
    }
  }

  /** §1.8 labels: file-global, in file order; the last label per target wins, an empty one clears. */
  labels(): Record<string, string> {
    const labels = new Map<string, string>();
    for (const e of this.entries) {
      if (e.type !== "label" || typeof e.entry.targetId !== "string") continue;
      const label = e.entry.label;
      if (typeof label === "string" && label !== "") labels.set(e.entry.targetId, label);
      else labels.delete(e.entry.targetId);
    }
    return Object.fromEntries(labels);
  }

  /** §1.8: the latest session_info with a non-empty name. */
  sessionName(): string | null {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i]!;
      if (e.type === "session_info" && typeof e.entry.name === "string" && e.entry.name !== "") return e.entry.name;
    }
    return null;
  }
}

/** The `message/<role>` or `<type>` key that the oracle's typeCounts and leafType use. */
export function entryKind(entry: JsonObject): string {
  if (entry.type === "message" && isJsonObject(entry.message) && typeof entry.message.role === "string") return `message/${entry.message.role}`;
  return String(entry.type);
}
