// Hostile paths (docs/reliability.md §4): every command refuses the invalid ids of
// envelope-and-log.md §5 and every symlinked state path, without echoing the value, without reading
// or disclosing a symlink's target, and without creating anything outside the Workspace (or, for an
// invalid id, anything at all).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { INVALID_SESSION_IDS, rawLine, ROOT, run, type Tool } from "../support/cli.js";
import { expectDocumentedFailure, freshDir, recordFigures, removeDir, runInProcess, snapshot, snapshotDiff, STACK, type Channel } from "./support.js";

const figures = { invalid_id_runs: 0, symlink_runs: 0, spawned_runs: 0, refused_unsafe: 0, duration_ms: 0 };
const started = Date.now();
afterAll(() => recordFigures("paths", { ...figures, duration_ms: Date.now() - started }));

const SECRET = "outside-secret";
const EV = (id: string, n: number, text = "hi") => `${rawLine(id, n, { type: "user_message", ts: `2026-07-20T10:00:0${n}.000Z`, data: { text } })}\n`;

// ---------------------------------------------------------------------------------------------
// The commands, with the places an id goes. `ID` is replaced by the id under test.

const ID = "\u0000ID\u0000";

interface Command {
  tool: Tool;
  argv: string[];
  channel: Channel;
  stdin?: (id: string) => string;
}

const COMMANDS: Command[] = [
  { tool: "pixir-log", argv: ["cat", ID], channel: "stream" },
  { tool: "pixir-log", argv: ["write", ID], channel: "report", stdin: () => EV("s", 0) },
  { tool: "pixir-log", argv: ["write"], channel: "report", stdin: (id) => `${JSON.stringify({ id: "e", session_id: id, seq: 0, ts: "t", type: "user_message", data: {} })}\n` },
  { tool: "pixir-log", argv: ["append", ID], channel: "report", stdin: () => '{"type":"user_message"}\n' },
  { tool: "pixir-log", argv: ["append", "s"], channel: "report", stdin: (id) => `${JSON.stringify({ type: "user_message", session_id: id })}\n` },
  { tool: "pixir-log", argv: ["check", ID], channel: "report" },
  { tool: "pixir-log", argv: ["repair", ID], channel: "report" },
  { tool: "pixir-log", argv: ["materialize", ID], channel: "report" },
  { tool: "pixir-log", argv: ["rm", ID], channel: "report" },
  { tool: "pixir-fork", argv: ["--parent", ID], channel: "stream" },
  { tool: "pixir-fork", argv: ["--parent", "s", "--child-id", ID], channel: "stream" },
  { tool: "pixir-tree", argv: [ID], channel: "report" },
  { tool: "pixir", argv: ["fork", ID], channel: "report" },
  { tool: "pixir", argv: ["fork", "s", "--child-id", ID], channel: "report" },
  { tool: "pixir", argv: ["fork", ID, "--dry-run"], channel: "report" },
  { tool: "pixir", argv: ["context", ID], channel: "stream" },
  { tool: "pixir", argv: ["compact", ID], channel: "report" },
  { tool: "pixir", argv: ["compact", ID, "--dry-run"], channel: "report" },
  { tool: "pixir", argv: ["repair", ID], channel: "report" },
  { tool: "pixir", argv: ["diff", ID, "s"], channel: "report" },
  { tool: "pixir", argv: ["diff", "s", ID], channel: "report" },
  { tool: "pixir", argv: ["merge", ID, "--into", "s"], channel: "report" },
  { tool: "pixir", argv: ["merge", "s", "--into", ID], channel: "report" },
  { tool: "pixir", argv: ["lock", "status", ID], channel: "report" },
  { tool: "pixir", argv: ["lock", "release", ID, "--force"], channel: "report" },
  { tool: "pixir", argv: ["append", ID], channel: "report", stdin: () => '{"type":"user_message"}\n' },
  { tool: "pixir", argv: ["export", "pi", ID], channel: "stream" },
  { tool: "pixir", argv: ["export", "html", ID], channel: "stream" },
  { tool: "pixir", argv: ["export", "md", ID], channel: "stream" },
  { tool: "pixir", argv: ["log", "cat", ID], channel: "stream" },
];

