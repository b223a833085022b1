// view.md §1.1 item 3: the History as cards. A tool call and its result share one card; checkpoints and
// branch summaries have cards of their own; what a checkpoint replaces is dimmed; the fork points of
// child Logs are marked where they happened. A card's nodes are built only when it is first shown.
import { imageResources, inlineImages, isFailedResult, messageText, oneLine, reasoningText, resourceKey, toolCallSummary, toolResultText } from "../event-text.js";
import type { PageLog } from "../page-index.js";
import type { FamilyData, LogEvent, ShownEvent } from "./data.js";
import { el, lazyDetails, lineCount, pre } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

export type CardKind = "message" | "reasoning" | "tool" | "result" | "summary" | "event" | "marker";

export interface Card {
  kind: CardKind;
  /** The Event (a tool card's call). Absent for markers. */
  shown?: ShownEvent;
  /** A tool card's result. */
  result?: ShownEvent;
  dimmed: boolean;
  /** A marker's text and the Log it leads to. */
  marker?: { text: string; log: number | null; className: string };
  node?: HTMLElement;
  search?: string;
}

/** Output of more lines than this starts collapsed (view.md §1.1). */
export const OPEN_LINES = 20;
const OPEN_CHARS = 4000;
/** The data of a small card starts open when it is this short. */
const OPEN_DATA_LINES = 8;

const MESSAGE_TYPES = new Set(["user_message", "assistant_message"]);

/** The cards of Log `i`'s History, in seq order, with fork and subagent markers. */
export function buildCards(data: FamilyData, i: number): Card[] {
  const history = data.history(i);
  const log = data.logs[i]!;
  // A result joins the first call before it with its call_id that has no result yet.
  const open = new Map<string, Card>();
  const cards: Card[] = [];
  for (const shown of history) {
    const e = shown.event;
    if (e.type === "provider_usage") continue;
    const callId = typeof e.data.call_id === "string" ? e.data.call_id : null;
    if (e.type === "tool_result" && callId !== null && open.has(callId)) {
      open.get(callId)!.result = shown;
      open.delete(callId);
      continue;
    }
    const card: Card = { kind: kindOf(e), shown, dimmed: false };
    if (e.type === "tool_call" && callId !== null && !open.has(callId)) open.set(callId, card);
    cards.push(card);
  }
  dimReplaced(cards);
  return withMarkers(data, i, log, cards);
}

function kindOf(e: LogEvent): CardKind {
  if (MESSAGE_TYPES.has(e.type)) return "message";
  if (e.type === "reasoning") return "reasoning";
  if (e.type === "tool_call") return "tool";
  if (e.type === "tool_result") return "result";
  if (e.type === "branch_summary" || e.type === "history_compaction") return "summary";
  return "event";
}

/** A checkpoint replaces, in the model's view, every earlier Event through its `range.to_seq`. */
function dimReplaced(cards: Card[]): void {
  let through = -1;
  for (let k = cards.length - 1; k >= 0; k--) {
    const shown = cards[k]!.shown!;
    if (shown.seq !== null && shown.seq <= through) cards[k]!.dimmed = true;
    if (shown.event.type === "history_compaction") {
      const to = (shown.event.data.range as Record<string, unknown> | undefined)?.to_seq;
      if (typeof to === "number" && to > through) through = to;
    }
  }
}

