// claude-interop.md §4.4: the apply stage of the import: planned Events made Log lines, new Logs written
// to temp files (a fresh unit) or created and appended under their Writer Leases, and prepared files put in
// place in run order. Nothing here decides what a Log holds: the plan did.
import { unlinkSync } from "node:fs";
import { envelopeHead, isEncodable, isJsonObject, serializeEvent, type JsonObject, type PixirEvent } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";
import { afterEarlierWrites } from "../../event/os-fault.js";
import { lineTooLongToWrite, MAX_LINE_BYTES } from "../../lines/codec.js";
import { acquireLease, acquireLeases, WriterLease } from "../../store/lease.js";
import { appendJournaled, commitPreparedLog, createLogAtomically, discardPreparedLog, fsyncDir, prepareLog, readTail, type PreparedLog } from "../../store/log-write.js";
import { logPath, sessionsDir } from "../../store/paths.js";
import type { SourceFile } from "./discover.js";
import type { ImportIndex } from "./known.js";
import type { BatchPlan } from "./plan.js";
import type { ClaudeImportOptions, FilePlan, LogWrite } from "./report.js";

/**
 * The Log lines of `events`. An Event whose record is a canonical line takes that line as the text of
 * `data.claude.record` (its last key, in `claude`, the last key of `data`): the bytes JSON.stringify would
 * give, without serialising the record a second time.
 */
export function serializeAll(events: PixirEvent[], src: SourceFile, plan: Pick<BatchPlan, "recordText" | "eventText">): string {
  let out = "";
  serializeEach(events, src, plan, (part) => (out += typeof part === "string" ? part : part.toString("utf8")));
  return out;
}

/**
 * The Log lines of `events`, handed to `emit` as they are made (serializeAll): a line as one string, or
 * (Events mapped from their records' bytes) whole lines as bytes, put together from the records' bytes
 * in a block that `emit` must copy or use before it returns.
 */
export function serializeEach(events: PixirEvent[], src: SourceFile, plan: Pick<BatchPlan, "recordText" | "eventText">, emit: (part: string | Buffer) => void): void {
  const lineOf = (e: PixirEvent) => (isJsonObject(e.data.claude) && typeof e.data.claude.line === "number" ? e.data.claude.line : null);
  const tooLong = (e: PixirEvent, bytes: number) => {
    const err = lineTooLongToWrite(bytes, e.type, null);
    return new PixirError(err.kind, err.message, { ...err.details, file: src.file, line: lineOf(e) });
  };
  let block = LINE_BLOCK;
  let used = 0;
  const handOn = () => {
    if (used > 0) emit(block.subarray(0, used));
    used = 0;
  };
  for (const e of events) {
    const spliced = plan.eventText.get(e);
    if (spliced !== undefined) {
      // Written from a canonical line, which holds no lone surrogate: it is always encodable (§3).
      const head = envelopeHead(e);
      const most = head.length * 3 + spliced.maxBytes + 2;
      if (most > MAX_LINE_BYTES) {
        const bytes = Buffer.byteLength(head, "utf8") + spliced.byteLength + 2;
        if (bytes > MAX_LINE_BYTES) throw tooLong(e, bytes);
      }
      if (used + most > block.length) {
        handOn();
        // A line larger than the block gets one of its own.
        block = most > LINE_BLOCK.length ? Buffer.allocUnsafe(most) : LINE_BLOCK;
      }
      used += block.write(head, used, "utf8");
      used = spliced.writeInto(block, used);
      block[used++] = 0x7d; // "}"
      block[used++] = 0x0a; // "\n"
      if (used >= LINE_BLOCK_BYTES) handOn();
      continue;
    }
    handOn();
    const verbatim = plan.recordText.get(e);
    let dataText: string | undefined;
    if (verbatim !== undefined) {
      const { record: _record, ...claude } = e.data.claude as JsonObject;
      const rest = JSON.stringify({ ...e.data, claude });
      dataText = `${rest.slice(0, -2)},"record":${verbatim}}}`;
    }
    const text = serializeEvent(e, dataText);
    if (!isEncodable(text, e.data)) throw new PixirError("log_encode_failed", undefined, { reason: "invalid_unicode", type: e.type, file: src.file, line: lineOf(e) });
    // A record too large for one Log line is refused while planning, before anything is written.
    if (text.length * 3 > MAX_LINE_BYTES && Buffer.byteLength(text, "utf8") > MAX_LINE_BYTES) throw tooLong(e, Buffer.byteLength(text, "utf8"));
    emit(text);
  }
  handOn();
}

