// claude-interop.md §4: `pixir import claude`, a run of read → plan → apply. Every unit is read and
// planned (unit.ts) before the first write; a file imported before is checked against its last checkpoint
// (size and SHA-256 of the imported prefix) and, when it grew, only its new records are appended (§4.3).
// Fresh units are planned on worker threads and their Logs prepared to temp files; the writing pass puts
// every file in place in run order (apply.ts).
import { existsSync, readdirSync, rmdirSync, rmSync, statSync, type Stats } from "node:fs";
import path from "node:path";
import { PixirError } from "../../event/errors.js";
import { afterEarlierWrites } from "../../event/os-fault.js";
import { discardPreparedLog, receivedPrepared } from "../../store/log-write.js";
import { logTempOwner, sessionsDir } from "../../store/paths.js";
import { sweepStaleTempFiles } from "../../store/repair.js";
import { scanThreadCount } from "../../store/threads.js";
import { WorkerPool } from "../../store/worker-pool.js";
import { keptAsText, PreparedCommits, writeFile } from "./apply.js";
import { defaultProjectsRoot, discoverUnits, forkedFromSession, type ImportUnit, type SourceFile } from "./discover.js";
import type { ForkSource } from "./fork-file.js";
import { sameFile, statFile } from "./known.js";
import { skippedReport, type ClaudeFileReport, type ClaudeImportOptions, type ClaudeImportResult, type FilePlan } from "./report.js";
import { linesFitLog, PROGRESS_BYTES } from "./source.js";
import { forkSourceOfPlan, planUnit, prepareFreshUnit, unitFiles, type PlanRun, type Say, type UnitOutcome, type UnitTask } from "./unit.js";
import { forkSourceOfWorkspace, WorkspaceLogs } from "./workspace-logs.js";

const identityOf = (s: SourceFile) => (s.kind === "subagent" ? `a\u0000${s.claudeSessionId}\u0000${s.agentId}` : `s\u0000${s.claudeSessionId}`);

/** Keep at most this many planned bytes between the checking pass and the writes; beyond, plan again. */
const HELD_PLAN_BYTES = 8 * 1024 * 1024;

/** The error of a unit that failed on another thread, as this thread throws it. */
function unitOutcomeError(e: Extract<UnitOutcome, { kind: "error" }>["error"]): Error {
  return "internal" in e ? new PixirError("internal_error", undefined, { reason: "claude_unit_failed", stack: e.internal }) : new PixirError(e.kind as never, e.message, e.details);
}

const UNIT_WORKER_FILE = "./claude-unit-worker.js";

/** Each worker holds a unit's records: two at most unless PIXIR_SCAN_THREADS asks for more (the 256 MiB bound). */
const MAX_UNIT_THREADS = 2;

/** Below this many bytes of fresh units, starting workers costs more than it saves. */
const PARALLEL_UNIT_BYTES = 8 * 1024 * 1024;

/** Units in flight per thread, queued or being prepared. */
const UNITS_AT_ONCE = 4;

/**
 * Units a worker holds at once. One: a unit's Logs are already written and synced together (overlapped),
 * and a second unit per worker took 1 GiB's import from 247 to 274 MiB at the same speed.
 */
const UNITS_PER_WORKER = 1;

/**
 * A worker's young generation, at most (MiB): V8's default lets each worker's heap grow past what the
 * 256 MiB bound of docs/performance.md allows for two; the work is the same with less.
 */
const WORKER_YOUNG_MB = 8;

/**
 * A worker's old generation, at most (MiB). Without a cap V8
 * let two workers' heaps take a 760 MiB import to 229–266 MiB, with it 203–208 MiB at the same speed
 * (docs/performance.md, "Claude import"). A worker that still runs out dies alone: the pool runs its unit
 * again on the main thread.
 */
const WORKER_OLD_MB = 64;

/**
 * A fresh unit of at least this many bytes is planned in this thread, the workers idle: what a unit's plan
 * holds grows with its records (some 700 bytes each), and a worker's capped heap runs out past some 70,000
 * of them, after which the pool planned the unit here again (a 200 MB session: 2.8 s more CPU, 208 MiB
 * where one thread took 198; docs/performance.md, "Round 5").
 */
