// docs/gemini-opencode-interop.md §6: `pixir import opencode [PATH…]`. Every session is read and planned and
// every Log compared with the disk before anything is written; a Log on disk that is a prefix of its plan
// gets the rest appended, one that differs otherwise is refused.
import path from "node:path";
import { PixirError } from "../../event/errors.js";
import { logPath } from "../../store/paths.js";
import { diskState, writePlannedLogs, type DiskState } from "../../store/planned-logs.js";
import { planOpencodeSession, type PlannedOpencodeLog, type PlannedSessions } from "./plan.js";
import { opencodeHome, readOpencodePath, type OpencodeSession } from "./source.js";

export interface OpencodeImportOptions {
  paths: Array<{ path: string; display: string }>;
  lenient?: boolean;
  dryRun?: boolean;
  program: string;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

type Status = "created" | "appended" | "unchanged" | "would_create" | "would_append";

export interface OpencodeImportResult {
  ok: true;
  recorded: boolean;
  dry_run: boolean;
  workspace: string;
  imports: Array<{
    source: string;
    session_id: string;
    parent_session_id: string | null;
    title: string | null;
    message_count: number;
    sessions: Array<{ session_id: string; role: string; parent_session_id: string | null; event_count: number; new_event_count: number; status: Status }>;
  }>;
  skipped_records: string[];
}

interface Work {
  log: PlannedOpencodeLog;
  disk: DiskState;
  before: number;
}

const NEXT_ACTIONS: Record<string, string[]> = {
  source_changed: ["remove the existing logs with pixir-log rm, then import again"],
  log_diverged: ["fork the imported Log before adding Events to it (pixir fork), then import again"],
};

const countLines = (b: Buffer, end: number): number => {
  let n = 0;
  for (let i = b.indexOf(0x0a); i !== -1 && i < end; i = b.indexOf(0x0a, i + 1)) n++;
  return n;
};

export async function importOpencode(ws: string, options: OpencodeImportOptions): Promise<OpencodeImportResult> {
  const skipped: string[] = [];
  const home = opencodeHome(options.env);
  const roots = options.paths.length > 0 ? options.paths : [{ path: home, display: home }];
  const sessions: OpencodeSession[] = [];
  const seen = new Set<string>();
  for (const r of roots) {
    for (const s of readOpencodePath(r.path, r.display, Boolean(options.lenient), skipped)) {
      // A session both in the database and in a leftover storage/ tree: the database (read first) wins.
      if (seen.has(String(s.info.id))) continue;
      seen.add(String(s.info.id));
      sessions.push(s);
    }
  }
  const known: PlannedSessions = new Map();
  const planned = sessions.map((s) => ({ session: s, logs: planOpencodeSession(ws, s, known) }));
  const work = new Map<PlannedOpencodeLog, Work>();
  for (const { session, logs } of planned) {
    for (const log of logs) {
      const disk = diskState(ws, log.sessionId, log.bytes);
      if (disk.state === "changed" || disk.state === "diverged") {
        const reason = disk.state === "changed" ? "source_changed" : "log_diverged";
        throw new PixirError("already_exists", "session log already exists", { session_id: log.sessionId, log_path: logPath(ws, log.sessionId).rel, reason, file: session.source, next_actions: NEXT_ACTIONS[reason] });
      }
      const before = disk.state === "same" ? log.stored.length : disk.state === "prefix" ? countLines(log.bytes, disk.size) : 0;
      work.set(log, { log, disk, before });
    }
  }
  const toWrite = [...work.values()].filter((w) => w.disk.state === "absent" || w.disk.state === "prefix");
  if (!options.dryRun && toWrite.length > 0) await writePlannedLogs(ws, toWrite, options);
  const dry = Boolean(options.dryRun);
  const statusOf = (w: Work): Status => (w.disk.state === "same" ? "unchanged" : w.disk.state === "prefix" ? (dry ? "would_append" : "appended") : dry ? "would_create" : "created");
  return {
    ok: true,
    recorded: !dry && toWrite.length > 0,
    dry_run: dry,
    workspace: path.resolve(ws),
    imports: planned.map(({ session, logs }) => ({
      source: session.source,
      session_id: logs[0]!.sessionId,
      parent_session_id: typeof session.info.parentID === "string" ? session.info.parentID : null,
      title: typeof session.info.title === "string" ? session.info.title : null,
      message_count: session.messages.length,
      sessions: logs.map((log) => {
        const w = work.get(log)!;
        return { session_id: log.sessionId, role: log.role, parent_session_id: log.parent?.sessionId ?? null, event_count: log.stored.length, new_event_count: log.stored.length - w.before, status: statusOf(w) };
      }),
    })),
    skipped_records: skipped,
  };
}
