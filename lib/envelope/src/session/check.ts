// cli.md §8.5: `pixir-log check` reads everything and reports every problem (what readers reject)
// and every warning (what readers tolerate but our writers never produce).
import { lstatSync, readdirSync } from "node:fs";
import path from "node:path";
import { isIsoUtc, type CorruptReason } from "../event/envelope.js";
import { mapOsRefusal, PixirError } from "../event/errors.js";
import { checkParentPrefix } from "../fork/fork-write.js";
import { readJournal, scanLog, type LogLine } from "../store/log-read.js";
import { notFoundError, openHistory } from "../store/loader.js";
import { listLogs } from "../store/ls.js";
import { inspectStatePath, leasesDir, logPath, logTempOwner, sessionsDir } from "../store/paths.js";
import { ByteProgress, mebibytes } from "../event/progress.js";
import { compareBytes, isValidSessionId } from "../event/session-id.js";

export interface Finding {
  code: string;
  line?: number;
  seq?: number | null;
  message: string;
  [key: string]: unknown;
}

export interface LogReport {
  session_id: string;
  log_path: string;
  /** false for a Session that has no Log, only files an interrupted write left behind. */
  log_exists?: false;
  event_count: number;
  problems: Finding[];
  warnings: Finding[];
}

const CORRUPT_MESSAGES: Record<CorruptReason, string> = {
  invalid_utf8: "line is not valid UTF-8",
  invalid_json: "line is not valid JSON",
  torn_tail: "final line is torn (no newline and does not parse)",
  unexpected_shape: "line is not a JSON object",
  missing_event_type: "event has no string type",
  unknown_event_type: "event type is not one of the 14 canonical types",
  invalid_seq: "seq is not null or an integer in 0..2^53-1",
  invalid_data: "data is not an object",
  invalid_field: "an envelope field has the wrong type",
  line_too_long: "line is longer than the line-length limit",
  nesting_too_deep: "line nests arrays and objects deeper than the nesting limit",
  misplaced_share_header: "a share_v1 session_fork is not the first line at seq 0",
  seq_conflicts_with_shared_prefix: "an own event of a share child has a seq inside the shared prefix",
};

/** A 53-bit FNV-style hash, so duplicate-id detection keeps numbers, not every id string. */
function idHash(id: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return (h2 & 0x1fffff) * 2 ** 32 + h1;
}

const TEMP_SUFFIX = /\.tmp-[0-9a-f]{8}$/;
const STALE_TEMP = "a temp file was left by an interrupted write";

const isDir = (abs: string): boolean => {
  try {
    return lstatSync(abs).isDirectory(); // never through a symlink
  } catch {
    return false;
  }
};
const names = (abs: string): string[] => (isDir(abs) ? readdirSync(abs) : []);

/**
 * Files that interrupted writers leave, by Session: temp files of Logs, resource payloads and leases,
 * `.steal` files of a takeover, and journals (envelope-and-log.md §8, writer-lease.md §6, §9a). A crash
 * must leave nothing that check does not report, including for a Log that never came to exist.
 */
export function strayStateFiles(ws: string, only?: string): Map<string, Finding[]> {
  const found = new Map<string, Finding[]>();
  const add = (id: string, f: Finding) => {
    if (only !== undefined && id !== only) return;
    const list = found.get(id) ?? [];
    list.push(f);
    found.set(id, list);
  };
  const sessions = sessionsDir(ws);
  for (const name of names(sessions.abs)) {
    const rel = `${sessions.rel}/${name}`;
    const temp = logTempOwner(name);
    if (temp !== null && isValidSessionId(temp)) add(temp, { code: "stale_temp_file", message: STALE_TEMP, path: rel });
    const journal = /^(.*)\.ndjson\.append-journal$/.exec(name);
    if (journal !== null && isValidSessionId(journal[1])) add(journal[1]!, { code: "append_journal_present", message: "an interrupted append left a journal; readers use the original length", path: rel });
    // A Log name that is not a regular file (a symlink, a folder): ls ignores it, check reports it.
    const log = /^(.*)\.ndjson$/.exec(name);
    if (log !== null && isValidSessionId(log[1]) && !lstatSync(path.join(sessions.abs, name)).isFile()) add(log[1]!, { code: "unsafe_log_entry", message: "not a regular file", path: rel });
    if (!isValidSessionId(name) || (only !== undefined && name !== only)) continue;
    const resources = path.join(sessions.abs, name, "resources");
    for (const rid of names(resources)) {
      for (const file of names(path.join(resources, rid))) {
        if (TEMP_SUFFIX.test(file)) add(name, { code: "stale_temp_file", message: STALE_TEMP, path: `${rel}/resources/${rid}/${file}` });
      }
    }
  }
  const leases = leasesDir(ws);
  for (const name of names(leases.abs)) {
    const m = /^(.*)\.json(\.tmp-[0-9a-f]{8}|\.steal)$/.exec(name);
    if (m !== null && isValidSessionId(m[1])) add(m[1]!, { code: "stale_temp_file", message: m[2] === ".steal" ? "a takeover of a dead writer's lease was interrupted" : STALE_TEMP, path: `${leases.rel}/${name}` });
  }
  return found;
}

