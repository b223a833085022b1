// Support for the tests of `pixir export html` and `pixir export md` (view.md §3): the demo family, a
// hostile Log, and Chromium from Debian's packages driven by playwright-core (never a downloaded browser).
import { cpSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { ROOT, tempDir, type Ev } from "./cli.js";
import { runInThread } from "./thread.js";

export const CHROMIUM = "/usr/bin/chromium";
/** Where the browser tests leave what a person may want to look at (screenshots). */
export const VIEW_OUTPUT = path.join(ROOT, ".tmp", "test-output", "view");

/**
 * Without Chromium the browser tests cannot run. CI installs it (.ci/run, which sets CI), so there its
 * absence fails loudly; elsewhere the tests are skipped with the reason, so the README's test command
 * passes on a machine with only Node and npm (the closing line counts them as skipped).
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const missing = `${CHROMIUM} is missing: install Chromium (apt-get install chromium) to run the browser tests`;
  if (process.env.CI) throw new Error(`${missing}; .ci/run should have installed it`);
  console.warn(`skipping the browser tests: ${missing}`);
  return false;
}

/** Flags that keep a headless Chromium on a closed network quiet (no background requests of its own). */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-extensions",
  "--no-default-browser-check",
];

export async function launchBrowser() {
  const { chromium } = await import("playwright-core");
  return chromium.launchPersistentContext(tempDir("pixir-chromium-"), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
}

const pixir = (ws: string, args: string[], input?: string) => {
  const r = runInThread("pixir", args, { cwd: ws, input });
  expect(r.code, `pixir ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r;
};

const lines = (events: object[]) => events.map((e) => JSON.stringify(e)).join("\n") + "\n";

const LONG_OUTPUT = Array.from({ length: 40 }, (_, i) => `ok ${i + 1} - parseDate case ${i + 1}`).join("\n");

/**
 * The demo family: the example Workspace's `demo`, forked as in the Quick start (`demo-utc-fix`, replay_v1
 * with a branch summary) and continued; a share_v1 fork `demo-alt`; and a subagent child `demo-sub`.
 */
export function demoFamily(): string {
  const ws = tempDir("pixir-view-demo-");
  cpSync(path.join(ROOT, "examples", "workspace"), ws, { recursive: true });
  pixir(ws, ["fork", "demo", "--to-seq", "8", "--summarize", "--child-id", "demo-utc-fix"]);
  pixir(
    ws,
    ["append", "demo-utc-fix"],
    lines([
      { type: "reasoning", data: { item: "The parser should append a UTC designator before parsing." } },
      { type: "tool_call", data: { call_id: "call_9", name: "bash", args: { command: "npm test -- dates" } } },
      { type: "tool_result", data: { call_id: "call_9", ok: true, output: LONG_OUTPUT } },
      {
        type: "assistant_message",
        data: {
          text: "All **40** date cases pass now:\n\n| case | result |\n| --- | --- |\n| `2026-07-20` | UTC midnight |\n\n```ts\nexport function parseDate(s: string) {\n  return new Date(`${s}T00:00:00Z`);\n}\n```",
        },
      },
    ]),
  );
  pixir(ws, ["fork", "demo", "--to-seq", "4", "--strategy", "share_v1", "--child-id", "demo-alt"]);
  pixir(
    ws,
    ["append", "demo-alt"],
    lines([
      { type: "user_message", data: { text: "Try a date library instead." } },
      { type: "tool_call", data: { call_id: "alt_1", name: "bash", args: { command: "npm ls date-fns" } } },
      { type: "tool_result", data: { call_id: "alt_1", ok: false, output: "npm ERR! missing: date-fns" } },
      // A checkpoint standing for everything through seq 6: those cards are dimmed.
      { type: "history_compaction", data: { strategy: "deterministic_operational_summary_v1", summary: "Read the parser and its test; date-fns is not installed.", range: { from_seq: 0, to_seq: 6 } } },
    ]),
  );
  pixir(ws, ["append", "demo-sub"], lines([{ type: "user_message", data: { text: "List every caller of parseDate." } }, { type: "assistant_message", data: { text: "Two callers: `src/report.ts` and `src/api.ts`." } }]));
  pixir(
    ws,
    ["append", "demo"],
    lines([{ type: "subagent_event", data: { subagent_id: "sa-1", child_session_id: "demo-sub", event: "finished", status: "finished", agent: "explorer", task: "find the callers of parseDate", workspace: ws } }]),
  );
  return ws;
}

/** Every message text of the demo family, for "every message is visible". */
export const DEMO_LOGS = ["demo", "demo-utc-fix", "demo-alt", "demo-sub"];

/** A Log full of what a hostile web page might put into a tool result or a message (view.md §1.2). */
export function hostileEvents(listener: string): Ev[] {
  const url = (p: string) => `${listener}/${p}`;
  const html = [
    "<script>window.__pwned = 'script'</script>",
    `<img src="${url("img-tag")}" onerror="window.__pwned='onerror'">`,
    `<svg onload="window.__pwned='svg'"><script>window.__pwned='svg-script'</script><image href="${url("svg-image")}"/></svg>`,
    `<div style="background:url(${url("css-url")})">styled</div>`,
    `<iframe src="${url("iframe")}"></iframe><object data="${url("object")}"></object>`,
    `<link rel="stylesheet" href="${url("link")}"><meta http-equiv="refresh" content="0;url=${url("refresh")}">`,
    `<base href="${listener}/"><form action="${url("form")}"><button>go</button></form>`,
    `<a href="javascript:window.__pwned='a-href'">click</a>`,
  ].join("\n");
  const markdown = [
    "[js link](javascript:window.__pwned='md-link') [vb](vbscript:msgbox(1)) [file](file:///etc/passwd) [data](data:text/html,<script>alert(1)</script>)",
    `![remote image](${url("md-image")}) ![svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIi8+)`,
    "```html\n</script><script>window.__pwned='fence'</script>\n```",
    "`</script><img src=x onerror=alert(1)>` and a plain <b onmouseover=alert(1)>bold</b>",
  ].join("\n\n");
  const bigLine = "A".repeat(1024 * 1024);
  return [
    { type: "user_message", data: { text: html } },
    { type: "assistant_message", data: { text: markdown } },
    { type: "reasoning", data: { item: `<script>window.__pwned='reasoning'</script> ${url("reasoning")}` } },
    { type: "tool_call", data: { call_id: "h1", name: "<b onmouseover=alert(1)>fetch</b>", args: { url: url("args"), "</script><script>alert(1)</script>": 1 } } },
    { type: "tool_result", data: { call_id: "h1", ok: true, output: `${html}\n</script><!--<script>window.__pwned='comment'</script>-->` } },
    { type: "branch_summary", data: { summary: html, strategy: "<img src=x onerror=alert(1)>", range: { from_seq: 0, to_seq: 4 } } },
    { type: "workflow_event", data: { event: "<script>alert(1)</script>", "<img src=x onerror=alert(1)>": `${url("json")}` } },
    { type: "user_message", data: { text: "look", content: [{ type: "image", mimeType: "image/svg+xml", data: "PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIi8+" }] } },
    { type: "tool_call", data: { call_id: "big", name: "read", args: { path: "big.txt" } } },
    { type: "tool_result", data: { call_id: "big", ok: true, output: bigLine } },
    { type: "user_message", data: { text: bigLine } },
  ];
}

export function writeOut(name: string, bytes: Buffer | string): string {
  mkdirSync(VIEW_OUTPUT, { recursive: true });
  const file = path.join(VIEW_OUTPUT, name);
  writeFileSync(file, bytes);
  return file;
}

/** A Log of `count` Events as a long session has them (view.md §1.3's page of 10,000): prompts, tool calls, answers with code. */
export function longSession(count: number): Ev[] {
  const events: Ev[] = [];
  for (let i = 0; events.length < count; i++) {
    events.push({ type: "user_message", data: { text: `Question ${i}: what does **step ${i}** do? ${"lorem ipsum ".repeat(40)}` } });
    events.push({ type: "tool_call", data: { call_id: `c${i}`, name: "bash", args: { command: `cat step-${i}.txt` } } });
    events.push({ type: "tool_result", data: { call_id: `c${i}`, ok: true, output: `line\n`.repeat(30) } });
    events.push({ type: "assistant_message", data: { text: `Step ${i} prints:\n\n\`\`\`bash\necho step ${i}\n\`\`\`\n${"dolor sit amet ".repeat(30)}` } });
  }
  return events;
}
