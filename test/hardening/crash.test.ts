// Crash suite (docs/reliability.md §2): every write path is SIGKILLed at seeded random points. A new
// Log is then absent or complete; an existing Log reads exactly as before or complete (the append
// journal limits readers to the original length) and, after `pixir-log repair`, has exactly its old
// bytes or the complete ones. Temp files are gone or reported by `pixir-log check`, the dead writer's
// lease can be taken over, and running the command again finishes the job.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { binPath, rawLine, ROOT, type Tool } from "../support/cli.js";
// Setup, reads, repair and rerun on the tool thread (test/support/thread.ts); every run that is killed is a process (killAfter).
import { runInThread as run } from "../support/thread.js";
import { ageLease, cleanEnv, freshDir, nonEmptyLines, recordFigures, removeDir, Rng, scaled, subSeed } from "./support.js";

const TRIALS = scaled(2, 100);
const figures: Record<string, unknown> = { trials_per_path: TRIALS };
const perPath: Record<string, Record<string, number>> = {};
const started = Date.now();
afterAll(() => recordFigures("crash", { ...figures, paths: perPath, duration_ms: Date.now() - started }));

// ---------------------------------------------------------------------------------------------
// Templates: each path's Workspace is built once, then copied for every trial.

const TEXT = "lorem ipsum dolor sit amet ".repeat(30);
const PI = path.join(ROOT, "test", "fixtures", "pi");
const sha256 = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

function writeLog(ws: string, id: string, lines: string[]): void {
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  writeFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), lines.join(""));
}

const tsOf = (k: number) => new Date(Date.UTC(2026, 6, 20) + k * 1000).toISOString();
const stampedLines = (id: string, from: number, n: number, type = "user_message") =>
  Array.from({ length: n }, (_, k) => `${rawLine(id, from + k, { type, ts: tsOf(from + k), data: { text: `${from + k} ${TEXT}` } })}\n`);

/** A parent P with resources referenced from some of its Events. */
function parentWithResources(ws: string, n: number): void {
  const lines: string[] = [];
  for (let k = 0; k < n; k++) {
    const data: Record<string, unknown> = { text: `${k} ${TEXT}` };
    if (k % 500 === 0) {
      const payload = Buffer.from(`payload ${k} `.repeat(2000));
      const sum = sha256(payload);
      const rid = `r${k}`;
      mkdirSync(path.join(ws, ".pixir", "sessions", "P", "resources", rid), { recursive: true });
      writeFileSync(path.join(ws, ".pixir", "sessions", "P", "resources", rid, `${sum}.txt`), payload);
      data.resources = [{ resource_id: rid, content_sha256: sum, extension: "txt", store_ref: `.pixir/sessions/P/resources/${rid}/${sum}.txt` }];
    }
    lines.push(`${rawLine("P", k, { type: k % 2 ? "assistant_message" : "user_message", ts: tsOf(k), data })}\n`);
  }
  writeLog(ws, "P", lines);
}

function mustRun(tool: Tool, args: string[], ws: string, input?: string): void {
  const r = run(tool, args, { cwd: ws, input });
  expect(r.code, `${tool} ${args.join(" ")}: ${r.stderr}`).toBe(0);
}

interface CrashPath {
  name: string;
  tool: Tool;
  argv: string[];
  /** Builds the template; returns stdin for the command, if any. */
  setup(ws: string): Buffer | undefined;
  /** The Logs the command writes. */
  logs: string[];
  /**
   * States a Log may be left in besides before and complete, by id: a command that commits more than
   * once (pixir repair: the torn tail first, then the fallback results).
   */
  intermediate?: (id: string, before: Buffer | null) => Buffer | null;
  /** The before state has problems of its own that `check` reports (a torn tail). */
  brokenBefore?: boolean;
}

