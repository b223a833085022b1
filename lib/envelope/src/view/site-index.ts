// archive.md §4: the `index.html` of `pixir export html --all`: the Workspace's root families grouped by
// project (newest first), each row linking to its page, and a filter box that searches titles and first
// prompts in the page (no request). Written here as static HTML, every Log string escaped; its small
// script (allowed by its hash, like the page's) only filters rows and shows times in local time.
import { contentSecurityPolicy, documentHead, escapeHtml } from "./html-export.js";
import { tokensText } from "./ls-text.js";
import { pageScriptSource } from "./page-assets.js";

/** One row of the index: a root family. */
export interface SiteRow {
  id: string;
  /** Relative link to its page (`sessions/<id>.html`). */
  href: string;
  title: string;
  first_prompt: string | null;
  agent: string;
  project: string | null;
  updated: string | null;
  messages: number;
  tokens: number | null;
  forks: number;
  subagents: number;
}

const INDEX_SCRIPT = `(() => {
  const box = document.getElementById("filter");
  const count = document.getElementById("count");
  const rows = [...document.querySelectorAll("tr[data-search]")];
  const groups = [...document.querySelectorAll("section.project")];
  const fmt = new Intl.DateTimeFormat(undefined, { year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  for (const t of document.querySelectorAll("time[datetime]")) {
    const ms = Date.parse(t.getAttribute("datetime"));
    if (!Number.isNaN(ms)) t.textContent = fmt.format(ms);
  }
  const apply = () => {
    const words = box.value.toLowerCase().split(/\\s+/).filter((w) => w !== "");
    let shown = 0;
    for (const row of rows) {
      const text = row.getAttribute("data-search");
      row.hidden = !words.every((w) => text.includes(w));
      if (!row.hidden) shown++;
    }
    for (const g of groups) g.hidden = g.querySelector("tr[data-search]:not([hidden])") === null;
    count.textContent = words.length === 0 ? rows.length + " sessions" : shown + " of " + rows.length + " sessions match";
  };
  box.addEventListener("input", apply);
  apply();
})();`;

const INDEX_STYLE = `
:root { color-scheme: light dark; --bg: #fff; --panel: #f6f7f9; --border: #d9dde3; --text: #1d2330; --muted: #667085; --accent: #2f6fde;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
@media (prefers-color-scheme: dark) { :root { --bg: #16181d; --panel: #1d2027; --border: #343a46; --text: #e4e7ec; --muted: #98a2b3; --accent: #79a6ff; } }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text); }
main { max-width: 1100px; margin: 0 auto; padding: 16px 20px 48px; }
h1 { font-size: 20px; margin: 0 0 4px; }
.sub { color: var(--muted); margin: 0 0 12px; }
.bar { position: sticky; top: 0; background: var(--bg); padding: 8px 0; display: flex; gap: 12px; align-items: center; border-bottom: 1px solid var(--border); }
#filter { flex: 1; padding: 6px 10px; border: 1px solid var(--border); border-radius: 6px; background: var(--panel); color: var(--text); font: inherit; }
#count { color: var(--muted); font-size: 12px; white-space: nowrap; }
h2 { font-size: 15px; margin: 20px 0 6px; }
h2 .n { color: var(--muted); font-weight: normal; font-size: 12px; }
table { width: 100%; border-collapse: collapse; }
td { padding: 5px 8px; border-top: 1px solid var(--border); vertical-align: top; }
td.title { width: 60%; overflow-wrap: anywhere; }
td.title a { color: var(--accent); text-decoration: none; font-weight: 600; }
td.title a:hover { text-decoration: underline; }
.prompt { display: block; color: var(--muted); font-size: 12.5px; }
td.meta { color: var(--muted); font-size: 12.5px; white-space: nowrap; }
.agent { display: inline-block; border: 1px solid var(--border); border-radius: 10px; padding: 0 7px; font-size: 12px; }
time { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
@media (max-width: 700px) { main { padding: 8px 10px 32px; } tr { display: block; border-top: 1px solid var(--border); padding: 4px 0; } td { display: inline-block; border: none; padding: 2px 6px; } td.title { display: block; width: auto; } }
`;

const count = (n: number, one: string): string => `${n.toLocaleString("en-US")} ${one}${n === 1 ? "" : "s"}`;

/** `YYYY-MM-DD HH:MM` (UTC) for a reader without scripts; the script shows it in local time. */
const utcText = (iso: string): string => `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;

function rowHtml(r: SiteRow): string {
  const search = [r.title, r.first_prompt ?? "", r.project ?? "", r.agent].join("\n").toLowerCase();
  const lineage = [r.forks > 0 ? count(r.forks, "fork") : "", r.subagents > 0 ? count(r.subagents, "subagent") : ""].filter((s) => s !== "").join(", ");
  const prompt = r.first_prompt !== null && r.first_prompt !== r.title ? `<span class="prompt">${escapeHtml(r.first_prompt)}</span>` : "";
  return [
    `<tr data-search="${escapeHtml(search)}">`,
    `<td class="title"><a href="${escapeHtml(r.href)}" title="${escapeHtml(r.id)}">${escapeHtml(r.title)}</a>${prompt}</td>`,
    `<td class="meta"><span class="agent">${escapeHtml(r.agent)}</span></td>`,
    `<td class="meta">${r.updated === null ? "–" : `<time datetime="${escapeHtml(r.updated)}">${escapeHtml(utcText(r.updated))}</time>`}</td>`,
    `<td class="meta">${count(r.messages, "message")}</td>`,
    `<td class="meta">${tokensText(r.tokens)} tokens</td>`,
    `<td class="meta">${lineage}</td>`,
    "</tr>",
  ].join("");
}

/** Rows grouped by project; groups by their newest row, rows newest first. */
function groups(rows: SiteRow[]): Array<[string, SiteRow[]]> {
  const byProject = new Map<string, SiteRow[]>();
  for (const r of rows) {
    const key = r.project ?? "(no project)";
    byProject.set(key, [...(byProject.get(key) ?? []), r]);
  }
  const newest = (list: SiteRow[]) => list[0]?.updated ?? "";
  for (const list of byProject.values()) list.sort((a, b) => (b.updated ?? "").localeCompare(a.updated ?? "") || a.id.localeCompare(b.id));
  return [...byProject].sort(([ka, a], [kb, b]) => newest(b).localeCompare(newest(a)) || ka.localeCompare(kb));
}

/** The whole index page. `workspace` is the Workspace's last path component. */
export function siteIndexHtml(workspace: string, rows: SiteRow[]): string {
  const sections = groups(rows).map(
    ([project, list]) => `<section class="project"><h2>${escapeHtml(project)} <span class="n">${count(list.length, "session")}</span></h2><table><tbody>${list.map(rowHtml).join("\n")}</tbody></table></section>`,
  );
  return [
    ...documentHead(contentSecurityPolicy(pageScriptSource(INDEX_SCRIPT)), "pixir export html --all", `${workspace} · sessions · pixir`, INDEX_STYLE),
    "<body>",
    "<main>",
    `<h1>Sessions of ${escapeHtml(workspace)}</h1>`,
    `<p class="sub">${count(rows.length, "session")} in ${count(new Set(rows.map((r) => r.project ?? "")).size, "project")}, newest first. Forks and subagents are on their session's page.</p>`,
    '<div class="bar" role="search"><input id="filter" type="search" placeholder="Filter by title or first prompt" aria-label="Filter sessions"><output id="count"></output></div>',
    ...sections,
    "</main>",
    `<script>${INDEX_SCRIPT}</script>`,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
