// claude-interop.md §3.1 and §5.4: Log ids, Claude's escaped project directory, and the fork ids of §5.3.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { childLogId, claudeBaseId } from "../../src/interop/claude/discover.js";
import { escapeCwd, projectDirFor } from "../../src/interop/claude/export.js";
import { stampCopied, uuidFromHex } from "../../src/interop/claude/export-fork.js";

describe("escapeCwd (§5.4)", () => {
  it("replaces every code unit that is not a letter or digit with -", () => {
    expect(escapeCwd("/Users/dain/workspace/claude-code-log")).toBe("-Users-dain-workspace-claude-code-log");
    expect(escapeCwd("/home/u/é.x")).toBe("-home-u---x");
  });
  it("cuts a long result at 200 and appends Claude's Node hash in base 36", () => {
    const cwd = `/${"a".repeat(250)}`;
    let h = 0;
    for (let i = 0; i < cwd.length; i++) h = ((h << 5) - h + cwd.charCodeAt(i)) | 0;
    expect(escapeCwd(cwd)).toBe(`-${"a".repeat(199)}-${Math.abs(h).toString(36)}`);
  });
  it("keeps a recorded project directory that fits the cwd, else the escape", () => {
    expect(projectDirFor("-a-b", "/a/b")).toBe("-a-b");
    expect(projectDirFor("../../etc", "/a/b")).toBe("-a-b");
    const long = `/${"b".repeat(250)}`;
    expect(projectDirFor(`-${"b".repeat(199)}-bunhash`, long)).toBe(`-${"b".repeat(199)}-bunhash`);
  });
});

describe("ids (§3.1, §5.3)", () => {
  it("a Claude session id that cannot name a Log is hashed", () => {
    expect(claudeBaseId("0d3a8e6f-290f-4105-a327-a2496e5e2a83")).toBe("0d3a8e6f-290f-4105-a327-a2496e5e2a83");
    expect(claudeBaseId("../x")).toMatch(/^claude-[0-9a-f]{32}$/);
    expect(childLogId("s", "agent-x y")).toMatch(/^s\.[0-9a-f]{16}$/);
    expect(childLogId("s", "agent-a1b2")).toBe("s.agent-a1b2");
  });
  it("uuidFromHex gives a version-4 UUID with the variant taken from h[16]", () => {
    const h = createHash("sha256").update("pixir:claude:session:x").digest("hex");
    const u = uuidFromHex(h);
    expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(u[19]).toBe("89ab"[parseInt(h[16]!, 16) % 4]);
  });
  it("stampCopied is std() of §3.7: keys keep their place, sessionKind goes, missing keys are appended", () => {
    const r = { parentUuid: "p", isSidechain: true, sessionId: "old", sessionKind: "x", type: "user", uuid: "u1" };
    expect(JSON.stringify(stampCopied(r, "new", "old", null))).toBe(
      JSON.stringify({ parentUuid: null, isSidechain: false, sessionId: "new", type: "user", uuid: "u1", forkedFrom: { sessionId: "old", messageUuid: "u1" } }),
    );
  });
});