/**
 * `w` with its lines made now and kept as one text: a plan held among others between the checking pass and
 * the writes keeps its lines (bounded by import.ts HELD_PLAN_BYTES), not its records and Events.
 */
export function keptAsText(w: LogWrite): LogWrite {
  let text = "";
  w.lines((part) => (text += typeof part === "string" ? part : part.toString("utf8")));
  return { ...w, lines: (emit) => emit(text) };
}

/**
 * serializeEach's block of lines made from bytes, handed on once it holds this many bytes: one copy into
 * the writer's block for many lines, where each part of each line was one call. Its own thread's, and used
 * only while serializeEach runs (it awaits nothing).
 */
const LINE_BLOCK_BYTES = 64 * 1024;

const LINE_BLOCK = Buffer.allocUnsafe(4 * LINE_BLOCK_BYTES);

/**
 * A new Log's temp file could not be written (a full disk, a read-only file system): the unit is
 * checked and written the plain way instead, in the writing pass, where the failure is named (§4.4).
 */
export class PrepareFault extends Error {}

/**
 * A new Log of a fresh unit, its lines written to a temp file as they are made (prepareLog). A failure
 * of the lines (a line too long, one not encodable) is the file's own and is thrown as it is; a failure
 * of the file is a PrepareFault.
 */
export async function prepareNewLog(ws: string, id: string, lines: (emit: (part: string | Buffer) => void) => void): Promise<PreparedLog> {
  let own: unknown = null;
  try {
    return await prepareLog(
      ws,
      id,
      async (emit) => {
        let writing = false;
        try {
          lines((part) => {
            writing = true;
            emit(part);
            writing = false;
          });
        } catch (err) {
          if (!writing) own = err;
          throw err;
        }
      },
      { lease: null },
      false,
      "overlapped",
    );
  } catch (err) {
    if (err === own) throw err;
    throw new PrepareFault(String(err));
  }
}

/**
 * Wait for Logs being prepared. Throws the first failure (in plan order, as writing them one after the
 * other would meet it) after the others are discarded; returns them all when none failed.
 */
export async function settlePrepared(groups: Array<Array<Promise<PreparedLog>>>): Promise<PreparedLog[][]> {
  const settled = await Promise.all(groups.map((g) => Promise.allSettled(g)));
  const failed = settled.flat().find((r) => r.status === "rejected");
  if (failed === undefined) return settled.map((g) => g.map((r) => (r as PromiseFulfilledResult<PreparedLog>).value));
  for (const r of settled.flat()) if (r.status === "fulfilled") discardPreparedLog(r.value);
  throw failed.reason;
}

/** Wait for Logs being prepared and discard them all (the plan they belong to failed). */
export async function discardPreparing(groups: Array<Array<Promise<PreparedLog>>>): Promise<void> {
  for (const r of (await Promise.all(groups.map((g) => Promise.allSettled(g)))).flat()) if (r.status === "fulfilled") discardPreparedLog(r.value);
}

/**
 * §4.4: take the leases, write parents before children, release. A write that fails (a full disk) takes
 * back the Logs this file created before it, under their leases: the root Log's checkpoint says the
 * whole file is imported, so a rerun would find it unchanged and never write the missing children.
 */
