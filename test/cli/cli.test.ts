// acceptance.md §B: session ids, paths and CLI discipline, against the built binaries.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { INVALID_SESSION_IDS, listTree, logFile, readLog, ROOT, run as spawned, tempDir, user, workspace, type Tool } from "../support/cli.js";
// Most runs on the tool thread (test/support/thread.ts): what a command prints and returns is the same.
// One real process per exit path (usage 2, unsafe_state_path 1, the Environment's Workspace, --version 0)
// and `completion` as a shell calls it stay spawned; the golden cases run every tool's help as processes.
import { runInThread as run } from "../support/thread.js";

const EVENT = '{"type":"user_message","data":{"text":"hi"}}\n';
const ULID_ID = "01JH8Z6Q4K3M2N1P0R9S8T7V6W";
/** Every bin and subcommand with a help text of its own. */
const HELP_COMMANDS: Record<Tool, string[][]> = {
  "pixir-log": [[], ...["cat", "write", "append", "ls", "check", "repair", "materialize", "rm"].map((c) => [c])],
  "pixir-fork": [[]],
  "pixir-summarize": [[]],
  "pixir-tree": [[]],
  pixir: [
    [],
    ...["fork", "tree", "log", "append", "lock", "context", "compact", "repair", "diff", "merge", "import", "export"].map((c) => [c]),
    ...["status", "release"].map((c) => ["lock", c]),
    ...["pi", "codex", "claude"].flatMap((c) => [["import", c], ["export", c]]),
    ["export", "html"],
    ["export", "md"],
  ],
};
/** What follows every usage error in text mode (its next action, cli.md §4). */
const HELP_HINT = "hint: run the command with --help\n";

describe("B15 valid ids can be appended and read", () => {
  const ids = ["sess-1", "legacy_name.v1", "utf8-load-acción", "a\u0301", "你42", "_", "9-start", "20260720T101112-a1b2c3", ULID_ID, "a" + "b".repeat(234), "a" + "é".repeat(117)];
  for (const id of ids) {
    it(JSON.stringify(id.length > 20 ? `${id.slice(0, 12)}…(${Buffer.byteLength(id)} bytes)` : id), () => {
      const ws = tempDir();
      expect(run("pixir-log", ["append", id], { cwd: ws, input: EVENT }).code).toBe(0);
      // The second append goes through the journal, whose name must fit the filesystem too.
      expect(run("pixir-log", ["append", id], { cwd: ws, input: EVENT }).code).toBe(0);
      const cat = run("pixir-log", ["cat", id], { cwd: ws });
      expect(cat.code).toBe(0);
      expect(cat.lines.map((e) => [e.session_id, e.seq])).toEqual([[id, 0], [id, 1]]);
      if (Buffer.byteLength(id) === 235) expect(Buffer.byteLength(path.basename(logFile(ws, id)))).toBe(242);
      expect(existsSync(logFile(ws, id))).toBe(true);
    });
  }
});

describe("B16 invalid ids: exit 2 invalid_args with the reason", () => {
  const cases = INVALID_SESSION_IDS;
  for (const [id, reason] of cases) {
    it(`${JSON.stringify(id.slice(0, 20))} → ${reason}`, () => {
      const ws = tempDir();
      const r = run("pixir-log", ["append", id, "--json"], { cwd: ws, input: EVENT });
      expect(r.code).toBe(2);
      expect(r.json.error.kind).toBe("invalid_args");
      expect(r.json.error.details).toMatchObject({ field: "session_id", reason, max_bytes: 235 });
      if (reason === "too_long") expect(r.json.error.details.observed_bytes).toBe(236);
      expect(listTree(ws)).toEqual([]);
    });
  }
});

