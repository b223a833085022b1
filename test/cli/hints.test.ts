// Hints name commands that exist (cli-contract.md "Hints and next actions"): every next action and hint
// our tools print, collected from the sources (every action list) and from running error cases, either
// is prose or names one of our commands: `pixir-log check`, `pixir lock release --force`, … Where it
// names one, the command (and subcommand) must exist and every flag it shows must be one of that
// command's. The old `pixir resume <child>` hint named a command our `pixir` does not have.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { call, rawLine, ROOT, user, workspace, type Tool } from "../support/cli.js";
import { ageLease, runInProcess } from "../hardening/support.js";
import { mountedCommands, type ToolSpec } from "@pixir/envelope/cli";
import { tool as logTool } from "pixir-log";
import { tool as forkTool } from "pixir-fork";
import { tool as treeTool } from "pixir-tree";
import { tool as summarizeTool } from "pixir-summarize";
import { tool as wrapperTool } from "../../tools/pixir/src/main.js";

const SPECS: Record<Tool, ToolSpec> = { pixir: wrapperTool, "pixir-log": logTool, "pixir-fork": forkTool, "pixir-tree": treeTool, "pixir-summarize": summarizeTool };

const TOOLS: Tool[] = ["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"];
const MENTION = /(?<=^|[\s(`'"])(pixir(?:-log|-fork|-tree|-summarize)?)(?=\s|$)/g;

/** What each tool's help says: its commands (with their literal subcommands) and each command's help text. */
interface Commands {
  /** tool → command → literal subcommands ("" for a tool without commands). */
  tree: Map<string, Map<string, Set<string>>>;
  /** `tool` or `tool command` → its help text. */
  help: Map<string, string>;
}

async function helpOf(tool: Tool, argv: string[]): Promise<string> {
  const r = await runInProcess(tool, [...argv, "--help"], { cwd: ROOT });
  expect(r.code, `${tool} ${argv.join(" ")} --help`).toBe(0);
  return r.stdout;
}

/** The commands of each tool from their declarations; each command's help (with its subcommands') as printed. */
async function readCommands(): Promise<Commands> {
  const tree = new Map<string, Map<string, Set<string>>>();
  const help = new Map<string, string>();
  for (const tool of TOOLS) {
    help.set(tool, await helpOf(tool, []));
    const commands = new Map<string, Set<string>>();
    for (const { path: at } of mountedCommands(SPECS[tool])) {
      const [, command, sub] = at;
      if (command === undefined) continue;
      const subs = commands.get(command) ?? new Set<string>();
      if (sub !== undefined) subs.add(sub);
      commands.set(command, subs);
      help.set(`${tool} ${command}`, `${help.get(`${tool} ${command}`) ?? ""}${await helpOf(tool, at.slice(1))}`);
    }
    tree.set(tool, commands.size > 0 ? commands : new Map([["", new Set()]]));
  }
  return { tree, help };
}

/** A next action as printed: a code (`use_pixir_lock_release_--force_only_if_orphaned`) reads as words. */
const asPrinted = (action: string): string => (/^[a-z]+(?:_[a-z-]+)+$/.test(action) ? action.replaceAll("_", " ") : action);

/** Codes the specification fixes in which `pixir` names the state directory, not a command (envelope-and-log.md §6). */
const STATE_CODES = new Set(["inspect_pixir_state_path_without_following_symlinks"]);

/** What is wrong with one hint ([] when it is prose or names our commands rightly). */
function problemsOf(hint: string, known: Commands): string[] {
  if (STATE_CODES.has(hint)) return [];
  const text = asPrinted(hint);
  const problems: string[] = [];
  const allHelp = [...known.help.values()].join("\n");
  const checkedFlags = new Set<number>();
  for (const m of text.matchAll(MENTION)) {
    const tool = m[1]!;
    const commands = known.tree.get(tool)!;
    // The words after the tool, up to the end of the clause.
    const clause = text.slice(m.index! + tool.length).split(/[;,]|\s(?:or|and|then|to|once)\s/)[0]!;
    // Closing punctuation is the sentence's, not the word's: "(pixir fork)".
    const words = clause
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/[)\].:!?"'`]+$/, ""))
      .filter((w) => w !== "");
    let helpKey = tool;
    let rest = words;
    if (!commands.has("")) {
      const command = words[0];
      if (command === undefined || !commands.has(command)) {
        problems.push(`"${tool} ${command ?? ""}" is not a command of ${tool}`);
        continue;
      }
      helpKey = `${tool} ${command}`;
      rest = words.slice(1);
      const subs = commands.get(command)!;
      const sub = rest[0];
      if (subs.size > 0 && sub !== undefined && /^[a-z][a-z-]*$/.test(sub) && !subs.has(sub)) problems.push(`"${tool} ${command} ${sub}" is not a command`);
    }
    for (const flag of rest.filter((w) => w.startsWith("--"))) {
      const name = /^--[a-z][a-z-]*/.exec(flag)?.[0];
      checkedFlags.add(text.indexOf(flag, m.index));
      if (name !== undefined && !known.help.get(helpKey)!.includes(name)) problems.push(`${helpKey} has no flag ${name}`);
    }
  }
  // Any other flag must be one of some command's.
  for (const f of text.matchAll(/(?<=^|\s)--[a-z][a-z-]*/g)) {
    if (!checkedFlags.has(f.index!) && !allHelp.includes(f[0])) problems.push(`no command has the flag ${f[0]}`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Collecting the hints

/** Every string of every action list in the sources (`next_actions: [...]`, `…_ACTIONS = [...]`, `actions: (w) => [...]`). */
function sourceActions(): Array<{ where: string; text: string }> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = path.join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (p.endsWith(".ts")) files.push(p);
    }
  };
  walk(path.join(ROOT, "lib/envelope/src"));
  for (const tool of TOOLS) walk(path.join(ROOT, "tools", tool, "src"));
  const start = /\b(?:next_actions|nextActions|[A-Z_]*ACTIONS|actions)\b\s*[:=]\s*(?:\([^)]*\)\s*=>\s*)?\[/g;
  const out: Array<{ where: string; text: string }> = [];
  for (const file of files) {
    const src = readFileSync(file, "utf8");
    for (const m of src.matchAll(start)) {
      let depth = 0;
      for (let i = m.index! + m[0].length - 1; i < src.length; i++) {
        const c = src[i]!;
        if (c === "[") depth++;
        else if (c === "]" && --depth === 0) break;
        else if (c === '"' || c === "'" || c === "`") {
          // A string literal; a template's ${…} reads as a placeholder word.
          let text = "";
          let j = i + 1;
          for (; j < src.length && src[j] !== c; j++) {
            if (src[j] === "\\") text += src[++j];
            else if (c === "`" && src[j] === "$" && src[j + 1] === "{") {
              for (let d = 0; j < src.length; j++) if (src[j] === "{") d++;
              else if (src[j] === "}" && --d === 0) break;
              text += "PLACEHOLDER";
            } else text += src[j];
          }
          out.push({ where: path.relative(ROOT, file), text });
          i = j;
        }
      }
    }
  }
  return out;
}

