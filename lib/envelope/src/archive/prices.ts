// archive.md §3: what a model call cost. Prices come from price-table.ts, replaced or extended by a
// `--prices FILE`; a call whose model has no price costs null (unknown), never 0.
import { readFileSync } from "node:fs";
import { isJsonObject } from "../event/envelope.js";
import { PixirError } from "../event/errors.js";
import type { CallUsage } from "./model-calls.js";
import { PRICE_TABLE, type ModelPrice } from "./price-table.js";

export type { ModelPrice } from "./price-table.js";
export type CostMode = "auto" | "calculate" | "recorded";
export const COST_MODES: readonly CostMode[] = ["auto", "calculate", "recorded"];
const PRICE_FIELDS = ["input", "output", "cache_read", "cache_write_5m", "cache_write_1h"] as const;

export type PriceTable = ReadonlyMap<string, ModelPrice>;

/** The built-in table, with the rows of `file` (a JSON object `{"<model>": {input, output, …}}`) over it. */
export function loadPrices(file: string | null): PriceTable {
  const table = new Map(Object.entries(PRICE_TABLE));
  if (file === null) return table;
  for (const [model, price] of Object.entries(readPriceFile(file))) table.set(model, price);
  return table;
}

function readPriceFile(file: string): Record<string, ModelPrice> {
  const bad = (reason: string, extra: Record<string, unknown> = {}) =>
    new PixirError("invalid_args", `price file ${file} is invalid: ${reason}`, {
      path: file,
      reason,
      ...extra,
      next_actions: [`write ${file} as {"<model>": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write_5m": 3.75, "cache_write_1h": 6}} (USD per million tokens)`],
    });
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EACCES") throw new PixirError("permission_denied", `cannot read price file ${file}`, { path: file });
    throw new PixirError("invalid_args", `cannot read price file ${file}`, { path: file, reason: code === "ENOENT" ? "not_found" : (code ?? "io_error").toLowerCase() });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad("not_json");
  }
  if (!isJsonObject(parsed)) throw bad("not_an_object");
  const out: Record<string, ModelPrice> = {};
  for (const [model, row] of Object.entries(parsed)) {
    if (!isJsonObject(row)) throw bad("row_not_an_object", { model });
    const price = {} as Record<(typeof PRICE_FIELDS)[number], number>;
    for (const field of PRICE_FIELDS) {
      const v = row[field];
      if (typeof v !== "number" || !Number.isFinite(v) || v < 0) throw bad("bad_price", { model, field });
      price[field] = v;
    }
    out[model] = price;
  }
  return out;
}

/** What priceOf found for each model name, per table: a report prices thousands of calls of a few models. */
const FOUND = new WeakMap<PriceTable, Map<string, ModelPrice | null>>();

/** A model's price: its exact row, else the longest listed prefix that ends where the name goes on with `-`, `@` or `[`. */
export function priceOf(table: PriceTable, model: string | null): ModelPrice | null {
  if (model === null) return null;
  const exact = table.get(model);
  if (exact !== undefined) return exact;
  const found = FOUND.get(table) ?? FOUND.set(table, new Map()).get(table)!;
  if (found.has(model)) return found.get(model)!;
  const price = longestPrefixPrice(table, model);
  found.set(model, price);
  return price;
}

function longestPrefixPrice(table: PriceTable, model: string): ModelPrice | null {
  let best: string | null = null;
  for (const name of table.keys()) {
    if (model.length > name.length && model.startsWith(name) && "-@[".includes(model[name.length]!) && (best === null || name.length > best.length)) best = name;
  }
  return best === null ? null : table.get(best)!;
}

/** USD of a call at `price`. A cache write the source does not split is priced as a 5-minute write. */
export function computedCost(c: CallUsage, price: ModelPrice): number {
  const split = (c.cache_write_5m ?? 0) + (c.cache_write_1h ?? 0);
  const unsplit = Math.max(0, (c.cache_write ?? 0) - split);
  const micro =
    (c.input ?? 0) * price.input +
    (c.output ?? 0) * price.output +
    (c.cache_read ?? 0) * price.cache_read +
    ((c.cache_write_5m ?? 0) + unsplit) * price.cache_write_5m +
    (c.cache_write_1h ?? 0) * price.cache_write_1h;
  return micro / 1e6;
}

/** A call's cost in `mode`: recorded (the source's own cost), calculate (the table), auto (recorded, else the table); null when unknown. */
export function callCost(c: CallUsage, table: PriceTable, mode: CostMode): number | null {
  if (mode !== "calculate" && c.recorded_cost_usd !== null) return c.recorded_cost_usd;
  if (mode === "recorded") return null;
  const price = priceOf(table, c.model);
  return price === null ? null : computedCost(c, price);
}
