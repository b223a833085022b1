// view.md §1 and §2: where an export of a page or of Markdown goes. Without --out it is a stream on
// stdout; with --out FILE the file appears whole or not at all and an existing one is refused; with
// --dry-run nothing is written and only the size is counted.
import path from "node:path";
import { assertOutDirectory, ExportFile, exportExists, pathExists } from "../store/export-file.js";
import type { ViewSession } from "./html-export.js";

export interface ViewReport {
  ok: true;
  dry_run: boolean;
  /** The file written (absolute), or null for a dry run. */
  file: string | null;
  sessions: ViewSession[];
  bytes: number;
}

const STAGE_BYTES = 256 * 1024;

const bytesOf = (chunk: Buffer | string): Buffer => (typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk);

/** Write an export to stdout (a `write` that waits for the reader). */
export async function streamExport(chunks: AsyncIterable<Buffer | string>, write: (chunk: Buffer) => Promise<void>): Promise<void> {
  for await (const chunk of chunks) await write(bytesOf(chunk));
}

/**
 * --out FILE (resolved against `cwd`), or with `dryRun` only the count. `what` names the file in
 * errors ("the exported page"). Returns the report of view.md §1 `--dry-run --json`, with `file`.
 */
export async function exportToFile(
  chunks: AsyncIterable<Buffer | string>,
  options: { out: string | undefined; cwd: string; dryRun: boolean; what: string; sessions: ViewSession[] },
): Promise<ViewReport> {
  const target = options.out === undefined ? null : path.resolve(options.cwd, options.out);
  if (target !== null) {
    assertOutDirectory(target);
    if (pathExists(target)) throw exportExists(options.out!);
  }
  let bytes = 0;
  if (options.dryRun || target === null) {
    for await (const chunk of chunks) bytes += bytesOf(chunk).length;
    return { ok: true, dry_run: true, file: null, sessions: options.sessions, bytes };
  }
  const file = new ExportFile(target, options.out!, options.what);
  try {
    // Small pieces (an Event's Markdown) are gathered into larger writes.
    let staged: Buffer[] = [];
    let size = 0;
    const write = () => {
      file.write(staged.length === 1 ? staged[0]! : Buffer.concat(staged, size));
      staged = [];
      size = 0;
    };
    for await (const chunk of chunks) {
      const b = bytesOf(chunk);
      staged.push(b);
      size += b.length;
      bytes += b.length;
      if (size >= STAGE_BYTES) write();
    }
    if (size > 0) write();
    file.commit();
  } finally {
    file.discard();
  }
  return { ok: true, dry_run: false, file: target, sessions: options.sessions, bytes };
}
