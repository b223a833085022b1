// The import index of pixir import claude: `.pixir/claude-imports/` remembers, for each imported source
// file (under its root Log's id), its identity and times when it was read (inode, size, mtime, ctime) and
// the checkpoint that covers it. A file whose stat still matches, under a root Log whose last checkpoint is
// the one remembered, has not been written to since: it is known unchanged without reading it (the issue's
// "no full re-read of unchanged files"; claude-interop.md §4.6 otherwise reads and hashes it). Any write
// to a file changes its ctime, which no tool can set back, so a changed file always takes the full
// check. The index is a cache: the Logs are the record; a missing, stale or unwritable entry only costs
// the hash.
//
// It is kept as files of lines: a run that writes entries appends them, a line each, to one file of its
// own (`<ms>-<pid>-<8 hex>.ndjson`), after each batch of Logs is written. A file per root Log made a fresh
// import create as many index files as transcripts, which on a file system with many recently deleted
// inodes cost more than the rest of the import (docs/performance.md, "The Claude import"). Of a root's
// entries the newest (`at_ms`) counts; a line that does not parse (a run cut short mid-line) counts for
// nothing. A writing run that finds more than MERGE_AT files merges those not written to for an hour into one.
import { closeSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeSync, constants as fsConstants, mkdirSync, type Stats } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { isValidSessionId } from "../../event/session-id.js";

export interface KnownFile {
  version: 1;
  source: string;
  dev: number;
  ino: number;
  size: number;
  mtime_ms: number;
  ctime_ms: number;
  /** The checkpoint it was read under (§3.5 `bytes`, `sha256`). */
  bytes: number;
  sha256: string;
  /** §3.7: the session a fork file names in `forkedFrom`, else null. */
  fork_source: string | null;
}

/** An index line: an entry, the root Log it is kept under, and when it was written. */
interface KnownLine extends KnownFile {
  root: string;
  at_ms: number;
}

/** Index files past which a writing run merges the old ones. */
const MERGE_AT = 16;
/** An index file not written to for this long belongs to no running import. */
const MERGE_AGE_MS = 60 * 60 * 1000;
const RUN_FILE = /^[0-9]+-[0-9]+-[0-9a-f]{8}\.ndjson$/;

const indexDir = (ws: string): string => path.join(ws, ".pixir", "claude-imports");

/** A line's entry, or null for anything else (a torn line, another version, a field of the wrong type). */
function knownLine(text: string): KnownLine | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const e = v as Record<string, unknown>;
  const numbers = ["dev", "ino", "size", "mtime_ms", "ctime_ms", "bytes", "at_ms"].every((k) => typeof e[k] === "number");
  const ok =
    e.version === 1 &&
    typeof e.root === "string" &&
    isValidSessionId(e.root) &&
    typeof e.source === "string" &&
    typeof e.sha256 === "string" &&
    (e.fork_source === null || typeof e.fork_source === "string") &&
    numbers;
  return ok ? (e as unknown as KnownLine) : null;
}

/** The entry for a file read after `st` was taken (a stat taken before the read can only be older). */
export function knownEntry(source: string, st: Stats, bytes: number, sha256: string, forkSource: string | null): KnownFile {
  return { version: 1, source, dev: st.dev, ino: st.ino, size: st.size, mtime_ms: st.mtimeMs, ctime_ms: st.ctimeMs, bytes, sha256, fork_source: forkSource };
}

/** The file has not been written to since `known` was made of it. */
export function sameFile(known: KnownFile | null, source: string, st: Stats): known is KnownFile {
  return (
    known !== null &&
    known.source === source &&
    known.dev === st.dev &&
    known.ino === st.ino &&
    known.size === st.size &&
    known.mtime_ms === st.mtimeMs &&
    known.ctime_ms === st.ctimeMs
  );
}

/** The same file, and the root Log's last checkpoint is still the one the entry names. */
export function stillKnown(known: KnownFile | null, source: string, st: Stats, checkpoint: { bytes: number; sha256: unknown }): boolean {
  return sameFile(known, source, st) && known.bytes === checkpoint.bytes && known.sha256 === checkpoint.sha256;
}

