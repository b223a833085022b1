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

/** Every session of an `opencode.db`, opened read-only (opencode may be writing it: WAL readers are safe). */
export function readOpencodeDatabase(abs: string, display: string, lenient: boolean, skipped: string[]): OpencodeSession[] {
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
    const rows = db.prepare("SELECT * FROM session ORDER BY time_created, id").all() as Array<Record<string, unknown>>;
    const messages = db.prepare("SELECT id, session_id, data FROM message WHERE session_id = ? ORDER BY time_created, id");
    const parts = db.prepare("SELECT id, message_id, session_id, data FROM part WHERE message_id = ? ORDER BY id");
    return rows.map((r) => ({
      info: sessionInfoOfRow(r, display, lenient, skipped),
      source: display,
      messages: (messages.all(r.id) as Array<Record<string, string>>).flatMap((m) => {
        const data = parseJson(m.data!, `${display}#message/${m.id}`, lenient, skipped);
        if (data === null) return [];
        const info = { id: m.id!, sessionID: m.session_id!, ...data };
        const ps = (parts.all(m.id) as Array<Record<string, string>>).flatMap((p) => {
          const pd = parseJson(p.data!, `${display}#part/${p.id}`, lenient, skipped);
          return pd === null ? [] : [{ id: p.id!, sessionID: p.session_id!, messageID: p.message_id!, ...pd }];
        });
        return [{ info, parts: ps }];
      }),
    }));
  } catch (err) {
    if (err instanceof PixirError) throw err;
    throw invalidOpencode("unreadable_database", display);
  } finally {
    db.close();
  }
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

/** The legacy JSON tree (`storage/`), as opencode wrote it before the database. */
export function readOpencodeStorage(storage: string, display: string, lenient: boolean, skipped: string[]): OpencodeSession[] {
  const read = (abs: string): JsonObject | null => parseJson(readFileSync(abs, "utf8"), path.join(display, path.relative(storage, abs)), lenient, skipped);
  const sessions = jsonFiles(path.join(storage, "session")).flatMap((f) => {
    const info = read(f);
    return info !== null && typeof info.id === "string" ? [{ info, file: f }] : [];
  });
  const created = (o: JsonObject): number => num((o.time as JsonObject | undefined)?.created) ?? 0;
  sessions.sort((a, b) => created(a.info) - created(b.info) || byId(a.info, b.info));
  return sessions.map(({ info, file }) => {
    const messages = jsonFiles(path.join(storage, "message", info.id as string))
      .map(read)
      .filter((m): m is JsonObject => m !== null && typeof m.id === "string");
    messages.sort((a, b) => created(a) - created(b) || byId(a, b));
    return {
      info,
      source: path.join(display, path.relative(storage, file)),
      messages: messages.map((m) => ({
        info: m,
        parts: jsonFiles(path.join(storage, "part", m.id as string))
          .map(read)
          .filter((p): p is JsonObject => p !== null)
          .sort(byId),
      })),
    };
  });
}

/** A PATH: the database, a data directory holding it (or `storage/`), or a `storage/` tree itself. */
export function readOpencodePath(abs: string, display: string, lenient: boolean, skipped: string[]): OpencodeSession[] {
  let st;
  try {
    st = lstatSync(abs);
  } catch {
    throw new PixirError("not_found", "opencode data path was not found", { path: display, next_actions: ["check the path", "set XDG_DATA_HOME or pass opencode.db"] });
  }
  if (st.isFile()) return readOpencodeDatabase(abs, display, lenient, skipped);
  const db = path.join(abs, "opencode.db");
  const out: OpencodeSession[] = [];
  if (existsSync(db)) out.push(...readOpencodeDatabase(db, path.join(display, "opencode.db"), lenient, skipped));
  const storage = existsSync(path.join(abs, "storage", "session")) ? path.join(abs, "storage") : existsSync(path.join(abs, "session")) ? abs : null;
  if (storage !== null) out.push(...readOpencodeStorage(storage, storage === abs ? display : path.join(display, "storage"), lenient, skipped));
  if (!existsSync(db) && storage === null) throw invalidOpencode("not_opencode_data", display);
  return out;
}
