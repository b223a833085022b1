// view.md §2: Markdown that no Log can break out of. A fence longer than any backtick run inside it; a
// code span that holds any backticks; message text kept as written with its HTML escaped outside code.
import { longestRun } from "./event-text.js";

/** A fenced code block that `text` cannot close: its fence is longer than any backtick run inside. */
export function fenced(text: string, info = ""): string {
  const fence = "`".repeat(Math.max(3, longestRun(text, "`") + 1));
  const body = text === "" || text.endsWith("\n") ? text : `${text}\n`;
  return `${fence}${info}\n${body}${fence}\n`;
}

/** An inline code span that holds `text` (one line) whatever backticks it contains. */
export function codeSpan(text: string): string {
  const ticks = "`".repeat(longestRun(text, "`") + 1);
  const pad = text.startsWith("`") || text.endsWith("`") || text === "" ? " " : "";
  return `${ticks}${pad}${text}${pad}${ticks}`;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Message text as written, made safe to paste: no `<` of a Log reaches the reader's page raw. Outside
 * code it becomes `&lt;`; a code span that holds one becomes `<code>` with its text as entities; fenced
 * blocks are kept as they are (their text is code), and a fence the text opens but never closes is
 * closed, so what follows the message is not swallowed into its code block. Where this reading of the
 * text and a Markdown parser's differ, the parser may show an entity as written, never run HTML.
 */
export function safeMarkdown(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const out: string[] = [];
  let open: { ch: string; len: number } | null = null;
  let paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length > 0) out.push(escapeInline(paragraph.join("\n")));
    paragraph = [];
  };
  for (const line of lines) {
    const m = FENCE_LINE.exec(line);
    if (open !== null) {
      out.push(line);
      if (m !== null && m[1]![0] === open.ch && m[1]!.length >= open.len && m[2]!.trim() === "") open = null;
      continue;
    }
    if (m !== null && !(m[1]![0] === "`" && m[2]!.includes("`"))) {
      flush();
      out.push(line);
      open = { ch: m[1]![0]!, len: m[1]!.length };
      continue;
    }
    // A code span never crosses a blank line: each paragraph is read on its own.
    if (line.trim() === "") {
      flush();
      out.push(line);
      continue;
    }
    // A backtick run that is no fence (its info holds a backtick) stays none when a code span after it
    // is rewritten: its first backtick is escaped.
    paragraph.push(m !== null ? line.replace(/^( {0,3})`/, "$1\\`") : line);
  }
  flush();
  if (open !== null) out.push(open.ch.repeat(open.len));
  return out.join("\n");
}

/** Code as an HTML element whose every ASCII punctuation mark is an entity (so nothing in it is markup). */
function codeElement(content: string): string {
  let text = content.replace(/\n/g, " ");
  if (text.startsWith(" ") && text.endsWith(" ") && text.trim() !== "") text = text.slice(1, -1);
  return `<code>${text.replace(/[!-/:-@[-`{-~]/g, (c) => `&#${c.charCodeAt(0)};`)}</code>`;
}

/** One paragraph: `<` outside code spans → `&lt;`; a code span with a `<` → codeElement. */
function escapeInline(text: string): string {
  if (!text.includes("<")) return text;
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\" && (text[i + 1] === "<" || text[i + 1] === "`")) {
      // An escaped `<` is a plain `<`; an escaped backtick opens no code span.
      out += text[i + 1] === "<" ? "&lt;" : "\\`";
      i += 2;
      continue;
    }
    if (c === "`") {
      let n = 1;
      while (text[i + n] === "`") n++;
      const close = closingRun(text, i + n, n);
      if (close === -1) {
        out += "`".repeat(n);
        i += n;
        continue;
      }
      const content = text.slice(i + n, close);
      out += content.includes("<") ? codeElement(content) : text.slice(i, close + n);
      i = close + n;
      continue;
    }
    out += c === "<" ? "&lt;" : c;
    i++;
  }
  return out;
}

/** Where the next run of exactly `n` backticks at or after `from` starts, or -1. */
function closingRun(text: string, from: number, n: number): number {
  for (let at = text.indexOf("`", from); at !== -1; ) {
    let end = at;
    while (text[end] === "`") end++;
    if (end - at === n) return at;
    at = text.indexOf("`", end);
  }
  return -1;
}
