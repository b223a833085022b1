// `--since D` and `--until D` of pixir search: a date (`2026-02-23`, local time, the whole day) or a date
// and time (`2026-02-23T11:40`, `…Z` or with an offset). Bounds become ISO instants in UTC, which Event
// `ts` values compare with as strings.
import { PixirError } from "../../event/errors.js";

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

function bad(flag: string): PixirError {
  return new PixirError("invalid_args", `--${flag} needs a date (YYYY-MM-DD) or a date and time (YYYY-MM-DDTHH:MM[:SS][Z])`, { field: flag, reason: "invalid_date" });
}

/** Whether the date part of `YYYY-MM-DD…` is a day of the calendar (not 02-30, 13-01). */
function calendarDay(value: string): boolean {
  const [y, m, d] = value.slice(0, 10).split("-").map(Number) as [number, number, number];
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** The instant `value` names; for a bare date, its first moment (`end`: the first moment of the next day), local time. */
export function dateBound(value: string, flag: string, end: boolean): string {
  const d = DATE_ONLY.exec(value);
  let t: Date;
  if (d !== null) {
    t = new Date(Number(d[1]), Number(d[2]) - 1, Number(d[3]));
    // Date rolls 2026-13-45 over into 2027: a day that is not on the calendar is refused.
    if (t.getFullYear() !== Number(d[1]) || t.getMonth() !== Number(d[2]) - 1 || t.getDate() !== Number(d[3])) throw bad(flag);
    if (end) t.setDate(t.getDate() + 1);
  } else if (DATE_TIME.test(value) && calendarDay(value)) t = new Date(value.replace(" ", "T"));
  else throw bad(flag);
  if (Number.isNaN(t.getTime())) throw bad(flag);
  return t.toISOString();
}
