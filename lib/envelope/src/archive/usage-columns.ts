// archive.md §3: the model calls of every Log, held as columns in memory (CallTable) and in usage.json:
// numbers in typed arrays (in the file, arrays), each model named once, times as ms since the epoch, each
// dedupe key a short hash, and the Logs' keys with their call counts (a column with no value at all is
// stored as null). A call is an object only while the report looks at it: an object per call held for the
// whole run made the peak grow with the archive.
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

/** Numbers as a column holds them: NaN for a count the source did not give. */
const stored = (v: number | null): number => (v === null ? Number.NaN : v);
const given = (v: number): number | null => (Number.isNaN(v) ? null : v);

/**
 * The calls of many Logs, a row each, one column per field. `logs` names the Logs the table answers for,
 * in their order; rows no Log names (a Log read again since) are dead weight until the table is written.
 */
export class CallTable {
  logs = new Map<string, LogRows>();
  readonly models: string[] = [];
  length = 0;
  private readonly modelIndex = new Map<string, number>();
  private readonly owners: string[] = [];
  private seq: Float64Array;
  private time: Float64Array;
  private model: Int32Array;
  private owner: Int32Array;
  private counts: Float64Array[];
  private keys: Array<string | null> = [];

  constructor(capacity = 1024) {
    this.seq = new Float64Array(capacity);
    this.time = new Float64Array(capacity);
    this.model = new Int32Array(capacity);
    this.owner = new Int32Array(capacity);
    this.counts = COUNTS.map(() => new Float64Array(capacity));
  }

  /** A table of these Logs' calls, as counted (tests, and any caller holding calls already). */
  static of(callsOf: ReadonlyMap<string, readonly CountedCall[]>, agent: AgentName = "pixir"): CallTable {
    const table = new CallTable();
    for (const [id, calls] of callsOf) table.add(id, { size: 0, mtime_ms: 0, agent }, calls);
    return table;
  }

  /** Appends a Log's calls and names the Log (in place of any rows it had). */
  add(id: string, key: Omit<LogRows, "start" | "count">, calls: readonly CountedCall[]): LogRows {
    this.reserve(this.length + calls.length);
    const owner = this.owners.push(id) - 1;
    const rows: LogRows = { ...key, start: this.length, count: calls.length };
    for (const c of calls) {
      const r = this.length++;
      this.seq[r] = c.seq;
      this.time[r] = c.time;
      this.model[r] = this.modelOf(c.model);
      this.owner[r] = owner;
      for (let k = 0; k < COUNTS.length; k++) this.counts[k]![r] = stored(c[COUNTS[k]!]);
      this.keys[r] = c.dedupe_key;
    }
    this.logs.set(id, rows);
    return rows;
  }

  /** The rows of a Log the table names. */
  rowsOf(id: string): LogRows | undefined {
    return this.logs.get(id);
  }

  dedupeKey(row: number): string | null {
    return this.keys[row]!;
  }

  /** Row `row` as a call, made for the moment it is looked at. */
  call(row: number): CountedCall {
    const m = this.model[row]!;
    const n = (k: number) => given(this.counts[k]![row]!);
    return {
      session_id: this.owners[this.owner[row]!]!,
      seq: this.seq[row]!,
      model: m < 0 ? null : this.models[m]!,
      input: n(0),
      output: n(1),
      cache_read: n(2),
      cache_write: n(3),
      cache_write_5m: n(4),
      cache_write_1h: n(5),
      reasoning: n(6),
      recorded_cost_usd: n(7),
      dedupe_key: this.keys[row]!,
      time: this.time[row]!,
    };
  }

  /** The calls of a Log, in its order. */
  callsOf(id: string): CountedCall[] {
    const rows = this.logs.get(id);
    return rows === undefined ? [] : Array.from({ length: rows.count }, (_, i) => this.call(rows.start + i));
  }

