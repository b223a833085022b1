// pixir export html and pixir export md on the command line (view.md §1–§2, cli.md): where the output
// goes, what the page holds of a family, determinism, errors, and the flags each format takes.
import { appendFileSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents, readLog, ROOT, sh, tempDir, workspace, type Ev } from "../support/cli.js";
import { bigWorkspace, interruptWhileReaderIsSlow } from "../support/slow-reader.js";
// The tools run on a thread, without a process start (test/support/thread.ts); sh() and start() are processes.
import { runInThread as run } from "../support/thread.js";

const FIXTURE = path.join(ROOT, "test", "cases", "workspace");

/** A copy of the golden Workspace: `chat` with its share_v1 child `kid`, `p1` with its replay_v1 child `c1`. */
function goldenWorkspace(): string {
  const ws = tempDir("pixir-view-ws-");
  cpSync(FIXTURE, ws, { recursive: true });
  return ws;
}

const exportHtml = (ws: string, ...args: string[]) => run("pixir", ["export", "html", ...args], { cwd: ws });
const exportMd = (ws: string, ...args: string[]) => run("pixir", ["export", "md", ...args], { cwd: ws });

/** The JSON blocks of a page: its index and each Log's Events. */
function pageData(html: string): { index: any; logs: Map<number, any[]> } {
  const blocks = [...html.matchAll(/<script type="application\/json" id="([a-z0-9-]+)">(.*?)<\/script>/gs)];
  const byId = new Map(blocks.map((m) => [m[1]!, JSON.parse(m[2]!)]));
  const logs = new Map<number, any[]>();
  for (const [id, value] of byId) if (id.startsWith("pixir-log-")) logs.set(Number(id.slice("pixir-log-".length)), value);
  return { index: byId.get("pixir-index"), logs };
}

