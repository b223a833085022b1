// The web page of `pixir export html` (view.md §1): its script and style are source files under
// lib/envelope/src/view/page/, bundled here with the Markdown renderer, the sanitiser and the highlighter
// into two strings, which scripts/build.mjs (and vitest.config.ts) put into the library as the defines
// __PIXIR_PAGE_SCRIPT__ and __PIXIR_PAGE_STYLE__. The page loads nothing at run time.
import { build } from "esbuild";
import path from "node:path";
import { Script } from "node:vm";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const pageDir = path.join(root, "lib/envelope/src/view/page");

/**
 * Text that would end the element it is inlined in (`</script`), or make the HTML parser miss its end
 * (`<!--` then `<script` puts a script element's text in the "double escaped" state).
 */
const BREAKS_OUT = { script: /<(?:!--|\/?script)/i, style: /<\/style/i };

/**
 * In minified code these sequences occur only inside string, template and regular-expression literals,
 * where `\x3C` means `<` as well; so the script's meaning stays and the HTML parser sees none of them.
 */
const inlineSafe = (script) => script.replace(/<(?=!--|\/?script)/gi, "\\x3C");

async function bundle(entry, options) {
  const result = await build({
    entryPoints: [path.join(pageDir, entry)],
    bundle: true,
    write: false,
    minify: true,
    legalComments: "eof",
    logLevel: "warning",
    absWorkingDir: root,
    ...options,
  });
  return result.outputFiles[0].text.trim();
}

/** The page's script (an IIFE for the browser) and style, ready to be inlined. */
export async function buildPage() {
  let [script, style] = await Promise.all([
    bundle("main.ts", { platform: "browser", format: "iife", target: ["chrome110", "firefox110", "safari16"], charset: "utf8" }),
    bundle("page.css", { target: ["chrome110", "firefox110", "safari16"], charset: "utf8" }),
  ]);
  script = inlineSafe(script);
  new Script(script, { filename: "page.js" }); // still a valid script (compiled, not run)
  if (BREAKS_OUT.script.test(script)) throw new Error("page script contains </script or <!--: it cannot be inlined");
  if (BREAKS_OUT.style.test(style)) throw new Error("page style contains </style: it cannot be inlined");
  return { script, style };
}

/** The esbuild/vite `define` entries that carry the page into the library. */
export async function pageDefines() {
  const { script, style } = await buildPage();
  return { __PIXIR_PAGE_SCRIPT__: JSON.stringify(script), __PIXIR_PAGE_STYLE__: JSON.stringify(style) };
}
