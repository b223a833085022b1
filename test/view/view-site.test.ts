// archive.md §4 in a real browser: the reading view of real sessions (a real Edit is a diff, a real Codex
// thread opens with its first typed prompt, no provenance card until "all records"), and the site of
// `pixir export html --all` opened from file:// (the index, its filter, its relative links, phone width and
// dark mode), incremental on a rerun; a hostile Log with tool-shaped payloads, and view.md §1.2's checks
// on every page of the site. One browser for the file.
import { createServer, type Server } from "node:http";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, run, tempDir, writeRaw, type Ev } from "../support/cli.js";
import { CLAUDE_FIXTURES } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";
import { browserAvailable, hostileEvents, launchBrowser, VIEW_OUTPUT } from "../support/view.js";

// The callbacks of page.evaluate run in the page; the type check of this Node program knows no DOM.
declare const document: any;
declare const window: any;
declare const getComputedStyle: any;

const pixir = (ws: string, ...args: string[]) => {
  const r = run("pixir", args, { cwd: ws });
  expect(r.code, `pixir ${args.join(" ")}: ${r.stderr}`).toBe(0);
  return r;
};

/** The real Claude and Codex fixtures imported into one Workspace. */
function realWorkspace(): string {
  const ws = tempDir("pixir-site-real-");
  pixir(ws, "import", "claude", CLAUDE_FIXTURES);
  pixir(ws, "import", "codex", CODEX_FIXTURES_DIR);
  return ws;
}

/** A hostile Log whose tool calls carry the payloads too (a diff, a command, a checklist, a report). */
function hostileToolEvents(listener: string): Ev[] {
  const evil = `<script>window.__pwned='tool'</script><img src="${listener}/tool-img" onerror="window.__pwned='tool-onerror'">`;
  return [
    ...hostileEvents(listener),
    { type: "user_message", data: { text: `<environment_context>${evil}</environment_context>` } },
    { type: "tool_call", data: { call_id: "e1", name: "Edit", args: { file_path: `${evil}.ts`, old_string: evil, new_string: `${evil}\n</script>` } } },
    { type: "tool_result", data: { call_id: "e1", ok: false, output: evil } },
    { type: "tool_call", data: { call_id: "b1", name: "Bash", args: { command: `echo '${evil}'` } } },
    { type: "tool_result", data: { call_id: "b1", ok: true, output: evil } },
    { type: "tool_call", data: { call_id: "t1", name: "TodoWrite", args: { todos: [{ content: evil, status: "completed" }] } } },
    { type: "tool_call", data: { call_id: "a1", name: "Task", args: { description: evil, prompt: `[x](javascript:window.__pwned='task') ${evil}` } } },
    { type: "tool_result", data: { call_id: "a1", ok: true, output: `report ${evil} [y](javascript:window.__pwned='report')` } },
    { type: "tool_call", data: { call_id: "p1", name: "apply_patch", args: { input: `*** Begin Patch\n*** Update File: ${evil}\n@@\n-${evil}\n+${evil}\n*** End Patch\n` } } },
    { type: "history_compaction", data: { summary: evil, range: { from_seq: 0, to_seq: 3 } } },
  ];
}

