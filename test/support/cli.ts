// Test support: run the built binaries as users do (spawned processes), and build Workspaces
// from inline objects. Every cross-tool test uses these.
import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export type Tool = "pixir" | "pixir-log" | "pixir-fork" | "pixir-tree" | "pixir-summarize";

export const binPath = (tool: Tool): string => path.join(ROOT, "tools", tool, "bin", `${tool}.js`);

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (report commands with --json). */
  json: any;
  /** stderr parsed as one JSON document (stream commands with --json). */
  errJson: any;
  lines: any[];
}

export interface RunOptions {
  cwd: string;
  input?: string | Buffer;
  env?: Record<string, string | undefined>;
  /** Run this script instead of the tool's own bin (a copy of a built tool). */
  bin?: string;
  /** Run as this user and group (a test running as root sees what another user sees). */
  uid?: number;
  gid?: number;
}

/** JSON.parse, or undefined for text that is not one JSON document. */
export function parseMaybe(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A finished run as tests read it: stdout and stderr, and both parsed as JSON where they are. */
export function runResult(code: number, stdout: string, stderr: string): RunResult {
  return {
    code,
    stdout,
    stderr,
    json: parseMaybe(stdout),
    errJson: parseMaybe(stderr.trim().split("\n").at(-1) ?? ""),
    lines: stdout
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => parseMaybe(l)),
  };
}

