// archive.md §3: the text of `pixir usage`, a table for people (`--json` is the machine form). Columns
// appear where some row has a value: cache writes split 5m/1h and reasoning only when the source says.
import type { UsageGrouping, UsageReport, UsageRow, UsageTotals } from "./usage.js";

interface Column {
  head: string;
  cell: (r: UsageTotals & { key?: string }) => string;
  left?: boolean;
}

const count = (n: number | null): string => (n === null ? "–" : n.toLocaleString("en-US"));
const dollars = (r: UsageTotals): string => {
  if (r.cost_usd === null) return "unknown";
  const text = `$${r.cost_usd.toFixed(2)}`;
  return r.unpriced_calls > 0 ? `${text}*` : text;
};

/** The report as aligned lines, the total last; `--session` rows indented by their depth. */
export function usageText(report: UsageReport, by: UsageGrouping | "member"): string {
  const rows = report.rows;
  const has = (f: (r: UsageRow) => boolean) => rows.some(f);
  const keyHead = by === "member" ? "session" : by;
  const columns: Column[] = [{ head: keyHead, cell: (r) => r.key ?? "", left: true }];
  if (by === "member" || by === "session") columns.push({ head: "kind", cell: (r) => (r as UsageRow).kind ?? "", left: true });
  columns.push({ head: "calls", cell: (r) => count(r.calls) }, { head: "input", cell: (r) => count(r.input) }, { head: "output", cell: (r) => count(r.output) });
  columns.push({ head: "cache read", cell: (r) => count(r.cache_read) });
  if (has((r) => r.cache_write_5m !== null || r.cache_write_1h !== null)) {
    columns.push({ head: "cache write 5m", cell: (r) => count(r.cache_write_5m) }, { head: "cache write 1h", cell: (r) => count(r.cache_write_1h) });
    if (has((r) => r.cache_write !== null && r.cache_write !== (r.cache_write_5m ?? 0) + (r.cache_write_1h ?? 0))) columns.push({ head: "cache write", cell: (r) => count(r.cache_write) });
  } else columns.push({ head: "cache write", cell: (r) => count(r.cache_write) });
  if (has((r) => r.reasoning !== null)) columns.push({ head: "reasoning", cell: (r) => count(r.reasoning) });
  columns.push({ head: "total", cell: (r) => count(r.total) }, { head: "cost (USD)", cell: dollars });

  const body = rows.map((r) => columns.map((c, i) => (i === 0 && r.depth ? "  ".repeat(r.depth) : "") + c.cell(r)));
  const totalRow = columns.map((c, i) => (i === 0 ? "total" : i === 1 && columns[1]!.head === "kind" ? "" : c.cell(report.total)));
  const table = [columns.map((c) => c.head), ...body, totalRow];
  const widths = columns.map((_, i) => Math.max(...table.map((line) => line[i]!.length)));
  const render = (line: string[]) => line.map((cell, i) => (columns[i]!.left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd();
  const rule = widths.map((w) => "─".repeat(w)).join("  ");
  const lines = [render(table[0]!), rule, ...body.map(render), rule, render(totalRow)];
  if (report.total.unpriced_calls > 0) {
    const n = report.total.unpriced_calls;
    lines.push(`* ${n === 1 ? "1 call of a model without a price is" : `${n} calls of models without a price are`} counted in the tokens, not in the cost ("unknown" when a row has no priced call); price them with --prices FILE`);
  }
  return `${lines.join("\n")}\n`;
}
