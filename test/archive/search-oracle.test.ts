// pixir search held to an independent scan of the source files (test/support/search-oracle.ts): the real
// Claude transcripts, Codex rollouts and pi sessions of the repository, and the Gemini CLI chats, are imported, and for many words
// picked from the sources, every source session the oracle finds holding the word is found (with --agent
// too), no hit is twice, and every hit's seq points at an Event whose text holds the word. --file finds
// exactly the tool calls the oracle finds naming that file.
import { readdirSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { tempDir, type RunResult } from "../support/cli.js";
import { runInThread as run } from "../support/thread.js";
import { CLAUDE_FIXTURES, logIds, storedEvents, type StoredEvent } from "../support/claude.js";
import { CODEX_FIXTURES_DIR } from "../support/codex.js";
import { GEMINI_CHATS, GEMINI_HOME } from "../support/gemini.js";
import { PI_DIR } from "../support/pi.js";
import { familiesHolding, holdsTerm, jsonlFiles, rareWords, scanSources, type SourceScan } from "../support/search-oracle.js";

interface Hit {
  session_id: string;
  seq: number;
  type: string;
  ts: string;
  tool: string | null;
  agent: string | null;
  project: string | null;
  snippet: string;
  in_context: boolean;
  inherited_by: number;
}

const hitsOf = (r: RunResult): Hit[] => r.stdout.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Hit);

const SOURCE_KEYS = new Set(["claude", "codex", "pi", "gemini", "opencode"]);

/** Every string and number of an Event's data but the importer's copy of its source record. */
function eventText(e: StoredEvent): string {
  const out: string[] = [];
  const walk = (v: unknown, top: boolean) => {
    if (typeof v === "string" || typeof v === "number") out.push(String(v));
    else if (Array.isArray(v)) for (const x of v) walk(x, false);
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) if (!(top && SOURCE_KEYS.has(k))) walk(x, false);
  };
  walk(e.data, true);
  return out.join("\n");
}

/** The source session a Log came from: imports name derived Logs `<source id>.<suffix>`. */
const familyOf = (id: string): string => id.split(".")[0]!;