export function childEnv(extra: RunOptions["env"]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1" };
  // None of the test runner's own PIXIR_* settings (a Workspace, a lease, a take-over, a scale).
  for (const k of Object.keys(env)) if (k.startsWith("PIXIR_")) delete env[k];
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** Run a built binary to completion (a real process: start-up, exit code, signals; see in-process.ts for the cheap way). */
export function run(tool: Tool, args: string[], options: RunOptions): RunResult {
  const r = spawnSync(process.execPath, [options.bin ?? binPath(tool), ...args], {
    cwd: options.cwd,
    input: options.input ?? "",
    env: childEnv(options.env),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
    uid: options.uid,
    gid: options.gid,
  });
  return runResult(r.status ?? (r.signal ? 128 : 1), r.stdout, r.stderr);
}

/** Run a shell pipeline (bash -o pipefail) with the binaries on PATH. */
export function sh(script: string, options: RunOptions): RunResult {
  const bin = path.join(ROOT, "node_modules", ".bin");
  const r = spawnSync("bash", ["-o", "pipefail", "-c", script], {
    cwd: options.cwd,
    input: options.input ?? "",
    env: childEnv({ PATH: `${bin}:${process.env.PATH}`, ...options.env }),
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  return runResult(r.status ?? 128, r.stdout, r.stderr);
}

/** Start a binary in the background; resolves with its result when it exits. */
export function start(tool: Tool, args: string[], options: RunOptions) {
  const child = spawn(process.execPath, [binPath(tool), ...args], { cwd: options.cwd, env: childEnv(options.env), stdio: ["pipe", "pipe", "pipe"] });
  // A child that exits (or is killed) before reading all its input closes the pipe: not a test error.
  child.stdin.on("error", () => undefined);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const done = new Promise<RunResult>((resolve) => child.on("close", (code, signal) => resolve(runResult(code ?? (signal ? 128 : 1), stdout, stderr))));
  return { child, done };
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A fresh empty directory (real path), removed after the test file. */
export function tempDir(prefix = "pixir-test-"): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/**
 * A copy of the built `tool` that every user may read and run, for tests that run it as another user:
 * the clone itself may lie where only its owner can enter (under /root, or a `mktemp -d` directory).
 * Returns the copy's bin, for RunOptions.bin.
 */
export function toolCopyForAnyUser(tool: Tool): string {
  const dir = tempDir("pixir-bin-");
  const dest = path.join(dir, tool);
  // package.json says the bundles are ES modules; bin/ and dist/ are the built tool.
  for (const part of ["package.json", "bin", "dist"]) cpSync(path.join(ROOT, "tools", tool, part), path.join(dest, part), { recursive: true });
  const open = (p: string) => {
    const dir = statSync(p).isDirectory();
    chmodSync(p, dir ? 0o755 : 0o644);
    if (dir) for (const name of readdirSync(p)) open(path.join(p, name));
  };
  chmodSync(dir, 0o755);
  open(dest);
  return path.join(dest, "bin", `${tool}.js`);
}

export type Ev = { type: string; data?: Record<string, unknown>; seq?: number | null; id?: string; ts?: string; session_id?: string };

/** acceptance.md notation: `user "x"`, `assistant "x"`, `call c1 read a.txt`, `result c1`. */
export const user = (text: string): Ev => ({ type: "user_message", data: { text } });
export const assistant = (text: string): Ev => ({ type: "assistant_message", data: { text } });
export const call = (id: string, name = "read", file = "a.txt"): Ev => ({ type: "tool_call", data: { call_id: id, name, args: { path: file } } });
export const toolResult = (id: string): Ev => ({ type: "tool_result", data: { call_id: id, ok: true, output: "x" } });
export const ev = (type: string, data: Record<string, unknown> = {}): Ev => ({ type, data });

/** The line R(id; e0, e1, …) writes for event n. */
export function rawLine(id: string, n: number, e: Ev): string {
  const two = (x: number) => String(x).padStart(2, "0");
  // One second per seq, in ISO-8601 UTC (writers refuse any other ts).
  const ts = e.ts ?? `2026-06-30T${two(Math.floor(n / 3600) % 24)}:${two(Math.floor(n / 60) % 60)}:${two(n % 60)}Z`;
  return JSON.stringify({
    id: e.id ?? `${id}-${n}`,
    session_id: e.session_id ?? id,
    seq: e.seq === undefined ? n : e.seq,
    ts,
    type: e.type,
    data: e.data ?? {},
  });
}

/** A realistic Log `id` of about `size` (e.g. "4MiB") or `--events N`, from the benchmarks' deterministic generator (bench/gen-log.mjs), at `out` (default: `id`'s Log in `ws`). */
export function generateLog(ws: string, id: string, size: { bytes: string } | { events: number }, out = logFile(ws, id)): void {
  const amount = "bytes" in size ? ["--bytes", size.bytes] : ["--events", String(size.events)];
  const gen = spawnSync(process.execPath, [path.join(ROOT, "bench", "gen-log.mjs"), ...amount, "--session", id, "--out", out], { encoding: "utf8" });
  if (gen.status !== 0) throw new Error(`bench/gen-log.mjs failed: ${gen.stderr}`);
}

export function logFile(ws: string, id: string): string {
  return path.join(ws, ".pixir", "sessions", `${id}.ndjson`);
}

/** R(id; …): write a raw Log directly, one line per Event (or verbatim text). */
export function writeRaw(ws: string, id: string, events: Ev[] | string): string {
  const file = logFile(ws, id);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, typeof events === "string" ? events : events.map((e, n) => `${rawLine(id, n, e)}\n`).join(""));
  return file;
}

/** A Workspace from inline Logs: { s1: [user("hi")], s2: "raw text" }. */
export function workspace(logs: Record<string, Ev[] | string> = {}): string {
  const ws = tempDir();
  for (const [id, events] of Object.entries(logs)) writeRaw(ws, id, events);
  return ws;
}

/** The records of a JSONL source file (a transcript, a rollout): each non-blank line that parses, the rest skipped. */
export const jsonRecords = (file: string): any[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .flatMap((l) => {
      const v = parseMaybe(l);
      return v === undefined ? [] : [v];
    });

export const readLog = (ws: string, id: string): string => readFileSync(logFile(ws, id), "utf8");
export const readEvents = (ws: string, id: string): any[] =>
  readLog(ws, id)
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l));

/** Every file below `dir`, relative, sorted: to prove that nothing else was created. */
export function listTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      out.push(r);
      if (e.isDirectory()) walk(path.join(d, e.name), r);
    }
  };
  walk(dir, "");
  return out.sort();
}

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** envelope-and-log.md §5's invalid session ids, with the reason each must give. */
export const INVALID_SESSION_IDS: ReadonlyArray<readonly [string, string]> = [
  ["", "empty"],
  [".", "invalid_start"],
  ["..", "invalid_start"],
  [".leading", "invalid_start"],
  ["a/b", "invalid_character"],
  ["a\\b", "invalid_character"],
  ["a b", "invalid_character"],
  ["a:b", "invalid_character"],
  ["a;$HOME", "invalid_character"],
  ["a%2fb", "invalid_character"],
  ["a\n", "invalid_character"],
  ["b".repeat(235) + "c", "too_long"],
];

/**
 * Let the lease of a writer that was killed or stopped turn stale without waiting out the default
 * 5 s: readers judge a lease by the threshold it records (writer-lease.md §4, rule 7: `stale_after_ms`
 * when it is a positive integer), so lower that, then wait past it. The lease's holder, heartbeat and
 * everything else stay as the writer left them.
 */
export async function leaseGoesStale(ws: string, id: string, staleAfterMs = 200): Promise<void> {
  const file = path.join(ws, ".pixir", "session_leases", `${id}.json`);
  const lease = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  writeFileSync(file, `${JSON.stringify({ ...lease, stale_after_ms: staleAfterMs }, null, 2)}\n`);
  await new Promise((r) => setTimeout(r, staleAfterMs + 100));
}