/** The hints error cases and a fork print, in text mode (`hint: ` lines on stderr) as users see them. */
async function printedHints(): Promise<Array<{ where: string; text: string }>> {
  const ws = workspace({
    s: [user("a"), user("b")],
    open: [user("a"), call("c1"), user("b")],
    torn: `${rawLine("torn", 0, user("a"))}\n{"id":"x`,
  });
  const out: Array<{ where: string; text: string }> = [];
  const runText = async (tool: Tool, argv: string[], stdin?: string) => {
    const r = await runInProcess(tool, argv, { cwd: ws, input: stdin });
    for (const line of r.stderr.split("\n")) if (line.startsWith("hint: ")) out.push({ where: `${tool} ${argv.join(" ")}`, text: line.slice(6) });
    return r;
  };
  expect((await runText("pixir", ["fork", "s", "--child-id", "c"])).code).toBe(0);
  expect((await runText("pixir", ["fork", "s", "--strategy", "share_v1", "--child-id", "sh"])).code).toBe(0);
  await runText("pixir-log", ["cat", "missing"]);
  await runText("pixir", ["context", "missing"]);
  await runText("pixir-log", ["append", "torn"], '{"type":"user_message","data":{}}\n');
  await runText("pixir-log", ["cat", "torn"]);
  await runText("pixir-log", ["check"]);
  await runText("pixir", ["fork", "open", "--to-seq", "1", "--strict-boundary"]);
  await runText("pixir", ["fork", "s", "--to-seq", "99"]);
  await runText("pixir", ["fork", "s", "--child-id", "c"]);
  await runText("pixir-log", ["rm", "s"]);
  await runText("pixir-log", ["cat", "..bad"]);
  await runText("pixir-log", ["cat"]);
  await runText("pixir", ["merge", "c", "--into", "open"]);
  await runText("pixir-log", ["write"], `${rawLine("w", 0, { type: "session_fork", data: { parent_session_id: "s", strategy: "replay_v1", event_count: 5 } })}\n`);
  const bad = path.join(ws, "bad.jsonl");
  writeFileSync(bad, "not json\n");
  await runText("pixir", ["import", "pi", bad]);
  // Leases: active, stale, ambiguous.
  const lease = (heartbeat: number) =>
    JSON.stringify({ version: 1, purpose: "session_writer", session_id: "s", workspace: ws, holder_id: "wrl_0123456789abcdef", heartbeat_at_ms: heartbeat, os_pid: "1" });
  writeFileSync(path.join(ws, ".pixir/session_leases/s.json"), lease(Date.now()));
  await runText("pixir", ["append", "s"], '{"type":"user_message","data":{}}\n');
  ageLease(ws, "s");
  await runText("pixir", ["append", "s"], '{"type":"user_message","data":{}}\n');
  writeFileSync(path.join(ws, ".pixir/session_leases/s.json"), "{");
  await runText("pixir", ["append", "s"], '{"type":"user_message","data":{}}\n');
  return out;
}

