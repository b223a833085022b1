// view.md §1.1 item 2: the family as a tree (parent → fork children, each edge with its forked_to_seq;
// subagent children marked), the shown Log highlighted. A WAI-ARIA tree: one tab stop; the arrow keys,
// Home and End move; Enter or Space shows the Log.
import type { PageLog } from "../page-index.js";
import { el } from "./dom.js";
import { logTitle } from "./people.js";

export class Sidebar {
  readonly node: HTMLElement;
  private readonly items: HTMLElement[] = [];
  private focused = 0;

  constructor(
    private readonly logs: PageLog[],
    private readonly named: string,
    private readonly onSelect: (i: number) => void,
    home?: string,
  ) {
    const tree = el("ul", { role: "tree", "aria-label": "Logs of this family", class: "tree" });
    const groups = new Map<number | null, HTMLElement>([[null, tree]]);
    logs.forEach((log, i) => {
      const depth = this.depthOf(i);
      const item = el(
        "li",
        { role: "treeitem", "aria-level": String(depth + 1), "aria-selected": "false", tabindex: "-1", "data-log": String(i), class: `node ${log.relation}` },
        el("span", { class: "node-label" }, ...this.label(log)),
      );
      this.items.push(item);
      let group = groups.get(log.parent);
      if (group === undefined) {
        group = el("ul", { role: "group" });
        this.items[log.parent!]!.append(group);
        this.items[log.parent!]!.setAttribute("aria-expanded", "true");
        groups.set(log.parent, group);
      }
      group.append(item);
    });
    tree.addEventListener("click", (ev) => {
      const item = (ev.target as Element).closest("[role=treeitem]");
      if (item !== null) this.choose(Number((item as HTMLElement).dataset.log));
    });
    tree.addEventListener("keydown", (ev) => this.key(ev));
    this.node = el(
      "nav",
      { class: "sidebar", "aria-label": "Family" },
      // The home link is the export's own relative path (`../index.html`), never a Log's text.
      home === undefined ? null : el("a", { class: "home", href: home }, "← all sessions"),
      el("h2", null, `Family · ${logs.length} Log${logs.length === 1 ? "" : "s"}`),
      tree,
    );
  }

  private depthOf(i: number): number {
    let depth = 0;
    for (let p = this.logs[i]!.parent; p !== null && depth < this.logs.length; p = this.logs[p]!.parent) depth++;
    return depth;
  }

  private label(log: PageLog): Array<Node | string> {
    const parts: Array<Node | string> = [];
    if (log.relation === "fork") parts.push(el("span", { class: "edge", title: `forked at seq ${log.forked_to_seq} (${log.strategy ?? "fork"})` }, `fork @${log.forked_to_seq}`));
    else if (log.relation === "subagent") {
      const s = log.subagent;
      parts.push(el("span", { class: "edge", title: [s?.task, s?.status].filter(Boolean).join(" · ") || "subagent" }, `subagent${s?.agent ? ` ${s.agent}` : ""}`));
    }
    // archive.md §4: a Log is named by its title, its id on hover.
    parts.push(el("span", { class: "node-title", title: log.id, "data-id": log.id }, logTitle(log)));
    if (log.id === this.named) parts.push(el("span", { class: "tag" }, "named"));
    parts.push(el("span", { class: "count", title: "events" }, log.missing ? "missing" : String(log.event_count)));
    return parts;
  }

  /** Mark Log `i` as the one shown. */
  select(i: number): void {
    this.items.forEach((item, k) => {
      item.setAttribute("aria-selected", String(k === i));
      item.classList.toggle("current", k === i);
      if (k === i) item.setAttribute("aria-current", "page");
      else item.removeAttribute("aria-current");
    });
    this.moveFocus(i, false);
  }

  private choose(i: number): void {
    this.moveFocus(i, true);
    this.onSelect(i);
  }

  private moveFocus(i: number, focus: boolean): void {
    this.items[this.focused]?.setAttribute("tabindex", "-1");
    this.focused = i;
    const item = this.items[i]!;
    item.setAttribute("tabindex", "0");
    if (focus) item.focus();
  }

  private key(ev: KeyboardEvent): void {
    const i = this.focused;
    const last = this.items.length - 1;
    let next: number | null = null;
    if (ev.key === "ArrowDown") next = Math.min(i + 1, last);
    else if (ev.key === "ArrowUp") next = Math.max(i - 1, 0);
    else if (ev.key === "Home") next = 0;
    else if (ev.key === "End") next = last;
    else if (ev.key === "ArrowLeft") next = this.logs[i]!.parent ?? i;
    else if (ev.key === "ArrowRight") {
      const child = this.logs.findIndex((l) => l.parent === i);
      next = child === -1 ? i : child;
    } else if (ev.key === "Enter" || ev.key === " ") {
      ev.preventDefault();
      this.choose(i);
      return;
    }
    if (next === null) return;
    ev.preventDefault();
    this.moveFocus(next, true);
  }
}
