// view.md §1.1 item 3 and archive.md §4: the History as cards, as a person reads it. A tool call and its
// result share one card; injected text is a small folded "context" card; provenance and usage records and
// turns with nothing to show are "record" cards, shown only with "all records"; a checkpoint is a divider
// and what it replaced is dimmed; an inherited prefix is one folded block. Fork points of child Logs are
// marked where they happened. A card's nodes are built only when it is first shown.
import { classifyUserText, messageText, type InjectedKind } from "../../event/injected.js";
import { isRecordOnly } from "../../event/provenance.js";
import { imageResources, inlineImages, reasoningText, resourceKey, toolResultText } from "../event-text.js";
import type { PageLog } from "../page-index.js";
import type { FamilyData, LogEvent, ShownEvent } from "./data.js";
import { el, lazyDetails, pre } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { localTime, logTitle, spanText } from "./people.js";
import { outputBlock, toolParts } from "./tools.js";

/** Folded groups: an inherited prefix; injected context before the first prompt. */
export type FoldGroup = "inherited" | "preamble";

export type CardKind = "message" | "context" | "reasoning" | "tool" | "result" | "summary" | "event" | "record" | "marker";

export interface Card {
  kind: CardKind;
  /** The Event (a tool card's call). Absent for markers. */
  shown?: ShownEvent;
  /** A tool card's result. */
  result?: ShownEvent;
  dimmed: boolean;
  /** A marker's text and the Log it leads to; `fold` makes it the head of a folded group of cards. */
  marker?: { text: string; log: number | null; className: string; fold?: FoldGroup };
  /** The folded group the card belongs to: hidden until its head is opened. */
  group?: FoldGroup;
  /** Time since the card before it, when over a minute. */
  gapMs?: number;
  node?: HTMLElement;
  search?: string;
}

/** The data of a small card starts open when it is this short. */
const OPEN_DATA_LINES = 8;
const GAP_SHOWN_MS = 60_000;

const INJECTED_LABELS: Record<InjectedKind, string> = {
  environment: "environment",
  instructions: "instructions (AGENTS.md)",
  system_reminder: "system reminder",
  task_notification: "task notification",
  command: "command",
  command_output: "command output",
  caveat: "caveat",
  compact_summary: "summary of the compacted conversation",
  context: "injected context",
};

