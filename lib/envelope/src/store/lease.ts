// writer-lease.md: at most one process writes a Session's Log. The file format is Pixir's.
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from "node:fs";
import { readFile, unlink } from "node:fs/promises";
import os from "node:os";
import { PixirError } from "../event/errors.js";
import { leaseCreateFault, osWriteFault } from "../event/os-fault.js";
import { randomHex } from "../event/ids.js";
import { ensureStateDir, inspectStatePath, leasePath, leasesDir, linkCompleteAsync, placeComplete, releasesDir, removeCreatedDirs, StatePath, tempSibling } from "./paths.js";
import { isJsonObject } from "../event/envelope.js";

export const HEARTBEAT_INTERVAL_MS = 1000;
export const STALE_AFTER_MS = 5000;
const FUTURE_TOLERANCE_MS = 5000;
const HOLDER_PATTERN = /^wrl_[0-9a-f]{16}$/;
const HOLDER_KEYS = [
  "version",
  "purpose",
  "session_id",
  "workspace",
  "holder_id",
  "os_pid",
  "beam_node",
  "hostname",
  "program",
  "started_at",
  "heartbeat_at",
  "heartbeat_interval_ms",
  "stale_after_ms",
] as const;

export type LeaseState = "available" | "active" | "stale" | "ambiguous";

export interface LeaseStatus {
  state: LeaseState;
  session_id: string;
  workspace: string;
  lease_path: string;
  writer_present: boolean;
  holder?: Record<string, unknown>;
  heartbeat_age_ms?: number;
  stale_after_ms?: number;
  holder_alive?: boolean | null;
  details?: { reason: string; lease?: Record<string, unknown>; next_actions: string[] };
  next_actions?: string[];
  /** Not printed: what the classification saw, for the re-checks of forced release and takeover. */
  raw?: Record<string, unknown>;
}

const ACTIVE_ACTIONS = ["wait_for_writer_exit", "inspect_session_writer_lease", "use_pixir_lock_release_--force_only_if_orphaned"];
const STALE_ACTIONS = ["inspect_session_writer_lease", "use_pixir_lock_release_--force_if_the_writer_is_orphaned", "preserve_session_log_evidence"];
const AMBIGUOUS_ACTIONS = [
  "inspect_session_writer_lease",
  "avoid_starting_a_competing_writer",
  "use_pixir_lock_release_--force_only_after_confirming_the_writer_is_orphaned",
];

/** The status object as printed: the internal `raw` copy stripped. */
export function publicStatus(s: LeaseStatus, withNextActions = true): Record<string, unknown> {
  const { raw: _raw, next_actions, ...rest } = s;
  return withNextActions && next_actions !== undefined ? { ...rest, next_actions } : rest;
}

function readBootId(): string | null {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || null;
  } catch {
    return null;
  }
}

/** Field 22 of /proc/<pid>/stat: the process start time in clock ticks since boot. */
export function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // Fields after the command start at field 3, so field 22 is index 19.
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** This process, as a lease or an append journal records its writer (our keys). */
export function writerProcess(): { os_pid: string; hostname: string; proc_start: string | null } {
  return { os_pid: String(process.pid), hostname: os.hostname(), proc_start: procStart(process.pid) };
}

/**
 * True only when `record` provably names another live process: this host, its pid alive, and the same
 * start time where one was recorded (so a reused pid does not count).
 */
export function otherWriterAlive(record: Record<string, unknown>): boolean {
  if (record.hostname !== os.hostname() || typeof record.os_pid !== "string" || !/^[0-9]+$/.test(record.os_pid)) return false;
  const pid = Number(record.os_pid);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || !pidAlive(pid)) return false;
  return typeof record.proc_start !== "string" || procStart(pid) === record.proc_start;
}

function holderAlive(lease: Record<string, unknown>): boolean | null {
  if (lease.hostname !== os.hostname()) return null;
  const pid = typeof lease.os_pid === "string" && /^[0-9]+$/.test(lease.os_pid) ? Number(lease.os_pid) : NaN;
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  return pidAlive(pid);
}

function ambiguous(base: Omit<LeaseStatus, "state" | "writer_present">, reason: string, lease?: Record<string, unknown>): LeaseStatus {
  const details: LeaseStatus["details"] = { reason, next_actions: AMBIGUOUS_ACTIONS };
  if (lease !== undefined) details.lease = lease;
  return { state: "ambiguous", ...base, writer_present: true, details, next_actions: AMBIGUOUS_ACTIONS, raw: lease };
}

