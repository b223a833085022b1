// event/vocabulary.ts against the specification's own text: the 14 canonical and 5 ephemeral types of
// envelope-and-log.md §2, in Pixir's order, and the 9 replay types of fork.md §2. The tests that drive
// the tools with "every canonical type" read the library's lists; this is where those lists are checked.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CANONICAL_TYPES, EPHEMERAL_TYPES, isReplayType, REPLAY_TYPES } from "../../src/event/vocabulary.js";

// The specification lives beside the checkout (../shared/spec/), not in the repository: in a bare clone these
// checks skip, saying so; CI and the team's machines have it.
const SPEC = fileURLToPath(new URL("../../../../../shared/spec/", import.meta.url));
const NO_SPEC = !existsSync(`${SPEC}envelope-and-log.md`);
const spec = (file: string) => readFileSync(`${SPEC}${file}`, "utf8");

/** The backticked words of the sentence of `text` that starts at `heading` (up to the `.` that ends the list). */
function typesAfter(text: string, heading: string): string[] {
  const at = text.indexOf(heading);
  expect(at, heading).toBeGreaterThanOrEqual(0);
  const rest = text.slice(at + heading.length);
  const sentence = rest.slice(0, rest.search(/`\.(\s|$)/) + 2);
  return [...sentence.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
}

describe.skipIf(NO_SPEC)(`the type vocabulary is the spec's${NO_SPEC ? ` (skipped: the specification ${SPEC} is absent)` : ""}`, () => {
  it("14 canonical types in Pixir's order and 5 ephemeral ones (envelope-and-log.md §2)", () => {
    const text = spec("envelope-and-log.md");
    expect([...CANONICAL_TYPES]).toEqual(typesAfter(text, "**Canonical types: 14.** These may be persisted. They are listed in Pixir's order:"));
    expect(CANONICAL_TYPES).toHaveLength(14);
    expect([...EPHEMERAL_TYPES]).toEqual(typesAfter(text, "**Ephemeral types: 5.** These are never persisted:"));
  });

  it("9 replay types, and the 5 never inherited (fork.md §2)", () => {
    const text = spec("fork.md");
    expect([...REPLAY_TYPES]).toEqual(typesAfter(text, "These **9 replay types** are inherited:"));
    const never = typesAfter(text, "These are **never inherited**:");
    expect(never).toHaveLength(5);
    for (const t of never) expect(isReplayType(t), t).toBe(false);
    expect([...REPLAY_TYPES, ...never].sort()).toEqual([...CANONICAL_TYPES].sort());
  });
});