/** The cards of Log `i`'s History, in seq order, with fork, subagent and inherited markers. */
export function buildCards(data: FamilyData, i: number): Card[] {
  const history = data.history(i);
  // A result joins the first call before it with its call_id that has no result yet.
  const open = new Map<string, Card>();
  const cards: Card[] = [];
  for (const shown of history) {
    const e = shown.event;
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
  dimReplaced(cards, data.compactedBeyond(i));
  markGaps(cards);
  return withMarkers(data, i, data.logs[i]!, cards);
}

function kindOf(e: LogEvent): CardKind {
  const d = e.data;
  if (isRecordOnly(e.type, d)) return "record";
  if (e.type === "user_message") {
    const text = messageText(d);
    if (classifyUserText(text, { isMeta: d.meta === true }).injected !== null) return "context";
    return text.trim() === "" && !hasImages(d) ? "record" : "message";
  }
  if (e.type === "assistant_message") return messageText(d).trim() === "" && !hasImages(d) && typeof d.error_message !== "string" && d.api_error !== true ? "record" : "message";
  if (e.type === "reasoning") return reasoningText(d).trim() === "" ? "record" : "reasoning";
  if (e.type === "tool_call") return "tool";
  if (e.type === "tool_result") return "result";
  if (e.type === "branch_summary" || e.type === "history_compaction") return "summary";
  return "event";
}

const hasImages = (d: Record<string, unknown>): boolean => inlineImages(d).length > 0 || imageResources(d).length > 0;

/**
 * A checkpoint replaces, in the model's view, every earlier Event through its `range.to_seq`; `beyond`
 * is what checkpoints after these cards replace (page opening).
 */
function dimReplaced(cards: Card[], beyond: number): void {
  let through = beyond;
  for (let k = cards.length - 1; k >= 0; k--) {
    const shown = cards[k]!.shown!;
    if (shown.seq !== null && shown.seq <= through) cards[k]!.dimmed = true;
    if (shown.event.type === "history_compaction") {
      const to = (shown.event.data.range as Record<string, unknown> | undefined)?.to_seq;
      if (typeof to === "number" && to > through) through = to;
    }
  }
}

/** archive.md §4: durations between turns over a minute are shown (on the reading cards, not on records). */
function markGaps(cards: Card[]): void {
  let last: number | null = null;
  for (const card of cards) {
    if (card.kind === "record") continue;
    const t = Date.parse(card.shown!.event.ts);
    if (Number.isNaN(t)) continue;
    if (last !== null && t - last > GAP_SHOWN_MS) card.gapMs = t - last;
    last = t;
  }
}

function withMarkers(data: FamilyData, i: number, log: PageLog, cards: Card[]): Card[] {
  const after = new Map<number, Card[]>();
  const place = (position: number, card: Card) => after.set(position, [...(after.get(position) ?? []), card]);
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
  const inherited = cards.filter((card) => card.shown!.inherited && card.kind !== "record").length;
  const firstInherited = log.parent === null ? -1 : cards.findIndex((card) => card.shown!.inherited);
  if (firstInherited !== -1) for (const card of cards) if (card.shown!.inherited) card.group = "inherited";
  const preamble = firstInherited === -1 ? leadingContext(cards) : [];
  const out: Card[] = [...(after.get(-1) ?? [])];
  cards.forEach((card, k) => {
    if (k === firstInherited) {
      const title = logTitle(data.logs[log.parent!]!);
      out.push({ kind: "marker", dimmed: false, marker: { text: `inherited from ${title} (${inherited} card${inherited === 1 ? "" : "s"})`, log: log.parent, className: "inherited-marker", fold: "inherited" } });
    }
    if (card === preamble[0]) out.push({ kind: "marker", dimmed: false, marker: { text: preambleText(preamble), log: null, className: "preamble-marker", fold: "preamble" } });
    out.push(card);
    out.push(...(after.get(k) ?? []));
  });
  return out;
}

/** Injected context before the first message: folded, so a session opens with its first prompt. */
function leadingContext(cards: Card[]): Card[] {
  const out: Card[] = [];
  for (const card of cards) {
    if (card.kind === "message" || card.kind === "tool" || card.kind === "summary") break;
    if (card.kind === "context") {
      card.group = "preamble";
      out.push(card);
    }
  }
  return out;
}

function preambleText(cards: Card[]): string {
  const kinds = new Set(cards.map((c) => INJECTED_LABELS[injectedKind(c.shown!.event)]));
  return `context given before the first prompt: ${[...kinds].join(", ")}`;
}

const injectedKind = (e: LogEvent): InjectedKind => classifyUserText(messageText(e.data), { isMeta: e.data.meta === true }).injected ?? "context";

// ---------------------------------------------------------------------------------------------------
// Nodes.

export interface CardContext {
  data: FamilyData;
  /** The Log whose History is shown. */
  log: PageLog;
  /** A button that shows Log `i`. */
  logButton(i: number): HTMLElement;
  /** A folded group was opened or closed. */
  onFold(group: FoldGroup, open: boolean): void;
}

const anchorId = (log: PageLog, seq: number | null): string | null => (seq === null ? null : `${log.id}/${seq}`);

function head(ctx: CardContext, card: Card, label: string, ...extra: Array<Node | string | null>): HTMLElement {
  const shown = card.shown!;
  const id = anchorId(ctx.log, shown.seq);
  const owner = ctx.data.logs[shown.owner]!;
  return el(
    "header",
    { class: "card-head" },
    el("span", { class: "kind" }, label),
    ...extra,
    el("span", { class: "spacer" }),
    card.gapMs === undefined ? null : el("span", { class: "gap", title: "time since the card before" }, `+${spanText(card.gapMs)}`),
    id === null ? el("span", { class: "seq" }, "seq –") : el("a", { class: "seq", href: `#${encodeURIComponent(ctx.log.id)}/${shown.seq}`, title: shown.inherited ? `seq ${shown.ownerSeq} of ${owner.id}` : `seq ${shown.seq}` }, `#${shown.seq}`),
    localTime(shown.event.ts),
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

function messageNode(ctx: CardContext, card: Card): HTMLElement {
  const d = card.shown!.event.data;
  const role = card.shown!.event.type === "user_message" ? "user" : "assistant";
  const metadata = d.metadata as Record<string, unknown> | undefined;
  const tags = [
    d.origin === "extension" ? "extension" : null,
    metadata?.partial === true ? "partial" : null,
    typeof d.stop_reason === "string" && !["stop", "end_turn", "tool_use", "toolUse"].includes(d.stop_reason) ? d.stop_reason : null,
  ].filter((t): t is string => t !== null);
  const raw = messageText(d);
  // A command wrapper counts as typed: it shows as the command line it names.
  const text = role === "user" ? (classifyUserText(raw).commandLine ?? raw) : raw;
  const error = typeof d.error_message === "string" ? d.error_message : d.api_error === true ? "API error" : null;
  return el(
    "article",
    { class: `card message ${role}${text === "" ? " empty" : ""}` },
    head(ctx, card, role, ...tags.map((t) => el("span", { class: "tag" }, t))),
    text === "" ? null : el("div", { class: "body markdown" }, renderMarkdown(text)),
    error === null ? null : el("div", { class: "error-line" }, error),
    images(ctx, d),
  );
}

function contextNode(ctx: CardContext, card: Card): HTMLElement {
  const text = messageText(card.shown!.event.data);
  const kind = injectedKind(card.shown!.event);
  return el(
    "article",
    { class: "card context" },
    head(ctx, card, "context", el("span", { class: "context-kind" }, INJECTED_LABELS[kind])),
    lazyDetails("context-text", [`${text.length.toLocaleString("en-US")} characters`], false, () => pre(text, "context-text")),
  );
}

function reasoningNode(ctx: CardContext, card: Card): HTMLElement {
  const text = reasoningText(card.shown!.event.data);
  return el(
    "article",
    { class: "card reasoning" },
    head(ctx, card, "thinking"),
    lazyDetails("reasoning-text", [el("span", { class: "preview" }, text.replace(/\s+/g, " ").trim().slice(0, 140))], false, () => el("div", { class: "markdown" }, renderMarkdown(text))),
  );
}

function toolNode(ctx: CardContext, card: Card): HTMLElement {
  const d = card.shown!.event.data;
  const name = typeof d.name === "string" ? d.name : "tool";
  const result = card.result?.event.data ?? null;
  const parts = toolParts(name, d.args, result, () => subagentLink(ctx, card));
  const node = el(
    "article",
    { class: `card tool tool-${parts.view.kind}` },
    head(ctx, card, "tool", el("span", { class: "tool-name" }, name), ...parts.title, card.result === undefined ? el("span", { class: "tag" }, "no result") : null),
    ...parts.body,
    parts.view.kind === "generic" ? lazyDetails("args", ["arguments"], false, () => pre(JSON.stringify(d.args ?? null, null, 2), "json")) : null,
    card.result === undefined || parts.ownsResult ? null : outputBlock(toolResultText(result!), isFailedShown(card.result), null),
  );
  const resultId = card.result === undefined ? null : anchorId(ctx.log, card.result.seq);
  if (resultId !== null) node.append(el("span", { id: resultId, class: "result-anchor" }));
  return node;
}

const isFailedShown = (result: ShownEvent): boolean => {
  const d = result.event.data;
  return d.ok === false || d.is_error === true || (d.error !== undefined && d.error !== null && d.ok !== true);
};

/** The subagent Log this Task/Agent call started: the child whose task is the call's description. */
function subagentLink(ctx: CardContext, card: Card): HTMLElement | null {
  const args = card.shown!.event.data.args as Record<string, unknown> | undefined;
  const description = typeof args?.description === "string" ? args.description : null;
  if (description === null) return null;
  const owner = card.shown!.owner;
  const child = ctx.data.logs.findIndex((l) => l.parent === owner && l.relation === "subagent" && l.subagent?.task === description);
  return child === -1 ? null : ctx.logButton(child);
}

function resultNode(ctx: CardContext, card: Card): HTMLElement {
  const d = card.shown!.event.data;
  return el(
    "article",
    { class: "card result" },
    head(ctx, card, "tool result", typeof d.tool_name === "string" ? el("span", { class: "tool-name" }, d.tool_name) : null),
    outputBlock(toolResultText(d), isFailedShown(card.shown!), null),
  );
}

function rangeText(range: unknown): string | null {
  if (typeof range !== "object" || range === null) return null;
  const r = range as Record<string, unknown>;
  return `seq ${r.from_seq ?? "…"}–${r.to_seq ?? "…"}`;
}

function summaryNode(ctx: CardContext, card: Card): HTMLElement {
  const d = card.shown!.event.data;
  const summary = typeof d.summary === "string" ? d.summary : "";
  if (card.shown!.event.type === "history_compaction") {
    // archive.md §4: a checkpoint is a labelled divider, its summary folded.
    const range = rangeText(d.range);
    return el(
      "article",
      { class: "card summary checkpoint", role: "separator" },
      head(ctx, card, "compacted here", el("span", { class: "divider-text" }, "the model no longer sees the cards above"), range === null ? null : el("span", { class: "tag" }, range)),
      lazyDetails("checkpoint-summary", ["the summary it sees instead"], false, () => el("div", { class: "markdown" }, renderMarkdown(summary))),
    );
  }
  return el("article", { class: "card summary branch-summary" }, head(ctx, card, "branch summary"), el("div", { class: "body markdown" }, renderMarkdown(summary)));
}

/** What a small card says in its title, by type. */
function eventLine(ctx: CardContext, e: LogEvent): Array<Node | string> {
  const d = e.data;
  const str = (v: unknown) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
  const linkTo = (id: unknown): Node | string => {
    const i = typeof id === "string" ? ctx.data.indexOf(id) : -1;
    return i === -1 ? str(id) : ctx.logButton(i);
  };
  const short = (v: unknown, n: number) => str(v).replace(/\s+/g, " ").trim().slice(0, n);
  switch (e.type) {
    case "session_fork":
      return ["forked from ", linkTo(d.parent_session_id), ` at seq ${str(d.forked_to_seq)} (${str(d.strategy)}, ${str(d.replay_event_count)} inherited)`];
    case "subagent_event":
      return [[str(d.event), str(d.agent), str(d.status)].filter((s) => s !== "").join(" · "), d.task ? ` — ${short(d.task, 100)}` : "", ...(d.child_session_id ? [" ", linkTo(d.child_session_id)] : [])];
    case "workflow_event":
      return [[str(d.event), str(d.record_type ?? d.entry_type), str(d.item_type ?? d.subtype)].filter((s) => s !== "").join(" · ")];
    case "provider_usage":
      return [[str(d.model), `${str(d.input_tokens ?? d.input)} in`, `${str(d.output_tokens ?? d.output)} out`].join(" · ")];
    case "turn_failed":
      return [short(d.error ?? d.reason ?? d.message, 140)];
    case "permission_decision":
      return [[str(d.decision), str(d.call_id)].filter((s) => s !== "").join(" · ")];
    case "skill_activation":
      return [short(d.skill ?? d.name, 100)];
    default:
      return [];
  }
}

function eventNode(ctx: CardContext, card: Card): HTMLElement {
  const e = card.shown!.event;
  const json = JSON.stringify(e.data, null, 2);
  const lines = json.split("\n").length;
  return el(
    "article",
    { class: `card event ${card.kind === "record" ? "record " : ""}${e.type.replace(/[^a-z_]/g, "")}` },
    head(ctx, card, e.type.replace(/_/g, " "), el("span", { class: "event-line" }, ...eventLine(ctx, e))),
    // A fork header's line says what matters; its data (digests, limitations) stays folded.
    lazyDetails("json", ["data"], card.kind !== "record" && e.type !== "session_fork" && lines <= OPEN_DATA_LINES && json.length <= 4000, () => pre(json, "json")),
  );
}

function markerNode(ctx: CardContext, card: Card): HTMLElement {
  const m = card.marker!;
  if (m.fold !== undefined) {
    const button = el("button", { type: "button", class: "fold", "aria-expanded": "false" }, "▸ ", m.text);
    button.addEventListener("click", () => {
      const open = button.getAttribute("aria-expanded") !== "true";
      button.setAttribute("aria-expanded", String(open));
      button.firstChild!.textContent = open ? "▾ " : "▸ ";
      ctx.onFold(m.fold!, open);
    });
    return el("div", { class: `marker ${m.className}`, role: "note" }, button, " ", m.log === null ? null : ctx.logButton(m.log));
  }
  return el("div", { class: `marker ${m.className}`, role: "note" }, m.text, m.log === null ? null : ctx.logButton(m.log));
}

/** The card's nodes, built once. */
export function cardNode(ctx: CardContext, card: Card): HTMLElement {
  if (card.node !== undefined) return card.node;
  const shown = card.shown;
  const build: Record<CardKind, (ctx: CardContext, card: Card) => HTMLElement> = {
    marker: markerNode,
    message: messageNode,
    context: contextNode,
    reasoning: reasoningNode,
    tool: toolNode,
    result: resultNode,
    summary: summaryNode,
    event: eventNode,
    record: (c, k) => (k.shown!.event.type === "user_message" || k.shown!.event.type === "assistant_message" ? messageNode(c, k) : k.shown!.event.type === "reasoning" ? emptyReasoningNode(c, k) : eventNode(c, k)),
  };
  const node = build[card.kind](ctx, card);
  if (shown !== undefined) {
    const id = anchorId(ctx.log, shown.seq);
    if (id !== null) node.id = id;
    node.dataset.type = shown.event.type;
    if (shown.inherited) node.classList.add("inherited");
    if (card.kind === "record") node.classList.add("record");
  }
  if (card.dimmed) {
    node.classList.add("dimmed");
    node.title = "compacted away: the model no longer sees this card";
  }
  card.node = node;
  return node;
}

function emptyReasoningNode(ctx: CardContext, card: Card): HTMLElement {
  return el("article", { class: "card reasoning" }, head(ctx, card, "thinking"), el("div", { class: "body muted" }, "(no readable text: redacted or encrypted)"));
}

/** Lower-case text a search looks in: everything the card can show, collapsed parts included. */
export function searchText(card: Card): string {
  if (card.search !== undefined) return card.search;
  const parts: string[] = [];
  const e = card.shown?.event;
  if (e !== undefined) {
    const d = e.data;
    parts.push(e.type.replace(/_/g, " "));
    if (card.kind === "message" || card.kind === "context") parts.push(messageText(d));
    else if (card.kind === "reasoning") parts.push(reasoningText(d));
    else if (card.kind === "tool") parts.push(String(d.name ?? ""), JSON.stringify(d.args ?? null));
    else if (card.kind === "summary") parts.push(String(d.summary ?? ""));
    else if (card.kind !== "result") parts.push(JSON.stringify(d));
    if (card.kind === "result") parts.push(toolResultText(d));
    if (card.result !== undefined) parts.push(toolResultText(card.result.event.data));
  } else if (card.marker !== undefined) parts.push(card.marker.text);
  card.search = parts.join("\n").toLowerCase();
  return card.search;
}
