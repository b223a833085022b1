// view.md §2: the Markdown export cannot be broken out of. markdown-it (a CommonMark parser, the
// renderer of the page) is the oracle: whatever a Log holds, a fenced block parses back to exactly that
// text, and a message's text leaves no HTML and no open code block behind it.
import fc from "fast-check";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { codeSpan, fenced, safeMarkdown } from "../../src/view/md-export.js";

const commonmark = new MarkdownIt("commonmark");

/** Text rich in what breaks Markdown: backtick and tilde runs, fences, HTML, newlines. */
const nasty = fc
  .array(fc.constantFrom("`", "``", "```", "````", "~~~", "\n", "\n```\n", "\n~~~~\n", "<script>", "</details>", "<b>", "a", " ", "    ", "*", "<!--", "\r\n", "\r", "&amp;", "x`y"), { maxLength: 40 })
  .map((parts) => parts.join(""));

describe("fenced", () => {
  it("gives back exactly its text, whatever backticks the text holds", () => {
    fc.assert(
      fc.property(fc.oneof(nasty, fc.string()), (text) => {
        const tokens = commonmark.parse(`${fenced(text, "text")}\nafter\n`, {});
        const fences = tokens.filter((t) => t.type === "fence");
        expect(fences).toHaveLength(1);
        const body = text === "" || text.endsWith("\n") ? text : `${text}\n`;
        // CommonMark reads CR and CRLF as line ends; the content is the text with its line ends as LF.
        expect(fences[0]!.content).toBe(body.replace(/\r\n?/g, "\n"));
        expect(tokens.at(-2)?.content).toBe("after");
      }),
      { numRuns: 400 },
    );
  });
});

describe("codeSpan", () => {
  it("is one code span holding the text", () => {
    fc.assert(
      fc.property(fc.oneof(nasty, fc.string()).map((s) => s.replace(/[\r\n]/g, " ")).filter((s) => s !== ""), (text) => {
        const inline = commonmark.parseInline(`x ${codeSpan(text)} y`, {})[0]!.children!;
        const spans = inline.filter((t) => t.type === "code_inline");
        expect(spans).toHaveLength(1);
        // CommonMark strips one space on each side when both are there (and the text is not all spaces).
        const stripped = text.startsWith(" ") && text.endsWith(" ") && text.trim() !== "" ? text.slice(1, -1) : text;
        expect([text, stripped]).toContain(spans[0]!.content);
      }),
      { numRuns: 400 },
    );
  });
});

describe("safeMarkdown", () => {
  const html = new MarkdownIt({ html: true });
  it("leaves no raw HTML and no open block: what follows a message is outside it", () => {
    fc.assert(
      fc.property(nasty, (text) => {
        const tokens = html.parse(`${safeMarkdown(text)}\n\n**after**\n`, {});
        expect(tokens.filter((t) => t.type === "html_block")).toEqual([]);
        // The only markup is the <code> element safeMarkdown writes for a code span that holds a `<`.
        const inline = tokens.flatMap((t) => t.children ?? []);
        expect(inline.filter((t) => t.type === "html_inline" && t.content !== "<code>" && t.content !== "</code>")).toEqual([]);
        // The last block is a top-level paragraph holding just the strong "after".
        const last = tokens.at(-2)!;
        expect(last.type).toBe("inline");
        expect(last.content).toBe("**after**");
        expect(tokens.at(-3)).toMatchObject({ type: "paragraph_open", level: 0 });
        expect(last.children!.filter((t) => t.type !== "text" || t.content !== "").map((t) => t.type)).toEqual(["strong_open", "text", "strong_close"]);
      }),
      { numRuns: 400 },
    );
  });

  it("keeps code as written and escapes HTML outside it (a span holding `<` becomes <code> with entities)", () => {
    expect(safeMarkdown("a <b>bold</b> `x = y` and\n```html\n<div>\n```\n")).toBe("a &lt;b>bold&lt;/b> `x = y` and\n```html\n<div>\n```\n");
    expect(safeMarkdown("see `<div>` here")).toBe("see <code>&#60;div&#62;</code> here");
    expect(safeMarkdown("open\n````js\nlet a = 1;")).toBe("open\n````js\nlet a = 1;\n````");
    expect(safeMarkdown("``a ` b`` <i>")).toBe("``a ` b`` &lt;i>");
    expect(safeMarkdown("a ``` b <i> \\<b> \\`<i>`")).toBe("a ``` b &lt;i> &lt;b> \\`&lt;i>`");
  });
});
