import { defineConfig } from "vitest/config";
import { fileURLToPath } from "node:url";

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      "@pixir/envelope": here("./lib/envelope/src/index.ts"),
    },
  },
  test: {
    include: ["test/**/*.test.ts", "lib/*/test/**/*.test.ts", "tools/*/test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Spawned-binary tests are I/O bound; two cores on CI machines.
    pool: "forks",
    maxWorkers: 2,
  },
});
