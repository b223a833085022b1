// Writers never store a line past the 32 MiB limit every reader holds a Log to (codec.ts MAX_LINE_BYTES):
// text handed to createLogAtomically may hold many lines (a pi import hands over its whole Log at once).
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../../src/lines/codec.js";
import { PixirError } from "../../src/event/errors.js";
import { createLogAtomically } from "../../src/store/log-write.js";

let ws = "";
afterEach(() => {
  if (ws !== "") rmSync(ws, { recursive: true, force: true });
  ws = "";
});

const line = (bytes: number) => `{"type":"user_message","data":"${"x".repeat(bytes - 33)}"}\n`;

describe("createLogAtomically and the line-length limit", () => {
  it("stores text of many short lines however long it is in all, and refuses one line past the limit", async () => {
    ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), "pixir-lines-")));
    expect(Buffer.byteLength(line(1000))).toBe(1001);
    const many = line(1000).repeat(40_000); // 40 MB of text, every line short
    await createLogAtomically(ws, "many", async (emit) => emit(many), { lease: null });
    expect(readFileSync(path.join(ws, ".pixir/sessions/many.ndjson"), "utf8")).toBe(many);

    for (const [id, text] of [
      ["exact", line(1000) + line(MAX_LINE_BYTES) + line(1000)],
      ["over", line(1000) + line(MAX_LINE_BYTES + 1) + line(1000)],
      ["last", line(1000) + line(MAX_LINE_BYTES + 1).slice(0, -1)],
    ] as const) {
      const made = createLogAtomically(ws, id, async (emit) => emit(text), { lease: null });
      if (id === "exact") {
        await made;
        continue;
      }
      const err = await made.then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(PixirError);
      expect({ kind: (err as PixirError).kind, ...(err as PixirError).details }).toMatchObject({ kind: "log_encode_failed", reason: "line_too_long", type: "user_message", observed_bytes: MAX_LINE_BYTES + 1, max_line_bytes: MAX_LINE_BYTES });
      expect(existsSync(path.join(ws, `.pixir/sessions/${id}.ndjson`))).toBe(false);
    }
  });
});
