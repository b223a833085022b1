// docs/gemini-opencode-interop.md §5: where opencode keeps its sessions, read into one shape. Since v1.2
// one SQLite database (`opencode.db`: tables session, message, part; JSON in `data`), opened read-only;
// before it a JSON tree `storage/{session/<project>/<id>,message/<session>/<id>,part/<message>/<id>}.json`.
// Either way a session is its info (the shape `opencode export` prints) and its messages, each an info and
// its parts, with ids and session ids filled in as opencode's own export does.
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import { isJsonObject, type JsonObject } from "../../event/envelope.js";
import { PixirError } from "../../event/errors.js";

export interface OpencodeMessage {
  info: JsonObject;
  parts: JsonObject[];
}

export interface OpencodeSession {
  info: JsonObject;
  messages: OpencodeMessage[];
  /** Where it was read from (the database or the info file), as given. */
  source: string;
}

export type OpencodeReason = "unreadable_database" | "malformed_record" | "not_opencode_data";

export function invalidOpencode(reason: OpencodeReason, file: string, extra: JsonObject = {}): PixirError {
  return new PixirError("invalid_opencode_session", undefined, { reason, file, ...extra });
}

/** opencode's data directory: `$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`. */
export function opencodeHome(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_DATA_HOME && env.XDG_DATA_HOME.trim() !== "" ? env.XDG_DATA_HOME : path.join(env.HOME ?? os.homedir(), ".local", "share");
  return path.join(xdg, "opencode");
}

function parseJson(text: string, file: string, lenient: boolean, skipped: string[]): JsonObject | null {
  try {
    const v = JSON.parse(text) as unknown;
    if (isJsonObject(v)) return v;
  } catch {
    /* below */
  }
  if (!lenient) throw invalidOpencode("malformed_record", file);
  skipped.push(file);
  return null;
}

const byId = (a: JsonObject, b: JsonObject): number => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0);
const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined);

/** A session row as the Info object opencode's export prints (camelCase, `time`, optional keys left out). */
function sessionInfoOfRow(r: Record<string, unknown>, file: string, lenient: boolean, skipped: string[]): JsonObject {
  const json = (k: string): unknown => (typeof r[k] === "string" ? parseJson(`{"v":${r[k] as string}}`, `${file}#session/${String(r.id)}/${k}`, lenient, skipped)?.v : undefined);
  const info: JsonObject = { id: r.id as string, slug: r.slug as string, projectID: r.project_id as string };
  if (typeof r.workspace_id === "string") info.workspaceID = r.workspace_id;
  info.directory = r.directory as string;
  if (typeof r.parent_id === "string") info.parentID = r.parent_id;
  if (typeof r.summary_additions === "number") {
    info.summary = { additions: r.summary_additions, deletions: num(r.summary_deletions) ?? 0, files: num(r.summary_files) ?? 0 };
    const diffs = json("summary_diffs");
    if (diffs !== undefined) (info.summary as JsonObject).diffs = diffs as JsonObject;
  }
  if (typeof r.share_url === "string") info.share = { url: r.share_url };
  info.title = r.title as string;
  info.version = r.version as string;
  const time: JsonObject = { created: num(r.time_created) ?? 0, updated: num(r.time_updated) ?? 0 };
  if (typeof r.time_compacting === "number") time.compacting = r.time_compacting;
  if (typeof r.time_archived === "number") time.archived = r.time_archived;
  info.time = time;
  for (const k of ["permission", "revert"]) {
    const v = json(k);
    if (v !== undefined && v !== null) info[k] = v as JsonObject;
  }
  return info;
}

/** The SQLite addon, loaded when an opencode.db is read: every other command of the bundle that holds this module starts without it. */
const loadSqlite = (): typeof Database => createRequire(import.meta.url)("better-sqlite3") as typeof Database;

/**
 * A session of the source, not yet read: its id, and how to read it (again). A run reads each session once
 * to plan it and may read one again (a fork copy's source, a session whose planned bytes were let go), so
 * only the session being planned (and a fork copy's source) is in memory at a time.
 */
export interface OpencodeSessionRef {
  id: string;
  source: string;
  read(lenient: boolean, skipped: string[]): OpencodeSession;
}

/** Where sessions are read from: a list of them, in order, and the handles to close at the end of the run. */
export interface OpencodeSource {
  sessions: OpencodeSessionRef[];
  close(): void;
}

