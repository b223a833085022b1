// Building page nodes. Every string from a Log goes in as a text node (textContent), never as HTML; the
// only HTML the page parses is sanitised Markdown (markdown.ts).

type Child = Node | string | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (attrs !== null) for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  for (const child of children) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

/**
 * A `<details>` whose body is built when it is first opened (view.md §1.3: collapsed parts are rendered
 * when opened), or at once when it starts open.
 */
export function lazyDetails(className: string, summary: Child[], open: boolean, body: () => Node): HTMLDetailsElement {
  const details = el("details", { class: className }, el("summary", null, ...summary));
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    details.append(body());
  };
  if (open) {
    details.open = true;
    build();
  } else details.addEventListener("toggle", () => details.open && build());
  return details;
}

export function pre(text: string, className = ""): HTMLPreElement {
  const node = el("pre", className === "" ? null : { class: className });
  node.textContent = text;
  return node;
}

export const lineCount = (text: string): number => {
  let n = text.length === 0 ? 0 : 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < text.length - 1; i = text.indexOf("\n", i + 1)) n++;
  return n;
};