const HERE_UNIT_BYTES = 32 * 1024 * 1024;

/** The temp files a unit cut short left beside its Logs (`<base>*.ndjson.tmp-*`). */
function removeUnitTempFiles(task: UnitTask): void {
  const dir = sessionsDir(task.ws).abs;
  const bases = new Set(unitFiles(task.unit).map((f) => f.base));
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = logTempOwner(name);
    if (owner !== null && bases.has(owner.split(".")[0]!)) rmSync(path.join(dir, name), { force: true });
  }
}

function freshBytes(units: ImportUnit[]): number {
  let total = 0;
  for (const u of units) {
    for (const f of unitFiles(u)) {
      try {
        total += statSync(f.abs).size;
      } catch {
        /* named when the file is read */
      }
    }
  }
  return total;
}

/** §4.2 duplicate_session: the later file (path order) of one identity, by unit. */
function duplicatesOf(units: ImportUnit[]): Map<ImportUnit, string> {
  const seen = new Set<string>();
  const duplicates = new Map<ImportUnit, string>();
  for (const u of [...units].sort((a, b) => Buffer.compare(Buffer.from(a.sortKey), Buffer.from(b.sortKey)))) {
    for (const s of unitFiles(u)) {
      const id = identityOf(s);
      if (seen.has(id) && !duplicates.has(u)) duplicates.set(u, s.file);
      seen.add(id);
    }
  }
  return duplicates;
}

/**
 * §4.1, §3.7: the source session of each fork file, its kind known before it is read (an unchanged one is
 * not: the import index knows it); `units` reordered so every fork file's unit comes after its source's.
 */
function orderForkFiles(units: ImportUnit[], wsLogs: WorkspaceLogs): Map<ImportUnit, string> {
  const forkOf = new Map<ImportUnit, string>();
  for (const u of units) {
    if (u.session === null) continue;
    const known = wsLogs.index.get(u.session.rootId);
    let st: Stats | null = null;
    try {
      st = statFile(u.session.abs);
    } catch {
      /* planFile names the problem */
    }
    const s = st !== null && sameFile(known, u.session.sourceKey, st) ? known.fork_source : forkedFromSession(u.session.abs, u.session.claudeSessionId);
    if (s === null) continue;
    forkOf.set(u, s);
    u.session.kind = "fork_session";
    u.session.forkedFrom = s;
  }
  if (forkOf.size === 0) return forkOf;
  const byClaudeId = new Map(units.filter((u) => u.session).map((u) => [u.session!.claudeSessionId, u]));
  const ordered: ImportUnit[] = [];
  const placed = new Set<ImportUnit>();
  const visit = (u: ImportUnit, stack: Set<ImportUnit>) => {
    if (placed.has(u)) return;
    const src = byClaudeId.get(forkOf.get(u) ?? "");
    if (src !== undefined && src !== u && !stack.has(src)) visit(src, new Set([...stack, u]));
    placed.add(u);
    ordered.push(u);
  };
  for (const u of units) visit(u, new Set());
  units.splice(0, units.length, ...ordered);
  return forkOf;
}

/** A unit prepared in the pool (or in this thread), settled in run order. */
interface InFlight {
  i: number;
  unit: ImportUnit;
  files: SourceFile[];
  says: Map<SourceFile, Say | undefined>;
  done: Promise<UnitOutcome>;
}

/**
 * One run over the discovered units: the checking pass reads and plans every unit (fresh ones prepared in
 * the pool) before the writing pass puts them in place, in run order.
 */
class ImportRun {
  readonly reports: Array<ClaudeFileReport[] | null>;
  private readonly held: Array<FilePlan[] | null>;
  private heldBytes = 0;
  private readonly duplicates: Map<ImportUnit, string>;
  private readonly forkOf: Map<ImportUnit, string>;
  private readonly neededSources: Set<string>;
  private readonly sourcePlans = new Map<string, ForkSource>();
  private readonly basesPresent: Set<string>;
  private readonly planRun: PlanRun;
  private readonly fileCount: number;
  private fileIndex = 0;
  /** Fresh units are prepared until a temp file cannot be written (§4.4). */
  private preparing = true;
  private readonly inFlight: InFlight[] = [];
  readonly commits: PreparedCommits;
  readonly pool: WorkerPool<UnitTask, UnitOutcome>;
  private readonly threads: number;

