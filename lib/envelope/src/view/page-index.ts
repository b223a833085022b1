// view.md §1: the index of a page, written by the export (html-export.ts) as JSON in the page and read by
// the page's script (page/). One description of the format for both sides.

/** How a Log hangs in the family shown by a page. */
export type PageRelation = "root" | "fork" | "subagent";

/** One Log of the page, in the order of the sidebar (depth first from the family's root). */
export interface PageLog {
  id: string;
  /** Index of the Log this one hangs from in the sidebar, or null. */
  parent: number | null;
  relation: PageRelation;
  /** A fork child's `forked_to_seq` and `replay_event_count`; null and 0 otherwise. */
  forked_to_seq: number | null;
  replay_event_count: number;
  strategy: string | null;
  /**
   * The page holds only this Log's own Events (its header and those after the inherited prefix); the
   * prefix is read from `parent`'s History, where it is shown once (view.md §1 `--family`).
   */
  inherits: boolean;
  /** A subagent child named by a `subagent_event` whose Log is not in the Workspace. */
  missing: boolean;
  /** The subagent run this Log is the child of: what `pixir tree` shows of it. */
  subagent: { agent: string | null; status: string | null; task: string | null } | null;
  /** Events of the resolved History. */
  event_count: number;
  /** The session's title (archive.md §1), or null when the export knows none. */
  title: string | null;
  /** The agent that wrote it (`claude`, `codex`, `pi`, `pixir`), or null. */
  agent: string | null;
}

export interface PageIndex {
  format: "pixir-page-v1";
  /** The Session named on the command line: shown first. */
  named: string;
  /** The Workspace's last path component (never the absolute path, view.md §1.2). */
  workspace: string;
  logs: PageLog[];
  /** A relative link to the site's index, when the page is one of `export html --all`. */
  home?: string;
}

/** Element ids of the page's data blocks (`<script type="application/json">`). */
export const INDEX_BLOCK_ID = "pixir-index";
export const RESOURCES_BLOCK_ID = "pixir-resources";
export const logBlockId = (index: number): string => `pixir-log-${index}`;
/**
 * The opening of a large page (view.md §1.3): the first Events of the named Log's block, written before
 * the page's script and the Log blocks, so the first cards show while the rest of the page is still read.
 */
export const OPENING_BLOCK_ID = "pixir-opening";

/** The opening's JSON. */
export interface PageOpening {
  /**
   * The greatest `range.to_seq` of the checkpoints after these Events, or null (none, or not known): the
   * opening's cards it replaced are dimmed at once, as they will be once the page is read.
   */
  compacted_through: number | null;
  events: unknown[];
}
