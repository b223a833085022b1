// cli.md §8.4: Logs are listed in UTF-8 byte order of their ids; the listing sorts without a Buffer per id
// when no id holds a surrogate, and valid ASCII ids skip the Unicode tables. Both must agree with the rules.
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isValidSessionId, sessionIdProblem } from "../../src/event/session-id.js";
import { listLogs } from "../../src/store/ls.js";

function workspaceWith(ids: readonly string[]): string {
  const ws = mkdtempSync(path.join(os.tmpdir(), "pixir-listing-"));
  mkdirSync(path.join(ws, ".pixir", "sessions"), { recursive: true });
  for (const id of ids) writeFileSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`), "");
  return ws;
}

const byBytes = (ids: readonly string[]) => [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

describe("listLogs order", () => {
  it("is byte order for ASCII and BMP ids (the plain sort)", () => {
    const ids = ["b", "a.1", "A", "_x", "0z", "é", "ü2", "ﬀ", "a-1", "Z"];
    expect(listLogs(workspaceWith(ids)).sessionIds).toEqual(byBytes(ids));
  });

  it("is byte order when an id holds a character beyond the BMP (UTF-16 order would differ)", () => {
    const ids = ["\u{10400}x", "\uFF21b", "a"]; // U+FF21 sorts after the surrogate pair in UTF-16, before it in UTF-8
    const listed = listLogs(workspaceWith(ids)).sessionIds;
    expect(listed).toEqual(byBytes(ids));
    expect(listed).not.toEqual([...ids].sort());
  });
});

describe("isValidSessionId's ASCII path", () => {
  it("agrees with sessionIdProblem", () => {
    const cases = ["a", "_", "0", "a.b-c_d", ".a", "-a", "a b", "a/b", "a".repeat(235), "a".repeat(236), "", "é", "a\u0301", "Ab9", "a:b"];
    for (const c of cases) expect(isValidSessionId(c), c).toBe(sessionIdProblem(c) === null);
  });
});