export async function checkLog(ws: string, id: string, strays?: Finding[], progress?: ByteProgress): Promise<LogReport> {
  const p = logPath(ws, id);
  const report: LogReport = { session_id: id, log_path: p.rel, event_count: 0, problems: [], warnings: [] };
  const problem = (f: Finding) => report.problems.push(f);
  const warn = (f: Finding) => report.warnings.push(f);
  // An unsafe .pixir or .pixir/sessions stops the whole check; an unsafe Log file is one finding.
  if (inspectStatePath(sessionsDir(ws)) === "missing") throw notFoundError(id, ws, p.rel, "pixir-log check");
  try {
    if (inspectStatePath(p) === "missing") throw notFoundError(id, ws, p.rel, "pixir-log check");
    if (readJournal(ws, id) !== null) warn({ code: "append_journal_present", message: "an interrupted append left a journal; readers use the original length" });
  } catch (thrown) {
    // A Log this user may not read is one problem of that Log; the others are checked as usual.
    const err = mapOsRefusal(thrown, ws);
    if (err instanceof PixirError && err.kind !== "not_found") {
      const { next_actions: _n, ...details } = err.details;
      problem({ code: err.kind, message: err.message, ...details });
      return report;
    }
    throw err;
  }
  // The journal was read above (under either of its names); the other leftovers come from the scan.
  for (const f of strays ?? strayStateFiles(ws, id).get(id) ?? []) if (f.code !== "append_journal_present") warn(f);

  const hashes = new Set<number>();
  const suspects = new Set<number>();
  let prevSeq: number | null = null;
  let first: LogLine | null = null;
  let shareN: number | null = null;
  const onLine = (line: LogLine) => {
    const e = line.event;
    const at = { line: line.lineNo, seq: e.seq };
    if (first === null) {
      first = line;
      if (e.type === "session_fork" && e.data.strategy === "share_v1" && typeof e.data.replay_event_count === "number") shareN = e.data.replay_event_count;
    }
    for (const f of line.missingFields) warn({ code: "missing_field", ...at, field: f, message: `event has no ${f}` });
    for (const f of line.extraFields) warn({ code: "extra_field", ...at, field: f, message: "event has a key beyond the six envelope keys" });
    if (e.session_id !== null && e.session_id !== id) warn({ code: "session_id_mismatch", ...at, message: "event session_id differs from the log's id" });
    if (e.ts !== null && !isIsoUtc(e.ts)) warn({ code: "invalid_ts", ...at, message: "ts is not ISO-8601 UTC" });
    if (e.type === "session_fork" && (line !== first || e.seq !== 0)) {
      if (e.data.strategy === "share_v1") problem({ code: "misplaced_share_header", ...at, message: CORRUPT_MESSAGES.misplaced_share_header });
      else warn({ code: "session_fork_not_first", ...at, message: "session_fork is not the first line at seq 0" });
    }
    if (e.seq === null) warn({ code: "null_seq", ...at, message: "event has a null seq" });
    else {
      const expected = prevSeq === null ? 0 : line !== first && prevSeq === 0 && shareN !== null ? shareN + 1 : prevSeq + 1;
      if (prevSeq !== null && e.seq === prevSeq) warn({ code: "duplicate_seq", ...at, message: `seq ${e.seq} repeats` });
      else if (prevSeq !== null && e.seq < prevSeq) warn({ code: "seq_out_of_order", ...at, message: `seq ${e.seq} comes after seq ${prevSeq}` });
      else if (e.seq !== expected) warn({ code: "seq_gap", ...at, message: `expected seq ${expected}, found ${e.seq}` });
      if (shareN !== null && line !== first && e.seq <= shareN) {
        problem({ code: "seq_conflicts_with_shared_prefix", ...at, message: CORRUPT_MESSAGES.seq_conflicts_with_shared_prefix });
      }
      prevSeq = prevSeq === null ? e.seq : Math.max(prevSeq, e.seq);
    }
    if (e.id !== null) {
      const h = idHash(e.id);
      if (hashes.has(h)) suspects.add(h);
      else hashes.add(h);
    }
  };
  let lines = 0;
  let scan: Awaited<ReturnType<typeof scanLog>>;
  try {
    scan = await scanLog(ws, id, {
      onLine: (line) => {
        lines++;
        progress?.add(line.bytes.length + 1);
        onLine(line);
      },
      onProblem: (p, raw) => {
        problem({ code: p.reason, line: raw.lineNo, message: CORRUPT_MESSAGES[p.reason], ...(p.extra ?? {}) });
        return "skip";
      },
    });
  } catch (thrown) {
    const err = mapOsRefusal(thrown, ws);
    if (err instanceof PixirError && err.kind === "permission_denied") {
      const { next_actions: _n, ...details } = err.details;
      problem({ code: err.kind, message: "the Log could not be read: permission denied", ...details });
      return report;
    }
    // A line over the length limit is refused without being buffered, so the reading stops there: it is
    // this Log's last finding, and the rest of the Log is not read.
    if (!(err instanceof PixirError) || err.details.reason !== "line_too_long") throw err;
    const { next_actions: _n, path: _p, reason, ...details } = err.details;
    problem({ code: reason as string, message: `${CORRUPT_MESSAGES.line_too_long}; the rest of the Log was not read`, ...details });
    report.event_count = lines;
    return report;
  }
  report.event_count = scan.eventCount;
  if (!scan.endsWithNewline && !report.problems.some((f) => f.code === "torn_tail")) {
    warn({ code: "missing_final_newline", message: "the last line has no trailing newline" });
  }
  if (suspects.size > 0) await confirmDuplicateIds(ws, id, suspects, warn);
  if (report.problems.length === 0) await checkLineage(ws, id, first, problem, warn);
  return report;
}

