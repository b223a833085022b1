// view.md §1.2: a Log's JSON inside the page's `<script type="application/json">` blocks cannot end or
// confuse them, and means the same to JSON.parse.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contentSecurityPolicy, escapeHtml, scriptSafeJson } from "../../src/view/html-export.js";
import { pageScriptSource, PAGE_SCRIPT } from "../../src/view/page-assets.js";

const tricky = fc.oneof(
  fc.string(),
  fc.constantFrom("</script>", "</SCRIPT >", "<!--", "<script>", "-->", "<", "<<", "\u2028", "\u2029", "\u0000", "</style>", "]]>"),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small" }, tricky, fc.integer(), fc.boolean(), fc.constant(null), fc.array(tie("node"), { maxLength: 4 }), fc.dictionary(tricky, tie("node"), { maxKeys: 4 })),
})).node;

describe("scriptSafeJson", () => {
  it("keeps the JSON's meaning and leaves no `<` in it", () => {
    fc.assert(
      fc.property(value, (v) => {
        const out = scriptSafeJson(Buffer.from(JSON.stringify(v), "utf8")).toString("utf8");
        expect(out).not.toContain("<");
        expect(JSON.parse(out)).toEqual(v);
      }),
      { numRuns: 500 },
    );
  });

  it("returns the same buffer when there is nothing to escape", () => {
    const b = Buffer.from('{"a":"b"}');
    expect(scriptSafeJson(b)).toBe(b);
  });
});

describe("the page's policy", () => {
  it("allows no network, and only the page's own script by its hash", () => {
    const csp = contentSecurityPolicy();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("img-src data:;");
    expect(csp).toContain(`script-src ${pageScriptSource()};`);
    expect(csp).not.toMatch(/unsafe-eval|https?:|\*/);
    expect(pageScriptSource()).toMatch(/^'sha256-[A-Za-z0-9+/]{43}='$/);
    // The script can be inlined: nothing in it ends its element or opens a comment.
    expect(PAGE_SCRIPT).not.toMatch(/<\/script|<!--|<script/i);
  });

  it("escapes text for HTML", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });
});
