// event/os-fault.ts: the one mapping from an OS failure on a write path to a named error.
import { describe, expect, it } from "vitest";
import { errorText, PixirError } from "../../src/event/errors.js";
import { afterEarlierWrites, asNamedError, leaseCreateFault, osWriteFault } from "../../src/event/os-fault.js";

const osError = (code: string, syscall = "write", path?: string) => Object.assign(new Error(`${code}: simulated`), { code, syscall, ...(path ? { path } : {}) });

describe("osWriteFault", () => {
  it.each([
    ["ENOSPC", "log_write_failed", "no space left on the device", "free space on the device holding .pixir/sessions/s.ndjson"],
    ["EDQUOT", "log_write_failed", "the disk quota is used up", "disk quota"],
    ["EFBIG", "log_write_failed", "the file would exceed the file-size limit", "ulimit -f"],
    ["EIO", "log_write_failed", "the device reported an I/O error", "check the device holding .pixir/sessions/s.ndjson"],
    ["EMFILE", "log_write_failed", "this process has too many open files", "ulimit -n"],
    ["ENFILE", "log_write_failed", "the system has too many open files", "open-file limit"],
    ["EROFS", "permission_denied", "the file system is read-only", "is read-only: remount it read-write"],
    ["EACCES", "permission_denied", "permission denied", "may write .pixir/sessions/s.ndjson"],
    ["EPERM", "permission_denied", "operation not permitted", "may write .pixir/sessions/s.ndjson"],
  ])("%s is %s with its own cause and advice", (code, kind, says, advice) => {
    const err = osWriteFault(osError(code, "fsync"), ".pixir/sessions/s.ndjson", "write");
    expect(err.kind).toBe(kind);
    expect(err.message).toBe(`could not write session log: ${says}`);
    expect(err.details).toMatchObject({ reason: code.toLowerCase(), path: ".pixir/sessions/s.ndjson", operation: "fsync" });
    expect((err.details.next_actions as string[]).join(" ")).toContain(advice);
  });

  it("names the file from its path, or as the caller says", () => {
    const said = (p: string, what?: string) => osWriteFault(osError("ENOSPC"), p, "write", what).message;
    expect(said(".pixir/sessions/s.ndjson.append-journal")).toBe("could not write the append journal: no space left on the device");
    expect(said(".pixir/session_leases/s.json")).toBe("could not write the writer lease: no space left on the device");
    expect(said(".pixir/session_leases/releases/20260101T000000-0123456789abcdef-abcdef.json")).toMatch(/^could not write the lease release record:/);
    expect(said(".pixir/sessions/c/resources/r1/x.png")).toMatch(/^could not write a session resource:/);
    expect(said("out.jsonl", "the exported pi file")).toMatch(/^could not write the exported pi file:/);
  });

  it("an unknown code keeps its name as the reason; a PixirError passes through", () => {
    expect(osWriteFault(osError("EXDEV"), "a", "rename").details).toMatchObject({ reason: "exdev", next_actions: ["check free space and rerun; the log was left unchanged"] });
    expect(osWriteFault(new Error("no code"), "a", "write").details.reason).toBe("io_error");
    const own = new PixirError("not_found");
    expect(osWriteFault(own, "a", "write")).toBe(own);
  });

  it("the text form points at the file and gives the advice as hints", () => {
    expect(errorText(osWriteFault(osError("ENOSPC"), ".pixir/sessions/s.ndjson", "write"))).toBe(
      "error: log_write_failed: could not write session log: no space left on the device (.pixir/sessions/s.ndjson: enospc)\n" +
        "hint: free space on the device holding .pixir/sessions/s.ndjson, then rerun; nothing was changed\n",
    );
  });
});

describe("leaseCreateFault", () => {
  it("keeps Pixir's kind for a full disk, says why, and advises no forced release", () => {
    const err = leaseCreateFault(osError("ENOSPC"), ".pixir/session_leases/s.json", "open");
    expect(err.kind).toBe("session_writer_ambiguous");
    expect(err.exitCode).toBe(5);
    expect(err.message).toBe("Session writer lease could not be acquired: no space left on the device");
    expect(err.details).toMatchObject({ lease: null, filesystem_reason: "ENOSPC", reason: "enospc", path: ".pixir/session_leases/s.json" });
    expect((err.details.next_actions as string[]).join(" ")).not.toMatch(/force|release|orphan/);
  });

  it("a refusal is permission_denied (writer-lease.md §3)", () => {
    expect(leaseCreateFault(osError("EACCES", "open"), ".pixir/session_leases/s.json", "open").kind).toBe("permission_denied");
    expect(leaseCreateFault(osError("EROFS", "open"), ".pixir/session_leases/s.json", "open").kind).toBe("permission_denied");
  });
});

describe("asNamedError: what no writer mapped itself", () => {
  it("a disk fault on a write is log_write_failed, on a read log_read_failed, with the path made relative", () => {
    expect(asNamedError(osError("ENOSPC", "write", "/ws/.pixir/sessions/s.ndjson"), "/ws")).toMatchObject({
      kind: "log_write_failed",
      details: { reason: "enospc", path: ".pixir/sessions/s.ndjson" },
    });
    expect(asNamedError(osError("EIO", "read", "/ws/.pixir/sessions/s.ndjson"), "/ws")).toMatchObject({
      kind: "log_read_failed",
      details: { reason: "eio", path: ".pixir/sessions/s.ndjson" },
    });
    expect(asNamedError(osError("EMFILE", "write")).details).toMatchObject({ reason: "emfile", path: null });
  });

  it("a refusal stays permission_denied; anything else internal_error", () => {
    expect(asNamedError(osError("EACCES", "open", "/ws/a"), "/ws")).toMatchObject({ kind: "permission_denied", details: { path: "a", operation: "open" } });
    expect(asNamedError(new TypeError("x")).kind).toBe("internal_error");
  });
});

describe("afterEarlierWrites: an import that fails after writing earlier files", () => {
  it("says what stays instead of 'nothing was changed', and marks the error", () => {
    const e = afterEarlierWrites(osWriteFault(osError("ENOSPC"), ".pixir/sessions/b.ndjson", "write"), "/ws") as PixirError;
    expect(e).toMatchObject({ kind: "log_write_failed", details: { reason: "enospc", path: ".pixir/sessions/b.ndjson", earlier_writes_kept: true } });
    expect(e.details.next_actions).toEqual(["free space on the device holding .pixir/sessions/b.ndjson, then rerun; the Logs written before it stay, and the rerun imports the rest"]);
    // An OS error no writer named is named first (path relative to the Workspace); advice without the phrase gains the line.
    const raw = afterEarlierWrites(osError("EIO", "write", "/ws/.pixir/sessions/b.ndjson"), "/ws") as PixirError;
    expect(raw.details).toMatchObject({ reason: "eio", path: ".pixir/sessions/b.ndjson", earlier_writes_kept: true });
    expect((raw.details.next_actions as string[]).at(-1)).toBe("the Logs written before it stay, and the rerun imports the rest");
    // A lease held elsewhere keeps its kind; a bug stays what it was.
    expect((afterEarlierWrites(new PixirError("session_writer_active", undefined, { session_id: "s" }), "/ws") as PixirError).kind).toBe("session_writer_active");
    const bug = new TypeError("x");
    expect(afterEarlierWrites(bug, "/ws")).toBe(bug);
  });
});
