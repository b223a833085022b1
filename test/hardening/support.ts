// Shared by the hardening suites (docs/reliability.md): the scale and seed, a seeded random source,
// tools run in-process through their main(argv, io), Workspace snapshots, the structured-error rules
// of cli.md §3–§4, lease helpers, and the figures each suite records for the long run.
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { childEnv, parseMaybe, ROOT, type RunResult } from "../support/cli.js";

// ---------------------------------------------------------------------------------------------
// Scale and seed

/**
 * `PIXIR_HARDENING_SCALE=long` runs the documented long version; a number multiplies the CI counts
 * (for a quick deeper look); unset is the CI size.
 */
export const LONG = process.env.PIXIR_HARDENING_SCALE === "long";
const FACTOR = Number(process.env.PIXIR_HARDENING_SCALE);
/** Every generated input derives from this seed (`PIXIR_HARDENING_SEED` overrides it). */
export const SEED = Number(process.env.PIXIR_HARDENING_SEED ?? 20260720) >>> 0;

export const scaled = (ci: number, long: number): number => (LONG ? long : Number.isFinite(FACTOR) && FACTOR > 0 ? Math.max(1, Math.round(ci * FACTOR)) : ci);

/** A small seeded generator (mulberry32): the same seed gives the same trials. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

/** A seed for one named sub-run, so suites do not share a sequence. */
export function subSeed(name: string, seed = SEED): number {
  return createHash("sha256").update(`${seed}:${name}`).digest().readUInt32BE(0);
}

// ---------------------------------------------------------------------------------------------
// Figures: each suite records what it ran, for docs/reliability.md.

const FIGURES_DIR = path.join(ROOT, ".tmp", "hardening");

export function recordFigures(suite: string, figures: Record<string, unknown>): void {
  mkdirSync(FIGURES_DIR, { recursive: true });
  const scale = LONG ? "long" : Number.isFinite(FACTOR) && FACTOR > 0 ? `x${FACTOR}` : "ci";
  const file = path.join(FIGURES_DIR, `${suite}-${scale}.json`);
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    previous = {};
  }
  writeFileSync(file, `${JSON.stringify({ ...previous, ...figures, seed: SEED, scale, recorded_at: new Date().toISOString() }, null, 2)}\n`);
}

// ---------------------------------------------------------------------------------------------
// Temp directories

