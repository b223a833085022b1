// archive.md §3: the model calls of every Log as usage.json keeps them: one column per field over all the
// calls of all the Logs (numbers in arrays; each model named once; times as ms since the epoch; each dedupe
// key a short hash; a column with no value at all stored as null), and the Logs' keys with their call
// counts. `pixir usage` reads the whole file every run, and a file of number arrays parses many times
// faster than one with an array and a time string per call.
import { createHash } from "node:crypto";
import { TOKEN_KEYS, type AgentName, type ModelCall } from "./model-calls.js";
import { countedCall, type CountedCall } from "./usage.js";

/** A Log's calls with the key (size, mtime, agent) they were read under. */
export interface IndexedLog {
  size: number;
  mtime_ms: number;
  agent: AgentName;
  calls: CountedCall[];
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

/** The file's JSON value for these Logs. */
export function encodeUsageIndex(version: number, logs: ReadonlyMap<string, IndexedLog>): Record<string, unknown> {
  const keys: Array<string | number> = [];
  const models: string[] = [];
  const modelIndex = new Map<string, number>();
  const cols: Record<string, unknown[]> = { seq: [], time: [], model: [], dedupe_key: [] };
  for (const k of COUNTS) cols[k] = [];
  for (const [id, log] of logs) {
    keys.push(id, log.size, log.mtime_ms, log.agent, log.calls.length);
    for (const c of log.calls) {
      cols.seq!.push(c.seq);
      cols.time!.push(c.time === Number.NEGATIVE_INFINITY ? null : c.time);
      cols.model!.push(c.model === null ? -1 : (modelIndex.get(c.model) ?? modelIndex.set(c.model, models.push(c.model) - 1).get(c.model)!));
      for (const k of COUNTS) cols[k]!.push(c[k]);
      cols.dedupe_key!.push(c.dedupe_key);
    }
  }
  const stored = Object.fromEntries(Object.entries(cols).map(([k, v]) => [k, v.every((x) => x === null) ? null : v]));
  return { version, logs: keys, models, ...stored };
}

const isN = (v: unknown) => v === null || typeof v === "number";

/** The Logs of the file's JSON value, or an empty map when it is not one (the file is then rebuilt). */
export function decodeUsageIndex(v: Record<string, unknown>): Map<string, IndexedLog> {
  const out = new Map<string, IndexedLog>();
  const keys = v.logs;
  const models = v.models;
  if (!Array.isArray(keys) || keys.length % LOG_FIELDS !== 0 || !Array.isArray(models) || !models.every((m) => typeof m === "string")) return out;
  let total = 0;
  for (let i = 0; i < keys.length; i += LOG_FIELDS) {
    const [id, size, mtime, agent, n] = keys.slice(i, i + LOG_FIELDS);
    if (typeof id !== "string" || typeof size !== "number" || typeof mtime !== "number" || typeof agent !== "string" || typeof n !== "number") return out;
    total += n;
  }
  const column = (k: string, ok: (x: unknown) => boolean): unknown[] | null | undefined => {
    const c = v[k];
    if (c === null) return null;
    return Array.isArray(c) && c.length === total && c.every(ok) ? c : undefined;
  };
  const seq = column("seq", (x) => typeof x === "number");
  const time = column("time", isN);
  const model = column("model", (x) => typeof x === "number" && x >= -1 && x < models.length);
  const key = column("dedupe_key", (x) => x === null || typeof x === "string");
  const counts = COUNTS.map((k) => column(k, isN));
  if (seq === undefined || time === undefined || model === undefined || key === undefined || counts.includes(undefined)) return out;
  const at = (c: unknown[] | null | undefined, j: number) => (c == null ? null : c[j]) as never;
  let j = 0;
  for (let i = 0; i < keys.length; i += LOG_FIELDS) {
    const id = keys[i] as string;
    const calls: CountedCall[] = new Array(keys[i + 4] as number);
    for (let c = 0; c < calls.length; c++, j++) {
      const m = at(model, j) ?? -1;
      calls[c] = {
        session_id: id,
        seq: at(seq, j) ?? 0,
        model: m < 0 ? null : models[m]!,
        input: at(counts[0], j),
        output: at(counts[1], j),
        cache_read: at(counts[2], j),
        cache_write: at(counts[3], j),
        cache_write_5m: at(counts[4], j),
        cache_write_1h: at(counts[5], j),
        reasoning: at(counts[6], j),
        recorded_cost_usd: at(counts[7], j),
        dedupe_key: at(key, j),
        time: at(time, j) ?? Number.NEGATIVE_INFINITY,
      };
    }
    out.set(id, { size: keys[i + 1] as number, mtime_ms: keys[i + 2] as number, agent: keys[i + 3] as AgentName, calls });
  }
  return out;
}
