// archive.md §2 "The index": `.pixir/index/search.sqlite`, a derived cache of the Logs. Opening it here
// decides what a search may do with it: bring it up to date (the usual case), read it as it is (a read-only
// Workspace), or build one in memory (a read-only Workspace without a usable index). A missing, corrupt or
// other-version file is replaced, with a note; SQLite's own words never reach the user.
import type Database from "better-sqlite3";
import { existsSync, lstatSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PixirError } from "../../event/errors.js";
import { isRefusal } from "../../event/os-codes.js";
import { osWriteFault } from "../../event/os-fault.js";
import { ensureStateDir, StatePath, STATE_DIR } from "../../store/paths.js";
import { bundledSqlite, type BundledSqlite } from "./sqlite-bundled.js";

/** Bumped whenever the tables or what goes into them change: an index of another version is rebuilt. */
export const SEARCH_INDEX_VERSION = "pixir-search-5";

/** Whether the index's meta value `name` is exactly these bytes (compared by SQLite, not read out). */
export function metaHolds(db: Database.Database, name: string, value: Uint8Array): boolean {
  return db.prepare("SELECT 1 FROM meta WHERE key = ? AND value = ?").get(name, value) !== undefined;
}

export function setMeta(db: Database.Database, name: string, value: string | Uint8Array): void {
  db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(name, value);
}

export const searchIndexPath = (ws: string) => new StatePath(ws, [STATE_DIR, "index", "search.sqlite"], "file");

/** How long a search waits for another process's batch of index writes (they commit every few MB). */
const BUSY_TIMEOUT_MS = 30_000;

export type IndexMode = "update" | "as_is" | "memory";