describe("pixir search against an independent scan of the sources", () => {
  let ws = "";
  let scan: SourceScan;
  const events = new Map<string, Map<number, StoredEvent>>();
  /** The Logs below each Log in lineage (forks and branches, transitively). */
  const below = new Map<string, Set<string>>();
  const piFiles = jsonlFiles(PI_DIR);

  const search = (args: string[]): Hit[] => {
    const r = run("pixir", ["search", ...args, "--json"], { cwd: ws });
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    return hitsOf(r);
  };

  /** The source families a hit stands for: its own, and those of the Logs that inherit it. */
  const familiesOfHit = (h: Hit): Set<string> => new Set([familyOf(h.session_id), ...(h.inherited_by > 0 ? [...(below.get(h.session_id) ?? [])].map(familyOf) : [])]);

  beforeAll(() => {
    ws = tempDir("pixir-search-oracle-");
    for (const [agent, args] of [["claude", [CLAUDE_FIXTURES]], ["codex", [CODEX_FIXTURES_DIR]], ["pi", piFiles], ["gemini", []]] as const) {
      const r = run("pixir", ["import", agent, ...args], { cwd: ws, env: { HOME: GEMINI_HOME } });
      expect(r.code, r.stderr).toBe(0);
    }
    const geminiFiles = [...jsonlFiles(GEMINI_CHATS), ...readdirSync(GEMINI_CHATS).filter((n) => n.endsWith(".json")).map((n) => path.join(GEMINI_CHATS, n))];
    scan = scanSources({ claude: jsonlFiles(CLAUDE_FIXTURES), codex: jsonlFiles(CODEX_FIXTURES_DIR), pi: piFiles, gemini: geminiFiles });
    const parent = new Map<string, string>();
    for (const id of logIds(ws)) {
      const list = storedEvents(ws, id);
      events.set(id, new Map(list.map((e) => [e.seq, e])));
      if (list[0]?.type === "session_fork") parent.set(id, list[0].data.parent_session_id);
    }
    for (const [child] of parent) {
      for (let p = parent.get(child), depth = 0; p !== undefined && depth < 64; p = parent.get(p), depth++) {
        below.set(p, (below.get(p) ?? new Set()).add(child));
      }
    }
  });

  /** Every family the oracle finds holding `word` is among the hits' families; no hit twice; each hit's Event holds it. */
  function expectFound(word: string, extra: string[] = [], only?: (family: string) => boolean): Hit[] {
    const hits = search([word, ...extra, "--limit", "100000"]);
    const keys = hits.map((h) => `${h.session_id}#${h.seq}`);
    expect(new Set(keys).size, `${word}: a hit twice`).toBe(keys.length);
    for (const h of hits) {
      const e = events.get(h.session_id)?.get(h.seq);
      expect(e, `${word}: ${h.session_id}#${h.seq} is no Event`).toBeDefined();
      expect(e!.type).toBe(h.type);
      expect(holdsTerm(eventText(e!), word), `${word}: ${h.session_id}#${h.seq} does not hold it`).toBe(true);
    }
    const found = new Set(hits.flatMap((h) => [...familiesOfHit(h)]));
    const expected = [...familiesHolding(scan, word)].filter(only ?? (() => true));
    expect(expected.length, `${word}: the oracle finds it nowhere`).toBeGreaterThan(0);
    for (const f of expected) expect(found.has(f), `${word}: not found in source session ${f}`).toBe(true);
    return hits;
  }

  it("rare words of every source session are found where the oracle finds them, with --agent too", () => {
    const words = rareWords(scan, 2);
    const families = new Set(words.map((w) => w.family));
    expect(families.size).toBeGreaterThan(15);
    for (const agent of ["claude", "codex", "pi"]) expect([...families].some((f) => scan.agents.get(f) === agent), agent).toBe(true);
    for (const { family, word } of words) {
      expectFound(word);
      const agent = scan.agents.get(family)!;
      const hits = expectFound(word, ["--agent", agent], (f) => scan.agents.get(f) === agent);
      for (const h of hits) expect(h.agent).toBe(agent);
    }
  });

  it("Gemini CLI chats (the last version of each streamed message, a $set history, a subagent, a legacy file)", () => {
    const words = new Set<string>();
    for (const d of scan.docs.filter((x) => x.agent === "gemini")) for (const w of d.text.match(/[\p{L}]{4,}/gu) ?? []) words.add(w.toLowerCase());
    let checked = 0;
    for (const w of words) {
      // --agent gemini: a common word's hits elsewhere are not what this checks.
      expectFound(w, ["--agent", "gemini"], (f) => scan.agents.get(f) === "gemini");
      checked++;
    }
    expect(checked).toBeGreaterThan(15);
  });

  it("words of every kind of text (reasoning, tool calls and outputs too), sampled through the sources", () => {
    const known = new Set(logIds(ws).map(familyOf));
    const sample = new Map<string, string>();
    scan.docs.forEach((d, i) => {
      const words = d.text.match(/[\p{L}\p{N}]+(?:[_./-][\p{L}\p{N}]+)*/gu) ?? [];
      const w = words[(i * 7) % Math.max(1, words.length)];
      if (i % 11 === 0 && known.has(d.family) && w !== undefined && w.length >= 4 && !sample.has(w.toLowerCase())) sample.set(w.toLowerCase(), d.kind);
    });
    const kinds = new Set(sample.values());
    for (const k of ["user", "assistant", "reasoning", "tool_call", "tool_result"]) expect(kinds.has(k), k).toBe(true);
    expect(sample.size).toBeGreaterThan(100);
    // Words of a few sessions (a common word's thousands of hits add time, not checks).
    let checked = 0;
    for (const word of sample.keys()) {
      if (familiesHolding(scan, word).size > 3) continue;
      expectFound(word, [], (f) => known.has(f));
      checked++;
    }
    expect(checked).toBeGreaterThan(60);
  });

  it("code identifiers, paths, words with - and _, digits: found wherever the oracle finds them", () => {
    const pick = (re: RegExp, n: number) => rareWords(scan, 1, (w) => re.test(w)).slice(0, n).map((w) => w.word);
    const identifiers = pick(/^[a-z]+(_[a-z]+)+$/i, 6);
    expect(identifiers.length).toBeGreaterThan(3);
    const paths = [...new Set(scan.fileCalls.map((c) => c.path))].filter((p) => p.includes("/") && p.includes(".")).slice(0, 6);
    expect(paths.length).toBeGreaterThan(3);
    const tails = paths.map((p) => p.split("/").slice(-2).join("/"));
    for (const term of [...identifiers, ...paths, ...tails, "parse_line", "src/cli.ts", "claude-code-log", "x86_64", "utf-8"]) {
      if (familiesHolding(scan, term).size > 0) expectFound(term);
    }
  });

  it("words the engine reads as operators (AND OR NOT NEAR), a phrase in quotes, a prefix with *", () => {
    for (const op of ["AND", "OR", "NOT", "NEAR", "near"]) expectFound(op);
    const [{ word }] = rareWords(scan, 1, (w) => /^[a-z]{10,}$/i.test(w));
    // `word*`: the sessions holding a word that starts so are found, as without the `*`.
    const prefix = word.slice(0, 6);
    expectFound(prefix);
    const key = (h: Hit) => `${h.session_id}#${h.seq}`;
    expect(search([`${prefix}*`, "--limit", "100000"]).map(key)).toEqual(search([prefix, "--limit", "100000"]).map(key));
    // A phrase: two words that follow each other in a source text, found in order.
    const doc = scan.docs.find((d) => d.kind === "assistant" && /\b[a-z]{7,} [a-z]{7,}\b/.test(d.text))!;
    const phrase = doc.text.match(/\b[a-z]{7,} [a-z]{7,}\b/)![0];
    const hits = expectFound(phrase);
    for (const h of search([`"${phrase}"`, "--limit", "100000"])) expect(hits.map((x) => `${x.session_id}#${x.seq}`)).toContain(`${h.session_id}#${h.seq}`);
  });

  it("non-ASCII words: Japanese inside a run of kana and kanji, accented Latin", () => {
    const japanese = scan.docs.find((d) => /最新/.test(d.text));
    expect(japanese).toBeDefined();
    for (const term of ["最新", "状態", "アップデート"]) {
      const holders = new Set(scan.docs.filter((d) => d.text.includes(term)).map((d) => d.family));
      expect(holders.size, term).toBeGreaterThan(0);
      const hits = search([term, "--limit", "100000"]);
      const found = new Set(hits.flatMap((h) => [...familiesOfHit(h)]));
      for (const f of holders) expect(found.has(f), `${term} in ${f}`).toBe(true);
      for (const h of hits) expect(eventText(events.get(h.session_id)!.get(h.seq)!)).toContain(term);
    }
  });

  it("in_context is what pixir context shows of the session: not before the latest checkpoint, never reasoning", () => {
    const sessions = [...events.keys()].filter((id) => [...events.get(id)!.values()].some((e) => e.type === "history_compaction" || e.type === "reasoning"));
    expect(sessions.length).toBeGreaterThan(5);
    let compared = 0;
    for (const id of sessions) {
      const ctx = run("pixir", ["context", id], { cwd: ws });
      expect(ctx.code, ctx.stderr).toBe(0);
      const shown = new Set(ctx.lines.map((l: { seq: number }) => l.seq));
      for (const h of search(["--session", id, "--limit", "1000000"]).filter((x) => x.session_id === id)) {
        expect(h.in_context, `${id}#${h.seq} ${h.type}`).toBe(shown.has(h.seq));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it("every snippet is whole text: no emoji cut in two", () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    let emoji = 0;
    for (const id of events.keys()) {
      for (const h of search(["--session", id, "--limit", "1000000"])) {
        expect(lone.test(h.snippet), `${h.session_id}#${h.seq}`).toBe(false);
        if (/\p{Extended_Pictographic}/u.test(h.snippet)) emoji++;
      }
    }
    expect(emoji).toBeGreaterThan(0);
  });

  it("--file finds exactly the tool calls the oracle finds naming the file", () => {
    const byPath = new Map<string, Set<string>>();
    for (const c of scan.fileCalls) byPath.set(c.path, (byPath.get(c.path) ?? new Set()).add(c.callId));
    const paths = [...byPath.keys()].filter((p) => p.includes("/")).slice(0, 12);
    expect(paths.length).toBeGreaterThan(5);
    for (const p of paths) {
      const hits = search(["--file", p, "--type", "tool_call", "--limit", "100000"]);
      const callIds = hits.map((h) => String(events.get(h.session_id)!.get(h.seq)!.data.call_id));
      expect(new Set(callIds).size, `${p}: a call twice`).toBe(callIds.length);
      // Exactly the calls naming the path itself or a path ending in /p.
      const expected = new Set(scan.fileCalls.filter((c) => c.path === p || c.path.endsWith(`/${p}`)).map((c) => c.callId));
      expect(new Set(callIds), p).toEqual(expected);
    }
  });

  it("filters: --type, --tool, --since/--until, --project, --session prefix, --sort, --limit keep exactly their part of the hits", () => {
    const word = "file";
    const all = search([word, "--limit", "100000"]);
    expect(all.length).toBeGreaterThan(50);
    const key = (h: Hit) => `${h.session_id}#${h.seq}`;
    const subset = (extra: string[], keep: (h: Hit) => boolean) => {
      const got = search([word, ...extra, "--limit", "100000"]).map(key).sort();
      expect(got, extra.join(" ")).toEqual(all.filter(keep).map(key).sort());
    };
    subset(["--type", "tool_call,user_message"], (h) => h.type === "tool_call" || h.type === "user_message");
    subset(["--tool", "read"], (h) => (h.tool ?? "").toLowerCase() === "read");
    const times = all.map((h) => h.ts).sort();
    const mid = times[Math.floor(times.length / 2)]!;
    subset(["--since", mid], (h) => h.ts >= mid);
    subset(["--until", mid], (h) => h.ts < mid);
    subset(["--project", "demo"], (h) => (h.project ?? "").toLowerCase().includes("demo"));
    const withFamily = all.find((h) => h.session_id.length > 20)!;
    const prefix = withFamily.session_id.slice(0, 8);
    const own = search([word, "--session", prefix, "--limit", "100000"]);
    expect(own.length).toBeGreaterThan(0);
    // Time order: newest first; rank order: the same hits.
    expect(all.map((h) => h.ts)).toEqual([...all.map((h) => h.ts)].sort().reverse());
    expect(search([word, "--sort", "rank", "--limit", "100000"]).map(key).sort()).toEqual(all.map(key).sort());
    expect(search([word, "--limit", "7"]).map(key)).toEqual(all.slice(0, 7).map(key));
  });
});
