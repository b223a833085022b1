// The page's script (view.md §1.1): reads the index and the Log blocks the export wrote into the page,
// and shows one Log's History at a time, with the family tree beside it, search and filters. Built into
// the page by scripts/page.mjs; it loads nothing and needs no server (works from file://).
import type { PageLog } from "../page-index.js";
import { buildCards, cardNode, searchText, type Card, type CardContext, type FoldGroup } from "./cards.js";
import { FamilyData, type ShownEvent } from "./data.js";
import { el, lazyDetails } from "./dom.js";
import { localTime, logTitle } from "./people.js";
import { Sidebar } from "./sidebar.js";

/**
 * Cards put in the page at once: about a screenful, counted rather than measured (asking the list's
 * height lays the page out before it is first drawn, ~40 ms of a 10,000-Event page's start). The rest
 * follow in slices between frames (view.md §1.3), the first of them after the page is first drawn.
 */
const FIRST_CARDS = 12;
const SLICE_MS = 12;
/** The slices start after the first frame, or after this long where no frame comes (a hidden tab). */
const NO_FRAME_MS = 100;

const data = new FamilyData();
const logs = data.logs;

const header = el("header", { class: "session-header" });
const search = el("input", { type: "search", placeholder: "Search this History (every word must match)", "aria-label": "Search", class: "search" });
const filter = (name: string, text: string) => el("label", { class: "filter" }, el("input", { type: "checkbox", name }), ` ${text}`);
const filters = el(
  "div",
  { class: "filters" },
  filter("messages", "messages only"),
  filter("tool-output", "hide tool output"),
  filter("reasoning", "hide reasoning"),
  // archive.md §4: provenance, usage and empty records are not cards unless asked for.
  filter("records", "all records"),
);
const count = el("output", { class: "match-count", "aria-live": "polite" });
const toolbar = el("div", { class: "toolbar", role: "search" }, search, filters, count);
const list = el("div", { class: "cards", role: "feed", "aria-label": "Events" });
const main = el("main", { class: "main" }, header, toolbar, list);
const sidebar = new Sidebar(logs, data.index.named, (i) => show(i), data.index.home);

let current = -1;
let cards: Card[] = [];
let rendered = 0;
let generation = 0;
let ctx: CardContext;
/** The folded groups opened by the reader. */
const openGroups = new Set<FoldGroup>();

function logButton(i: number): HTMLElement {
  const button = el("button", { type: "button", class: "log-link", "data-log": String(i), title: logs[i]!.id }, logTitle(logs[i]!));
  button.addEventListener("click", () => show(i));
  return button;
}

// ---------------------------------------------------------------------------------------------------
// Header (view.md §1.1 item 1).

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const USAGE_FIELDS: Array<[string, string[]]> = [
  ["input", ["input_tokens", "input", "prompt_tokens"]],
  ["output", ["output_tokens", "output", "completion_tokens"]],
  ["cache read", ["cache_read", "cache_read_input_tokens", "cached_input_tokens"]],
  ["cache write", ["cache_write", "cache_creation_input_tokens"]],
  ["total", ["total_tokens", "total"]],
];

function relationText(log: PageLog): Array<Node | string> {
  if (log.parent === null) return [log.relation === "fork" ? "fork (its parent is not in this page)" : "root of the family"];
  if (log.relation === "fork") return ["fork of ", logButton(log.parent), ` at seq ${log.forked_to_seq} (${log.strategy ?? "fork"}, ${log.replay_event_count} inherited)`];
  const s = log.subagent;
  return ["subagent of ", logButton(log.parent), s === null ? "" : ` · ${[s.agent, s.status].filter(Boolean).join(" · ")}${s.task ? ` — ${s.task}` : ""}`];
}

/** The legend of dimmed cards, when the History has any (before the page is read: when the opening says so). */
function dimmedLegend(): HTMLElement[] {
  if (!cards.some((c) => c.dimmed) && data.compactedBeyond(current) < 0) return [];
  return [el("p", { class: "legend" }, el("span", { class: "legend-dimmed" }, "dimmed cards"), " were compacted away: the model no longer sees them")];
}