function withMarkers(data: FamilyData, i: number, log: PageLog, cards: Card[]): Card[] {
  const after = new Map<number, Card[]>();
  const place = (position: number, card: Card) => {
    const list = after.get(position) ?? [];
    list.push(card);
    after.set(position, list);
  };
  data.logs.forEach((child, c) => {
    if (child.parent !== i) return;
    if (child.relation === "fork") {
      const cut = child.forked_to_seq ?? 0;
      let position = -1;
      cards.forEach((card, k) => {
        const seq = card.shown!.seq;
        if (seq !== null && seq <= cut) position = k;
      });
      place(position, { kind: "marker", dimmed: false, marker: { text: `forked here at seq ${cut} → `, log: c, className: "fork-marker" } });
    } else if (child.relation === "subagent") {
      let position = cards.length - 1;
      cards.forEach((card, k) => {
        const e = card.shown!.event;
        if (e.type === "subagent_event" && e.data.child_session_id === child.id) position = k;
      });
      place(position, { kind: "marker", dimmed: false, marker: { text: "subagent → ", log: c, className: "subagent-marker" } });
    }
  });
  const firstInherited = cards.findIndex((card) => card.shown!.inherited);
  let lastInherited = -1;
  cards.forEach((card, k) => card.shown!.inherited && (lastInherited = k));
  const out: Card[] = [];
  for (const card of after.get(-1) ?? []) out.push(card);
  cards.forEach((card, k) => {
    if (k === firstInherited && log.parent !== null) {
      out.push({ kind: "marker", dimmed: false, marker: { text: `inherited from `, log: log.parent, className: "inherited-marker" } });
    }
    out.push(card);
    if (k === lastInherited) {
      out.push({ kind: "marker", dimmed: false, marker: { text: `${log.id} continues from here`, log: null, className: "inherited-marker" } });
    }
    for (const marker of after.get(k) ?? []) out.push(marker);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Nodes.

export interface CardContext {
  data: FamilyData;
  /** The Log whose History is shown. */
  log: PageLog;
  /** A button that shows Log `i`. */
  logButton(i: number): HTMLElement;
}

const anchorId = (log: PageLog, seq: number | null): string | null => (seq === null ? null : `${log.id}/${seq}`);

function head(ctx: CardContext, shown: ShownEvent, label: string, ...extra: Array<Node | string | null>): HTMLElement {
  const id = anchorId(ctx.log, shown.seq);
  const owner = ctx.data.logs[shown.owner]!;
  return el(
    "header",
    { class: "card-head" },
    el("span", { class: "kind" }, label),
    ...extra,
    el("span", { class: "spacer" }),
    shown.inherited ? el("span", { class: "from", title: `seq ${shown.ownerSeq} of ${owner.id}` }, `from ${owner.id}`) : null,
    id === null ? el("span", { class: "seq" }, "seq –") : el("a", { class: "seq", href: `#${encodeURIComponent(ctx.log.id)}/${shown.seq}` }, `#${shown.seq}`),
    el("time", { datetime: shown.event.ts }, shown.event.ts),
  );
}

function images(ctx: CardContext, data: Record<string, unknown>): Node | null {
  const sources: Array<{ src: string; alt: string }> = inlineImages(data).map((img) => ({ src: `data:${img.mime};base64,${img.base64}`, alt: "image" }));
  for (const d of imageResources(data)) {
    const src = ctx.data.resource(resourceKey(d));
    if (src !== undefined) sources.push({ src, alt: String(d.resource_id) });
  }
  if (sources.length === 0) return null;
  return el("div", { class: "images" }, ...sources.map((s) => el("img", { src: s.src, alt: s.alt, loading: "lazy" })));
}

function messageNode(ctx: CardContext, shown: ShownEvent): HTMLElement {
  const d = shown.event.data;
  const role = shown.event.type === "user_message" ? "user" : "assistant";
  const metadata = d.metadata as Record<string, unknown> | undefined;
  const tags = [
    d.meta === true ? "meta" : null,
    d.origin === "extension" ? "extension" : null,
    metadata?.partial === true ? "partial" : null,
    typeof d.stop_reason === "string" && d.stop_reason !== "stop" && d.stop_reason !== "end_turn" ? d.stop_reason : null,
  ].filter((t): t is string => t !== null);
  const text = messageText(d);
  const error = typeof d.error_message === "string" ? d.error_message : d.api_error === true ? "API error" : null;
  return el(
    "article",
    { class: `card message ${role}${text === "" ? " empty" : ""}` },
    head(ctx, shown, role, ...tags.map((t) => el("span", { class: "tag" }, t))),
    el("div", { class: "body markdown" }, text === "" ? el("span", { class: "muted" }, "(no text)") : renderMarkdown(text)),
    error === null ? null : el("div", { class: "error-line" }, error),
    images(ctx, d),
  );
}

function reasoningNode(ctx: CardContext, shown: ShownEvent): HTMLElement {
  const text = reasoningText(shown.event.data);
  return el(
    "article",
    { class: "card reasoning" },
    head(ctx, shown, "reasoning"),
    text === ""
      ? el("div", { class: "body muted" }, "(no readable text: redacted or encrypted)")
      : lazyDetails("reasoning-text", [el("span", { class: "preview" }, oneLine(text, 140))], false, () => el("div", { class: "markdown" }, renderMarkdown(text))),
  );
}

function outputNode(ctx: CardContext, result: ShownEvent, standalone: boolean): HTMLElement {
  const d = result.event.data;
  const text = toolResultText(d);
  const lines = lineCount(text);
  const failed = isFailedResult(d);
  const label = [el("span", { class: failed ? "status failed" : "status ok" }, failed ? "failed" : "ok"), ` output · ${lines} line${lines === 1 ? "" : "s"}`];
  const section = el(
    "section",
    { class: `tool-output${failed ? " failed" : ""}` },
    standalone ? null : el("div", { class: "result-head" }, el("a", { class: "seq", href: `#${encodeURIComponent(ctx.log.id)}/${result.seq}` }, `#${result.seq}`), el("time", { datetime: result.event.ts }, result.event.ts)),
    lazyDetails("output", label, lines <= OPEN_LINES && text.length <= OPEN_CHARS, () => pre(text, "output-text")),
    images(ctx, d),
  );
  const id = anchorId(ctx.log, result.seq);
  if (!standalone && id !== null) section.id = id;
  return section;
}

function toolNode(ctx: CardContext, card: Card): HTMLElement {
  const d = card.shown!.event.data;
  const name = typeof d.name === "string" ? d.name : "tool";
  const summary = toolCallSummary(d.args);
  return el(
    "article",
    { class: "card tool" },
    head(ctx, card.shown!, "tool", el("span", { class: "tool-name" }, name), summary === "" ? null : el("code", { class: "tool-summary" }, summary), card.result === undefined ? el("span", { class: "tag" }, "no result") : null),
    lazyDetails("args", ["arguments"], false, () => pre(JSON.stringify(d.args ?? null, null, 2), "json")),
    card.result === undefined ? null : outputNode(ctx, card.result, false),
  );
}

function resultNode(ctx: CardContext, shown: ShownEvent): HTMLElement {
  const d = shown.event.data;
  return el(
    "article",
    { class: "card result" },
    head(ctx, shown, "tool result", typeof d.tool_name === "string" ? el("span", { class: "tool-name" }, d.tool_name) : null, typeof d.call_id === "string" ? el("code", { class: "tool-summary" }, d.call_id) : null),
    outputNode(ctx, shown, true),
  );
}

function rangeText(range: unknown): string | null {
  if (typeof range !== "object" || range === null) return null;
  const r = range as Record<string, unknown>;
  return `seq ${r.from_seq ?? "…"}–${r.to_seq ?? "…"}`;
}

function summaryNode(ctx: CardContext, shown: ShownEvent): HTMLElement {
  const d = shown.event.data;
  const checkpoint = shown.event.type === "history_compaction";
  const range = rangeText(d.range);
  return el(
    "article",
    { class: `card summary ${checkpoint ? "checkpoint" : "branch-summary"}` },
    head(ctx, shown, checkpoint ? "checkpoint" : "branch summary", range === null ? null : el("span", { class: "tag" }, range), typeof d.strategy === "string" ? el("span", { class: "tag" }, d.strategy) : null),
    el("div", { class: "body markdown" }, renderMarkdown(typeof d.summary === "string" ? d.summary : "")),
  );
}

/** What a small card says in its title, by type. */
function eventLine(ctx: CardContext, e: LogEvent): Array<Node | string> {
  const d = e.data;
  const str = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
  const linkTo = (id: unknown): Node | string => {
    const i = typeof id === "string" ? ctx.data.indexOf(id) : -1;
    return i === -1 ? str(id) : ctx.logButton(i);
  };
  switch (e.type) {
    case "session_fork":
      return ["forked from ", linkTo(d.parent_session_id), ` at seq ${str(d.forked_to_seq)} (${str(d.strategy)}, ${str(d.replay_event_count)} inherited)`];
    case "subagent_event":
      return [[str(d.event), str(d.agent), str(d.status)].filter((s) => s !== "").join(" · "), d.task ? ` — ${oneLine(str(d.task), 100)}` : "", ...(d.child_session_id ? [" ", linkTo(d.child_session_id)] : [])];
    case "workflow_event":
      return [[str(d.event), str(d.entry_type)].filter((s) => s !== "").join(" · ")];
    case "turn_failed":
      return [oneLine(str(d.error ?? d.reason ?? d.message), 140)];
    case "permission_decision":
      return [[str(d.decision), str(d.call_id)].filter((s) => s !== "").join(" · ")];
    case "skill_activation":
      return [oneLine(str(d.skill ?? d.name), 100)];
    default:
      return [];
  }
}

function eventNode(ctx: CardContext, shown: ShownEvent): HTMLElement {
  const e = shown.event;
  const json = JSON.stringify(e.data, null, 2);
  const lines = lineCount(json);
  return el(
    "article",
    { class: `card event ${e.type.replace(/[^a-z_]/g, "")}` },
    head(ctx, shown, e.type.replace(/_/g, " "), el("span", { class: "event-line" }, ...eventLine(ctx, e))),
    // A fork header's line says what matters; its data (digests, limitations) stays folded.
    lazyDetails("json", ["data"], e.type !== "session_fork" && lines <= OPEN_DATA_LINES && json.length <= OPEN_CHARS, () => pre(json, "json")),
  );
}

function markerNode(ctx: CardContext, card: Card): HTMLElement {
  const m = card.marker!;
  return el("div", { class: `marker ${m.className}`, role: "note" }, m.text, m.log === null ? null : ctx.logButton(m.log));
}

/** The card's nodes, built once. */
export function cardNode(ctx: CardContext, card: Card): HTMLElement {
  if (card.node !== undefined) return card.node;
  const shown = card.shown;
  let node: HTMLElement;
  if (card.kind === "marker") node = markerNode(ctx, card);
  else if (card.kind === "message") node = messageNode(ctx, shown!);
  else if (card.kind === "reasoning") node = reasoningNode(ctx, shown!);
  else if (card.kind === "tool") node = toolNode(ctx, card);
  else if (card.kind === "result") node = resultNode(ctx, shown!);
  else if (card.kind === "summary") node = summaryNode(ctx, shown!);
  else node = eventNode(ctx, shown!);
  if (shown !== undefined) {
    const id = anchorId(ctx.log, shown.seq);
    if (id !== null) node.id = id;
    node.dataset.type = shown.event.type;
    if (shown.inherited) node.classList.add("inherited");
  }
  if (card.dimmed) node.classList.add("dimmed");
  card.node = node;
  return node;
}

/** Lower-case text a search looks in: everything the card can show, collapsed parts included. */
export function searchText(card: Card): string {
  if (card.search !== undefined) return card.search;
  const parts: string[] = [];
  const e = card.shown?.event;
  if (e !== undefined) {
    const d = e.data;
    parts.push(e.type.replace(/_/g, " "));
    if (card.kind === "message") parts.push(messageText(d));
    else if (card.kind === "reasoning") parts.push(reasoningText(d));
    else if (card.kind === "tool") parts.push(String(d.name ?? ""), JSON.stringify(d.args ?? null));
    else if (card.kind === "summary") parts.push(String(d.summary ?? ""));
    else if (card.kind !== "result") parts.push(JSON.stringify(d));
    if (card.kind === "result") parts.push(toolResultText(d));
    if (card.result !== undefined) parts.push(toolResultText(card.result.event.data));
  }
  card.search = parts.join("\n").toLowerCase();
  return card.search;
}
