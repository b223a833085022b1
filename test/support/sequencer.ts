// The order files start in: the longest first, so that on two cores the last minute is not one long file
// running alone. Vitest orders by the durations of the previous run it cached, else by file size (larger
// first), and a fresh clone (CI) has no cache: long-lineage, short but the longest, would start last. These
// files, measured (CPU seconds of each alone, docs/performance.md "Test tiers"), start first in this
// order; every other file follows in vitest's own order.
import { BaseSequencer, type TestSpecification } from "vitest/node";

const LONGEST_FIRST = [
  "test/interop/long-lineage.test.ts",
  "test/hardening/concurrency.test.ts",
  "test/interop/claude-grow.test.ts",
  "test/hardening/crash.test.ts",
  "test/hardening/fuzz.test.ts",
  "test/interop/claude-heldback.test.ts",
  "test/hardening/regressions.test.ts",
  "test/fork/pipeline.test.ts",
  "test/cli/install.test.ts",
  "test/store/lease.test.ts",
  "test/cli/golden.test.ts",
  "test/cli/packaging.test.ts",
  "test/view/view-site.test.ts",
  "test/fork/spec-rules.test.ts",
  "test/interop/claude-incremental.test.ts",
  "test/fork/fork-pass-through.test.ts",
  "test/hardening/paths.test.ts",
  "test/fork/fork-stdin-file.test.ts",
  "test/interop/codex-built.test.ts",
];

export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification): number => {
      const at = LONGEST_FIRST.findIndex((f) => spec.moduleId.endsWith(`/${f}`));
      return at < 0 ? LONGEST_FIRST.length : at;
    };
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