/** The header; before the page is read (history null), only what the index says: the title and relation. */
function renderHeader(log: PageLog, history: ShownEvent[] | null): void {
  document.title = `${logTitle(log)} · pixir`;
  if (history === null) {
    // The same lines as the whole header, so nothing moves when it comes.
    header.replaceChildren(
      el("h1", { title: log.id }, logTitle(log)),
      el("p", { class: "subline" }, ...(log.agent === null ? [] : [el("span", { class: "agent" }, log.agent), " · "]), ...relationText(log)),
      ...dimmedLegend(),
      lazyDetails("session-details", ["session details"], false, () => el("p", null, "The details follow once the page is read.")),
    );
    return;
  }
  const counts = new Map<string, number>();
  const models = new Set<string>();
  const usage = new Map<string, number[]>();
  for (const { event: e } of history) {
    counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    if (typeof e.data.model === "string" && e.data.model !== "") models.add(e.data.model);
    if (e.type === "provider_usage") {
      const model = typeof e.data.model === "string" ? e.data.model : "unknown model";
      const totals = usage.get(model) ?? USAGE_FIELDS.map(() => 0);
      const values = USAGE_FIELDS.map(([, keys]) => num(keys.map((key) => e.data[key]).find((v) => typeof v === "number")));
      // A usage record without a total counts its input and output.
      if (values[4] === 0) values[4] = values[0]! + values[1]! + values[2]! + values[3]!;
      values.forEach((n, k) => (totals[k]! += n));
      usage.set(model, totals);
    }
  }
  const first = history[0]?.event.ts ?? "–";
  const last = history.at(-1)?.event.ts ?? "–";
  const row = (term: string, ...value: Array<Node | string>) => [el("dt", null, term), el("dd", null, ...value)];
  const tokens = [...usage.values()].reduce((n, totals) => n + totals[4]!, 0);
  const dot = () => el("span", { class: "dot" }, " · ");
  // archive.md §4: the title heads the page; one line says who, where, when; the rest is folded.
  header.replaceChildren(
    el("h1", { title: log.id }, logTitle(log)),
    el(
      "p",
      { class: "subline" },
      ...(log.agent === null ? [] : [el("span", { class: "agent" }, log.agent), dot()]),
      localTime(first, true),
      " → ",
      localTime(last, true),
      dot(),
      ...relationText(log),
      ...(models.size === 0 ? [] : [dot(), [...models].sort().join(", ")]),
      ...(tokens === 0 ? [] : [dot(), `${tokens.toLocaleString("en-US")} tokens`]),
    ),
    ...dimmedLegend(),
    lazyDetails("session-details", ["session details"], false, () =>
      el(
        "dl",
        { class: "facts" },
        ...row("session", el("code", null, log.id)),
        ...row("workspace", data.index.workspace),
        ...row("events", `${history.length}: `, ...[...counts].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, n]) => el("span", { class: "chip" }, `${t} ${n}`))),
        ...(usage.size === 0
          ? []
          : row(
              "usage",
              el(
                "table",
                { class: "usage" },
                el("thead", null, el("tr", null, el("th", null, "model"), ...USAGE_FIELDS.map(([name]) => el("th", null, name)))),
                el("tbody", null, ...[...usage].map(([model, totals]) => el("tr", null, el("td", null, model), ...totals.map((n) => el("td", null, n.toLocaleString("en-US")))))),
              ),
            )),
      ),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------
// Search and filters (view.md §1.1 item 4).

function words(): string[] {
  return search.value.toLowerCase().split(/\s+/).filter((w) => w !== "");
}

const checked = (name: string) => (filters.querySelector(`input[name="${name}"]`) as HTMLInputElement).checked;

function visible(card: Card, query: string[], messagesOnly: boolean, hideReasoning: boolean, hideOutput: boolean, allRecords: boolean): boolean {
  if (card.kind === "marker") return query.length === 0 && !messagesOnly;
  if (card.kind === "record" && !allRecords) return false;
  // A folded group opens on a click; a search looks inside it.
  if (card.group !== undefined && !openGroups.has(card.group) && query.length === 0) return false;
  if (messagesOnly && card.kind !== "message") return false;
  if (hideReasoning && card.kind === "reasoning") return false;
  if (hideOutput && card.kind === "result") return false;
  if (query.length === 0) return true;
  const text = searchText(card);
  return query.every((w) => text.includes(w));
}