  constructor(
    private readonly ws: string,
    private readonly options: ClaudeImportOptions,
    private readonly wsLogs: WorkspaceLogs,
    private readonly units: ImportUnit[],
  ) {
    this.duplicates = duplicatesOf(units);
    this.forkOf = orderForkFiles(units, wsLogs);
    this.neededSources = new Set(this.forkOf.values());
    const forkSource = async (sessionId: string) => this.sourcePlans.get(sessionId) ?? (await forkSourceOfWorkspace(ws, wsLogs, sessionId));
    this.planRun = { ws, wsLogs, options, forkSource, prepare: false };
    this.fileCount = units.reduce((n, u) => n + unitFiles(u).length, 0);
    this.basesPresent = new Set(wsLogs.all().map((id) => id.split(".")[0]!));
    this.reports = new Array(units.length).fill(null);
    this.held = new Array(units.length).fill(null);
    this.commits = new PreparedCommits(ws, options, wsLogs.index);
    const freshUnits = units.filter((u) => !this.duplicates.has(u) && this.fresh(u, unitFiles(u)));
    const asked = options.env.PIXIR_SCAN_THREADS !== undefined && options.env.PIXIR_SCAN_THREADS !== "";
    this.threads = freshUnits.length === 0 ? 1 : Math.min(scanThreadCount(options.env, freshBytes(freshUnits), PARALLEL_UNIT_BYTES), asked ? Infinity : MAX_UNIT_THREADS);
    this.pool = WorkerPool.open<UnitTask, UnitOutcome>(new URL(UNIT_WORKER_FILE, import.meta.url), this.threads, (task) => prepareFreshUnit(task), removeUnitTempFiles, { perWorker: UNITS_PER_WORKER, limits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB, maxOldGenerationSizeMb: WORKER_OLD_MB } });
  }

  /** §4.5: progress names each source file as the checking pass reads it. */
  private sayFor(src: SourceFile): Say | undefined {
    const progress = this.options.progress;
    if (progress === undefined) return undefined;
    const i = ++this.fileIndex;
    return (percent: number | null) => progress(i, this.fileCount, src.file, percent);
  }

  /**
   * A unit none of whose Logs can exist yet (no Log id is its base id or starts with it, §3.1), and that no
   * fork file needs planned, is prepared by the checking pass: planned once, its Logs written to temp files.
   */
  private fresh(unit: ImportUnit, files: SourceFile[]): boolean {
    const needed = unit.session !== null && this.neededSources.has(unit.session.claudeSessionId);
    return !this.options.dryRun && !this.forkOf.has(unit) && !needed && files.every((f) => !this.basesPresent.has(f.base));
  }

  private async planHere(unit: ImportUnit, says?: Map<SourceFile, Say | undefined>): Promise<FilePlan[]> {
    const plans = await planUnit(this.planRun, unit, says);
    const session = plans.at(-1)?.batch;
    if (unit.session !== null && session !== undefined && this.neededSources.has(unit.session.claudeSessionId)) this.sourcePlans.set(unit.session.claudeSessionId, forkSourceOfPlan(unit.session.claudeSessionId, session));
    return plans.map((p) => ({ report: p.report, writes: p.writes, prepared: p.prepared, known: p.known }));
  }

  /** A unit's error: under --lenient its files are reported skipped; else the run stops with it. */
  private unitError(err: unknown, files: SourceFile[]): ClaudeFileReport[] {
    const isUnitError = err instanceof PixirError && (err.kind === "invalid_claude_session" || err.kind === "already_exists");
    if (!this.options.lenient || !isUnitError) throw err;
    const error = { kind: err.kind, message: err.message, details: err.details };
    // Only the file the error names has that problem; the unit's other files are skipped with it, not changed.
    const culprit = typeof err.details.file === "string" ? err.details.file : null;
    const withIt = { kind: "unit_skipped", message: `not imported: ${culprit ?? "a file"} of the same session was skipped`, details: { reason: "unit_skipped", file: culprit } };
    return files.map((f) => skippedReport(f, culprit === null || f.file === culprit ? error : withIt));
  }

  /** §4.2 for a unit planned here: plan now and hold the plans, or (fresh) only check it and plan it when writing. */
  private async checkHere(i: number, unit: ImportUnit, files: SourceFile[], says: Map<SourceFile, Say | undefined>): Promise<void> {
    try {
      if (this.fresh(unit, files) && files.every((f) => linesFitLog(f, this.options, says.get(f)))) return;
      const plans = await this.planHere(unit, says);
      this.reports[i] = plans.map((p) => p.report);
      const size = plans.reduce((n, p) => n + p.writes.reduce((m, w) => m + w.size, 0), 0);
      // The run's last unit is held whatever its size: nothing else is planned before it is written, so
      // planning it again would only hold the same plan a second time (a huge session that grew).
      const last = i === this.units.length - 1;
      const keep = last || this.heldBytes + size <= HELD_PLAN_BYTES;
      if (keep && !last) {
        this.heldBytes += size;
        for (const p of plans) p.writes = p.writes.map(keptAsText);
      }
      this.held[i] = keep ? plans : null;
    } catch (err) {
      this.reports[i] = this.unitError(err, files);
      this.held[i] = [];
    }
  }

  /** The outcome of a unit prepared in the pool, taken in run order. */
  private async settle(job: InFlight): Promise<void> {
    const { ws, options } = this;
    const outcome = await job.done;
    if (outcome.kind === "done" && this.preparing) {
      const plans: FilePlan[] = outcome.files.map((f) => ({ report: f.report, writes: [], prepared: f.prepared.map((p) => receivedPrepared(ws, p)), known: f.known }));
      this.held[job.i] = plans;
      this.reports[job.i] = plans.map((p) => p.report);
      // A worker's progress is shown as its unit is taken.
      for (const f of job.files) {
        const say = job.says.get(f);
        say?.(null);
        if (say !== undefined && statSync(f.abs).size >= PROGRESS_BYTES) say(100);
      }
      return;
    }
    if (outcome.kind === "stopped") {
      options.signal?.throwIfAborted?.();
      throw new PixirError("interrupted", undefined, { signal: "SIGINT" });
    }
    if (outcome.kind === "done") discardOutcome(ws, outcome);
    if (outcome.kind === "error" && this.preparing) {
      for (const f of job.files) job.says.get(f)?.(null);
      this.reports[job.i] = this.unitError(unitOutcomeError(outcome.error), job.files);
      this.held[job.i] = [];
      return;
    }
    // A temp file that could not be written (a full disk): from this unit on, the run checks here and
    // writes the plain way, which names the failure where it happens (§4.4). Prepared units after it go
    // too, as their temp files may hold the room this one needed.
    if (outcome.kind === "write_failed") this.preparing = false;
    await this.checkHere(job.i, job.unit, job.files, job.says);
  }

  /** §4.2: every unit read and checked (planned, or prepared) before the first write. */
  async check(): Promise<void> {
    for (let i = 0; i < this.units.length; i++) {
      const unit = this.units[i]!;
      this.options.signal?.throwIfAborted?.();
      const dup = this.duplicates.get(unit);
      const files = unitFiles(unit);
      const says = new Map(files.map((f) => [f, this.sayFor(f)]));
      if (dup !== undefined) {
        this.reports[i] = this.unitError(new PixirError("invalid_claude_session", undefined, { reason: "duplicate_session", file: dup }), files);
        this.held[i] = [];
        continue;
      }
      if (this.preparing && this.fresh(unit, files)) {
        const task: UnitTask = { ws: this.ws, unit, lenient: Boolean(this.options.lenient), program: this.options.program };
        const here = this.threads <= 1 || freshBytes([unit]) >= HERE_UNIT_BYTES;
        // A large unit planned here waits for the units before it: its plan and theirs are not held at once.
        if (here && this.threads > 1) while (this.inFlight.length > 0) await this.settle(this.inFlight.shift()!);
        this.inFlight.push({ i, unit, files, says: here ? new Map() : says, done: here ? prepareFreshUnit(task, says) : this.pool.run(task) });
        // In this thread a unit's plan stays in memory until its temp files are synced: one more at most.
        while (this.inFlight.length > (here ? 1 : UNITS_AT_ONCE * this.threads)) await this.settle(this.inFlight.shift()!);
        continue;
      }
      // Errors are met in run order: the units before this one are settled first.
      while (this.inFlight.length > 0) await this.settle(this.inFlight.shift()!);
      await this.checkHere(i, unit, files, says);
    }
    while (this.inFlight.length > 0) await this.settle(this.inFlight.shift()!);
    await this.pool.close({ kind: "stopped" });
  }

  /** §4.4: the writing pass, in run order; a unit not held is planned again here. Returns whether anything was written. */
  async write(): Promise<boolean> {
    const { ws, options, commits } = this;
    for (let i = 0; i < this.units.length; i++) {
      let plans = this.held[i];
      if (plans === null) {
        try {
          plans = await this.planHere(this.units[i]!);
        } catch (err) {
          this.reports[i] = this.unitError(err, unitFiles(this.units[i]!));
          continue;
        }
        this.reports[i] ??= plans.map((p) => p.report);
      }
      for (const p of plans) {
        if (p.prepared.length > 0) {
          await commits.add(p);
          continue;
        }
        if (p.writes.length > 0) {
          await commits.flush();
          try {
            await writeFile(ws, p.writes, options);
          } catch (err) {
            // §4.4: units already written stay written; the error says so rather than "nothing was changed".
            throw commits.recorded ? afterEarlierWrites(err, ws) : err;
          }
          commits.recorded = true;
        }
        if (p.known !== undefined) this.wsLogs.index.add([p.known]);
      }
    }
    await commits.flush();
    return commits.recorded;
  }

  /** Whatever was prepared and not put in place goes. */
  async discardUnwritten(): Promise<void> {
    for (const job of this.inFlight.splice(0)) {
      const outcome = await job.done;
      if (outcome.kind === "done") discardOutcome(this.ws, outcome);
    }
    for (const plans of this.held) for (const p of plans ?? []) for (const l of p.prepared) discardPreparedLog({ ...l, createdDirs: [] });
  }
}