describe("pixir export html", () => {
  it("writes one page of the whole family, each Log's own Events once, the named Log first", () => {
    const ws = goldenWorkspace();
    const r = exportHtml(ws, "kid");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.startsWith("<!DOCTYPE html>\n")).toBe(true);
    const { index, logs } = pageData(r.stdout);
    expect(index.named).toBe("kid");
    expect(index.logs.map((l: any) => [l.id, l.parent, l.relation, l.inherits])).toEqual([
      ["chat", null, "root", false],
      ["kid", 0, "fork", true],
    ]);
    // chat whole; kid only its header and its own Event (its prefix is chat's, shown once).
    expect(logs.get(0)).toEqual(readEvents(ws, "chat"));
    expect(logs.get(1)).toEqual(readEvents(ws, "kid"));
    expect(index.logs[1].event_count).toBe(run("pixir-log", ["cat", "kid"], { cwd: ws }).lines.length);
  });

  it("shows a replay_v1 child's copied prefix once, from its parent", () => {
    const ws = goldenWorkspace();
    const { index, logs } = pageData(exportHtml(ws, "c1").stdout);
    expect(index.logs.map((l: any) => l.id)).toEqual(["p1", "c1"]);
    const n = index.logs[1].replay_event_count;
    expect(n).toBeGreaterThan(0);
    expect(logs.get(1)).toEqual(readEvents(ws, "c1").filter((e) => e.seq === 0 || e.seq > n));
  });

  it("--no-family holds only the named Log's resolved History", () => {
    const ws = goldenWorkspace();
    const { index, logs } = pageData(exportHtml(ws, "kid", "--no-family").stdout);
    expect(index.logs).toHaveLength(1);
    expect(index.logs[0]).toMatchObject({ id: "kid", parent: null, inherits: false });
    expect(logs.get(0)).toEqual(run("pixir-log", ["cat", "kid"], { cwd: ws }).lines);
  });

  it("is the same bytes on stdout, in --out FILE and on a second run; --dry-run --json counts them", () => {
    const ws = goldenWorkspace();
    const first = exportHtml(ws, "kid").stdout;
    expect(exportHtml(ws, "kid").stdout).toBe(first);
    const out = path.join(tempDir(), "page.html");
    const r = exportHtml(ws, "kid", "--out", out, "--json");
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(first);
    expect(r.json).toMatchObject({ ok: true, dry_run: false, file: out, bytes: Buffer.byteLength(first) });
    const dry = exportHtml(ws, "kid", "--dry-run", "--json");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json).toEqual({
      ok: true,
      dry_run: true,
      file: null,
      sessions: [
        { session_id: "chat", event_count: 9 },
        { session_id: "kid", event_count: 9 },
      ],
      bytes: Buffer.byteLength(first),
    });
    expect(exportHtml(ws, "kid", "--out", out).stdout).toBe("");
  });

  it("--out refuses an existing file and a missing directory, and leaves nothing behind", () => {
    const ws = goldenWorkspace();
    const dir = tempDir();
    const out = path.join(dir, "page.html");
    writeFileSync(out, "mine");
    const r = exportHtml(ws, "kid", "--out", out, "--json");
    expect(r.code).toBe(1);
    expect(r.json.error).toMatchObject({ kind: "already_exists" });
    expect(readFileSync(out, "utf8")).toBe("mine");
    const missing = exportHtml(ws, "kid", "--out", path.join(dir, "no", "page.html"), "--json");
    expect(missing.code).toBe(2);
    expect(missing.json.error).toMatchObject({ kind: "invalid_args", details: { field: "out", reason: "missing_directory" } });
    expect(readdirSync(dir)).toEqual(["page.html"]);
  });

  it("fails as pixir-log cat does on a corrupt Log of the family, and writes no page", () => {
    const ws = goldenWorkspace();
    const log = path.join(ws, ".pixir", "sessions", "kid.ndjson");
    writeFileSync(log, `${readFileSync(log, "utf8")}{"not an event"\n`);
    const cat = run("pixir-log", ["cat", "kid", "--json"], { cwd: ws });
    const out = path.join(tempDir(), "page.html");
    // Named or reached through the family, the export fails the same way.
    for (const id of ["kid", "chat"]) {
      const r = exportHtml(ws, id, "--out", out, "--json");
      expect(r.code).toBe(cat.code);
      expect(r.json.error.kind).toBe(cat.errJson.error.kind);
      expect(existsSync(out)).toBe(false);
    }
    const stream = exportHtml(ws, "chat");
    expect(stream.code).toBe(cat.code);
    expect(stream.stdout).toBe("");
    const missing = exportHtml(ws, "nobody", "--json");
    expect(missing.code).toBe(2);
    expect(missing.errJson.error).toMatchObject({ kind: "not_found" });
  });

  it("keeps every Log string inside its data block and no path of this machine in the page", () => {
    const hostile = "</script><script>alert(1)</script><!--<script>";
    const ws = workspace({ s: [{ type: "user_message", data: { text: hostile } }, { type: "tool_result", data: { call_id: "x", output: `</SCRIPT >${hostile}` } }] as Ev[] });
    const page = exportHtml(ws, "s").stdout;
    // The page's own elements: the index, one Log, the resources, and the script.
    expect(page.match(/<script/gi)).toHaveLength(4);
    expect(page.match(/<\/script/gi)).toHaveLength(4);
    expect(page.match(/<!--/g)).toBeNull();
    expect(pageData(page).logs.get(0)![0].data.text).toBe(hostile);
    expect(page).not.toContain(ws);
    expect(page).not.toContain(path.dirname(ws));
    expect(page).toContain(`"workspace":"${path.basename(ws)}"`);
  });

  it("is the same page whether its Logs' lines are copied as they are or read Event by Event", () => {
    // A Log of exact lines in order is copied a block at a time; a blank line sends it through the
    // Event-by-Event reader instead. Both must give the same bytes: whole Logs, inherited prefixes, `<`.
    const ws = goldenWorkspace();
    const hostile = workspace({ s: [{ type: "user_message", data: { text: "</script><!--<b>" } }, { type: "tool_result", data: { call_id: "x", output: "a<b" } }] as Ev[] });
    const pages = (): string[] => [exportHtml(ws, "kid").stdout, exportHtml(ws, "c1").stdout, exportHtml(hostile, "s").stdout];
    const copied = pages();
    for (const [w, ids] of [[ws, ["chat", "kid", "p1", "c1"]], [hostile, ["s"]]] as const) {
      for (const id of ids) appendFileSync(path.join(w, ".pixir", "sessions", `${id}.ndjson`), "\n");
    }
    const decoded = pages();
    expect(decoded.map((p) => p.length)).toEqual(copied.map((p) => p.length));
    expect(decoded).toEqual(copied);
    expect(pageData(copied[2]!).logs.get(0)![0].data.text).toBe("</script><!--<b>");
  });

  it("opens a page over 1 MiB with the named Log's first Events before the script; a smaller page has none", () => {
    // view.md §1.3: the opening lets the page show its first cards before the browser has read the rest.
    const events: Ev[] = [];
    for (let i = 0; i < 1000; i++) events.push({ type: i % 2 === 0 ? "user_message" : "assistant_message", data: { text: `turn ${i} ${"x".repeat(1500)} </script>` } });
    const ws = workspace({ big: events, small: events.slice(0, 100) });
    const page = exportHtml(ws, "big").stdout;
    const order = [...page.matchAll(/<script(?: type="application\/json" id="([a-z0-9-]+)")?>/g)].map((m) => m[1] ?? "script");
    expect(order).toEqual(["pixir-index", "pixir-opening", "script", "pixir-log-0", "pixir-resources"]);
    const { events: opening, compacted_through } = JSON.parse(/id="pixir-opening">(.*?)<\/script>/s.exec(page)![1]!);
    expect(compacted_through).toBeNull();
    const all = readEvents(ws, "big");
    // Its first Events, as many as fit in 256 KiB as the page writes them (`<` as `\u003c`, a comma between).
    expect(opening).toEqual(all.slice(0, opening.length));
    const written = readLog(ws, "big").split("\n").map((line) => Buffer.byteLength(line.replaceAll("<", "\\u003c")) + 1);
    const bytes = (n: number) => written.slice(0, n).reduce((a, b) => a + b, 0);
    expect(bytes(opening.length)).toBeLessThanOrEqual(256 * 1024);
    expect(bytes(opening.length + 1)).toBeGreaterThan(256 * 1024);
    expect(pageData(page).logs.get(0)).toEqual(all);
    const small = exportHtml(ws, "small").stdout;
    expect(small).not.toContain('id="pixir-opening"');
    expect([...small.matchAll(/<script(?: type="application\/json" id="([a-z0-9-]+)")?>/g)].map((m) => m[1] ?? "script")).toEqual(["pixir-index", "script", "pixir-log-0", "pixir-resources"]);
  });

  it("the opening names what a later checkpoint replaces, read from that checkpoint's own line", () => {
    const events: Ev[] = [];
    for (let i = 0; i < 1000; i++) events.push({ type: "user_message", data: { text: `turn ${i} ${"x".repeat(1500)}` } });
    // A checkpoint inside the opening, a tool call whose arguments look like one, and two after the opening.
    events.splice(3, 0, { type: "history_compaction", data: { summary: "early", range: { from_seq: 0, to_seq: 90 } } });
    events.push({ type: "tool_call", data: { call_id: "c", name: "x", args: { type: "history_compaction", range: { to_seq: 999 } } } });
    events.push({ type: "history_compaction", data: { summary: "one", range: { from_seq: 0, to_seq: 40 } } });
    events.push({ type: "history_compaction", data: { summary: "two", range: { from_seq: 0, to_seq: 60 } } });
    const ws = workspace({ s: events });
    const opening = (w: string) => JSON.parse(/id="pixir-opening">(.*?)<\/script>/s.exec(exportHtml(w, "s").stdout)![1]!);
    expect(opening(ws).compacted_through).toBe(60);
    // A Log whose lines are not its History as they stand (a blank line) says nothing: the page finds out.
    appendFileSync(path.join(ws, ".pixir", "sessions", "s.ndjson"), "\n");
    expect(opening(ws).compacted_through).toBeNull();
  });

  it("carries a Session Resource image as a data: URI", () => {
    const ws = tempDir();
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
    const pi = [
      { type: "session", version: 3, id: "img-session", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/user/x" },
      { type: "message", id: "u1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "user", content: [{ type: "text", text: "see" }, { type: "image", data: png.toString("base64"), mimeType: "image/png" }], timestamp: 1 } },
    ];
    const file = path.join(ws, "s.jsonl");
    writeFileSync(file, pi.map((l) => JSON.stringify(l)).join("\n") + "\n");
    expect(run("pixir", ["import", "pi", file], { cwd: ws }).code).toBe(0);
    const page = exportHtml(ws, "img-session").stdout;
    const resources = JSON.parse(/id="pixir-resources">(.*?)<\/script>/s.exec(page)![1]!);
    expect(Object.values(resources)).toEqual([`data:image/png;base64,${png.toString("base64")}`]);
  });

  it("stops on Ctrl-C while its reader is slow (exit 130)", async () => {
    const { code, stderr } = await interruptWhileReaderIsSlow(bigWorkspace(), ["export", "html", "big"]);
    expect(code).toBe(130);
    expect(stderr).toMatch(/^error: interrupted/);
  });

  it("ends quietly when the reader goes away", () => {
    const ws = goldenWorkspace();
    const r = sh("pixir export html kid | head -c 100 >/dev/null", { cwd: ws });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
  });
});

