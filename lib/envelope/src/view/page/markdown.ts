// view.md §1.2: Markdown of a Log, rendered so that nothing in it can run, load or leave the page.
// Two locks, each enough alone: markdown-it with `html: false` shows raw HTML as text and refuses
// `javascript:`, `vbscript:`, `file:` and non-image `data:` links; DOMPurify then keeps only an allow-list
// of tags and attributes (no `on*`, no `style`, no svg/math/iframe/object/form), and a link or image may
// point only where the allow-list says. Images load from `data:` URIs only (the page's CSP says the same).
import DOMPurify from "dompurify";
import hljs from "highlight.js/lib/core";
import type { LanguageFn } from "highlight.js";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";

const LANGUAGES: Record<string, LanguageFn> = { bash, c, cpp, diff, go, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };

/**
 * The languages are registered when the first code block is highlighted: registering them was 15 ms of
 * the page's start, before its first card, and many screens hold no code. All at once, because one
 * language may highlight a part of a block in another (HTML inside Markdown).
 */
let registered = false;
function knownLanguage(name: string): boolean {
  if (!registered) {
    for (const [key, fn] of Object.entries(LANGUAGES)) hljs.registerLanguage(key, fn);
    registered = true;
  }
  return hljs.getLanguage(name) !== undefined;
}

/** Longer code is shown plain: highlighting is for reading, and a huge block would stall the page. */
const HIGHLIGHT_MAX = 100_000;
/** Longer text is shown as plain text: Markdown of a megabyte line is not worth its time. */
export const MARKDOWN_MAX = 200_000;

const IMAGE_SRC = /^data:image\/(?:png|jpeg|gif|webp|bmp|avif);base64,[A-Za-z0-9+/=\s]*$/i;
/** Where a link may point: the web, mail, or an anchor of this page. */
const SAFE_URI = /^(?:https?:|mailto:|#)/i;

const md = new MarkdownIt({
  html: false,
  linkify: true,
  typographer: false,
  highlight(code, lang) {
    const name = lang.trim().split(/\s+/)[0]!.toLowerCase();
    if (name === "" || code.length > HIGHLIGHT_MAX || !knownLanguage(name)) return "";
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  },
});

// An image that is not a data: picture becomes a link to it, never a request.
const defaultImage = md.renderer.rules.image!;
md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet("src") ?? "");
  if (IMAGE_SRC.test(src)) return defaultImage(tokens, idx, options, env, self);
  const alt = md.utils.escapeHtml(token.content || "image");
  return SAFE_URI.test(src) ? `<a href="${md.utils.escapeHtml(src)}">[image: ${alt}]</a>` : `[image: ${alt}]`;
};

const ALLOWED_TAGS = [
  "a", "p", "br", "hr", "em", "strong", "s", "del", "code", "pre", "blockquote", "ul", "ol", "li",
  "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "img", "span",
];
const ALLOWED_ATTR = ["href", "title", "src", "alt", "class", "start"];

DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    const href = node.getAttribute("href");
    if (href !== null && !SAFE_URI.test(href)) node.removeAttribute("href");
    node.setAttribute("rel", "noopener noreferrer");
    node.setAttribute("target", "_blank");
  } else if (node.tagName === "IMG") {
    const src = node.getAttribute("src");
    if (src === null || !IMAGE_SRC.test(src)) node.removeAttribute("src");
  }
});

/** Sanitised HTML as nodes for the page: only the allow-list survives. */
export function cleanFragment(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: [...ALLOWED_ATTR, "rel", "target"],
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOW_UNKNOWN_PROTOCOLS: false,
    RETURN_DOM_FRAGMENT: true,
  });
}

/** A message's Markdown as page nodes; very long text stays plain text. */
export function renderMarkdown(text: string): Node {
  if (text.length > MARKDOWN_MAX) {
    const pre = document.createElement("pre");
    pre.className = "plain";
    pre.textContent = text;
    return pre;
  }
  return cleanFragment(md.render(text));
}
