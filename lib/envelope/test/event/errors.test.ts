// PixirError across copies of the library: a command bundled on its own (scripts/build.mjs,
// SOLO_COMMANDS) throws errors of its own copy of the class to a runner that holds another.
import { describe, expect, it, vi } from "vitest";
import { asPixirError, errorText, PixirError, usageError } from "../../src/event/errors.js";

async function secondCopy(): Promise<typeof import("../../src/event/errors.js")> {
  vi.resetModules();
  return import("../../src/event/errors.js");
}

describe("PixirError from another copy of the module", () => {
  it("is a different class, yet each copy recognises the other's errors", async () => {
    const other = await secondCopy();
    expect(other.PixirError).not.toBe(PixirError);
    const foreign = new other.PixirError("session_writer_active");
    expect(foreign instanceof PixirError).toBe(true);
    expect(new PixirError("usage", "u") instanceof other.PixirError).toBe(true);
  });

  it("keeps its kind, details and exit code through asPixirError instead of becoming internal_error", async () => {
    const other = await secondCopy();
    const foreign = new other.PixirError("session_writer_active", undefined, { session_id: "s" });
    const seen = asPixirError(foreign);
    expect(seen).toBe(foreign);
    expect(seen.kind).toBe("session_writer_active");
    expect(seen.exitCode).toBe(5);
    expect(seen.details.session_id).toBe("s");
  });

  it("is not claimed by plain errors or look-alikes", () => {
    expect(new Error("x") instanceof PixirError).toBe(false);
    expect({ kind: "usage", details: {}, "pixir.error": true } instanceof PixirError).toBe(false);
    expect((null as unknown as object) instanceof PixirError).toBe(false);
    expect(asPixirError(new TypeError("boom")).kind).toBe("internal_error");
    const denied = Object.assign(new Error("no"), { code: "EACCES", syscall: "open" });
    expect(asPixirError(denied).kind).toBe("permission_denied");
  });
});

describe("asPixirError of an OS refusal", () => {
  const refusal = (p: string | undefined) => Object.assign(new Error("EACCES"), { code: "EACCES", syscall: "open", path: p });

  it("is permission_denied with the path relative to the Workspace when it lies inside it", () => {
    expect(asPixirError(refusal("/ws/.pixir/sessions/a.ndjson"), "/ws").details).toMatchObject({ path: ".pixir/sessions/a.ndjson", operation: "open" });
    expect(asPixirError(refusal("/ws"), "/ws").details.path).toBe(".");
    expect(asPixirError(refusal("/tmp/spool"), "/ws").details.path).toBe("/tmp/spool");
    expect(asPixirError(refusal("/wsx/a"), "/ws").details.path).toBe("/wsx/a");
    expect(asPixirError(refusal(undefined), "/ws").details.path).toBeNull();
    expect(asPixirError(refusal("/ws/a")).details.path).toBe("/ws/a");
    expect(asPixirError(new Error("boom")).kind).toBe("internal_error");
  });
});

describe("errorText: the text form of an error (cli.md §3)", () => {
  it("points at the input: path and line, the reason, and the numbers; then each next action as a hint", () => {
    const err = new PixirError("corrupt_log_line", undefined, { reason: "torn_tail", line: 3, path: ".pixir/sessions/s.ndjson", next_actions: ["run pixir-log repair to drop the torn final line"] });
    expect(errorText(err)).toBe(
      "error: corrupt_log_line: could not decode a log line (.pixir/sessions/s.ndjson:3: torn_tail)\nhint: run pixir-log repair to drop the torn final line\n",
    );
    const gap = new PixirError("stream_integrity_failed", undefined, { reason: "seq_gap", expected: 1, observed: 2, line: 2 });
    expect(errorText(gap).split("\n")[0]).toBe("error: stream_integrity_failed: input stream failed its integrity check (line 2: seq_gap; expected=1 observed=2)");
  });

  it("names the standard stream a `-` path stands for: stdin when read, stdout when written", () => {
    expect(errorText(new PixirError("corrupt_log_line", undefined, { reason: "invalid_json", line: 4, path: "-", next_actions: [] }))).toBe(
      "error: corrupt_log_line: could not decode a log line (stdin:4: invalid_json)\n",
    );
    expect(errorText(new PixirError("log_write_failed", "could not write to stdout", { reason: "epipe", path: "-", next_actions: [] }))).toBe(
      "error: log_write_failed: could not write to stdout (stdout: epipe)\n",
    );
  });

  it("never echoes what a user gave: only our own codes and numbers, and paths with control characters escaped", () => {
    const hostile = new PixirError("invalid_args", "session id is invalid", { field: "../PWN", reason: "Bad Id ../PWN", observed: "../PWN", next_actions: ["pass_a_valid_session_id"] });
    expect(errorText(hostile)).toBe("error: invalid_args: session id is invalid\nhint: pass a valid session id\n");
    const path = new PixirError("invalid_pi_session", undefined, { reason: "malformed_line", line: 1, file: "a\u001b[2Jb.jsonl", next_actions: [] });
    expect(errorText(path)).toBe("error: invalid_pi_session: pi session file is invalid (a\\u001b[2Jb.jsonl:1: malformed_line)\n");
  });

  it("says a field once when it names a number shown, and a usage error's synopsis once", () => {
    const above = new PixirError("invalid_args", "to_seq is above the parent's last seq", { field: "to_seq", to_seq: 9, max_seq: 2, next_actions: [] });
    expect(errorText(above)).toBe("error: invalid_args: to_seq is above the parent's last seq (to_seq=9 max_seq=2)\n");
    expect(errorText(usageError("usage: pixir-fork [--to-seq N]"))).toBe("error: usage: pixir-fork [--to-seq N]\nhint: run the command with --help\n");
  });
});