describe("pixir export md", () => {
  const ws = goldenWorkspace();

  it("is deterministic, titled, with the fork noted and tool calls as details blocks", () => {
    const a = exportMd(ws, "kid");
    expect(a.code, a.stderr).toBe(0);
    expect(exportMd(ws, "kid").stdout).toBe(a.stdout);
    // Headed by the session's title (archive.md §1: a Log with no other title is named by its first prompt).
    expect(a.stdout.startsWith("# Try it another way\n")).toBe(true);
    expect(a.stdout).toContain("_Forked from `chat` at seq 6 (share_v1)._");
    expect(a.stdout).toContain("<details><summary>tool: read_file src/sum.ts</summary>");
    expect(a.stdout).not.toContain("Read the file first."); // reasoning is left out
  });

  it("--tools summary gives one line per call, --tools none none", () => {
    const summary = exportMd(ws, "kid", "--tools", "summary").stdout;
    expect(summary).toContain("- tool: `read_file` `src/sum.ts`");
    expect(summary).not.toContain("<details>");
    const none = exportMd(ws, "kid", "--tools", "none").stdout;
    expect(none).not.toMatch(/tool:|<details>/);
    expect(none).toContain("Fix the failing test in src/sum.ts");
  });

  it("cannot be broken out of by stray fences or HTML in a Log", () => {
    const w = workspace({
      s: [
        { type: "user_message", data: { text: "look:\n```js\nconst open = 1;\n<details>" } },
        { type: "tool_call", data: { call_id: "c", name: "bash", args: { command: "cat ````notes````" } } },
        { type: "tool_result", data: { call_id: "c", ok: false, output: "`````\n</details>\n# not a heading\n`````" } },
        { type: "assistant_message", data: { text: "done <img src=x onerror=alert(1)>" } },
      ] as Ev[],
    });
    const md = exportMd(w, "s").stdout;
    expect(md).toContain("const open = 1;\n<details>\n```\n");
    expect(md).toContain("``````\n`````\n</details>\n# not a heading\n`````\n``````\n");
    expect(md).toContain("<summary>$ cat ````notes```` (failed)</summary>");
    expect(md).toContain("`````sh\n$ cat ````notes````\n`````\n");
    expect(md).toContain("done &lt;img src=x onerror=alert(1)>");
  });

  it("--dry-run --json reports the session and the size; --out writes the same bytes", () => {
    const text = exportMd(ws, "chat").stdout;
    const dry = exportMd(ws, "chat", "--dry-run", "--json");
    expect(dry.json).toEqual({ ok: true, dry_run: true, file: null, sessions: [{ session_id: "chat", event_count: 9 }], bytes: Buffer.byteLength(text) });
    const out = path.join(tempDir(), "chat.md");
    expect(exportMd(ws, "chat", "--out", out).code).toBe(0);
    expect(readFileSync(out, "utf8")).toBe(text);
  });
});