  /** The file's JSON text for the Logs the table names, in their order. */
  encode(version: number): string {
    const keys: Array<string | number> = [];
    for (const [id, log] of this.logs) keys.push(id, log.size, log.mtime_ms, log.agent, log.count);
    // Models numbered in the order the named Logs use them, so the same Logs give the same file.
    const models: string[] = [];
    const renumbered = new Map<number, number>();
    const modelAt = (r: number) => {
      const m = this.model[r]!;
      return m < 0 ? -1 : (renumbered.get(m) ?? renumbered.set(m, models.push(this.models[m]!) - 1).get(m)!);
    };
    const parts = [`{"version":${version},"logs":${JSON.stringify(keys)},"models":`];
    const column = (name: string, at: (row: number) => unknown) => {
      const values: unknown[] = [];
      for (const log of this.logs.values()) for (let r = log.start; r < log.start + log.count; r++) values.push(at(r));
      parts.push(`,"${name}":${JSON.stringify(values.every((x) => x === null) ? null : values)}`);
    };
    column("seq", (r) => this.seq[r]);
    column("time", (r) => (this.time[r] === Number.NEGATIVE_INFINITY ? null : this.time[r]));
    column("model", modelAt);
    column("dedupe_key", (r) => this.keys[r]);
    COUNTS.forEach((name, k) => column(name, (r) => given(this.counts[k]![r]!)));
    parts[0] += JSON.stringify(models);
    parts.push("}");
    return parts.join("");
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
    const table = new CallTable(total);
    for (const m of models as string[]) table.modelOf(m);
    for (let i = 0; i < keys.length; i += LOG_FIELDS) {
      const id = keys[i] as string;
      const rows: LogRows = { size: keys[i + 1] as number, mtime_ms: keys[i + 2] as number, agent: keys[i + 3] as AgentName, start: table.length, count: keys[i + 4] as number };
      table.owner.fill(table.owners.push(id) - 1, rows.start, rows.start + rows.count);
      table.logs.set(id, rows);
      table.length += rows.count;
    }
    const at = (c: unknown[] | null, j: number) => (c === null ? null : (c[j] as number | string | null));
    for (let j = 0; j < total; j++) {
      table.seq[j] = (at(columns.seq, j) as number | null) ?? 0;
      table.time[j] = (at(columns.time, j) as number | null) ?? Number.NEGATIVE_INFINITY;
      table.model[j] = (at(columns.model, j) as number | null) ?? -1;
      table.keys[j] = at(columns.dedupe_key, j) as string | null;
      for (let k = 0; k < COUNTS.length; k++) table.counts[k]![j] = stored(at(columns.counts[k]!, j) as number | null);
    }
    return table;
  }

  private modelOf(model: string | null): number {
    if (model === null) return -1;
    return this.modelIndex.get(model) ?? this.modelIndex.set(model, this.models.push(model) - 1).get(model)!;
  }

  /** Room for `rows` rows: the columns grow by half again, so appending stays linear. */
  private reserve(rows: number): void {
    if (rows <= this.seq.length) return;
    const size = Math.max(rows, Math.ceil(this.seq.length * 1.5));
    const grown = <A extends Float64Array | Int32Array>(a: A): A => {
      const b = new (a.constructor as new (n: number) => A)(size);
      b.set(a);
      return b;
    };
    this.seq = grown(this.seq);
    this.time = grown(this.time);
    this.model = grown(this.model);
    this.owner = grown(this.owner);
    this.counts = this.counts.map(grown);
  }
}

const isN = (v: unknown) => v === null || typeof v === "number";

/** The file's columns when each is null or an array of `total` values of its kind; else null. */
function storedColumns(v: Record<string, unknown>, total: number, models: number) {
  const column = (k: string, ok: (x: unknown) => boolean): unknown[] | null | undefined => {
    const c = v[k];
    if (c === null) return null;
    return Array.isArray(c) && c.length === total && c.every(ok) ? c : undefined;
  };
  const seq = column("seq", (x) => typeof x === "number");
  const time = column("time", isN);
  const model = column("model", (x) => typeof x === "number" && x >= -1 && x < models);
  const dedupe_key = column("dedupe_key", (x) => x === null || typeof x === "string");
  const counts = COUNTS.map((k) => column(k, isN));
  if (seq === undefined || time === undefined || model === undefined || dedupe_key === undefined || counts.some((c) => c === undefined)) return null;
  return { seq, time, model, dedupe_key, counts: counts as Array<unknown[] | null> };
}