const PATHS: CrashPath[] = [
  {
    name: "pixir-log write (new Log)",
    tool: "pixir-log",
    argv: ["write", "n"],
    logs: ["n"],
    setup: () => Buffer.from(stampedLines("n", 0, 4000).join("")),
  },
  {
    name: "pixir-log write (existing Log)",
    tool: "pixir-log",
    argv: ["write", "s"],
    logs: ["s"],
    setup: (ws) => {
      writeLog(ws, "s", stampedLines("s", 0, 50));
      return Buffer.from(stampedLines("s", 50, 4000).join(""));
    },
  },
  {
    name: "pixir-log append",
    tool: "pixir-log",
    argv: ["append", "s"],
    logs: ["s"],
    setup: (ws) => {
      writeLog(ws, "s", stampedLines("s", 0, 50));
      return Buffer.from(Array.from({ length: 4000 }, (_, k) => `${JSON.stringify({ type: "user_message", data: { text: `${k} ${TEXT}` } })}\n`).join(""));
    },
  },
  {
    name: "pixir-log repair",
    tool: "pixir-log",
    argv: ["repair", "s"],
    logs: ["s"],
    brokenBefore: true,
    setup: (ws) => {
      writeLog(ws, "s", [...stampedLines("s", 0, 20000), '{"id":"torn","session_id":"s","seq":20000,"ty']);
      return undefined;
    },
  },
  {
    name: "pixir-log materialize",
    tool: "pixir-log",
    argv: ["materialize", "c"],
    logs: ["c"],
    setup: (ws) => {
      parentWithResources(ws, 4000);
      mustRun("pixir", ["fork", "P", "--strategy", "share_v1", "--child-id", "c"], ws);
      mustRun("pixir-log", ["append", "c"], ws, Array.from({ length: 100 }, (_, k) => `{"type":"user_message","data":{"text":"own ${k}"}}\n`).join(""));
      return undefined;
    },
  },
  {
    name: "pixir-log rm",
    tool: "pixir-log",
    argv: ["rm", "P", "--materialize-children"],
    logs: ["P", "c1", "c2"],
    setup: (ws) => {
      parentWithResources(ws, 3000);
      mustRun("pixir", ["fork", "P", "--strategy", "share_v1", "--child-id", "c1"], ws);
      mustRun("pixir", ["fork", "P", "--strategy", "share_v1", "--child-id", "c2", "--to-seq", "1000"], ws);
      return undefined;
    },
  },
  {
    name: "pixir fork",
    tool: "pixir",
    argv: ["fork", "P", "--child-id", "k", "--summarize"],
    logs: ["k"],
    setup: (ws) => {
      parentWithResources(ws, 1500);
      return undefined;
    },
  },
  {
    name: "pixir compact",
    tool: "pixir",
    argv: ["compact", "s", "--tail-events", "10"],
    logs: ["s"],
    setup: (ws) => {
      // Compaction summarises every compacted Event (about half a millisecond each): kept small.
      writeLog(ws, "s", stampedLines("s", 0, 1500));
      return undefined;
    },
  },
  {
    name: "pixir merge",
    tool: "pixir",
    argv: ["merge", "c", "--into", "P"],
    logs: ["P"],
    setup: (ws) => {
      writeLog(ws, "P", stampedLines("P", 0, 1000));
      mustRun("pixir", ["fork", "P", "--child-id", "c"], ws);
      mustRun("pixir-log", ["append", "c"], ws, Array.from({ length: 1500 }, (_, k) => `{"type":"user_message","data":{"text":"own ${k} ${TEXT}"}}\n`).join(""));
      return undefined;
    },
  },
  {
    name: "pixir repair",
    tool: "pixir",
    argv: ["repair", "s"],
    logs: ["s"],
    brokenBefore: true,
    setup: (ws) => {
      const calls = Array.from({ length: 300 }, (_, k) => `${rawLine("s", 6000 + k, { type: "tool_call", ts: tsOf(6000 + k), data: { call_id: `c${k}`, name: "read", args: { path: "a" } } })}\n`);
      writeLog(ws, "s", [...stampedLines("s", 0, 6000), ...calls, '{"id":"torn","session_id":"s","seq":6300,"ty']);
      return undefined;
    },
    // The torn tail is dropped first (what pixir-log repair does), then the fallback results are appended.
    intermediate: (_id, before) => (before === null ? null : before.subarray(0, before.lastIndexOf(0x0a) + 1)),
  },
  {
    name: "pixir import pi",
    tool: "pixir",
    argv: ["import", "pi", path.join(PI, "before-compaction.jsonl"), path.join(PI, "generated/sessions/--home-user-demo--/2026-01-10T09-00-00-250Z_19460c51-3e55-4ee0-ba8f-b97bb5a88301.jsonl"), path.join(PI, "large-session.jsonl")],
    logs: ["ffae836b-9420-4060-ac13-7745215f90ff", "19460c51-3e55-4ee0-ba8f-b97bb5a88301", "19460c51-3e55-4ee0-ba8f-b97bb5a88301.a9bcedc7", "d703a1a9-1b7b-4fb1-b512-c9738b1fe617"],
    setup: () => undefined,
  },
];