function discardOutcome(ws: string, outcome: Extract<UnitOutcome, { kind: "done" }>): void {
  for (const f of outcome.files) for (const p of f.prepared) discardPreparedLog({ ...receivedPrepared(ws, p), createdDirs: [] });
}

export async function importClaude(ws: string, options: ClaudeImportOptions): Promise<ClaudeImportResult> {
  const paths = options.paths.length > 0 ? options.paths : [defaultProjectsRoot(options.env)];
  for (const p of paths) if (!existsSync(p)) throw new PixirError("not_found", "path was not found", { path: p, next_actions: ["pass the path of a Claude Code projects directory", "set CLAUDE_CONFIG_DIR"] });
  // A killed earlier import's temp files go first (under each Log's lease), so check finds none after this run.
  if (!options.dryRun) await sweepStaleTempFiles(ws, { program: options.program, env: options.env, signal: options.signal });
  const links: string[] = [];
  const units = discoverUnits(paths, links).filter((u) => u.session === null || options.skipFile?.(u.session.abs) !== true);
  const skippedFiles = links.map((file) => ({ file, reason: "symlink" as const }));
  const wsLogs = new WorkspaceLogs(ws);
  const run = new ImportRun(ws, options, wsLogs, units);
  const stop = (): void => void run.pool.close({ kind: "stopped" });
  options.signal?.addEventListener("abort", stop, { once: true });
  const stateBefore: Array<[string, boolean]> = [sessionsDir(ws).abs, path.join(ws, ".pixir")].map((d) => [d, existsSync(d)]);
  let recorded = false;
  try {
    await run.check();
    if (!options.dryRun) recorded = await run.write();
  } finally {
    options.signal?.removeEventListener("abort", stop);
    wsLogs.index.close();
    await run.pool.close({ kind: "stopped" });
    await run.discardUnwritten();
    // The state directories made for what was not put in place go, if empty.
    for (const [dir, was] of stateBefore) {
      if (was) continue;
      try {
        rmdirSync(dir);
      } catch {
        /* not empty, or gone */
      }
    }
  }
  return { ok: true, recorded, dry_run: Boolean(options.dryRun), workspace: ws, imports: run.reports.flatMap((r) => r ?? []), ...(skippedFiles.length > 0 ? { skipped_files: skippedFiles } : {}) };
}