export interface OpenIndex {
  db: Database.Database;
  mode: IndexMode;
  /** Notes for stderr: why the index was rebuilt or may be stale. */
  notes: Array<{ code: string; text: string }>;
  path: StatePath;
}

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE logs (
  log INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE,
  bytes INTEGER NOT NULL,          -- indexed up to here: always just after a newline
  stat_key TEXT,                   -- inode, size, mtime, ctime when last caught up: unchanged files are not opened
  prefix_digest TEXT,              -- sha256 of bytes [0, bytes): a change anywhere before them is seen
  parent TEXT,                     -- session_fork.parent_session_id
  forked_to_seq INTEGER,
  inherited_count INTEGER NOT NULL DEFAULT 0, -- replay_v1: seqs 1..N are copies, owned by the parent
  replay_count INTEGER NOT NULL DEFAULT 0,    -- replay-type Events so far (a Log's ordinal of its Events)
  cp_seq INTEGER,                  -- the latest checkpoint's seq (context-and-compaction.md §1.1)
  cp_to INTEGER,                   -- its range.to_seq, null when none
  events INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE docs (
  doc INTEGER PRIMARY KEY,         -- the order indexed: a new doc takes the next id past all
  log INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  role TEXT NOT NULL,
  tool TEXT,
  ts TEXT NOT NULL,
  ordinal INTEGER NOT NULL,        -- its place among the Log's replay-type Events (a fork's k)
  offset INTEGER NOT NULL,
  length INTEGER NOT NULL
);
-- The forks and branches of a Log, for inherited_by (search.ts InheritanceCounter): a search reads its hits' lineages.
CREATE INDEX logs_forks ON logs(parent, forked_to_seq, session_id) WHERE parent IS NOT NULL AND forked_to_seq IS NOT NULL;
CREATE INDEX docs_log_seq ON docs(log, seq);
CREATE INDEX docs_ts ON docs(ts);
-- Each file argument path as its suffixes at its slashes (file-match.ts): --file is a lookup in files_suffix.
CREATE TABLE files (doc INTEGER NOT NULL, suffix TEXT NOT NULL, whole INTEGER NOT NULL);
CREATE INDEX files_doc ON files(doc);
CREATE INDEX files_suffix ON files(suffix);
CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'unicode61', content = '', contentless_delete = 1, detail = full);
`;

const SQLITE_DISK = new Set(["SQLITE_FULL", "SQLITE_IOERR", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_WRITE"]);
const SQLITE_BROKEN = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_VTAB", "SQLITE_CORRUPT_INDEX", "SQLITE_IOERR_SHORT_READ"]);
const SQLITE_READONLY = (code: string) => code.startsWith("SQLITE_READONLY") || code === "SQLITE_CANTOPEN" || code === "SQLITE_PERM" || code === "SQLITE_AUTH";

export const sqliteCode = (err: unknown): string | null => {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : null;
};

export const isCorruption = (err: unknown): boolean => SQLITE_BROKEN.has(sqliteCode(err) ?? "");
export const isBusy = (err: unknown): boolean => (sqliteCode(err) ?? "").startsWith("SQLITE_BUSY") || (sqliteCode(err) ?? "").startsWith("SQLITE_LOCKED");
const isReadOnly = (err: unknown): boolean => SQLITE_READONLY(sqliteCode(err) ?? "") || isRefusal((err as NodeJS.ErrnoException | null)?.code);

/** A fault while writing the index, in pixir's words: a full disk is `log_write_failed` naming the index. */
export function indexWriteFault(err: unknown, path: StatePath): PixirError {
  if (err instanceof PixirError) return err;
  if (isAddonMissing(err)) return addonFault(err);
  const code = sqliteCode(err);
  const errno = code === "SQLITE_FULL" ? "ENOSPC" : code !== null && SQLITE_DISK.has(code) ? "EIO" : (err as NodeJS.ErrnoException | null)?.code;
  const named = osWriteFault(Object.assign(new Error("index write"), { code: errno }), path.rel, "index", `the search index ${path.rel}`);
  named.details.next_actions = ["free some space; the Logs are untouched and the next search repairs the index", ...((named.details.next_actions as string[] | undefined) ?? [])];
  return named;
}

/** better-sqlite3 not installed, or installed without its native part (an install with scripts off, or a failed source build). */
function isAddonMissing(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException | null;
  const message = String(e?.message ?? "");
  return e?.code === "ERR_DLOPEN_FAILED" || (e?.code === "MODULE_NOT_FOUND" && message.includes("better-sqlite3")) || /bindings file|better_sqlite3\.node|NODE_MODULE_VERSION/.test(message);
}

function addonFault(err: unknown): PixirError {
  return new PixirError("internal_error", "the SQLite addon of the search index (better-sqlite3) could not be loaded", {
    reason: "sqlite_addon_missing",
    cause: String((err as Error | null)?.message ?? err).split("\n")[0],
    next_actions: ["build better-sqlite3 from source where python3, make and a C++ compiler are available (on Debian also: export npm_config_nodedir=/usr), then install again; see the README's Install", "every other command works without it"],
  });
}

/**
 * better-sqlite3 through require(), as the CommonJS package it is: an ES import of it first has Node parse
 * its sources for their export names. Loaded on the first open.
 */
const requireHere = createRequire(import.meta.url);
let sqlite: { Database: typeof Database; addon: string | null } | undefined;

/**
 * The installed package and its addon's file, handed to it (its `nativeBinding`) so that it does not search
 * a dozen places for it (the `bindings` package). Where an install put the addon elsewhere, the installed
 * package searches as it would. The JavaScript is the bundle's copy (sqlite-bundled.ts) when there is one
 * of the installed version, else the installed package's.
 */
function loadSqlite(): { Database: typeof Database; addon: string | null } {
  if (sqlite !== undefined) return sqlite;
  const manifest = requireHere.resolve("better-sqlite3/package.json");
  const file = path.join(path.dirname(manifest), "build", "Release", "better_sqlite3.node");
  const addon = existsSync(file) ? file : null;
  const bundled = addon === null ? null : bundledOf(manifest);
  sqlite = { Database: bundled ?? (requireHere(path.dirname(manifest)) as typeof Database), addon };
  return sqlite;
}

/** The bundle's better-sqlite3, when it is of the installed package's version (the addon's). */
export function bundledOf(manifest: string, bundle: BundledSqlite | null = bundledSqlite): typeof Database | null {
  if (bundle === null) return null;
  const installed = (JSON.parse(readFileSync(manifest, "utf8")) as { version?: unknown }).version;
  return installed === bundle.version ? bundle.load() : null;
}

/** A connection to a file (or an image in memory) that waits for another process's writes up to the busy timeout. */
function connect(file: string | Buffer): Database.Database {
  const { Database: Sqlite, addon } = loadSqlite();
  return new Sqlite(file, { timeout: BUSY_TIMEOUT_MS, ...(addon === null ? {} : { nativeBinding: addon }) });
}

function removeIndexFiles(p: StatePath): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(p.abs + suffix, { force: true });
}

function tune(db: Database.Database, writable: boolean): void {
  if (writable) {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
  }
  db.pragma("cache_size = -16000");
}

/** The index's version, or null when the file holds no index of ours. Throws SQLite's corruption errors. */
function versionOf(db: Database.Database): string | null {
  const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (table === undefined) return null;
  const row = db.prepare("SELECT value FROM meta WHERE key = 'version'").get() as { value: string } | undefined;
  return row?.value ?? null;
}

/** Create the tables unless another process just did (two first searches at once). */
function createSchema(db: Database.Database): void {
  db.transaction(() => {
    if (versionOf(db) !== null) return;
    db.exec(SCHEMA);
    db.prepare("INSERT INTO meta (key, value) VALUES ('version', ?)").run(SEARCH_INDEX_VERSION);
  }).immediate();
}

/** A database with no tables: new, or being created by another process right now. */
const isEmpty = (db: Database.Database): boolean => (db.prepare("SELECT count(*) AS n FROM sqlite_master").get() as { n: number }).n === 0;

/**
 * What stands at the index's path. A symbolic link is removed (SQLite would write through it, outside
 * `.pixir/index`); anything else but a file (a directory) cannot be the index and is left alone.
 */
function clearIndexPath(p: StatePath, notes: OpenIndex["notes"]): void {
  let st;
  try {
    st = lstatSync(p.abs);
  } catch {
    return; // missing (or unreadable: opening it says why)
  }
  if (st.isFile()) return;
  if (st.isSymbolicLink()) {
    rmSync(p.abs);
    notes.push({ code: "index_rebuilt", text: `${p.rel} was a symbolic link; replacing it with an index built from the Logs` });
    return;
  }
  throw new PixirError("unsafe_state_path", `${p.rel} is not a file`, { path: p.rel, reason: "not_a_file", actual_type: st.isDirectory() ? "directory" : "other" });
}

function inMemory(notes: OpenIndex["notes"], p: StatePath): OpenIndex {
  const db = connect(":memory:");
  createSchema(db);
  return { db, mode: "memory", notes, path: p };
}

/** Open the file read-write, replacing it when it is corrupt or of another version. Throws on a read-only place. */
function openWritable(p: StatePath, notes: OpenIndex["notes"]): Database.Database {
  const existed = existsSync(p.abs);
  for (let attempt = 0; ; attempt++) {
    let db: Database.Database | null = null;
    try {
      db = connect(p.abs);
      tune(db, true);
      const version = versionOf(db);
      if (version === SEARCH_INDEX_VERSION) return db;
      if (version === null && isEmpty(db)) {
        createSchema(db);
        if (!existed && notes.length === 0) notes.push({ code: "index_created", text: `${p.rel} was missing; building it from the Logs (later searches read only what changed)` });
        return db;
      }
      db.close();
      db = null;
      notes.push({ code: "index_rebuilt", text: version === null ? `${p.rel} is not a pixir search index; replacing it with one built from the Logs` : `${p.rel} was made by another version of pixir; rebuilding it from the Logs` });
    } catch (err) {
      db?.close();
      if (!isCorruption(err) || attempt > 0) throw err;
      notes.push({ code: "index_rebuilt", text: `${p.rel} was unreadable (corrupt); rebuilding it from the Logs` });
    }
    removeIndexFiles(p);
    const fresh = connect(p.abs);
    tune(fresh, true);
    createSchema(fresh);
    return fresh;
  }
}

/**
 * A read-only Workspace: a copy in memory of the index as it is, when it is ours and readable (SQLite cannot
 * open a WAL file in place on a read-only disk), else one built in memory.
 */
function openReadOnly(p: StatePath, notes: OpenIndex["notes"]): OpenIndex {
  if (existsSync(p.abs)) {
    try {
      const bytes = readFileSync(p.abs);
      // The header's read and write versions (bytes 18, 19) say WAL (2); an image in memory cannot be WAL.
      if (bytes.length >= 100 && bytes[18] === 2 && bytes[19] === 2) bytes[18] = bytes[19] = 1;
      const db = connect(bytes);
      if (versionOf(db) === SEARCH_INDEX_VERSION) {
        notes.push({ code: "index_may_be_stale", text: `the Workspace is read-only: searching ${p.rel} as it is, which may miss recent changes to the Logs` });
        return { db, mode: "as_is", notes, path: p };
      }
      db.close();
    } catch {
      // Unusable as it is: fall through to an index in memory.
    }
  }
  notes.push({ code: "index_in_memory", text: `the Workspace is read-only and ${p.rel} is missing or unusable: indexing the Logs in memory for this search` });
  return inMemory(notes, p);
}

/** An index built in memory for one search: the file could not be used as it is nor replaced. */
export function memorySearchIndex(ws: string, why: string): OpenIndex {
  const p = searchIndexPath(ws);
  return inMemory([{ code: "index_in_memory", text: `${why}: indexing the Logs in memory for this search` }], p);
}

/** Close the index (the last connection to leave checkpoints the WAL into the file and removes it). */
export function closeSearchIndex(index: OpenIndex): void {
  index.db.close();
}

/** Open the search index of Workspace `ws` (archive.md §2). `rebuild` starts from an empty index. */
export function openSearchIndex(ws: string, rebuild = false): OpenIndex {
  const p = searchIndexPath(ws);
  const notes: OpenIndex["notes"] = [];
  try {
    ensureStateDir(p.parent());
    clearIndexPath(p, notes);
    if (rebuild) removeIndexFiles(p);
    const db = openWritable(p, notes);
    // `pixir index --rebuild` removed it on purpose: no note that it was missing.
    return { db, mode: "update", notes: rebuild ? notes.filter((n) => n.code !== "index_created") : notes, path: p };
  } catch (err) {
    if (isReadOnly(err) || (err instanceof PixirError && err.kind === "permission_denied")) return openReadOnly(p, notes);
    if (err instanceof PixirError && err.kind === "unsafe_state_path") {
      // Derived data is never needed to search: the Logs are indexed in memory, as on a read-only disk.
      const what = err.details.reason === "not_a_file" ? `${p.rel} is a ${String(err.details.actual_type)}, not an index file` : `${p.parent().rel} is not a plain directory (${String(err.details.reason)})`;
      notes.push({ code: "index_in_memory", text: `${what}: indexing the Logs in memory for this search; remove it to keep an index` });
      return inMemory(notes, p);
    }
    if (isCorruption(err)) throw new PixirError("log_write_failed", `the search index ${p.rel} is corrupt and could not be replaced`, { path: p.rel, reason: "corrupt_index", next_actions: [`remove ${p.rel} and search again`] });
    throw indexWriteFault(err, p);
  }
}
