// fork.md §8–§9: materialize turns a share_v1 child into a self-contained replay_v1 Log (temp + rename
// under its lease); rm deletes a Log and its resources, refusing while share children depend on it.
import { lstatSync, rmSync, unlinkSync } from "node:fs";
import { serializeEvent, type PixirEvent } from "../event/envelope.js";
import { PixirError } from "../event/errors.js";
import { osWriteFault } from "../event/os-fault.js";
import { assertWritable } from "../lines/input.js";
import { REPLAY_LIMITATIONS } from "./fork.js";
import { resourceDescriptors } from "./fork-plan.js";
import { resourceSources } from "./fork-write.js";
import { acquireLease, type WriterOptions, type WriterReport } from "../store/lease.js";
import { notFoundError, openHistory, type History } from "../store/loader.js";
import { readFirstLine } from "../store/log-read.js";
import { createLogAtomically, fsyncDir, recoverJournal } from "../store/log-write.js";
import { listLogs } from "../store/ls.js";
import { inspectStatePath, journalPath, logPath, sessionDataDir, sessionsDir } from "../store/paths.js";
import { checkDescriptor, copyResources, PayloadWrites, type ResourceRef } from "../store/resources.js";
import { assertSessionId } from "../event/session-id.js";

export interface MaterializeResult extends WriterReport {
  materialized: boolean;
  reason?: "not_a_share_child";
  parent_session_id?: string;
  inherited_event_count: number;
  event_count: number;
  resources_copied: number;
}

/** Resource references of the inherited Events of a share child (fork.md §7 step 1). */
async function inheritedResources(history: History): Promise<ResourceRef[]> {
  const link = history.share!;
  const seen = new Set<string>();
  const refs: ResourceRef[] = [];
  for await (const item of history.items()) {
    // Inherited items are the ones resolved from the parent: they carry no stored line.
    if (item.line !== undefined || item.event.seq === null || item.event.seq > link.replayEventCount) continue;
    for (const d of resourceDescriptors(item.event, seen)) refs.push(checkDescriptor(d));
  }
  return refs;
}

export async function materializeLog(ws: string, id: string, options: WriterOptions): Promise<MaterializeResult> {
  assertSessionId(id);
  const log = logPath(ws, id);
  if (inspectStatePath(log) === "missing") throw notFoundError(id, ws, log.rel, "pixir-log materialize");
  const lease = options.dryRun ? null : await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  let recorded = false;
  const payloads = new PayloadWrites();
  try {
    // writer-lease.md §11 step 3: a crashed append's journal names a length of the share form; left in
    // place, it would cut the replacement back to that length on the next read or write.
    if (lease) recoverJournal(ws, id);
    const history = await openHistory(ws, id);
    const base = { ok: true as const, recorded: false, dry_run: Boolean(options.dryRun), session_id: id, log_path: log.abs };
    if (history.share === null) {
      return { ...base, materialized: false, reason: "not_a_share_child", inherited_event_count: 0, event_count: history.eventCount, resources_copied: 0 };
    }
    const link = history.share;
    const refs = await inheritedResources(history);
    const sources = resourceSources(link.parent, link.parent.sessionId);
    let copied = 0;
    if (options.dryRun) {
      copied = copyResources(ws, sources, id, refs, true);
    } else {
      await createLogAtomically(
        ws,
        id,
        async (emit) => {
          for await (const item of history.items()) {
            if (item.line && item.line.lineNo === history.scan.first!.lineNo) {
              const header: PixirEvent = {
                ...item.event,
                data: { ...item.event.data, strategy: "replay_v1", limitations: REPLAY_LIMITATIONS, materialized_from: "share_v1" },
              };
              emit(serializeEvent(header));
            } else if (item.line?.exact) emit(`${item.line.bytes.toString("utf8")}\n`);
            else {
              assertWritable(item.event, item.line?.bytes ?? item.lineBytes ?? item.dataText, item.line?.lineNo ?? null);
              emit(serializeEvent(item.event, item.dataText));
            }
          }
        },
        { lease, signal: options.signal },
        () => {
          copied = copyResources(ws, sources, id, refs, false, payloads);
        },
        true,
      );
      recorded = true;
    }
    return {
      ...base,
      recorded: !options.dryRun,
      materialized: true,
      parent_session_id: link.parent.sessionId,
      inherited_event_count: link.replayEventCount,
      event_count: history.eventCount,
      resources_copied: copied,
    };
  } finally {
    if (!recorded) payloads.undo(); // the share form stays: so do the resources it had
    lease?.release(!recorded);
  }
}

/** fork.md §9 step 2: Logs whose first line is a share_v1 session_fork naming `id`. */
export async function shareChildren(ws: string, id: string): Promise<string[]> {
  const children: string[] = [];
  for (const other of listLogs(ws).sessionIds) {
    if (other === id) continue;
    const first = await readFirstLine(logPath(ws, other));
    if (first === null || "problem" in first) continue;
    const e = first.line.event;
    if (e.type === "session_fork" && e.seq === 0 && e.data.strategy === "share_v1" && e.data.parent_session_id === id) children.push(other);
  }
  return children.sort();
}

export interface RemoveResult extends WriterReport {
  removed: boolean;
  materialized_children: string[];
  would_remove?: string[];
}

export async function removeLog(ws: string, id: string, options: WriterOptions & { materializeChildren?: boolean }): Promise<RemoveResult> {
  assertSessionId(id);
  const log = logPath(ws, id);
  if (inspectStatePath(log) === "missing") throw notFoundError(id, ws, log.rel, "pixir-log rm");
  const dataDir = sessionDataDir(ws, id);
  const hasData = inspectStatePath(dataDir) === "present";
  const children = await shareChildren(ws, id);
  if (children.length > 0 && !options.materializeChildren) {
    throw new PixirError("share_children_exist", undefined, { session_id: id, children });
  }
  const base = { ok: true as const, session_id: id, log_path: log.abs, dry_run: Boolean(options.dryRun) };
  if (options.dryRun) {
    // Each child's materialize is checked as its own dry run checks it (lineage, digest, resources).
    for (const child of children) await materializeLog(ws, child, options);
    return { ...base, recorded: false, removed: false, materialized_children: children, would_remove: [log.rel, ...(hasData ? [dataDir.rel] : [])] };
  }
  const materialized: string[] = [];
  for (const child of children) {
    await materializeLog(ws, child, options);
    materialized.push(child);
  }
  const lease = await acquireLease(ws, id, { program: options.program, env: options.env, signal: options.signal });
  try {
    lease.assertHeld();
    try {
      unlinkSync(log.abs);
    } catch (err) {
      throw osWriteFault(err, log.rel, "unlink");
    }
    const journal = journalPath(ws, id);
    if (inspectStatePath(journal) === "present") unlinkSync(journal.abs);
    if (inspectStatePath(dataDir) === "present" && lstatSync(dataDir.abs).isDirectory()) {
      // rm does not follow symlinks inside the folder; it removes the links themselves.
      rmSync(dataDir.abs, { recursive: true });
    }
    fsyncDir(sessionsDir(ws));
    return { ...base, recorded: true, removed: true, materialized_children: materialized };
  } finally {
    lease.release();
  }
}