/** writer-lease.md §4: classify the lease file of `id`. Throws only for an unsafe path. */
export function leaseStatus(ws: string, id: string, now: number = Date.now()): LeaseStatus {
  const p = leasePath(ws, id);
  const base = { session_id: id, workspace: ws, lease_path: p.abs };
  if (inspectStatePath(p) === "missing") return { state: "available", ...base, writer_present: false };
  let text: string;
  try {
    text = readFileSync(p.abs, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { state: "available", ...base, writer_present: false };
    return ambiguous(base, "unreadable_lease");
  }
  let lease: unknown;
  try {
    lease = JSON.parse(text);
  } catch {
    return ambiguous(base, "invalid_json");
  }
  if (!isJsonObject(lease)) return ambiguous(base, "not_an_object");
  if (
    lease.version !== 1 ||
    lease.purpose !== "session_writer" ||
    lease.session_id !== id ||
    typeof lease.workspace !== "string" ||
    !sameWorkspace(lease.workspace, ws) ||
    typeof lease.holder_id !== "string"
  ) {
    return ambiguous(base, "lease_identity_mismatch_or_missing_fields", lease);
  }
  const beat = lease.heartbeat_at_ms;
  if (typeof beat !== "number" || !Number.isInteger(beat)) return ambiguous(base, "missing_heartbeat_at_ms", lease);
  if (beat > now + FUTURE_TOLERANCE_MS) return ambiguous(base, "heartbeat_is_in_the_future", lease);
  const staleAfter = typeof lease.stale_after_ms === "number" && Number.isInteger(lease.stale_after_ms) && lease.stale_after_ms > 0 ? lease.stale_after_ms : STALE_AFTER_MS;
  const state: LeaseState = now - beat <= staleAfter ? "active" : "stale";
  const holder: Record<string, unknown> = {};
  for (const k of HOLDER_KEYS) if (lease[k] !== undefined) holder[k] = lease[k];
  return {
    state,
    ...base,
    writer_present: true,
    holder,
    heartbeat_age_ms: Math.max(now - beat, 0),
    stale_after_ms: staleAfter,
    holder_alive: holderAlive(lease),
    next_actions: state === "active" ? ACTIVE_ACTIONS : STALE_ACTIONS,
    raw: lease,
  };
}

function sameWorkspace(recorded: string, ws: string): boolean {
  if (recorded === ws) return true;
  try {
    // The recorded path may be an alias (symlink) of the same Workspace.
    return realpathSync(recorded) === ws;
  } catch {
    return false;
  }
}

function leaseError(status: LeaseStatus): PixirError {
  const lease = publicStatus(status, false);
  switch (status.state) {
    case "active":
      return new PixirError("session_writer_active", undefined, { lease });
    case "stale":
      return new PixirError("session_writer_stale", undefined, { lease });
    default:
      return new PixirError("session_writer_ambiguous", undefined, { lease });
  }
}

function lostError(message: string, ws: string, id: string): PixirError {
  let lease: Record<string, unknown> | null = null;
  try {
    lease = publicStatus(leaseStatus(ws, id), false);
  } catch {
    lease = null;
  }
  return new PixirError("session_writer_lost", message, { lease });
}

/** Replace `target` by a complete file (heartbeats, takeovers). */
const writeAtomically = (target: StatePath, text: string): void => placeComplete(tempSibling(target), target, text, "rename");

function readLeaseObject(p: StatePath): Record<string, unknown> | "missing" | "unreadable" {
  try {
    return leaseObjectOf(readFileSync(p.abs, "utf8"));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable";
  }
}

/** readLeaseObject on libuv's threads. */
async function readLeaseObjectAsync(p: StatePath): Promise<Record<string, unknown> | "missing" | "unreadable"> {
  try {
    return leaseObjectOf(await readFile(p.abs, "utf8"));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "unreadable";
  }
}

function leaseObjectOf(text: string): Record<string, unknown> | "unreadable" {
  const v = JSON.parse(text);
  return isJsonObject(v) ? v : "unreadable";
}

/** What a job that writes Logs is given: the program and environment its leases name, a dry run, a stop. */
export interface WriterOptions {
  program: string;
  env: NodeJS.ProcessEnv;
  dryRun?: boolean;
  signal?: AbortSignal;
}

/** What every such job reports of the one Log it writes (cli.md §8). */
export interface WriterReport {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  session_id: string;
  log_path: string;
}

export interface AcquireOptions {
  program: string;
  env: NodeJS.ProcessEnv;
  /** Seconds to keep retrying a held lease (100 ms apart) before failing. */
  waitSeconds?: number;
  takeOverDeadWriter?: boolean;
  /** Aborts a wait (e.g. on SIGINT). */
  signal?: AbortSignal;
}

/**
 * writer-lease.md §6 "On loss, the writer stops at once": a signal for a writer's reads of stdin that
 * aborts with `base` (SIGINT, SIGTERM) and, once `follow` names the lease, when the lease is lost. A
 * writer waiting on a silent stdin would otherwise notice the loss only when its next line arrived.
 */
export function stopOnLoss(base?: AbortSignal): { signal: AbortSignal; follow(lease: WriterLease): void } {
  const controller = new AbortController();
  return {
    signal: base === undefined ? controller.signal : AbortSignal.any([base, controller.signal]),
    follow(lease) {
      const lost = () => controller.abort(lease.signal.reason);
      if (lease.signal.aborted) lost();
      else lease.signal.addEventListener("abort", lost, { once: true });
    },
  };
}

/** A held (or borrowed) Writer Lease. `signal` aborts when the lease is lost. */
export class WriterLease {
  private timer: NodeJS.Timeout | undefined;
  private readonly controller = new AbortController();
  private lostReason: PixirError | undefined;
  private released = false;

  constructor(
    readonly workspace: string,
    readonly sessionId: string,
    readonly holderId: string,
    /** False when borrowed through PIXIR_WRITER_LEASE: the owner heartbeats and releases. */
    readonly owned: boolean,
    private record: Record<string, unknown> | undefined,
    /** State directories created to hold this lease; removed on release when the write left nothing. */
    readonly createdDirs: string[] = [],
  ) {}

  get path(): StatePath {
    return leasePath(this.workspace, this.sessionId);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The error that ended the lease, if it was lost. */
  get lost(): PixirError | undefined {
    return this.lostReason;
  }

  startHeartbeat(): void {
    if (!this.owned || this.timer !== undefined) return;
    this.timer = setInterval(() => this.beat(), HEARTBEAT_INTERVAL_MS);
    // The heartbeat must not keep a finished process alive.
    this.timer.unref();
  }

  private stopHeartbeat(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private markLost(message: string): void {
    if (this.lostReason !== undefined) return;
    this.lostReason = lostError(message, this.workspace, this.sessionId);
    this.stopHeartbeat();
    this.controller.abort(this.lostReason);
  }

  /** writer-lease.md §6: re-read, then rewrite atomically if it is still ours. */
  beat(now: number = Date.now()): void {
    if (this.released || this.lostReason !== undefined) return;
    const seen = readLeaseObject(this.path);
    if (seen === "missing") return this.markLost("Session writer lease disappeared");
    if (seen === "unreadable" || seen.holder_id !== this.holderId) return this.markLost("Session writer lease is held by another writer");
    const next = { ...(this.record ?? seen), heartbeat_at_ms: now, heartbeat_at: new Date(now).toISOString() };
    try {
      writeAtomically(this.path, `${JSON.stringify(next, null, 2)}\n`);
      this.record = next;
    } catch {
      // A failed rewrite is retried on the next tick; the pre-commit check still guards the write.
    }
  }

  /** Pre-commit check: the lease must still name our holder (owned or borrowed). */
  assertHeld(): void {
    if (this.lostReason !== undefined) throw this.lostReason;
    const seen = readLeaseObject(this.path);
    if (seen === "missing") {
      this.markLost("Session writer lease is no longer present");
      throw this.lostReason!;
    }
    if (seen === "unreadable" || seen.holder_id !== this.holderId) {
      this.markLost("Session writer lease is held by another writer");
      throw this.lostReason!;
    }
  }

  /**
   * writer-lease.md §8: delete the file only if it still holds our holder id. With `tidy`, also remove
   * the (empty) state directories this lease created, so a refused first write leaves no `.pixir/`.
   */
  release(tidy = false): void {
    if (!this.releasing()) return;
    if (this.isOurs(readLeaseObject(this.path))) {
      try {
        unlinkSync(this.path.abs);
      } catch {
        /* gone already */
      }
    }
    if (tidy) removeCreatedDirs(this.createdDirs);
  }

  /** release() with its read and removal on libuv's threads, for a writer that releases many leases at once. */
  async releaseAsync(tidy = false): Promise<void> {
    if (!this.releasing()) return;
    if (this.isOurs(await readLeaseObjectAsync(this.path))) await unlink(this.path.abs).catch(() => undefined);
    if (tidy) removeCreatedDirs(this.createdDirs);
  }

  /** Marks the lease released and stops its heartbeat; true when the file is this process's to remove. */
  private releasing(): boolean {
    if (this.released) return false;
    this.released = true;
    this.stopHeartbeat();
    return this.owned;
  }

  private isOurs(seen: Record<string, unknown> | "missing" | "unreadable"): boolean {
    return seen !== "missing" && seen !== "unreadable" && seen.holder_id === this.holderId;
  }
}

/** This boot and this process's start time, read once: neither changes while the process lives. */
const own: { known?: { bootId: string | null; procStart: string | null } } = {};
const ownProcess = (): { bootId: string | null; procStart: string | null } => (own.known ??= { bootId: readBootId(), procStart: procStart(process.pid) });

function newLeaseRecord(ws: string, id: string, program: string, now: number): Record<string, unknown> {
  const iso = new Date(now).toISOString();
  const p = leasePath(ws, id);
  return {
    version: 1,
    purpose: "session_writer",
    session_id: id,
    workspace: ws,
    lease_path: p.abs,
    holder_id: `wrl_${randomHex(8)}`,
    os_pid: String(process.pid),
    beam_node: "nonode@nohost",
    hostname: os.hostname(),
    program,
    boot_id: ownProcess().bootId,
    proc_start: ownProcess().procStart,
    started_at_ms: now,
    started_at: iso,
    heartbeat_at_ms: now,
    heartbeat_at: iso,
    heartbeat_interval_ms: HEARTBEAT_INTERVAL_MS,
    stale_after_ms: STALE_AFTER_MS,
  };
}

/** writer-lease.md §7: present a lease owned by a parent process. */
function borrowLease(ws: string, id: string, holderId: string): WriterLease {
  if (!HOLDER_PATTERN.test(holderId)) {
    throw new PixirError("invalid_args", "PIXIR_WRITER_LEASE is not a writer lease holder id", {
      field: "PIXIR_WRITER_LEASE",
      reason: "invalid_format",
      next_actions: ["unset PIXIR_WRITER_LEASE or pass the holder_id of a lease this process may use"],
    });
  }
  const p = leasePath(ws, id);
  if (inspectStatePath(leasesDir(ws)) === "present" && inspectStatePath(p) === "present") {
    const seen = readLeaseObject(p);
    if (seen !== "missing") {
      if (seen !== "unreadable" && seen.holder_id === holderId) return new WriterLease(ws, id, holderId, false, undefined);
      throw new PixirError("session_writer_ambiguous", "Session writer lease holder does not match", {
        lease: publicStatus(leaseStatus(ws, id), false),
        current_holder: seen === "unreadable" ? null : (seen.holder_id ?? null),
        expected_holder_id: holderId,
      });
    }
  }
  throw lostError("Session writer lease is no longer present", ws, id);
}

/** One exclusive-create attempt. Returns the held lease, or the status that blocked it. */
function tryCreate(ws: string, id: string, program: string, createdDirs: string[]): WriterLease | LeaseStatus {
  const p = leasePath(ws, id);
  for (let attempt = 0; attempt < 2; attempt++) {
    const record = newLeaseRecord(ws, id, program, Date.now());
    try {
      createComplete(p, `${JSON.stringify(record, null, 2)}\n`);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && attempt === 0) {
        // A refused writer tidied the empty directory away in between: make it again, once.
        createdDirs.push(...ensureStateDir(leasesDir(ws)));
        continue;
      }
      if (code === "EEXIST") {
        const status = leaseStatus(ws, id);
        if (status.state === "available") continue; // vanished in between: retry once
        return status;
      }
      throw leaseCreateFault(err, p.rel, "open");
    }
    return new WriterLease(ws, id, record.holder_id as string, true, record, createdDirs);
  }
  return ambiguous({ session_id: id, workspace: ws, lease_path: p.abs }, "lease_vanished_during_acquire");
}

/**
 * §3 step 2, made so the lease is never seen half-written: it is linked into place complete
 * (placeComplete). link() fails with EEXIST exactly as an exclusive create would, so contenders still
 * exclude each other (and Pixir's exclusive create); but a contender, a `--wait` loop or a crash can no
 * longer meet an empty lease file, which would read as ambiguous and block the Session until a forced
 * release.
 */
const createComplete = (target: StatePath, text: string): void => placeComplete(tempSibling(target), target, text, "link");

/**
 * writer-lease.md §3, §7, §9a: acquire `id`'s lease (or borrow it from PIXIR_WRITER_LEASE) and start
 * the heartbeat. With waitSeconds, a held lease is retried every 100 ms until the deadline.
 */
export async function acquireLease(ws: string, id: string, options: AcquireOptions): Promise<WriterLease> {
  const borrowed = options.env.PIXIR_WRITER_LEASE;
  if (borrowed !== undefined && borrowed !== "") return borrowLease(ws, id, borrowed);
  const createdDirs = ensureStateDir(leasesDir(ws));
  const p = leasePath(ws, id);
  inspectStatePath(p);
  const deadline = Date.now() + Math.max(options.waitSeconds ?? 0, 0) * 1000;
  try {
    for (;;) {
      const result = tryCreate(ws, id, options.program, createdDirs);
      if (result instanceof WriterLease) {
        result.startHeartbeat();
        return result;
      }
      const takeOver = options.takeOverDeadWriter || options.env.PIXIR_TAKE_OVER_DEAD_WRITER === "1";
      if (result.state === "stale" && takeOver && takeOverDeadWriter(ws, id, result, options.program)) continue;
      const waitable = result.state === "active" || result.state === "stale";
      if (!waitable || Date.now() >= deadline || options.signal?.aborted) throw leaseError(result);
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    // No lease, no trace: the directories made for it go again (a full disk leaves no empty .pixir/).
    removeCreatedDirs(createdDirs);
    throw err;
  }
}

/**
 * §3 for the Logs of many Sessions at once (an import that creates many): the first exclusive create of
 * every lease is in flight together (linkCompleteAsync), so their fsyncs share journal commits; an id
 * whose first create fails in any way then takes acquireLease, in order, which retries, classifies and
 * names the error. Returns, in the order of `ids`, each lease or the error that refused it; the caller
 * releases every lease. State directories made for the leases go with the first lease (release(true)).
 */
export async function acquireLeases(ws: string, ids: readonly string[], options: AcquireOptions): Promise<Array<WriterLease | unknown>> {
  const out: Array<WriterLease | unknown> = [];
  const borrowed = options.env.PIXIR_WRITER_LEASE;
  let first: Array<WriterLease | null> = ids.map(() => null);
  let createdDirs: string[] = [];
  if (borrowed === undefined || borrowed === "") {
    try {
      createdDirs = ensureStateDir(leasesDir(ws));
    } catch {
      /* acquireLease names it, for each id */
    }
    first = await Promise.all(
      ids.map(async (id) => {
        try {
          // No inspection of the path here: link() refuses anything already at it (EEXIST), a symlink too,
          // and the lease then takes acquireLease, which inspects and names it.
          const p = leasePath(ws, id);
          const record = newLeaseRecord(ws, id, options.program, Date.now());
          await linkCompleteAsync(tempSibling(p), p, `${JSON.stringify(record, null, 2)}\n`);
          return new WriterLease(ws, id, record.holder_id as string, true, record, []);
        } catch {
          return null;
        }
      }),
    );
  }
  for (let i = 0; i < ids.length; i++) {
    const made = first[i];
    if (made !== null) {
      made.startHeartbeat();
      out.push(made);
      continue;
    }
    try {
      out.push(await acquireLease(ws, ids[i]!, options));
    } catch (err) {
      out.push(err);
    }
  }
  const holder = out.find((l): l is WriterLease => l instanceof WriterLease);
  if (holder !== undefined) holder.createdDirs.push(...createdDirs);
  else removeCreatedDirs(createdDirs);
  return out;
}

/** writer-lease.md §9a: take over a stale lease whose holder is provably dead on this host and boot. */
function takeOverDeadWriter(ws: string, id: string, status: LeaseStatus, program: string): boolean {
  const lease = status.raw;
  if (lease === undefined || lease.hostname !== os.hostname()) return false;
  const boot = readBootId();
  if (boot === null || lease.boot_id !== boot || typeof lease.proc_start !== "string") return false;
  const pid = typeof lease.os_pid === "string" && /^[0-9]+$/.test(lease.os_pid) ? Number(lease.os_pid) : NaN;
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  const dead = !pidAlive(pid) || procStart(pid) !== lease.proc_start;
  if (!dead) return false;
  const steal = leasesDir(ws).child(`${id}.json.steal`, "file");
  inspectStatePath(steal);
  let fd: number;
  try {
    fd = openSync(steal.abs, "wx", 0o644);
  } catch {
    return false; // someone else is taking over; the normal error stands
  }
  try {
    try {
      writeSync(fd, JSON.stringify({ os_pid: String(process.pid), started_at_ms: Date.now() }));
    } catch (err) {
      throw osWriteFault(err, steal.rel, "write", "the lease takeover marker");
    } finally {
      closeSync(fd);
    }
    const again = leaseStatus(ws, id);
    if (again.state !== "stale" || again.raw?.holder_id !== lease.holder_id) return false;
    writeReleaseRecord(ws, id, "holder_dead", again, program);
    try {
      unlinkSync(leasePath(ws, id).abs);
    } catch (err) {
      // A forced release got there first: the lease is gone either way, so acquire as usual.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    return true;
  } finally {
    try {
      unlinkSync(steal.abs);
    } catch {
      /* gone */
    }
  }
}

function releaseRecordName(id: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").slice(0, 15);
  const hash = createHash("sha256").update(id, "utf8").digest("hex").slice(0, 16);
  return `${stamp}-${hash}-${randomHex(3)}.json`;
}

/** Write a release record atomically to a name that did not exist; returns its StatePath. */
function writeReleaseRecord(ws: string, id: string, reason: string, before: LeaseStatus, program: string): StatePath {
  const dir = releasesDir(ws);
  const createdDirs = ensureStateDir(dir);
  const now = new Date();
  const record = {
    version: 1,
    kind: "session_writer_lease_forced_release",
    session_id: id,
    workspace: ws,
    reason,
    released_at: now.toISOString(),
    state_before: publicStatus(before),
    note: "This record is lease diagnostic evidence only; the Session Log was not rewritten.",
    released_by: { os_pid: String(process.pid), hostname: os.hostname(), program },
  };
  const target = dir.child(releaseRecordName(id, now), "file");
  try {
    placeComplete(tempSibling(target), target, `${JSON.stringify(record, null, 2)}\n`, "link"); // never replaces a record
  } catch (err) {
    removeCreatedDirs(createdDirs);
    throw osWriteFault(err, target.rel, "write");
  }
  return target;
}

export interface ForcedReleaseResult {
  ok: true;
  released: boolean;
  state_before: Record<string, unknown>;
  reason: string;
  release_record_path?: string;
  /** Workspace-relative record path, for the text output. */
  record_rel?: string;
}

/** writer-lease.md §9: `pixir lock release <id> --force [--reason TEXT]`. */
export function forceRelease(ws: string, id: string, reason: string | undefined, program: string): ForcedReleaseResult {
  const before = leaseStatus(ws, id);
  if (before.state === "available") {
    return { ok: true, released: false, state_before: publicStatus(before), reason: "no_writer_lease_present" };
  }
  if (before.state === "active") throw leaseError(before);
  const why = reason ?? "operator_forced_session_writer_lease_release";
  const record = writeReleaseRecord(ws, id, why, before, program);
  const again = leaseStatus(ws, id);
  const same =
    again.state === before.state &&
    again.raw?.holder_id === before.raw?.holder_id &&
    again.raw?.heartbeat_at_ms === before.raw?.heartbeat_at_ms &&
    (before.state !== "ambiguous" || again.details?.reason === before.details?.reason);
  const changed = () =>
    new PixirError("session_writer_ambiguous", "Session writer lease changed during forced release", {
      lease: publicStatus(leaseStatus(ws, id), false),
      release_record_path: record.abs,
    });
  if (!same) throw changed();
  try {
    unlinkSync(leasePath(ws, id).abs);
  } catch (err) {
    // Another operator released it between our re-check and the unlink: it changed, as above.
    if ((err as NodeJS.ErrnoException).code === "ENOENT") throw changed();
    throw osWriteFault(err, leasePath(ws, id).rel, "unlink", "the writer lease");
  }
  return { ok: true, released: true, state_before: publicStatus(before), release_record_path: record.abs, reason: why, record_rel: record.rel };
}
