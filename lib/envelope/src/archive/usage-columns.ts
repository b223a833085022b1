// archive.md §3: the model calls of every Log as usage.json keeps them and `pixir usage` holds them
// (CallTable): one column per field over all the calls of all the Logs (numbers in arrays; each model named
// once; times as ms since the epoch; each dedupe key a short hash; a column with no value at all stored as
// null), and the Logs' keys with their call counts. A call is an object only while the report looks at it:
// an object per call, held for the whole run, made the peak grow with the archive.
import { createHash } from "node:crypto";
import { TOKEN_KEYS, type AgentName, type ModelCall } from "./model-calls.js";
import { countedCall, type CountedCall } from "./usage.js";

/** The key a Log's calls were read under (its size, mtime and agent), and where its rows are. */
export interface LogRows {
  size: number;
  mtime_ms: number;
  agent: AgentName;
  start: number;
  count: number;
}

const COUNTS = [...TOKEN_KEYS, "recorded_cost_usd"] as const;
/** Fields of a Log in `logs`: id, size, mtime_ms, agent, number of calls. */
const LOG_FIELDS = 5;

/**
 * A dedupe key as stored: 96 bits of its SHA-256, base64url. Only equality matters; at a million calls the
 * chance that two different responses share a hash is about 1e-17.
 */
export const keyHash = (key: string): string => createHash("sha256").update(key).digest("base64url").slice(0, 16);

/** A call counted from Log `logId` (whatever its Event says), its dedupe key hashed as the file keeps it, so fresh and stored calls compare. */
export function indexedCall(logId: string, c: ModelCall): CountedCall {
  const counted = countedCall(c);
  counted.session_id = logId;
  if (counted.dedupe_key !== null) counted.dedupe_key = keyHash(counted.dedupe_key);
  return counted;
}

/** The stored columns, in the file's order: numbers or null (time: null for none; model: -1 for none). */
const COLUMNS = ["seq", "time", "model", "dedupe_key", ...COUNTS] as const;
type ColumnName = (typeof COLUMNS)[number];
type Column = Array<number | string | null>;

/**
 * The calls of many Logs, a row each, one column per field, as the file holds them (a column the file
 * stores as null is an array of nulls here). `logs` names the Logs the table answers for, in their order;
 * rows no Log names (a Log read again since) are dead weight until the table is written.
 */
export class CallTable {
  logs = new Map<string, LogRows>();
  private readonly models: string[] = [];
  private length = 0;
  private readonly modelIndex = new Map<string, number>();
  private readonly owners: string[] = [];
  /** The index in `owners` of each row's Log. */
  private readonly owner: number[] = [];
  private readonly columns = Object.fromEntries(COLUMNS.map((k) => [k, []])) as unknown as Record<ColumnName, Column>;

  /** Appends a Log's calls and names the Log (in place of any rows it had). */
  add(id: string, key: Omit<LogRows, "start" | "count">, calls: readonly CountedCall[]): LogRows {
    const owner = this.owners.push(id) - 1;
    const rows: LogRows = { ...key, start: this.length, count: calls.length };
    const { seq, time, model, dedupe_key: dedupeKey } = this.columns;
    const counts = COUNTS.map((k) => this.columns[k]);
    for (const c of calls) {
      seq.push(c.seq);
      time.push(c.time === Number.NEGATIVE_INFINITY ? null : c.time);
      model.push(this.modelOf(c.model));
      dedupeKey.push(c.dedupe_key);
      for (let k = 0; k < COUNTS.length; k++) counts[k]!.push(c[COUNTS[k]!]);
      this.owner.push(owner);
    }
    this.length += calls.length;
    this.logs.set(id, rows);
    return rows;
  }

  /** The rows of a Log the table names. */
  rowsOf(id: string): LogRows | undefined {
    return this.logs.get(id);
  }

  dedupeKey(row: number): string | null {
    return this.columns.dedupe_key[row] as string | null;
  }