function applyFilters(): void {
  const query = words();
  const messagesOnly = checked("messages");
  const hideReasoning = checked("reasoning");
  const hideOutput = checked("tool-output");
  const allRecords = checked("records");
  list.classList.toggle("hide-tool-output", hideOutput);
  let shown = 0;
  let total = 0;
  for (const card of cards) {
    const show = visible(card, query, messagesOnly, hideReasoning, hideOutput, allRecords);
    if (card.kind !== "marker" && (card.kind !== "record" || allRecords)) {
      total++;
      if (show) shown++;
    }
    if (card.node !== undefined) card.node.hidden = !show;
  }
  const unfiltered = query.length === 0 && !messagesOnly && !hideReasoning && !hideOutput && !allRecords;
  // Before the page is read, the count of the whole History is not known.
  count.value = !data.ready ? "reading the page…" : unfiltered ? `${total} cards` : `${shown} of ${total} cards match`;
}

let searchTimer: ReturnType<typeof setTimeout> | undefined;
search.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(applyFilters, 80);
});
filters.addEventListener("change", applyFilters);

// ---------------------------------------------------------------------------------------------------
// Showing a Log: the first cards at once, the rest in slices, so a long History opens at once.

/** Put cards in the page up to `end`, or until `shownLimit` of them are visible. */
function renderUpTo(end: number, shownLimit = Infinity): void {
  if (end <= rendered) return;
  const query = words();
  const flags = [checked("messages"), checked("reasoning"), checked("tool-output"), checked("records")] as const;
  const fragment = document.createDocumentFragment();
  let shown = 0;
  for (; rendered < end && shown < shownLimit; rendered++) {
    const card = cards[rendered]!;
    const node = cardNode(ctx, card);
    node.hidden = !visible(card, query, ...flags);
    if (!node.hidden) shown++;
    fragment.append(node);
  }
  list.append(fragment);
}

/** The first screenful of cards a reader sees (hidden records and the folded prefix do not count), and at least `atLeast` cards. */
function renderFirst(atLeast = 0): void {
  renderUpTo(cards.length, FIRST_CARDS);
  renderUpTo(Math.min(atLeast, cards.length));
}

/** The rest of the cards, once the first are drawn. */
function pumpAfterFirstFrame(gen: number): void {
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    pump(gen);
  };
  requestAnimationFrame(() => setTimeout(start, 0));
  setTimeout(start, NO_FRAME_MS);
}

function pump(gen: number): void {
  if (gen !== generation) return;
  const start = performance.now();
  while (rendered < cards.length && performance.now() - start < SLICE_MS) renderUpTo(Math.min(cards.length, rendered + 25));
  if (rendered < cards.length) setTimeout(() => pump(gen), 0);
  else list.setAttribute("aria-busy", "false");
}

/** What the reader asked for while the page was still being read: shown once it is. */
let wanted: { log: number; seq: number | null } | null = null;

function show(i: number, seq: number | null = null, atLeast = 0): void {
  if (!data.ready) {
    wanted = { log: i, seq };
    return;
  }
  if (i !== current) {
    current = i;
    const log = logs[i]!;
    ctx = { data, log, logButton, onFold };
    openGroups.clear();
    sidebar.select(i);
    cards = buildCards(data, i);
    renderHeader(log, data.history(i));
    rendered = 0;
    generation++;
    list.replaceChildren();
    list.setAttribute("aria-busy", "true");
    renderFirst(atLeast);
    applyFilters();
    pumpAfterFirstFrame(generation);
    const hash = `#${encodeURIComponent(log.id)}`;
    if (seq === null && decodeURIComponent(location.hash) !== `#${log.id}`) replaceHash(hash);
  }
  if (seq !== null) reveal(seq);
}

