// One channel for `--json` error envelopes (cli.md §2, issue 33 item 4): every command of every tool,
// run with --json and a bad flag, a Session that does not exist and an id that is not one, puts the
// envelope on the channel of its class (a report command: stdout, stderr empty; a stream command:
// stderr, stdout empty). Each command is run in every class it can take (an export to stdout is a
// stream; with --out, --install or --dry-run a report). The class itself is checked against the shape
// of the command's --json output: one object per line (rows) is a stream.
import { cpSync, mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mountedCommands, type CommandDecl, type ParsedArgs, type ToolSpec } from "@pixir/envelope/cli";
import { tool as logTool } from "pixir-log";
import { tool as forkTool } from "pixir-fork";
import { tool as treeTool } from "pixir-tree";
import { tool as summarizeTool } from "pixir-summarize";
import { tool as wrapperTool } from "../../tools/pixir/src/main.js";
import { freshDir, removeDir, runInProcess } from "../hardening/support.js";
import { ROOT, type Tool } from "../support/cli.js";

const SPECS: Record<Tool, ToolSpec> = { pixir: wrapperTool, "pixir-log": logTool, "pixir-fork": forkTool, "pixir-tree": treeTool, "pixir-summarize": summarizeTool };
/** A Session id of the grammar that no Workspace of this test holds. */
const MISSING = "no-such-session-4d2e";
/** Not a Session id (envelope-and-log.md §5): refused before anything is read. */
const INVALID = "bad/id";
/** Where a missing Log is no error: lock status reports it `available` (cli.md §12.7), compact reads it as empty (context-and-compaction.md §4). */
const MISSING_IS_FINE = new Set(["pixir lock status", "pixir compact"]);
/** The flags that change a command's class, each tried alone. */
const CLASS_FLAGS: Record<string, string[]> = { out: ["--out", "out.file"], "dry-run": ["--dry-run"], install: ["--install"], all: ["--all"] };

interface Case {
  name: string;
  tool: Tool;
  argv: string[];
  channel: "stdout" | "stderr";
}

function classOf(decl: CommandDecl, flags: string[]): "stream" | "report" {
  const parsed: ParsedArgs = { positionals: [], flags: Object.fromEntries(flags.filter((f) => f.startsWith("--")).map((f) => [f.slice(2), f === "--out" ? "out.file" : true])) };
  const kind = decl.class ?? "report";
  return typeof kind === "string" ? kind : kind(parsed);
}

/** The positionals (and --parent) of a command given `id` for its Session, or undefined when it names none. */
function sessionArgs(decl: CommandDecl, id: string): string[] | undefined {
  const out: string[] = [];
  let named = false;
  for (const word of decl.command.split(" ").slice(1)) {
    const isSession = decl.positionals?.[word.replace(/[<>[\].]/g, "")]?.value === "session id";
    named ||= isSession;
    if (word.startsWith("<") || isSession) out.push(isSession ? id : "no-such-file.jsonl");
  }
  if (!named && decl.options?.parent !== undefined) return [...out, "--parent", id];
  return named ? out : undefined;
}

function cases(): Case[] {
  const out: Case[] = [];
  for (const [tool, spec] of Object.entries(SPECS) as Array<[Tool, ToolSpec]>) {
    for (const { decl, path: at } of mountedCommands(spec)) {
      if (decl.commands) continue;
      const command = [tool, ...at.slice(1)].join(" ");
      const flagSets = [[], ...Object.keys(CLASS_FLAGS).filter((f) => decl.options?.[f] !== undefined).map((f) => CLASS_FLAGS[f]!)];
      for (const flags of flagSets) {
        const channel = classOf(decl, flags) === "report" ? "stdout" : "stderr";
        const label = [command, ...flags].join(" ");
        const plain = sessionArgs(decl, MISSING) ?? sessionArgs({ ...decl, positionals: {} }, MISSING) ?? [];
        const add = (what: string, argv: string[]) => out.push({ name: `${label}: ${what}`, tool, argv: [...at.slice(1), ...argv, ...flags, "--json"], channel });
        add("an unknown flag", [...plain, "--bogus"]);
        if (sessionArgs(decl, MISSING) === undefined) continue;
        if (!MISSING_IS_FINE.has(command)) add("a missing Session", sessionArgs(decl, MISSING)!);
        add("an invalid id", sessionArgs(decl, INVALID)!);
      }
    }
  }
  return out;
}

let ws: string;
beforeAll(() => {
  ws = freshDir("pixir-channel-");
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
});
afterAll(() => removeDir(ws));

describe("--json error envelopes go to the channel of the command's class (cli.md §2)", () => {
  const all = cases();

  it("covers every command of every tool", () => {
    const covered = new Set(all.map((c) => `${c.tool} ${c.argv.join(" ")}`));
    for (const [tool, spec] of Object.entries(SPECS))
      for (const { decl, path: at } of mountedCommands(spec)) if (!decl.commands) expect([...covered].some((c) => c.startsWith([tool, ...at.slice(1)].join(" ")))).toBe(true);
  });

  it("a command whose --json output is one object per line is a stream command (its rows alone on stdout)", () => {
    const rows = mountedCommands(wrapperTool).filter((m) => ["ls", "usage", "search"].includes(m.path[1]!));
    expect(rows.map((m) => [m.path.join(" "), classOf(m.decl, [])])).toEqual(rows.map((m) => [m.path.join(" "), "stream"]));
  });

  it.each(all.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const r = await runInProcess(c.tool, [...c.argv, "--workspace", ws], { cwd: ws });
    expect(r.code, r.stdout + r.stderr).not.toBe(0);
    const [here, there] = c.channel === "stdout" ? [r.stdout, r.stderr] : [r.stderr, r.stdout];
    const lines = here.split("\n").filter((l) => l !== "");
    expect(lines, `${c.channel} holds the envelope alone`).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ ok: false, error: { kind: expect.any(String), message: expect.any(String), details: expect.any(Object) } });
    expect(there, "the other channel is empty").toBe("");
  });
});

describe("export html|md --json without --out (cli.md §5, view.md §1–§2)", () => {
  // A stream command keeps its data on stdout unchanged; --json only turns its errors and warnings into
  // JSON on stderr. So the page (or the Markdown) is printed as without --json, and nothing else.
  let golden: string;
  beforeAll(() => {
    golden = freshDir("pixir-channel-golden-");
    cpSync(path.join(ROOT, "test", "cases", "workspace"), golden, { recursive: true });
  });
  afterAll(() => removeDir(golden));

  it.each(["html", "md"])("export %s prints the same bytes with --json, stderr empty; an error is one envelope on stderr", async (format) => {
    const plain = await runInProcess("pixir", ["export", format, "kid"], { cwd: golden });
    const json = await runInProcess("pixir", ["export", format, "kid", "--json"], { cwd: golden });
    expect([plain.code, json.code, json.stderr]).toEqual([0, 0, ""]);
    expect(json.stdout.length).toBeGreaterThan(100);
    expect(json.stdout).toBe(plain.stdout);
    const missing = await runInProcess("pixir", ["export", format, MISSING, "--json"], { cwd: golden });
    expect([missing.code, missing.stdout, missing.errJson?.error?.kind]).toEqual([2, "", "not_found"]);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
  });
});
