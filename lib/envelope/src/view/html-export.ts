// view.md §1: `pixir export html`, one self-contained page of a fork family. The export checks every
// Log first (the resolving loader: a corrupt or missing Log fails it before a byte is written), then
// streams the page: head and style, the family index, on a large page the opening (the first Events of
// the named Log), the page's script, one JSON block per Log holding only the Events that Log owns (an
// inherited prefix is written once, in the Log it comes from), and the image payloads. Memory holds one
// Event and one output slice at a time, plus the index and the opening.
import path from "node:path";
import { lineDataText, serializeEvent, type PixirEvent } from "../event/envelope.js";
import type { PixirError } from "../event/errors.js";
import { openHistory, type History, type HistoryItem } from "../store/loader.js";
import { LineHead, readHead } from "../fast/line-head.js";
import { historyLines, lineBlocks, openScanned, type LogLine } from "../store/log-read.js";
import { checkDescriptor, readVerifiedPayload } from "../store/resources.js";
import { IMAGE_TYPES, imageResources, resourceKey } from "./event-text.js";
import { familyMembers, type FamilyMember, type FamilyOptions } from "./family.js";
import { PAGE_SCRIPT, PAGE_STYLE, pageScriptSource } from "./page-assets.js";
import { INDEX_BLOCK_ID, logBlockId, OPENING_BLOCK_ID, RESOURCES_BLOCK_ID, type PageIndex, type PageLog } from "./page-index.js";

export interface PageMember extends FamilyMember {
  history: History | null;
  /** The block holds only the Log's own Events: its prefix is shown from its parent's History. */
  inherits: boolean;
  replayEventCount: number;
}

export interface HtmlExportPlan {
  named: string;
  /** The Workspace's last path component. */
  workspaceName: string;
  members: PageMember[];
  /** The session facts of the page's Logs (archive.md §1), when the export read them: titles and agents. */
  facts?: PageFacts;
  /** A relative link back to a site's index (`export html --all`), or none. */
  home?: string;
}

/** Titles and agents of Logs by session id (archive.md §1 facts). */
export type PageFacts = ReadonlyMap<string, { title: string | null; agent: string | null }>;

/** One line of a session report: what the page (or Markdown) holds of each Session. */
export interface ViewSession {
  session_id: string;
  event_count: number;
}

/** Output is handed out in slices of about this size: few writes, little memory. */
const SLICE_BYTES = 256 * 1024;
/** A part this large is written as it is rather than copied into a slice. */
const LARGE_PART_BYTES = 64 * 1024;

/**
 * A page whose Logs hold more than this has an opening (page-index.ts OPENING_BLOCK_ID): the browser
 * reads a page at about 15 MiB/s, so a smaller page shows its first cards as soon without one.
 */
const OPENING_PAGE_BYTES = 1024 * 1024;
/** The opening holds the named Log's first Events up to these bounds: more than a screenful of cards. */
const OPENING_EVENTS = 200;
const OPENING_BYTES = 256 * 1024;

/** view.md §1.2: a page that may load nothing, send nothing and run only its own script. */
export function contentSecurityPolicy(scriptSource = pageScriptSource()): string {
  return `default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src ${scriptSource}; base-uri 'none'; form-action 'none'`;
}

/** Open (and so check) every Log of the page, before anything is written. */
export async function planHtmlExport(ws: string, id: string, options: FamilyOptions, extra: { facts?: PageFacts; home?: string } = {}): Promise<HtmlExportPlan> {
  const family = await familyMembers(ws, id, options, "pixir export html");
  const members: PageMember[] = [];
  for (const member of family) {
    const history = member.missing ? null : await openHistory(member.ws, member.id);
    const header = history?.scan.first?.event;
    const count = header?.type === "session_fork" && header.seq === 0 ? header.data.replay_event_count : undefined;
    const replayEventCount = history?.share?.replayEventCount ?? (typeof count === "number" ? count : 0);
    members.push({ ...member, history, inherits: member.relation === "fork" && member.parent !== null, replayEventCount });
  }
  return { named: id, workspaceName: path.basename(path.resolve(ws)), members, ...extra };
}

export function viewSessions(plan: HtmlExportPlan): ViewSession[] {
  return plan.members.filter((m) => m.history !== null).map((m) => ({ session_id: m.id, event_count: m.history!.eventCount }));
}