describe("B17 hostile ids are never echoed", () => {
  const HOSTILE = "../../../outside/PWN;$HOME%2fsecret";
  const commands: Array<[Tool, string[], string | undefined]> = [
    ["pixir", ["fork", HOSTILE, "--dry-run", "--json"], undefined],
    ["pixir-log", ["cat", HOSTILE], undefined],
    ["pixir-log", ["append", HOSTILE], EVENT],
    ["pixir-log", ["write", HOSTILE], EVENT],
    ["pixir", ["lock", "status", HOSTILE, "--json"], undefined],
  ];
  for (const [tool, args, input] of commands) {
    it(`${tool} ${args[0]}`, () => {
      const root = tempDir();
      const ws = path.join(root, "a", "b", "ws");
      mkdirSync(ws, { recursive: true });
      const r = run(tool, args, { cwd: ws, input });
      expect(r.code).toBe(2);
      const envelope = r.json ?? r.errJson;
      if (envelope) expect(envelope.error).toMatchObject({ kind: "invalid_args", details: { reason: "invalid_start" } });
      else expect(r.stderr).toMatch(/^error: invalid_args: session id is invalid \(invalid_start session_id; max_bytes=235 observed_bytes=\d+\)\nhint: pass a valid session id\n$/);
      for (const text of [r.stdout, r.stderr]) {
        expect(text).not.toContain("outside");
        expect(text).not.toContain("PWN");
      }
      expect(existsSync(path.join(ws, ".pixir"))).toBe(false);
      expect(existsSync(path.join(root, "outside"))).toBe(false);
      expect(listTree(root)).toEqual(["a", "a/b", "a/b/ws"]);
    });
  }
});

describe("B18 dash tokens and --json placement", () => {
  it("pixir fork -PWN: usage error, not echoed; with --json the envelope is on stdout", () => {
    const ws = tempDir();
    const text = spawned("pixir", ["fork", "-PWN"], { cwd: ws });
    expect(text.code).toBe(2);
    expect(text.stdout).toBe("");
    expect(text.stderr.startsWith("error: usage:")).toBe(true);
    expect(text.stderr).not.toContain("PWN");
    const json = spawned("pixir", ["fork", "-PWN", "--json"], { cwd: ws });
    expect(json.code).toBe(2);
    expect(json.stderr).toBe("");
    expect(json.json.error.kind).toBe("usage");
    expect(JSON.stringify(json.json)).not.toContain("PWN");
  });
  it("--json is accepted before the subcommand", () => {
    const ws = tempDir();
    const r = run("pixir", ["--json", "log", "cat", "missing"], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.errJson.error.kind).toBe("not_found");
  });
  it("a value flag before the subcommand (cli.md §1: flags anywhere) still names the subcommand after its value", () => {
    const ws = workspace({ s: [user("a"), user("b")] });
    expect(run("pixir-log", ["--to-seq", "0", "cat", "s"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0]);
    expect(run("pixir-log", ["--workspace", ws, "--from-seq", "1", "cat", "s"], { cwd: tempDir() }).lines.map((e) => e.seq)).toEqual([1]);
    expect(run("pixir", ["--to-seq", "0", "fork", "s", "--dry-run", "--json"], { cwd: ws }).json).toMatchObject({ ok: true, to_seq: 0 });
    // A lone `--` names no subcommand: a usage error, not the help.
    const dash = run("pixir-log", ["--", "cat", "s"], { cwd: ws });
    expect(dash.code).toBe(2);
    expect(dash.stderr).toMatch(/^error: usage: /);
  });
  it("an empty value is no value: --workspace '' (an unset \"$WS\") never means the current directory", () => {
    const ws = workspace({ s: [user("a")] });
    for (const args of [["ls", "--workspace", "", "--json"], ["ls", "--workspace=", "--json"], ["append", "t", "--workspace", "", "--json"]]) {
      const r = run("pixir-log", args, { cwd: ws, input: '{"type":"user_message","data":{}}\n' });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.json.error).toMatchObject({ kind: "usage", message: "--workspace requires a directory value" });
    }
    const cmd = run("pixir", ["fork", "s", "--summarize", "--model-cmd", "", "--json"], { cwd: ws });
    expect(cmd.json.error).toMatchObject({ kind: "usage", message: "--model-cmd requires a command value" });
    const out = run("pixir", ["export", "pi", "s", "--out", "", "--json"], { cwd: ws });
    expect(out.json.error).toMatchObject({ kind: "usage", message: "--out requires a path value" });
    // An empty session id is still the grammar's invalid_args (envelope-and-log.md §5).
    expect(run("pixir", ["fork", "s", "--child-id", "", "--json"], { cwd: ws }).json.error).toMatchObject({ kind: "invalid_args", details: { reason: "empty" } });
    expect(listTree(ws).filter((f) => f.endsWith(".ndjson"))).toEqual([".pixir/sessions/s.ndjson"]);
  });
  it("bad values and flags are usage errors that echo nothing", () => {
    const ws = workspace({ p: [user("a"), user("b")] });
    for (const args of [
      ["fork", "p", "--to-seq", "abc"],
      ["fork", "p", "--to-seq", "-1"],
      ["fork", "p", "--to-seq", "1e3"],
      ["fork", "p", "--to-seq", "0x10"],
      ["fork", "p", "--to-seq"],
      ["fork", "p", "--bogus=secret"],
      ["fork", "p", "q"],
    ]) {
      const r = run("pixir", args, { cwd: ws });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^error: usage: /);
      // An unknown flag is named (docs/cli-contract.md "Parsing"), never its value.
      expect(r.stderr).not.toContain("secret");
    }
    expect(run("pixir", ["fork", "p", "--to-seq", "+1", "--dry-run", "--json"], { cwd: ws }).json.to_seq).toBe(1);
    expect(run("pixir", ["fork", "p", "--to-seq=01", "--dry-run", "--json"], { cwd: ws }).json.to_seq).toBe(1);
    // `--to-seq --json`: the value is missing; --json on the line selects the JSON envelope.
    const missing = run("pixir", ["fork", "p", "--to-seq", "--json"], { cwd: ws });
    expect(missing.code).toBe(2);
    expect(missing.json.error).toMatchObject({ kind: "usage", message: "--to-seq requires a number value" });
    expect(run("pixir", ["fork", "p", "--to-seq"], { cwd: ws }).stderr).toBe(`error: usage: --to-seq requires a number value\n${HELP_HINT}`);
    expect(run("pixir", ["fork", "p", "--to-seq", "5x"], { cwd: ws }).stderr).toBe(`error: usage: --to-seq must be a non-negative integer\n${HELP_HINT}`);
    // A repeated single-value flag: the flag rule, not the synopsis (docs/cli-contract.md "Parsing").
    expect(run("pixir", ["fork", "p", "--to-seq", "1", "--to-seq", "2"], { cwd: ws }).stderr).toBe(`error: usage: --to-seq may be given only once\n${HELP_HINT}`);
    expect(listTree(ws)).toEqual([".pixir", ".pixir/sessions", ".pixir/sessions/p.ndjson"]);
  });
});