/** envelope-and-log.md §5's invalid ids, plus hostile ones, with the reason each must give. */
const INVALID_IDS: ReadonlyArray<readonly [string, string]> = [
  ...INVALID_SESSION_IDS,
  ["a\u0000b", "invalid_character"],
  ["../../../outside/PWN;$HOME%2fsecret", "invalid_start"],
  ["é".repeat(118), "too_long"],
  ["a\ud800", "invalid_utf8"],
];
/** Starts with `-`: a flag, never an id (cli.md §1), so a usage error. */
const DASH_IDS = ["-leading", "-PWN", "--PWN"];

/** The parts of an invalid value that must never be echoed. */
function echoes(value: string, r: { stdout: string; stderr: string }): string[] {
  const out = `${r.stdout}\n${r.stderr}`;
  const probes = [value, JSON.stringify(value).slice(1, -1), "PWN", "outside", "HOME", "%2f", "bbbbbbbbbbbbbbbbbbbb", "éééééééééé", "a\\b", "a;$", "a:b", "a b", ".leading", "a/b"].filter(
    (p) => p.length >= 3 && value.includes(p.replace(/\\\\/g, "\\")),
  );
  return probes.filter((p) => out.includes(p));
}

/** A Workspace with a Session `s` and an `outside` sibling folder that must stay untouched. */
function setup(): { ws: string; outside: string; parent: string } {
  const parent = freshDir("pixir-paths-");
  const ws = path.join(parent, "ws");
  const outside = path.join(parent, "outside");
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(ws, ".pixir", "sessions", "s.ndjson"), EV("s", 0) + EV("s", 1));
  return { ws, outside, parent };
}