describe("hints and next actions name commands that exist", () => {
  it("the check itself: a made-up command, subcommand or flag is caught; prose and real commands pass", async () => {
    const known = await readCommands();
    expect(problemsOf('pixir resume c "..."', known)).toEqual(['"pixir resume" is not a command of pixir']);
    expect(problemsOf("run pixir-log repaire to drop it", known)).toHaveLength(1);
    expect(problemsOf("use_pixir_lock_unlock_--force", known)).toEqual(['"pixir lock unlock" is not a command']);
    expect(problemsOf("run pixir-log check --deep", known)).toEqual(["pixir-log check has no flag --deep"]);
    expect(problemsOf("use --no-such-flag", known)).toEqual(["no command has the flag --no-such-flag"]);
    expect(problemsOf("use_pixir_lock_release_--force_only_if_orphaned", known)).toEqual([]);
    expect(problemsOf("free space on the device holding .pixir/sessions/s.ndjson, then rerun", known)).toEqual([]);
    expect(problemsOf("inspect them with pixir-log cat or pixir-log ls", known)).toEqual([]);
    expect(problemsOf("fork it first (pixir fork), then import again", known)).toEqual([]);
    expect(problemsOf("fork it first (pixir forkk), then import again", known)).toHaveLength(1);
  });

  it("every action list in the sources", async () => {
    const known = await readCommands();
    const actions = sourceActions();
    expect(actions.length, "the scan finds the action lists").toBeGreaterThan(50);
    expect(actions.map((a) => a.text)).toContain("run pixir-log repair to drop the torn final line");
    const wrong = actions.flatMap((a) => problemsOf(a.text, known).map((p) => `${a.where}: ${JSON.stringify(a.text)}: ${p}`));
    expect(wrong).toEqual([]);
  });

  it("every hint error cases and a fork print", async () => {
    const known = await readCommands();
    const hints = await printedHints();
    expect(hints.map((h) => h.text)).toContain("continue the child with pixir append c; pixir context c prints what a model sees of it");
    expect(new Set(hints.map((h) => h.where)).size, "most cases print hints").toBeGreaterThan(12);
    const wrong = hints.flatMap((h) => problemsOf(h.text, known).map((p) => `${h.where}: ${JSON.stringify(h.text)}: ${p}`));
    expect(wrong).toEqual([]);
  });
});
