// The write step the Gemini and opencode importers share: a planned Log is compared with the disk (absent,
// the same, a prefix of the plan to append to, or something else to refuse), then every Log to write is
// leased (byte order of id) and appended to or created in plan order, parents before children.
import { readFileSync } from "node:fs";
import { PixirError } from "../event/errors.js";
import { acquireLease, type WriterLease } from "./lease.js";
import { appendJournaled, commitPreparedLog, createLogAtomically, readTail, type PreparedLog } from "./log-write.js";
import { inspectStatePath, logPath } from "./paths.js";

export interface PlannedWrite {
  log: { sessionId: string; bytes: Buffer };
  disk: DiskState;
  /** A new Log whose temp file was made before the leases were taken (then `bytes` is not read): renamed into place. */
  prepared?: PreparedLog;
}

export interface WriteOptions {
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

export type DiskState = { state: "absent" } | { state: "same" } | { state: "prefix"; size: number } | { state: "diverged" } | { state: "changed" };

/** Compare a planned Log with the disk: absent, the same, a prefix to append to, or refused. */
export function diskState(ws: string, sessionId: string, bytes: Buffer): DiskState {
  const p = logPath(ws, sessionId);
  if (inspectStatePath(p) === "missing") return { state: "absent" };
  const disk = readFileSync(p.abs);
  if (disk.equals(bytes)) return { state: "same" };
  if (disk.length < bytes.length && bytes.subarray(0, disk.length).equals(disk) && disk[disk.length - 1] === 0x0a) return { state: "prefix", size: disk.length };
  if (disk.length > bytes.length && disk.subarray(0, bytes.length).equals(bytes)) return { state: "diverged" };
  return { state: "changed" };
}

/** Take every lease (byte order of id), then append and create in plan order (parents first). */
export async function writePlannedLogs(ws: string, work: PlannedWrite[], options: WriteOptions): Promise<void> {
  await withPlannedWrites(ws, work.map((w) => w.log.sessionId), options, async (write) => {
    for (const w of work) await write(w);
  });
}

/**
 * The Writer Lease of every Log in `sessionIds` (byte order of id), held while `body` writes them one at a
 * time with `write` (each Log appended to or created as its disk state says), all released at the end: an
 * importer that plans a session at a time hands each Log over when it has its bytes again.
 */
export async function withPlannedWrites(ws: string, sessionIds: string[], options: WriteOptions, body: (write: (w: PlannedWrite) => Promise<void>) => Promise<void>): Promise<void> {
  const ordered = [...new Set(sessionIds)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const leases = new Map<string, WriterLease>();
  let ok = false;
  try {
    for (const id of ordered) leases.set(id, await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal }));
    await body(async (w) => {
      const lease = leases.get(w.log.sessionId)!;
      if (w.prepared !== undefined) {
        commitPreparedLog(ws, w.prepared, { lease, signal: options.signal });
      } else if (w.disk.state === "prefix") {
        const tail = readTail(ws, w.log.sessionId);
        if (tail.size !== w.disk.size) throw new PixirError("log_write_failed", undefined, { reason: "log_changed_during_import", path: logPath(ws, w.log.sessionId).rel });
        const rest = w.log.bytes.subarray(w.disk.size);
        await appendJournaled(ws, w.log.sessionId, tail, async (emit) => emit(rest), { lease, signal: options.signal });
      } else {
        await createLogAtomically(ws, w.log.sessionId, async (emit) => emit(w.log.bytes), { lease, signal: options.signal });
      }
    });
    ok = true;
  } finally {
    for (const lease of [...leases.values()].reverse()) lease.release(!ok);
  }
}
