// pixir export html in a real browser (view.md §3): Chromium from Debian's packages, driven by
// playwright-core, opens the page from file:// and is used as a person would: the family tree, a child
// and its fork point, search, filters, a long output opened; nothing logged as an error and no request
// made. A hostile Log stays text: no script runs, no handler is kept, nothing reaches a local listener.
import { createServer, type Server } from "node:http";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, run, tempDir, workspace, writeRaw, type Ev } from "../support/cli.js";
import { MAIN_ID, MAIN_TREE, piFixture } from "../support/pi.js";
import { browserAvailable, DEMO_LOGS, demoFamily, hostileEvents, launchBrowser, longSession, VIEW_OUTPUT } from "../support/view.js";

// The callbacks of page.evaluate run in the page; the type check of this Node program knows no DOM.
declare const document: any;
declare const window: any;

const exportPage = (ws: string, id: string, ...args: string[]): string => {
  const file = path.join(tempDir("pixir-view-page-"), `${id}.html`);
  const r = run("pixir", ["export", "html", id, "--out", file, ...args], { cwd: ws });
  expect(r.code, r.stderr).toBe(0);
  return file;
};

interface Opened {
  page: Page;
  /** Console errors and uncaught exceptions. */
  errors: string[];
  /** Every URL the page asked for, the page itself included. */
  requests: string[];
  dialogs: string[];
}

