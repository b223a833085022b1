// Shared by the fork, pipeline and share tests: independent implementations of the spec's derived
// values (canonicalJson, prefix_digest, derivedUlid), and the channel rules of error results.
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import path from "node:path";
import { expect } from "vitest";
import { listTree, type RunResult } from "./cli.js";

export const sha256 = (bytes: string | Buffer): string => createHash("sha256").update(bytes).digest("hex");

/** fork.md §4.3: JSON.stringify with object keys sorted recursively. */
export function canonicalJson(v: unknown): string {
  const sort = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sort);
    if (x !== null && typeof x === "object") {
      const o = x as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, sort(o[k])]),
      );
    }
    return x;
  };
  return JSON.stringify(sort(v));
}

/** fork.md §4.3 prefix_digest of the inherited Events, in order. */
export function prefixDigest(events: Array<{ type: string; ts?: string | null; data?: unknown }>): string {
  return `sha256:${sha256(events.map((e) => `${canonicalJson([e.type, e.ts ?? null, e.data ?? {}])}\n`).join(""))}`;
}

export const EMPTY_DIGEST = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** envelope-and-log.md §4: derivedUlid(key, ts). */
export function derivedUlid(key: string, ts: unknown): string {
  let ms = typeof ts === "string" ? Date.parse(ts) : NaN;
  if (Number.isNaN(ms)) ms = 0;
  ms = Math.min(Math.max(ms, 0), 2 ** 48 - 1);
  let time = "";
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32]! + time;
    ms = Math.floor(ms / 32);
  }
  const hash = createHash("sha256").update(key, "utf8").digest();
  let bits = 0n;
  for (let i = 0; i < 10; i++) bits = (bits << 8n) | BigInt(hash[i]!);
  let rand = "";
  for (let i = 0; i < 16; i++) {
    rand = CROCKFORD[Number(bits & 31n)]! + rand;
    bits >>= 5n;
  }
  return time + rand;
}

/** The keys of fork.md §3.2: 17 Pixir keys plus ours. */
export const PLAN_KEYS = [
  "ok",
  "recorded",
  "dry_run",
  "parent_session_id",
  "child_session_id",
  "fork_root_session_id",
  "from_seq",
  "to_seq",
  "event_count",
  "workspace",
  "parent_log_path",
  "child_log_path",
  "summarize",
  "would_record_branch_summary",
  "branch_summary_strategy",
  "strategy",
  "resume_command",
  "prefix_digest",
  "open_tool_calls",
  "resource_count",
].sort();

export const REPLAY_LIMITATIONS = ["full replayed prefix remains authoritative; session_fork is lineage metadata only"];
export const SHARE_LIMITATIONS = ["shared prefix is read from the parent log and verified by prefix_digest; the parent log must be kept"];

/** A hand-written share_v1 header of a child of `parent`, inheriting `n` Events through `toSeq`: for Logs no tool would make. */
export function shareHeader(parent: string, n: number, toSeq: number, digest: string, extra: Record<string, unknown> = {}): { type: string; data: Record<string, unknown> } {
  return {
    type: "session_fork",
    data: {
      parent_session_id: parent,
      fork_root_session_id: "root",
      forked_to_seq: toSeq,
      parent_workspace: "/elsewhere",
      child_workspace: "/elsewhere",
      replay_event_count: n,
      from_seq: n > 0 ? 0 : null,
      strategy: "share_v1",
      limitations: SHARE_LIMITATIONS,
      prefix_digest: digest,
      open_tool_calls: [],
      ...extra,
    },
  };
}
export const INTEGRITY_NEXT_ACTIONS = [
  "rerun the whole pipeline; an upstream stage failed or was cut short",
  "check the exit status of every stage (set -o pipefail)",
];

/** A report command run with --json that failed: the envelope on stdout, stderr empty. */
export function expectJsonError(r: RunResult, exit: number, kind: string): Record<string, any> {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: exit, stderr: "" });
  expect(r.stdout.trim().split("\n")).toHaveLength(1);
  expect(r.json.ok).toBe(false);
  expect(r.json.error.kind).toBe(kind);
  expect(typeof r.json.error.message).toBe("string");
  expect(r.json.error.details).toBeTypeOf("object");
  return r.json.error.details;
}

/** A report command in text mode, or a stream command, that failed: `error: <kind>: …` on stderr, stdout empty. */
export function expectTextError(r: RunResult, exit: number, kind: string): string {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: exit, stdout: "" });
  // One line, and no stack trace.
  expect(r.stderr).toMatch(new RegExp(`^error: ${kind}: [^\\n]+\\n(?:hint: [^\\n]+\\n)*$`));
  return r.stderr;
}

/** A stream command with --json that failed: stdout empty, the envelope as the last stderr line. */
export function expectStreamJsonError(r: RunResult, exit: number, kind: string): Record<string, any> {
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: exit, stdout: "" });
  expect(r.errJson?.ok).toBe(false);
  expect(r.errJson.error.kind).toBe(kind);
  return r.errJson.error.details;
}

/** A successful report command with --json: one document on stdout, stderr empty. */
export function expectJsonOk(r: RunResult): Record<string, any> {
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
  expect(r.stdout.trim().split("\n")).toHaveLength(1);
  expect(r.json?.ok).toBe(true);
  return r.json;
}

/** Files that must never survive a failed or finished write: temp files, journals, lease files. */
export function leftovers(ws: string): string[] {
  if (!existsSync(path.join(ws, ".pixir"))) return [];
  return listTree(ws).filter((f) => /\.tmp-[0-9a-f]{8}$/.test(f) || f.endsWith(".append-journal") || /^\.pixir\/session_leases\/[^/]+\.json$/.test(f));
}

/** The Log files of a Workspace, by session id. */
export function logIds(ws: string): string[] {
  const dir = path.join(ws, ".pixir", "sessions");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".ndjson"))
    .map((f) => f.slice(0, -".ndjson".length))
    .sort();
}

/** The parts of a History that a fork keeps equal across strategies: type, seq, ts, data. */
export const logical = (events: any[]) => events.map((e) => ({ type: e.type, seq: e.seq, ts: e.ts, data: e.data }));

/** Drop the fields of a session_fork header that legitimately differ between two forks of the same prefix. */
export function withoutHeaderNoise(events: any[], drop: string[] = ["strategy", "limitations"]): any[] {
  return logical(events).map((e, i) => {
    if (i !== 0 || e.type !== "session_fork") return e;
    const data = { ...e.data };
    for (const k of drop) delete data[k];
    return { type: e.type, seq: e.seq, data };
  });
}

export const HOSTILE = "../../../outside/PWN;$HOME%2fsecret";

/** A hostile id never appears in any output, in any form. */
export function expectNoEcho(r: RunResult, ...needles: string[]): void {
  for (const n of ["outside", "PWN", "secret", ...needles]) {
    expect(r.stdout).not.toContain(n);
    expect(r.stderr).not.toContain(n);
  }
}
