// cli/usage.ts: which word is near enough to suggest, and which tokens may be echoed.
import { describe, expect, it } from "vitest";
import { nearest, unknownFlag, unknownWord } from "../../src/cli/usage.js";

const COMMANDS = ["cat", "write", "append", "ls", "check", "repair", "materialize", "rm"];

describe("nearest", () => {
  it("finds a word one or two edits away, transpositions included", () => {
    expect(nearest("apend", COMMANDS)).toBe("append");
    expect(nearest("chekc", COMMANDS)).toBe("check");
    expect(nearest("materialise", COMMANDS)).toBe("materialize");
    expect(nearest("to-sq", ["to-seq", "from-seq", "json"])).toBe("to-seq");
  });
  it("suggests nothing when nothing is near, or the word is too short to tell", () => {
    expect(nearest("frobnicate", COMMANDS)).toBeUndefined();
    expect(nearest("x", COMMANDS)).toBeUndefined();
    expect(nearest("zz", ["ls", "rm"])).toBeUndefined();
  });
});

describe("what a usage error may echo", () => {
  it("a lower-case command word and the nearest command", () => {
    expect(unknownWord("usage: t", "forkk", ["fork", "tree"]).message).toBe('unknown command "forkk"; did you mean "fork"?');
    expect(unknownWord("usage: t", "relase", ["status", "release"], "lock action").message).toBe('unknown lock action "relase"; did you mean "release"?');
  });
  it("never a word that could be a Session id, a path or carry control bytes", () => {
    for (const word of ["s1", "019c8a4c-ed82-79a1", "../../etc", "a.b", "Fork\u001b[2J", "x".repeat(30), ""]) {
      const e = unknownWord("usage: t", word, ["fork"]);
      expect(e.message.startsWith("unknown command")).toBe(true);
      expect(e.message).not.toContain(word || "\u0000");
      expect(e.details.synopsis).toBe("usage: t");
    }
    // Uppercase is not echoed, but the nearest command is still named.
    expect(unknownWord("usage: t", "FORK", ["fork"]).message).toBe('unknown command; did you mean "fork"?');
  });
  it("a long flag's name, never its value, and the nearest flag", () => {
    expect(unknownFlag("usage: t", "--to-sq", ["to-seq", "json"]).message).toBe("unknown flag --to-sq; did you mean --to-seq?");
    expect(unknownFlag("usage: t", "--to-sq=secret", ["to-seq"]).message).toBe("unknown flag --to-sq; did you mean --to-seq?");
    for (const token of ["-PWN", "--x\u001b]0;", "--$(id)", `--${"a".repeat(40)}`]) expect(unknownFlag("usage: t", token, ["to-seq"]).message).toBe("unknown flag");
  });
});
