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
  /** Where its line is in the file's bytes, when the parse kept only its place (parsePiPlaces). */
  offset?: number;
  length?: number;
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
  /**
   * Keep of each entry only the keys the tree and the importer's plan read (PLACE_KEYS) and where its
   * line is; loadPiEntry parses the line again. The header is kept whole.
   */
  placesOnly?: boolean;
}

/** The keys of an entry that parsePiPlaces keeps (with `message.role` for the v2 → v3 rename). */
const PLACE_KEYS = ["type", "id", "parentId", "timestamp", "fromId", "firstKeptEntryIndex"];

function placeOf(value: unknown): unknown {
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const k of PLACE_KEYS) if (Object.hasOwn(value, k)) out[k] = value[k];
  if (isJsonObject(value.message)) out.message = { role: value.message.role };
  return out;
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

interface RawPiLine {
  lineNo: number;
  value: unknown;
  offset: number;
  length: number;
}

/** §1.2: non-blank lines, parsed. Blank (whitespace-only) lines are skipped, as pi does. */
function parseLines(lines: Iterable<Buffer>, options: ParseOptions, skipped: number[]): RawPiLine[] {
  const out: RawPiLine[] = [];
  let lineNo = 0;
  let headerSeen = false;
  let next = 0;
  for (const raw of lines) {
    lineNo++;
    const offset = next;
    next += raw.length + 1;
    const text = isUtf8(raw) ? raw.toString("utf8") : null;
    if (text !== null && text.trim() === "") continue;
    let value: unknown;
    let ok = text !== null;
    if (ok) {
      try {
        value = JSON.parse(text!);
        // Deeper than every later stage can recurse: as unreadable as a broken line (codec.ts).
        ok = !nestsDeeperThan(raw);
      } catch {
        ok = false;
      }
    }
    if (!ok) {
      // The header must parse: without it nothing else can be read.
      if (!headerSeen) throw invalidPiSession("missing_header", lineNo, options.file);
      if (!options.lenient) throw invalidPiSession("malformed_line", lineNo, options.file);
      skipped.push(lineNo);
      continue;
    }
    out.push({ lineNo, value: options.placesOnly && headerSeen ? placeOf(value) : value, offset, length: raw.length });
    headerSeen = true;
  }
  return out;
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

function migrateV1(lines: RawPiLine[], nonBlankIndex: Map<number, number>): RawPiLine[] {
  const idOfIndex = new Map<number, string>();
  for (const l of lines) idOfIndex.set(nonBlankIndex.get(l.lineNo)!, `l${nonBlankIndex.get(l.lineNo)}`);
  const out: RawPiLine[] = [];
  let prev: string | null = null;
  for (const l of lines) {
    const v = l.value as JsonObject;
    const id = `l${nonBlankIndex.get(l.lineNo)}`;
    let migrated = withIds(v, id, prev);
    if (migrated.type === "compaction" && Object.hasOwn(migrated, "firstKeptEntryIndex")) {
      const index = migrated.firstKeptEntryIndex;
      migrated = withKeptId(migrated, typeof index === "number" && Number.isInteger(index) && index > 0 ? idOfIndex.get(index) : undefined);
    }
    out.push({ lineNo: l.lineNo, value: migrated, offset: l.offset, length: l.length });
    prev = id;
  }
  return out;
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

/** parsePiSession of an open file, read a block at a time (the file's bytes are never held whole). */
export function parsePiFile(fd: number, options: ParseOptions): ParsedPiSession {
  return parsePiLines(fileLines(fd, options.file), options);
}

function parsePiLines(raw: Iterable<Buffer>, options: ParseOptions): ParsedPiSession {
  const skippedLines: number[] = [];
  const lines = parseLines(raw, options, skippedLines);
  const first = lines[0];
  if (first === undefined || !isJsonObject(first.value) || first.value.type !== "session" || typeof first.value.id !== "string") {
    throw invalidPiSession("missing_header", first?.lineNo ?? null, options.file);
  }
  const header = first.value;
  let sourceVersion: PiVersion;
  if (!Object.hasOwn(header, "version")) sourceVersion = 1;
  else if (header.version === 2 || header.version === 3) sourceVersion = header.version;
  else throw invalidPiSession("unsupported_version", first.lineNo, options.file);

  const body = lines.slice(1);
  for (const l of body) {
    if (!isJsonObject(l.value) || typeof l.value.type !== "string") throw invalidPiSession("invalid_entry", l.lineNo, options.file);
    if (sourceVersion !== 1 && typeof l.value.id !== "string") throw invalidPiSession("invalid_entry", l.lineNo, options.file);
  }
  let migrated: RawPiLine[];
  if (sourceVersion === 1) {
    // Non-blank lines numbered from 0 with the header as 0; a line skipped by --lenient keeps its number.
    const nonBlankIndex = new Map<number, number>();
    let n = 0;
    const skipped = new Set(skippedLines);
    const all = [...lines.map((l) => l.lineNo), ...skipped].sort((a, b) => a - b);
    for (const lineNo of all) nonBlankIndex.set(lineNo, n++);
    migrated = migrateV1(body, nonBlankIndex);
  } else {
    migrated = body;
  }
  const seen = new Set<string>();
  const entries: PiFileEntry[] = migrated.map((m, index) => {
    const value = m.value as JsonObject;
    const id = value.id as string;
    if (seen.has(id)) throw invalidPiSession("duplicate_entry_id", m.lineNo, options.file);
    seen.add(id);
    const entry = sourceVersion === 3 ? value : migrateV2(value);
    const fe: PiFileEntry = { entry, lineNo: m.lineNo, id, type: value.type as string, index };
    if (entry !== value) fe.originalRole = "hookMessage";
    if (options.placesOnly) {
      fe.offset = m.offset;
      fe.length = m.length;
    }
    return fe;
  });
  return { header, headerLine: first.lineNo, sourceVersion, entries, skippedLines };
}

/**
 * The whole migrated entry of a PiFileEntry that parsePiSession kept only the place of (`placesOnly`): its
 * line parsed again and migrated as the parse migrated it (its id, parentId and firstKeptEntryId are the
 * ones the parse gave it).
 */
export function loadPiEntry(line: (offset: number, length: number) => string, fe: PiFileEntry, sourceVersion: PiVersion): JsonObject {
  const value = JSON.parse(line(fe.offset!, fe.length!)) as JsonObject;
  if (sourceVersion === 3) return value;
  let entry = value;
  if (sourceVersion === 1) {
    entry = withIds(value, fe.id, fe.entry.parentId as string | null);
    if (entry.type === "compaction" && Object.hasOwn(entry, "firstKeptEntryIndex")) entry = withKeptId(entry, fe.entry.firstKeptEntryId as string | undefined);
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

  isRootOrOrphan(e: PiFileEntry): boolean {
    return this.parents.get(e.id) === null;
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