export function pageIndex(plan: HtmlExportPlan): PageIndex {
  const logs: PageLog[] = plan.members.map((m) => ({
    id: m.id,
    parent: m.parent,
    relation: m.relation,
    forked_to_seq: m.forkedToSeq,
    replay_event_count: m.replayEventCount,
    strategy: m.strategy,
    inherits: m.inherits,
    missing: m.history === null,
    subagent: m.subagent,
    event_count: m.history?.eventCount ?? 0,
    title: plan.facts?.get(m.id)?.title ?? null,
    agent: plan.facts?.get(m.id)?.agent ?? null,
  }));
  return { format: "pixir-page-v1", named: plan.named, workspace: plan.workspaceName, logs, ...(plan.home === undefined ? {} : { home: plan.home }) };
}

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

const LT = 0x3c;
const LT_ESCAPED = Buffer.from("\\u003c");

/**
 * JSON made safe inside `<script type="application/json">`: `<` can only occur inside its strings, where
 * `\u003c` means the same, so no `</script>` or `<!--` in a Log can end or confuse the block.
 */
export function scriptSafeJson(json: Buffer): Buffer {
  let at = json.indexOf(LT);
  if (at === -1) return json;
  const parts: Buffer[] = [];
  let from = 0;
  for (; at !== -1; at = json.indexOf(LT, at + 1)) {
    parts.push(json.subarray(from, at), LT_ESCAPED);
    from = at + 1;
  }
  parts.push(json.subarray(from));
  return Buffer.concat(parts);
}

const scriptSafeText = (value: unknown): Buffer => scriptSafeJson(Buffer.from(JSON.stringify(value), "utf8"));

/** The JSON of an Event as the Log stores it (its own bytes when they are a plain envelope). */
function lineJson(line: LogLine): Buffer {
  return line.exact ? line.bytes : Buffer.from(serializeEvent(line.event, lineDataText(line.bytes.toString("utf8"), line.event, false)).trimEnd(), "utf8");
}

function itemJson(item: HistoryItem): Buffer {
  return item.line !== undefined && item.dataText === undefined ? lineJson(item.line) : Buffer.from(serializeEvent(item.event, item.dataText).trimEnd(), "utf8");
}

/** An Event of an inheriting member's Log that its parent's block shows (the copied prefix, after its header). */
const shownByParent = (m: PageMember, seq: number | null): boolean => seq !== null && seq >= 1 && seq <= m.replayEventCount;

/** The Events a member's block holds: its own, or its whole resolved History when it inherits from no one here. */
async function* blockEvents(m: PageMember): AsyncGenerator<{ event: PixirEvent; json: Buffer }> {
  const history = m.history!;
  if (!m.inherits) {
    for await (const item of history.items()) yield { event: item.event, json: itemJson(item) };
    return;
  }
  for await (const line of historyLines(history.scan)) {
    if (shownByParent(m, line.event.seq)) continue;
    yield { event: line.event, json: lineJson(line) };
  }
}

/**
 * A member whose checking pass found every line exact, in History order and nothing else in the file
 * (`passThrough`, `inOrder`), and whose block is its own lines: the block is those lines' own bytes, so
 * they are copied a file block at a time with no Event decoded. A second pass that trusts its checking
 * pass on the same file, as headLines does.
 */
function copiesLines(m: PageMember): boolean {
  const h = m.history!;
  return h.scan.passThrough && h.scan.inOrder && (m.inherits || h.share === null);
}

const RESOURCE_KEY = Buffer.from('"resource_id"', "utf8");

/** The `data` of a line that may name an image resource, decoded; the rest of its block is only copied. */
function lineData(b: Buffer, s: number, e: number): Record<string, unknown> {
  const v = JSON.parse(b.toString("utf8", s, e)) as { data?: unknown };
  return typeof v.data === "object" && v.data !== null && !Array.isArray(v.data) ? (v.data as Record<string, unknown>) : {};
}

/**
 * blockEvents of a member that copiesLines: per block of the file, its kept lines joined by commas
 * (a fresh buffer), and the data of the lines among them that name a resource.
 */