/** A fresh real directory; the caller removes it (fuzz runs make thousands). */
export function freshDir(prefix = "pixir-hard-"): string {
  return realpathSync(mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export const removeDir = (dir: string): void => rmSync(dir, { recursive: true, force: true });

// ---------------------------------------------------------------------------------------------
// In-process runs: the tools' main(argv, io) (test/support/in-process.ts)

export { loadMain, runInProcess, type InProcessResult } from "../support/in-process.js";

/** The environment of every run: none of the caller's PIXIR_* variables (test/support/cli.ts childEnv). */
export const cleanEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => childEnv(extra);

// ---------------------------------------------------------------------------------------------
// Structured errors (cli.md §2–§4)

const EXIT: Record<string, number> = {
  usage: 2,
  invalid_args: 2,
  not_found: 2,
  permission_denied: 3,
  session_writer_active: 5,
  session_writer_stale: 5,
  session_writer_ambiguous: 5,
  session_writer_lost: 5,
  interrupted: 130,
};
export const exitCodeOf = (kind: string): number => EXIT[kind] ?? 1;

/** A stack trace, a raw exception or the argument parser's own words leaking out. */
export const STACK = /\n\s+at [^\n]*[(:]\d+|^\s*at |Error: |TypeError|RangeError|SyntaxError|Unknown argument|Not enough arguments/m;

export type Channel = "stream" | "report";

/**
 * The error of a failed run, checked against the channel rules: `--json` report commands print one
 * envelope on stdout and nothing on stderr; everything else prints `error: <kind>: <message>` (or the
 * envelope with --json) as the last stderr line and keeps stdout for data. Returns {kind, details}.
 */
export function structuredError(r: RunResult, channel: Channel, json: boolean): { kind: string; message: string; details: Record<string, any> } {
  expect(r.stderr, "no stack trace on stderr").not.toMatch(STACK);
  if (json && channel === "report") {
    expect(r.stderr, "--json report commands keep stderr empty").toBe("");
    const doc = parseMaybe(r.stdout.trim());
    expect(doc, `one JSON document on stdout, got ${JSON.stringify(r.stdout.slice(0, 300))}`).toMatchObject({ ok: false });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    return doc.error;
  }
  const lines = r.stderr.trimEnd().split("\n");
  if (json) {
    const last = lines.at(-1) ?? "";
    const doc = parseMaybe(last);
    expect(doc, `a JSON envelope as the last stderr line, got ${JSON.stringify(r.stderr.slice(0, 300))}`).toMatchObject({ ok: false });
    return doc.error;
  }
  // Text mode: the error line, then only its `hint:` lines (the next actions).
  let at = lines.length - 1;
  while (at > 0 && lines[at]!.startsWith("hint: ")) at--;
  const m = /^error: ([a-z_]+): (.*)$/.exec(lines[at] ?? "");
  expect(m, `an "error: <kind>: <message>" line, got ${JSON.stringify(r.stderr.slice(0, 300))}`).not.toBeNull();
  return { kind: m![1]!, message: m![2]!, details: {} };
}

/** A failed run's error: structured, documented exit code, never internal_error. */
export function expectDocumentedFailure(r: RunResult, channel: Channel, json: boolean): { kind: string; details: Record<string, any> } {
  const err = structuredError(r, channel, json);
  expect(err.kind, "never internal_error").not.toBe("internal_error");
  expect(r.code, `exit code of ${err.kind}`).toBe(exitCodeOf(err.kind));
  if (json) expect(err.details, "details is an object").toBeTypeOf("object");
  return err;
}

// ---------------------------------------------------------------------------------------------
// Workspace snapshots: proof that nothing was written

/** Every entry below `dir` with its type and content digest (symlinks by their target text). */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (abs: string, rel: string) => {
    let entries: string[];
    try {
      entries = readdirSync(abs);
    } catch {
      return;
    }
    for (const name of entries.sort()) {
      const a = path.join(abs, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(a);
      if (st.isSymbolicLink()) out.set(r, `link:${readlinkSync(a)}`);
      else if (st.isDirectory()) {
        out.set(r, "dir");
        walk(a, r);
      } else out.set(r, `file:${st.size}:${createHash("sha256").update(readFileSync(a)).digest("hex")}`);
    }
  };
  walk(dir, "");
  return out;
}

/**
 * The catalog a reader computed before its own write failed (archive.md §1: derived data under
 * .pixir/index/, written whole or not at all): a complete cache file is no change to the Workspace. A
 * temp file there still is.
 */
const DERIVED_CACHE = /(^|\/)\.pixir\/index(\/(catalog|catalog-scans)\.json)?$/;

export function snapshotDiff(before: Map<string, string>, after: Map<string, string>): string[] {
  const diff: string[] = [];
  for (const [k, v] of after) if (before.get(k) !== v && !(DERIVED_CACHE.test(k) && !before.has(k))) diff.push(`${before.has(k) ? "changed" : "added"} ${k}`);
  for (const k of before.keys()) if (!after.has(k)) diff.push(`removed ${k}`);
  return diff;
}

// ---------------------------------------------------------------------------------------------
// Leases and Logs

export const leaseFile = (ws: string, id: string): string => path.join(ws, ".pixir", "session_leases", `${id}.json`);
export const sessionsPath = (ws: string): string => path.join(ws, ".pixir", "sessions");

/** A Writer Lease record of `id` as a writer of another process writes it (writer-lease.md §2), with `fields` over the defaults. */
export function writeLease(ws: string, id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Date.now();
  const lease = {
    version: 1,
    purpose: "session_writer",
    session_id: id,
    workspace: ws,
    lease_path: leaseFile(ws, id),
    holder_id: "wrl_0123456789abcdef",
    os_pid: "999999",
    beam_node: "nonode@nohost",
    hostname: os.hostname(),
    started_at_ms: now,
    started_at: new Date(now).toISOString(),
    heartbeat_at_ms: now,
    heartbeat_at: new Date(now).toISOString(),
    heartbeat_interval_ms: 1000,
    stale_after_ms: 60000,
    ...fields,
  };
  mkdirSync(path.dirname(leaseFile(ws, id)), { recursive: true });
  writeFileSync(leaseFile(ws, id), JSON.stringify(lease, null, 2));
  return lease;
}

/**
 * The state a SIGKILLed writer's lease reaches after 5 s without a heartbeat, written directly so a
 * test does not sleep: the heartbeat is moved back a minute. Returns false when there is no lease.
 */
export function ageLease(ws: string, id: string): boolean {
  let lease: Record<string, unknown>;
  try {
    lease = JSON.parse(readFileSync(leaseFile(ws, id), "utf8"));
  } catch {
    return false;
  }
  const past = Date.now() - 60_000;
  lease.heartbeat_at_ms = past;
  lease.heartbeat_at = new Date(past).toISOString();
  writeFileSync(leaseFile(ws, id), `${JSON.stringify(lease, null, 2)}\n`);
  return true;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Physical non-empty lines of a text. */
export const nonEmptyLines = (text: string): string[] => text.split("\n").filter((l) => l !== "");