describe("invalid ids (envelope-and-log.md §5)", () => {
  it("every command refuses every invalid id: invalid_args (exit 2), never echoed, nothing created anywhere", async () => {
    for (const cmd of COMMANDS) {
      for (const [value, reason] of INVALID_IDS) {
        const { ws, parent } = setup();
        try {
          const before = snapshot(parent);
          const argv = [...cmd.argv.map((a) => (a === ID ? value : a)), "--json"];
          // A positional id cannot hold NUL on a real command line; in-process it can.
          const r = await runInProcess(cmd.tool, argv, { cwd: ws, input: cmd.stdin?.(value) });
          figures.invalid_id_runs++;
          const where = `${cmd.tool} ${cmd.argv.join(" ")} with ${JSON.stringify(value).slice(0, 40)}`;
          expect(r.hung, where).toBe(false);
          const err = expectDocumentedFailure(r, cmd.channel, true);
          if (cmd.stdin !== undefined && !cmd.argv.includes(ID) && !value.isWellFormed()) {
            // Inside an Event on stdin a lone surrogate is first of all unencodable (§3).
            expect(["invalid_args", "log_encode_failed"], where).toContain(err.kind);
            expect(echoes(value, r), `${where}: echoed`).toEqual([]);
            expect(snapshotDiff(before, snapshot(parent)), `${where}: created or changed`).toEqual([]);
            continue;
          }
          expect(err.kind, where).toBe("invalid_args");
          expect(err.details.reason, where).toBe(reason);
          expect(["session_id", "child_session_id", "parent_session_id", "into"], where).toContain(err.details.field);
          expect(echoes(value, r), `${where}: echoed`).toEqual([]);
          expect(snapshotDiff(before, snapshot(parent)), `${where}: created or changed`).toEqual([]);
        } finally {
          removeDir(parent);
        }
      }
    }
  });

  it("ids that start with '-' are flags: a usage error, never echoed, nothing created", async () => {
    for (const cmd of COMMANDS) {
      if (!cmd.argv.includes(ID)) continue;
      for (const value of DASH_IDS) {
        const { ws, parent } = setup();
        try {
          const before = snapshot(parent);
          const r = await runInProcess(cmd.tool, [...cmd.argv.map((a) => (a === ID ? value : a)), "--json"], { cwd: ws, input: cmd.stdin?.(value) });
          figures.invalid_id_runs++;
          const err = expectDocumentedFailure(r, cmd.channel === "stream" && !r.stdout.startsWith("{") ? "stream" : "report", true);
          expect(["usage", "invalid_args"]).toContain(err.kind);
          expect(`${r.stdout}${r.stderr}`).not.toContain("PWN");
          expect(`${r.stdout}${r.stderr}`).not.toContain("-leading");
          expect(snapshotDiff(before, snapshot(parent))).toEqual([]);
        } finally {
          removeDir(parent);
        }
      }
    }
  });

  it("the built binaries agree (a spawned sample): exit 2, nothing echoed, nothing created", () => {
    const sample: Array<[Tool, string[]]> = [
      ["pixir-log", ["append", "../../../outside/PWN;$HOME%2fsecret", "--json"]],
      ["pixir-log", ["cat", "a\n"]],
      ["pixir", ["fork", "s", "--child-id", "../../outside/fork-child", "--json"]],
      ["pixir", ["lock", "release", "a/b", "--force", "--json"]],
      ["pixir-tree", ["é".repeat(118), "--json"]],
      ["pixir", ["merge", "s", "--into", "../PWN", "--json"]],
    ];
    for (const [tool, argv] of sample) {
      const { ws, parent } = setup();
      try {
        const before = snapshot(parent);
        const r = run(tool, argv, { cwd: ws, input: '{"type":"user_message"}\n' });
        figures.spawned_runs++;
        expect(r.code, `${tool} ${argv.join(" ")}`).toBe(2);
        expect(r.stderr).not.toMatch(STACK);
        for (const probe of ["PWN", "outside", "fork-child", "ééééé", "a/b", "a\n"]) if (argv.some((a) => a.includes(probe))) expect(`${r.stdout}${r.stderr}`).not.toContain(probe);
        expect(snapshotDiff(before, snapshot(parent))).toEqual([]);
      } finally {
        removeDir(parent);
      }
    }
  });

  it("a pi file whose header id would escape imports under a hashed id inside the Workspace, never echoed", async () => {
    const { ws, outside, parent } = setup();
    try {
      const file = path.join(parent, "evil.jsonl");
      writeFileSync(
        file,
        [
          { type: "session", version: 3, id: "../../outside/PWN", timestamp: "2026-01-10T09:00:00.000Z", cwd: "/x" },
          { type: "message", id: "a1", parentId: null, timestamp: "2026-01-10T09:00:01.000Z", message: { role: "user", content: "hi", timestamp: 1 } },
        ]
          .map((l) => JSON.stringify(l))
          .join("\n") + "\n",
      );
      const before = snapshot(outside);
      const r = await runInProcess("pixir", ["import", "pi", file, "--json"], { cwd: ws });
      expect(r.code, r.stdout).toBe(0);
      expect(`${r.stdout}${r.stderr}`).not.toContain("PWN");
      expect(r.json.imports[0].header_id).toBeNull();
      expect(r.json.imports[0].sessions[0].session_id).toMatch(/^pi-[0-9a-f]{32}$/);
      expect(snapshotDiff(before, snapshot(outside))).toEqual([]);
      expect([...snapshot(parent).keys()].filter((k) => !k.startsWith("ws/") && k !== "ws" && k !== "evil.jsonl" && k !== "outside")).toEqual([]);
    } finally {
      removeDir(parent);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Symlinked state paths

interface SymlinkCase {
  name: string;
  /** Make the link (and whatever it points at, outside). */
  make(ws: string, outside: string): void;
  /** The commands that need the linked path: each must fail with unsafe_state_path. */
  refused: Command[];
  /** Commands that may run (they do not need the path), but must not follow it. */
  unaffected?: Command[];
}

const cmd = (tool: Tool, argv: string[], channel: Channel, stdin?: string): Command => ({ tool, argv, channel, stdin: stdin === undefined ? undefined : () => stdin });
const APPEND = '{"type":"user_message","data":{"text":"x"}}\n';

const READERS_OF_S: Command[] = [
  cmd("pixir-log", ["cat", "s"], "stream"),
  cmd("pixir-log", ["cat", "s", "--raw"], "stream"),
  cmd("pixir-fork", ["--parent", "s"], "stream"),
  cmd("pixir-fork", ["--parent", "s", "--dry-run"], "report"),
  cmd("pixir-tree", ["s"], "report"),
  cmd("pixir", ["context", "s"], "stream"),
  cmd("pixir", ["diff", "s", "s"], "report"),
  cmd("pixir", ["compact", "s", "--dry-run"], "report"),
  cmd("pixir", ["fork", "s", "--dry-run"], "report"),
  cmd("pixir", ["export", "pi", "s"], "stream"),
  cmd("pixir", ["export", "html", "s"], "stream"),
  cmd("pixir", ["export", "md", "s"], "stream"),
];
const WRITERS_OF_S: Command[] = [
  cmd("pixir-log", ["append", "s"], "report", APPEND),
  cmd("pixir-log", ["write", "s"], "report", EV("s", 2)),
  cmd("pixir-log", ["repair", "s"], "report"),
  cmd("pixir-log", ["materialize", "s"], "report"),
  cmd("pixir-log", ["rm", "s"], "report"),
  cmd("pixir", ["append", "s"], "report", APPEND),
  cmd("pixir", ["compact", "s", "--tail-events", "1"], "report"),
  cmd("pixir", ["repair", "s"], "report"),
];
const NEW_LOG_WRITERS: Command[] = [
  cmd("pixir-log", ["append", "n"], "report", APPEND),
  cmd("pixir-log", ["write", "n"], "report", EV("n", 0)),
  cmd("pixir", ["fork", "s", "--child-id", "k"], "report"),
  cmd("pixir", ["import", "pi", path.join(ROOT, "test", "fixtures", "pi", "hand", "v2-hookmessage.jsonl")], "report"),
];
const WORKSPACE_WIDE: Command[] = [cmd("pixir-log", ["ls"], "report"), cmd("pixir-log", ["check"], "report"), cmd("pixir-tree", [], "report")];
const LEASE_COMMANDS: Command[] = [cmd("pixir", ["lock", "status", "s"], "report"), cmd("pixir", ["lock", "release", "s", "--force"], "report")];

/** An outside copy of the state, so a followed link would find plausible data carrying the secret. */
function outsideState(outside: string): void {
  mkdirSync(path.join(outside, "sessions"), { recursive: true });
  writeFileSync(path.join(outside, "sessions", "s.ndjson"), EV("s", 0, SECRET));
  writeFileSync(path.join(outside, "s.ndjson"), EV("s", 0, SECRET) + EV("s", 1, SECRET));
}

const BOOT_ID = (() => {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return null;
  }
})();

/** A stale lease of a holder that died on this host in this boot: a takeover candidate. */
function staleLease(ws: string, id: string): string {
  const past = Date.now() - 60_000;
  return `${JSON.stringify({ version: 1, purpose: "session_writer", session_id: id, workspace: ws, holder_id: "wrl_00000000deadbeef", os_pid: "999999", hostname: hostname(), program: "pixir-log append", boot_id: BOOT_ID, proc_start: "1", heartbeat_at_ms: past, stale_after_ms: 5000 }, null, 2)}\n`;
}

const CASES: SymlinkCase[] = [
  {
    name: ".pixir",
    make: (ws, outside) => {
      removeDir(path.join(ws, ".pixir"));
      outsideState(outside);
      symlinkSync(outside, path.join(ws, ".pixir"));
    },
    refused: [...READERS_OF_S, ...WRITERS_OF_S, ...NEW_LOG_WRITERS, ...WORKSPACE_WIDE, ...LEASE_COMMANDS],
  },
  {
    name: ".pixir/sessions",
    make: (ws, outside) => {
      removeDir(path.join(ws, ".pixir", "sessions"));
      outsideState(outside);
      symlinkSync(path.join(outside, "sessions"), path.join(ws, ".pixir", "sessions"));
    },
    refused: [...READERS_OF_S, ...WRITERS_OF_S, ...NEW_LOG_WRITERS, ...WORKSPACE_WIDE],
    unaffected: LEASE_COMMANDS,
  },
  {
    name: "a Log file",
    make: (ws, outside) => {
      outsideState(outside);
      removeDir(path.join(ws, ".pixir", "sessions", "s.ndjson"));
      symlinkSync(path.join(outside, "s.ndjson"), path.join(ws, ".pixir", "sessions", "s.ndjson"));
    },
    refused: [...READERS_OF_S, ...WRITERS_OF_S, cmd("pixir", ["fork", "s", "--child-id", "k"], "report"), cmd("pixir-log", ["check", "s"], "report"), cmd("pixir-log", ["check"], "report")],
    unaffected: [cmd("pixir-log", ["ls"], "report"), cmd("pixir-log", ["append", "n"], "report", APPEND), ...LEASE_COMMANDS],
  },
  {
    name: "a dangling Log file",
    make: (ws, outside) => {
      removeDir(path.join(ws, ".pixir", "sessions", "s.ndjson"));
      symlinkSync(path.join(outside, "nowhere.ndjson"), path.join(ws, ".pixir", "sessions", "s.ndjson"));
    },
    refused: [...READERS_OF_S, ...WRITERS_OF_S.filter((c) => c.argv[0] !== "rm")],
  },
  {
    name: "an append journal",
    make: (ws, outside) => {
      writeFileSync(path.join(outside, "journal"), JSON.stringify({ version: 1, original_length: 0 }));
      symlinkSync(path.join(outside, "journal"), path.join(ws, ".pixir", "sessions", "s.ndjson.append-journal"));
    },
    refused: [...READERS_OF_S, ...WRITERS_OF_S.filter((c) => c.argv[0] !== "rm")],
  },
  {
    name: "a lease file",
    make: (ws, outside) => {
      mkdirSync(path.join(ws, ".pixir", "session_leases"));
      writeFileSync(path.join(outside, "lease.json"), staleLease(ws, "s"));
      symlinkSync(path.join(outside, "lease.json"), path.join(ws, ".pixir", "session_leases", "s.json"));
    },
    refused: [...WRITERS_OF_S, ...LEASE_COMMANDS],
    unaffected: READERS_OF_S,
  },
  {
    name: ".pixir/session_leases",
    make: (ws, outside) => {
      mkdirSync(path.join(outside, "leases"));
      writeFileSync(path.join(outside, "leases", "s.json"), staleLease(ws, "s"));
      symlinkSync(path.join(outside, "leases"), path.join(ws, ".pixir", "session_leases"));
    },
    refused: [...WRITERS_OF_S, ...NEW_LOG_WRITERS, ...LEASE_COMMANDS],
    unaffected: READERS_OF_S,
  },
  {
    name: "the releases folder",
    make: (ws, outside) => {
      mkdirSync(path.join(ws, ".pixir", "session_leases"));
      writeFileSync(path.join(ws, ".pixir", "session_leases", "s.json"), staleLease(ws, "s"));
      mkdirSync(path.join(outside, "releases"));
      symlinkSync(path.join(outside, "releases"), path.join(ws, ".pixir", "session_leases", "releases"));
    },
    // A forced release and a dead-writer takeover both write a release record first.
    refused: [cmd("pixir", ["lock", "release", "s", "--force"], "report"), { ...cmd("pixir-log", ["append", "s", "--take-over-dead-writer"], "report", APPEND) }],
    unaffected: READERS_OF_S,
  },
  {
    name: "a Session's resources folder (source of a fork)",
    make: (ws, outside) => {
      const payload = Buffer.from(SECRET);
      const sum = createHash("sha256").update(payload).digest("hex");
      mkdirSync(path.join(outside, "r1"));
      writeFileSync(path.join(outside, "r1", `${sum}.txt`), payload);
      mkdirSync(path.join(ws, ".pixir", "sessions", "p", "resources"), { recursive: true });
      symlinkSync(path.join(outside, "r1"), path.join(ws, ".pixir", "sessions", "p", "resources", "r1"));
      writeFileSync(path.join(ws, ".pixir", "sessions", "p.ndjson"), `${rawLine("p", 0, { type: "user_message", ts: "2026-07-20T10:00:00.000Z", data: { text: "see", resources: [{ resource_id: "r1", content_sha256: sum, extension: "txt" }] } })}\n`);
      // A share child copies no payload when it is made; materializing it later does.
      expect(run("pixir", ["fork", "p", "--strategy", "share_v1", "--child-id", "m"], { cwd: ws }).code).toBe(0);
    },
    refused: [cmd("pixir", ["fork", "p", "--child-id", "k"], "report"), cmd("pixir-log", ["materialize", "m"], "report")],
    // A plan does not read payloads (fork.md §3.1, §11); rm removes the link itself, never its target.
    unaffected: [
      cmd("pixir-log", ["cat", "p"], "stream"),
      cmd("pixir", ["fork", "p", "--child-id", "k", "--dry-run"], "report"),
      cmd("pixir", ["fork", "p", "--child-id", "k", "--strategy", "share_v1"], "report"),
      cmd("pixir-log", ["rm", "p"], "report"),
    ],
  },
  {
    name: "a child's resources folder (target of a fork)",
    make: (ws, outside) => {
      const payload = Buffer.from("payload");
      const sum = createHash("sha256").update(payload).digest("hex");
      mkdirSync(path.join(ws, ".pixir", "sessions", "p", "resources", "r1"), { recursive: true });
      writeFileSync(path.join(ws, ".pixir", "sessions", "p", "resources", "r1", `${sum}.txt`), payload);
      writeFileSync(path.join(ws, ".pixir", "sessions", "p.ndjson"), `${rawLine("p", 0, { type: "user_message", ts: "2026-07-20T10:00:00.000Z", data: { text: "see", resources: [{ resource_id: "r1", content_sha256: sum, extension: "txt" }] } })}\n`);
      mkdirSync(path.join(outside, "k"));
      symlinkSync(path.join(outside, "k"), path.join(ws, ".pixir", "sessions", "k"));
      mkdirSync(path.join(outside, "kres"));
      mkdirSync(path.join(ws, ".pixir", "sessions", "j"));
      symlinkSync(path.join(outside, "kres"), path.join(ws, ".pixir", "sessions", "j", "resources"));
    },
    refused: [cmd("pixir", ["fork", "p", "--child-id", "k"], "report"), cmd("pixir", ["fork", "p", "--child-id", "j"], "report"), cmd("pixir-log", ["rm", "s"], "report")].slice(0, 2),
  },
  {
    name: "a Session's own folder (rm)",
    make: (ws, outside) => {
      mkdirSync(path.join(outside, "sdata", "resources"), { recursive: true });
      writeFileSync(path.join(outside, "sdata", "resources", "keep"), SECRET);
      symlinkSync(path.join(outside, "sdata"), path.join(ws, ".pixir", "sessions", "s"));
    },
    refused: [cmd("pixir-log", ["rm", "s"], "report")],
    unaffected: [cmd("pixir-log", ["cat", "s"], "stream")],
  },
];

describe("symlinked state paths (envelope-and-log.md §6)", () => {
  for (const c of CASES) {
    it(`${c.name} as a symlink: every command that needs it refuses; nothing outside is read, disclosed or changed`, async () => {
      for (const [list, mustRefuse] of [
        [c.refused, true],
        [c.unaffected ?? [], false],
      ] as const) {
        for (const command of list) {
          const { ws, outside, parent } = setup();
          try {
            c.make(ws, outside);
            const before = snapshot(outside);
            const inWs = snapshot(ws);
            const r = await runInProcess(command.tool, [...command.argv, "--json"], { cwd: ws, input: command.stdin?.("") });
            figures.symlink_runs++;
            const where = `${c.name}: ${command.tool} ${command.argv.join(" ")}`;
            expect(r.hung, where).toBe(false);
            expect(`${r.stdout}${r.stderr}`, `${where}: the target was read`).not.toContain(SECRET);
            expect(snapshotDiff(before, snapshot(outside)), `${where}: outside changed`).toEqual([]);
            expect([...snapshot(parent).keys()].filter((k) => !k.startsWith("ws") && !k.startsWith("outside")), where).toEqual([]);
            if (mustRefuse) {
              expect(r.code, `${where}: ${r.stdout}${r.stderr}`).not.toBe(0);
              const err = expectDocumentedFailure(r, command.channel, true);
              const kind = err.kind === "log_check_failed" ? JSON.stringify(err.details.logs) : err.kind;
              expect(kind, `${where}: ${JSON.stringify(err)}`).toContain("unsafe_state_path");
              figures.refused_unsafe++;
              // A refused command leaves the Workspace as it was (an empty state folder at most).
              const changed = snapshotDiff(inWs, snapshot(ws));
              expect(changed, where).toEqual([]);
            } else if (r.code !== 0) {
              expectDocumentedFailure(r, command.channel, true);
            }
          } finally {
            removeDir(parent);
          }
        }
      }
    });
  }
});