// ---------------------------------------------------------------------------------------------
// States

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** A Log's content without what differs between two runs of the same command: generated ids and times. */
function normalize(bytes: Buffer | null, ws: string): string | null {
  if (bytes === null) return null;
  const scrub = (v: unknown): unknown => {
    if (typeof v === "string") return ULID_RE.test(v) ? "<ulid>" : ISO_RE.test(v) ? "<ts>" : v === ws ? "<workspace>" : v;
    if (Array.isArray(v)) return v.map(scrub);
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x)]));
    return v;
  };
  return nonEmptyLines(bytes.toString("utf8"))
    .map((l) => {
      const { id: _id, ts: _ts, ...rest } = JSON.parse(l);
      return JSON.stringify(scrub(rest));
    })
    .join("\n");
}

const logBytes = (ws: string, id: string): Buffer | null => {
  const f = path.join(ws, ".pixir", "sessions", `${id}.ndjson`);
  return existsSync(f) ? readFileSync(f) : null;
};

/** What readers see of a Log: `pixir-log cat --raw` (the journal limits it to the original length). */
function readerView(ws: string, id: string): Buffer | null | "unreadable" {
  const r = run("pixir-log", ["cat", id, "--raw", "--json"], { cwd: ws });
  if (r.code === 2 && r.errJson?.error?.kind === "not_found") return null;
  if (r.code !== 0) return "unreadable";
  return r.bytes;
}

/** Temp files, journals and `.steal` files anywhere under `.pixir`. */
function leftovers(ws: string): string[] {
  const out: string[] = [];
  const walk = (dir: string, rel: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const r = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (/\.tmp-[0-9a-f]{8}$/.test(e.name) || e.name.endsWith(".append-journal") || e.name.startsWith(".append-journal-") || e.name.endsWith(".steal")) out.push(r);
    }
  };
  walk(path.join(ws, ".pixir"), ".pixir");
  return out;
}

/** Free every lease a killed run left: aged into stale (then taken over), or force-released if unreadable. */
function freeLeases(ws: string): number {
  const dir = path.join(ws, ".pixir", "session_leases");
  if (!existsSync(dir)) return 0;
  let freed = 0;
  for (const f of readdirSync(dir)) {
    if (!f.endsWith(".json")) continue;
    const id = f.slice(0, -5);
    if (!ageLease(ws, id)) {
      const r = run("pixir", ["lock", "release", id, "--force", "--json"], { cwd: ws });
      expect(r.code, r.stdout).toBe(0);
    }
    freed++;
  }
  return freed;
}

function killAfter(tool: Tool, argv: string[], cwd: string, stdin: Buffer | undefined, delayMs: number): Promise<{ code: number | null; signal: string | null; ms: number }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [binPath(tool), ...argv], { cwd, env: cleanEnv(), stdio: ["pipe", "ignore", "ignore"] });
  child.stdin.on("error", () => undefined); // the child may die before it reads everything
  if (stdin !== undefined) child.stdin.end(stdin);
  else child.stdin.end();
  const timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
  return new Promise((resolve) =>
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, ms: Date.now() - t0 });
    }),
  );
}

// ---------------------------------------------------------------------------------------------

