// view.md §1.1 and §2: what a person reads of an Event. Pure functions of an Event's `data`, shared by the
// web page's script (bundled into the page) and `pixir export md`, so both say the same thing. No I/O,
// no Node modules: this file runs in the browser too.
import { blockText, oneLine } from "../event/injected.js";

type Data = Record<string, unknown>;

const isObject = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A reasoning Event's text: the item as a string, a thinking block's `thinking`, the `text` of summary or
 * content parts (Codex), else "" (a redacted or encrypted item has no text to show).
 */
export function reasoningText(data: Data): string {
  const item = data.item;
  if (typeof item === "string") return item;
  if (isObject(item)) {
    if (typeof item.thinking === "string") return item.thinking;
    if (typeof item.text === "string") return item.text;
    for (const key of ["summary", "content"]) {
      const text = blockText(item[key]);
      if (text) return text;
    }
  }
  return typeof data.text === "string" ? data.text : "";
}

/** A tool result's output as text: `output` when a string, else its text blocks, else the JSON of the rest. */
export function toolResultText(data: Data): string {
  if (typeof data.output === "string") return data.output;
  const text = blockText(data.output);
  if (text !== null) return text;
  if (data.output !== undefined && data.output !== null) return JSON.stringify(data.output, null, 2);
  if (data.error !== undefined && data.error !== null) return typeof data.error === "string" ? data.error : JSON.stringify(data.error, null, 2);
  const rest: Data = {};
  for (const [k, v] of Object.entries(data)) if (k !== "call_id") rest[k] = v;
  return JSON.stringify(rest, null, 2);
}

/** A result that says it failed: `ok: false`, `is_error: true` or an `error`. */
export function isFailedResult(data: Data): boolean {
  return data.ok === false || data.is_error === true || (data.error !== undefined && data.error !== null && data.ok !== true);
}

/** Argument keys that say what a tool call is about, in the order they are looked for. */
const SUMMARY_KEYS = ["command", "cmd", "path", "file_path", "filePath", "file", "pattern", "query", "url", "description", "prompt"];

/** view.md §1.1: a one-line summary of a tool call's arguments (a command, a path, a pattern), or "". */
export function toolCallSummary(args: unknown): string {
  if (typeof args === "string") return oneLine(args);
  if (!isObject(args)) return "";
  for (const key of SUMMARY_KEYS) {
    const v = args[key];
    if (typeof v === "string" && v.trim() !== "") return oneLine(v);
    if (Array.isArray(v) && v.length > 0 && v.every((s) => typeof s === "string")) return oneLine(v.join(" "));
  }
  for (const v of Object.values(args)) if (typeof v === "string" && v.trim() !== "") return oneLine(v);
  return "";
}

/** Raster image types a page shows from a `data:` URI (no SVG: it is a document, not a picture). */
export const IMAGE_TYPES: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  bmp: "image/bmp",
  avif: "image/avif",
};
const IMAGE_MIMES = new Set(Object.values(IMAGE_TYPES));

/** The key of a Session Resource in the page: `<resource_id>/<content_sha256>.<extension>`. */
export const resourceKey = (d: Data): string => `${String(d.resource_id)}/${String(d.content_sha256)}.${String(d.extension)}`;

/** The image descriptors among an Event's Session Resources (`data.resources`). */
export function imageResources(data: Data): Data[] {
  if (!Array.isArray(data.resources)) return [];
  return data.resources.filter(
    (d): d is Data => isObject(d) && typeof d.resource_id === "string" && typeof d.content_sha256 === "string" && typeof d.extension === "string" && IMAGE_TYPES[d.extension.toLowerCase()] !== undefined,
  );
}

/** Images an Event carries inline as base64 (pi's `{type:"image", data, mimeType}`, Claude's `source`). */
export function inlineImages(data: Data): Array<{ mime: string; base64: string }> {
  const out: Array<{ mime: string; base64: string }> = [];
  const blocks = [data.content, data.output].filter(Array.isArray).flat() as unknown[];
  for (const block of blocks) {
    if (!isObject(block) || block.type !== "image") continue;
    const source = isObject(block.source) ? block.source : block;
    const mime = String(source.mimeType ?? source.media_type ?? "").toLowerCase();
    const base64 = source.data;
    if (IMAGE_MIMES.has(mime) && typeof base64 === "string" && /^[A-Za-z0-9+/]+={0,2}$/.test(base64)) out.push({ mime, base64 });
  }
  return out;
}

/** The longest run of `ch` in `text`. */
export function longestRun(text: string, ch: string): number {
  let best = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === ch) {
      run++;
      if (run > best) best = run;
    } else run = 0;
  }
  return best;
}