export async function writeFile(ws: string, writes: LogWrite[], options: ClaudeImportOptions): Promise<void> {
  const leases: WriterLease[] = [];
  const created: string[] = [];
  let appended = false;
  try {
    for (const w of writes) leases.push(await acquireLease(ws, w.id, { program: options.program, env: options.env, signal: options.signal }));
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i]!;
      const ctx = { lease: leases[i]!, signal: options.signal };
      if (w.existed) {
        await appendJournaled(ws, w.id, readTail(ws, w.id), async (emit) => w.lines(emit), ctx);
        appended = true;
      } else {
        await createLogAtomically(ws, w.id, async (emit) => w.lines(emit), ctx);
        created.push(w.id);
      }
    }
  } catch (err) {
    for (const id of created.reverse()) unlinkSync(logPath(ws, id).abs);
    created.length = 0;
    // An append already made stays (all or nothing per Log): the error must not say "nothing was changed".
    throw appended ? afterEarlierWrites(err, ws) : err;
  } finally {
    // A file that wrote nothing (a full disk) takes back the state directories its leases made.
    // Last taken, first released: the first lease made the state directories the others sit in.
    for (const lease of leases.reverse()) lease.release(!appended && created.length === 0);
  }
}

/** Logs whose leases are taken together at most (§4.4: a batch of prepared files committed in run order). */
const COMMIT_BATCH_LOGS = 128;

/**
 * The writing pass of prepared files (§4.4), in run order: the leases of a batch of files are taken
 * together, each file's Logs are renamed into place (parents before children) under them, the renames
 * are made durable by one fsync of the sessions directory (envelope-and-log.md §8.2), the import index
 * entries follow, and the leases are released. A lease refused, or a rename that fails, ends the run
 * there: the files before it stay written, that file's Logs are taken back.
 */
export class PreparedCommits {
  private files: FilePlan[] = [];
  private logs = 0;
  /** A file of the run has been written (by this or the plain writer). */
  recorded = false;

  constructor(
    private readonly ws: string,
    private readonly options: ClaudeImportOptions,
    private readonly index: ImportIndex,
  ) {}

  async add(plan: FilePlan): Promise<void> {
    this.files.push(plan);
    this.logs += plan.prepared.length;
    if (this.logs >= COMMIT_BATCH_LOGS) await this.flush();
  }

  async flush(): Promise<void> {
    const files = this.files;
    this.files = [];
    this.logs = 0;
    if (files.length === 0) return;
    const { ws, options } = this;
    const leases = await acquireLeases(
      ws,
      files.flatMap((f) => f.prepared.map((p) => p.id)),
      { program: options.program, env: options.env, signal: options.signal },
    );
    const written: FilePlan[] = [];
    let failure: unknown = null;
    let renamed = false;
    try {
      let at = 0;
      for (const f of files) {
        const held = leases.slice(at, (at += f.prepared.length));
        const refused = held.find((l) => !(l instanceof WriterLease));
        if (refused !== undefined) {
          failure = refused;
          break;
        }
        const created: PreparedLog[] = [];
        try {
          for (let i = 0; i < f.prepared.length; i++) {
            const p = f.prepared[i]!;
            commitPreparedLog(ws, p, { lease: held[i] as WriterLease, signal: options.signal }, { syncDir: false });
            created.push(p);
            renamed = true;
          }
        } catch (err) {
          // As writeFile: the root Log's checkpoint says the whole file is imported, so none of it may stay.
          for (const p of created.reverse()) unlinkSync(p.final.abs);
          for (const p of f.prepared) if (!created.includes(p)) discardPreparedLog({ ...p, createdDirs: [] });
          f.prepared = [];
          failure = err;
          break;
        }
        f.prepared = [];
        written.push(f);
      }
      if (renamed) fsyncDir(sessionsDir(ws));
      this.index.add(written.flatMap((f) => (f.known !== undefined ? [f.known] : [])));
    } finally {
      const tidy = !this.recorded && written.length === 0;
      const own = leases.filter((l): l is WriterLease => l instanceof WriterLease);
      // The first lease made the state directories the others sit in: it goes last.
      await Promise.all(own.slice(1).map((l) => l.releaseAsync(tidy)));
      await own[0]?.releaseAsync(tidy);
    }
    const before = this.recorded;
    if (written.length > 0) this.recorded = true;
    // §4.4: units already written stay written; the error says so rather than "nothing was changed".
    if (failure !== null) throw before || written.length > 0 ? afterEarlierWrites(failure, ws) : failure;
  }
}