  /** Row `row` as a call, made for the moment it is looked at. */
  call(row: number): CountedCall {
    const c = this.columns as Record<ColumnName, Array<number | null>>;
    const m = c.model[row] ?? -1;
    return {
      session_id: this.owners[this.owner[row]!]!,
      seq: c.seq[row] ?? 0,
      model: m < 0 ? null : this.models[m]!,
      input: c.input[row]!,
      output: c.output[row]!,
      cache_read: c.cache_read[row]!,
      cache_write: c.cache_write[row]!,
      cache_write_5m: c.cache_write_5m[row]!,
      cache_write_1h: c.cache_write_1h[row]!,
      reasoning: c.reasoning[row]!,
      recorded_cost_usd: c.recorded_cost_usd[row]!,
      dedupe_key: this.dedupeKey(row),
      time: c.time[row] ?? Number.NEGATIVE_INFINITY,
    };
  }

  /** The file's JSON text for the Logs the table names, in their order. */
  encode(version: number): string {
    const keys: Array<string | number> = [];
    for (const [id, log] of this.logs) keys.push(id, log.size, log.mtime_ms, log.agent, log.count);
    // Models numbered in the order the named Logs use them, so the same Logs give the same file.
    const models: string[] = [];
    const renumbered = new Map<number, number>();
    const renumber = (m: number) => (m < 0 ? -1 : (renumbered.get(m) ?? renumbered.set(m, models.push(this.models[m]!) - 1).get(m)!));
    const parts: string[] = [];
    for (const name of COLUMNS) {
      const values: unknown[] = [];
      for (const log of this.logs.values()) for (let r = log.start; r < log.start + log.count; r++) values.push(name === "model" ? renumber((this.columns.model[r] as number | null) ?? -1) : this.columns[name][r]);
      parts.push(`,"${name}":${JSON.stringify(values.every((x) => x === null) ? null : values)}`);
    }
    return `{"version":${version},"logs":${JSON.stringify(keys)},"models":${JSON.stringify(models)}${parts.join("")}}`;
  }

  /** The Logs of the file's JSON value, or an empty table when it is not one (the file is then rebuilt). */
  static decode(v: Record<string, unknown>): CallTable {
    const keys = v.logs;
    const models = v.models;
    if (!Array.isArray(keys) || keys.length % LOG_FIELDS !== 0 || !Array.isArray(models) || !models.every((m) => typeof m === "string")) return new CallTable();
    let total = 0;
    for (let i = 0; i < keys.length; i += LOG_FIELDS) {
      const [id, size, mtime, agent, n] = keys.slice(i, i + LOG_FIELDS);
      if (typeof id !== "string" || typeof size !== "number" || typeof mtime !== "number" || typeof agent !== "string" || typeof n !== "number") return new CallTable();
      total += n;
    }
    const columns = storedColumns(v, total, models.length);
    if (columns === null) return new CallTable();
    const table = new CallTable();
    for (const m of models as string[]) {
      if (!table.modelIndex.has(m)) table.modelIndex.set(m, table.models.length);
      table.models.push(m); // as listed: the model column counts in this list, a name listed twice included
    }
    Object.assign(table.columns, columns);
    for (let i = 0; i < keys.length; i += LOG_FIELDS) {
      const id = keys[i] as string;
      const rows: LogRows = { size: keys[i + 1] as number, mtime_ms: keys[i + 2] as number, agent: keys[i + 3] as AgentName, start: table.length, count: keys[i + 4] as number };
      const owner = table.owners.push(id) - 1;
      for (let r = 0; r < rows.count; r++) table.owner.push(owner);
      table.logs.set(id, rows);
      table.length += rows.count;
    }
    return table;
  }

  private modelOf(model: string | null): number {
    if (model === null) return -1;
    return this.modelIndex.get(model) ?? this.modelIndex.set(model, this.models.push(model) - 1).get(model)!;
  }
}

const isN = (v: unknown) => v === null || typeof v === "number";

/** The file's columns when each is null (then as many nulls) or an array of `total` values of its kind; else null. */
function storedColumns(v: Record<string, unknown>, total: number, models: number): Record<ColumnName, Column> | null {
  const kind = (k: ColumnName) => (k === "seq" ? (x: unknown) => typeof x === "number" : k === "model" ? (x: unknown) => typeof x === "number" && x >= -1 && x < models : k === "dedupe_key" ? (x: unknown) => x === null || typeof x === "string" : isN);
  const out: Partial<Record<ColumnName, Column>> = {};
  for (const k of COLUMNS) {
    const c = v[k];
    if (c !== null && !(Array.isArray(c) && c.length === total && c.every(kind(k)))) return null;
    out[k] = (c as Column | null) ?? new Array<null>(total).fill(null);
  }
  return out as Record<ColumnName, Column>;
}