/** An `opencode.db`, opened read-only (opencode may be writing it: WAL readers are safe) for the run. */
export function openOpencodeDatabase(abs: string, display: string): OpencodeSource {
  let db: Database.Database;
  try {
    const Sqlite = loadSqlite();
    db = new Sqlite(abs, { readonly: true, fileMustExist: true });
  } catch {
    throw invalidOpencode("unreadable_database", display);
  }
  try {
    const has = (t: string): boolean => db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?").get(t) !== undefined;
    if (!has("session") || !has("message") || !has("part")) throw invalidOpencode("not_opencode_data", display);
    // One read transaction for the run: every session read (and read again) comes from one snapshot of the
    // database, however opencode writes it meanwhile.
    db.exec("BEGIN");
    const ids = db.prepare("SELECT id FROM session ORDER BY time_created, id").pluck().all() as string[];
    const row = db.prepare("SELECT * FROM session WHERE id = ?");
    // Messages in order, each with its parts in order (one row per part; a message without parts has one null row).
    const records = db
      .prepare(
        "SELECT m.id AS mid, m.session_id AS msid, m.data AS mdata, p.id AS pid, p.message_id AS pmid, p.session_id AS psid, p.data AS pdata " +
          "FROM message m LEFT JOIN part p ON p.message_id = m.id WHERE m.session_id = ? ORDER BY m.time_created, m.id, p.id",
      )
      .raw();
    const read = (id: string, lenient: boolean, skipped: string[]): OpencodeSession => {
      try {
        const r = row.get(id) as Record<string, unknown> | undefined;
        if (r === undefined) throw invalidOpencode("unreadable_database", display);
        return { info: sessionInfoOfRow(r, display, lenient, skipped), source: display, messages: messagesOfRows(records.iterate(id) as Iterable<unknown[]>, display, lenient, skipped) };
      } catch (err) {
        if (err instanceof PixirError) throw err;
        throw invalidOpencode("unreadable_database", display);
      }
    };
    return { sessions: ids.map((id) => ({ id, source: display, read: (lenient, skipped) => read(id, lenient, skipped) })), close: () => db.close() };
  } catch (err) {
    db.close();
    if (err instanceof PixirError) throw err;
    throw invalidOpencode("unreadable_database", display);
  }
}

/** The rows of one session's messages joined with their parts, as messages (a malformed one skipped under lenient). */
function messagesOfRows(rows: Iterable<unknown[]>, display: string, lenient: boolean, skipped: string[]): OpencodeMessage[] {
  const out: OpencodeMessage[] = [];
  let current: { id: string; message: OpencodeMessage | null } | null = null;
  for (const [mid, msid, mdata, pid, pmid, psid, pdata] of rows as Iterable<Array<string | null>>) {
    if (current === null || current.id !== mid) {
      const data = parseJson(mdata!, `${display}#message/${mid!}`, lenient, skipped);
      current = { id: mid!, message: data === null ? null : { info: { id: mid!, sessionID: msid!, ...data }, parts: [] } };
      if (current.message !== null) out.push(current.message);
    }
    if (pid === null || current.message === null) continue;
    const pd = parseJson(pdata!, `${display}#part/${pid}`, lenient, skipped);
    if (pd !== null) current.message.parts.push({ id: pid!, sessionID: psid!, messageID: pmid!, ...pd });
  }
  return out;
}

function jsonFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const abs = path.join(dir, name);
    const st = lstatSync(abs);
    if (st.isDirectory()) out.push(...jsonFiles(abs));
    else if (st.isFile() && name.endsWith(".json")) out.push(abs);
  }
  return out;
}

/**
 * The legacy JSON tree (`storage/`), as opencode wrote it before the database. The session infos (small) are
 * read to order the sessions; a session's message and part files are read when the session is.
 */
export function openOpencodeStorage(storage: string, display: string, lenient: boolean, skipped: string[]): OpencodeSource {
  const shown = (abs: string): string => path.join(display, path.relative(storage, abs));
  const read = (abs: string, lenient2: boolean, skipped2: string[]): JsonObject | null => parseJson(readFileSync(abs, "utf8"), shown(abs), lenient2, skipped2);
  const created = (o: JsonObject): number => num((o.time as JsonObject | undefined)?.created) ?? 0;
  const infos = jsonFiles(path.join(storage, "session")).flatMap((file) => {
    const info = read(file, lenient, skipped);
    return info !== null && typeof info.id === "string" ? [{ id: info.id, created: created(info), file }] : [];
  });
  infos.sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const session = (file: string, lenient2: boolean, skipped2: string[]): OpencodeSession => {
    // Read again as it was listed: the list kept only its id, time and file.
    const info = read(file, true, []) ?? {};
    const messages = jsonFiles(path.join(storage, "message", String(info.id)))
      .map((f) => read(f, lenient2, skipped2))
      .filter((m): m is JsonObject => m !== null && typeof m.id === "string");
    messages.sort((a, b) => created(a) - created(b) || byId(a, b));
    return {
      info,
      source: shown(file),
      messages: messages.map((m) => ({
        info: m,
        parts: jsonFiles(path.join(storage, "part", m.id as string))
          .map((f) => read(f, lenient2, skipped2))
          .filter((p): p is JsonObject => p !== null)
          .sort(byId),
      })),
    };
  };
  return { sessions: infos.map(({ id, file }) => ({ id, source: shown(file), read: (l, sk) => session(file, l, sk) })), close: () => undefined };
}

/** A PATH: the database, a data directory holding it (or `storage/`), or a `storage/` tree itself. */
export function openOpencodePath(abs: string, display: string, lenient: boolean, skipped: string[]): OpencodeSource[] {
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    throw new PixirError("not_found", "opencode data path was not found", { path: display, next_actions: ["check the path", "set XDG_DATA_HOME or pass opencode.db"] });
  }
  if (st.isFile()) return [openOpencodeDatabase(abs, display)];
  const db = path.join(abs, "opencode.db");
  const storage = existsSync(path.join(abs, "storage", "session")) ? path.join(abs, "storage") : existsSync(path.join(abs, "session")) ? abs : null;
  if (!existsSync(db) && storage === null) throw invalidOpencode("not_opencode_data", display);
  const out: OpencodeSource[] = [];
  try {
    if (existsSync(db)) out.push(openOpencodeDatabase(db, path.join(display, "opencode.db")));
    if (storage !== null) out.push(openOpencodeStorage(storage, storage === abs ? display : path.join(display, "storage"), lenient, skipped));
  } catch (err) {
    for (const o of out) o.close();
    throw err;
  }
  return out;
}