describe.skipIf(!browserAvailable())("the reading view and the site in Chromium", () => {
  let browser: BrowserContext;
  let server: Server;
  const hits: string[] = [];
  let listener = "";
  let ws = "";
  let site = "";
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? "");
      res.end("no");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    listener = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ws = realWorkspace();
    writeRaw(ws, "evil", hostileToolEvents(listener));
    site = path.join(tempDir("pixir-site-out-"), "site");
    pixir(ws, "export", "html", "--all", "--out", site);
    browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  interface Opened {
    page: Page;
    errors: string[];
    requests: string[];
    dialogs: string[];
  }

  async function open(url: string, options: { width?: number; dark?: boolean } = {}): Promise<Opened> {
    const page = await browser.newPage();
    if (options.width !== undefined) await page.setViewportSize({ width: options.width, height: 844 });
    if (options.dark === true) await page.emulateMedia({ colorScheme: "dark" });
    const opened: Opened = { page, errors: [], requests: [], dialogs: [] };
    page.on("console", (m) => m.type() === "error" && opened.errors.push(m.text()));
    page.on("pageerror", (e) => opened.errors.push(String(e)));
    page.on("request", (r) => opened.requests.push(r.url()));
    page.on("dialog", (d) => {
      opened.dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(url);
    return opened;
  }

  const pageOf = (id: string) => path.join(site, "sessions", `${id}.html`);
  const openSession = async (id: string, options: { width?: number; dark?: boolean } = {}) => {
    const opened = await open(pathToFileURL(pageOf(id)).href, options);
    await opened.page.locator(".card:visible").first().waitFor();
    return opened;
  };

  it("shows a real Edit as a diff of its own lines under its path", async () => {
    const id = "258c7280-ae70-4798-800f-63464d01a85d";
    const edit = readEvents(ws, id).find((e) => e.type === "tool_call" && e.data.name === "Edit" && String(e.data.args.new_string).includes("\n"))!;
    const { page, errors } = await openSession(id);
    const card = page.locator(`[id="${id}/${edit.seq}"]`);
    await page.evaluate((sel: string) => document.querySelector(sel)?.scrollIntoView(), `[id="${id}/${edit.seq}"]`).catch(() => undefined);
    await page.waitForFunction((sel: string) => document.querySelector(sel) !== null, `[id="${id}/${edit.seq}"]`);
    expect(await card.locator(".tool-path").first().textContent()).toBe(edit.data.args.file_path);
    const added = await card.locator("pre.diff .add").allTextContents();
    const removed = await card.locator("pre.diff .del").allTextContents();
    const newLines = String(edit.data.args.new_string).split("\n");
    const oldLines = String(edit.data.args.old_string).split("\n");
    expect(added.length + removed.length).toBeGreaterThan(0);
    for (const l of added) expect(newLines).toContain(l.replace(/^\+/, "").replace(/\n$/, ""));
    for (const l of removed) expect(oldLines).toContain(l.replace(/^-/, "").replace(/\n$/, ""));
    // No raw JSON of the arguments on the card.
    expect(await card.textContent()).not.toContain('"old_string"');
    expect(errors).toEqual([]);
    await page.close();
  });

  it("opens a real Codex thread with its first typed prompt, its AGENTS.md folded as context", async () => {
    const id = "019e1625-789d-76c0-80ab-3724b5ddb799";
    const events = readEvents(ws, id);
    const agents = events.find((e) => e.type === "user_message" && String(e.data.text).startsWith("# AGENTS.md instructions"));
    expect(agents).toBeDefined();
    const { page, errors } = await openSession(id);
    const first = page.locator(".cards > .card:visible").first();
    expect(await first.getAttribute("class")).toContain("message user");
    // The first prompt a person typed: the first user message that is not injected text.
    const typed = events.find((e) => e.type === "user_message" && !/^\s*(#\s*AGENTS\.md|<)/i.test(String(e.data.text)))!;
    expect((await first.locator(".body").textContent())?.trim()).toBe(String(typed.data.text).trim());
    expect(await page.locator(".session-header h1").textContent()).toBe(String(typed.data.text).trim());
    // The AGENTS.md block is behind the fold before the first prompt.
    expect(await page.locator(`[id="${id}/${agents!.seq}"]`).isVisible()).toBe(false);
    await page.locator(".preamble-marker .fold").click();
    expect(await page.locator(`[id="${id}/${agents!.seq}"]`).isVisible()).toBe(true);
    expect(await page.locator(`[id="${id}/${agents!.seq}"]`).getAttribute("class")).toContain("context");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("shows no provenance or usage card by default; 'all records' shows every one", async () => {
    const id = "ef958aa1-0e93-49f0-bb71-150f63befcd1";
    const events = readEvents(ws, id);
    const records = events.filter((e) => e.type === "provider_usage" || (e.type === "workflow_event" && /^claude_/.test(String(e.data.event))));
    expect(records.length).toBeGreaterThan(0);
    const { page, errors } = await openSession(id);
    await page.waitForFunction(() => document.querySelector(".cards")?.getAttribute("aria-busy") === "false");
    const visibleTypes = () => page.locator(".cards > .card:visible").evaluateAll((cards) => cards.map((c: any) => c.dataset.type));
    expect((await visibleTypes()).filter((t: string) => t === "workflow_event" || t === "provider_usage")).toEqual([]);
    // No visible card without content: every assistant card has text.
    const empty = await page.locator(".cards > .card.message:visible").evaluateAll((cards) => cards.filter((c: any) => c.querySelector(".body") === null && c.querySelector(".images") === null).length);
    expect(empty).toBe(0);
    await page.getByLabel("all records").check();
    const shown = await visibleTypes();
    expect(shown.filter((t: string) => t === "workflow_event" || t === "provider_usage").length).toBe(records.length);
    // A subagent call links to the subagent's Log, its report rendered as Markdown.
    await page.getByLabel("all records").uncheck();
    const task = page.locator(".card.tool-subagent").first();
    expect(await task.locator(".log-link").count()).toBe(1);
    expect(await task.locator(".report").count()).toBe(1);
    await task.locator(".log-link").click();
    expect(await page.locator(".session-header h1").getAttribute("title")).toMatch(new RegExp(`^${id}\\.agent-`));
    expect(errors).toEqual([]);
    await page.close();
  });

  it("marks a real compaction as a divider with its summary folded, and dims what it replaced", async () => {
    const id = "258c7280-ae70-4798-800f-63464d01a85d";
    const { page } = await openSession(id);
    const divider = page.locator(".card.checkpoint").first();
    await divider.waitFor({ state: "attached" });
    expect(await divider.textContent()).toContain("the model no longer sees the cards above");
    expect(await divider.locator("details").getAttribute("open")).toBeNull();
    expect(await page.locator(".card.dimmed").count()).toBeGreaterThan(0);
    expect(await page.locator(".session-header .legend").count()).toBe(1);
    await page.close();
  });

  it("writes an index grouped by project that filters in the page and links relatively from file://", async () => {
    const catalog = run("pixir", ["ls", "--json"], { cwd: ws });
    const { page, errors, requests } = await open(pathToFileURL(path.join(site, "index.html")).href);
    const rows = page.locator("tr[data-search]");
    const links = await rows.locator("td.title a").evaluateAll((as) => as.map((a: any) => a.getAttribute("href")));
    expect(links.length).toBeGreaterThan(10);
    for (const href of links) {
      expect(href).toMatch(/^sessions\/[^/]+\.html$/);
      expect(existsSync(path.join(site, decodeURIComponent(href)))).toBe(true);
    }
    if (catalog.code === 0) expect(await page.locator("section.project h2").count()).toBeGreaterThan(1);
    // The filter box searches titles and first prompts.
    await page.locator("#filter").fill("show tools");
    await expect.poll(() => page.locator("tr[data-search]:visible").count()).toBeGreaterThan(0);
    const titles = await page.locator("tr[data-search]:visible").evaluateAll((trs) => trs.map((t: any) => t.dataset.search));
    expect(titles.every((t: string) => t.includes("show") && t.includes("tools"))).toBe(true);
    expect(await page.locator("tr[data-search]:visible").count()).toBeLessThan(links.length);
    // A link opens the family's page from file://, and the page links home.
    await page.locator("tr[data-search]:visible td.title a").first().click();
    await page.locator(".card:visible").first().waitFor();
    await page.locator(".sidebar .home").click();
    await page.locator("#filter").waitFor();
    expect(errors).toEqual([]);
    expect(requests.every((u) => u.startsWith("file://") || u.startsWith("data:"))).toBe(true);
    await page.close();
  });

  it("reads at phone width and in dark mode", async () => {
    const id = "019e1625-789d-76c0-80ab-3724b5ddb799";
    const { page, errors } = await openSession(id, { width: 390, dark: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const colors = await page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    expect(colors[0]).toBe("rgb(22, 24, 29)");
    mkdirSync(VIEW_OUTPUT, { recursive: true });
    await page.screenshot({ path: path.join(VIEW_OUTPUT, "codex-phone-dark.png") });
    const index = await open(pathToFileURL(path.join(site, "index.html")).href, { width: 390, dark: true });
    expect(await index.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
    await index.page.close();
    await page.close();
  });

  it("keeps view.md §1.2 on every page of the site: nothing runs, loads or leaves", async () => {
    const pages = [path.join(site, "index.html"), ...readdirSync(path.join(site, "sessions")).map((f) => path.join(site, "sessions", f))];
    for (const file of pages) {
      const { page, errors, requests, dialogs } = await open(pathToFileURL(file).href);
      if (file.endsWith(".html") && !file.endsWith("index.html")) {
        await page.locator(".card:visible").first().waitFor();
        // The hostile page shows everything: records, folded groups, collapsed parts (built when opened).
        if (file.endsWith("evil.html")) {
          await page.getByLabel("all records").check();
          await page.waitForFunction(() => document.querySelector(".cards")?.getAttribute("aria-busy") === "false");
          for (const fold of await page.locator(".fold").all()) await fold.click();
          await page.locator("details").evaluateAll((all) => all.forEach((d: any) => (d.open = true)));
          await page.waitForTimeout(200);
        }
      }
      const found = await page.evaluate(() => ({
        pwned: window.__pwned,
        scripts: [...document.scripts].filter((s: any) => s.type !== "application/json").length,
        handlers: [...document.querySelectorAll("*")].flatMap((el: any) => [...el.attributes].filter((a: any) => a.name.startsWith("on")).map((a: any) => `${el.tagName}[${a.name}]`)),
        styled: document.querySelectorAll("[style]").length,
        dangerous: [...document.querySelectorAll("svg, iframe, object, embed, form, base, link, meta[http-equiv=refresh], math")].map((el: any) => el.tagName),
        links: [...document.querySelectorAll("a[href]")].map((a: any) => a.getAttribute("href")).filter((h: string) => !/^(#|https?:|mailto:|sessions\/|\.\.\/index\.html$)/.test(h)),
      }));
      expect(found, file).toEqual({ pwned: undefined, scripts: 1, handlers: [], styled: 0, dangerous: [], links: [] });
      expect(dialogs, file).toEqual([]);
      expect(errors, file).toEqual([]);
      expect(requests.filter((u) => !u.startsWith("data:")), file).toEqual([pathToFileURL(file).href]);
      await page.close();
    }
    expect(hits).toEqual([]);
  }, 240_000);
});

describe("pixir export html --all", () => {
  it("rewrites only the pages whose Logs changed, removes gone families, and refuses a folder that is not a site", () => {
    const ws = tempDir("pixir-site-cli-");
    writeRaw(ws, "one", [{ type: "user_message", data: { text: "first <b>session</b>" } }]);
    writeRaw(ws, "two", [{ type: "user_message", data: { text: "second session" } }]);
    const out = path.join(tempDir("pixir-site-cli-out-"), "site");
    const first = JSON.parse(pixir(ws, "export", "html", "--all", "--out", out, "--json").stdout);
    expect(first).toMatchObject({ ok: true, pages: 2, written: 2, unchanged: 0, removed: 0 });
    const mtime = (id: string) => statSync(path.join(out, "sessions", `${id}.html`)).mtimeMs;
    const before = mtime("two");
    expect(JSON.parse(pixir(ws, "export", "html", "--all", "--out", out, "--json").stdout)).toMatchObject({ written: 0, unchanged: 2 });
    expect(run("pixir", ["append", "one"], { cwd: ws, input: '{"type":"assistant_message","data":{"text":"an answer"}}\n' }).code).toBe(0);
    expect(JSON.parse(pixir(ws, "export", "html", "--all", "--out", out, "--json").stdout)).toMatchObject({ written: 1, unchanged: 1 });
    expect(readFileSync(path.join(out, "sessions", "one.html"), "utf8")).toContain("an answer");
    expect(mtime("two")).toBe(before);
    // The index escapes what a Log says.
    const index = readFileSync(path.join(out, "index.html"), "utf8");
    expect(index).toContain("first &lt;b&gt;session&lt;/b&gt;");
    expect(index).toContain('href="sessions/one.html"');
    // A family gone from the Workspace loses its page.
    unlinkSync(path.join(ws, ".pixir", "sessions", "two.ndjson"));
    expect(JSON.parse(pixir(ws, "export", "html", "--all", "--out", out, "--json").stdout)).toMatchObject({ pages: 1, written: 0, unchanged: 1, removed: 1 });
    expect(existsSync(path.join(out, "sessions", "two.html"))).toBe(false);
    // A folder that holds other things is refused, and nothing is written in it.
    const other = tempDir("pixir-site-other-");
    writeFileSync(path.join(other, "mine.txt"), "mine");
    const r = run("pixir", ["export", "html", "--all", "--out", other], { cwd: ws });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("already_exists");
    expect(readdirSync(other)).toEqual(["mine.txt"]);
    // A page that cannot be put in place (a folder holds its name) fails the run with the cause; the pages
    // made meanwhile are whole, no temp file is left, and the manifest is not rewritten.
    const manifest = readFileSync(path.join(out, ".pixir-site.json"), "utf8");
    writeRaw(ws, "three", [{ type: "user_message", data: { text: "third session" } }]);
    mkdirSync(path.join(out, "sessions", "three.html", "inside"), { recursive: true });
    const blocked = run("pixir", ["export", "html", "--all", "--out", out, "--json"], { cwd: ws });
    expect(blocked.code, blocked.stderr).toBe(1);
    expect(blocked.stdout + blocked.stderr).toContain(path.join(out, "sessions", "three.html"));
    expect(readdirSync(path.join(out, "sessions")).filter((f) => f.includes(".tmp-"))).toEqual([]);
    expect(readFileSync(path.join(out, ".pixir-site.json"), "utf8")).toBe(manifest);
    // --all needs --out and takes no id.
    expect(run("pixir", ["export", "html", "--all"], { cwd: ws }).code).toBe(2);
    expect(run("pixir", ["export", "html", "one", "--all", "--out", out], { cwd: ws }).code).toBe(2);
    expect(run("pixir", ["export", "html"], { cwd: ws }).code).toBe(2);
  });
});
