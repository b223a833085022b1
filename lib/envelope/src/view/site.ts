// archive.md §4: `pixir export html --all --out DIR`, a static site of the whole Workspace in one process:
// `index.html` (site-index.ts) and one page per root family under `sessions/`, linked relatively so the
// folder works from file://, a zip or any static host. A rerun rewrites only the pages whose Logs changed
// (a fingerprint per page in DIR/.pixir-site.json: the page script, and each member Log's facts, size and
// mtime), removes the pages of families that are gone, and rewrites the index. Each page is written whole
// or not at all (temp + rename); a folder that is not a pixir site and not empty is refused.
import { createHash, type Hash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import type { SessionFacts } from "../archive/facts.js";
import { readCatalogListed } from "../archive/catalog.js";
import { PixirError } from "../event/errors.js";
import { ExportFile } from "../store/export-file.js";
import type { LogListing } from "../store/ls.js";
import { removeQuietly } from "../store/paths.js";
import { readForkLinks } from "../tree/fork-family.js";
import { DEFAULT_TREE_MAX_DEPTH, sessionTreeMaker } from "../tree/tree.js";
import type { FamilyOptions } from "./family.js";
import { htmlPageChunks, planHtmlExport, type PageWarning } from "./html-export.js";
import { PAGE_SCRIPT } from "./page-assets.js";
import { siteIndexHtml, type SiteRow } from "./site-index.js";

const MANIFEST = ".pixir-site.json";
const SITE_FORMAT = "pixir-site-v1";
export const SITE_PAGES_DIR = "sessions";

export interface SiteReport {
  ok: true;
  /** The site's folder (absolute). */
  dir: string;
  /** Root families, one page each. */
  pages: number;
  written: number;
  unchanged: number;
  removed: number;
  /** Logs shown across the pages. */
  sessions: number;
  /** Bytes of the pages written this run, and of the index. */
  bytes: number;
}

interface Manifest {
  format: string;
  pages: Record<string, string>;
}

export interface SiteOptions {
  /** The folder as given (for errors), and where it resolves. */
  display: string;
  dir: string;
  maxDepth?: number;
  onWarning?: (w: PageWarning) => void;
  /** Called after each page with (done, total): progress for a terminal. */
  onPage?: (done: number, total: number) => void;
}

/** The page of root family `id`, relative to the site's folder. */
export const sitePagePath = (id: string): string => `${SITE_PAGES_DIR}/${id}.html`;

export async function exportSite(ws: string, options: SiteOptions): Promise<SiteReport> {
  const { facts, listing } = await readCatalogListed(ws);
  const byId = new Map(facts.map((f) => [f.session_id, f]));
  const roots = facts.filter((f) => f.parent === null || !byId.has(f.parent));
  const old = openSite(options);
  mkdirSync(path.join(options.dir, SITE_PAGES_DIR), { recursive: true });
  const pagesThere = new Set(readdirSync(path.join(options.dir, SITE_PAGES_DIR)));
  const titles = new Map(facts.map((f) => [f.session_id, { title: f.title, agent: f.agent as string | null }]));
  // One read of the Workspace's fork links and Log heads for every page, not one per page; none at all
  // when no page is written (a rerun with nothing changed decides from the catalog's listing alone).
  let shared: FamilyOptions["shared"];
  const sharedOnce = async () => (shared ??= { links: await readForkLinks(ws), tree: sessionTreeMaker({ maxDepth: options.maxDepth ?? DEFAULT_TREE_MAX_DEPTH }) });
  const manifest: Manifest = { format: SITE_FORMAT, pages: {} };
  const report: SiteReport = { ok: true, dir: options.dir, pages: roots.length, written: 0, unchanged: 0, removed: 0, sessions: 0, bytes: 0 };
  const placing = new Placing();
  try {
    for (const [k, root] of roots.entries()) {
      const members = familyOf(root, byId);
      report.sessions += members.length;
      const print = fingerprint(listing, members);
      manifest.pages[root.session_id] = print;
      const file = path.join(options.dir, sitePagePath(root.session_id));
      if (old.pages[root.session_id] === print && pagesThere.has(path.basename(file))) report.unchanged++;
      else {
        const plan = await planHtmlExport(ws, root.session_id, { family: true, maxDepth: options.maxDepth, shared: await sharedOnce() }, { facts: titles, home: "../index.html" });
        report.bytes += await writeWhole(file, htmlPageChunks(plan, options.onWarning), path.join(options.display, sitePagePath(root.session_id)), placing);
        report.written++;
      }
      options.onPage?.(k + 1, roots.length);
    }
  } finally {
    // Every page placed (or its temp file gone) before the manifest says so, or before an error leaves.
    await placing.settle();
  }
  await placing.drain();
  for (const id of Object.keys(old.pages)) {
    if (manifest.pages[id] !== undefined) continue;
    removeQuietly(path.join(options.dir, sitePagePath(id)));
    report.removed++;
  }
  const index = siteIndexHtml(path.basename(path.resolve(ws)), roots.map((r) => siteRow(r, byId)));
  report.bytes += await writeWhole(path.join(options.dir, "index.html"), [index], path.join(options.display, "index.html"));
  await writeWhole(path.join(options.dir, MANIFEST), [`${JSON.stringify(manifest)}\n`], path.join(options.display, MANIFEST));
  return report;
}

/** The old manifest of an existing site; an empty or new folder has none. Anything else is refused. */
function openSite(options: SiteOptions): Manifest {
  const empty: Manifest = { format: SITE_FORMAT, pages: {} };
  let entries: string[];
  try {
    if (!statSync(options.dir).isDirectory()) throw notASite(options.display, "it is not a directory");
    entries = readdirSync(options.dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    const parent = path.dirname(options.dir);
    if (!existsSync(parent)) throw new PixirError("not_found", `the folder that would hold ${options.display} does not exist`, { path: options.display, hint: "create its parent folder first" });
    return empty;
  }
  if (entries.length === 0) return empty;
  if (!entries.includes(MANIFEST)) throw notASite(options.display, "it is not empty and holds no pixir site");
  try {
    const manifest = JSON.parse(readFileSync(path.join(options.dir, MANIFEST), "utf8")) as Manifest;
    // Another format, or a damaged manifest: every page is written again.
    return manifest.format === SITE_FORMAT && typeof manifest.pages === "object" && manifest.pages !== null ? manifest : empty;
  } catch {
    return empty;
  }
}

function notASite(display: string, why: string): PixirError {
  return new PixirError("already_exists", `refusing to write a site into ${display}: ${why}`, { path: display, hint: "give a new or empty folder, or one an earlier `pixir export html --all` wrote" });
}

/** A root and every Log below it (forks, branches, subagents), parents first. */
function familyOf(root: SessionFacts, byId: Map<string, SessionFacts>): SessionFacts[] {
  const out: SessionFacts[] = [];
  const seen = new Set<string>();
  const visit = (f: SessionFacts) => {
    if (seen.has(f.session_id)) return;
    seen.add(f.session_id);
    out.push(f);
    for (const c of f.children) {
      const child = byId.get(c);
      if (child !== undefined) visit(child);
    }
  };
  visit(root);
  return out;
}

/** The hash of what every page shares (the format and the page's script), copied for each page rather than hashed again. */
let pagePrefix: Hash | null = null;

/**
 * What a page depends on: the page's own script, and each member Log's facts, size and mtime (the size
 * and mtime from the listing the catalog was read with: no Log is touched here).
 */
function fingerprint(listing: LogListing, members: SessionFacts[]): string {
  pagePrefix ??= createHash("sha256").update(SITE_FORMAT).update(PAGE_SCRIPT);
  const hash = pagePrefix.copy();
  for (const m of members) {
    const size = listing.sizes.get(m.session_id);
    const mtime = listing.mtimes.get(m.session_id);
    // A Log the listing does not hold (gone since): the page is written again.
    const stamp = size === undefined || mtime === undefined ? "missing" : `${size}:${mtime}`;
    hash.update(JSON.stringify([m.session_id, m.title, m.agent, m.events, m.updated, m.children, stamp]));
  }
  return hash.digest("hex");
}

function siteRow(root: SessionFacts, byId: Map<string, SessionFacts>): SiteRow {
  const family = familyOf(root, byId).slice(1);
  return {
    id: root.session_id,
    href: sitePagePath(root.session_id).split("/").map(encodeURIComponent).join("/"),
    title: root.title ?? root.first_prompt ?? root.session_id,
    first_prompt: root.first_prompt,
    agent: root.agent,
    project: root.project,
    updated: root.updated,
    messages: root.messages,
    tokens: root.tokens,
    forks: family.filter((f) => f.kind === "fork" || f.kind === "branch").length,
    subagents: family.filter((f) => f.kind === "subagent").length,
  };
}

/** Pages whose sync and rename are under way (ExportFile.commitAsync), at most PLACING_MAX: the next page is made meanwhile. */
const PLACING_MAX = 4;

class Placing {
  private pending: Array<Promise<void>> = [];
  private failed: unknown[] = [];

  async add(placed: Promise<void>): Promise<void> {
    this.pending.push(placed.catch((err: unknown) => void this.failed.push(err)));
    if (this.pending.length >= PLACING_MAX) await this.pending.shift();
    if (this.failed.length > 0) throw this.failed[0];
  }

  /** Wait for every page under way. */
  async settle(): Promise<void> {
    await Promise.all(this.pending.splice(0));
  }

  /** settle(), then the first failure, if any. */
  async drain(): Promise<void> {
    await this.settle();
    if (this.failed.length > 0) throw this.failed[0];
  }
}

/**
 * Write `file` whole (temp + rename, replacing an old one), named `display` in errors; the bytes written.
 * With `placing`, the sync and rename may finish later.
 */
async function writeWhole(file: string, chunks: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, display: string, placing?: Placing): Promise<number> {
  const out = new ExportFile(file, display, "the site's page", true);
  let bytes = 0;
  try {
    for await (const chunk of chunks) {
      const b = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
      out.write(b);
      bytes += b.length;
    }
  } catch (err) {
    out.discard();
    throw err;
  }
  const placed = out.commitAsync().finally(() => out.discard());
  if (placing === undefined) await placed;
  else await placing.add(placed);
  return bytes;
}

