// The page's own script and style (view/page/), bundled by scripts/page.mjs at build time and defined into
// the library as strings; the CSP names the script by its SHA-256, so the page needs no nonce and the same
// Logs give the same bytes (view.md §1.2 allows a hash in place of a nonce).
import { createHash } from "node:crypto";

declare const __PIXIR_PAGE_SCRIPT__: string;
declare const __PIXIR_PAGE_STYLE__: string;

export const PAGE_SCRIPT: string = __PIXIR_PAGE_SCRIPT__;
export const PAGE_STYLE: string = __PIXIR_PAGE_STYLE__;

/** `'sha256-…'`, the CSP source that lets exactly the page's script run. */
export const pageScriptSource = (script = PAGE_SCRIPT): string => `'sha256-${createHash("sha256").update(script, "utf8").digest("base64")}'`;
