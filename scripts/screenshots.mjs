#!/usr/bin/env node
// The screenshots of docs/screenshots/ (archive.md §4, shown in the README and docs/reading-view.md): the
// real fixtures imported into a temporary Workspace, `pixir export html --all`, and three sessions opened
// in Chromium (/usr/bin/chromium, driven by playwright-core) at desktop and phone width, plus the index.
//
//   node scripts/build.mjs && node scripts/screenshots.mjs [--out docs/screenshots]
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const BIN = path.join(ROOT, "tools", "pixir", "bin", "pixir.js");
const FIXTURES = path.join(ROOT, "test", "fixtures", "real-sessions");
const outAt = process.argv.indexOf("--out");
const OUT = path.resolve(outAt === -1 ? path.join(ROOT, "docs", "screenshots") : process.argv[outAt + 1]);

/** The sessions shown: a Claude session with subagents, a compacted one, a Codex thread. */
const SESSIONS = [
  { name: "claude-subagents", id: "ef958aa1-0e93-49f0-bb71-150f63befcd1", scroll: ".tool-subagent" },
  { name: "claude-compacted", id: "258c7280-ae70-4798-800f-63464d01a85d", scroll: ".card.checkpoint" },
  { name: "codex-thread", id: "019e1625-789d-76c0-80ab-3724b5ddb799", scroll: ".tool-diff" },
];
const SIZES = [
  { name: "desktop", width: 1280, height: 860 },
  { name: "phone", width: 390, height: 844 },
];

function pixir(ws, ...args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ws, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`pixir ${args.join(" ")} failed:\n${r.stderr}`);
}

// The Workspace's folder name is shown in the pages: call it what it is.
const ws = path.join(mkdtempSync(path.join(os.tmpdir(), "pixir-shots-")), "archive");
mkdirSync(ws);
pixir(ws, "import", "claude", path.join(FIXTURES, "claude"));
pixir(ws, "import", "codex", path.join(FIXTURES, "codex"));
const site = path.join(ws, "site");
pixir(ws, "export", "html", "--all", "--out", site);
mkdirSync(OUT, { recursive: true });

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
for (const size of SIZES) {
  const page = await browser.newPage({ viewport: { width: size.width, height: size.height }, deviceScaleFactor: 1, locale: "en-GB", timezoneId: "Europe/London" });
  await page.goto(pathToFileURL(path.join(site, "index.html")).href);
  await page.screenshot({ path: path.join(OUT, `index-${size.name}.png`) });
  for (const s of SESSIONS) {
    await page.goto(pathToFileURL(path.join(site, "sessions", `${s.id}.html`)).href);
    await page.locator(".card:visible").first().waitFor();
    await page.screenshot({ path: path.join(OUT, `${s.name}-${size.name}.png`) });
    // A second view further in: what the session is known for (a subagent report, the compaction, a patch).
    await page.waitForFunction(() => document.querySelector(".cards")?.getAttribute("aria-busy") === "false");
    const target = page.locator(s.scroll).first();
    if ((await target.count()) > 0) {
      await target.evaluate((el) => el.scrollIntoView({ block: "start" }));
      await page.evaluate(() => window.scrollBy(0, -70));
      await page.screenshot({ path: path.join(OUT, `${s.name}-${size.name}-detail.png`) });
    }
  }
  await page.close();
}
await browser.close();
process.stdout.write(`screenshots in ${path.relative(process.cwd(), OUT) || "."}\n`);