async function* copiedLines(m: PageMember): AsyncGenerator<{ json: Buffer; withResources: Array<Record<string, unknown>> }> {
  const scan = m.history!.scan;
  const head = new LineHead();
  const file = await openScanned(scan.path, scan.identity);
  try {
    for await (const { bytes: b, end } of lineBlocks(file, scan.byteLength)) {
      const out = Buffer.allocUnsafe(end);
      const withResources: Array<Record<string, unknown>> = [];
      let at = 0;
      let resourceAt = b.indexOf(RESOURCE_KEY);
      for (let s = 0, e = 0; s < end; s = e + 1) {
        e = b.indexOf(0x0a, s);
        if (e < 0 || e > end) e = end;
        if (e === s) continue;
        if (m.inherits) {
          if (shownByParent(m, readHead(b, s, e, head) >= 0 ? head.seq : seqOf(b, s, e))) continue;
        }
        // The next `"resource_id"` of the block, searched again only once a line has passed it.
        if (resourceAt !== -1 && resourceAt < s) resourceAt = b.indexOf(RESOURCE_KEY, s);
        if (resourceAt !== -1 && resourceAt < e) withResources.push(lineData(b, s, e));
        if (at > 0) out[at++] = 0x2c;
        at += b.copy(out, at, s, e);
      }
      if (at > 0) yield { json: out.subarray(0, at), withResources };
    }
  } finally {
    await file.close();
  }
}

/**
 * The opening's Events: the first of the named Log's block, when the page is large and that block is the
 * Log's whole History (an inheriting Log's first cards need its parent's block). An Event that would pass
 * OPENING_BYTES ends it.
 */
async function openingEvents(named: PageMember): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let bytes = 0;
  for await (const { json } of blockEvents(named)) {
    const safe = scriptSafeJson(json);
    if (bytes + safe.length > OPENING_BYTES) break;
    out.push(safe);
    bytes += safe.length + 1;
    if (out.length === OPENING_EVENTS) break;
  }
  return out;
}

/** The opening block's JSON (page-index.ts PageOpening), when the page is large enough to have one. */
async function openingOf(plan: HtmlExportPlan): Promise<string | null> {
  const named = plan.members.find((m) => m.id === plan.named && m.history !== null);
  const pageBytes = plan.members.reduce((n, m) => n + (m.history?.scan.byteLength ?? 0), 0);
  if (named === undefined || named.inherits || pageBytes <= OPENING_PAGE_BYTES) return null;
  const events = await openingEvents(named);
  if (events.length === 0) return null;
  const through = await compactedAfter(named, events.length);
  return `{"compacted_through":${through ?? "null"},"events":[${events.map((b) => b.toString("utf8")).join(",")}]}`;
}

const COMPACTION_KEY = Buffer.from('"type":"history_compaction"', "utf8");

/**
 * The greatest `range.to_seq` of the checkpoints after the opening's `skip` Events, so the page dims the
 * opening's cards a later checkpoint replaced before it has read that checkpoint. Only for a Log whose
 * lines are its History (copiesLines: every Log the importers write); otherwise null, and those cards are
 * dimmed once the page is read.
 */
async function compactedAfter(m: PageMember, skip: number): Promise<number | null> {
  if (m.inherits || !copiesLines(m)) return null;
  const scan = m.history!.scan;
  const file = await openScanned(scan.path, scan.identity);
  let through: number | null = null;
  let line = 0;
  try {
    for await (const { bytes: b, end } of lineBlocks(file, scan.byteLength)) {
      let keyAt = b.indexOf(COMPACTION_KEY);
      for (let s = 0, e = 0; s < end; s = e + 1, line++) {
        e = b.indexOf(0x0a, s);
        if (e < 0 || e > end) e = end;
        if (keyAt !== -1 && keyAt < s) keyAt = b.indexOf(COMPACTION_KEY, s);
        if (keyAt === -1 || keyAt >= e || line < skip) continue;
        // The key may also stand in an object inside `data`: the line's own type decides.
        const v = JSON.parse(b.toString("utf8", s, e)) as { type?: unknown; data?: { range?: { to_seq?: unknown } } };
        const to = v.type === "history_compaction" ? v.data?.range?.to_seq : undefined;
        if (typeof to === "number" && (through === null || to > through)) through = to;
      }
    }
  } finally {
    await file.close();
  }
  return through;
}

function seqOf(b: Buffer, s: number, e: number): number | null {
  const v = JSON.parse(b.toString("utf8", s, e)) as { seq?: unknown };
  return typeof v.seq === "number" ? v.seq : null;
}