describe.skipIf(!browserAvailable())("pixir export html in Chromium", () => {
  let browser: BrowserContext;
  beforeAll(async () => {
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  async function open(file: string, hash = ""): Promise<Opened> {
    const page = await browser.newPage();
    const opened: Opened = { page, errors: [], requests: [], dialogs: [] };
    page.on("console", (m) => m.type() === "error" && opened.errors.push(m.text()));
    page.on("pageerror", (e) => opened.errors.push(String(e)));
    page.on("request", (r) => opened.requests.push(r.url()));
    page.on("dialog", (d) => {
      opened.dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(pathToFileURL(file).href + hash);
    await page.locator(".card:visible").first().waitFor();
    return opened;
  }

  /** Wait until every card of the shown History is in the page (they come in slices). */
  const settled = (page: Page) => page.waitForFunction(() => document.querySelector(".cards")?.getAttribute("aria-busy") === "false");

  /** The id of the Log shown (its title heads the page, the id is on hover). */
  const shownId = (page: Page) => page.locator(".session-header h1").getAttribute("title");
  const node = (page: Page, id: string) => page.locator(`.tree .node-label:has([data-id="${id}"])`);

  /** Cards a History gives: one per Event, and a result joins its call's card (records are cards, hidden). */
  function expectedCards(events: Array<{ type: string; data: Record<string, unknown> }>): number {
    const open = new Set<unknown>();
    let n = 0;
    for (const e of events) {
      if (e.type === "tool_result" && open.delete(e.data.call_id)) continue;
      if (e.type === "tool_call") open.add(e.data.call_id);
      n++;
    }
    return n;
  }

  describe("the demo family", () => {
    const ws = demoFamily();
    const file = exportPage(ws, "demo");

    it("shows the named Log's cards, a sidebar node per Log with the current one marked, and saves a screenshot", async () => {
      const { page, errors, requests, dialogs } = await open(file);
      await settled(page);
      const events = readEvents(ws, "demo");
      expect(await page.locator(".cards > .card").count()).toBe(expectedCards(events));
      // Usage records are cards only with "all records".
      const usage = events.filter((e) => e.type === "provider_usage").length;
      expect(usage).toBeGreaterThan(0);
      expect(await page.locator(".cards > .card:visible").count()).toBe(expectedCards(events) - usage);
      await page.getByLabel("all records").check();
      expect(await page.locator(".cards > .card:visible").count()).toBe(expectedCards(events));
      await page.getByLabel("all records").uncheck();
      const nodes = page.getByRole("treeitem");
      expect(await nodes.count()).toBe(DEMO_LOGS.length);
      for (const id of DEMO_LOGS) await expect(page.locator(`.tree .node-title[data-id="${id}"]`).count()).resolves.toBe(1);
      expect(await page.locator('[role=treeitem][aria-selected="true"] > .node-label .node-title').getAttribute("data-id")).toBe("demo");
      expect(await shownId(page)).toBe("demo");
      // The title heads the page: the first prompt of a Log with no other title.
      const first = events.find((e) => e.type === "user_message")!.data.text as string;
      expect(await page.locator(".session-header h1").textContent()).toBe(first.replace(/\s+/g, " ").trim().slice(0, 120));
      // The fork points of both children and the subagent child are marked in demo's History.
      expect(await page.locator(".fork-marker").evaluateAll((ms) => ms.map((m: any) => [m.firstChild.textContent, m.querySelector(".log-link").title]))).toEqual([
        ["forked here at seq 4 → ", "demo-alt"],
        ["forked here at seq 8 → ", "demo-utc-fix"],
      ]);
      expect(await page.locator(".subagent-marker .log-link").getAttribute("title")).toBe("demo-sub");
      await page.screenshot({ path: path.join(VIEW_OUTPUT, "demo-family.png"), fullPage: true });
      expect(errors).toEqual([]);
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([pathToFileURL(file).href]);
      await page.close();
    });

    it("moves to a child from the sidebar (and with the keyboard), showing its inherited prefix and its own Events", async () => {
      const { page, errors, requests } = await open(file);
      await node(page, "demo-utc-fix").click();
      await settled(page);
      expect(await shownId(page)).toBe("demo-utc-fix");
      expect(await page.locator('[role=treeitem][aria-selected="true"] .node-title').first().getAttribute("data-id")).toBe("demo-utc-fix");
      expect(await page.locator(".session-header").textContent()).toMatch(/fork of .* at seq 8/);
      // The markdown of its own answer is rendered: a table, highlighted code.
      await expect(page.locator(".card.message table td code").first().textContent()).resolves.toBe("2026-07-20");
      expect(await page.locator(".card.message pre code .hljs-keyword").count()).toBeGreaterThan(0);
      expect(await page.locator(".card.branch-summary").count()).toBe(1);
      // The inherited prefix is one folded block until it is opened.
      const inherited = await page.locator(".card.inherited").count();
      expect(inherited).toBeGreaterThan(0);
      expect(await page.locator(".card.inherited:visible").count()).toBe(0);
      expect(await page.locator(".inherited-marker .fold").textContent()).toMatch(/^▸ inherited from .* \(\d+ cards?\)$/);
      await page.locator(".inherited-marker .fold").click();
      expect(await page.locator(".card.inherited:visible").count()).toBeGreaterThan(0);
      // Keyboard: from the focused node, ArrowUp reaches the parent and Enter shows it.
      await page.getByRole("treeitem", { selected: true }).focus();
      await page.keyboard.press("ArrowUp");
      await page.keyboard.press("ArrowUp");
      await page.keyboard.press("Enter");
      expect(await shownId(page)).toBe("demo");
      // A fork marker leads to its child.
      await page.locator('.fork-marker .log-link[title="demo-alt"]').click();
      expect(await shownId(page)).toBe("demo-alt");
      expect(await page.locator(".card.tool .status.failed").count()).toBe(1);
      // Its checkpoint has a card of its own, and the cards it stands for (seq ≤ 6) are dimmed, not hidden.
      expect(await page.locator(".card.checkpoint").count()).toBe(1);
      const dimmed = await page.locator(".card.dimmed").evaluateAll((cards) => cards.map((c: any) => Number(c.id.split("/")[1])));
      expect(dimmed.length).toBeGreaterThan(0);
      expect(dimmed.every((seq) => seq <= 6)).toBe(true);
      // Dimmed cards are there (inherited ones once their block is open), with a legend saying why.
      if (!(await page.locator(".card.dimmed").first().isVisible())) await page.locator(".inherited-marker .fold").click();
      expect(await page.locator(".card.dimmed").first().isVisible()).toBe(true);
      expect(await page.locator(".session-header .legend").textContent()).toContain("the model no longer sees them");
      expect(await page.locator(".card.checkpoint").textContent()).toContain("compacted here");
      expect(errors).toEqual([]);
      expect(requests).toEqual([pathToFileURL(file).href]);
      await page.close();
    });

    it("opens at an anchor #<session_id>/<seq>, a tool result's too", async () => {
      const events = readEvents(ws, "demo-utc-fix");
      for (const type of ["assistant_message", "tool_result"]) {
        const seq = events.findLast((e) => e.type === type).seq;
        const { page } = await open(file, `#demo-utc-fix/${seq}`);
        expect(await shownId(page)).toBe("demo-utc-fix");
        const target = page.locator(`[id="demo-utc-fix/${seq}"]`);
        expect(await target.count()).toBe(1);
        expect(await target.isVisible()).toBe(true);
        await page.close();
      }
    });

    it("searches (every word must match) and filters", async () => {
      const { page } = await open(file, "#demo-utc-fix");
      await settled(page);
      const visibleCards = () => page.locator(".cards > .card:visible").count();
      // A search looks in the folded inherited block too; records are counted only with "all records".
      const total = await page.locator(".cards > .card:not(.record)").count();
      const atFirst = await visibleCards();
      await page.getByRole("searchbox").fill("UTC PASS");
      await expect.poll(visibleCards).toBe(1);
      expect(await page.locator(".match-count").textContent()).toBe(`1 of ${total} cards match`);
      await page.getByRole("searchbox").fill("");
      await expect.poll(visibleCards).toBe(atFirst);
      await page.getByLabel("messages only").check();
      expect(await page.locator(".cards > .card:visible").evaluateAll((cards) => cards.every((c) => c.classList.contains("message")))).toBe(true);
      await page.getByLabel("messages only").uncheck();
      await page.getByLabel("hide reasoning").check();
      expect(await page.locator(".card.reasoning:visible").count()).toBe(0);
      await page.getByLabel("hide tool output").check();
      expect(await page.locator(".tool-output:visible").count()).toBe(0);
      expect(await page.locator(".card.tool:visible").count()).toBeGreaterThan(0);
      await page.close();
    });

    it("keeps a long tool output collapsed until it is opened, then shows all of it", async () => {
      const { page, errors } = await open(file, "#demo-utc-fix");
      const output = page.locator(".card.tool", { hasText: "npm test -- dates" }).locator("details.output");
      expect(await output.getAttribute("open")).toBeNull();
      expect(await output.locator("pre").count()).toBe(0); // not even built yet
      await output.locator("summary").click();
      const text = await output.locator("pre").textContent();
      expect(text?.split("\n")).toHaveLength(40);
      expect(await output.locator("pre").isVisible()).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    });
  });

  it("shows every message of every Log of a real pi family, the tree naming every Log", async () => {
    const ws = tempDir("pixir-view-pi-");
    expect(run("pixir", ["import", "pi", piFixture(MAIN_TREE)], { cwd: ws }).code).toBe(0);
    const file = exportPage(ws, MAIN_ID);
    const index = JSON.parse(/<script type="application\/json" id="pixir-index">(.*?)<\/script>/.exec(readFileSync(file, "utf8"))![1]!);
    const { page, errors } = await open(file);
    expect(await page.getByRole("treeitem").count()).toBe(index.logs.length);
    for (const [i, log] of index.logs.entries()) {
      await page.locator(`[role=treeitem][data-log="${i}"] > .node-label`).click();
      expect(await shownId(page)).toBe(log.id);
      await settled(page);
      if ((await page.locator(".inherited-marker .fold").count()) > 0) await page.locator(".inherited-marker .fold").click();
      const shown = await page.locator(".cards").innerText();
      const r = run("pixir-log", ["cat", log.id], { cwd: ws });
      for (const line of r.stdout.trim().split("\n")) {
        const e = JSON.parse(line);
        if (e.type !== "user_message" && e.type !== "assistant_message") continue;
        const text = typeof e.data.text === "string" ? e.data.text : "";
        // Markdown is rendered, so compare the words.
        for (const word of text.split(/\s+/).filter((w: string) => /^[A-Za-z]{4,}$/.test(w)).slice(0, 5)) expect(shown, `${log.id} seq ${e.seq}`).toContain(word);
      }
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  describe("a hostile Log", () => {
    let server: Server;
    const hits: string[] = [];
    let listener = "";
    beforeAll(async () => {
      server = createServer((req, res) => {
        hits.push(req.url ?? "");
        res.end("no");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      listener = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it("renders as text: no script runs, no handler is kept, nothing is loaded", async () => {
      const ws = workspace({ evil: hostileEvents(listener) as Ev[] });
      const file = exportPage(ws, "evil");
      const { page, errors, requests, dialogs } = await open(file);
      await settled(page);
      // Open every collapsed part: they are built when opened.
      await page.locator("details").evaluateAll((all) => all.forEach((d: any) => (d.open = true)));
      await page.locator("pre.output-text").first().waitFor();
      for (const button of await page.locator(".cards summary").all()) await button.hover().catch(() => undefined);
      await page.waitForTimeout(500);
      expect(await page.evaluate(() => window.__pwned)).toBeUndefined();
      expect(dialogs).toEqual([]);
      expect(hits).toEqual([]);
      expect(requests.filter((u) => !u.startsWith("data:"))).toEqual([pathToFileURL(file).href]);
      expect(errors).toEqual([]);
      const found = await page.evaluate(() => ({
        scripts: [...document.scripts].filter((s) => s.type !== "application/json").length,
        handlers: [...document.querySelectorAll("*")].flatMap((el) => [...el.attributes].filter((a) => a.name.startsWith("on")).map((a) => `${el.tagName}[${a.name}]`)),
        styled: document.querySelectorAll("[style]").length,
        dangerous: [...document.querySelectorAll("svg, iframe, object, embed, form, base, link, meta[http-equiv=refresh], math")].map((el) => el.tagName),
        links: [...document.querySelectorAll("a[href]")].map((a) => a.getAttribute("href")!).filter((h) => !/^(#|https?:)/.test(h)),
        images: [...document.querySelectorAll("img")].map((i) => i.getAttribute("src") ?? "").filter((s) => !s.startsWith("data:image/")),
        text: document.querySelector(".cards")!.textContent!,
      }));
      expect(found.scripts).toBe(1);
      expect(found.handlers).toEqual([]);
      expect(found.styled).toBe(0);
      expect(found.dangerous).toEqual([]);
      expect(found.links).toEqual([]);
      expect(found.images).toEqual([]);
      // The markup is there, as text.
      expect(found.text).toContain("<script>window.__pwned = 'script'</script>");
      expect(found.text).toContain(`<img src="${listener}/img-tag" onerror="window.__pwned='onerror'">`);
      expect(found.text).toContain("</script><script>window.__pwned='fence'</script>");
      expect(found.text).toContain("<b onmouseover=alert(1)>fetch</b>");
      // The megabyte line is shown whole once opened.
      expect(found.text).toContain("A".repeat(1024 * 1024));
      await page.close();
    });
  });

  describe("a page over 1 MiB: its opening (view.md §1.3)", () => {
    const ws = tempDir("pixir-view-long-");
    // 3,000 Events: 1.4 MiB of Log, past the size that gets an opening; the 10,000 of view.md §1.3 are
    // timed in view-speed.test.ts.
    const events = longSession(3000) as Array<{ type: string; data: Record<string, unknown> }>;
    writeRaw(ws, "big", events);
    const file = exportPage(ws, "big");
    // The same, compacted at its end: the checkpoint replaces the first 10 Events.
    writeRaw(ws, "compacted", [...events, { type: "history_compaction", data: { summary: "the story so far", range: { from_seq: 0, to_seq: 10 } } }]);
    const compacted = exportPage(ws, "compacted");

    /** Open the page, noting the cards already drawn when the browser has read the whole page. */
    async function openNoting(hash = "", page_ = file): Promise<{ page: Page; atRead: { cards: number; visible: number; count: string; dimmed: string[]; legend: boolean } }> {
      const page = await browser.newPage();
      await page.addInitScript(() => {
        // Registered before the page's own script, so it runs before the page draws the whole History.
        document.addEventListener("DOMContentLoaded", () => {
          const cards = [...document.querySelectorAll(".cards > .card")] as any[];
          window.__atRead = {
            cards: cards.length,
            visible: cards.filter((c) => !c.hidden).length,
            count: document.querySelector(".match-count")?.value ?? "",
            dimmed: cards.filter((c) => c.classList.contains("dimmed")).map((c) => c.querySelector(".seq")?.textContent),
            legend: document.querySelector(".legend") !== null,
          };
        });
      });
      await page.goto(pathToFileURL(page_).href + hash);
      await page.waitForFunction(() => window.__atRead !== undefined);
      return { page, atRead: await page.evaluate(() => window.__atRead) };
    }

    it("draws the first cards from the opening before the page is read, then the whole History", async () => {
      const { page, atRead } = await openNoting();
      // A screenful from the opening, and no count yet: it is not known until the page is read.
      expect(atRead.visible).toBeGreaterThan(0);
      expect(atRead.visible).toBeLessThanOrEqual(12);
      expect(atRead.count).toBe("reading the page…");
      await settled(page);
      expect(await page.locator(".cards > .card").count()).toBe(expectedCards(events));
      expect(await page.locator(".match-count").textContent()).toBe(`${expectedCards(events)} cards`);
      await page.locator(".session-details summary").click();
      expect(await page.locator(".facts").textContent()).toContain("events3000: ");
      // The opening's cards were drawn again from the whole History: each seq once, in order.
      const seqs = await page.locator(".cards > .card .seq").allTextContents();
      expect(seqs.slice(0, 8)).toEqual(["#0", "#1", "#3", "#4", "#5", "#7", "#8", "#9"]);
      expect(new Set(seqs).size).toBe(seqs.length);
      await page.close();
    });

    it("dims the opening's cards that a checkpoint further on replaced, before it is read", async () => {
      const { page, atRead } = await openNoting("", compacted);
      expect(atRead.legend).toBe(true);
      expect(atRead.dimmed.length).toBeGreaterThan(0);
      const dimmedAtRead = atRead.dimmed.map((seq) => Number(seq!.slice(1)));
      expect(dimmedAtRead.every((seq) => seq <= 10)).toBe(true);
      // What the whole History dims of those first cards: the same.
      await settled(page);
      const dimmed = await page.locator(".cards > .card.dimmed .seq").allTextContents();
      expect(dimmed.slice(0, atRead.dimmed.length)).toEqual(atRead.dimmed);
      await page.close();
    });

    it("keeps what the reader did while the page was read: a fold opened, a search typed", async () => {
      // The page served with its Log blocks held back until the reader has acted on the opening.
      writeRaw(ws, "context", [{ type: "user_message", data: { text: "<environment_context>cwd: /x</environment_context>" } }, ...events] as Ev[]);
      const bytes = readFileSync(exportPage(ws, "context"));
      const cut = bytes.indexOf('<script type="application/json" id="pixir-log-0">');
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const server = createServer((_, res) => {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.write(bytes.subarray(0, cut));
        void released.then(() => res.end(bytes.subarray(cut)));
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      try {
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { waitUntil: "commit" });
        const fold = page.locator(".preamble-marker .fold");
        await fold.click();
        await expect(page.locator(".card.context").isVisible()).resolves.toBe(true);
        await page.locator(".search").fill("Question 7:");
        expect(await page.locator(".match-count").textContent()).toBe("reading the page…");
        release();
        await settled(page);
        expect(await page.locator(".match-count").textContent()).toMatch(/^\d+ of \d+ cards match$/);
        const matching = Number((await page.locator(".match-count").textContent())!.split(" ")[0]);
        expect(await page.locator(".cards > .card:visible").count()).toBe(matching);
        await page.locator(".search").fill("");
        await page.waitForFunction(() => /^\d+ cards$/.test(document.querySelector(".match-count")?.value ?? ""));
        expect(await fold.getAttribute("aria-expanded")).toBe("true");
        expect(await page.locator(".card.context").isVisible()).toBe(true);
        await page.close();
      } finally {
        release();
        server.close();
      }
    });

    it("marks a fork point inside the opening where it will stay, and one further on only once it is read", async () => {
      // Turns of 40 KB: the opening holds 6 of them, all drawn at once, so a marker misplaced at its end would show.
      writeRaw(ws, "family", Array.from({ length: 60 }, (_, i) => ({ type: i % 2 === 0 ? "user_message" : "assistant_message", data: { text: `turn ${i} ${"word ".repeat(8000)}` } })));
      for (const seq of ["2", "50"]) expect(run("pixir", ["fork", "family", "--to-seq", seq], { cwd: ws }).code).toBe(0);
      const page = await browser.newPage();
      await page.addInitScript(() => {
        document.addEventListener("DOMContentLoaded", () => {
          window.__marks = [...document.querySelectorAll(".cards > .fork-marker")].map((m: any) => [m.previousElementSibling?.querySelector(".seq")?.textContent, m.firstChild.textContent]);
        });
      });
      await page.goto(pathToFileURL(exportPage(ws, "family")).href);
      await settled(page);
      const marks = () => page.evaluate(() => [...document.querySelectorAll(".cards > .fork-marker")].map((m: any) => [m.previousElementSibling?.querySelector(".seq")?.textContent, m.firstChild.textContent]));
      expect(await page.evaluate(() => window.__marks)).toEqual([["#2", "forked here at seq 2 → "]]);
      expect(await marks()).toEqual([
        ["#2", "forked here at seq 2 → "],
        ["#50", "forked here at seq 50 → "],
      ]);
      await page.close();
    });

    it("a link to a card deep in the History waits for the page, then shows that card", async () => {
      const { page, atRead } = await openNoting("#big/2901");
      expect(atRead.cards).toBe(0);
      const target = page.locator(".card.target");
      expect(await target.locator(".seq").textContent()).toBe("#2901");
      expect(await target.isVisible()).toBe(true);
      await page.close();
    });
  });
});
