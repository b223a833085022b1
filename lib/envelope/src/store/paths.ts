// envelope-and-log.md §6: the Workspace, Pixir's layout, and confinement of every state path.
import { closeSync, constants as fsConstants, fsyncSync, linkSync, lstatSync, mkdirSync, openSync, renameSync, rmdirSync, statSync, unlinkSync, writeSync, type Stats } from "node:fs";
import { createHash } from "node:crypto";
import { open as openFile, link as linkFile, unlink as unlinkFile } from "node:fs/promises";
import path from "node:path";
import { PixirError } from "../event/errors.js";
import { isRefusal, isWriteFaultCode } from "../event/os-codes.js";
import { osWriteFault } from "../event/os-fault.js";
import { randomHex } from "../event/ids.js";
import { resolveWorkspace } from "./workspace.js";

export const STATE_DIR = ".pixir";
export { resolveWorkspace };

/**
 * An export's `--out DIR`, resolved against `cwd`: it must name an existing directory (the spec index's rule
 * for `pixir export claude|codex`: invalid_args, field "out", reason missing or not_a_directory).
 */
export function existingOutDir(cwd: string, out: string): string {
  const dir = path.resolve(cwd, out);
  let st: Stats;
  try {
    st = statSync(dir);
  } catch {
    throw new PixirError("invalid_args", "--out must name an existing directory", { field: "out", reason: "missing" });
  }
  if (!st.isDirectory()) throw new PixirError("invalid_args", "--out must name an existing directory", { field: "out", reason: "not_a_directory" });
  return dir;
}

/** The state file is there as what it should be; false for missing, unsafe or unreadable paths alike. */
export function isPresent(p: StatePath): boolean {
  try {
    return inspectStatePath(p) === "present";
  } catch {
    return false;
  }
}

export type FileKind = "file" | "directory";

/** A state path below the Workspace, as components: [".pixir", "sessions", "s1.ndjson"]. */
export class StatePath {
  constructor(
    readonly workspace: string,
    readonly components: readonly string[],
    readonly kind: FileKind,
  ) {}

  /** Workspace-relative form, used in every error detail. */
  get rel(): string {
    return this.components.join("/");
  }

  get abs(): string {
    return path.join(this.workspace, ...this.components);
  }

  parent(): StatePath {
    return new StatePath(this.workspace, this.components.slice(0, -1), "directory");
  }

  child(name: string, kind: FileKind): StatePath {
    return new StatePath(this.workspace, [...this.components, name], kind);
  }

  sibling(name: string, kind: FileKind = this.kind): StatePath {
    return this.parent().child(name, kind);
  }
}

export const sessionsDir = (ws: string) => new StatePath(ws, [STATE_DIR, "sessions"], "directory");
export const logPath = (ws: string, id: string) => sessionsDir(ws).child(`${id}.ndjson`, "file");
const MAX_NAME_BYTES = 255;

/**
 * The append journal is `<id>.ndjson.append-journal`. For ids over 233 bytes that name would pass the
 * filesystem's 255-byte limit (the spec's layout overlooks it), so those ids use a hashed name that no
 * session id can produce (ids never start with ".").
 */
export function journalPath(ws: string, id: string): StatePath {
  const name = `${id}.ndjson.append-journal`;
  if (Buffer.byteLength(name, "utf8") <= MAX_NAME_BYTES) return sessionsDir(ws).child(name, "file");
  return sessionsDir(ws).child(`.append-journal-${createHash("sha256").update(id, "utf8").digest("hex")}`, "file");
}
export const sessionDataDir = (ws: string, id: string) => sessionsDir(ws).child(id, "directory");
export const leasesDir = (ws: string) => new StatePath(ws, [STATE_DIR, "session_leases"], "directory");
export const leasePath = (ws: string, id: string) => leasesDir(ws).child(`${id}.json`, "file");
export const releasesDir = (ws: string) => leasesDir(ws).child("releases", "directory");

function typeOf(st: Stats): string {
  if (st.isSymbolicLink()) return "symlink";
  if (st.isDirectory()) return "directory";
  if (st.isFile()) return "file";
  if (st.isFIFO()) return "fifo";
  if (st.isSocket()) return "socket";
  return "other";
}

function unsafe(p: StatePath, index: number, reason: string, extra: Record<string, unknown> = {}): PixirError {
  return new PixirError("unsafe_state_path", undefined, {
    reason,
    component: p.components.slice(0, index + 1).join("/"),
    component_index: index,
    ...extra,
  });
}

function osFailure(err: unknown, p: StatePath, index: number, operation: string, reason: string): PixirError {
  const code = (err as NodeJS.ErrnoException).code;
  const rel = p.components.slice(0, index + 1).join("/");
  // A directory that cannot be made on a full or read-only disk is a write fault, not an unsafe path.
  if (operation === "mkdir" && isWriteFaultCode(code)) return osWriteFault(err, rel, operation);
  if (isRefusal(code)) return new PixirError("permission_denied", undefined, { path: rel, operation });
  return unsafe(p, index, reason, { filesystem_reason: code ?? "unknown" });
}

/**
 * lstat every component below the Workspace root. Returns "missing" when a component does not exist,
 * "present" when the whole path exists with the expected final type; refuses symlinks anywhere.
 */
