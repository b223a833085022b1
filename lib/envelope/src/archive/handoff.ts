// archive.md §5: handing a session to an agent. Where the agent runs it (the cwd its source recorded, or
// --cwd), where the agent keeps its sessions (--install), and the command that resumes the export.
import { existsSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PixirError, usageError } from "../event/errors.js";
import { osWriteFault } from "../event/os-fault.js";
import { agentOfData } from "./agents.js";
import { openHistory } from "../store/loader.js";

export type HandoffAgent = "claude" | "codex" | "pi";

/**
 * The working directory an export to `agent` writes, for the exporter's `cwd` option: `--cwd` as given
 * (resolved against the shell's directory); else, for a session of another agent, the cwd that agent
 * recorded. Undefined leaves the exporter its own rule: a session of the same agent keeps what it
 * recorded, and a Pixir-native session ran in its Workspace. A session of another agent that recorded no
 * cwd is a usage error (exit 2): the agent would never list a file of the archive's directory.
 */
export async function handoffCwd(ws: string, id: string, agent: HandoffAgent, given: string | undefined, shellCwd: string): Promise<string | undefined> {
  if (given !== undefined) {
    if (given === "") throw cwdError("--cwd is empty", "empty_cwd");
    return path.resolve(shellCwd, given);
  }
  let source: RecordedSource | null = null;
  try {
    source = await firstSource(ws, id);
  } catch {
    return undefined; // the exporter names a missing or broken Log itself
  }
  if (source === null || source.agent === agent) return undefined;
  if (source.cwd !== null) return source.cwd;
  throw cwdError(`the ${source.agent} session recorded no working directory; pass --cwd DIR, the project directory ${agent} should resume it in`, "cwd_unknown");
}

interface RecordedSource {
  agent: string;
  cwd: string | null;
}

/**
 * The agent of the first Event an import made, and the first cwd that agent recorded (archive.md §1, the
 * session facts' rule in agents.ts); null for a Pixir-native History. An import's carrier is its first
 * Event, or the first after a fork's header, so a History whose first two Events carry none is native and
 * is not read further; else it reads only as far as the cwd. A fork's inherited prefix counts.
 */
async function firstSource(ws: string, id: string): Promise<RecordedSource | null> {
  let found: RecordedSource | null = null;
  let read = 0;
  for await (const { event } of (await openHistory(ws, id)).items()) {
    const rules = agentOfData(event.data);
    if (rules === null && found === null && ++read >= 2) return null;
    if (rules === null) continue;
    found ??= { agent: rules.agent, cwd: null };
    const cwd = rules.agent === found.agent ? rules.cwdOf(event.data) : null;
    if (cwd !== null) return { agent: found.agent, cwd };
  }
  return found;
}

const cwdError = (message: string, reason: string): PixirError =>
  new PixirError("invalid_args", message, { field: "cwd", reason, next_actions: ["pass --cwd DIR, the project directory the agent should run in"] });

const homeOf = (env: NodeJS.ProcessEnv): string => (env.HOME !== undefined && env.HOME !== "" ? env.HOME : os.homedir());
const setDir = (v: string | undefined): string | null => (v !== undefined && v !== "" ? v : null);

/** --install for Claude: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects` (the export adds `<escaped cwd>/<id>.jsonl`). */
export function claudeInstallRoot(env: NodeJS.ProcessEnv): string {
  return path.join(setDir(env.CLAUDE_CONFIG_DIR) ?? path.join(homeOf(env), ".claude"), "projects");
}

/** --install for Codex: `$CODEX_HOME/sessions`, else `~/.codex/sessions` (the export adds `YYYY/MM/DD/rollout-….jsonl`). */
export function codexInstallRoot(env: NodeJS.ProcessEnv): string {
  return path.join(setDir(env.CODEX_HOME) ?? path.join(homeOf(env), ".codex"), "sessions");
}

/** pi-interop.md §1.1: `<agentDir>/sessions/--<encoded cwd>--`, agentDir `$PI_CODING_AGENT_DIR` else `~/.pi/agent`. */
export function piInstallDir(env: NodeJS.ProcessEnv, cwd: string): string {
  const agentDir = setDir(env.PI_CODING_AGENT_DIR) ?? path.join(homeOf(env), ".pi", "agent");
  const encoded = cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-");
  return path.join(agentDir, "sessions", `--${encoded}--`);
}

/** A word the shell reads back as `s`. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** §5: the command that resumes an export: Claude lists sessions by project directory, so it starts there. */
export function resumeCommand(agent: HandoffAgent, target: { cwd: string; id: string; file: string | null }): string {
  switch (agent) {
    case "claude":
      return `cd ${shellQuote(target.cwd)} && claude --resume ${shellQuote(target.id)}`;
    case "codex":
      return `codex resume ${shellQuote(target.id)}`;
    case "pi":
      return `pi --session ${target.file === null ? "FILE" : shellQuote(target.file)}`;
  }
}

/**
 * --install: the agent's store directory, made (0700, as the agents make theirs) when absent; null on a
 * dry run that would have to make it, so the export reports what it would write without a place on disk.
 */
export function installDir(dir: string, dryRun: boolean): string | null {
  if (existsSync(dir)) return dir;
  if (dryRun) return null;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw osWriteFault(err, dir, "mkdir", "the agent's session directory");
  }
  return dir;
}

/** --out and --install name two places for one file. */
export function assertOnePlace(out: string | undefined, install: boolean, synopsis: string): void {
  if (out !== undefined && install) throw usageError(synopsis, "--out and --install name two places for the export; pass one");
}