/** A run's view of the import index: read once, when first asked; its new entries go to a file of its own. */
export class ImportIndex {
  /** The newest entry of each root, and the index file it is in. */
  private entries: Map<string, { line: KnownLine; file: string }> | null = null;
  /** The index files read, with their mtimes (the merge takes the old ones). */
  private files: Array<{ name: string; mtimeMs: number }> = [];
  private own: { name: string; fd: number } | null = null;
  private failed = false;

  constructor(private readonly ws: string) {}

  get(rootId: string): KnownFile | null {
    return this.load().get(rootId)?.line ?? null;
  }

  /** Append entries (the writing pass, once their Logs are written); a failure (a full disk) fails nothing. */
  add(entries: Array<{ rootId: string; entry: KnownFile }>): void {
    if (entries.length === 0 || this.failed) return;
    const known = this.load();
    const at = Date.now();
    const lines = entries.map(({ rootId, entry }): KnownLine => ({ ...entry, root: rootId, at_ms: at }));
    try {
      if (this.own === null) {
        mkdirSync(indexDir(this.ws), { recursive: true, mode: 0o700 });
        const name = `${at}-${process.pid}-${randomBytes(4).toString("hex")}.ndjson`;
        this.own = { name, fd: openSync(path.join(indexDir(this.ws), name), fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_APPEND | fsConstants.O_NOFOLLOW, 0o600) };
      }
      const bytes = Buffer.from(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
      for (let done = 0; done < bytes.length; ) done += writeSync(this.own.fd, bytes, done);
      for (const line of lines) known.set(line.root, { line, file: this.own.name });
    } catch {
      // A line cut short is skipped by the reader; no more lines from this run.
      this.failed = true;
    }
  }

  /** Close this run's file; if it wrote one and the index holds many, merge the old files into one. */
  close(): void {
    if (this.own === null) return;
    try {
      closeSync(this.own.fd);
    } catch {
      /* closed is closed */
    }
    this.own = null;
    const now = Date.now();
    const old = new Set(this.files.filter((f) => now - f.mtimeMs >= MERGE_AGE_MS).map((f) => f.name));
    if (this.files.length + 1 > MERGE_AT && old.size > 1) this.merge(old);
  }

  /**
   * Write, in one file, the entries of the `old` files that are still the newest of their root (one that a
   * newer file supersedes is not needed), then remove the old files.
   */
  private merge(old: Set<string>): void {
    const dir = indexDir(this.ws);
    const name = `${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}.ndjson`;
    const tmp = path.join(dir, `.${name}.tmp`);
    try {
      let text = "";
      for (const { line, file } of this.load().values()) if (old.has(file)) text += `${JSON.stringify(line)}\n`;
      const fd = openSync(tmp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
      // The merged file appears whole, before the files it replaces go.
      renameSync(tmp, path.join(dir, name));
      for (const n of old) unlinkSync(path.join(dir, n));
    } catch {
      rmSync(tmp, { force: true });
    }
  }

  private load(): Map<string, { line: KnownLine; file: string }> {
    if (this.entries !== null) return this.entries;
    const entries = new Map<string, { line: KnownLine; file: string }>();
    this.entries = entries;
    let names: string[];
    try {
      names = readdirSync(indexDir(this.ws)).filter((n) => RUN_FILE.test(n));
    } catch {
      return entries;
    }
    for (const name of names) {
      let text: string;
      try {
        const abs = path.join(indexDir(this.ws), name);
        const mtimeMs = statSync(abs).mtimeMs;
        text = readFileSync(abs, "utf8");
        this.files.push({ name, mtimeMs });
      } catch {
        continue;
      }
      for (const raw of text.split("\n")) {
        const line = raw === "" ? null : knownLine(raw);
        if (line !== null && (entries.get(line.root)?.line.at_ms ?? -1) <= line.at_ms) entries.set(line.root, { line, file: name });
      }
    }
    return entries;
  }
}

export const statFile = (abs: string): Stats => statSync(abs);