export function inspectStatePath(p: StatePath): "missing" | "present" {
  const n = p.components.length;
  for (let i = 0; i < n; i++) {
    const abs = path.join(p.workspace, ...p.components.slice(0, i + 1));
    let st: Stats | undefined;
    try {
      // A missing path is the common answer (a Log about to be made): no error is made for it.
      st = lstatSync(abs, { throwIfNoEntry: false });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return "missing";
      if (code === "ENOTDIR") throw unsafe(p, Math.max(i - 1, 0), "non_directory_component");
      throw osFailure(err, p, i, "lstat", "lstat_failed");
    }
    if (st === undefined) return "missing";
    const actual = typeOf(st);
    if (actual === "symlink") throw unsafe(p, i, "symlink_component", { actual_type: "symlink" });
    const last = i === n - 1;
    if (!last && actual !== "directory") throw unsafe(p, i, "non_directory_component", { actual_type: actual, expected_type: "directory" });
    if (last && actual !== p.kind) throw unsafe(p, i, "unexpected_file_type", { actual_type: actual, expected_type: p.kind });
  }
  return "present";
}

/**
 * Create a directory path one component at a time (mkdir, then lstat again); never mkdir -p.
 * Returns the absolute paths it created, outermost first, so a failed write can remove them again.
 */
export function ensureStateDir(p: StatePath): string[] {
  const created: string[] = [];
  if (p.kind !== "directory") throw unsafe(p, p.components.length - 1, "invalid_expected_type");
  for (let i = 0; i < p.components.length; i++) {
    const abs = path.join(p.workspace, ...p.components.slice(0, i + 1));
    let st: Stats | undefined;
    try {
      st = lstatSync(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw osFailure(err, p, i, "lstat", "lstat_failed");
    }
    if (st === undefined) {
      try {
        mkdirSync(abs, { mode: 0o755 });
        created.push(abs);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw osFailure(err, p, i, "mkdir", "mkdir_failed");
      }
      try {
        st = lstatSync(abs);
      } catch (err) {
        throw osFailure(err, p, i, "lstat", "lstat_failed");
      }
    }
    const actual = typeOf(st);
    if (actual === "symlink") throw unsafe(p, i, "symlink_component", { actual_type: "symlink" });
    if (actual !== "directory") throw unsafe(p, i, "non_directory_component", { actual_type: actual, expected_type: "directory" });
  }
  return created;
}

/** Remove a file if it is there; anything else (a folder, a path not ours to change) is left as it is. */
export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already, not a file, or not ours to remove
  }
}

/** Remove directories this process created, innermost first, if they are still empty. */
export function removeCreatedDirs(created: readonly string[]): void {
  for (const abs of [...created].reverse()) {
    try {
      rmdirSync(abs);
    } catch {
      return; // not empty (someone else uses it) or already gone: leave the rest too
    }
  }
}

/**
 * Put a file at `target` that is never seen half-written: `text` goes to the fresh file `tmp`
 * (exclusive create, no symlink followed, fsync), which is then linked to `target` (failing with
 * EEXIST, as an exclusive create would, when it exists: how leases and journals exclude each other) or
 * renamed over it (to replace). The temp file never outlives the call.
 */
/**
 * Write all of `bytes`: one write(2) may write less than asked (Linux caps it near 2 GiB; a filling disk
 * takes what fits before it says ENOSPC), and a file must land whole or fail.
 */
export function writeWhole(fd: number, bytes: Uint8Array): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
}

export function placeComplete(tmp: StatePath, target: StatePath, text: string | Buffer, how: "link" | "rename"): void {
  let fd: number | undefined;
  let placed = false;
  try {
    fd = openSync(tmp.abs, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o644);
    writeWhole(fd, typeof text === "string" ? Buffer.from(text) : text);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    if (how === "rename") {
      renameSync(tmp.abs, target.abs);
      placed = true;
    } else linkSync(tmp.abs, target.abs);
  } finally {
    if (fd !== undefined) closeSync(fd);
    if (!placed) {
      try {
        unlinkSync(tmp.abs);
      } catch {
        /* never created */
      }
    }
  }
}

/**
 * placeComplete's "link" on libuv's threads: the same steps (exclusive create, whole write, fsync, link,
 * the temp file removed on every path), for a writer that places many files at once, so that their
 * fsyncs are in flight together and the file system commits them in a few journal transactions.
 */
export async function linkCompleteAsync(tmp: StatePath, target: StatePath, text: string): Promise<void> {
  let created = false;
  try {
    const file = await openFile(tmp.abs, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o644);
    created = true;
    try {
      const bytes = Buffer.from(text);
      for (let done = 0; done < bytes.length; ) done += (await file.write(bytes, done)).bytesWritten;
      await file.sync();
    } finally {
      await file.close();
    }
    await linkFile(tmp.abs, target.abs);
  } finally {
    if (created) await unlinkFile(tmp.abs).catch(() => undefined);
  }
}

/** A temp sibling of a state file: `<name>.tmp-<8 hex>`, the name `pixir-log check` reports if left. */
export const tempSibling = (target: StatePath): StatePath => target.sibling(`${target.components.at(-1)}.tmp-${randomHex(4)}`);

/** The session id whose Log a name in `.pixir/sessions` is a temp sibling of (`<id>.ndjson.tmp-<8 hex>`), else null. */
export function logTempOwner(name: string): string | null {
  return /^(.*)\.ndjson\.tmp-[0-9a-f]{8}$/.exec(name)?.[1] ?? null;
}
