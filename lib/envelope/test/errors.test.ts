// PixirError across copies of the library: a command bundled on its own (scripts/build.mjs,
// SOLO_COMMANDS) throws errors of its own copy of the class to a runner that holds another.
import { describe, expect, it, vi } from "vitest";
import { asPixirError, isPixirError, PixirError } from "../src/errors.js";

async function secondCopy(): Promise<typeof import("../src/errors.js")> {
  vi.resetModules();
  return import("../src/errors.js");
}

describe("PixirError from another copy of the module", () => {
  it("is a different class, yet each copy recognises the other's errors", async () => {
    const other = await secondCopy();
    expect(other.PixirError).not.toBe(PixirError);
    const foreign = new other.PixirError("session_writer_active");
    expect(foreign instanceof PixirError).toBe(true);
    expect(isPixirError(foreign)).toBe(true);
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