describe("flags of the export formats", () => {
  const ws = goldenWorkspace();
  it.each([
    ["md", "kid", "--tools", "all"],
    ["md", "kid", "--max-depth", "-1"],
    ["html", "kid", "--tools", "full"],
    ["html", "kid", "--family", "--no-family"],
    ["html", "kid", "--max-depth", "-1"],
    ["pi", "kid", "--no-family"],
    ["codex", "kid", "--tools", "none"],
  ])("pixir export %s %s %s … is a usage error", (...args: string[]) => {
    const r = run("pixir", ["export", ...args], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^error: usage: /);
  });

  it("--max-depth bounds the family below its root; a named Log past it is shown by itself", () => {
    const w = goldenWorkspace();
    expect(run("pixir", ["fork", "kid", "--child-id", "grandkid"], { cwd: w }).code).toBe(0);
    const ids = (...args: string[]) => pageData(exportHtml(w, ...args).stdout).index.logs.map((l: any) => l.id);
    expect(ids("chat")).toEqual(["chat", "kid", "grandkid"]);
    expect(ids("chat", "--max-depth", "1")).toEqual(["chat", "kid"]);
    expect(ids("chat", "--max-depth", "0")).toEqual(["chat"]);
    expect(ids("grandkid", "--max-depth", "1")).toEqual(["grandkid"]);
  });
});
