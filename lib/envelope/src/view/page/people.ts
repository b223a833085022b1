// archive.md §4 "titles and times for people": a Log is named by its title (its id on hover), a time is
// shown in the reader's own time zone and language (the page's bytes stay the same: the browser formats
// it), a span as "4 min" or "2 h 5 min".
import type { PageLog } from "../page-index.js";
import { el } from "./dom.js";

const DATE_TIME = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
const TIME = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });

/** A `<time>` showing `iso` in local time (the full ISO time on hover); `withDate` false shows only the clock. */
export function localTime(iso: string, withDate = false): HTMLElement {
  const t = Date.parse(iso);
  const text = Number.isNaN(t) ? iso : (withDate ? DATE_TIME : TIME).format(t);
  return el("time", { datetime: iso, title: iso }, text);
}

/** A duration as a person says it: "45 s", "4 min", "2 h 5 min", "3 d 4 h". */
export function spanText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h${min % 60 === 0 ? "" : ` ${min % 60} min`}`;
  return `${Math.floor(h / 24)} d${h % 24 === 0 ? "" : ` ${h % 24} h`}`;
}

/**
 * What a Log is called in the page: a subagent by the task its parent gave it (its first prompt is the
 * whole brief), any other Log by its title; else its id.
 */
export const logTitle = (log: PageLog): string => log.subagent?.task ?? log.title ?? log.id;