/** Second pass, only for hash collisions: compare the actual ids. */
async function confirmDuplicateIds(ws: string, id: string, suspects: Set<number>, warn: (f: Finding) => void): Promise<void> {
  const seen = new Map<string, number>();
  await scanLog(ws, id, {
    onProblem: () => "skip",
    onLine: (line) => {
      const eid = line.event.id;
      if (eid === null || !suspects.has(idHash(eid))) return;
      const firstLine = seen.get(eid);
      if (firstLine === undefined) seen.set(eid, line.lineNo);
      else warn({ code: "duplicate_id", line: line.lineNo, seq: line.event.seq, message: `id repeats the one on line ${firstLine}` });
    },
  });
}

/** Resolution problems of share children; a replay child whose parent was rewritten is a warning. */
async function checkLineage(ws: string, id: string, first: LogLine | null, problem: (f: Finding) => void, warn: (f: Finding) => void): Promise<void> {
  const header = first?.event;
  if (header?.type !== "session_fork" || header.seq !== 0) return;
  try {
    if (header.data.strategy === "share_v1") await openHistory(ws, id);
    else if (header.data.strategy === "replay_v1" && typeof header.data.parent_session_id === "string") {
      try {
        await checkParentPrefix(ws, id, {
          parentId: header.data.parent_session_id,
          n: header.data.replay_event_count as number,
          toSeq: header.data.forked_to_seq as number,
          digest: header.data.prefix_digest as string,
          strategy: "replay_v1",
        });
      } catch (err) {
        if (err instanceof PixirError && err.kind === "fork_prefix_mismatch") {
          warn({ code: "replay_prefix_differs", line: first!.lineNo, message: "the parent log no longer hashes to this child's prefix_digest", ...err.details });
          return;
        }
        if (mapOsRefusal(err) instanceof PixirError) return; // an unreadable parent is the parent's own problem
        throw err;
      }
    }
  } catch (thrown) {
    const err = mapOsRefusal(thrown, ws);
    if (!(err instanceof PixirError)) throw err;
    const { next_actions: _n, ...details } = err.details;
    problem({ code: err.kind === "corrupt_log_line" ? String(details.reason) : err.kind, message: err.message, ...details });
  }
}

export interface CheckReport {
  checked: number;
  problem_count: number;
  warning_count: number;
  logs: LogReport[];
}


/**
 * Check the named Logs, or every Log of the Workspace. `progress` (a terminal's) gets a line per 64 MiB
 * read, counted over all of them.
 */
export async function checkLogs(ws: string, ids: string[] | null, progress?: (text: string) => void): Promise<CheckReport> {
  const targets = ids ?? listLogs(ws).sessionIds;
  const logs: LogReport[] = [];
  let current = "";
  const read = progress && new ByteProgress((n) => progress(`checked ${mebibytes(n)} (log ${logs.length + 1} of ${targets.length}: ${current})`));
  const check = (id: string, strays?: Finding[]) => {
    current = id;
    return checkLog(ws, id, strays, read);
  };
  if (ids !== null) {
    for (const id of targets) logs.push(await check(id));
  } else {
    // The whole Workspace: also the leftovers of Sessions whose Log never appeared (a killed create).
    // Even without .pixir/sessions: a writer killed while taking the first lease leaves its temp file.
    const strays = strayStateFiles(ws);
    for (const id of targets) logs.push(await check(id, strays.get(id) ?? []));
    const others = [...strays.keys()].filter((id) => !targets.includes(id)).sort(compareBytes);
    for (const id of others) {
      const found = strays.get(id)!;
      // An unsafe entry under a Log's name is checked as that Log: one unsafe_state_path problem.
      if (found.some((f) => f.code === "unsafe_log_entry")) logs.push(await checkLog(ws, id, found.filter((f) => f.code !== "unsafe_log_entry")));
      else logs.push({ session_id: id, log_path: logPath(ws, id).rel, log_exists: false, event_count: 0, problems: [], warnings: found });
    }
  }
  const problems = logs.reduce((n, l) => n + l.problems.length, 0);
  const warnings = logs.reduce((n, l) => n + l.warnings.length, 0);
  return { checked: logs.filter((l) => l.log_exists !== false).length, problem_count: problems, warning_count: warnings, logs };
}
