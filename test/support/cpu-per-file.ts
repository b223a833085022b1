// Measurement only (PIXIR_TEST_CPU=<dir>, see vitest.config.ts): each test file's CPU seconds, its own
// process's and its waited-for children's (the spawned tools), from /proc/self/stat, written as one JSON
// file per test file. Off by default: nothing else reads it.
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll } from "vitest";

const TICKS = 100;

function cpuSeconds(): { self: number; children: number } {
  // Fields after the command's closing parenthesis: utime stime cutime cstime are 14–17 (1-based).
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const at = (n: number) => Number(fields[n - 3]);
  return { self: (at(14) + at(15)) / TICKS, children: (at(16) + at(17)) / TICKS };
}

const atLoad = cpuSeconds();
const wallAtLoad = Date.now();

// vitest 4 wants a destructuring pattern first (its fixtures); the file is the second parameter.
afterAll(({}, suite) => {
  const dir = process.env.PIXIR_TEST_CPU;
  if (!dir) return;
  const file = (suite as { filepath?: string }).filepath ?? "unknown";
  const end = cpuSeconds();
  mkdirSync(dir, { recursive: true });
  const name = path.relative(process.cwd(), file).replaceAll("/", "__");
  writeFileSync(
    path.join(dir, `${name}.json`),
    JSON.stringify({ file: path.relative(process.cwd(), file), pid: process.pid, atLoad, end, wallMs: Date.now() - wallAtLoad }),
  );
});