/** The lines of a page from its doctype to `</head>`: the policy, no referrer, the title (escaped here) and the style. */
export function documentHead(policy: string, generator: string, title: string, style: string): string[] {
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${policy}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="generator" content="${generator}">`,
    `<title>${escapeHtml(title)}</title>`,
    `<style>${style}</style>`,
    "</head>",
  ];
}

function head(plan: HtmlExportPlan): string {
  return [
    ...documentHead(contentSecurityPolicy(), "pixir export html", `${plan.facts?.get(plan.named)?.title ?? `Session ${plan.named}`} · pixir`, PAGE_STYLE),
    "<body>",
    `<div id="app" class="app"><noscript>This page shows the Session with its own script; allow scripts for this file to read it.</noscript></div>`,
    "",
  ].join("\n");
}

export interface PageWarning {
  code: "resource_missing";
  text: string;
  details: Record<string, unknown>;
}

/** A resource the page shows, and the Logs whose resources may hold its payload (fork.md §7). */
interface WantedImage {
  descriptor: Record<string, unknown>;
  ws: string;
  sources: string[];
}

/** The page, in slices of about SLICE_BYTES (an Event larger than that is a slice of its own). */
export async function* htmlPageChunks(plan: HtmlExportPlan, onWarning: (w: PageWarning) => void = () => {}): AsyncGenerator<Buffer> {
  let parts: Buffer[] = [];
  let size = 0;
  const put = (chunk: Buffer | string) => {
    const b = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    parts.push(b);
    size += b.length;
  };
  /** What was put, as few buffers: runs of small parts joined, a large part (a block of copied lines) as it is. */
  const slices = function* (): Generator<Buffer> {
    let run: Buffer[] = [];
    let runSize = 0;
    const joined = () => (run.length === 1 ? run[0]! : Buffer.concat(run, runSize));
    for (const part of parts) {
      if (part.length < LARGE_PART_BYTES) {
        run.push(part);
        runSize += part.length;
        continue;
      }
      if (run.length > 0) yield joined();
      run = [];
      runSize = 0;
      yield part;
    }
    if (run.length > 0) yield joined();
    parts = [];
    size = 0;
  };
  put(head(plan));
  put(`<script type="application/json" id="${INDEX_BLOCK_ID}">`);
  put(scriptSafeText(pageIndex(plan)));
  put("</script>\n");
  const opening = await openingOf(plan);
  if (opening !== null) put(`<script type="application/json" id="${OPENING_BLOCK_ID}">${opening}</script>\n`);
  // The script runs before the Log blocks are read: it shows the opening, and the rest once the page is read.
  put(`<script>${PAGE_SCRIPT}</script>\n`);
  const images = new Map<string, WantedImage>();
  for (const [i, m] of plan.members.entries()) {
    if (m.history === null) continue;
    const sources = [m.id, ...plan.members.filter((o) => o !== m && o.ws === m.ws).map((o) => o.id)];
    put(`<script type="application/json" id="${logBlockId(i)}">[`);
    const wantImages = (data: Record<string, unknown>) => {
      for (const d of imageResources(data)) if (!images.has(resourceKey(d))) images.set(resourceKey(d), { descriptor: d, ws: m.ws, sources });
    };
    let first = true;
    if (copiesLines(m)) {
      for await (const { json, withResources } of copiedLines(m)) {
        if (!first) put(",");
        first = false;
        put(scriptSafeJson(json));
        withResources.forEach(wantImages);
        if (size >= SLICE_BYTES) yield* slices();
      }
    } else {
      for await (const { event, json } of blockEvents(m)) {
        if (!first) put(",");
        first = false;
        put(scriptSafeJson(json));
        if (json.includes('"resource_id"')) wantImages(event.data);
        if (size >= SLICE_BYTES) yield* slices();
      }
    }
    put("]</script>\n");
  }
  put(`<script type="application/json" id="${RESOURCES_BLOCK_ID}">{`);
  let firstImage = true;
  for (const [key, wanted] of images) {
    let bytes: Buffer;
    try {
      bytes = readVerifiedPayload(wanted.ws, wanted.sources, checkDescriptor(wanted.descriptor));
    } catch (err) {
      const e = err as PixirError;
      onWarning({ code: "resource_missing", text: `image ${key} is not shown: ${e.message}`, details: { resource_id: wanted.descriptor.resource_id, ...(e.details ?? {}) } });
      continue;
    }
    const mime = IMAGE_TYPES[String(wanted.descriptor.extension).toLowerCase()]!;
    put(`${firstImage ? "" : ","}${scriptSafeText(key)}:"data:${mime};base64,`);
    put(bytes.toString("base64"));
    put('"');
    firstImage = false;
    if (size >= SLICE_BYTES) yield* slices();
  }
  put("}</script>\n</body>\n</html>\n");
  yield* slices();
}
