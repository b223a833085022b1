// cli.md §8.4: Logs are listed in UTF-8 byte order of their ids; the listing sorts without a Buffer per id
// when no id holds a surrogate, and valid ASCII ids skip the Unicode tables. Both must agree with the rules.
import { lstatSync, mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isValidSessionId, sessionIdProblem } from "../../src/event/session-id.js";
import { listLogs, STAT_CTIME, STAT_INO, STAT_MTIME, STAT_SIZE } from "../../src/store/ls.js";

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

describe("listLogs stats", () => {
  it("holds each listed Log's inode, size, mtime and ctime in id order, and its maps say the same; a folder named like a Log is ignored", () => {
    const ws = workspaceWith(["c", "a", "b"]);
    writeFileSync(path.join(ws, ".pixir", "sessions", "b.ndjson"), "x".repeat(17));
    mkdirSync(path.join(ws, ".pixir", "sessions", "d.ndjson"));
    writeFileSync(path.join(ws, ".pixir", "sessions", "notes.txt"), "");
    const listing = listLogs(ws);
    expect(listing.sessionIds).toEqual(["a", "b", "c"]);
    expect(listing.ignoredEntries).toBe(2);
    expect(listing.stats.length).toBe(12);
    listing.sessionIds.forEach((id, i) => {
      const st = lstatSync(path.join(ws, ".pixir", "sessions", `${id}.ndjson`));
      expect([...listing.stats.subarray(i * 4, i * 4 + 4)]).toEqual([st.ino, st.size, st.mtimeMs, st.ctimeMs]);
      expect([listing.inos.get(id), listing.sizes.get(id), listing.mtimes.get(id), listing.ctimes.get(id)]).toEqual([
        listing.stats[i * 4 + STAT_INO],
        listing.stats[i * 4 + STAT_SIZE],
        listing.stats[i * 4 + STAT_MTIME],
        listing.stats[i * 4 + STAT_CTIME],
      ]);
    });
    expect(listing.sizes.get("b")).toBe(17);
    expect(listing.sizes.has("d")).toBe(false);
  });
});

describe("isValidSessionId's ASCII path", () => {
  it("agrees with sessionIdProblem", () => {
    const cases = ["a", "_", "0", "a.b-c_d", ".a", "-a", "a b", "a/b", "a".repeat(235), "a".repeat(236), "", "é", "a\u0301", "Ab9", "a:b"];
    for (const c of cases) expect(isValidSessionId(c), c).toBe(sessionIdProblem(c) === null);
  });
});
