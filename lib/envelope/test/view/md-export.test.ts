// view.md §2: the Markdown export cannot be broken out of. markdown-it (a CommonMark parser, the
// renderer of the page) is the oracle: whatever a Log holds, a fenced block parses back to exactly that
// text, and a message's text leaves no HTML and no open code block behind it.
import fc from "fast-check";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { codeSpan, fenced, markdownChunks, MD_TOOL_MODES, safeMarkdown, type MdExportPlan } from "../../src/view/md-export.js";

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

describe("markdownChunks", () => {
  const html = new MarkdownIt({ html: true });
  const event = (seq: number, type: string, data: Record<string, unknown>) => ({ id: `e${seq}`, session_id: "s", seq, ts: "2026-01-01T00:00:00.000Z", type, data });
  /** A History whose every string field is hostile, then a last message that must stay outside all of it. */
  const history = (t: string) => [
    event(0, "session_fork", { parent_session_id: t, forked_to_seq: t, strategy: t, replay_event_count: 0 }),
    event(1, "user_message", { text: t }),
    event(2, "tool_call", { call_id: "c1", name: t, args: { command: t } }),
    event(3, "tool_result", { call_id: "c1", ok: false, output: t }),
    event(4, "tool_result", { call_id: t, tool_name: t, output: t }),
    event(5, "tool_call", { call_id: t, name: t, args: t }),
    event(6, "branch_summary", { summary: t, range: { from_seq: t, to_seq: 1 } }),
    event(7, "assistant_message", { text: t }),
    event(8, "user_message", { text: "SENTINEL" }),
  ];
  const render = async (t: string, tools: (typeof MD_TOOL_MODES)[number]) => {
    const events = history(t);
    const log = { eventCount: events.length, items: async function* () { for (const e of events) yield { event: e }; } };
    const plan = { id: "s", tools, title: "Session s", sections: [{ id: "s", skip: 0, heading: null, history: log }] } as unknown as MdExportPlan;
    let out = "";
    for await (const chunk of markdownChunks(plan)) out += chunk;
    return out;
  };

  it("lets no field of a Log end a block early, or put HTML in the page", async () => {
    await fc.assert(
      fc.asyncProperty(nasty, fc.constantFrom(...MD_TOOL_MODES), async (t, tools) => {
        const tokens = html.parse(await render(t, tools), {});
        expect(tokens.at(-2)).toMatchObject({ type: "inline", content: "SENTINEL" });
        expect(tokens.at(-3)).toMatchObject({ type: "paragraph_open", level: 0 });
        for (const b of tokens.filter((k) => k.type === "html_block")) expect(b.content).toMatch(/^(<details( open)?><summary>[^<>\n]*<\/summary>|<\/details>)\n$/);
        const inline = tokens.flatMap((k) => k.children ?? []).filter((k) => k.type === "html_inline");
        expect(inline.filter((k) => k.content !== "<code>" && k.content !== "</code>")).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same bytes for the same History", async () => {
    expect(await render("a `b` <c>", "full")).toBe(await render("a `b` <c>", "full"));
  });
});