describe("SIGKILL at random points of every write path", () => {
  for (const p of PATHS) {
    it(`${p.name}: ${TRIALS} kills leave each Log as before or complete`, async () => {
      const template = freshDir("pixir-crash-tpl-");
      const stats = { trials: 0, killed: 0, finished_before_kill: 0, left_before: 0, left_complete: 0, left_intermediate: 0, leftover_files: 0, leases_taken_over: 0, reruns: 0, calibrated_ms: 0 };
      perPath[p.name] = stats;
      try {
        const stdin = p.setup(template);
        // Calibration: an uninterrupted run gives the complete state and the time a run takes.
        const cal = freshDir("pixir-crash-cal-");
        cpSync(template, cal, { recursive: true });
        const t0 = Date.now();
        const full = await killAfter(p.tool, p.argv, cal, stdin, 120_000);
        const duration = Date.now() - t0;
        stats.calibrated_ms = duration;
        expect(full.code, `${p.name} runs to completion`).toBe(0);
        const complete = new Map(p.logs.map((id) => [id, logBytes(cal, id)]));

        for (let t = 0; t < TRIALS; t++) {
          const rng = new Rng(subSeed(`${p.name}#${t}`));
          // Half the kills fall anywhere in a run, half in its last 40%, where the commits happen.
          const delay = Math.floor(t % 2 === 0 ? rng.next() * duration * 1.1 : duration * (0.6 + rng.next() * 0.45));
          const ws = freshDir("pixir-crash-");
          try {
            cpSync(template, ws, { recursive: true });
            const before = new Map(p.logs.map((id) => [id, logBytes(ws, id)]));
            const killed = await killAfter(p.tool, p.argv, ws, stdin, delay);
            stats.trials++;
            if (killed.signal === "SIGKILL") stats.killed++;
            else {
              stats.finished_before_kill++;
              expect(killed.code, `trial ${t}: finished on its own`).toBe(0);
            }
            const where = `${p.name}, trial ${t} (seed ${subSeed(`${p.name}#${t}`)}, kill after ${delay} ms)`;

            // 1. Readers see each Log as before or complete.
            const states: Record<string, "before" | "complete" | "intermediate"> = {};
            for (const id of p.logs) {
              const view = readerView(ws, id);
              const b = before.get(id)!;
              const c = complete.get(id)!;
              const inter = p.intermediate?.(id, b) ?? undefined;
              let state: "before" | "complete" | "intermediate" | undefined;
              if (view === "unreadable") {
                // Only a Log that was unreadable before (a torn tail) may still be.
                if (p.brokenBefore && logBytes(ws, id)?.equals(b!)) state = "before";
              } else if (view === null ? b === null : b !== null && view.equals(b)) state = "before";
              else if (normalize(view, ws) === normalize(c, cal)) state = "complete";
              else if (inter !== undefined && view !== null && inter !== null && view.equals(inter)) state = "intermediate";
              expect(state, `${where}: ${id} reads as neither before nor complete`).toBeDefined();
              states[id] = state!;
            }

            // 2. Every temp file, journal or .steal file left is reported by pixir-log check.
            const left = leftovers(ws);
            stats.leftover_files += left.length;
            if (left.length > 0) {
              const check = run("pixir-log", ["check", "--json"], { cwd: ws });
              const report = check.stdout;
              for (const f of left) {
                const id = path.basename(f).replace(/\.ndjson\.(tmp-[0-9a-f]{8}|append-journal)$/, "");
                const reported = report.includes(JSON.stringify(f)) || (f.endsWith(".append-journal") && report.includes('"append_journal_present"') && report.includes(JSON.stringify(id)));
                expect(reported, `${where}: ${f} is neither cleaned up nor reported by check: ${report.slice(0, 800)}`).toBe(true);
              }
            }

            // 3. The dead writer's lease is taken over; pixir-log repair leaves the old bytes or the complete ones.
            stats.leases_taken_over += freeLeases(ws);
            for (const id of p.logs) {
              if (logBytes(ws, id) === null) continue;
              const r = run("pixir-log", ["repair", id, "--json"], { cwd: ws, env: { PIXIR_TAKE_OVER_DEAD_WRITER: "1" } });
              expect(r.code, `${where}: repair ${id}: ${r.stdout}`).toBe(0);
              const bytes = logBytes(ws, id)!;
              const b = before.get(id)!;
              const inter = p.intermediate?.(id, b) ?? null;
              const ok =
                (b !== null && bytes.equals(b)) ||
                normalize(bytes, ws) === normalize(complete.get(id)!, cal) ||
                (inter !== null && bytes.equals(inter)) ||
                // Repairing the torn tail is that command's own complete state.
                (p.brokenBefore && b !== null && bytes.equals(b.subarray(0, b.lastIndexOf(0x0a) + 1)));
              expect(ok, `${where}: after repair, ${id} has neither its old bytes nor the complete ones`).toBe(true);
            }
            for (const s of Object.values(states)) stats[s === "before" ? "left_before" : s === "complete" ? "left_complete" : "left_intermediate"]++;

            // 4. Running the command again (taking over the dead lease) finishes the job.
            const done = p.logs.every((id) => normalize(logBytes(ws, id), ws) === normalize(complete.get(id)!, cal));
            if (!done) {
              stats.reruns++;
              const again = run(p.tool, p.argv, { cwd: ws, input: stdin, env: { PIXIR_TAKE_OVER_DEAD_WRITER: "1" } });
              expect(again.code, `${where}: rerun: ${again.stderr}`).toBe(0);
              for (const id of p.logs) expect(normalize(logBytes(ws, id), ws), `${where}: ${id} after the rerun`).toBe(normalize(complete.get(id)!, cal));
            }
            const check = run("pixir-log", ["check", "--json"], { cwd: ws });
            expect(check.code, `${where}: check after recovery: ${check.stdout.slice(0, 800)}`).toBe(0);
          } finally {
            removeDir(ws);
          }
        }
        removeDir(cal);
      } finally {
        removeDir(template);
      }
    }, 120_000 + TRIALS * 20_000);
  }
});
