// The import index of pixir import claude: `.pixir/claude-imports/<root Log id>.json` remembers, for each
// imported source file, its identity and times when it was read (inode, size, mtime, ctime) and the
// checkpoint that covers it. A file whose stat still matches, under a root Log whose last checkpoint is
// the one remembered, has not been written to since: it is known unchanged without reading it (the issue's
// "no full re-read of unchanged files"; claude-interop.md §4.6 otherwise reads and hashes it). Any write
// to a file changes its ctime, which no tool can set back, so a changed file always takes the full
// check. The index is a cache: the Logs are the record; a missing, stale or unwritable entry only costs
// the hash.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, type Stats } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";

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

const knownPath = (ws: string, rootId: string): string => path.join(ws, ".pixir", "claude-imports", `${rootId}.json`);

export function readKnown(ws: string, rootId: string): KnownFile | null {
  try {
    const v = JSON.parse(readFileSync(knownPath(ws, rootId), "utf8")) as KnownFile;
    return v.version === 1 ? v : null;
  } catch {
    return null;
  }
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

/** Write an entry; a failure (a full disk) leaves no temp file and fails nothing. */
export function writeKnown(ws: string, rootId: string, entry: KnownFile): void {
  const target = knownPath(ws, rootId);
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
    renameSync(tmp, target);
  } catch {
    rmSync(tmp, { force: true });
  }
}

/** writeKnown for many entries at once, their writes on libuv's threads (the writing pass of a batch). */
export async function writeKnownAll(ws: string, entries: Array<{ rootId: string; entry: KnownFile }>): Promise<void> {
  if (entries.length === 0) return;
  try {
    mkdirSync(path.dirname(knownPath(ws, entries[0]!.rootId)), { recursive: true, mode: 0o700 });
  } catch {
    return;
  }
  await Promise.all(
    entries.map(async ({ rootId, entry }) => {
      const target = knownPath(ws, rootId);
      const tmp = `${target}.tmp-${process.pid}`;
      try {
        await writeFile(tmp, JSON.stringify(entry), { mode: 0o600 });
        await rename(tmp, target);
      } catch {
        await rm(tmp, { force: true });
      }
    }),
  );
}

export const statFile = (abs: string): Stats => statSync(abs);