/**
 * view.md §1.3: the named Log's first cards from the opening, while the browser reads the rest of the
 * page. They end before the first tool call whose result is not in the opening, and a marker at their
 * end is left out (its place may be further on); the page is drawn again once it is read.
 */
function showOpening(): void {
  const i = data.namedIndex;
  const log = logs[i]!;
  current = i;
  ctx = { data, log, logButton, onFold };
  sidebar.select(i);
  const all = buildCards(data, i);
  let end = all.findIndex((c) => c.kind === "tool" && c.result === undefined);
  if (end === -1) end = all.length;
  while (end > 0 && all[end - 1]!.kind === "marker") end--;
  cards = all.slice(0, end);
  renderHeader(log, null);
  rendered = 0;
  list.replaceChildren();
  list.setAttribute("aria-busy", "true");
  renderFirst();
  applyFilters();
}

/**
 * The page is read: the Log the reader wants, drawn whole, keeping as many cards as the opening showed
 * and the folds the reader opened in it.
 */
function pageRead(): void {
  const shown = rendered;
  const opened = current === -1 ? [] : [...openGroups];
  const previewed = current;
  data.complete();
  current = -1;
  const target = wanted ?? fromHash();
  const log = target?.log ?? Math.max(0, data.namedIndex);
  show(log, target?.seq ?? null, shown);
  if (log === previewed) opened.forEach(openFold);
}

function onFold(group: FoldGroup, open: boolean): void {
  if (open) {
    openGroups.add(group);
    let last = -1;
    cards.forEach((c, k) => c.group === group && (last = k));
    renderUpTo(last + 1);
  } else openGroups.delete(group);
  applyFilters();
}

function openFold(group: FoldGroup): void {
  const k = cards.findIndex((c) => c.marker?.fold === group);
  if (k !== -1) renderUpTo(k + 1);
  const button = k === -1 ? null : cards[k]!.node?.querySelector(".fold");
  if (button != null && button.getAttribute("aria-expanded") !== "true") (button as HTMLElement).click();
  else onFold(group, true);
}

function replaceHash(hash: string): void {
  try {
    history.replaceState(null, "", hash);
  } catch {
    /* some file:// contexts refuse; the page works without it */
  }
}

/** Scroll to the card of `seq` (a tool result lives in its call's card). */
function reveal(seq: number): void {
  const id = `${logs[current]!.id}/${seq}`;
  const k = cards.findIndex((c) => c.shown?.seq === seq || c.result?.seq === seq);
  if (k === -1) return;
  // A link to a record or an inherited card opens what hides it.
  const card = cards[k]!;
  if (card.kind === "record") (filters.querySelector('input[name="records"]') as HTMLInputElement).checked = true;
  if (card.group !== undefined) openFold(card.group);
  applyFilters();
  renderUpTo(k + 1);
  const target = document.getElementById(id);
  target?.scrollIntoView({ block: "start" });
  target?.classList.add("target");
}

/** `#<session_id>` or `#<session_id>/<seq>`: session ids contain no `/` (the session-id grammar). */
function fromHash(): { log: number; seq: number | null } | null {
  let hash: string;
  try {
    hash = decodeURIComponent(location.hash.slice(1));
  } catch {
    return null;
  }
  const slash = hash.lastIndexOf("/");
  const id = slash === -1 ? hash : hash.slice(0, slash);
  const seq = slash === -1 ? null : Number(hash.slice(slash + 1));
  const log = data.indexOf(id);
  return log === -1 ? null : { log, seq: seq !== null && Number.isInteger(seq) ? seq : null };
}

window.addEventListener("hashchange", () => {
  const target = fromHash();
  if (target !== null) show(target.log, target.seq);
});

const app = document.getElementById("app")!;
app.replaceChildren(sidebar.node, main);
const initial = fromHash();
if (data.ready) show(initial?.log ?? Math.max(0, data.namedIndex), initial?.seq ?? null);
else {
  const opensNamed = initial === null || (initial.log === data.namedIndex && initial.seq === null);
  if (opensNamed && data.opening !== null && data.opening.events.length > 0) showOpening();
  document.addEventListener("DOMContentLoaded", pageRead, { once: true });
}