describe("B20 symlinks are refused", () => {
  it(".pixir/sessions as a symlink: cat, append and check give unsafe_state_path and never read outside", () => {
    const root = tempDir();
    const ws = path.join(root, "ws");
    const outside = path.join(root, "outside");
    mkdirSync(path.join(ws, ".pixir"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(path.join(outside, "s.ndjson"), "outside-secret\n");
    symlinkSync(outside, path.join(ws, ".pixir", "sessions"));
    for (const [args, input] of [[["cat", "s", "--json"], ""], [["append", "s", "--json"], EVENT], [["check", "--json"], ""], [["check", "s", "--json"], ""]] as const) {
      const r = spawned("pixir-log", [...args], { cwd: ws, input });
      expect(r.code, args.join(" ")).toBe(1);
      const envelope = r.json ?? r.errJson;
      expect(envelope.error.kind).toBe("unsafe_state_path");
      expect(envelope.error.details).toMatchObject({ reason: "symlink_component", component: ".pixir/sessions", component_index: 1 });
      expect(r.stdout + r.stderr).not.toContain("outside-secret");
    }
    expect(readFileSync(path.join(outside, "s.ndjson"), "utf8")).toBe("outside-secret\n");
  });
  it("a Log file that is a symlink: append is refused and the target is unchanged", () => {
    const root = tempDir();
    const ws = path.join(root, "ws");
    mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
    const target = path.join(root, "target.ndjson");
    writeFileSync(target, "");
    symlinkSync(target, path.join(ws, ".pixir", "sessions", "s.ndjson"));
    const r = run("pixir-log", ["append", "s", "--json"], { cwd: ws, input: EVENT });
    expect(r.code).toBe(1);
    expect(r.json.error.details).toMatchObject({ reason: "symlink_component", component: ".pixir/sessions/s.ndjson" });
    expect(readFileSync(target, "utf8")).toBe("");
  });
  it(".pixir as a regular file: non_directory_component; as a symlink: component .pixir, index 0", () => {
    const ws = tempDir();
    writeFileSync(path.join(ws, ".pixir"), "x");
    const file = run("pixir-log", ["cat", "s", "--json"], { cwd: ws });
    expect(file.errJson.error.details).toMatchObject({ reason: "non_directory_component", component: ".pixir", component_index: 0 });
    const ws2 = tempDir();
    const elsewhere = tempDir();
    symlinkSync(elsewhere, path.join(ws2, ".pixir"));
    const link = run("pixir-log", ["append", "s", "--json"], { cwd: ws2, input: EVENT });
    expect(link.json.error.details).toMatchObject({ reason: "symlink_component", component: ".pixir", component_index: 0 });
    expect(listTree(elsewhere)).toEqual([]);
  });
});

describe("B21 workspace selection", () => {
  it("--workspace beats PIXIR_WORKSPACE, which beats the current directory", () => {
    const cwd = tempDir();
    const env = tempDir();
    const flag = tempDir();
    spawned("pixir-log", ["append", "s"], { cwd, input: EVENT, env: { PIXIR_WORKSPACE: env } });
    expect(existsSync(logFile(env, "s"))).toBe(true);
    spawned("pixir-log", ["append", "t", "--workspace", flag], { cwd, input: EVENT, env: { PIXIR_WORKSPACE: env } });
    expect(existsSync(logFile(flag, "t"))).toBe(true);
    spawned("pixir-log", ["append", "u"], { cwd, input: EVENT });
    expect(existsSync(logFile(cwd, "u"))).toBe(true);
  });
  it("a Workspace reached through a symlink: writes land in the real directory, JSON reports the real path", () => {
    const root = tempDir();
    const real = path.join(root, "real");
    mkdirSync(real);
    symlinkSync(real, path.join(root, "alias"));
    const r = run("pixir-log", ["append", "s", "--json", "--workspace", path.join(root, "alias")], { cwd: root, input: EVENT });
    expect(r.json.log_path).toBe(path.join(real, ".pixir/sessions/s.ndjson"));
    expect(readLog(real, "s")).toContain('"session_id":"s"');
  });
  it("--workspace no-such-dir: exit 2 invalid_args field workspace", () => {
    const ws = tempDir();
    const r = run("pixir-log", ["ls", "--workspace", "no-such-dir", "--json"], { cwd: ws });
    expect(r.code).toBe(2);
    expect(r.json.error).toMatchObject({ kind: "invalid_args", details: { field: "workspace", reason: "missing" } });
  });
});

describe("B22 help and version", () => {
  it("help texts carry the required phrases, exit 0 and create nothing", () => {
    const ws = tempDir();
    const fork = run("pixir", ["fork", "--help"], { cwd: ws });
    for (const s of ["child Session", "--dry-run", "--summarize", "branch_summary"]) expect(fork.stdout).toContain(s);
    const log = run("pixir-log", ["--help"], { cwd: ws });
    for (const s of ["cat", "write", "append", "ls", "check", "repair", "materialize", "rm"]) expect(log.stdout).toContain(s);
    for (const [tool, args] of [["pixir", []], ["pixir", ["help"]], ["pixir", ["lock", "-h"]], ["pixir-log", ["cat", "--help", "--bogus"]], ["pixir-fork", ["--help"]]] as const) {
      const r = run(tool, [...args], { cwd: ws });
      expect(r.code).toBe(0);
      expect(r.stdout.length).toBeGreaterThan(50);
    }
    // `help <command>` is that command's help, also for the tools the wrapper hands over to.
    const helpOf = (tool: "pixir" | "pixir-log", args: string[]) => run(tool, args, { cwd: ws }).stdout;
    expect(helpOf("pixir", ["help", "fork"])).toBe(fork.stdout);
    expect(helpOf("pixir-log", ["help", "cat"])).toBe(helpOf("pixir-log", ["cat", "--help"]));
    // Help on a command that does not exist is a usage error, not the tool's help.
    const nope = run("pixir", ["help", "nope"], { cwd: ws });
    expect([nope.code, nope.stdout]).toEqual([2, ""]);
    expect(nope.stderr).toMatch(/^error: usage: unknown command "nope"\n/);
    // The wrapper mounts the tools' own declarations: `pixir log <command>`, `pixir tree`, `pixir append`.
    const logHelp = helpOf("pixir", ["help", "log"]);
    for (const c of ["cat", "write", "append", "ls", "check", "repair", "materialize", "rm"]) expect(logHelp).toMatch(new RegExp(`^  pixir log ${c}\\b`, "m"));
    expect(helpOf("pixir", ["log", "cat", "--help"])).toBe(helpOf("pixir-log", ["cat", "--help"]).replaceAll("pixir-log cat", "pixir log cat"));
    expect(helpOf("pixir", ["help", "tree"]).split("\n")[0]).toBe("Usage: pixir tree [<id>] [--max-depth N] [--format text|json|dot|mermaid] [--verbose]");
    expect(helpOf("pixir", ["append", "--help"]).split("\n")[0]).toBe("Usage: pixir append <id> [--drop-ephemeral] [--wait SECONDS] [--dry-run] [--take-over-dead-writer]");
    // A bare group is its help, as a bare tool is (cli.md §6).
    expect(run("pixir", ["log"], { cwd: ws }).stdout).toBe(logHelp);
    expect(run("pixir", ["append", "x", "y"], { cwd: ws }).stderr).toMatch(/^error: usage: pixir append <id> /);
    expect(run("pixir", ["log", "ls", "extra"], { cwd: ws }).stderr).toBe(`error: usage: pixir log ls\n${HELP_HINT}`);
    expect(run("pixir", ["log", "ls", "--bogus", "--json"], { cwd: ws }).json.error).toMatchObject({ message: "unknown flag --bogus", details: { synopsis: "usage: pixir log ls" } });
    expect(run("pixir", ["tree", "--bogus", "--json"], { cwd: ws }).json.error.details.synopsis).toMatch(/^usage: pixir tree /);
    expect(listTree(ws)).toEqual([]);
  });
  it("every flag a help text names is documented in docs/cli-contract.md or the tool's README", () => {
    const ws = tempDir();
    const read = (rel: string) => readFileSync(path.join(ROOT, rel), "utf8");
    const contract = read("docs/cli-contract.md");
    const readme = (tool: Tool) => read(`tools/${tool}/README.md`);
    // The wrapper hands `log`, `tree` and `append` over to the tools, whose READMEs it points to.
    const docsOf: Record<Tool, string> = {
      "pixir-log": readme("pixir-log"),
      "pixir-fork": readme("pixir-fork"),
      "pixir-summarize": readme("pixir-summarize"),
      "pixir-tree": readme("pixir-tree"),
      pixir: readme("pixir") + readme("pixir-log") + readme("pixir-tree"),
    };
    const undocumented: string[] = [];
    for (const [tool, list] of Object.entries(HELP_COMMANDS) as [Tool, string[][]][]) {
      for (const args of list) {
        const help = run(tool, [...args, "--help"], { cwd: ws });
        expect([help.code, help.stderr], `${tool} ${args.join(" ")}`).toEqual([0, ""]);
        for (const flag of new Set(help.stdout.match(/--[a-z][a-z-]*/g) ?? [])) {
          const named = new RegExp(`${flag}(?![a-z-])`);
          if (!named.test(docsOf[tool]) && !named.test(contract)) undocumented.push(`${tool} ${args.join(" ")}: ${flag}`);
        }
      }
    }
    expect(undocumented).toEqual([]);
  });
  it("--version prints a semver for every binary", () => {
    const ws = tempDir();
    for (const tool of ["pixir", "pixir-log", "pixir-fork"] as const) {
      const r = spawned(tool, ["--version"], { cwd: ws });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?\n$/);
    }
  });
});

describe("B23 the command line on yargs: suggestions, never-echo, completion", () => {
  const HOSTILE = "../../PWN;$HOME";
  it("yargs is a runtime dependency of every tool and of the library", () => {
    for (const dir of ["lib/envelope", ...(["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"] as const).map((t) => `tools/${t}`)]) {
      const pkg = JSON.parse(readFileSync(path.join(ROOT, dir, "package.json"), "utf8"));
      expect(pkg.dependencies?.yargs, dir).toMatch(/^\^17\./);
    }
  });
  it("a mistyped command or flag is named with the one meant (exit 2, usage)", () => {
    const ws = tempDir();
    const text = run("pixir", ["forkk"], { cwd: ws });
    expect([text.code, text.stdout, text.stderr]).toEqual([2, "", `error: usage: unknown command "forkk"; did you mean "fork"?\n${HELP_HINT}`]);
    const json = run("pixir", ["forkk", "--json"], { cwd: ws });
    expect(json.code).toBe(2);
    expect(json.json.error).toMatchObject({ kind: "usage", details: { synopsis: expect.stringMatching(/^usage: pixir </), next_actions: ["run the command with --help"] } });
    expect(run("pixir", ["log", "cta", "s"], { cwd: ws }).stderr).toBe(`error: usage: unknown command "cta"; did you mean "cat"?\n${HELP_HINT}`);
    expect(run("pixir", ["help", "forkk"], { cwd: ws }).stderr).toBe(`error: usage: unknown command "forkk"; did you mean "fork"?\n${HELP_HINT}`);
    expect(run("pixir-fork", ["--dryrun", "--json"], { cwd: ws }).errJson.error).toMatchObject({ kind: "usage", message: "unknown flag --dryrun; did you mean --dry-run?" });
    // Nothing close: the word alone; a token that is not a plain flag name: its kind alone.
    expect(run("pixir-log", ["cat", "s", "--frobnicate"], { cwd: ws }).stderr).toBe(`error: usage: unknown flag --frobnicate\n${HELP_HINT}`);
    expect(run("pixir-log", ["cat", "s", "--Fro/b"], { cwd: ws }).stderr).toBe(`error: usage: unknown flag\n${HELP_HINT}`);
    expect(listTree(ws)).toEqual([]);
  });
  it("no message of yargs' names what was typed: unknown commands, flags and positionals, values outside the choices", () => {
    const ws = tempDir();
    const cases: Array<[Tool, string[]]> = [
      ["pixir", [HOSTILE]],
      ["pixir", [`${HOSTILE}x`, "--json"]],
      ["pixir", ["fork", "s", HOSTILE]],
      ["pixir", ["fork", "s", `--${HOSTILE}`]],
      ["pixir", ["fork", "s", "--strategy", HOSTILE]],
      ["pixir", ["fork", "s", "--strategy", HOSTILE, "--json"]],
      ["pixir", ["help", HOSTILE]],
      ["pixir", ["log", HOSTILE]],
      ["pixir", ["lock", "status", "s", HOSTILE]],
      ["pixir-log", ["cat", "s", "--", HOSTILE]],
      ["pixir-tree", ["--format", HOSTILE]],
      ["pixir-summarize", ["--format", HOSTILE]],
      ["pixir-fork", [HOSTILE]],
      ["pixir", ["context", "s", "--format", HOSTILE]],
    ];
    for (const [tool, args] of cases) {
      const r = run(tool, args, { cwd: ws });
      expect(r.code, `${tool} ${args.join(" ")}`).toBe(2);
      expect((r.json ?? r.errJson)?.error.kind ?? r.stderr.slice(0, 13), `${tool} ${args.join(" ")}`).toMatch(/^(usage|error: usage:)/);
      for (const text of [r.stdout, r.stderr]) expect(text, `${tool} ${args.join(" ")}`).not.toMatch(/PWN|HOME/);
    }
    expect(listTree(ws)).toEqual([]);
  });
  it("a value outside a flag's choices names the choices; a switch given a value and a repeated flag are refused", () => {
    const ws = tempDir();
    expect(run("pixir", ["fork", "s", "--strategy", "copy"], { cwd: ws }).stderr).toBe(`error: usage: --strategy must be replay_v1 or share_v1\n${HELP_HINT}`);
    expect(run("pixir-log", ["ls", "--json=yes"], { cwd: ws }).stderr).toBe(`error: usage: --json takes no value\n${HELP_HINT}`);
    expect(run("pixir-log", ["cat", "s", "--from-seq", "1", "--from-seq=2"], { cwd: ws }).stderr).toBe(`error: usage: --from-seq may be given only once\n${HELP_HINT}`);
  });
  it("flags of a command may come before its name, in the wrapper's groups too (cli.md §1)", () => {
    const ws = workspace({ s: [user("a"), user("b")] });
    expect(run("pixir-log", ["--raw", "cat", "s"], { cwd: ws }).code).toBe(0);
    expect(run("pixir", ["log", "--to-seq", "0", "cat", "s"], { cwd: ws }).lines.map((e) => e.seq)).toEqual([0]);
    expect(run("pixir", ["--dry-run", "fork", "s", "--json"], { cwd: ws }).json).toMatchObject({ ok: true, recorded: false });
    // A flag of another command is still unknown to this one.
    expect(run("pixir-log", ["ls", "--raw"], { cwd: ws }).code).toBe(2);
  });
  it("`completion` prints yargs' script, bash or zsh; the script's query completes commands, flags, choices and session ids", () => {
    const ws = workspace({ "sess-one": [user("a")], "sess-two": [user("b")], other: [user("c")] });
    for (const tool of ["pixir", "pixir-log", "pixir-fork", "pixir-tree", "pixir-summarize"] as const) {
      const bash = run(tool, ["completion"], { cwd: ws, env: { SHELL: "/bin/bash" } });
      expect(bash.code, tool).toBe(0);
      expect(bash.stdout).toContain(`complete -o bashdefault -o default -F _${tool}_yargs_completions ${tool}`);
      expect(bash.stdout).toContain(`${tool} --get-yargs-completions`);
      const zsh = run(tool, ["completion"], { cwd: ws, env: { SHELL: "/usr/bin/zsh" } });
      expect(zsh.stdout).toContain(`compdef _${tool}_yargs_completions ${tool}`);
    }
    const complete = (tool: Tool, words: string[], env: Record<string, string> = {}) =>
      run(tool, ["--get-yargs-completions", tool, ...words], { cwd: ws, env: { SHELL: "/bin/bash", ...env } }).stdout.split("\n").filter(Boolean);
    expect(complete("pixir", ["fo"])).toContain("fork");
    // The query as the shell makes it: a process of its own.
    expect(spawned("pixir", ["--get-yargs-completions", "pixir", "fo"], { cwd: ws, env: { SHELL: "/bin/bash" } }).stdout.split("\n")).toContain("fork");
    expect(complete("pixir", ["fork", "s", "--st"])).toEqual(expect.arrayContaining(["--strategy", "--strict-boundary"]));
    expect(complete("pixir", ["fork", "s", "--strategy", ""])).toEqual(["replay_v1", "share_v1"]);
    expect(complete("pixir", ["fork", "sess"])).toEqual(["sess-one", "sess-two"]);
    expect(complete("pixir", ["log", "cat", ""])).toEqual(expect.arrayContaining(["sess-one", "sess-two", "other"]));
    expect(complete("pixir", ["merge", "other", "--into", "se"])).toEqual(["sess-one", "sess-two"]);
    expect(complete("pixir-log", ["check", "sess-one", "s"])).toEqual(expect.arrayContaining(["sess-one", "sess-two"]));
    expect(complete("pixir-fork", ["--parent", ""])).toEqual(["other", "sess-one", "sess-two"]);
    expect(complete("pixir-tree", ["o"])).toContain("other");
    // Not a session id: a fork's --child-id is new, an import's paths are files.
    expect(complete("pixir", ["fork", "s", "--child-id", "se"])).not.toContain("sess-one");
    expect(complete("pixir", ["import", "pi", "se"])).not.toContain("sess-one");
    // Another Workspace, or none: no ids and no error.
    expect(complete("pixir", ["fork", "se", "--workspace", tempDir()])).toEqual([]);
    const none = run("pixir", ["--get-yargs-completions", "pixir", "fork", ""], { cwd: tempDir() });
    expect([none.code, none.stderr]).toEqual([0, ""]);
  });
});
